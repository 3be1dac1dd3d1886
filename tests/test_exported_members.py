"""The public API: `__all__` is sorted and complete, and `import profiles` stays light."""

from __future__ import annotations

import subprocess
import sys

import profiles


def test_all_is_sorted_and_resolves():
    assert profiles.__all__ == sorted(profiles.__all__)
    for name in profiles.__all__:
        assert getattr(profiles, name) is not None


def test_unknown_attribute():
    try:
        profiles.nothing_here  # noqa: B018
    except AttributeError as exc:
        assert "nothing_here" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_import_does_not_load_heavy_dependencies():
    heavy = "('pydantic', 'jinja2', 'yaml', 'click', 'rich')"
    code = f"import sys, profiles; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_all_lists_every_lazy_name_and_error():
    from profiles import errors

    expected = set(profiles._LAZY) | set(errors.__all__) | {"__version__"}
    assert set(profiles.__all__) == expected
