"""``profiles.store.__all__`` lists exactly the public API, sorted, and every name resolves."""

from __future__ import annotations

import importlib
import pkgutil

import profiles.store


def test_all_is_sorted_and_resolves():
    """Every exported name exists and the list is sorted."""
    exported = profiles.store.__all__
    assert list(exported) == sorted(exported)
    assert all(hasattr(profiles.store, name) for name in exported)


def test_every_store_module_declares_all():
    """Each module says what it exports, and exports only what it defines or re-exports."""
    for info in pkgutil.iter_modules(profiles.store.__path__):
        module = importlib.import_module(f"profiles.store.{info.name}")
        assert module.__doc__, info.name
        assert all(hasattr(module, name) for name in module.__all__), info.name
