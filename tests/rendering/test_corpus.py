"""Prompt templates of real libraries render through the sandbox as stock Jinja renders them.

Each prompt in corpus/ (DB-GPT's agent profile, Haystack's prompt builder and query expander, Prompty,
Semantic Kernel, banks) is rendered by stock `ImmutableSandboxedEnvironment` (the options prompt
libraries use: trim and lstrip blocks, loop controls) and by `Renderer`, with the same inputs, and must
give the same bytes. Where a template needs a library's own filter, tag or global, the same Python code
is added to both: to stock Jinja as Jinja does it, to the sandbox through the registration API.
Chat templates are compared with transformers in test_chat_template.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jinja2 import TemplateSyntaxError, nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

from profiles.rendering.renderer import Renderer

CORPUS = Path(__file__).resolve().parent / "corpus"
PROMPTS = sorted(
    path.stem for path in CORPUS.glob("*.j2") if json.loads(path.with_suffix(".json").read_text())["kind"] == "prompt"
)


class BanksChat(Extension):
    """banks' `{% chat role="..." %}` tag (banks/extensions/chat.py, MIT): the body as a JSON message."""

    tags = {"chat"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        gathered = []
        while parser.stream.current.type != "block_end":
            gathered.append(next(parser.stream))
        if len(gathered) != 3 or gathered[0].value != "role" or gathered[1].value != "=":
            raise TemplateSyntaxError(f"expected role=\"value\", got {gathered}", lineno)
        body = parser.parse_statements(("name:endchat",), drop_needle=True)
        return nodes.CallBlock(
            self.call_method("_store_chat_messages", [nodes.Const(gathered[2].value)]), [], [], body
        ).set_lineno(lineno)

    def _store_chat_messages(self, role, caller):
        return json.dumps({"role": role, "content": caller()})


def lemmatize(text: str) -> str:
    """A stand-in for banks' `lemmatize` (which needs a dictionary package): plural and -ing forms cut."""
    words = []
    for word in text.split():
        for suffix in ("ing", "s"):
            if word.endswith(suffix) and len(word) > len(suffix) + 2:
                word = word[: -len(suffix)]
                break
        words.append(word)
    return " ".join(words)


def sk_message(item) -> str:
    """Semantic Kernel's `message()` function (prompt_template/utils/jinja2_system_helpers.py, MIT)."""
    return f'<message role="{item["role"]}">{item["content"]}</message>'


EXTRAS = {
    "banks": {"filters": {"lemmatize": lemmatize}, "extensions": [BanksChat]},
    "semantic_kernel": {"globals": {"message": sk_message}},
}


def load(name: str) -> tuple[str, dict]:
    meta = json.loads((CORPUS / f"{name}.json").read_text(encoding="utf-8"))
    return (CORPUS / f"{name}.j2").read_bytes().decode("utf-8"), meta


def stock_render(source: str, meta: dict) -> str:
    extras = EXTRAS.get(meta.get("extras"), {})
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols", *extras.get("extensions", [])]
    )
    env.filters.update(extras.get("filters", {}))
    env.globals.update(extras.get("globals", {}))
    return env.from_string(source).render(meta["inputs"])


def test_the_corpus_has_prompts_of_several_libraries():
    assert len(PROMPTS) >= 12
    assert {name.split("__")[0] for name in PROMPTS} >= {"dbgpt", "haystack", "prompty", "sk", "banks"}


@pytest.mark.parametrize("name", PROMPTS)
def test_same_text_as_stock_jinja(name):
    source, meta = load(name)
    renderer = Renderer((), **EXTRAS.get(meta.get("extras"), {}))
    compiled = renderer.compile(source, name)
    assert compiled.required <= set(meta["inputs"]), "every variable read unconditionally is among the inputs"
    assert renderer.render(compiled, meta["inputs"]) == stock_render(source, meta)
