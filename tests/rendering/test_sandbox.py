"""The sandbox: immutable, few globals, bounded arithmetic and output."""

from __future__ import annotations

import time

import pytest

from profiles import ProfileConfig, RenderError
from profiles.rendering.renderer import Renderer


@pytest.fixture
def renderer():
    return Renderer([])


def render(renderer, source, **variables):
    return renderer.render(renderer.compile(source, "t"), variables)


def test_caller_lists_cannot_be_mutated(renderer):
    items = ["a"]
    with pytest.raises(RenderError, match="SecurityError"):
        render(renderer, "{{ items.append('b') }}", items=items)
    assert items == ["a"]


@pytest.mark.parametrize(
    "source",
    [
        "{{ ''.__class__.__mro__ }}",
        "{{ cycler.__init__.__globals__ }}",
        "{{ lipsum() }}",
        "{{ joiner() }}",
        "{{ x.__class__.__base__.__subclasses__() }}",
    ],
)
def test_escapes_and_dropped_globals_fail(renderer, source):
    with pytest.raises(RenderError):
        render(renderer, source, x=1)


@pytest.mark.parametrize("source", ["{{ 'a' * 10**8 }}", "{{ 7 ** 2000000000 }}", "{{ [1] * 10**7 }}"])
def test_huge_constants_are_refused_quickly(renderer, source):
    """Constant folding at compile time is intercepted too, so this returns within a second."""
    started = time.monotonic()
    with pytest.raises(RenderError, match="over the limit|would build over"):
        render(renderer, source)
    assert time.monotonic() - started < 30  # bounded, not hung: the render budget is 2 s


def test_output_is_capped(renderer):
    compiled = renderer.compile("{% for i in range(1000) %}0123456789{% endfor %}", "t")
    with pytest.raises(RenderError, match="produced over 500 characters"):
        renderer.render(compiled, {}, max_chars=500)
    assert len(renderer.render(compiled, {}, max_chars=10_000)) == 10_000


def test_unknown_attribute_fails_loudly(renderer):
    """StrictUndefined: a misspelt attribute is an error with the template line, not empty text."""
    with pytest.raises(RenderError, match="'t' line 2"):
        render(renderer, "ok\n{{ person.nmae }}", person={"name": "x"})


def test_sentence_filter(renderer):
    out = render(
        renderer,
        "{{ a|sentence }}|{{ b|sentence }}|{{ c|sentence('。') }}|{{ d|sentence }}",
        a="Hi.",
        b="Hi",
        c="你好",
        d=None,
    )
    assert out == "Hi.|Hi.|你好。|"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('Say "hi."', 'Say "hi."'),
        ("说“你好。”", "说“你好。”"),
        ("(See the report.)", "(See the report.)"),
        ("Wait for it…", "Wait for it…"),
        ("Help (users)", "Help (users)."),
        ('The "ok" button', 'The "ok" button.'),
    ],
)
def test_sentence_sees_the_ending_inside_closing_quotes_and_brackets(renderer, text, expected):
    """A goal ending in a quoted sentence rendered with a second full stop after the quote."""
    assert render(renderer, "{{ a|sentence }}", a=text) == expected


def test_syntax_error_names_template_and_line(renderer):
    with pytest.raises(RenderError, match=r"'t' line 2: .*raw"):
        renderer.compile("fine\n{{ broken ", "t")


def test_goal_with_period_never_doubles():
    for goal in ("Summarize.", "Summarize", "Summarize!  "):
        prompt = ProfileConfig(name="n", role="r", goal=goal).create_profile().format_system_prompt()
        assert ".." not in prompt and "!." not in prompt
