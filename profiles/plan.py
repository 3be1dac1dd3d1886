"""Plans: a persona compiled once, so that each profile made from it holds only what differs.

Everything a profile needs that does not change from one `create_profile` to the next is worked
out once per persona, deployment, template roots and context, and shared by every profile made
from it: the literal fields and their sources, the renderer, the field values compiled as
templates (in the order they render), the model settings, output schema, tools, inputs and
message layout, which secrets may not leave, and, per prompt kind at its first render, the
template and the variables every render of it passes (`KindPlan`). A profile is then the plan
plus its own few values: those of its dynamic fields, looked up at its creation.

`ProfilePlan` holds that shared part; `PersonaPlan` compiles a persona into plans and resolves
each creation's dynamic fields, exactly as `resolve.resolve_fields` would. Nothing here renders a
prompt or knows what a profile object is: `profile.py` builds profiles on plans and renders
through them.

A plan never changes once made (but for the kind plans it adds at first render), and nothing in
it stands for a value that may change between creations: the environment, the store and the
`.env` files are read at each creation, into the profile's own values. What picks a plan from
those values is only what a plan depends on: whether each is secret or empty, and its text when
it holds template syntax.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .context import Context, Resolved
from .deployments import for_deployment
from .dynconfig import ConfigInfo
from .errors import ConfigError, ConfigIssue, RenderError, TemplateNotFoundError
from .fields import PROFILE_FIELDS, REQUIRED_FIELDS, TemplateSource
from .inputs import InputSpec
from .messages import DEFAULT_LAYOUT, MessageSlot
from .output_schema import OutputSchema
from .react import KEYWORDS
from .rendering.renderer import CompiledTemplate, Renderer, get_renderer, has_template_syntax
from .rendering.templates import DEFAULT_FAMILY, PROMPT_INPUTS, PROMPT_KINDS, REQUIRED_VARIABLES
from .resolve import (
    STORE_PREFIX,
    fetch_output_schema,
    literal_fields,
    require_fields,
    resolve_field,
    resolve_settings,
    resolve_variables,
)
from .template_inputs import known_variables
from .tools import Tool

if TYPE_CHECKING:
    from .config import PersonaModel

__all__ = [
    "FROM_CONFIG",
    "MAX_PLANS",
    "KindPlan",
    "PersonaPlan",
    "ProfilePlan",
    "build_plan",
    "check_required",
    "compiles_once",
    "persona_plan",
    "place",
    "read_at",
]

#: `build_plan(output_schema=FROM_CONFIG)`: take the persona's schema, fetching it from the store if named there.
FROM_CONFIG: Any = object()

_EMPTY: Mapping[str, Any] = MappingProxyType({})

#: Inputs every kind may read, below everything else in precedence: the ReAct labels.
_SHARED_INPUTS: Mapping[str, Any] = MappingProxyType({"react": KEYWORDS})

#: Each kind's documented inputs merged with the shared ones, built once.
_DEFAULTS: dict[str, Mapping[str, Any]] = {}

#: Most plans a `PersonaPlan` keeps (one per language, model and the kinds of values its dynamic
#: fields gave), and most `PersonaPlan`s a persona keeps (one per deployment and template roots).
MAX_PLANS = 32


def _defaults(kind: str) -> Mapping[str, Any]:
    merged = _DEFAULTS.get(kind)
    if merged is None:
        merged = _DEFAULTS[kind] = MappingProxyType({**_SHARED_INPUTS, **PROMPT_INPUTS.get(kind, _EMPTY)})
    return merged


@dataclass(frozen=True)
class KindPlan:
    """The parts of rendering one prompt kind that stay the same from call to call, for every
    profile of one plan."""

    compiled: CompiledTemplate
    #: Values of declared variables that come from the plan: variables, fields, defaults.
    shared: dict[str, Any]
    #: Declared variables nothing but the caller can give, in the order the template uses them.
    unresolved: tuple[str, ...]
    #: Declared variables that hold a secret the persona does not allow into prompts.
    secret: tuple[str, ...]
    #: Fields whose values are templates themselves that this render needs (the template reads
    #: them, or a field it reads reads them), in the order they must render: each after those it reads.
    fields: tuple[tuple[str, Any], ...]
    #: Every variable the template or its templated fields read, for strict mode.
    used: frozenset[str]
    #: Names the template reads that the caller may give; with an open template (a name computed
    #: at render time in `{% include %}`), None: every variable the caller gives is passed.
    passed: frozenset[str] | None
    #: Templated fields whose rendered text the template reads (a variable of that name wins).
    field_targets: frozenset[str] = frozenset()
    #: Documented inputs of the kind (`question`, …) the persona declares as required and the template reads.
    required: tuple[str, ...] = ()
    #: Declared variables each profile gives itself: (name, position in the profile's own values).
    from_own: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, eq=False)
class ProfilePlan:
    """What every profile of one persona, context and kind of dynamic values shares.

    `dynamic` names the fields each profile gives itself, in the order of its own values;
    `resolved` and `values` hold them too, as the first profile of the plan had them, and a
    profile's own values stand in front of them. Whether each of those values is secret, empty,
    or a template is the same for every profile of a plan (it is part of what picks the plan), so
    which variables a render withholds is worked out here, once.
    """

    resolved: Mapping[str, Resolved]
    values: Mapping[str, Any]
    templates: Mapping[str, TemplateSource]
    bound: Mapping[str, Any]
    field_templates: Mapping[str, Any]
    renderer: Renderer
    #: The template family picked from the model name (`default` when none matched).
    family: str = DEFAULT_FAMILY
    tools: tuple[Tool, ...] = ()
    requires_resources: bool = False
    #: Secret fields the persona lets into prompts (its `allow_secrets:`).
    allow_secrets: frozenset[str] = frozenset()
    #: What the profiles are made for: their deployment, language and model (None where secret).
    context: Context = field(default_factory=Context)
    #: The persona's declared inputs (`inputs:`), by template variable.
    inputs: Mapping[str, InputSpec] = field(default_factory=lambda: _EMPTY)
    #: The persona's model settings, each with its value and source.
    settings: Mapping[str, Resolved] = field(default_factory=lambda: _EMPTY)
    #: Request body keys passed through untouched (`model_settings.extra`).
    settings_extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    #: The JSON Schema replies follow, if the persona has one.
    output_schema: OutputSchema | None = None
    #: Which prompt kinds become which chat messages (`messages:`), and where the history goes.
    layout: tuple[MessageSlot, ...] = DEFAULT_LAYOUT
    #: The role each prompt kind is sent as where the layout names none (`roles:`).
    roles: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    #: The persona's `metadata:`, as written: data that travels with it and never reaches a prompt.
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    #: The persona's `variables:` as resolved, each with its source.
    resolved_variables: Mapping[str, Resolved] = field(default_factory=lambda: _EMPTY)
    #: Where each templated field (or list item) and each own template was written, for errors:
    #: `planner.yaml:7`, `overlay prod: planner.yaml:12`.
    origins: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    #: The stored prompts its templates include, by the name they include them by (`store:x`).
    includes: Mapping[str, TemplateSource] = field(default_factory=lambda: _EMPTY)
    #: What it was made from, for traces: `file` (the persona file) and `deployment`.
    origin: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    #: The fields each profile gives itself, in the order of its own values.
    dynamic: tuple[str, ...] = ()
    #: Per prompt kind, what every render of it shares, worked out at its first render.
    kinds: dict[str, KindPlan] = field(default_factory=dict, init=False, repr=False)
    #: Position of each dynamic field in a profile's own values.
    index: Mapping[str, int] = field(init=False, repr=False)
    #: The secrets that may not leave, in order: (name, its resolved item) or, for a profile's own
    #: value, (name, its position); `variables.<name>` and `model_settings.<name>` for those.
    hidden: tuple[tuple[str, Any], ...] = field(init=False, repr=False)
    #: Fields and variables holding a secret the persona does not allow into prompts.
    withheld_names: frozenset[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        index = {name: position for position, name in enumerate(self.dynamic)}
        set_ = object.__setattr__
        set_(self, "index", MappingProxyType(index))
        allowed = self.allow_secrets
        hidden: list[tuple[str, Any]] = []
        for name, item in self.resolved.items():
            if item.secret and item.value is not None and name not in allowed:
                hidden.append((name, index.get(name, item)))
        for name, item in self.settings.items():
            if item.secret and item.value is not None and f"model_settings.{name}" not in allowed:
                hidden.append((f"model_settings.{name}", item))
        for name, item in self.resolved_variables.items():
            if (
                item.secret
                and item.value is not None
                and name not in allowed
                and self.bound.get(name) is item.value  # not replaced by `partial`
            ):
                hidden.append((f"variables.{name}", item))
        set_(self, "hidden", tuple(hidden))
        set_(
            self,
            "withheld_names",
            frozenset(name for name in (*self.values, *self.bound) if self.withheld(name) is not None),
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # a plan sent to another process (with a profile): its mappings as dicts, each templated
        # field by its text, compiled again there; the kind plans are worked out anew
        parts: dict[str, Any] = {}
        proxies = []
        for item in fields(self):
            if not item.init:
                continue
            value = getattr(self, item.name)
            if item.name == "field_templates":
                value = {name: _field_texts(templates) for name, templates in value.items()}
            if isinstance(value, MappingProxyType):
                proxies.append(item.name)
                value = dict(value)
            parts[item.name] = value
        return (_restore_plan, (parts, tuple(proxies)))

    def withheld(self, name: str, resolved: Mapping[str, Resolved] | None = None) -> Resolved | None:
        """The resolved field or variable `name` when it holds a secret the persona does not allow.

        `resolved` are the fields of one profile of the plan (the plan's own when left out).
        """
        if name in self.bound:  # a variable (or a `partial` value) stands in front of a field of that name
            item = self.resolved_variables.get(name)
            if item is not None and self.bound[name] is not item.value:
                item = None  # replaced by `partial`
        else:
            item = (self.resolved if resolved is None else resolved).get(name)
        if item is not None and item.secret and item.value is not None and name not in self.allow_secrets:
            return item
        return None

    def derive(self, own: Sequence[Resolved], **changes: Any) -> ProfilePlan:
        """A plan for one profile of this one: its `own` values written in, then `changes` made.

        What `partial` and `with_templates` make; the kind plans start anew.
        """
        if self.dynamic:
            resolved, values = dict(self.resolved), dict(self.values)
            for name, position in self.index.items():
                resolved[name] = own[position]
                values[name] = own[position].value
            changes = {
                "resolved": MappingProxyType(resolved),
                "values": MappingProxyType(values),
                "dynamic": (),
                **changes,
            }
        return replace(self, **changes)

    # templates -----------------------------------------------------------------------------
    def known_kinds(self) -> tuple[str, ...]:
        """Every prompt kind the plan can render: bundled, its template roots', and its own."""
        return tuple(sorted({*PROMPT_KINDS, *self.renderer.kinds, *self.templates}))

    def template_for(self, kind: str) -> CompiledTemplate:
        """The compiled template `kind` renders with: the persona's own, else the roots' by locale,
        then family (the plan's, then `default`), then root order; see `rendering/templates.py`."""
        own = self.templates.get(kind)
        if own is not None:
            compiled = self.renderer.compile(own.source, f"{kind} ({own.origin})")
            check_required(kind, compiled)
            return compiled
        if kind not in PROMPT_KINDS and kind not in self.renderer.kinds:
            raise TemplateNotFoundError(
                f"unknown prompt kind {kind!r}; known kinds are {', '.join(self.known_kinds())}. Add one as "
                f"<family>/<locale>/{kind}.j2 in a template root, or under 'templates:' in the persona"
            )
        return self.renderer.find(kind, self.values["language"], self.family)

    def field_template_list(self) -> list[CompiledTemplate]:
        found = []
        for templates in self.field_templates.values():
            items = templates if isinstance(templates, tuple) else (templates,)
            found.extend(item for item in items if isinstance(item, CompiledTemplate))
        return found

    def kind_defaults(self, kind: str) -> dict[str, Any]:
        """What a kind's templates read when nothing else gives it: documented inputs, tools, out_schema."""
        defaults = {**_defaults(kind), "tools": self.tools, "tool_names": ", ".join(tool.name for tool in self.tools)}
        if self.output_schema is not None:
            defaults["out_schema"] = self.output_schema.text
        return defaults

    def kind(self, kind: str, label: Callable[[], str]) -> KindPlan:
        """What every render of `kind` shares, worked out at its first render and kept.

        `label` names the profile in an error (`profile 'Ada'`).
        """
        plan = self.kinds.get(kind)
        if plan is None:
            plan = self.kinds[kind] = self._kind(kind, label)
        return plan

    def _kind(self, kind: str, label: Callable[[], str]) -> KindPlan:
        compiled = self.template_for(kind)
        defaults = self.kind_defaults(kind)
        names: Iterable[str] = compiled.declared
        if not compiled.closed:  # which variables the template reads is known only at render time
            names = dict.fromkeys((*compiled.declared, *self.bound, *self.values, *defaults))
        own = self.index
        shared: dict[str, Any] = {}
        from_own: list[tuple[str, int]] = []
        secret = []
        unresolved = []
        for name in names:
            if name in self.withheld_names:
                if name in compiled.declared:  # an open template is not given a secret it may not read
                    secret.append(name)
            elif name in self.bound:
                shared[name] = self.bound[name]
            elif name in self.values:
                if name in own:
                    from_own.append((name, own[name]))
                else:
                    shared[name] = self.values[name]
            elif name in defaults:
                shared[name] = defaults[name]
            elif name in self.inputs and name in compiled.declared:
                if self.inputs[name].needs_value:
                    unresolved.append(name)  # declared required: a test with `is defined` does not excuse it
                elif not compiled.variables[name].optional:
                    shared[name] = None  # an optional input not given reads as nothing
                # else the template tests it (`is defined`, `|default`): it stays undefined, as it expects
            elif name in compiled.required:
                unresolved.append(name)
        unresolved.sort(key=lambda name: (compiled.line_of(name) or 0, name))
        if self.inputs:
            self._check_declared(kind, compiled, label)
        fields = self.needed_fields(compiled.declared)
        used = set(compiled.declared)
        for template in self.field_template_list():
            used |= template.declared
        passed = frozenset(compiled.declared) if compiled.closed else None
        targets = frozenset(name for name, _ in fields if name in compiled.declared and name not in self.bound)
        required = tuple(
            name
            for name in compiled.declared
            if name in defaults and name in self.inputs and self.inputs[name].needs_value and name not in self.bound
        )
        return KindPlan(
            compiled,
            shared,
            tuple(unresolved),
            tuple(secret),
            fields,
            frozenset(used),
            passed,
            targets,
            required,
            tuple(from_own),
        )

    def _check_declared(self, kind: str, compiled: CompiledTemplate, label: Callable[[], str]) -> None:
        """With `inputs:` declared, refuse a template (one from the store, say) reading an undeclared variable.

        The variables are those of every file the template extends, includes or imports; the error
        names the file and line that reads the variable.
        """
        known = known_variables(kind, self.bound, self.inputs)
        templates = [compiled, *self.field_template_list()]
        for template in templates:
            undeclared = sorted(template.declared - known - set(self.values), key=lambda n: (template.line_of(n), n))
            if undeclared:
                name = undeclared[0]
                raise RenderError(
                    f"{read_at(template, name)} reads {name!r}, which {label()} does not declare under "
                    f"'inputs:'; declare it (inputs: {{{name}: string}}) or give it a default under 'variables:'",
                    template=template.variables[name].template,
                    line=template.line_of(name),
                )

    def needed_fields(self, read: Iterable[str]) -> tuple[tuple[str, Any], ...]:
        """The templated fields a template reading `read` needs, each after the fields it reads."""
        needed: set[str] = set()
        stack = [name for name in read if name in self.field_templates]
        while stack:
            name = stack.pop()
            if name not in needed:
                needed.add(name)
                stack.extend(reads(self.field_templates[name]) & self.field_templates.keys())
        # field_templates is kept in dependency order (see build_plan)
        return tuple((name, templates) for name, templates in self.field_templates.items() if name in needed)


@dataclass(frozen=True)
class _FieldText:
    """A templated field's compiled template as it is pickled: its text and name."""

    source: str
    name: str


def _field_texts(templates: Any) -> Any:
    if isinstance(templates, tuple):
        return tuple(_field_texts(item) for item in templates)
    if isinstance(templates, CompiledTemplate):
        return _FieldText(templates.source, templates.name)
    return templates


def _restore_plan(parts: dict[str, Any], proxies: tuple[str, ...]) -> ProfilePlan:
    """A plan unpickled: its templated fields compiled again by its renderer."""
    renderer: Renderer = parts["renderer"]

    def compiled(templates: Any) -> Any:
        if isinstance(templates, tuple):
            return tuple(compiled(item) for item in templates)
        if isinstance(templates, _FieldText):
            return renderer.compile(templates.source, templates.name)
        return templates

    parts["field_templates"] = {name: compiled(templates) for name, templates in parts["field_templates"].items()}
    for name in proxies:
        parts[name] = MappingProxyType(parts[name])
    return ProfilePlan(**parts)


def read_at(template: CompiledTemplate, name: str) -> str:
    """Where `template` reads `name`: `template 'user (inline)' line 1`, or, in a file it extends,
    includes or imports, `template 'base.j2' line 3 (from template 'user (inline)')`."""
    item = template.variables.get(name)
    if item is None:
        return template.label
    if item.template == template.name:
        return item.where
    return f"{item.where} (from {template.label})"


def check_required(kind: str, compiled: CompiledTemplate) -> None:
    """Refuse a template of `kind` that leaves out a variable the kind's contract needs."""
    needed = REQUIRED_VARIABLES.get(kind)
    if not needed:
        return
    missing = [name for name in needed if name not in compiled.declared]
    if missing:
        reasons = "; ".join(f"{{{{ {name} }}}}: {needed[name]}" for name in missing)
        raise RenderError(
            f"{compiled.label} replaces the {kind} prompt but does not use {', '.join(missing)}; add {reasons}"
        )


def place(source: str) -> str:
    """Where a value was written, for a message: `planner.yaml:6` for `yaml:planner.yaml:6`, else its source."""
    return source[5:] if source.startswith("yaml:") else source


def reads(templates: Any) -> set[str]:
    """Every variable a templated field (or its templated list items) reads."""
    items = templates if isinstance(templates, tuple) else (templates,)
    read: set[str] = set()
    for item in items:
        if isinstance(item, CompiledTemplate):
            read |= item.declared
    return read


# building a plan ----------------------------------------------------------------------------------


def build_plan(
    config: PersonaModel,
    resolved: Mapping[str, Resolved],
    *,
    template_roots: Sequence[Path] = (),
    literal: Collection[str] = (),
    templates: Mapping[str, TemplateSource] | None = None,
    includes: Mapping[str, TemplateSource] | None = None,
    origin: Mapping[str, Any] | None = None,
    settings: Mapping[str, Resolved] | None = None,
    output_schema: Any = FROM_CONFIG,
    deployment: str | None = None,
    variables: Mapping[str, Resolved] | None = None,
    dynamic: tuple[str, ...] = (),
    renderer: Renderer | None = None,
) -> ProfilePlan:
    """The plan of `config` with these resolved fields; see `profile.build_profile` for the arguments.

    `dynamic` names the fields each profile of the plan gives itself (see `ProfilePlan`);
    `resolved` holds the first profile's values for them. `renderer`, when given, is the one
    `template_roots` and `includes` pick (a caller that made it already).

    Raises:
        RenderError: a field's template syntax does not parse.
        ConfigError: templated fields read each other in a circle.
    """
    if renderer is None:
        sources = {name: part.source for name, part in includes.items()} if includes else None
        renderer = get_renderer(template_roots, sources)
    values = {name: item.value for name, item in resolved.items()}
    if deployment is None and origin:
        deployment = origin.get("deployment")
    # what is left out is resolved for the profile's own language and model
    asked = Context(
        language=values.get("language"), model=values.get("model"), deployment=deployment, base_dir=config._base_dir
    )
    if variables is None:
        variables = resolve_variables(config, asked)
    origins: dict[str, str] = {}
    field_templates: dict[str, Any] = {}
    for name, value in values.items():
        if resolved[name].secret or name in literal:
            continue
        if isinstance(value, str) and has_template_syntax(value):
            where = _written(config, resolved[name], name)
            field_templates[name] = _compile_field(renderer, name, value, where, origins)
        elif isinstance(value, tuple) and any(isinstance(item, str) and has_template_syntax(item) for item in value):
            field_templates[name] = tuple(
                _compile_field(
                    renderer, f"{name}[{index}]", item, _written(config, resolved[name], name, index), origins
                )
                if has_template_syntax(item)
                else item
                for index, item in enumerate(value)
            )
    context = Context(
        language=None if _secret(resolved, "language") else values.get("language"),
        model=None if _secret(resolved, "model") else values.get("model"),
        deployment=deployment,
    )
    if settings is None:
        settings = resolve_settings(config, asked) if config.model_settings else {}
    if output_schema is FROM_CONFIG:
        output_schema = fetch_output_schema(config, asked, lines=config)
    if isinstance(output_schema, OutputSchema) and output_schema.origin == "inline":
        output_schema = replace(output_schema, origin=_written_at(config, "output_schema"))
    inputs = dict(config.inputs)
    defaults = {name: spec.default for name, spec in inputs.items() if spec.has_default}
    bound = {**defaults, **{name: item.value for name, item in variables.items()}}
    field_templates = _in_dependency_order(field_templates, bound, resolved)
    own = dict(config.templates if templates is None else templates)
    for kind, template in own.items():
        where = config.line_of("templates", kind) or config.line_of("templates")
        if where:
            origins[f"{kind} ({template.origin})"] = f"{where[0]}:{where[1]}"
    return ProfilePlan(
        resolved=MappingProxyType(dict(resolved)),
        values=MappingProxyType(values),
        templates=MappingProxyType(own),
        bound=MappingProxyType(bound),
        field_templates=MappingProxyType(field_templates),
        renderer=renderer,
        family=renderer.family_for(values.get("model"), secret=_secret(resolved, "model")),
        tools=tuple(config.tools),
        requires_resources=config.requires_resources,
        allow_secrets=frozenset(config.allow_secrets),
        context=context,
        inputs=MappingProxyType(inputs),
        settings=MappingProxyType(dict(settings)),
        settings_extra=MappingProxyType(dict(config.model_settings.extra)),
        output_schema=output_schema if isinstance(output_schema, OutputSchema) else None,
        layout=config.messages or DEFAULT_LAYOUT,
        roles=MappingProxyType(dict(config.roles)),
        metadata=MappingProxyType(config.metadata),
        includes=MappingProxyType(dict(includes or {})),
        origin=MappingProxyType(dict(origin or {})),
        resolved_variables=MappingProxyType(dict(variables)),
        origins=MappingProxyType(origins),
        dynamic=dynamic,
    )


def _written_at(config: PersonaModel, field_name: str) -> str:
    """Where a field was written, as provenance says it: `yaml:a.yaml:12`, `overlay prod: a.yaml:30`."""
    private = config.__pydantic_private__ or {}
    overlaid = (private.get("_overlay_sources") or {}).get(field_name)
    if overlaid:
        return overlaid
    where = config.line_of(field_name)
    if where:
        return f"yaml:{where[0]}:{where[1]}"
    source_file = private.get("_source_file")
    return private.get("_origin") or (f"yaml:{source_file}" if source_file else "literal")


def _secret(resolved: Mapping[str, Resolved], name: str) -> bool:
    item = resolved.get(name)
    return item is not None and item.secret


def _written(config: PersonaModel, item: Resolved, name: str, index: int | None = None) -> str | None:
    """Where a field (or one item of a list field) was written, for errors: `planner.yaml:7`, or None."""
    if item.source.startswith("yaml:"):
        where = config.line_of(name, index) if index is not None else None  # type: ignore[arg-type]
        return f"{where[0]}:{where[1]}" if where else item.source[5:]
    if item.source.startswith("overlay "):
        return item.source
    return None


def _in_dependency_order(
    field_templates: dict[str, Any], bound: Mapping[str, Any], resolved: Mapping[str, Resolved]
) -> dict[str, Any]:
    """The templated fields ordered so that each comes after the templated fields it reads."""
    reading = {
        name: (reads(templates) & field_templates.keys()) - bound.keys() for name, templates in field_templates.items()
    }
    if not any(reading.values()):
        return field_templates
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "visiting":
            circle = [*path[path.index(name) :], name]
            source = resolved[circle[0]].source
            file, _, line = place(source).rpartition(":")
            raise ConfigError(
                ConfigIssue(
                    f"fields read each other in a circle: {' → '.join(circle)}; write one of them out without "
                    "the others' {{ }}",
                    circle[0],
                    file if source.startswith("yaml:") and file else None,
                    int(line) if source.startswith("yaml:") and line.isdigit() else None,
                )
            )
        state[name] = "visiting"
        for other in sorted(reading[name]):
            visit(other, [*path, name])
        state[name] = "done"
        order.append(name)

    for name in field_templates:
        visit(name, [])
    return {name: field_templates[name] for name in order}


def _compile_field(
    renderer: Renderer, name: str, text: str, where: str | None, origins: dict[str, str]
) -> CompiledTemplate:
    label = f"field '{name}'"
    if where:
        origins[label] = where
    try:
        return renderer.compile(text, label)
    except RenderError as exc:
        prefix = f"{where}: " if where else ""
        raise RenderError(
            f"{prefix}field '{name}' holds template syntax that does not parse: {exc.message}", line=exc.line
        ) from None


# a persona compiled once -------------------------------------------------------------------------


class PersonaPlan:
    """A persona compiled once for a deployment and template roots: the plans of its profiles.

    Made for a persona whose creations differ only in their fields (see `compiles_once`): each
    `resolve` looks the dynamic fields up for the context, exactly as `resolve.resolve_fields`
    would, and hands back the plan for what they gave and the values themselves. A persona
    without any dynamic field resolves to one plan per language and model, with no values of
    its own.

    `config` is the persona with its deployment's overlay, `persona` the persona as written (for
    error lines, its folder and the file traces name).
    """

    def __init__(self, config: PersonaModel, persona: PersonaModel, deployment: str | None, roots: tuple[Path, ...]):
        self.config = config
        self.persona = persona
        self.deployment = deployment
        self.roots = roots
        literal, dynamic = literal_fields(config)
        self.literal = literal
        #: The dynamic fields, language and model first, with what resolves them.
        self.dynamic: tuple[tuple[str, ConfigInfo], ...] = tuple((name, getattr(config, name)) for name in dynamic)
        self.origin = MappingProxyType({"file": persona._source_file, "deployment": deployment})
        self.renderer = get_renderer(roots)
        self._base_dir = persona._base_dir
        self._contexts: dict[tuple[Any, ...], Context] = {}
        self._plans: dict[tuple[Any, ...], ProfilePlan] = {}
        self._shared: dict[str, Any] | None = None
        self._lock = threading.Lock()
        #: The required fields that are literal and hold nothing (an overlay emptied them).
        self._empty_required = any(
            name in literal and literal[name].value in (None, "", ()) for name in REQUIRED_FIELDS
        )
        #: A persona without dynamic fields: its plan per (language, model), with nothing to look up.
        self._fixed = not self.dynamic
        #: Whether the language or the model is dynamic: the other fields are then looked up for
        #: what they resolve to, so each creation takes the general way (`_resolve`).
        self._general = any(name in ("language", "model") for name, _ in self.dynamic)
        self._infos = tuple(info for _, info in self.dynamic)
        self._names = tuple(name for name, _ in self.dynamic)
        self._required = tuple(position for position, (name, _) in enumerate(self.dynamic) if name in REQUIRED_FIELDS)
        self._language = literal["language"].value if "language" in literal else None
        self._model = literal["model"].value if "model" in literal else None

    def context(self, language: str | None, model: str | None, rollout_key: str | None) -> Context:
        """The context dynamic fields are looked up for; one object per (language, model, rollout key)."""
        key = (language, model, rollout_key)
        found = self._contexts.get(key)
        if found is None:
            found = Context(
                language=language,
                model=model,
                deployment=self.deployment,
                base_dir=self._base_dir,
                rollout_key=rollout_key,
            )
            with self._lock:
                if len(self._contexts) >= MAX_PLANS * 8:  # one per rollout key: users, sessions
                    self._contexts.clear()
                self._contexts[key] = found
        return found

    def resolve(
        self, language: str | None, model: str | None, rollout_key: str | None
    ) -> tuple[ProfilePlan, tuple[Resolved, ...]]:
        """The plan for one creation, and the values its dynamic fields gave, in the plan's order.

        Raises:
            ResolutionError: a provider failed or is unknown, or a required field resolved to nothing.
        """
        if self._fixed:
            if self._empty_required:  # an overlay emptied the name or role
                require_fields(self.config, self._resolved(language, model, (), ()))
            plan = self._plans.get((language, model))
            if plan is None:
                plan = self._remember((language, model), self._plan(language, model, (), ()))
            return plan, ()
        if self._general:
            return self._resolve(language, model, rollout_key)
        # language and model are the arguments or literal: every field is looked up for them
        chosen = (language or self._language, model or self._model, rollout_key)
        context = self._contexts.get(chosen)
        if context is None:
            context = self.context(*chosen)
        config = self.config
        found = [resolve_field(config, name, info, context) for name, info in self.dynamic]
        items = tuple(found)
        if self._empty_required or any(items[position].value in (None, "", ()) for position in self._required):
            require_fields(self.config, self._resolved(language, model, self._names, items), lines=self.persona)
        key = (language, model, *map(_shape_of, items))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._remember(key, self._plan(language, model, self._names, items))
        return plan, items

    def _resolve(
        self, language: str | None, model: str | None, rollout_key: str | None
    ) -> tuple[ProfilePlan, tuple[Resolved, ...]]:
        """`resolve` for a persona whose language or model is dynamic, in `resolve_fields`'s order."""
        items: list[Resolved] = []
        names: list[str] = []
        literal = self.literal
        chosen_language = language or (literal["language"].value if "language" in literal else None)
        chosen_model = model or (literal["model"].value if "model" in literal else None)
        asked = self.context(language, model, rollout_key)
        for name, info in self.dynamic:
            if name == "language":
                if language:
                    continue
                item = resolve_field(self.config, name, info, asked)
                chosen_language = item.value
            elif name == "model":
                if model:
                    continue
                item = resolve_field(self.config, name, info, asked)
                chosen_model = item.value
            else:
                if language == chosen_language and model == chosen_model:
                    context = asked
                else:
                    context = self.context(chosen_language, chosen_model, rollout_key)
                item = resolve_field(self.config, name, info, context)
            items.append(item)
            names.append(name)
        if self._empty_required or any(
            name in REQUIRED_FIELDS and item.value in (None, "", ()) for name, item in zip(names, items, strict=False)
        ):
            require_fields(self.config, self._resolved(language, model, names, items), lines=self.persona)
        key = (language, model, chosen_language, chosen_model, *names, *map(_shape_of, items))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._remember(key, self._plan(language, model, names, items))
        return plan, tuple(items)

    def _remember(self, key: tuple[Any, ...], plan: ProfilePlan) -> ProfilePlan:
        with self._lock:
            if len(self._plans) >= MAX_PLANS:
                self._plans.clear()
            self._plans[key] = plan
        return plan

    def _resolved(
        self, language: str | None, model: str | None, names: Sequence[str], items: Sequence[Resolved]
    ) -> dict[str, Resolved]:
        """Every field as `resolve_fields` gives it, in `PROFILE_FIELDS` order."""
        resolved = dict(self.literal)
        if language:
            resolved["language"] = Resolved(language, "argument")
        if model:
            resolved["model"] = Resolved(model, "argument")
        resolved.update(zip(names, items, strict=False))
        return {name: resolved[name] for name in PROFILE_FIELDS}

    def _plan(
        self, language: str | None, model: str | None, names: Sequence[str], items: Sequence[Resolved]
    ) -> ProfilePlan:
        resolved = self._resolved(language, model, names, items)
        if self._shared is None:
            # the same for every creation: none of these is dynamic (see `compiles_once`)
            config = self.config
            chosen = Context(deployment=self.deployment, base_dir=self._base_dir)
            self._shared = {
                "settings": resolve_settings(config, chosen),
                "output_schema": config.output_schema,
                "variables": resolve_variables(config, chosen),
            }
        return build_plan(
            self.config,
            resolved,
            template_roots=self.roots,
            origin=self.origin,
            deployment=self.deployment,
            dynamic=tuple(names),
            renderer=self.renderer,
            **self._shared,
        )


def _shape_of(item: Resolved) -> Any:
    """What of a dynamic value decides its plan: whether it is secret or empty, and, when it
    holds template syntax, its text and where it was written (its compiled template's origin)."""
    value = item.value
    if type(value) is str and "{" not in value and not item.secret:
        return False  # plain text, the usual answer
    if item.secret or value is None:
        return (item.secret, value is None)
    if isinstance(value, str):
        return (value, item.source) if has_template_syntax(value) else False
    if isinstance(value, tuple) and any(isinstance(part, str) and has_template_syntax(part) for part in value):
        return (value, item.source)
    return False


def compiles_once(config: PersonaModel) -> bool:
    """Whether only a persona's fields can differ from one creation to the next, so it compiles
    into a `PersonaPlan`: no factory, no template, include or output schema from the store, no
    dynamic `variables:` entry or model setting."""
    memo = config.__pydantic_private__["_memo"]
    found = memo.get("compiles_once")
    if found is None:
        found = memo["compiles_once"] = (
            config.factory is None
            and not any(item.store_key or STORE_PREFIX in item.source for item in config.templates.values())
            and not any(isinstance(value, ConfigInfo) for value in config.variables.values())
            and not any(isinstance(value, ConfigInfo) for value in config.model_settings.settings().values())
            and not (config.output_schema is not None and config.output_schema.store_key)
        )
    return found  # type: ignore[no-any-return]


def persona_plan(persona: PersonaModel, deployment: str | None, roots: tuple[Path, ...]) -> PersonaPlan | None:
    """The `PersonaPlan` of `persona` for `deployment` (its overlay applied) and the extra
    template `roots` (the environment's), made once and kept with the persona (which never
    changes); None when the persona does not compile once."""
    memo = persona.__pydantic_private__["_memo"]
    plans: dict[Any, PersonaPlan | None] | None = memo.get("plans")
    if plans is None:
        plans = memo.setdefault("plans", {})
    key = (deployment, roots)
    found = plans.get(key, plans)
    if found is plans:
        overlaid = for_deployment(persona, deployment)
        found = (
            PersonaPlan(overlaid, persona, deployment, (*overlaid.template_roots, *roots))
            if compiles_once(overlaid)
            else None
        )
        if len(plans) >= MAX_PLANS:
            plans.clear()
        plans[key] = found
    return found  # type: ignore[return-value]
