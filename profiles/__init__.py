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
    "LLMProfileFactory": "factories.llm",
    "Profile": "profile",
    "ProfileConfig": "config",
    "ProfileFactory": "factories.base",
    "Resolved": "context",
    "load_profile": "loader",
    "load_profiles": "loader",
    "parse_profiles": "loader",
    "persona_schema": "schema",
    "register_provider": "providers",
}

__all__ = [
    "ConfigError",
    "ConfigInfo",
    "ConfigIssue",
    "ConfigProvider",
    "Context",
    "DefaultProfile",
    "DynConfig",
    "EnvProvider",
    "FactoryError",
    "LLMProfileFactory",
    "Profile",
    "ProfileConfig",
    "ProfileFactory",
    "ProfilesError",
    "PromptNotFoundError",
    "RenderError",
    "ResolutionError",
    "Resolved",
    "SecretError",
    "StoreError",
    "TemplateNotFoundError",
    "UnknownProviderError",
    "__version__",
    "load_profile",
    "load_profiles",
    "parse_profiles",
    "persona_schema",
    "register_provider",
]

if TYPE_CHECKING:
    from .config import ProfileConfig
    from .context import Context, Resolved
    from .dynconfig import ConfigInfo, DynConfig
    from .factories.base import ProfileFactory
    from .factories.llm import LLMProfileFactory
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
