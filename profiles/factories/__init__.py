"""Factories that create profiles in batches: from datasets, from an LLM, or from several combined.

The dataset and composite factories are imported on first use, so importing the base contract
stays light.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .base import ProfileFactory

_LAZY = {
    "CompositeProfileFactory": "composite",
    "DatasetProfileFactory": "dataset",
    "DatasetRowError": "dataset",
    "FieldMapping": "dataset",
    "RowIssue": "dataset",
    "load_mapping": "dataset",
    "merge_profiles": "composite",
}

__all__ = [
    "CompositeProfileFactory",
    "DatasetProfileFactory",
    "DatasetRowError",
    "FieldMapping",
    "ProfileFactory",
    "RowIssue",
    "load_mapping",
    "merge_profiles",
]

if TYPE_CHECKING:
    from .composite import CompositeProfileFactory, merge_profiles
    from .dataset import DatasetProfileFactory, DatasetRowError, FieldMapping, RowIssue, load_mapping


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'profiles.factories' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
