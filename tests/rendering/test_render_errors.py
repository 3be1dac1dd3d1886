"""A template that fails while rendering says where, what, and the way out for that kind of failure."""

from __future__ import annotations

import pytest

from profiles import ProfileConfig, RenderError


def _render(template: str, **variables) -> str:
    config = ProfileConfig(name="A", role="B", templates={"system": {"inline": template}})
    return config.create_profile().format_system_prompt(**variables)


@pytest.mark.parametrize(
    ("template", "what", "remedy"),
    [
        ("{{ 1 // n }}", "ZeroDivisionError: integer division or modulo by zero", "fix the expression at that line"),
        ("{{ name.__class__ }}", "SecurityError", "the sandbox refuses this"),
        ("{% for x in range(10**9) %}{{ x }}{% endfor %}", "LimitExceeded", "make the template do less work"),
    ],
)
def test_each_failure_names_its_line_and_remedy(template, what, remedy):
    with pytest.raises(RenderError) as caught:
        _render(template, n=0)
    message = str(caught.value)
    assert message.startswith("template 'system (inline)' line 1: ") and what in message and remedy in message
    assert ".;" not in message


def test_a_refused_construct_keeps_its_own_remedy():
    with pytest.raises(RenderError) as caught:
        _render("{{ '%*d' % (5, 1) }}")
    message = str(caught.value)
    assert "write the width out" in message and "Python internals" not in message
