"""Templates that try to exhaust time or memory end in a clear error or a bounded render."""

from __future__ import annotations

import pytest

from profiles.errors import RenderError
from profiles.rendering.renderer import Renderer
from profiles.rendering.sandbox import MAX_OUTPUT_CHARS

#: Most seconds and resident bytes (the interpreter's own included) any case may cost.
# far above the 2 s render budget: this catches a render that is unbounded, not a slow machine
SECONDS = 30
PEAK_BYTES = 400_000_000

HOSTILE = [
    # folded at compile time by plain Jinja
    "{{ 'a' * 10**8 }}",
    "{{ 7 ** 2000000000 }}",
    "{{ 'a' * 99999 * 99999 }}",
    "{{ '%999999999s' % 'a' }}",
    "{{ '%*s' % (999999999, 'a') }}",
    "{{ '%.999999999f' % 1.0 }}",
    "{{ '{:999999999}'.format('a') }}",
    "{{ '{:{w}}'.format('a', w=999999999) }}",
    "{{ '{0:>999999999}'.format_map({'0': 1}) }}",
    "{{ 'a' ~ 'b' * 999999999 }}",
    # filters with a width or a count
    "{{ 'a'|center(999999999) }}",
    "{{ 'a'|indent(999999999, true) }}",
    "{{ ('a\\n' * 100000)|indent('x' * 10000) }}",
    "{{ ('ab' * 100000)|wordwrap(1, wrapstring='x' * 10000) }}",
    "{{ ('a' * 100000)|replace('a', 'a' * 100000) }}",
    "{{ ('a' * 100000)|replace('', 'b' * 1000) }}",
    "{{ '%999999999s'|format('a') }}",
    "{{ 'x'|batch(999999999, 'y')|list }}",
    "{{ 'x'|slice(999999999)|list }}",
    "{{ range(10**9)|list }}",
    "{{ (['x' * 1000000] * 1000)|join }}",
    "{% set a = ['x' * 1000] * 1000 %}{{ ([a] * 1000)|tojson }}",
    # str and int methods that take a width or grow their input
    "{{ 'a'.ljust(999999999) }}",
    "{{ 'a'.center(999999999) }}",
    "{{ 'a'.zfill(999999999) }}",
    "{{ ('\t' * 100000).expandtabs(999999) }}",
    "{{ ('a' * 100000).replace('a', 'a' * 100000) }}",
    "{{ ('x' * 1000000).join(['a'] * 1000000) }}",
    "{{ ('a' * 1000000).translate({97: 'b' * 1000000}) }}",
    "{{ (1).to_bytes(999999999, 'big') }}",
    # values shared many times print as huge texts
    "{% set a = ['x' * 1000] * 1000 %}{% set b = [a] * 1000 %}{{ b }}",
    "{% set a = ['x' * 100000] %}{% set b = [a,a,a,a,a,a,a,a,a,a] %}{% set c = [b,b,b,b,b,b,b,b,b,b] %}"
    "{% set d = [c,c,c,c,c,c,c,c,c,c] %}{{ d }}",
    "{% set a = dict(x='y' * 900000) %}{% set b = dict(p=a, q=a, r=a) %}{{ b }}",
    "{% set a = namespace(x='y' * 900000) %}{{ [a, a, a] }}",
    # loops, concatenation in loops, recursion
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "{% set ns = namespace(s='a') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
    "{% set ns = namespace(s='a') %}{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}",
    "{% set ns = namespace(n=10**999) %}{% for i in range(40) %}{% set ns.n = ns.n * ns.n %}{% endfor %}ok",
    "{{ (10**1000) ** 1000 }}",
    "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
    "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}",
    "{% for x in [[1]] recursive %}{{ loop([x]) }}{% endfor %}",
    "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}",
    # output into buffers (macros, set and filter blocks), which the output cap does not see
    "{% set x %}{% for i in range(100000) %}" + "y" * 50000 + "{% endfor %}{% endset %}{{ x|length }}",
    "{% macro m() %}{% for i in range(100000) %}" + "y" * 50000 + "{% endfor %}{% endmacro %}{{ m()|length }}",
    "{% filter upper %}{% for i in range(100000) %}" + "y" * 50000 + "{% endfor %}{% endfilter %}",
    "{% set x %}{% for i in range(100000) %}{{ big }}{% endfor %}{% endset %}{{ x|length }}".replace(
        "{{ big }}", "{{ 'z' ~ 'y' * 900000 }}"
    ),
    "{% macro m() %}{{ caller() }}{{ caller() }}{% endmacro %}"
    "{% call m() %}{% for i in range(100000) %}" + "y" * 10000 + "{% endfor %}{% endcall %}",
    # sources that strain the compile step
    "{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}",
    "{{ " + " + ".join(["1"] * 30000) + " }}",
    "".join("{% for a" + str(i) + " in [1] %}" for i in range(30)) + "x" + "{% endfor %}" * 30,
    "{{ 'x' }}" * 12000,
    "x" * 300_000,
]


