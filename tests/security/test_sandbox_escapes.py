"""Sandbox escapes from published Jinja advisories, and the sandbox's own traps, end in an error."""

from __future__ import annotations

import pytest

from profiles.errors import RenderError
from profiles.rendering.renderer import Renderer
from profiles.rendering.sandbox import make_environment

ESCAPES = [
    # CVE-2019-10906: str.format_map reaching attributes
    "{{ '{0.__class__}'.format_map({'0': 1}) }}",
    "{{ '{x.__class__.__mro__}'.format_map({'x': 1}) }}",
    # CVE-2016-10745 and friends: str.format reaching attributes
    "{{ '{0.__class__.__init__.__globals__}'.format(1) }}",
    "{{ '{0.__init__.__globals__[os]}'.format(namespace) }}",
    # CVE-2024-56326: an indirect reference to str.format
    "{% set f = '{0.__class__.__base__}'.format %}{{ f(1) }}",
    "{% set d = {'f': '{0.__class__}'.format} %}{{ d.f(1) }}",
    "{{ ['{0.__class__}']|map(attribute='format')|map('string')|join }}",
    # CVE-2025-27516: |attr reaching str.format
    "{{ ('{0.__class__}'|attr('format'))(1) }}",
    "{% set f = '{0.__globals__}'|attr('format') %}{{ f(namespace) }}",
    # CVE-2024-22195 / CVE-2024-34064: xmlattr keys that inject attributes
    "{{ {'a onclick=alert(1)': 1}|xmlattr }}",
    "{{ {'a/b': 1}|xmlattr }}",
    "{{ {'a=b': 1}|xmlattr }}",
    "{{ {'a>b': 1}|xmlattr }}",
    "{{ {'a\\tb': 1}|xmlattr }}",
    # reaching Python internals by attribute
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ ''|attr('__class__') }}",
    "{{ namespace.__init__.__globals__ }}",
    "{{ range.__self__ }}",
    "{{ dict.__subclasses__() }}",
    "{{ self._TemplateReference__context }}",
    "{{ (1).__class__.__base__.__subclasses__() }}",
    "{{ [].__class__.__base__ }}",
    "{{ ''.join.__self__.__class__ }}",
    # globals the sandbox does not offer
    "{{ lipsum(100000, false, 100000, 100000) }}",
    "{{ cycler(1, 2).__init__ }}",
    "{{ joiner() }}",
    "{{ config }}",
    "{{ request }}",
]

#: Texts that would show a value reached Python internals.
LEAKS = ("<class", " at 0x", "<function", "<module", "<built-in", "<bound")


@pytest.mark.parametrize("source", ESCAPES, ids=range(len(ESCAPES)))
def test_escape_ends_in_an_error(source):
    """An escape attempt raises RenderError; nothing of Python's internals reaches the message."""
    renderer = Renderer(())
    with pytest.raises(RenderError) as caught:
        renderer.render(renderer.compile(source, "t"), {})
    assert not any(leak in caught.value.message for leak in LEAKS), caught.value.message


def test_functions_do_not_print_their_address():
    """Printing a function or class is an error, so no object address reaches a prompt."""
    renderer = Renderer(())
    for source in (
        "{{ range }}",
        "{{ namespace }}",
        "{{ dict }}",
        "{{ 'a'.upper }}",
        "{{ range|string }}",
        "{{ 'x' ~ range }}",
        "{{ [range]|join }}",
        "{{ '%s' % range }}",
        "{{ '{}'.format(range) }}",
        "{{ [range] }}",
    ):
        with pytest.raises(RenderError, match="cannot be printed"):
            renderer.render(renderer.compile(source, "t"), {})


def test_iterators_and_plain_objects_do_not_print_their_address():
    """A generator, an iterator or an object with Python's default text form is refused, not printed."""

    class Plain:
        pass

    renderer = Renderer(())
    for source in (
        "{{ items|map('upper') }}",
        "{{ items|select }}",
        "{{ items|reject('none')|string }}",
        "{{ 'x' ~ (items|map('upper')) }}",
        "{{ it }}",
        "{{ plain }}",
        "{{ plain|string }}",
    ):
        with pytest.raises(RenderError, match="cannot be printed") as caught:
            renderer.render(renderer.compile(source, "t"), {"items": ["a", "b"], "it": iter([1]), "plain": Plain()})
        assert "0x" not in str(caught.value)
    # their items print as ever
    assert renderer.render(renderer.compile("{{ items|map('upper')|join(',') }}", "t"), {"items": ["a", "b"]}) == "A,B"


