"""What every adapter shares: the framework import, the profile, its provenance and its guarded values.

Adapters never render on their own and never copy a secret: prompts come from the profile's own
`format_*` methods, a request's settings through the same secret check `to_request` makes, and a
value an adapter hands the framework outside a prompt (a name, a model) is refused when it is a
secret the persona does not allow out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import AdapterError, SecretError

__all__ = ["Provenance", "as_profile", "framework", "guarded", "provenance_of", "settings_of"]


def framework(module: str, extra: str, package: str | None = None) -> ModuleType:
    """Import a framework's module, or say which extra installs it.

    Raises:
        AdapterError: the framework is not installed.
    """
    try:
        return import_module(module)
    except ImportError as exc:
        raise AdapterError(
            f"this adapter needs {package or module.split('.')[0]}, which is not installed ({exc.name or module}); "
            f"pip install 'agent-profiles[{extra}]'"
        ) from None


def as_profile(
    persona: Any, *, deployment: str | None = None, language: str | None = None, model: str | None = None
) -> Any:
    """A profile from a profile, a `ProfileConfig` or a persona file (created for the context given)."""
    from ..loader import load_profile
    from ..profile import DefaultProfile

    if isinstance(persona, DefaultProfile):
        if deployment or language or model:
            raise AdapterError("give deployment, language or model when creating the profile, or pass the persona")
        return persona
    if isinstance(persona, (str, Path)):
        persona = load_profile(persona)
    if not hasattr(persona, "create_profile"):
        raise AdapterError(f"expected a profile, a ProfileConfig or a persona file, got {type(persona).__name__}")
    return persona.create_profile(deployment=deployment, language=language, model=model)


_STORE_SOURCE = re.compile(r"^store:(?P<key>\S+) (?P<version>v\d+)(?: label=(?P<label>\S+))?")
_FILE_SOURCE = re.compile(r"^(?:yaml:|overlay [^:]+: )(?P<file>.+?):\d+$")


@dataclass(frozen=True)
class Provenance:
    """Where an adapter's persona came from: its file, deployment, context and every field's source.

    Kept with what an adapter returns (`.provenance`, or the framework's own metadata), so a run
    can be traced back to the persona file and the store versions that made its prompts.
    """

    #: The persona file the fields were read from, if any.
    persona_file: str | None
    deployment: str | None
    language: str | None
    model: str | None
    #: Each field's source, as `explain` gives it (`yaml:a.yaml:4`, `env:KEY from .env.prod`, …).
    sources: Mapping[str, str] = field(default_factory=dict)
    #: Each prompt-store key the profile read, with the version and label (`v3 label=production`).
    store_versions: Mapping[str, str] = field(default_factory=dict)
    #: The persona's free-form `metadata:` (what an import kept under `metadata.<format>`, say).
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping, for a framework's metadata."""
        return {
            "persona_file": self.persona_file,
            "deployment": self.deployment,
            "language": self.language,
            "model": self.model,
            "sources": dict(self.sources),
            "store_versions": dict(self.store_versions),
            "metadata": _plain(self.metadata),
        }


def provenance_of(profile: Any) -> Provenance:
    """The provenance of a profile; secret values are never part of it (sources only)."""
    sources: dict[str, str] = {}
    store: dict[str, str] = {}
    files: list[str] = []
    for row in profile.explain():
        sources[row.field] = row.source
        found = _STORE_SOURCE.match(row.source)
        if found:
            store[found.group("key")] = found.group("version") + (
                f" label={found.group('label')}" if found.group("label") else ""
            )
        located = _FILE_SOURCE.match(row.source)
        if located:
            files.append(located.group("file"))
    context = profile.context
    return Provenance(
        persona_file=max(set(files), key=files.count) if files else None,
        deployment=context.deployment,
        language=context.language,
        model=context.model,
        sources=sources,
        store_versions=store,
        metadata=_plain(getattr(profile, "metadata", {}) or {}),
    )


def _plain(value: Any) -> Any:
    """Read-only mappings as plain dicts, for a framework's JSON metadata."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def guarded(profile: Any, name: str, what: str, keyword: str | None = None) -> Any:
    """A field's value for the framework to hold outside a prompt, refused when it is a secret not allowed out.

    `keyword` is the adapter's argument that gives the value instead, named in the error.

    Raises:
        SecretError: naming the field and where it came from, never its value.
    """
    item = profile.resolved.get(name)
    if item is None:
        return None
    if item.secret and item.value is not None and name not in profile.allow_secrets:
        instead = f"pass {keyword}=… for the {what}" if keyword else "read it from a key that is not a credential"
        raise SecretError(
            f"field {name!r} holds a secret (source {item.source}) and would become the {what}; list it under "
            f"allow_secrets if it may, or {instead}"
        )
    return item.value


def settings_of(profile: Any) -> dict[str, Any]:
    """The persona's model settings by name, each checked as a request body would be.

    Raises:
        SecretError: a setting holds a secret the persona does not allow into requests.
    """
    values: dict[str, Any] = {}
    for name, item in profile.settings.items():
        key = f"model_settings.{name}"
        if item.secret and item.value is not None and key not in profile.allow_secrets:
            raise SecretError(
                f"{key} holds a secret (source {item.source}) and would go to the model; list {key!r} under "
                "allow_secrets if it may, or read it from a key that is not a credential"
            )
        values[name] = list(item.value) if isinstance(item.value, tuple) else item.value
    return values


def leading_system_kinds(profile: Any) -> list[str]:
    """The prompt kinds of the system-role messages that open the persona's layout, before any other."""
    from ..messages import role_of

    kinds = []
    for slot in profile.layout:
        if not slot.kind or role_of(slot, profile.roles) not in ("system", "developer"):
            break
        kinds.append(slot.kind)
    return kinds


def system_text(profile: Any, *, leading: bool = False, **variables: Any) -> str:
    """The system-role prompts of the persona's layout, rendered and joined: an agent's instructions.

    `leading`: only those that open the layout, for a framework that sends the rest of it as the
    turn's input (a system prompt after the history stays there, in its place, and is not sent twice).
    """
    from ..messages import role_of

    kinds = leading_system_kinds(profile) if leading else [
        slot.kind for slot in profile.layout if slot.kind and role_of(slot, profile.roles) in ("system", "developer")]
    texts = []
    for kind in kinds:
        text = profile.format_prompt(kind, **variables)
        if text:
            texts.append(text)
    return "\n\n".join(texts)


def tool_specs(tools: Any) -> list[dict[str, Any]]:
    """Tool specs (name, description, JSON Schema) from mappings or the profile's `Tool`s."""
    from ..tools import parse_tools

    return [
        {"name": tool.name, "description": tool.description, "parameters": dict(tool.parameters)}
        for tool in parse_tools(tools)
    ]