@pytest.mark.parametrize("source", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_template_is_bounded(child_render, source):
    """A hostile template ends in a RenderError, or renders a bounded text, quickly and in little memory."""
    result = child_render(source)
    assert result["seconds"] < SECONDS, result
    assert result["peak_bytes"] < PEAK_BYTES, result
    if result["ok"]:
        assert result["chars"] <= MAX_OUTPUT_CHARS
    else:
        assert result["type"] == "RenderError"
        assert "hostile" in result["message"]
        assert len(result["message"]) < 1000


@pytest.mark.parametrize(
    ("source", "bound"),
    [
        ("{{ 'a' * 99999 * 99999 }}", "1000000"),
        ("{{ 7 ** 2000000000 }}", "exponent"),
        ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "loop iterations"),
        ("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", "macros call each other"),
        ("{{ range(10**9)|list }}", "range()"),
        ("{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}", "nested"),
        ("x" * 300_000, "over the limit"),
    ],
)
def test_the_error_names_the_bound(source, bound):
    """The message says which bound tripped, and names the template."""
    renderer = Renderer(())
    with pytest.raises(RenderError, match="'t'") as caught:
        renderer.render(renderer.compile(source, "t"), {})
    assert bound in caught.value.message


def test_output_cap_is_configurable(monkeypatch):
    """PROFILES_MAX_OUTPUT_CHARS and the Renderer argument set the output cap."""
    monkeypatch.setenv("PROFILES_MAX_OUTPUT_CHARS", "100")
    renderer = Renderer(())
    template = renderer.compile("{% for i in range(50) %}abc{% endfor %}", "t")
    with pytest.raises(RenderError, match="over 100 characters"):
        renderer.render(template, {})
    assert len(Renderer((), max_output_chars=1000).render(template, {})) == 150


def test_time_limit_is_configurable(monkeypatch):
    """A render past PROFILES_MAX_RENDER_SECONDS stops with an error naming the limit."""
    monkeypatch.setenv("PROFILES_MAX_RENDER_SECONDS", "0.05")
    renderer = Renderer(())
    source = "{% for i in range(900) %}{% for j in range(900) %}{{ i|string|length }}{% endfor %}{% endfor %}"
    with pytest.raises(RenderError, match="time limit"):
        renderer.render(renderer.compile(source, "t"), {}, max_chars=10**8)


def test_ordinary_templates_still_render():
    """Bounded filters and operators keep their ordinary results."""
    renderer = Renderer(())
    source = (
        "{{ 'ab'|center(6) }}|{{ 'a\\nb'|indent(2) }}|{{ 'a b c'|wordwrap(3) }}|{{ 'aa'|replace('a', 'b') }}|"
        "{{ [1, 2]|join(',') }}|{{ '%05d' % 7 }}|{{ '{:>4}'.format('x') }}|{{ 'x' ~ 1 }}|{{ 2 ** 10 }}|"
        "{{ [1] * 3 }}|{{ '%s-%s'|format(1, 2) }}|{{ [[1], [2]]|sum(start=[]) }}|{{ {'a': 1}|tojson }}|"
        "{% for a, b in [(1, 2)] %}{{ a + b }}{% endfor %}|{{ range(3)|list }}|{{ 'abcdef'|truncate(5, leeway=0) }}|"
        "{{ ', '.join(['a', 'b']) }}|{{ '7'.zfill(3) }}|{{ 'aa'.replace('a', 'b') }}"
    )
    text = renderer.render(renderer.compile(source, "t"), {})
    assert text == (
        "  ab  |a\n  b|a b\nc|bb|1,2|00007|   x|x1|1024|[1, 1, 1]|1-2|[1, 2]|{\"a\": 1}|3|[0, 1, 2]|ab...|"
        "a, b|007|bb"
    )


def test_readme_security_example():
    """The README's example error reads as the README shows it."""
    renderer = Renderer([])
    with pytest.raises(RenderError) as caught:
        renderer.render(renderer.compile("{{ 'a' * 99999 * 99999 }}", "greeting"), {})
    assert str(caught.value).startswith(
        "template 'greeting' line 1: LimitExceeded: an operation would build over 1000000"
    )
