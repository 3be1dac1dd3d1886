"""agent-profiles: LLM agent personas declared in YAML and rendered through a sandbox.

The names below are imported on first use, so `import profiles` stays light for a command-line
tool or an agent server that only needs part of the library.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .errors import (
    BatchError,
    ConfigError,
    ConfigIssue,
    DatasetRowError,
    FactoryError,
    ProfilesError,
    PromptNotFoundError,
    ReactParseError,
    RenderError,
    ReplyError,
    ResolutionError,
    ResourceError,
    RowIssue,
    SecretError,
    StoreError,
    TemplateNotFoundError,
    UnknownProviderError,
)

__version__ = "0.1.0"

_LAZY = {
    "CheckReport": "check",
    "ConfigInfo": "dynconfig",
    "ConfigProvider": "providers.base",
    "Context": "context",
    "DefaultProfile": "profile",
    "DeploymentOverlay": "config",
    "DynConfig": "dynconfig",
    "EnvProvider": "providers.env",
    "ExplainRow": "provenance",
    "LLMProfileFactory": "factories.llm",
    "Profile": "profile",
    "ProfileConfig": "config",
    "ProfileFactory": "factories.base",
    "CompositeProfileFactory": "factories.composite",
    "DatasetProfileFactory": "factories.dataset",
    "FieldMapping": "factories.dataset",
    "load_mapping": "factories.dataset",
    "ReactAction": "react",
    "ReactAnswer": "react",
    "Resolved": "context",
    "StaleStoreWarning": "providers.store",
    "StoreProvider": "providers.store",
    "Tool": "tools",
    "UnknownDeploymentWarning": "deployments",
    "UnknownModelWarning": "rendering.families",
    "check_paths": "check",
    "explain": "provenance",
    "load_profile": "loader",
    "load_profiles": "loader",
    "looks_like_credential": "secrets",
    "parse_profiles": "loader",
    "persona_schema": "schema",
    "register_provider": "providers",
}

__all__ = [
    "BatchError",
    "CheckReport",
    "CompositeProfileFactory",
    "ConfigError",
    "ConfigInfo",
    "ConfigIssue",
    "ConfigProvider",
    "Context",
    "DatasetProfileFactory",
    "DatasetRowError",
    "DefaultProfile",
    "DeploymentOverlay",
    "DynConfig",
    "EnvProvider",
    "ExplainRow",
    "FactoryError",
    "FieldMapping",
    "LLMProfileFactory",
    "Profile",
    "ProfileConfig",
    "ProfileFactory",
    "ProfilesError",
    "PromptNotFoundError",
    "ReactAction",
    "ReactAnswer",
    "ReactParseError",
    "RenderError",
    "ReplyError",
    "ResolutionError",
    "Resolved",
    "ResourceError",
    "RowIssue",
    "SecretError",
    "StaleStoreWarning",
    "StoreError",
    "StoreProvider",
    "TemplateNotFoundError",
    "Tool",
    "UnknownDeploymentWarning",
    "UnknownModelWarning",
    "UnknownProviderError",
    "__version__",
    "check_paths",
    "explain",
    "load_mapping",
    "load_profile",
    "load_profiles",
    "looks_like_credential",
    "parse_profiles",
    "persona_schema",
    "register_provider",
]

if TYPE_CHECKING:
    from .config import ProfileConfig
    from .context import Context, Resolved
    from .deployments import UnknownDeploymentWarning
    from .dynconfig import ConfigInfo, DynConfig
    from .factories.base import ProfileFactory
    from .factories.composite import CompositeProfileFactory
    from .factories.dataset import DatasetProfileFactory, FieldMapping, load_mapping
    from .factories.llm import LLMProfileFactory
    from .loader import load_profile, load_profiles, parse_profiles
    from .profile import DefaultProfile, Profile
    from .provenance import ExplainRow, explain
    from .providers import register_provider
    from .providers.base import ConfigProvider
    from .providers.env import EnvProvider
    from .providers.store import StaleStoreWarning, StoreProvider
    from .react import ReactAction, ReactAnswer
    from .rendering.families import UnknownModelWarning
    from .schema import persona_schema
    from .secrets import looks_like_credential
    from .tools import Tool


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'profiles' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
