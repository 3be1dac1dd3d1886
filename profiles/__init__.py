"""agent-profiles: LLM agent personas declared in YAML and rendered through a sandbox.

The names below are imported on first use, so `import profiles` stays light for a command-line
tool or an agent server that only needs part of the library.

How a persona becomes a prompt, one module per arrow, nothing flowing back:

```
persona YAML ──loader──▶ ProfileConfig ──create_profile(context)──▶ Profile ──format_*──▶ prompt text
 (safe_yaml: bounded,    (config: validation;   resolve: providers,     (profile: immutable,
  file:line kept)         fields: value types)   overlays, provenance)   renders in the sandbox)
                                                                           │
                                   format_messages ──▶ chat messages (messages, history)
                                   to_request ───────▶ a request body for one API (requests, settings)
                                   parse_reply ◀────── a model's reply, by the output schema
```

Layers, top to bottom. A module imports only from its own layer or below, and no modules import
each other in a circle, not even inside functions (tests/test_architecture.py checks both):

```
 8  cli/                                   every click command; the only code that draws on a terminal
 7  interop/ adapters/                     other tools' files read into personas and written from them;
                                           personas handed to agent frameworks as their own objects
 7  serve/                                 HTTP API, MCP prompts and web studio (the `serve` extra)
 6  loader explanation validate check      persona files and folders, explain, validate, check,
    batch batch_rows batch_ray             batch (here or on Ray; rows of one shape share a plan),
    generate review report                 generate, prompt diffs and snapshots for review;
    factories/                             diversity reports; personas from datasets, an LLM, or several
 5  profile_config profile plan            ProfileConfig (the model completed with create_profile);
                                           immutable profiles that render prompts; a persona compiled
                                           once into the plan its profiles share
 4  resolve deployments provenance         a persona and a context become values with their sources
 3  config fields inheritance schema       the persona model: validation only; extends; JSON Schema;
    template_inputs                        declared inputs checked against what templates read
 2  dynconfig providers/                   values looked up later: env, .env files, the store, your own
 1  store/ rendering/ similarity           SQL only; sandbox, bounds and template selection; MinHash
                                           and LSH over texts; none knows what a persona is
    requests                               request bodies for each API from messages, tools, settings
 0  errors context secrets safe_yaml       the error tree, the context, secrets, bounded YAML,
    tools resources react lookalikes       tool specs, resources and the ReAct format, other tools' files,
    history messages settings              chat history and message layout, model settings,
    inputs output_schema                   typed inputs, output schemas and reading replies by them
    buckets tracing                        stable hashing for shards and rollouts, span attributes,
    jsonlines fanout                       one byte form for JSON lines, work fanned out to processes,
    environ atomic callers bodies          environment variables read fresh and cheaply, files replaced whole,
                                           warnings at the caller's line, HTTP bodies read within bounds
```
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .errors import (
    AdapterError,
    BatchError,
    ConfigError,
    ConfigIssue,
    DatasetRowError,
    ExportError,
    FactoryError,
    HistoryError,
    InputError,
    InteropError,
    LabelConflictError,
    OutputError,
    ProfilesError,
    PromptNotFoundError,
    ProtectedLabelError,
    ReactParseError,
    RenderError,
    ReplyError,
    RequestError,
    ResolutionError,
    ResourceError,
    RowIssue,
    SchemaReplyError,
    SecretError,
    ServeError,
    StoreError,
    StoreNotFoundError,
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
    "InputSpec": "inputs",
    "MessageSlot": "messages",
    "OutputSchema": "output_schema",
    "UnusedInputWarning": "template_inputs",
    "build_request": "requests",
    "check_history": "history",
    "inputs_schema": "inputs",
    "LLMProfileFactory": "factories.llm",
    "DistinctFilter": "factories.distinct",
    "EmbeddingClient": "factories.embeddings",
    "SamplingPlan": "factories.plan",
    "diversity_report": "report",
    "load_plan": "factories.plan",
    "Profile": "profile",
    "ProfileConfig": "profile_config",
    "ProfileFactory": "factories.base",
    "CompositeProfileFactory": "factories.composite",
    "DatasetProfileFactory": "factories.dataset",
    "FieldMapping": "factories.dataset",
    "load_mapping": "factories.dataset",
    "ReactAction": "react",
    "ReactAnswer": "react",
    "Resolved": "context",
    "PromptStore": "store",
    "StaleStoreWarning": "providers.store",
    "StoreProvider": "providers.store",
    "Tool": "tools",
    "UnknownDeploymentWarning": "deployments",
    "UnknownModelWarning": "rendering.families",
    "check_paths": "check",
    "explain": "explanation",
    "load_profile": "loader",
    "load_profiles": "loader",
    "looks_like_credential": "secrets",
    "parse_profiles": "loader",
    "persona_schema": "schema",
    "register_provider": "providers",
    "ChatTemplate": "rendering.chat_template",
    "JinjaAdditions": "rendering.plugins",
    "register_extension": "rendering.plugins",
    "register_filter": "rendering.plugins",
    "register_global": "rendering.plugins",
    "register_test": "rendering.plugins",
    "render_chat_template": "rendering.chat_template",
}

__all__ = [
    "AdapterError",
    "BatchError",
    "ChatTemplate",
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
    "DistinctFilter",
    "DynConfig",
    "EmbeddingClient",
    "EnvProvider",
    "ExplainRow",
    "ExportError",
    "FactoryError",
    "FieldMapping",
    "HistoryError",
    "InputError",
    "InputSpec",
    "InteropError",
    "JinjaAdditions",
    "LLMProfileFactory",
    "LabelConflictError",
    "MessageSlot",
    "OutputError",
    "OutputSchema",
    "Profile",
    "ProfileConfig",
    "ProfileFactory",
    "ProfilesError",
    "PromptNotFoundError",
    "PromptStore",
    "ProtectedLabelError",
    "ReactAction",
    "ReactAnswer",
    "ReactParseError",
    "RenderError",
    "ReplyError",
    "RequestError",
    "ResolutionError",
    "Resolved",
    "ResourceError",
    "RowIssue",
    "SamplingPlan",
    "SchemaReplyError",
    "SecretError",
    "ServeError",
    "StaleStoreWarning",
    "StoreError",
    "StoreNotFoundError",
    "StoreProvider",
    "TemplateNotFoundError",
    "Tool",
    "UnknownDeploymentWarning",
    "UnknownModelWarning",
    "UnknownProviderError",
    "UnusedInputWarning",
    "__version__",
    "build_request",
    "check_history",
    "check_paths",
    "diversity_report",
    "explain",
    "inputs_schema",
    "load_mapping",
    "load_plan",
    "load_profile",
    "load_profiles",
    "looks_like_credential",
    "parse_profiles",
    "persona_schema",
    "register_extension",
    "register_filter",
    "register_global",
    "register_provider",
    "register_test",
    "render_chat_template",
]

if TYPE_CHECKING:
    from .config import DeploymentOverlay
    from .context import Context, Resolved
    from .deployments import UnknownDeploymentWarning
    from .dynconfig import ConfigInfo, DynConfig
    from .explanation import explain
    from .factories.base import ProfileFactory
    from .factories.composite import CompositeProfileFactory
    from .factories.dataset import DatasetProfileFactory, FieldMapping, load_mapping
    from .factories.distinct import DistinctFilter
    from .factories.embeddings import EmbeddingClient
    from .factories.llm import LLMProfileFactory
    from .factories.plan import SamplingPlan, load_plan
    from .history import check_history
    from .inputs import InputSpec, inputs_schema
    from .loader import load_profile, load_profiles, parse_profiles
    from .messages import MessageSlot
    from .output_schema import OutputSchema
    from .profile import DefaultProfile, Profile
    from .profile_config import ProfileConfig
    from .provenance import ExplainRow
    from .providers import register_provider
    from .providers.base import ConfigProvider
    from .providers.env import EnvProvider
    from .providers.store import StaleStoreWarning, StoreProvider
    from .react import ReactAction, ReactAnswer
    from .rendering.chat_template import ChatTemplate, render_chat_template
    from .rendering.families import UnknownModelWarning
    from .rendering.plugins import (
        JinjaAdditions,
        register_extension,
        register_filter,
        register_global,
        register_test,
    )
    from .report import diversity_report
    from .requests import build_request
    from .schema import persona_schema
    from .secrets import looks_like_credential
    from .store import PromptStore
    from .template_inputs import UnusedInputWarning
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
