"""Hypothesis strategies for prompt store tests: names, keys and contents worth round-tripping."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["contents", "languages", "models", "names"]

#: Any text both backends can hold: everything but NUL and lone surrogates (not encodable as UTF-8).
_storable = st.characters(exclude_categories=("Cs",), exclude_characters="\x00")

names = st.text(_storable, min_size=1, max_size=40).filter(lambda name: name.strip() != "")
#: A prompt's text: anything storable that is not blank (the store refuses empty content).
contents = st.text(_storable, min_size=1, max_size=300).filter(lambda text: text.strip() != "")
languages = st.sampled_from(["", "en", "zh", "zh-TW", "zh-Hant-TW", "pt-BR", "fr"])
models = st.one_of(
    st.just(""),
    st.sampled_from(["gpt-4o", "claude-3.5-sonnet", "qwen2"]),
    st.text(_storable, min_size=1, max_size=20).map(str.strip).filter(bool),
)
