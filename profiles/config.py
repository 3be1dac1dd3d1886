"""`ProfileConfig`: a persona as validated data, and `create_profile` to turn it into a `Profile`.

A config never renders and a profile never reads the environment: `create_profile` is the one
place where dynamic fields are resolved, for one context, with no cache between calls, so a
changed environment variable shows at the next call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
)
from pydantic_core import PydanticCustomError

from .context import Context, Resolved
from .dynconfig import DYNAMIC_KEYS, ConfigInfo, DynConfig
from .errors import ConfigError, ConfigIssue, ProfilesError, ResolutionError
from .secrets import redact

if TYPE_CHECKING:
    from .profile import Profile

__all__ = [
    "LIST_FIELDS",
    "PROFILE_FIELDS",
    "TEXT_FIELDS",
    "DeploymentOverlay",
    "ProfileConfig",
    "TemplateSource",
]

#: Fields holding one text each.
TEXT_FIELDS = (
    "name",
    "role",
    "goal",
    "desc",
    "expand_prompt",
    "examples",
    "retry_goal",
    "language",
    "model",
    "avatar",
)
#: Fields holding a list of texts.
LIST_FIELDS = ("constraints", "retry_constraints")
#: Every field a profile resolves, in the order `explain` lists them.
PROFILE_FIELDS = (
    "name",
    "role",
    "goal",
    "retry_goal",
    "desc",
    "constraints",
    "retry_constraints",
    "expand_prompt",
    "examples",
    "language",
    "model",
    "avatar",
)
#: Fields a persona needs unless a factory supplies them.
REQUIRED_FIELDS = ("name", "role")


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__


def _dynamic(value: Mapping[str, Any], *, list_field: bool) -> ConfigInfo:
    unknown = sorted(str(key) for key in value if key not in DYNAMIC_KEYS)
    if unknown:
        raise PydanticCustomError(
            "dynamic_keys",
            "unknown key(s) {keys} in a dynamic field; allowed keys are {allowed}",
            {"keys": ", ".join(unknown), "allowed": ", ".join(DYNAMIC_KEYS)},
        )
    options = dict(value)
    if list_field:
        options.setdefault("is_list", True)
    try:
        return DynConfig(**options)
    except ProfilesError as exc:
        raise PydanticCustomError("dynamic_field", "{reason}", {"reason": exc.message}) from None


def _text(value: Any) -> Any:
    if value is None or isinstance(value, (str, ConfigInfo)):
        return value
    if isinstance(value, Mapping):
        return _dynamic(value, list_field=False)
    hint = "; join the items into one text" if isinstance(value, (list, tuple)) else "; quote it"
    raise PydanticCustomError("text_type", "expected text, got {kind}{hint}", {"kind": _type_name(value), "hint": hint})


def _text_list(value: Any) -> Any:
    if value is None or isinstance(value, ConfigInfo):
        return value
    if isinstance(value, Mapping):
        return _dynamic(value, list_field=True)
    if isinstance(value, str):
        raise PydanticCustomError(
            "list_type", "expected a list of texts, got one text; write it as a YAML list (- item)"
        )
    if not isinstance(value, (list, tuple)):
        raise PydanticCustomError("list_type", "expected a list of texts, got {kind}", {"kind": _type_name(value)})
    bad = [index for index, item in enumerate(value) if not isinstance(item, str)]
    if bad:
        raise PydanticCustomError(
            "list_item_type",
            "is {kind}, expected text; quote it",
            {"index": bad[0], "kind": _type_name(value[bad[0]])},
        )
    return tuple(value)


Text = Annotated[str | ConfigInfo | None, BeforeValidator(_text)]
TextList = Annotated[tuple[str, ...] | ConfigInfo | None, BeforeValidator(_text_list)]


@dataclass(frozen=True)
class TemplateSource:
    """A persona's own template for one prompt kind: its text and where it came from.

    A template named `{store: key}` has no text yet (`store_key` is set): it is fetched from the
    `store` provider at every `create_profile`, for that profile's language, model and deployment.
    """

    source: str
    origin: str
    store_key: str | None = None


def _fail(code: str, message: str) -> PydanticCustomError:
    """A validation error whose message is final text, not a template to fill in."""
    return PydanticCustomError(code, message)


def _confined(base_dir: Path, relative: str) -> Path:
    """Resolve a persona-relative path, refusing anything that leads outside `base_dir`."""
    pure = PurePosixPath(relative.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or (relative[1:3] == ":\\"):
        raise _fail(
            "template_path", f"template path {relative!r} must be relative to the persona's folder, without '..'"
        )
    root = base_dir.resolve()
    target = (root / pure).resolve()
    if target != root and root not in target.parents:
        raise _fail("template_path", f"template path {relative!r} leads outside the persona's folder")
    return target


def _tool_list(value: Any) -> Any:
    from .tools import ToolSpecError, parse_tools

    try:
        return parse_tools(value)
    except ToolSpecError as exc:
        if exc.index is None:
            raise PydanticCustomError("tools_type", "{reason}", {"reason": exc.reason}) from None
        # list_item_type carries the index, so the issue points at the tool's own line
        reason = f"tool {exc.name!r}: {exc.reason}" if exc.name else exc.reason
        context = {"index": exc.index, "reason": reason}
        raise PydanticCustomError("list_item_type", "{reason}", context) from None


def _template_roots(value: Any) -> Any:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise PydanticCustomError(
            "template_roots_type", "expected a list of folders relative to the persona, e.g. [templates]"
        )
    base_dir = _BASE_DIR.get() or Path.cwd()
    roots = []
    for index, item in enumerate(value):
        if isinstance(item, Path) and item.is_absolute() and item.is_dir():
            roots.append(item)  # already resolved, e.g. a config copied with model_copy
            continue
        if not isinstance(item, str) or not item.strip():
            raise PydanticCustomError(
                "list_item_type",
                "is {kind}, expected a folder path",
                {"index": index, "kind": _type_name(item)},
            )
        root = _confined(Path(base_dir), item)
        if not root.is_dir():
            raise PydanticCustomError(
                "list_item_type",
                "template root '{path}' is not a folder next to the persona; create it or fix the path",
                {"index": index, "path": item},
            )
        roots.append(root)
    return tuple(roots)


#: How a persona names its own template for a kind: a file next to it, inline text, or a store prompt.
TEMPLATE_SPECS = ("file", "inline", "store")

#: The folder a persona's template files are read from while it is being validated.
_BASE_DIR: ContextVar[Path | None] = ContextVar("profiles_base_dir", default=None)
#: Set while validating a parent persona, which need not have a name and role of its own.
_PARTIAL: ContextVar[bool] = ContextVar("profiles_partial", default=False)

#: Longest template file read from disk, in bytes.
MAX_TEMPLATE_BYTES = 1_000_000


def _read_template(base_dir: Path, relative: str) -> TemplateSource:
    path = _confined(base_dir, relative)
    try:
        if path.stat().st_size > MAX_TEMPLATE_BYTES:
            raise _fail("template_size", f"template file {relative!r} is over {MAX_TEMPLATE_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _fail("template_missing", f"template file {relative!r} not found next to the persona") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(
            "template_unreadable", f"template file {relative!r} cannot be read ({type(exc).__name__})"
        ) from None
    return TemplateSource(text, f"file:{relative}")


class _PersonaFields(BaseModel):
    """The fields a persona and each of its deployment overlays may set, with their validation."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, frozen=True)

    name: Text = None
    role: Text = None
    goal: Text = None
    desc: Text = None
    constraints: TextList = None
    expand_prompt: Text = None
    examples: Text = None
    retry_goal: Text = None
    retry_constraints: TextList = None
    language: Text = None
    model: Text = None
    avatar: Text = None
    templates: dict[str, TemplateSource] = Field(default_factory=dict)
    variables: dict[str, Any] = Field(default_factory=dict)
    #: Sample values `profiles check` renders with: variable → value, or prompt kind → {variable: value}.
    samples: dict[str, Any] = Field(default_factory=dict)
    tools: Annotated[tuple[Any, ...], BeforeValidator(_tool_list)] = ()
    requires_resources: bool = False
    template_roots: Annotated[tuple[Path, ...], BeforeValidator(_template_roots)] = ()
    allow_secrets: tuple[str, ...] = ()

    @field_validator("templates", mode="before")
    @classmethod
    def _read_templates(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise PydanticCustomError(
                "templates_type",
                "expected a mapping of prompt kind to {file: path}, {inline: text} or {store: prompt name}",
            )
        base_dir = _BASE_DIR.get() or Path.cwd()
        result: dict[str, TemplateSource] = {}
        for kind, spec in value.items():
            if isinstance(spec, TemplateSource):
                result[str(kind)] = spec
                continue
            if not isinstance(spec, Mapping) or len(spec) != 1 or next(iter(spec)) not in TEMPLATE_SPECS:
                raise _fail(
                    "template_spec",
                    f"template for {str(kind)!r} must have one key: file (a path), inline (text) "
                    "or store (a prompt name)",
                )
            ((how, text),) = spec.items()
            if not isinstance(text, str):
                raise _fail("template_spec", f"template {how} for {str(kind)!r} must be text")
            if how == "file":
                result[str(kind)] = _read_template(Path(base_dir), text)
            elif how == "store":
                if not text.strip():
                    raise _fail("template_spec", f"template store for {str(kind)!r} must name a prompt")
                result[str(kind)] = TemplateSource("", f"store:{text.strip()}", store_key=text.strip())
            else:
                result[str(kind)] = TemplateSource(text, "inline")
        return result

    @field_validator("variables", mode="before")
    @classmethod
    def _check_variables(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
            raise PydanticCustomError("variables_type", "expected a mapping of variable name to value")
        return value

    @field_validator("samples", mode="before")
    @classmethod
    def _check_samples(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
            raise PydanticCustomError(
                "samples_type", "expected a mapping of variable name to sample value, or prompt kind to such a mapping"
            )
        for key, item in value.items():
            if isinstance(item, Mapping) and not all(isinstance(name, str) for name in item):
                raise PydanticCustomError("samples_type", "samples for {kind} must map variable names to values",
                                          {"kind": key})
        return value

    @field_validator("allow_secrets", mode="before")
    @classmethod
    def _check_allow_secrets(cls, value: Any) -> Any:
        if value is None:
            return ()
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise PydanticCustomError(
                "allow_secrets_type",
                "expected a list of field names, e.g. [name]; got {kind}",
                {"kind": _type_name(value)},
            )
        unknown = [str(item) for item in value if item not in PROFILE_FIELDS]
        if unknown:
            raise PydanticCustomError(
                "allow_secrets_field",
                "unknown field(s) {names}; list fields of this persona, which are {known}",
                {"names": ", ".join(unknown), "known": ", ".join(PROFILE_FIELDS)},
            )
        return tuple(value)


class DeploymentOverlay(_PersonaFields):
    """What one deployment changes: any persona field; `templates` and `variables` merge per key."""

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            if value not in (None, {}, ()):
                yield name, value


def _deployment_name(name: str) -> str:
    from .providers.env import DEPLOYMENT_PATTERN

    if not DEPLOYMENT_PATTERN.fullmatch(name) or ".." in name:
        raise _fail(
            "deployment_name",
            f"deployment name {name!r} is not allowed; use letters, digits, '-', '_' and '.', e.g. prod",
        )
    return name


DeploymentName = Annotated[str, AfterValidator(_deployment_name)]


class ProfileConfig(_PersonaFields):
    """A persona: literal values or `DynConfig` fields, validated at construction.

    Unknown fields are refused. Without a factory, `name` and `role` are required. Text fields take
    a string or a `ConfigInfo`; `constraints` and `retry_constraints` a list of strings or a
    `ConfigInfo`. `templates` maps a prompt kind to `{file: path}` or `{inline: text}`;
    `variables` holds defaults for template variables. `tools` lists the tools the `react` prompt
    offers; `requires_resources` refuses a system prompt rendered without resources;
    `template_roots` names folders (relative to the persona, inside its folder) searched for
    `<family>/<locale>/<kind>.j2` templates before the bundled ones. `deployments` maps a
    deployment name to the fields it overrides, and `allow_secrets` names the secret fields that
    may reach a prompt.
    """

    deployments: dict[DeploymentName, DeploymentOverlay] = Field(default_factory=dict)
    factory: Any = None

    _base_dir: Path | None = PrivateAttr(default=None)
    _source_file: str | None = PrivateAttr(default=None)
    #: The source provenance gives literal fields not written in a file, e.g. `llm:<model> request …`.
    _origin: str | None = PrivateAttr(default=None)
    #: Where each field was written: field path -> (file, line), e.g. ("deployments", "prod", "name").
    _lines: Mapping[tuple[str, ...], tuple[str, int]] = PrivateAttr(default_factory=dict)
    #: Configs with a deployment's overlay applied, made once per deployment.
    _overlaid: dict[str, ProfileConfig] = PrivateAttr(default_factory=dict)
    #: Each literal field's source, set on a config made by `for_deployment`.
    _overlay_sources: Mapping[str, str] = PrivateAttr(default_factory=dict)
    # worked out on first use: the literal fields and the names of the dynamic ones
    _split: tuple[Mapping[str, Resolved], tuple[str, ...]] | None = PrivateAttr(default=None)
    _literal: bool | None = PrivateAttr(default=None)
    # profiles of a persona without dynamic fields, by (language, model, template roots)
    _built: dict[Any, Any] = PrivateAttr(default_factory=dict)

    def __init__(self, **data: Any) -> None:
        # a missing name or role is reported with every other problem, not after them
        missing = ()
        if data.get("factory") is None and not _PARTIAL.get():
            missing = tuple(field for field in REQUIRED_FIELDS if data.get(field) in (None, ""))
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise config_error_from(exc, missing=missing) from None
        if missing:
            raise ConfigError([_missing_issue(field) for field in missing])

    @classmethod
    def from_data(
        cls,
        data: Mapping[str, Any],
        *,
        base_dir: Path | None = None,
        source_file: str | None = None,
        lines: Mapping[tuple[str, ...], tuple[str, int]] | None = None,
        partial: bool = False,
        origin: str | None = None,
    ) -> ProfileConfig:
        """Validate parsed data whose template files live in `base_dir`.

        `lines` maps field paths to where they were written, for provenance. `partial` skips the
        name-and-role check, for a parent persona that only some children complete. `origin` is
        the source provenance gives literal fields that came from elsewhere than a file, e.g.
        `llm:<model> request <id> prompt <hash>`; by default it is `yaml:<source_file>` or `literal`.

        Raises:
            ConfigError: every problem, each issue carrying its field path (`loc`) for a loader.
        """
        token = _BASE_DIR.set(base_dir)
        partial_token = _PARTIAL.set(partial)
        try:
            config = cls(**{key: value for key, value in data.items() if isinstance(key, str)})
        finally:
            _PARTIAL.reset(partial_token)
            _BASE_DIR.reset(token)
        # one update: pydantic's per-attribute path for private attributes is slow on this hot path
        config.__pydantic_private__.update(
            _base_dir=base_dir, _source_file=source_file, _lines=dict(lines or {}), _origin=origin
        )
        return config

    @field_validator("deployments", mode="before")
    @classmethod
    def _check_deployments(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise PydanticCustomError(
                "deployments_type",
                "expected a mapping of deployment name to the fields it changes, e.g. {prod: {name: Plato}}",
            )
        # an empty entry (`prod:`) names a deployment that keeps the base persona
        return {name: ({} if overlay is None else overlay) for name, overlay in value.items()}

    @field_validator("factory")
    @classmethod
    def _check_factory(cls, value: Any) -> Any:
        if value is None or callable(value) or callable(getattr(value, "create_profile", None)):
            return value
        raise PydanticCustomError(
            "factory_type", "expected a ProfileFactory or a callable, got {kind}", {"kind": type(value).__name__}
        )

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> ProfileConfig:
        """A copy with `update` applied; what was worked out for this config is not carried over."""
        made = super().model_copy(update=update, deep=deep)
        private = made.__pydantic_private__
        private.update(_split=None, _literal=None, _built={}, _overlaid={})
        return made

    @property
    def source_file(self) -> str | None:
        """The persona file this config was loaded from, if any."""
        return self._source_file

    def line_of(self, *path: str) -> tuple[str, int] | None:
        """The file and line a field was written on, e.g. `line_of("deployments", "prod", "name")`."""
        return self._lines.get(tuple(path))

    def for_deployment(self, deployment: str | None) -> ProfileConfig:
        """This persona with `deployment`'s overlay applied; itself when there is none.

        An overlay's fields replace the persona's; its `templates` and `variables` merge per key,
        the overlay winning. A deployment the persona's `deployments:` does not list uses the base
        persona and warns once per (file, deployment). A persona without `deployments:` never warns.
        """
        if not deployment or not self.deployments:
            return self
        from .deployments import apply_overlay, warn_unknown_deployment

        made = self._overlaid.get(deployment)
        if made is not None:
            return made
        overlay = self.deployments.get(deployment)
        if overlay is None:
            warn_unknown_deployment(self._source_file or "<persona>", deployment, sorted(self.deployments))
            made = self
        else:
            made = apply_overlay(self, deployment, overlay)
        self._overlaid[deployment] = made
        return made

    def create_profile(
        self,
        profile_id: Any = None,
        *,
        language: str | None = None,
        model: str | None = None,
        deployment: str | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> Profile:
        """Resolve every field for this context and return an immutable profile.

        Precedence, first wins: `overrides` > the field's provider > the field's default. The
        deployment is the argument, else `PROFILES_DEPLOYMENT`, else none; it picks the persona's
        overlay under `deployments:` and the `.env.<deployment>` file the `env` provider reads. A
        factory, when set, is called with keyword arguments and its non-None result wins over the
        fields.

        Raises:
            ResolutionError: a provider failed or is unknown, or the deployment name is unsafe.
            ConfigError: an override names an unknown field.
            RenderError: a field's template syntax does not parse.
        """
        deployment = deployment if deployment is not None else os.environ.get("PROFILES_DEPLOYMENT") or None
        if deployment is not None:
            from .providers.env import check_deployment

            check_deployment(deployment)
        config = self.for_deployment(deployment)
        roots = (*config.template_roots, *_env_template_roots())
        if not overrides and config._is_literal():
            return config._literal_profile(profile_id, language, model, deployment, roots)
        from .profile import build_profile

        context = Context(
            language=language,
            model=model,
            deployment=deployment,
            base_dir=self._base_dir,
            overrides=dict(overrides or {}),
        )
        resolved = config.resolve(context)
        if config.factory is not None:
            made = config._call_factory(profile_id, resolved, context)
            if made is not None:
                return made
        templates = config._fetch_templates(
            _with(context, language=resolved["language"].value, model=resolved["model"].value), lines=self
        )
        return build_profile(config, profile_id, resolved, template_roots=roots, templates=templates)

    def _fetch_templates(self, context: Context, *, lines: ProfileConfig) -> dict[str, TemplateSource] | None:
        """The persona's templates with each `{store: key}` replaced by the text the store holds now.

        None when no template comes from the store. The text is compiled by the renderer, whose
        cache is keyed by source text, so a new version compiles once and an unchanged one never.

        Raises:
            ResolutionError: the store has no such prompt, or cannot be read and has given none yet.
        """
        if not any(item.store_key for item in self.templates.values()):
            return None
        from .providers import get_provider

        provider = get_provider("store")
        fetched = dict(self.templates)
        for kind, item in self.templates.items():
            if not item.store_key:
                continue
            where = lines.line_of("templates", kind) or lines.line_of("templates")  # overlays keep no lines
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

    def _is_literal(self) -> bool:
        """Whether every creation resolves the same: no dynamic field, factory or template from the store."""
        private = self.__pydantic_private__
        literal = private.get("_literal")
        if literal is None:
            literal = private["_literal"] = (
                self.factory is None
                and not self._fields()[1]
                and not any(item.store_key for item in self.templates.values())
            )
        return literal

    def _literal_profile(
        self, profile_id: Any, language: str | None, model: str | None, deployment: str | None, roots: tuple[Path, ...]
    ) -> Profile:
        """A persona without dynamic fields resolves the same way every time: build it once per context."""
        from dataclasses import replace

        private = self.__pydantic_private__
        built: dict[Any, Any] = private["_built"]
        key = (language, model, roots)
        profile = built.get(key)
        if profile is None:
            from .profile import build_profile

            if len(built) >= _MAX_BUILT:
                built.clear()
            context = Context(language=language, model=model, deployment=deployment, base_dir=private["_base_dir"])
            profile = built[key] = build_profile(self, None, self.resolve(context), template_roots=roots)
        return profile if profile_id is None else replace(profile, profile_id=profile_id)

    def resolve(self, context: Context | None = None) -> dict[str, Resolved]:
        """Each profile field's value and source for `context` (overlays are applied by `create_profile`)."""
        context = context or Context()
        overrides = context.overrides
        if overrides:
            unknown = sorted(set(overrides) - set(PROFILE_FIELDS))
            if unknown:
                raise ConfigError(
                    f"cannot override unknown field(s) {', '.join(unknown)}; fields are {', '.join(PROFILE_FIELDS)}"
                )
        literal, dynamic = self._fields()
        resolved = dict(literal)
        if context.language:
            resolved["language"] = Resolved(context.language, "argument")
        if context.model:
            resolved["model"] = Resolved(context.model, "argument")
        for field, value in overrides.items():
            resolved[field] = Resolved(_shape(field, value), "override")
        # language and model come first (`_fields` orders them so): every other field is resolved for them
        for field in dynamic:
            if field in overrides or (field == "language" and context.language) or (field == "model" and context.model):
                continue
            if field not in ("language", "model"):
                chosen = (resolved["language"].value, resolved["model"].value)
                if (context.language, context.model) != chosen:
                    context = _with(context, language=chosen[0], model=chosen[1])
            item = getattr(self, field).resolve(context)
            if isinstance(item.value, list):
                item = Resolved(tuple(item.value), item.source, item.secret)
            resolved[field] = item
        return {field: resolved[field] for field in PROFILE_FIELDS}

    def _fields(self) -> tuple[Mapping[str, Resolved], tuple[str, ...]]:
        """The literal fields with their sources, and the names of the dynamic ones; worked out once.

        A config never changes, so only the dynamic fields need work at each `create_profile`.
        """
        private = self.__pydantic_private__
        split = private.get("_split")
        if split is None:
            sources = self._literal_sources()
            literal: dict[str, Resolved] = {}
            dynamic = []
            for field in ("language", "model", *PROFILE_FIELDS):
                value = getattr(self, field)
                if isinstance(value, ConfigInfo):
                    if field not in dynamic:
                        dynamic.append(field)
                elif field not in literal:
                    literal[field] = Resolved(value, sources[field] if value is not None else "unset")
            split = private["_split"] = (MappingProxyType(literal), tuple(dynamic))
        return split

    def _literal_sources(self) -> dict[str, str]:
        """Where each literal field was written: `yaml:file:line`, `overlay prod: file:line`, or `literal`.

        Read once per `resolve`: private attributes of a pydantic model are slow to reach.
        """
        private = self.__pydantic_private__ or {}
        lines = private.get("_lines") or {}
        source_file = private.get("_source_file")
        fallback = private.get("_origin") or (f"yaml:{source_file}" if source_file else "literal")
        sources = {}
        for field in PROFILE_FIELDS:
            where = lines.get((field,))
            sources[field] = f"yaml:{where[0]}:{where[1]}" if where is not None else fallback
        sources.update(private.get("_overlay_sources") or {})
        return sources

    def _call_factory(self, profile_id: Any, resolved: Mapping[str, Resolved], context: Context) -> Profile | None:
        from .errors import FactoryError

        # a factory may send what it is given to a model: a secret goes only where the persona allows it
        options = {
            field: None
            if resolved[field].secret and field not in self.allow_secrets
            else resolved[field].value
            for field in ("name", "role", "goal", "language", "model")
        }
        create = getattr(self.factory, "create_profile", None) or self.factory
        try:
            return create(profile_id, **options)
        except ProfilesError:
            raise
        except Exception as exc:
            secrets = [item.value for item in resolved.values() if item.secret]
            raise FactoryError(
                redact(
                    f"factory {type(self.factory).__name__} failed for profile {profile_id!r}: "
                    f"{type(exc).__name__}: {exc}",
                    secrets,
                )
            ) from exc

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            if value not in (None, {}, ()):
                yield name, value


#: How many (language, model, roots) contexts a literal persona keeps a built profile for.
_MAX_BUILT = 32

#: Extra template roots, separated like PATH; searched after a persona's own `template_roots`.
TEMPLATE_PATH_ENV = "PROFILES_TEMPLATE_PATH"


def _env_template_roots() -> tuple[Path, ...]:
    """The folders named by `PROFILES_TEMPLATE_PATH`; read here so a profile never reads the environment."""
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


def _with(context: Context, **changes: Any) -> Context:
    from dataclasses import replace

    return replace(context, **changes)


def _shape(field: str, value: Any) -> Any:
    if field in LIST_FIELDS and isinstance(value, list):
        return tuple(value)
    return value



def _missing_issue(field: str) -> ConfigIssue:
    return ConfigIssue(
        "is required (or give the persona a factory that supplies it)", field, loc=(field,), code="identity_missing"
    )


def config_error_from(
    exc: ValidationError, locate: Any = None, file: str | None = None, *, missing: tuple[str, ...] = ()
) -> ConfigError:
    """Turn pydantic's errors into one `ConfigError` with every problem, in file order.

    `locate(loc)` may return `(line, column)` for a field path, to point into a persona file;
    `missing` names required fields absent from the data, reported with the rest.
    """
    issues = [_missing_issue(field) for field in missing]
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        if error["type"] == "list_item_type" and "index" in (error.get("ctx") or {}):
            loc = (*loc, error["ctx"]["index"])
        field = ".".join(str(part) for part in loc)
        if error["type"] == "extra_forbidden":
            message = _unknown_field_message(str(loc[-1]))
        elif error["type"] == "missing":
            message = "is required"
        else:
            message = error["msg"]
        line = column = None
        if locate is not None:
            line, column = locate(loc)
        issues.append(ConfigIssue(message, field, file, line, column, loc=loc, code=error["type"]))
    issues.sort(key=lambda issue: (issue.line or 0, issue.column or 0))
    return ConfigError(issues)


def _unknown_field_message(name: str) -> str:
    import difflib

    known = [*PROFILE_FIELDS, "templates", "variables", "samples", "factory"]
    known += ["tools", "requires_resources", "template_roots", "allow_secrets", "deployments", "extends"]
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"known fields are {', '.join(known)}"
    return f"unknown field; {hint}"
