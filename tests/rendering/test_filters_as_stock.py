"""Every built-in filter gives stock Jinja's result, within the bounds, with and without autoescaping.

The size-checked wrappers (bounded.py) and the code generator's shortcuts (codegen.py) stand between a
template and Jinja's filters; here each filter of Jinja's runs through stock `ImmutableSandboxedEnvironment`
and through the sandbox, on the same values, and must give the same text (or both the same error).
"""

from __future__ import annotations

import pytest
from jinja2.filters import FILTERS
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import Markup

from profiles.rendering.renderer import Renderer
from profiles.rendering.sandbox import make_environment

VALUES = {
    "text": "<b>Hello</b> World & co's",
    "items": [3, 1, 2],
    "words": ["b", "a", "c"],
    "users": [{"name": "Ada", "age": 36}, {"name": "Bob", "age": 7}, {"name": "Cy", "age": 36}],
    "mapping": {"b": 2, "a": 1},
    "num": 1234567.891,
    "neg": -3,
    "url": "http://example.org/a b?x=1&y=<2>",
    "none": None,
    "markup": Markup("<i>safe</i> & sound"),
    "pattern": Markup("<i>%s</i>"),
}

#: Expressions for each of Jinja's filters; a test checks that every filter has some.
CASES = {
    "abs": ["{{ neg|abs }}"],
    "attr": ["{{ (words|attr('index'))('a') }}", "{{ users[0]|attr('name') is defined }}"],
    "batch": ["{{ items|batch(2)|list }}", "{{ items|batch(2, 'x')|list }}"],
    "capitalize": ["{{ text|capitalize }}"],
    "center": ["{{ 'ab'|center(9) }}|", "{{ text|center }}", "{{ markup|center(30) }}"],
    "count": ["{{ items|count }}"],
    "d": ["{{ missing|d('x') }}", "{{ none|d('y', true) }}"],
    "default": ["{{ missing|default(text) }}", "{{ ''|default('empty', boolean=true) }}"],
    "dictsort": ["{{ mapping|dictsort }}", "{{ mapping|dictsort(by='value', reverse=true) }}"],
    "e": ["{{ text|e }}"],
    "escape": ["{{ markup|escape }}", "{{ text|escape }}"],
    "filesizeformat": ["{{ 123456789|filesizeformat }}", "{{ 1024|filesizeformat(true) }}"],
    "first": ["{{ items|first }}", "{{ words|first }}"],
    "float": ["{{ '3.5'|float }}", "{{ 'x'|float(1.5) }}"],
    "forceescape": ["{{ markup|forceescape }}"],
    "format": ["{{ '%s-%05d'|format('a', 42) }}", "{{ '%(a)s!'|format(a=text) }}", "{{ pattern|format(text) }}"],
    "groupby": [
        "{% for g in users|groupby('age') %}{{ g.grouper }}:{{ g.list|map(attribute='name')|join }};{% endfor %}"
    ],
    "indent": [
        "{{ 'a\\nb\\n\\nc'|indent(2) }}",
        "{{ 'a\\nb'|indent('> ', first=true, blank=true) }}",
        "{{ markup|indent }}",
        "{{ text|indent(3, true) }}",
    ],
    "int": ["{{ '42'|int }}", "{{ '1A'|int(base=16) }}", "{{ 'x'|int(7) }}"],
    "items": ["{{ mapping|items|list }}"],
    "join": [
        "{{ words|join(', ') }}",
        "{{ users|join(', ', attribute='name') }}",
        "{{ [text, markup]|join(' / ') }}",
        "{{ items|join }}",
    ],
    "last": ["{{ items|last }}"],
    "length": ["{{ text|length }}", "{{ missing|length }}"],
    "list": ["{{ 'abc'|list }}", "{{ missing|list }}"],
    "lower": ["{{ text|lower }}"],
    "map": ["{{ users|map(attribute='name')|join }}", "{{ words|map('upper')|join }}"],
    "max": ["{{ items|max }}", "{{ (users|max(attribute='age')).name }}"],
    "min": ["{{ words|min }}", "{{ (users|min(attribute='age')).name }}"],
    "pprint": ["{{ mapping|pprint }}", "{{ users|pprint }}"],
    "random": ["{{ [5]|random }}"],
    "reject": ["{{ items|reject('odd')|list }}"],
    "rejectattr": ["{{ users|rejectattr('age', 'gt', 10)|map(attribute='name')|list }}"],
    "replace": [
        "{{ text|replace('o', '0') }}",
        "{{ text|replace('o', '0', 1) }}",
        "{{ markup|replace('i', '<u>') }}",
        "{{ text|replace('<', '['|safe) }}",
    ],
    "reverse": ["{{ words|reverse|list }}", "{{ 'abc'|reverse }}"],
    "round": ["{{ num|round(1) }}", "{{ num|round(0, 'floor') }}", "{{ 2.5|round }}"],
    "safe": ["{{ text|safe }}", "{{ '<div>foo</div>'|safe }}"],
    "select": ["{{ items|select('odd')|list }}", "{{ words|select|list }}"],
    "selectattr": ["{{ users|selectattr('age', 'eq', 36)|map(attribute='name')|list }}"],
    "slice": ["{{ items|slice(2)|list }}", "{{ [1, 2, 3, 4, 5]|slice(3, 0)|list }}"],
    "sort": [
        "{{ words|sort|join }}",
        "{{ users|sort(attribute='age,name', reverse=true)|map(attribute='name')|join }}",
    ],
    "string": ["{{ items|string }}", "{{ markup|string }}", "{{ text|string }}"],
    "striptags": ["{{ text|striptags }}", "{{ markup|striptags }}"],
    "sum": ["{{ items|sum }}", "{{ users|sum(attribute='age') }}", "{{ [[1], [2]]|sum(start=[]) }}"],
    "title": ["{{ text|title }}"],
    "tojson": ["{{ mapping|tojson }}", "{{ users|tojson(indent=2) }}", "{{ text|tojson }}"],
    "trim": ["{{ '  x  '|trim }}", "{{ 'xxaxx'|trim('x') }}", "{{ text|trim }}"],
    "truncate": ["{{ text|truncate(9) }}", "{{ text|truncate(9, true, '…', 0) }}", "{{ 'short'|truncate }}"],
    "unique": ["{{ [1, 1, 2]|unique|list }}", "{{ ['A', 'a']|unique(case_sensitive=true)|list }}"],
    "upper": ["{{ text|upper }}"],
    "urlencode": ["{{ url|urlencode }}", "{{ {'f': 1, 'z': 2}|urlencode }}"],
    "urlize": ["{{ 'see http://example.org now'|urlize }}", "{{ 'www.example.org'|urlize(10, true, '_blank') }}"],
    "wordcount": ["{{ text|wordcount }}"],
    "wordwrap": ["{{ 'a b c d e f'|wordwrap(3) }}", "{{ 'a b c'|wordwrap(1, wrapstring='|') }}"],
    "xmlattr": ["{{ {'class': 'x', 'id': none, 'data-a': text}|xmlattr }}"],
}

