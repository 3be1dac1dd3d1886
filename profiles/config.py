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
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from .context import Context, Resolved
from .dynconfig import DYNAMIC_KEYS, ConfigInfo, DynConfig
from .errors import ConfigError, ConfigIssue, ProfilesError

if TYPE_CHECKING:
    from .profile import Profile

__all__ = [
    "LIST_FIELDS",
    "PROFILE_FIELDS",
    "TEXT_FIELDS",
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
    """A persona's own template for one prompt kind: its text and where it came from."""

    source: str
    origin: str


def _fail(code: str, message: str) -> PydanticCustomError:
    """A validation error whose message is final text, not a template to fill in."""
    return PydanticCustomError(code, _escape(message))


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


#: The folder a persona's template files are read from while it is being validated.
_BASE_DIR: ContextVar[Path | None] = ContextVar("profiles_base_dir", default=None)

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


class ProfileConfig(BaseModel):
    """A persona: literal values or `DynConfig` fields, validated at construction.

    Unknown fields are refused. Without a factory, `name` and `role` are required. Text fields take
    a string or a `ConfigInfo`; `constraints` and `retry_constraints` a list of strings or a
    `ConfigInfo`. `templates` maps a prompt kind to `{file: path}` or `{inline: text}`;
    `variables` holds defaults for template variables.
    """

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
    factory: Any = None

    _base_dir: Path | None = PrivateAttr(default=None)
    _source_file: str | None = PrivateAttr(default=None)
    _origin: str | None = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise config_error_from(exc) from None

    @classmethod
    def from_data(
        cls,
        data: Mapping[str, Any],
        *,
        base_dir: Path | None = None,
        source_file: str | None = None,
        origin: str | None = None,
    ) -> ProfileConfig:
        """Validate parsed data whose template files live in `base_dir`.

        `origin` is the source a profile's provenance gives for the literal values, when they came
        from somewhere other than a file (`llm:<model> request <id> prompt <hash>`); by default it
        is `yaml:<source_file>`, or `literal`.

        Raises:
            ConfigError: every problem, each issue carrying its field path (`loc`) for a loader.
        """
        token = _BASE_DIR.set(base_dir)
        try:
            config = cls(**{key: value for key, value in data.items() if isinstance(key, str)})
        finally:
            _BASE_DIR.reset(token)
        config._base_dir = base_dir
        config._source_file = source_file
        config._origin = origin
        return config

    @model_validator(mode="wrap")
    @classmethod
    def _require_identity(cls, data: Any, handler: Any) -> Any:
        """Report a missing name or role together with every other problem, not after them."""
        missing = []
        if isinstance(data, Mapping) and data.get("factory") is None:
            missing = [field for field in REQUIRED_FIELDS if data.get(field) in (None, "")]
        errors: list[Any] = []
        try:
            result = handler(data)
        except ValidationError as exc:
            # rebuilt from each final message: custom error types cannot be re-raised by name
            errors = [
                {
                    "type": PydanticCustomError(error["type"], _escape(error["msg"]), _plain(error.get("ctx"))),
                    "loc": error["loc"],
                    "input": None,
                }
                for error in exc.errors(include_url=False)
            ]
        for field in missing:
            errors.append(
                {
                    "type": PydanticCustomError(
                        "identity_missing",
                        "is required (or give the persona a factory that supplies it)",
                    ),
                    "loc": (field,),
                    "input": None,
                }
            )
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        return result

    @field_validator("templates", mode="before")
    @classmethod
    def _read_templates(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise PydanticCustomError(
                "templates_type", "expected a mapping of prompt kind to {{file: path}} or {{inline: text}}"
            )
        base_dir = _BASE_DIR.get() or Path.cwd()
        result: dict[str, TemplateSource] = {}
        for kind, spec in value.items():
            if isinstance(spec, TemplateSource):
                result[str(kind)] = spec
                continue
            if not isinstance(spec, Mapping) or len(spec) != 1 or next(iter(spec)) not in ("file", "inline"):
                raise _fail("template_spec", f"template for {str(kind)!r} must be {{file: path}} or {{inline: text}}")
            ((how, text),) = spec.items()
            if not isinstance(text, str):
                raise _fail("template_spec", f"template {how} for {str(kind)!r} must be text")
            result[str(kind)] = (
                _read_template(Path(base_dir), text) if how == "file" else TemplateSource(text, "inline")
            )
        return result

    @field_validator("variables", mode="before")
    @classmethod
    def _check_variables(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
            raise PydanticCustomError("variables_type", "expected a mapping of variable name to value")
        return value

    @field_validator("factory")
    @classmethod
    def _check_factory(cls, value: Any) -> Any:
        if value is None or callable(value) or callable(getattr(value, "create_profile", None)):
            return value
        raise PydanticCustomError(
            "factory_type", "expected a ProfileFactory or a callable, got {kind}", {"kind": type(value).__name__}
        )

    @property
    def source_file(self) -> str | None:
        """The persona file this config was loaded from, if any."""
        return self._source_file

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
        deployment is the argument, else `PROFILES_DEPLOYMENT`, else none. A factory, when set, is
        called with keyword arguments and its non-None result wins over the fields.

        Raises:
            ResolutionError: a provider failed or is unknown.
            ConfigError: an override names an unknown field.
            RenderError: a field's template syntax does not parse.
        """
        from .profile import build_profile

        context = Context(
            language=language,
            model=model,
            deployment=deployment if deployment is not None else os.environ.get("PROFILES_DEPLOYMENT") or None,
            base_dir=self._base_dir,
            overrides=dict(overrides or {}),
        )
        resolved = self.resolve(context)
        if self.factory is not None:
            made = self._call_factory(profile_id, resolved, context)
            if made is not None:
                return made
        return build_profile(self, profile_id, resolved)

    def resolve(self, context: Context | None = None) -> dict[str, Resolved]:
        """Each profile field's value and source for `context`."""
        context = context or Context()
        unknown = sorted(set(context.overrides) - set(PROFILE_FIELDS))
        if unknown:
            raise ConfigError(
                f"cannot override unknown field(s) {', '.join(unknown)}; fields are {', '.join(PROFILE_FIELDS)}"
            )
        where = self._origin or (f"yaml:{self._source_file}" if self._source_file else "literal")
        # language and model come first: every other field is resolved for them
        order = ("language", "model", *(field for field in PROFILE_FIELDS if field not in ("language", "model")))
        resolved: dict[str, Resolved] = {}
        for field in order:
            if field in context.overrides:
                resolved[field] = Resolved(_shape(field, context.overrides[field]), "override")
            elif field == "language" and context.language:
                resolved[field] = Resolved(context.language, "argument")
            elif field == "model" and context.model:
                resolved[field] = Resolved(context.model, "argument")
            else:
                value = getattr(self, field)
                if isinstance(value, ConfigInfo):
                    resolved[field] = value.resolve(context)
                else:
                    resolved[field] = Resolved(value, where if value is not None else "unset")
            if field == "model":
                chosen = (resolved["language"].value, resolved["model"].value)
                if (context.language, context.model) != chosen:
                    context = _with(context, language=chosen[0], model=chosen[1])
        for field in LIST_FIELDS:
            item = resolved[field]
            if isinstance(item.value, list):
                resolved[field] = Resolved(tuple(item.value), item.source, item.secret)
        return resolved

    def _call_factory(self, profile_id: Any, resolved: Mapping[str, Resolved], context: Context) -> Profile | None:
        from .errors import FactoryError

        options = {
            "name": resolved["name"].value,
            "role": resolved["role"].value,
            "goal": resolved["goal"].value,
            "language": resolved["language"].value,
            "model": resolved["model"].value,
        }
        create = getattr(self.factory, "create_profile", None) or self.factory
        try:
            return create(profile_id, **options)
        except ProfilesError:
            raise
        except Exception as exc:
            raise FactoryError(
                f"factory {type(self.factory).__name__} failed for profile {profile_id!r}: {type(exc).__name__}: {exc}"
            ) from exc

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            if value not in (None, {}, ()):
                yield name, value


def _with(context: Context, **changes: Any) -> Context:
    from dataclasses import replace

    return replace(context, **changes)


def _shape(field: str, value: Any) -> Any:
    if field in LIST_FIELDS and isinstance(value, list):
        return tuple(value)
    return value


def _plain(ctx: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The JSON-safe part of an error's context, which is all a rebuilt error may carry."""
    if not ctx:
        return None
    return {key: value for key, value in ctx.items() if isinstance(value, (str, int, float, bool))}


def _escape(message: str) -> str:
    return message.replace("{", "{{").replace("}", "}}")


def config_error_from(exc: ValidationError, locate: Any = None, file: str | None = None) -> ConfigError:
    """Turn pydantic's errors into one `ConfigError` with every problem, in file order.

    `locate(loc)` may return `(line, column)` for a field path, to point into a persona file.
    """
    issues = []
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

    known = [*PROFILE_FIELDS, "templates", "variables", "factory"]
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"known fields are {', '.join(known)}"
    return f"unknown field; {hint}"
