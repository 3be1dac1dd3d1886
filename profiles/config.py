"""The persona model: a persona's fields and deployments as validated data, and nothing more.

`PersonaModel` checks what a persona file (or Python) gives and reports every problem at once,
each with its field path; the loader adds file, line and column. Resolving dynamic fields,
applying overlays and rendering happen in the layers above (`resolve`, `deployments`,
`profile`), and `ProfileConfig` (in `profile_config.py`) is this model completed with
`create_profile`.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from .dynconfig import ConfigInfo
from .errors import ConfigError, ConfigIssue, edit_distance
from .fields import (
    KIND_NAME,
    NO_SETTINGS,
    PROFILE_FIELDS,
    REQUIRED_FIELDS,
    Inputs,
    Language,
    Layout,
    Metadata,
    ModelSettings,
    ModelSettingsField,
    OutputSchemaField,
    Roles,
    TemplateRoots,
    TemplateSource,
    Text,
    TextList,
    Tools,
    base_dir_var,
    template_sources,
    type_name,
    variable_values,
)
from .inputs import InputSpec, InputSpecError
from .providers.env import DEPLOYMENT_PATTERN
from .settings import SETTING_NAMES

__all__ = [
    "BUILTIN_KINDS",
    "FILLED_VARIABLES",
    "PYTHON_ONLY_FIELDS",
    "DeploymentOverlay",
    "PersonaModel",
    "config_error_from",
    "kind_typos",
    "known_field_names",
]

#: Kinds every profile can render; a new kind one edit away from one of them is taken for a typo.
BUILTIN_KINDS = ("system", "user", "write_memory", "react")

#: Fields only Python can set: YAML has no way to write them.
PYTHON_ONLY_FIELDS = ("factory",)

#: Set while validating a parent persona, which need not have a name and role of its own.
_PARTIAL: ContextVar[bool] = ContextVar("profiles_partial", default=False)

#: Set while `from_data` validates: the checks that need the file's lines run after it sets them.
_DEFERRED: ContextVar[bool] = ContextVar("profiles_deferred", default=False)

#: What `allow_secrets` may name: the profile's fields and its model settings.
SECRET_FIELDS = (*PROFILE_FIELDS, *(f"model_settings.{name}" for name in SETTING_NAMES))

#: Template variables the library fills itself; no input or `variables:` entry may take their names.
FILLED_VARIABLES = ("tools", "tool_names", "resources", "react")
_FILLED = FILLED_VARIABLES


class _PersonaFields(BaseModel):
    """The fields a persona and each of its deployment overlays may set, with their validation.

    Each field's description says what it holds; the README's field table and the JSON Schema are
    made from them, so a new field needs only its description to be documented.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, frozen=True, defer_build=True)

    name: Text = Field(
        None, description="The agent's name, e.g. Aristotle; required unless a parent or factory gives it."
    )
    role: Text = Field(None, description="What the agent is, e.g. Summarizer; required like `name`.")
    goal: Text = Field(None, description="What the agent aims at.")
    desc: Text = Field(None, description="A longer description of the agent.")
    constraints: TextList = Field(None, description="Rules the agent keeps; rendered as a numbered list.")
    expand_prompt: Text = Field(
        None, description="Extra instructions; may use template variables such as {{ agents }}."
    )
    examples: Text = Field(None, description="Examples of good answers.")
    retry_goal: Text = Field(None, description="The goal used when retrying after a failed answer.")
    retry_constraints: TextList = Field(None, description="The constraints used when retrying.")
    language: Language = Field(
        None, description="The answer language and template locale, e.g. en, zh, zh-TW; none means English."
    )
    model: Text = Field(None, description="The model the prompts are for; picks model-specific templates.")
    avatar: Text = Field(None, description="An avatar URL or name for user interfaces.")
    templates: dict[str, TemplateSource] = Field(
        default_factory=dict,
        description="A prompt kind's own template: {file: path relative to this file}, {inline: text}, or "
        "{store: prompt name}, read from the prompt store when the profile is created.",
    )
    variables: dict[str, Any] = Field(
        default_factory=dict,
        description="Values of template variables; a mapping holding `key` is resolved like a dynamic field "
        "({key: COMPANY_NAME, default: Acme}), any other value is used as written. A persona field's name "
        "(name, goal, …) is not a variable's: set the field itself.",
    )
    samples: dict[str, Any] = Field(
        default_factory=dict,
        description="Sample values `profiles check` renders every prompt with: variable name to value; a key "
        "naming a prompt kind (system, user, write_memory, react, or a kind of this persona) with a mapping as "
        "its value holds samples for that kind only, which win over the shared ones.",
    )
    tools: Tools = Field(
        (),
        description="Tools the react prompt offers: each a name, what it does, and the JSON Schema of its "
        "arguments.",
    )
    requires_resources: bool = Field(
        False, description="Refuse to render the system prompt without resources that have content."
    )
    template_roots: TemplateRoots = Field(
        (),
        description="Folders, relative to this file and inside its folder, holding `<family>/<locale>/<kind>.j2` "
        "templates and an optional `families.yaml`; searched before the bundled templates.",
    )
    kinds: tuple[str, ...] = Field(
        (),
        description="Prompt kinds this persona adds, e.g. [handoff]. A kind one letter away from system, user, "
        "write_memory or react is taken for a typo unless it is listed here or found in a template root.",
    )
    allow_secrets: tuple[str, ...] = Field(
        (),
        description="Secret fields (secret: true, or read from a credential-like key) that may reach a prompt, a "
        "message or a request body; a model setting is named model_settings.<name>.",
    )
    model_settings: ModelSettingsField = Field(
        # shared, neither made nor copied per persona: loading thousands of personas is a hot path
        default_factory=lambda: NO_SETTINGS,
        description="Sampling and length settings sent with every request: temperature, top_p, max_tokens, "
        "stop, seed, presence_penalty, frequency_penalty (each a value or a dynamic field), and request body "
        "keys passed through untouched under extra. Each API gets the ones it takes, under its own names (see "
        "the table of settings per API).",
    )
    output_schema: OutputSchemaField = Field(
        None,
        description="The JSON Schema replies follow: written inline, {file: path} (JSON or YAML, inside the "
        "persona's folder), {store: prompt name}, or {schema: {...}} with name and strict. Templates get it as "
        "out_schema, requests as their response format, and parse_reply checks replies against it.",
    )
    inputs: Inputs = Field(
        default_factory=dict,
        description="The template variables callers give, each with type, enum, description, required "
        "(default true), default and examples. Once declared, a template (or a file it extends, includes or "
        "imports) reading any other variable is an error when the persona is loaded, at that file's line.",
    )
    roles: Roles = Field(
        default_factory=dict,
        description="The chat role each prompt kind is sent as (system, developer, user, assistant), "
        "e.g. {planner: developer}; the system kind defaults to system, every other kind to user.",
    )
    messages: Layout = Field(
        None,
        description="The chat messages the prompts become, in order: {role: …, kind: …} for a prompt kind, "
        "{history: true} for the caller's history. Default: system prompt, history, user prompt.",
    )

    @field_validator("templates", mode="before")
    @classmethod
    def _read_templates(cls, value: Any) -> Any:
        return template_sources(value)

    @field_validator("variables", mode="before")
    @classmethod
    def _check_variables(cls, value: Any) -> Any:
        return variable_values(value)

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

    @field_validator("kinds", mode="before")
    @classmethod
    def _check_kinds(cls, value: Any) -> Any:
        if value is None:
            return ()
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise PydanticCustomError(
                "kinds_type",
                "expected a list of prompt kind names, e.g. [handoff]; got {kind}",
                {"kind": type_name(value)},
            )
        bad = [item for item in value if not isinstance(item, str) or not KIND_NAME.fullmatch(item)]
        if bad:
            raise PydanticCustomError(
                "kinds_name",
                "kind {name} is not a name a template file can have; use letters, digits, '_' and '-', e.g. handoff",
                {"name": repr(bad[0])},
            )
        return tuple(value)

    @field_validator("allow_secrets", mode="before")
    @classmethod
    def _check_allow_secrets(cls, value: Any) -> Any:
        if value is None:
            return ()
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise PydanticCustomError(
                "allow_secrets_type",
                "expected a list of field names, e.g. [name]; got {kind}",
                {"kind": type_name(value)},
            )
        unknown = [str(item) for item in value if item not in SECRET_FIELDS]
        if unknown:
            raise PydanticCustomError(
                "allow_secrets_field",
                "unknown field(s) {names}; list fields of this persona, which are {known}, or model settings "
                "as model_settings.<name>",
                {"names": ", ".join(unknown), "known": ", ".join(PROFILE_FIELDS)},
            )
        return tuple(value)