CASE_LIST = [(name, source) for name, sources in CASES.items() for source in sources]


def test_every_filter_has_cases():
    assert set(CASES) == set(FILTERS), sorted(set(FILTERS) ^ set(CASES))


def _stock(autoescape: bool) -> ImmutableSandboxedEnvironment:
    return ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"], autoescape=autoescape
    )


def _ours(autoescape: bool):
    env = make_environment()
    env.autoescape = autoescape
    return env


def _outcome(env, source: str) -> str:
    try:
        return env.from_string(source).render(VALUES)
    except Exception as exc:  # both must fail alike
        return f"{type(exc).__name__}"


@pytest.mark.parametrize(("name", "source"), CASE_LIST, ids=[f"{n}:{s}" for n, s in CASE_LIST])
@pytest.mark.parametrize("mode", ["plain", "autoescape option", "autoescape block"])
def test_filter_gives_stock_result(name, source, mode):
    """The sandbox's result is stock Jinja's, with autoescaping off, on, or switched on by a block."""
    autoescape = mode == "autoescape option"
    if mode == "autoescape block":
        source = "{% autoescape true %}" + source + "{% endautoescape %}"
    assert _outcome(_ours(autoescape), source) == _outcome(_stock(autoescape), source)


@pytest.mark.parametrize(("name", "source"), CASE_LIST[::3], ids=[f"{n}:{s}" for n, s in CASE_LIST[::3]])
def test_renderer_gives_stock_result(name, source):
    """Through Renderer (the budget in force) the results are the same."""
    renderer = Renderer(())
    assert renderer.render(renderer.compile(source, "t"), VALUES) == _stock(False).from_string(source).render(VALUES)
