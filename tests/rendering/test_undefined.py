"""A missing key or attribute behaves as in stock Jinja where tested, and is an error where it would print."""

from __future__ import annotations

import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from profiles import RenderError
from profiles.rendering.renderer import Renderer

MESSAGES = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello", "tool_calls": [{"n": 1}]}]

#: Templates that test, default, count or loop over missing values: stock Jinja's output, exactly.
TESTED = [
    "{% for m in messages %}{% if m.tool_calls %}[tools {{ m.tool_calls|length }}]{% endif %}{{ m.content }}|"
    "{% endfor %}",
    "{% for m in messages %}{{ 'yes' if m.tool_calls is defined else 'no' }}{% endfor %}",
    "{% for m in messages %}{{ m.tool_calls is none }}{{ m.name is undefined }}{% endfor %}",
    "{% for m in messages %}{{ m.name|default('anon') }}:{{ m.name|d(m.role) }};{% endfor %}",
    "{% for call in messages[0].tool_calls %}{{ call }}{% else %}no calls{% endfor %}",
    "{{ messages[0].tool_calls|length }}{{ messages[0].tool_calls|list }}{{ messages[0].x|count }}",
    "{% if not messages[0].tool_calls %}none{% endif %}{% if messages[0].tool_calls == messages[0].y %}eq{% endif %}",
    "{% macro line(role, text='(empty)') %}{{ role }}: {{ text }}{% endmacro %}{{ line('user') }}",
    "{{ messages[0]['tool_calls'] is defined }}{{ messages[5] is defined }}{{ 'x' in messages[0].tags }}",
    "{% set extra = messages[0].extra %}{% if extra %}{{ extra }}{% else %}plain{% endif %}",
    "{{ messages[0].x or 'fallback' }}{{ messages[0].x|default('', true) }}",
]


@pytest.mark.parametrize("source", TESTED, ids=range(len(TESTED)))
def test_tested_missing_values_render_as_stock(source):
    stock = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True).from_string(source)
    renderer = Renderer(())
    assert renderer.render(renderer.compile(source, "t"), {"messages": MESSAGES}) == stock.render(messages=MESSAGES)


@pytest.mark.parametrize(
    ("source", "missing"),
    [
        ("line one\n{{ messages[0].tool_calls }}", "tool_calls"),
        ("line one\n{{ messages[0].nmae|upper }}", "nmae"),
        ("line one\n{{ 'Name: ' ~ messages[0].name }}", "name"),
        ("line one\n{{ messages[0].name|string }}", "name"),
        ("line one\n{{ messages[0].say('x') }}", "say"),
        ("line one\n{{ messages[0].extra.value }}", "extra"),
        ("line one\n{{ messages[0].extra[0] }}", "extra"),
        ("line one\n{{ messages[0].count + 1 }}", "count"),
        ("line one\n{% for m in messages %}{{ m.tool_calls }}{% endfor %}", "tool_calls"),
    ],
)
def test_printing_calling_or_reading_from_a_missing_value_is_an_error(source, missing):
    """The error names the template, the line and what is missing, and says how to allow it."""
    renderer = Renderer(())
    with pytest.raises(RenderError) as caught:
        renderer.render(renderer.compile(source, "chat.j2"), {"messages": MESSAGES})
    message = caught.value.message
    assert message.startswith("template 'chat.j2' line 2: UndefinedError:")
    assert repr(missing) in message
    assert (caught.value.template, caught.value.line) == ("chat.j2", 2)


def test_the_error_says_how_to_allow_a_missing_value():
    renderer = Renderer(())
    with pytest.raises(RenderError, match=r"is defined %\}\) or give a default \(\|default"):
        renderer.render(renderer.compile("{{ m.x }}", "t"), {"m": {}})


def test_a_macro_parameter_not_given_is_an_error_when_printed():
    renderer = Renderer(())
    source = "{% macro greet(name) %}Hi {{ name }}{% endmacro %}{{ greet() }}"
    with pytest.raises(RenderError, match="parameter 'name' was not provided"):
        renderer.render(renderer.compile(source, "t"), {})


def test_error_in_an_included_file_names_that_file_and_line(tmp_path):
    (tmp_path / "row.j2").write_text("first\n{{ item.price }}\n")
    renderer = Renderer([tmp_path])
    compiled = renderer.compile("{% for item in items %}{% include 'row.j2' %}{% endfor %}", "table.j2")
    with pytest.raises(RenderError) as caught:
        renderer.render(compiled, {"items": [{"name": "pen"}]})
    assert caught.value.message.startswith("template 'row.j2' line 2 (from template 'table.j2'): UndefinedError")
    assert (caught.value.template, caught.value.line) == ("row.j2", 2)
