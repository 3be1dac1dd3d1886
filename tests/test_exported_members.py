"""The public API: `__all__` is sorted and complete, and `import profiles` stays light."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import profiles


def test_all_is_sorted_and_resolves():
    assert profiles.__all__ == sorted(profiles.__all__)
    for name in profiles.__all__:
        assert getattr(profiles, name) is not None


def test_no_exported_name_is_shadowed_by_a_module():
    # Importing `profiles.x` sets the attribute `x` on the package, so an exported name equal to a
    # module's name would turn from the function into the module once that module was imported.
    modules = {info.name for info in pkgutil.iter_modules(profiles.__path__)}
    assert not modules & set(profiles.__all__)
    code = (
        "import importlib, pkgutil, types, profiles\n"
        "for info in pkgutil.walk_packages(profiles.__path__, 'profiles.'):\n"
        "    if not info.name.endswith('__main__'):\n"
        "        try:\n"
        "            importlib.import_module(info.name)\n"
        "        except ModuleNotFoundError:\n"  # an adapter whose framework is tested elsewhere
        "            pass\n"
        "print([n for n in profiles.__all__ if isinstance(getattr(profiles, n), types.ModuleType)])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


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
