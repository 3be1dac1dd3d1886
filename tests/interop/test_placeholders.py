"""Placeholder translation: literal text stays literal, and a placeholder means what it meant in its tool."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from profiles.interop.placeholders import (
    _JINJA_WORDS,
    RESERVED,
    Namer,
    Var,
    adk_state,
    double_brace,
    escape_jinja,
    from_jinja,
    handlebars,
    mustache,
    rename_jinja,
    semantic_kernel,
    single_brace,
    to_jinja,
)
from profiles.rendering.renderer import Renderer

from .strategies import CREWAI_NAMES, IDENTIFIERS, LITERALS

_RENDERER = Renderer([])


def render(source: str, **values: object) -> str:
    return _RENDERER.render(_RENDERER.compile(source, "test"), values)


def as_rendered(text: str) -> str:
    """What Jinja makes of any text: line breaks as `\\n`, one trailing line break dropped."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text[:-1] if text.endswith("\n") else text


@settings(max_examples=300, deadline=None)
@given(LITERALS)
def test_escaped_text_renders_as_itself(text):
    """Any text, braces and Jinja-looking sequences included, renders back exactly through the sandbox."""
    assert render(escape_jinja(text)) == as_rendered(text)


def _crewai(text: str, values: dict[str, str]) -> str:
    """What CrewAI's interpolation makes of a text: each `{name}` replaced, any other brace left."""
    return re.sub(r"\{([A-Za-z_][A-Za-z0-9_\-]*)\}", lambda match: values[match.group(1)], text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(LITERALS, CREWAI_NAMES.map(lambda name: "{" + name + "}")), max_size=8).map("".join))
def test_crewai_text_renders_as_crewai_interpolates_it(text):
    """An imported CrewAI text, rendered with the inputs, is what CrewAI's kickoff would make of it."""
    pieces = single_brace(text)
    namer = Namer()
    names = namer.all([piece.name for piece in pieces if isinstance(piece, Var)])
    values = {name: f"<{name}>" for name in names}
    rendered = render(to_jinja(pieces, names), **{names[name]: value for name, value in values.items()})
    assert rendered == as_rendered(_crewai(text, values))


_ADK = re.compile(r"(?<![\$\{\\])\{+[^{}]*\}+")


def _adk(text: str, state: dict[str, str]) -> str:
    """ADK's own substitution (`flows/llm_flows/prompt/_instructions_utils.py`), for names it accepts."""

    def replace(match: re.Match[str]) -> str:
        name = match.group().lstrip("{").rstrip("}").strip()
        key = name[:-1] if name.endswith("?") else name
        return state[key] if key in state else match.group()

    return _ADK.sub(replace, text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            LITERALS,
            IDENTIFIERS.map(lambda name: "{" + name + "}"),
            IDENTIFIERS.map(lambda name: "{" + name + "?}"),
            IDENTIFIERS.map(lambda name: "{app:" + name + "}"),
            IDENTIFIERS.map(lambda name: "{{ " + name + " }}"),
        ),
        max_size=8,
    ).map("".join)
)
def test_adk_instruction_renders_as_adk_fills_it(text):
    """An imported ADK instruction renders what ADK's state substitution gives, for every valid name."""
    pieces = adk_state(text)
    namer = Namer()
    names = namer.all([piece.name for piece in pieces if isinstance(piece, Var)])
    state = {name: f"<{name}>" for name in names}
    rendered = render(to_jinja(pieces, names), **{names[name]: value for name, value in state.items()})
    assert rendered == as_rendered(_adk(text, state))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(LITERALS, IDENTIFIERS.map(Var)), max_size=8))