class DeploymentOverlay(_PersonaFields):
    """What one deployment changes: any persona field; `templates` and `variables` merge per key."""

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            if not _unset(value):
                yield name, value


def _deployment_name(name: str) -> str:
    if not DEPLOYMENT_PATTERN.fullmatch(name) or ".." in name:
        raise PydanticCustomError(
            "deployment_name",
            "deployment name {name} is not allowed; use letters, digits, '-', '_' and '.', e.g. prod",
            {"name": repr(name)},
        )
    return name


DeploymentName = Annotated[str, AfterValidator(_deployment_name)]


class PersonaModel(_PersonaFields):
    """A persona as validated data: literal values or `DynConfig` fields, checked at construction.

    This is the persona model alone; `ProfileConfig` (in `profile_config.py`) adds what turns it
    into profiles. Nothing here resolves a value or renders a prompt.

    Unknown fields are refused. Without a factory, `name` and `role` are required. Text fields take
    a string or a `ConfigInfo`; `constraints` and `retry_constraints` a list of strings or a
    `ConfigInfo`. `templates` maps a prompt kind to `{file: path}` or `{inline: text}`;
    `variables` holds defaults for template variables. `tools` lists the tools the `react` prompt
    offers; `requires_resources` refuses a system prompt rendered without resources;
    `template_roots` names folders (relative to the persona, inside its folder) searched for
    `<family>/<locale>/<kind>.j2` templates before the bundled ones. `deployments` maps a
    deployment name to the fields it overrides, and `allow_secrets` names the secret fields that
    may reach a prompt. `metadata` holds free-form data that travels with the persona (a sampling
    plan's draws, say) and never reaches a prompt. `inputs` declares the variables callers give,
    with their types; `model_settings`, `output_schema`, `roles` and `messages` say how prompts
    become chat messages and request bodies.
    """

    deployments: dict[DeploymentName, DeploymentOverlay] = Field(
        default_factory=dict,
        description="Per deployment (dev, staging, prod, a customer), the fields it changes; an empty entry "
        "keeps the base persona.",
    )
    metadata: Metadata = Field(
        default_factory=dict,
        description=(
            "Free-form data kept with the persona and written out unchanged, never rendered into a prompt: "
            "text keys, JSON values (text, numbers, true/false, null, lists, mappings), at most "
            "64,000 characters as JSON and 8 levels deep. `profiles generate --plan` keeps the attributes "
            "drawn for the persona under `metadata.plan`; `profiles import` keeps another tool's fields that "
            "have no persona equivalent under `metadata.<format>`, and adapters pass it on."
        ),
    )
    factory: Any = Field(
        None, description="A ProfileFactory (or callable) whose non-None profile wins over the fields; Python only."
    )

    _base_dir: Path | None = PrivateAttr(default=None)
    _source_file: str | None = PrivateAttr(default=None)
    #: The source provenance gives literal fields not written in a file, e.g. `llm:<model> request …`.
    _origin: str | None = PrivateAttr(default=None)
    #: Where each field was written: field path -> (file, line), e.g. ("deployments", "prod", "name").
    _lines: Mapping[tuple[str, ...], tuple[str, int]] = PrivateAttr(default_factory=dict)
    #: Each literal field's source, set on a config made by applying a deployment's overlay.
    _overlay_sources: Mapping[str, str] = PrivateAttr(default_factory=dict)
    #: What the layers above work out once per config (its overlays, its literal fields, profiles
    #: built from it), kept with it because a config never changes; `model_copy` starts it anew.
    _memo: dict[str, Any] = PrivateAttr(default_factory=dict)

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
        if not _PARTIAL.get():
            typos = kind_typos(self)
            if typos:
                raise ConfigError(typos)
        if self.inputs and not _DEFERRED.get() and not _PARTIAL.get():
            self._check_templates()

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
    ) -> PersonaModel:
        """Validate parsed data whose template files live in `base_dir`.

        `lines` maps field paths to where they were written, for provenance. `partial` skips the
        name-and-role check, for a parent persona that only some children complete. `origin` is
        the source provenance gives literal fields that came from elsewhere than a file, e.g.
        `llm:<model> request <id> prompt <hash>`; by default it is `yaml:<source_file>` or `literal`.

        Raises:
            ConfigError: every problem, each issue carrying its field path (`loc`) for a loader.
        """
        token = base_dir_var.set(base_dir)
        partial_token = _PARTIAL.set(partial)
        deferred_token = _DEFERRED.set(True)
        try:
            config = cls(**{key: value for key, value in data.items() if isinstance(key, str)})
        finally:
            _DEFERRED.reset(deferred_token)
            _PARTIAL.reset(partial_token)
            base_dir_var.reset(token)
        # one update: pydantic's per-attribute path for private attributes is slow on this hot path
        config.__pydantic_private__.update(
            _base_dir=base_dir, _source_file=source_file, _lines=dict(lines or {}), _origin=origin
        )
        if config.inputs and not partial:
            config._check_templates()
        return config

    def _check_templates(self) -> None:
        """With `inputs:` declared: templates read nothing undeclared, and unread inputs warn.

        Raises:
            ConfigError: every undeclared variable a template reads, at the template's file and line.
        """
        from .template_inputs import check_declared_inputs

        issues = check_declared_inputs(self)
        if issues:
            raise ConfigError(issues)

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

    @model_validator(mode="after")
    def _check_inputs(self) -> PersonaModel:
        """Inputs take no field's name, and `variables:` values have the declared types, overlays too."""
        views = [((), self.inputs, self.variables)]
        for name, overlay in self.deployments.items():
            if {"inputs", "variables"} & overlay.model_fields_set:
                inputs = {**self.inputs, **overlay.inputs}
                views.append((("deployments", name), inputs, {**self.variables, **overlay.variables}))
        for where, inputs, variables in views:
            for name in inputs:
                if name in PROFILE_FIELDS or name in _FILLED:
                    what = "a persona field" if name in PROFILE_FIELDS else "filled in by the library"
                    message = f"{name!r} is {what}, not an input; remove it from inputs"
                    raise _entry_error(message, *where, "inputs", name)
            for name, value in variables.items():
                if name in PROFILE_FIELDS or name in _FILLED:
                    # a template reading it would get this value while explain, the getters and a request
                    # name the field's own (or the library would fill it over the value)
                    message = (
                        f"{name!r} is a persona field; set {name}: itself rather than a variable of its name"
                        if name in PROFILE_FIELDS
                        else f"{name!r} is filled in by the library at each render; pass it to the render instead"
                    )
                    raise _entry_error(message, *where, "variables", name)
                spec = inputs.get(name)
                problem = _variable_problem(spec, value) if spec is not None and value is not None else None
                if problem:
                    raise _entry_error(f"does not fit inputs.{name}: {problem}", *where, "variables", name)
        return self

    @field_validator("factory")
    @classmethod
    def _check_factory(cls, value: Any) -> Any:
        if value is None or callable(value) or callable(getattr(value, "create_profile", None)):
            return value
        raise PydanticCustomError(
            "factory_type", "expected a ProfileFactory or a callable, got {kind}", {"kind": type(value).__name__}
        )

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> PersonaModel:
        """A copy with `update` applied, each value checked as the constructor checks it; what was
        worked out for this config is not carried over.

        (pydantic's own `model_copy` takes the values unchecked: `constraints="abc"` became three
        constraints, `name=5` rendered "You are 5.")

        Raises:
            ConfigError: an updated value is invalid, or a key names no field.
        """
        if update:
            update = self._checked_update(update)
        return self._copy_unchecked(update=update, deep=deep)

    def _copy_unchecked(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> PersonaModel:
        """`model_copy` of values checked already (a deployment's overlay, a dataset row's fields)."""
        made = super().model_copy(update=update, deep=deep)
        private = made.__pydantic_private__
        private["_memo"] = {}
        return made

    def _checked_update(self, update: Mapping[str, Any]) -> dict[str, Any]:
        known = type(self).model_fields
        unknown = sorted(str(name) for name in update if name not in known)
        if unknown:
            raise ConfigError(
                f"cannot update unknown field(s) {', '.join(unknown)}; fields are {', '.join(known)}"
            )
        token = _PARTIAL.set(True)  # the values alone: the rest of the persona was checked already
        try:
            checked = type(self)(**update)
        finally:
            _PARTIAL.reset(token)
        return {name: getattr(checked, name) for name in update}

    def __eq__(self, other: object) -> bool:
        # what was worked out for a config (its plans, once it made profiles) is no part of what it is
        if not isinstance(other, PersonaModel):
            return NotImplemented
        if type(self) is not type(other) or self.__dict__ != other.__dict__:
            return False
        mine, theirs = self.__pydantic_private__ or {}, other.__pydantic_private__ or {}
        return {k: v for k, v in mine.items() if k != "_memo"} == {k: v for k, v in theirs.items() if k != "_memo"}

    def __hash__(self) -> int:
        # frozen, so usable as a key or in a set; from what cannot change and equal configs share
        return hash((type(self), repr(self.name), repr(self.role)))

    def __getstate__(self) -> dict[Any, Any]:
        # what was worked out (plans, compiled templates) stays in this process: the copy works it out anew
        state = super().__getstate__()
        private = state.get("__pydantic_private__")
        if private and private.get("_memo"):
            state["__pydantic_private__"] = {**private, "_memo": {}}
        return state

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> PersonaModel:
        memo = {} if memo is None else memo
        private = self.__pydantic_private__ or {}
        if "_memo" in private:
            memo[id(private["_memo"])] = {}  # the copy starts with nothing worked out, as after model_copy
        return super().__deepcopy__(memo)

    @property
    def source_file(self) -> str | None:
        """The persona file this config was loaded from, if any."""
        return self._source_file

    def line_of(self, *path: str) -> tuple[str, int] | None:
        """The file and line a field was written on, e.g. `line_of("deployments", "prod", "name")`."""
        return self._lines.get(tuple(path))

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            if not _unset(value):
                yield name, value


def _unset(value: Any) -> bool:
    """Whether a field holds nothing worth showing in a repr."""
    if isinstance(value, ModelSettings):
        return not value
    return value is None or (isinstance(value, (dict, tuple)) and not value)


def _variable_problem(spec: InputSpec, value: Any) -> str | None:
    """Why a `variables:` entry does not fit its declared input; a dynamic entry's default is read as text."""
    if not isinstance(value, ConfigInfo):
        return spec.problem(value)
    default = value.default
    if default is None:
        return None  # nothing to check until a provider answers (resolution reads it by the type)
    if isinstance(default, str):
        try:
            spec.from_text(default)
        except InputSpecError as exc:
            return f"its default {exc.reason}"
        return None
    return spec.problem(default)


def _entry_error(message: str, *path: Any) -> PydanticCustomError:
    """An error at `path` (below the persona), raised from a check of the whole persona."""
    return PydanticCustomError("persona_entry", "{reason}", {"reason": message, "persona_path": tuple(path)})


def kind_typos(config: PersonaModel) -> list[ConfigIssue]:
    """A `templates:` kind one edit away from a built-in kind, neither declared under `kinds:` nor in a root.

    `templates: {sytem: …}` would otherwise be taken for a new kind, and the system prompt would
    silently keep the default template.
    """
    places: list[tuple[tuple[str, ...], dict[str, Any], tuple[str, ...], tuple[Any, ...]]] = [
        ((), dict(config.templates), config.kinds, config.template_roots)
    ]
    for deployment, overlay in config.deployments.items():
        if overlay.templates:
            kinds = (*config.kinds, *overlay.kinds)
            roots = (*config.template_roots, *overlay.template_roots)
            places.append((("deployments", deployment), dict(overlay.templates), kinds, roots))
    issues = []
    for prefix, templates, declared, roots in places:
        for kind in templates:
            if kind in BUILTIN_KINDS or kind in declared:
                continue
            near = [builtin for builtin in BUILTIN_KINDS if edit_distance(kind, builtin, limit=1) <= 1]
            if not near or kind in _root_kinds(roots):
                continue
            issues.append(
                ConfigIssue(
                    f"prompt kind {kind!r} is one letter away from the built-in {near[0]!r}; did you mean "
                    f"{near[0]!r}? If {kind!r} is a kind of its own, list it under 'kinds: [{kind}]'",
                    ".".join((*prefix, "templates", kind)),
                    loc=(*prefix, "templates", kind),
                    code="kind_typo",
                )
            )
    return issues


def _root_kinds(roots: tuple[Any, ...]) -> frozenset[str]:
    if not roots:
        return frozenset()
    from .rendering.renderer import get_renderer

    return get_renderer(roots).kinds


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
        context = error.get("ctx") or {}
        if error["type"] == "list_item_type" and "index" in context:
            loc = (*loc, context["index"])
        if "entry_at" in context:  # an entry of a mapping or list: point at the entry's own line
            loc = (*loc, *context["entry_at"])
        if "persona_path" in context:  # a check of the whole persona names the path itself
            loc = tuple(context["persona_path"])
        field = ".".join(str(part) for part in loc)
        if error["type"] == "extra_forbidden" and "model_settings" in loc[:-1]:
            message = _unknown_setting_message(str(loc[-1]))
        elif error["type"] == "extra_forbidden":
            overlay = len(loc) == 3 and loc[0] == "deployments"
            message = _unknown_field_message(str(loc[-1]), overlay=overlay)
        elif error["type"] == "missing":
            message = "is required"
        else:
            message = _plain_message(error)
        line = column = None
        if locate is not None:
            line, column = locate(loc)
        issues.append(ConfigIssue(message, field, file, line, column, loc=loc, code=error["type"]))
    issues.sort(key=lambda issue: (issue.line or 0, issue.column or 0))
    return ConfigError(issues)


def _plain_message(error: Any) -> str:
    """Pydantic's own wording for a type it checks itself, said in a persona author's words."""
    kind = error["type"]
    given = error.get("input")
    if kind in ("bool_parsing", "bool_type"):
        shown = repr(given)[:40] if isinstance(given, (str, int, float)) else type_name(given)
        return f"expected true or false, got {shown}"
    if kind in ("model_type", "model_attributes_type", "dict_type") and error["loc"][:1] == ("deployments",):
        return (
            f"expected a mapping of the fields this deployment changes, e.g. {{name: Plato}}, got {type_name(given)}; "
            "leave it empty to keep the base persona"
        )
    return str(error["msg"])


#: Fields of a persona that an overlay under `deployments:` cannot hold, and why.
_NOT_IN_OVERLAYS = {
    "deployments": "overlays do not nest; write each deployment under the persona's own deployments:",
    "extends": "a deployment cannot extend another file; put extends: at the top of the persona",
}


def _unknown_field_message(name: str, *, overlay: bool = False) -> str:
    import difflib

    if overlay and name in _NOT_IN_OVERLAYS:
        return f"unknown field in a deployment's overlay: {_NOT_IN_OVERLAYS[name]}"
    known = [field for field in known_field_names() if not overlay or field not in _NOT_IN_OVERLAYS]
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"known fields are {', '.join(known)}"
    return f"unknown field; {hint}"


def _unknown_setting_message(name: str) -> str:
    import difflib

    known = [*SETTING_NAMES, "extra"]
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"known settings are {', '.join(known)}"
    return f"unknown model setting; {hint} (keys for the request body itself go under extra)"


def known_field_names() -> list[str]:
    """Every field a persona file may set, for did-you-mean hints: the model's fields and `extends`."""
    names = [name for name in PersonaModel.model_fields if name not in PYTHON_ONLY_FIELDS]
    return [*PROFILE_FIELDS, *(name for name in names if name not in PROFILE_FIELDS), "extends"]
