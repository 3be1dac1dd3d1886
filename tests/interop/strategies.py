"""Hypothesis strategies for texts other tools write: literal text full of braces, and placeholders."""

from __future__ import annotations

from hypothesis import strategies as st

#: Pieces of literal text that look like template syntax in one tool or another.
TRICKY = st.sampled_from([
    "{", "}", "{{", "}}", "{%", "%}", "{#", "#}", "{ x }", '{"a": 1}', "{a.b}", "{1x}", "${x}", "\\{", "{% raw %}",
    "{% endraw %}", "{{ '{{' }}", "\n", " ", "é", "你好", "'", '"', "|", "$", "?", ":", "-", "_",
])

WORDS = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=8)

#: Placeholder names CrewAI takes: letters, digits, `_` and `-`, not starting with a digit or `-`.
CREWAI_NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_\-]{0,8}", fullmatch=True)

#: Plain identifiers, including ones that collide with persona fields and Jinja words.
IDENTIFIERS = st.one_of(
    st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True),
    st.sampled_from(["name", "role", "goal", "language", "tools", "for", "in", "not", "question", "x"]),
)

LITERALS = st.lists(st.one_of(TRICKY, WORDS), max_size=8).map("".join)

_LEAF = st.one_of(
    st.fixed_dictionaries({"type": st.just("string")}, optional={
        "minLength": st.integers(0, 5), "description": WORDS, "enum": st.lists(WORDS, min_size=1, max_size=3,
                                                                                 unique=True)}),
    st.fixed_dictionaries({"type": st.sampled_from(["integer", "number"])},
                          optional={"minimum": st.integers(-5, 5), "maximum": st.integers(6, 9)}),
    st.fixed_dictionaries({"type": st.just("boolean")}),
)

#: JSON Schemas of objects as personas write them: nested objects, arrays of them, bounds, optional keys.
OBJECT_SCHEMAS = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.fixed_dictionaries({"type": st.just("array"), "items": inner}),
        st.dictionaries(IDENTIFIERS, inner, min_size=1, max_size=3).flatmap(
            lambda properties: st.fixed_dictionaries({
                "type": st.just("object"), "properties": st.just(properties),
                "required": st.lists(st.sampled_from(sorted(properties)), unique=True),
            })
        ),
    ),
    max_leaves=6,
).filter(lambda schema: schema.get("type") == "object")