@pytest.mark.parametrize(
    "source",
    [
        "{{ plain|trim }}",
        "{{ plain|upper }}",
        "{{ plain|title }}",
        "{{ plain|e }}",
        "{{ plain|center(80) }}",
        "{{ plain|urlencode }}",
        "{{ plain|striptags }}",
        "{{ plain|indent }}",
        "{{ plain|truncate(80) }}",
        "{{ plain|wordwrap(40) }}",
        "{{ plain|safe }}",
        "{{ '%s'|format(plain) }}",
        "{{ '{}'.format(plain) }}",
        "{{ '{p}'.format_map({'p': plain}) }}",
        "{{ [plain]|join }}",
        "{{ [[plain]]|join(', ') }}",
        "{{ [plain] }}",
        "{{ {'a': [plain]} }}",
        "{{ (plain, 1)|string }}",
        "{{ [it]|join }}",
    ],
)
def test_no_filter_or_container_prints_an_address(source):
    """Filters that call str() on their value, and containers that print their items' repr, are checked too:
    the persona's own write-memory template prints `{{ thought | trim }}`."""

    class Plain:
        pass

    renderer = Renderer(())
    with pytest.raises(RenderError, match="cannot be printed") as caught:
        renderer.render(renderer.compile(source, "t"), {"plain": Plain(), "it": iter([1])})
    assert "0x" not in str(caught.value)


def test_a_caller_object_passed_to_a_prompt_input_is_refused_not_printed():
    from profiles import ProfileConfig

    profile = ProfileConfig(name="Ada", role="Clerk").create_profile()
    with pytest.raises(RenderError, match="cannot be printed") as caught:
        profile.format_write_memory_prompt("Plan?", thought=object())
    assert "0x" not in str(caught.value)
    assert profile.format_write_memory_prompt("Plan?", thought="  think  ") == "Question: Plan?\nThought: think"


def test_caller_lists_cannot_be_mutated():
    """The immutable sandbox refuses append, update, pop and friends on what the caller passed."""
    renderer = Renderer(())
    items, mapping = [1, 2], {"a": 1}
    for source in (
        "{{ items.append(3) }}",
        "{{ items.pop() }}",
        "{{ items.clear() }}",
        "{{ mapping.update({'b': 2}) }}",
        "{{ mapping.setdefault('b', 2) }}",
        "{% set _ = items.extend([9]) %}",
    ):
        with pytest.raises(RenderError, match="unsafe|not safely callable"):
            renderer.render(renderer.compile(source, "t"), {"items": items, "mapping": mapping})
    assert items == [1, 2] and mapping == {"a": 1}


def test_an_unsafe_attribute_does_not_render_empty():
    """Under Jinja's default Undefined an unsafe attribute prints nothing; here it is an error."""
    renderer = Renderer(())
    with pytest.raises(RenderError, match="unsafe"):
        renderer.render(renderer.compile("before {{ name.__class__ }} after", "t"), {"name": "x"})
    with pytest.raises(RenderError, match="no attribute"):
        renderer.render(renderer.compile("{{ name.nope }}", "t"), {"name": "x"})


def test_only_the_needed_globals():
    """lipsum, cycler and joiner are gone: they burn CPU or leak addresses."""
    assert set(make_environment().globals) == {"range", "dict", "namespace"}


def test_nothing_is_evaluated_while_compiling():
    """A filter or operator on constants runs at render time, inside the budget, never at compile time."""
    calls = []
    env = make_environment()
    env.filters["spy"] = lambda value: calls.append(value) or value
    code = env.compile("{{ 'a'|spy }}{{ 'a' * 3 }}{{ '%s' % 'x' }}{{ 'a' ~ 'b' }}", raw=True)
    assert calls == []
    assert "'aaa'" not in code and "'ab'" not in code
