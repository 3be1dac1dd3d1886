"""Resolution: the one place where a persona and a context become values, each with its source.

Precedence, first wins, for every field: the caller's overrides > the field's provider (for
dynamic fields) > the field's default; the context's language and model win over the persona's.
Literal fields keep the file and line they were written on (`yaml:a.yaml:4`, `overlay prod:
a.yaml:9`). Model settings resolve the same way, each with its own source
(`model_settings.temperature`), a provider's text read by the setting's type. Templates and
output schemas named `{store: key}` are fetched here too, for the resolved language and model.
Nothing is cached across calls except what never changes for a config: which of its fields are
literal, and their sources.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .config import PersonaModel
from .context import Context, Resolved
from .dynconfig import ConfigInfo
from .errors import ConfigError, ResolutionError
from .fields import LIST_FIELDS, PROFILE_FIELDS, TemplateSource
from .output_schema import OutputSchema, OutputSchemaSpecError, build_output_schema, read_schema_text
from .providers import get_provider
from .providers.env import check_deployment
from .secrets import redact
from .settings import SettingError, setting_from_text

__all__ = [
    "DEPLOYMENT_ENV",
    "TEMPLATE_PATH_ENV",
    "choose_deployment",
    "env_template_roots",
    "fetch_output_schema",
    "fetch_templates",
    "is_literal",
    "literal_fields",
    "resolve_fields",
    "resolve_settings",
]

#: The deployment used when none is given.
DEPLOYMENT_ENV = "PROFILES_DEPLOYMENT"

#: Extra template roots, separated like PATH; searched after a persona's own `template_roots`.
TEMPLATE_PATH_ENV = "PROFILES_TEMPLATE_PATH"


def choose_deployment(deployment: str | None) -> str | None:
    """The deployment in force: the argument, else `PROFILES_DEPLOYMENT`, else none; checked to be safe.

    Raises:
        ResolutionError: the name could lead a provider out of its folder (`../x`, a path).
    """
    chosen = deployment if deployment is not None else os.environ.get(DEPLOYMENT_ENV) or None
    if chosen is not None:
        check_deployment(chosen)
    return chosen


def env_template_roots() -> tuple[Path, ...]:
    """The folders named by `PROFILES_TEMPLATE_PATH`; read here so a profile never reads the environment.

    Raises:
        ConfigError: an entry is not a folder.
    """
    value = os.environ.get(TEMPLATE_PATH_ENV)
    if not value:
        return ()
    roots = []
    for item in value.split(os.pathsep):
        if not item.strip():
            continue
        path = Path(item).expanduser()
        if not path.is_dir():
            raise ConfigError(
                f"{TEMPLATE_PATH_ENV} names {item!r}, which is not a folder; create it or fix the variable"
            )
        roots.append(path.resolve())
    return tuple(roots)


def is_literal(config: PersonaModel) -> bool:
    """Whether every creation resolves the same: no dynamic field, factory or template from the store."""
    memo = config.__pydantic_private__["_memo"]
    literal = memo.get("literal")
    if literal is None:
        literal = memo["literal"] = (
            config.factory is None
            and not literal_fields(config)[1]
            and not any(item.store_key for item in config.templates.values())
            and not any(isinstance(value, ConfigInfo) for value in config.model_settings.settings().values())
            and not (config.output_schema is not None and config.output_schema.store_key)
        )
    return literal  # type: ignore[no-any-return]


def resolve_fields(config: PersonaModel, context: Context | None = None) -> dict[str, Resolved]:
    """Each profile field's value and source for `context`; overlays are applied before this.

    Raises:
        ConfigError: an override names an unknown field.
        ResolutionError: a provider failed or is unknown.
    """
    context = context or Context()
    overrides = context.overrides
    if overrides:
        unknown = sorted(set(overrides) - set(PROFILE_FIELDS))
        if unknown:
            raise ConfigError(
                f"cannot override unknown field(s) {', '.join(unknown)}; fields are {', '.join(PROFILE_FIELDS)}"
            )
    literal, dynamic = literal_fields(config)
    resolved = dict(literal)
    if context.language:
        resolved["language"] = Resolved(context.language, "argument")
    if context.model:
        resolved["model"] = Resolved(context.model, "argument")
    for field, value in overrides.items():
        resolved[field] = Resolved(_shape(field, value), "override")
    # language and model come first (`literal_fields` orders them so): every other field is resolved for them
    for field in dynamic:
        if field in overrides or (field == "language" and context.language) or (field == "model" and context.model):
            continue
        if field not in ("language", "model"):
            chosen = (resolved["language"].value, resolved["model"].value)
            if (context.language, context.model) != chosen:
                context = replace(context, language=chosen[0], model=chosen[1])
        info: ConfigInfo = getattr(config, field)
        item = info.resolve(context)
        if isinstance(item.value, list):
            item = Resolved(tuple(item.value), item.source, item.secret)
        resolved[field] = item
    return {field: resolved[field] for field in PROFILE_FIELDS}


def literal_fields(config: PersonaModel) -> tuple[Mapping[str, Resolved], tuple[str, ...]]:
    """The literal fields with their sources, and the names of the dynamic ones; worked out once.

    A config never changes, so only the dynamic fields need work at each `create_profile`.
    """
    memo = config.__pydantic_private__["_memo"]
    split = memo.get("split")
    if split is None:
        sources = _literal_sources(config)
        literal: dict[str, Resolved] = {}
        dynamic: list[str] = []
        for field in ("language", "model", *PROFILE_FIELDS):
            value = getattr(config, field)
            if isinstance(value, ConfigInfo):
                if field not in dynamic:
                    dynamic.append(field)
            elif field not in literal:
                literal[field] = Resolved(value, sources[field] if value is not None else "unset")
        split = memo["split"] = (MappingProxyType(literal), tuple(dynamic))
    return split  # type: ignore[no-any-return]


def _literal_sources(config: PersonaModel) -> dict[str, str]:
    """Where each literal field was written: `yaml:file:line`, `overlay prod: file:line`, or `literal`."""
    private = config.__pydantic_private__ or {}
    lines = private.get("_lines") or {}
    source_file = private.get("_source_file")
    fallback = private.get("_origin") or (f"yaml:{source_file}" if source_file else "literal")
    sources = {}
    for field in PROFILE_FIELDS:
        where = lines.get((field,))
        sources[field] = f"yaml:{where[0]}:{where[1]}" if where is not None else fallback
    sources.update(private.get("_overlay_sources") or {})
    return sources


def fetch_templates(
    config: PersonaModel, context: Context, *, lines: PersonaModel
) -> dict[str, TemplateSource] | None:
    """The persona's templates with each `{store: key}` replaced by the text the store holds now.

    None when no template comes from the store. `lines` is the persona as written (overlays keep
    no lines), to say where a failing template was named. The text is compiled by the renderer,
    whose cache is keyed by source text, so a new version compiles once and an unchanged one never.

    Raises:
        ResolutionError: the store has no such prompt, or cannot be read and has given none yet.
    """
    if not any(item.store_key for item in config.templates.values()):
        return None
    provider = get_provider("store")
    fetched = dict(config.templates)
    for kind, item in config.templates.items():
        if not item.store_key:
            continue
        where = lines.line_of("templates", kind) or lines.line_of("templates")
        place = f"{where[0]}:{where[1]}: " if where else ""
        try:
            found = provider.find(item.store_key, context)
        except ResolutionError as exc:
            raise ResolutionError(f"{place}template {kind!r}: {exc}") from exc
        except Exception as exc:  # a user's provider failed: say which, keep the cause
            raise ResolutionError(
                f"{place}template {kind!r}: the store provider failed to look up {item.store_key!r}: "
                f"{type(exc).__name__}; check that provider's configuration"
            ) from exc
        if found is None or not isinstance(found.value, str) or not found.value:
            why = f" ({found.source})" if found is not None else ""
            raise ResolutionError(
                f"{place}template {kind!r}: the prompt store has no prompt {item.store_key!r} for "
                f"language={context.language or '-'}, model={context.model or '-'}, "
                f"deployment={context.deployment or '-'}{why}; add it with "
                f"`profiles store put {item.store_key} --file {kind}.j2 --label production`"
            )
        fetched[kind] = TemplateSource(found.value, found.source, store_key=item.store_key)
    return fetched


def resolve_settings(config: PersonaModel, context: Context | None = None) -> dict[str, Resolved]:
    """Each model setting the persona sets, with its value and source, for `context`.

    A dynamic setting asks its provider, whose text (`"0.2"`) is read by the setting's type; the
    default is used when the provider has nothing. Literal settings keep their file and line.

    Raises:
        ResolutionError: a provider failed, or gave a value the setting does not take.
    """
    context = context or Context()
    private = config.__pydantic_private__ or {}
    lines = private.get("_lines") or {}
    overlaid = private.get("_overlay_sources") or {}
    source_file = private.get("_source_file")
    fallback = private.get("_origin") or (f"yaml:{source_file}" if source_file else "literal")
    resolved: dict[str, Resolved] = {}
    for name, value in config.model_settings.settings().items():
        key = f"model_settings.{name}"
        if not isinstance(value, ConfigInfo):
            where = lines.get(("model_settings", name))
            written = f"yaml:{where[0]}:{where[1]}" if where else fallback
            resolved[name] = Resolved(value, overlaid.get(key) or written)
            continue
        item = value.resolve(context)
        if item.value is None:
            resolved[name] = item
            continue
        try:
            typed = setting_from_text(name, item.value)
        except SettingError as exc:
            reason = redact(exc.reason, [item.value]) if item.secret else exc.reason
            raise ResolutionError(
                f"{key} from {item.source}: {reason}; fix the value there, or the field's default"
            ) from None
        resolved[name] = Resolved(typed, item.source, item.secret)
    return resolved


def fetch_output_schema(config: PersonaModel, context: Context, *, lines: PersonaModel) -> OutputSchema | None:
    """The persona's output schema, with `{store: key}` replaced by the schema the store holds now.

    The persona's own schema when it names none in the store. The store's text is JSON or YAML,
    checked like a schema written in the file.

    Raises:
        ResolutionError: the store has no such prompt, cannot be read, or holds no valid schema.
    """
    output = config.output_schema
    if output is None or not output.store_key:
        return output
    where = lines.line_of("output_schema")
    place = f"{where[0]}:{where[1]}: " if where else ""
    provider = get_provider("store")
    try:
        found = provider.find(output.store_key, context)
    except ResolutionError as exc:
        raise ResolutionError(f"{place}output_schema: {exc}") from exc
    except Exception as exc:  # a user's provider failed: say which, keep the cause
        raise ResolutionError(
            f"{place}output_schema: the store provider failed to look up {output.store_key!r}: "
            f"{type(exc).__name__}; check that provider's configuration"
        ) from exc
    if found is None or not isinstance(found.value, str) or not found.value.strip():
        why = f" ({found.source})" if found is not None else ""
        raise ResolutionError(
            f"{place}output_schema: the prompt store has no prompt {output.store_key!r} for "
            f"language={context.language or '-'}, model={context.model or '-'}, "
            f"deployment={context.deployment or '-'}{why}; add it with "
            f"`profiles store put {output.store_key} --file schema.json --label production`"
        )
    try:
        data = read_schema_text(found.value, found.source)
        return build_output_schema(data, origin=found.source, **output.asked)
    except OutputSchemaSpecError as exc:
        raise ResolutionError(
            f"{place}output_schema: {found.source} is not a usable JSON Schema: {'; '.join(exc.problems[:10])}"
        ) from None


def _shape(field: str, value: Any) -> Any:
    if field in LIST_FIELDS and isinstance(value, list):
        return tuple(value)
    return value
