"""Hypothesis: whatever the input, the loader and the renderer raise only ProfilesError, quickly."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiles.errors import ProfilesError
from profiles.loader import parse_profiles
from profiles.rendering.renderer import Renderer

_YAML_PIECES = st.sampled_from(
    [
        "name: A\n", "role: B\n", "goal: ", "constraints:\n", "  - ", "- ", "&a ", "*a ", "[", "]", "{", "}",
        ": ", ", ", "'", '"', "\n", "\t", "\ufeff", "\u200b", "!!python/object:os.system ", "? ", "---\n",
        "variables: ", "samples: ", "extends: ", "../x.yaml", "templates: {system: {inline: '{{ x }}'}}\n",
        "1", "null", "true", "~", "%YAML 1.1\n", "<<: *a\n", "\x00", "\r\n", "é", "ﬁ",
    ]
)

_JINJA_PIECES = st.sampled_from(
    [
        "{{ ", " }}", "{% ", " %}", "for i in range(", "x", ")", "endfor", "if ", "endif", "set ", " = ",
        "'a'", "9" * 9, " * ", " ** ", " ~ ", " % ", " + ", "|center(", "|indent(", "|wordwrap(", "|join",
        "|replace('a', 'aa')", "|list", "|tojson", "|format(", ".format(", "'{:9}'", "'%9s'", "[", "]", ",",
        "macro m(n) ", "endmacro", "m(", "namespace(", "dict(", "__class__", ".", "loop", "recursive",
        "include 'x.j2'", "import 'y.j2' as y", "'\\n'", "{#", "#}", "raw", "endraw", "(", "10", "range",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_YAML_PIECES, max_size=40).map("".join))
def test_loader_raises_only_profiles_errors(text):
    try:
        parse_profiles(text, file="fuzz.yaml")
    except ProfilesError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_loader_on_any_text(text):
    try:
        parse_profiles(text, file="fuzz.yaml")
    except ProfilesError:
        pass


_renderer = Renderer(())


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_JINJA_PIECES, max_size=30).map("".join))
def test_renderer_raises_only_profiles_errors(source):
    try:
        text = _renderer.render(_renderer.compile(source, "fuzz"), {"x": [1, 2]})
    except ProfilesError:
        pass
    else:
        assert len(text) <= _renderer.max_output_chars
