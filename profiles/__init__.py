"""agent-profiles: LLM agent personas declared in YAML and rendered through a sandbox.

The names below are imported on first use, so `import profiles` stays light for a command-line
tool or an agent server that only needs part of the library.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .errors import (
    ConfigError,
    ConfigIssue,
    FactoryError,
    ProfilesError,
    PromptNotFoundError,
    RenderError,
    ResolutionError,
    SecretError,
    StoreError,
    TemplateNotFoundError,
    UnknownProviderError,
)

__version__ = "0.1.0"

_LAZY = {
    "ConfigInfo": "dynconfig",
    "ConfigProvider": "providers.base",
    "Context": "context",
    "DefaultProfile": "profile",
    "DynConfig": "dynconfig",
    "EnvProvider": "providers.env",
    "Profile": "profile",
    "ProfileConfig": "config",
    "ProfileFactory": "factories.base",
    "CompositeProfileFactory": "factories.composite",
    "DatasetProfileFactory": "factories.dataset",
    "DatasetRowError": "factories.dataset",
    "FieldMapping": "factories.dataset",
    "RowIssue": "factories.dataset",
    "load_mapping": "factories.dataset",
    "Resolved": "context",
    "load_profile": "loader",
    "load_profiles": "loader",
    "parse_profiles": "loader",
    "persona_schema": "schema",
    "register_provider": "providers",
}

__all__ = sorted(
    [
        *_LAZY,
        "ConfigError",
        "ConfigIssue",
        "FactoryError",
        "ProfilesError",
        "PromptNotFoundError",
        "RenderError",
        "ResolutionError",
        "SecretError",
        "StoreError",
        "TemplateNotFoundError",
        "UnknownProviderError",
        "__version__",
    ]
)

if TYPE_CHECKING:
    from .config import ProfileConfig
    from .context import Context, Resolved
    from .dynconfig import ConfigInfo, DynConfig
    from .factories.base import ProfileFactory
    from .factories.composite import CompositeProfileFactory
    from .factories.dataset import DatasetProfileFactory, DatasetRowError, FieldMapping, RowIssue, load_mapping
    from .loader import load_profile, load_profiles, parse_profiles
    from .profile import DefaultProfile, Profile
    from .providers import register_provider
    from .providers.base import ConfigProvider
    from .providers.env import EnvProvider
    from .schema import persona_schema


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'profiles' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