def test_pieces_read_back_from_jinja(pieces):
    """Pieces written as Jinja read back as the same pieces: text and placeholders apart."""
    names = {piece.name: piece.name for piece in pieces if isinstance(piece, Var)}
    written = to_jinja(pieces, names)
    merged: list = []
    for piece in pieces:
        if isinstance(piece, str) and merged and isinstance(merged[-1], str):
            merged[-1] += piece
        elif piece != "":
            merged.append(piece)
    # Jinja's line breaks, read once the texts are joined: "\r" then "\n" is one "\r\n", one break
    merged = [piece.replace("\r\n", "\n").replace("\r", "\n") if isinstance(piece, str) else piece for piece in merged]
    assert from_jinja(written) == merged


@settings(max_examples=200, deadline=None)
@given(IDENTIFIERS.filter(lambda name: name not in _JINJA_WORDS), IDENTIFIERS)
def test_renaming_keeps_meaning(old, new_base):
    """Renaming a variable in a template with loops, filters and attributes renders the same text."""
    new = new_base + "_renamed"
    source = (
        f"{{{{ {old} }}}} {{{{ {old}|upper }}}} {{% for item in {old}_list %}}{{{{ item.{old} }}}}{{% endfor %}}"
        f"{{% if {old} is defined %}}yes{{% endif %}}"
    )
    values = {old: "v", f"{old}_list": [{old: "attr"}]}
    renamed = rename_jinja(source, {old: new})
    assert render(renamed, **{new: "v", f"{old}_list": values[f"{old}_list"]}) == render(source, **values)


def test_names_colliding_with_persona_fields_are_renamed_once():
    """`{goal}` (a customer's goal in CrewAI) becomes `goal_input`, never the persona's own goal."""
    namer = Namer()
    names = namer.all(["goal", "goal_input", "customer-name", "customer_name", "for", "topic"])
    assert names == {
        "goal": "goal_input_2",
        "goal_input": "goal_input",
        "customer-name": "customer_name_2",
        "customer_name": "customer_name",
        "for": "for_input",
        "topic": "topic",
    }
    assert namer.renamed == {"goal_input_2": "goal", "customer_name_2": "customer-name", "for_input": "for"}
    assert not set(names.values()) & RESERVED


def test_adk_names_optional_prefixed_and_artifacts():
    """ADK's `{plan?}`, `{app:x}` and `{artifact.f.md}` are placeholders; JSON and `${x}` are text."""
    pieces = adk_state('Plan {plan?} for {app:company} from {artifact.notes.md}; {"route": 1} ${x} \\{y}')
    assert [piece for piece in pieces if isinstance(piece, Var)] == [
        Var("plan", optional=True), Var("app:company"), Var("artifact.notes.md")
    ]
    assert '{"route": 1} ${x} \\{y}' in "".join(piece for piece in pieces if isinstance(piece, str))


def test_semantic_kernel_calls_are_left_out_and_listed():
    """`{{plugin.fn "x"}}` runs code in SK: it is dropped and reported, `{{ "{{" }}` is text."""
    calls: list = []
    pieces = semantic_kernel('A {{$input}} {{http.getAsync "https://x"}} {{ "{{" }} end', calls)
    assert pieces == ["A ", Var("input"), "  {{ end"]
    assert calls == [('{{http.getAsync "https://x"}}', 1)]


def test_agentspec_double_brace_only():
    assert double_brace("Hi {{ user }} and {x} and {{$y}}") == ["Hi ", Var("user"), " and {x} and {{$y}}"]


def test_mustache_and_handlebars_become_jinja_that_renders_alike():
    namer = Namer()
    namer.all(["name", "items", "moral"])
    notes: list = []
    source = mustache("Hi {{name}}! {{! comment }}{{#moral}}Moral: {{moral}}{{/moral}}{{^items}}none{{/items}}",
                      namer, notes)
    assert render(source, name_input="Ada", moral="be kind", items=[]) == "Hi Ada! Moral: be kindnone"
    assert len(notes) == 1
    bars = handlebars("{{#each items}}[{{@index}}:{{this.name}}]{{/each}}{{#if moral}}!{{else}}?{{/if}}", namer)
    assert render(bars, items=[{"name": "a"}, {"name": "b"}], moral="") == "[0:a][1:b]?"
