"""Resolution: the one place where a persona and a context become values, each with its source.

Precedence, first wins, for every field: the caller's overrides > the field's provider (for
dynamic fields) > the field's default; the context's language and model win over the persona's.
Literal fields keep the file and line they were written on (`yaml:a.yaml:4`, `overlay prod:
a.yaml:9`). Model settings resolve the same way, each with its own source
(`model_settings.temperature`), a provider's text read by the setting's type, and so do
`variables:` entries (a provider's text read by the declared input's type, if any). Templates and
output schemas named `{store: key}` are fetched here too, for the resolved language and model,
and so are the stored prompts any of the persona's templates include
(`{% include "store:shared/safety" %}`), for the same context: the renderer only ever sees their
text, never the store. Nothing is cached across calls except what never changes for a config:
which of its fields are literal, and their sources.
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
from .environ import getenv
from .errors import ConfigError, ResolutionError
from .fields import LIST_FIELDS, PROFILE_FIELDS, REQUIRED_FIELDS, TemplateSource, type_name
from .inputs import InputSpecError
from .jsonlines import SURROGATE_PROBLEM, lone_surrogate
from .output_schema import OutputSchema, OutputSchemaSpecError, build_output_schema, read_schema_text
from .providers import get_provider
from .providers.env import check_deployment
from .rendering.renderer import referenced_templates
from .rendering.templates import language_problem
from .secrets import redact
from .settings import SettingError, setting_from_text

__all__ = [
    "DEPLOYMENT_ENV",
    "MAX_PARTS",
    "ROLLOUT_KEY_ENV",
    "STORE_PREFIX",
    "TEMPLATE_PATH_ENV",
    "check_answer",
    "choose_deployment",
    "choose_rollout_key",
    "env_template_roots",
    "fetch_output_schema",
    "fetch_templates",
    "is_literal",
    "literal_fields",
    "placed",
    "require_fields",
    "resolve_field",
    "resolve_fields",
    "resolve_settings",
    "resolve_variables",
]

#: The deployment used when none is given.
DEPLOYMENT_ENV = "PROFILES_DEPLOYMENT"

#: The rollout key used when none is given (e.g. set per worker, or per request by a server).
ROLLOUT_KEY_ENV = "PROFILES_ROLLOUT_KEY"

#: How a template names a stored prompt it includes: `{% include "store:shared/safety" %}`.
STORE_PREFIX = "store:"

#: Most stored prompts one profile's templates may include, directly or through each other.
MAX_PARTS = 64

#: Extra template roots, separated like PATH; searched after a persona's own `template_roots`.
TEMPLATE_PATH_ENV = "PROFILES_TEMPLATE_PATH"


def choose_deployment(deployment: str | None) -> str | None:
    """The deployment in force: the argument, else `PROFILES_DEPLOYMENT`, else none; checked to be safe.

    Raises:
        ResolutionError: the name could lead a provider out of its folder (`../x`, a path).
    """
    if deployment is not None:
        return check_deployment(deployment)
    chosen = getenv(DEPLOYMENT_ENV) or None
    if chosen is not None:
        try:
            check_deployment(chosen)
        except ResolutionError as exc:  # nobody passed it: say where it came from
            raise ResolutionError(f"{DEPLOYMENT_ENV}: {exc.message}; or unset {DEPLOYMENT_ENV}") from None
    return chosen


def choose_rollout_key(rollout_key: str | None) -> str | None:
    """The rollout key in force: the argument, else `PROFILES_ROLLOUT_KEY`, else none."""
    if rollout_key is not None:
        return str(rollout_key)
    return getenv(ROLLOUT_KEY_ENV) or None


def env_template_roots() -> tuple[Path, ...]:
    """The folders named by `PROFILES_TEMPLATE_PATH`; read here so a profile never reads the environment.

    Raises:
        ConfigError: an entry is not a folder.
    """
    value = getenv(TEMPLATE_PATH_ENV)
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
            and not any(isinstance(value, ConfigInfo) for value in config.variables.values())
            and not any(_uses_store(item) for item in config.templates.values())
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
        resolved[field] = Resolved(_override(field, value), "override")
    # language and model come first (`literal_fields` orders them so): every other field is resolved for them
    for field in dynamic:
        if field in overrides or (field == "language" and context.language) or (field == "model" and context.model):
            continue
        if field not in ("language", "model"):
            chosen = (resolved["language"].value, resolved["model"].value)
            if (context.language, context.model) != chosen:
                context = replace(context, language=chosen[0], model=chosen[1])
        resolved[field] = resolve_field(config, field, getattr(config, field), context)
    return {field: resolved[field] for field in PROFILE_FIELDS}


def resolve_field(config: PersonaModel, field: str, info: ConfigInfo, context: Context) -> Resolved:
    """One dynamic field's value for `context`, a list as a tuple, checked to have the field's shape.

    Raises:
        ResolutionError: the provider failed, refused the key or answered no text; the message
            starts with the file and line the field was written on, and the field.
    """
    try:
        item = info.resolve(context)
        value = item.value
        if type(value) is not str and value is not None:
            if isinstance(value, list):
                item = replace(item, value=tuple(value))
            check_answer(field, info, item)
            if isinstance(item.value, tuple) and not all(part.isascii() for part in item.value):
                _refuse_surrogate(info, item.value)
        elif value and not value.isascii():
            _refuse_surrogate(info, value)
        if field == "language" and value and type(value) is str:
            problem = language_problem(value)
            if problem is not None:
                said = "a value that is not a language" if item.secret else problem
                raise ResolutionError(f"provider {info.provider_name!r} answered for {info.key!r}: {said}")
        return item
    except ResolutionError as exc:
        where = (context.deployment and config.line_of("deployments", context.deployment, field)) or config.line_of(
            field
        )
        raise placed(exc, f"field {field!r}", where) from exc


def placed(exc: ResolutionError, what: str, where: tuple[str, int] | None) -> ResolutionError:
    """`exc` said again after the place and the name of what failed (`a.yaml:1: field 'name': …`).

    A message that names the place already (a required field, which says so itself) is kept as it is.
    """
    place = f"{where[0]}:{where[1]}: " if where else ""
    if exc.message.startswith(f"{place}{what}") or (place and exc.message.startswith(place)):
        return exc
    return type(exc)(f"{place}{what}: {exc.message}")


def _refuse_surrogate(info: ConfigInfo, value: str | tuple[str, ...]) -> None:
    """Refuse an answer holding half of a UTF-16 pair (text decoded with `surrogateescape`, say):
    the prompt would print, but no request holding it can be sent as UTF-8.

    Raises:
        ResolutionError: naming the key, the provider and the surrogate (never the value).
    """
    found = lone_surrogate(list(value) if isinstance(value, tuple) else value)
    if found is not None:
        raise ResolutionError(
            f"provider {info.provider_name!r} answered {info.key!r} with text holding {found[1]}, {SURROGATE_PROBLEM}"
        )


def check_answer(field: str, info: ConfigInfo, item: Resolved) -> None:
    """Refuse a provider's answer that is no text (or, for a list field, no list of texts).

    A provider registered in Python may answer anything; a number or a mapping would otherwise
    be printed into the prompt as Python writes it, and bytes as a list of numbers.

    Raises:
        ResolutionError: naming the key, the provider and what it gave (never its value).
    """
    value = item.value
    if field in LIST_FIELDS:
        wrong = next((part for part in value if not isinstance(part, str)), None) if isinstance(value, tuple) else value
        if wrong is None:
            return
        expected = "text or a list of texts"
    elif isinstance(value, str):
        return
    else:
        wrong, expected = value, "text"
    raise ResolutionError(
        f"provider {info.provider_name!r} answered {info.key!r} with {type_name(wrong)}, not "
        f"{expected}; make the provider answer {'a str' if expected == 'text' else 'a str or a list of str'}"
    )


def resolve_variables(config: PersonaModel, context: Context | None = None) -> dict[str, Resolved]:
    """Each `variables:` entry's value and source for `context`, dynamic entries resolved like fields.

    Literal entries keep the line they were written on (`yaml:a.yaml:15`, `overlay prod: a.yaml:9`);
    a dynamic one names its provider's source (`env:COMPANY_NAME`) or `default`. The context's
    language and model should be the resolved ones, as for fields.

    Raises:
        ResolutionError: a provider failed or is unknown.
    """
    if not config.variables:
        return {}
    literal, dynamic = _literal_variables(config)
    if not dynamic:
        return dict(literal)
    context = context or Context()
    resolved = {}
    for name, value in config.variables.items():
        if name in literal:
            resolved[name] = literal[name]
            continue
        where = (context.deployment and config.line_of("deployments", context.deployment, "variables")) or (
            config.line_of("variables", name) or config.line_of("variables")
        )
        try:
            item = value.resolve(context)
        except ResolutionError as exc:
            raise placed(exc, f"variable {name!r}", where) from exc
        if isinstance(item.value, list):
            item = Resolved(tuple(item.value), item.source, item.secret)
        spec = config.inputs.get(name)
        if spec is not None and isinstance(item.value, str):
            # a provider answers text; a declared input says what it stands for, as for `--var`
            try:
                item = Resolved(spec.from_text(item.value), item.source, item.secret)
            except InputSpecError as exc:
                reason = redact(exc.reason, [item.value]) if item.secret else exc.reason
                place = f"{where[0]}:{where[1]}: " if where else ""
                raise ResolutionError(
                    f"{place}variable {name!r} from {item.source}: {reason}; fix the value there, or the entry's "
                    "default"
                ) from None
        resolved[name] = item
    return resolved


def _literal_variables(config: PersonaModel) -> tuple[Mapping[str, Resolved], tuple[str, ...]]:
    """The literal variables with their sources, and the names of the dynamic ones; worked out once."""
    memo = config.__pydantic_private__["_memo"]
    split = memo.get("variables")
    if split is None:
        private = config.__pydantic_private__ or {}
        overlays = private.get("_overlay_sources") or {}
        source_file = private.get("_source_file")
        fallback = private.get("_origin") or (f"yaml:{source_file}" if source_file else "literal")
        literal: dict[str, Resolved] = {}
        dynamic: list[str] = []
        for name, value in config.variables.items():
            if isinstance(value, ConfigInfo):
                dynamic.append(name)
                continue
            source = overlays.get(f"variables.{name}")
            if source is None:
                where = config.line_of("variables", name) or config.line_of("variables")
                source = f"yaml:{where[0]}:{where[1]}" if where else fallback
            literal[name] = Resolved(value, source)
        split = memo["variables"] = (MappingProxyType(literal), tuple(dynamic))
    return split  # type: ignore[no-any-return]


def require_fields(
    config: PersonaModel, resolved: Mapping[str, Resolved], *, lines: PersonaModel | None = None
) -> None:
    """Refuse a profile whose name or role resolved to nothing.

    A dynamic `name: {key: AGENT_NAME}` with no default and the key unset would otherwise render
    as "You are None.". A persona with a factory may leave them out, but when its factory declines
    (answers None) the profile is made from the fields, which then need them. `lines` is the
    persona as written, to say where the field is.

    Raises:
        ResolutionError: naming the field, its key and provider, and how to give it a value.
    """
    for field in REQUIRED_FIELDS:
        if resolved[field].value not in (None, "", ()):
            continue
        info = getattr(config, field)
        where = (lines or config).line_of(field)
        place = f"{where[0]}:{where[1]}: " if where else ""
        if isinstance(info, ConfigInfo) and info.key:
            provider = info.provider_name
            source = resolved[field].source
            if source.startswith("default ("):
                # a provider that could not answer (a store that is down) said why: no advice to add the key
                raise ResolutionError(
                    f"{place}field {field!r} is required, but provider {provider!r} could not answer for "
                    f"{info.key!r} ({source[len('default (') : -1]}) and the field has no default to serve "
                    "meanwhile; give it one, or make the provider reachable"
                )
            raise ResolutionError(
                f"{place}field {field!r} is required, but provider {provider!r} has no value for {info.key!r} and "
                f"the field has no default; {_how_to_set(provider, info.key)}, or give the field a default"
            )
        if config.factory is not None:
            raise ResolutionError(
                f"{place}field {field!r} is required when the factory declines (answers None), and the persona "
                f"has none; give the field a value, or have factory {type(config.factory).__name__} answer a profile"
            )
        raise ResolutionError(f"{place}field {field!r} is required but resolved to nothing; give it a value")


def _how_to_set(provider: str, key: str) -> str:
    if provider == "env":
        return f"set the environment variable {key} (or a line {key}=… in .env or .env.<deployment>)"
    if provider in ("store", "prompt_manager"):
        return f"add it to the prompt store with `profiles store put {key}`"
    return f"make provider {provider!r} answer {key!r}"


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


def _uses_store(item: TemplateSource) -> bool:
    # a substring test: a false alarm only costs a parse at `create_profile`
    return bool(item.store_key) or STORE_PREFIX in item.source


def fetch_templates(
    config: PersonaModel, context: Context, *, lines: PersonaModel
) -> tuple[dict[str, TemplateSource], dict[str, TemplateSource]] | None:
    """The persona's templates with each `{store: key}` replaced by the text the store holds now,
    and the stored prompts they include (`"store:name"` → its text and source).

    None when no template uses the store. `lines` is the persona as written (overlays keep no
    lines), to say where a failing template was named. Included prompts are fetched for the same
    context (language, model, the deployment's label chain, rollout key and pins) as the template
    that includes them; prompts that include each other in a cycle are an error naming the chain.
    The texts are compiled by the renderer, whose cache is keyed by source text, so a new version
    compiles once and an unchanged one never.

    Raises:
        ResolutionError: the store has no such prompt, is unreachable and has given none yet, or
            stored prompts include each other in a cycle.
    """
    if not any(_uses_store(item) for item in config.templates.values()):
        return None
    provider = get_provider("store")
    fetched = dict(config.templates)
    for kind, item in config.templates.items():
        if not item.store_key:
            continue
        where = lines.line_of("templates", kind) or lines.line_of("templates")
        place = f"{where[0]}:{where[1]}: " if where else ""
        found = _fetch(provider, item.store_key, context, f"{place}template {kind!r}", f"{kind}.j2")
        fetched[kind] = TemplateSource(found.value, found.source, store_key=item.store_key, details=found.details)
    return fetched, _fetch_parts(provider, fetched, context, lines)


def _fetch(provider: Any, key: str, context: Context, what: str, file_hint: str) -> Resolved:
    """One stored text for a template, or an error that says why there is none and what to do."""
    try:
        found = provider.find(key, context)
    except ResolutionError as exc:
        raise ResolutionError(f"{what}: {exc}") from exc
    except Exception as exc:  # a user's provider failed: say which, keep the cause
        raise ResolutionError(
            f"{what}: the store provider failed to look up {key!r}: "
            f"{type(exc).__name__}; check that provider's configuration"
        ) from exc
    if found is not None and isinstance(found.value, str) and found.value:
        return found
    asked = (
        f"language={context.language or '-'}, model={context.model or '-'}, deployment={context.deployment or '-'}"
    )
    if found is not None and found.stale:
        raise ResolutionError(
            f"{what}: the prompt store is unreachable, so {key!r} ({asked}) could not be fetched and no earlier "
            f"answer is at hand: {found.reason or found.source}"
        )
    why = f" ({found.source})" if found is not None else ""
    pinned = context.store_versions.get(key)
    if pinned is not None:
        raise ResolutionError(
            f"{what}: the prompt store has no version {pinned} of {key!r} for {asked}{why}; "
            f"pin a version `profiles store history {key}` lists"
        )
    raise ResolutionError(
        f"{what}: the prompt store has no prompt {key!r} for {asked}{why}; add it with "
        f"`profiles store put {key} --file {file_hint} --label production`"
    )


def _fetch_parts(
    provider: Any, templates: Mapping[str, TemplateSource], context: Context, lines: PersonaModel
) -> dict[str, TemplateSource]:
    """Every stored prompt the templates include, directly or through each other, fetched once each."""
    parts: dict[str, TemplateSource] = {}
    done: set[str] = set()

    def visit(source: str, chain: tuple[str, ...]) -> None:
        for name in referenced_templates(source):
            if not name.startswith(STORE_PREFIX):
                continue
            if name in chain:
                loop = " → ".join((*chain[chain.index(name) :], name))
                raise ResolutionError(
                    f"{chain[0]}: stored prompts include each other in a cycle: {loop}; remove one of these includes"
                )
            if name in done:
                continue
            if name not in parts:
                if len(parts) >= MAX_PARTS:
                    raise ResolutionError(
                        f"{chain[0]} includes over {MAX_PARTS} stored prompts; include fewer, larger ones"
                    )
                key = name[len(STORE_PREFIX) :]
                found = _fetch(provider, key, context, f"{chain[-1]} includes {name}", f"{key.rsplit('/', 1)[-1]}.j2")
                parts[name] = TemplateSource(found.value, found.source, store_key=key, details=found.details)
            visit(parts[name].source, (*chain, name))
            done.add(name)

    for kind, item in templates.items():
        if STORE_PREFIX in item.source:
            where = lines.line_of("templates", kind) or lines.line_of("templates")
            place = f"{where[0]}:{where[1]}: " if where else ""
            own = (f"{STORE_PREFIX}{item.store_key}",) if item.store_key else ()
            visit(item.source, (f"{place}template {kind!r}", *own))
    return parts


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
        where = (
            context.deployment and config.line_of("deployments", context.deployment, "model_settings", name)
        ) or config.line_of("model_settings", name)
        try:
            item = value.resolve(context)
        except ResolutionError as exc:
            raise placed(exc, key, where) from exc
        if item.value is None:
            resolved[name] = item
            continue
        try:
            typed = setting_from_text(name, item.value)
        except SettingError as exc:
            reason = redact(exc.reason, [item.value]) if item.secret else exc.reason
            place = f"{where[0]}:{where[1]}: " if where else ""
            raise ResolutionError(
                f"{place}{key} from {item.source}: {reason}; fix the value there, or the field's default"
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


def _override(field: str, value: Any) -> Any:
    """An override's value, held to its field's shape: a text, or a list of texts (kept as a tuple).

    Raises:
        ConfigError: the value has another shape (a text given for a list would render letter by letter).
    """
    if value is None:
        return None
    found = lone_surrogate(list(value) if isinstance(value, tuple) else value)
    if found is not None:
        raise ConfigError(f"override {field!r} holds {found[1]}, {SURROGATE_PROBLEM}")
    if field in LIST_FIELDS:
        if isinstance(value, (list, tuple)):
            wrong = next((index for index, item in enumerate(value) if not isinstance(item, str)), None)
            if wrong is None:
                return tuple(value)
            raise ConfigError(
                f"override {field!r}: item {wrong} is {type(value[wrong]).__name__}, not text; "
                "pass every item as a string"
            )
        got = "one text" if isinstance(value, str) else type(value).__name__
        raise ConfigError(f"override {field!r}: expected a list of texts, got {got}; pass it as a list, e.g. ['…']")
    if not isinstance(value, str):
        raise ConfigError(f"override {field!r}: expected text, got {type(value).__name__}; pass it as a string")
    return value
