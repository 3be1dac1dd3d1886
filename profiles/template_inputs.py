"""Declared inputs against the variables a persona's templates read, checked when it is loaded.

Once a persona declares `inputs:`, every variable its templates read must be one of: a persona
field (`name`, `goal`, …), an input the library gives that prompt kind (`question`,
`most_recent_memories`, `tools`, …), a default under `variables:`, or a declared input. Any other
is a typo or a forgotten declaration, and loading the persona fails with the template's file and
line, before anything renders; a variable read in a file a template extends, includes or
imports is reported at that file and line. A declared input none of the templates, nor any file
they pull in, reads warns (`UnusedInputWarning`), at the declaration's line; a template that
includes a name computed at render time (`{% include kind ~ ".j2" %}`) leaves that unknown, so
then nothing is warned.

The templates checked are those the persona itself picks: its own `templates:`, and for each kind
it renders (system, user, write_memory, the kinds of its `messages:` layout and of its template
roots, `react` when it has tools) the template its template roots and the bundled ones give for
its own language and model.
Templates that depend on the context (`{store: …}`, a dynamic language or model,
`PROFILES_TEMPLATE_PATH`) are checked again when the profile renders them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .callers import warn_at_caller
from .dynconfig import ConfigInfo
from .errors import ConfigIssue, ProfilesError
from .fields import LIST_FIELDS, PROFILE_FIELDS, TEXT_FIELDS, TemplateSource
from .rendering.renderer import CompiledTemplate, Renderer, Variable, get_renderer, has_template_syntax
from .rendering.templates import PROMPT_INPUTS, PROMPT_KINDS

__all__ = ["FILLED_INPUTS", "UnusedInputWarning", "check_declared_inputs", "known_variables"]

#: Variables the library fills for every kind, whatever the kind's own inputs.
FILLED_INPUTS = frozenset({"react", "tools", "tool_names", "resources", "out_schema"})


class _Persona(Protocol):
    """What the check reads of a persona model besides its fields (`config.PersonaModel`, which
    runs the check while it validates: naming the class here would tie the two modules in a circle)."""

    @property
    def source_file(self) -> str | None: ...

    @property
    def deployments(self) -> Mapping[str, Any]: ...

    @property
    def inputs(self) -> Mapping[str, Any]: ...

    def line_of(self, *path: str) -> tuple[str, int] | None: ...


class UnusedInputWarning(UserWarning):
    """Warned when a persona declares an input that none of its templates reads."""


def known_variables(kind: str, variables: Iterable[str], inputs: Iterable[str]) -> frozenset[str]:
    """Every variable a template of `kind` may read once a persona declares its inputs."""
    return frozenset({*PROFILE_FIELDS, *PROMPT_INPUTS.get(kind, {}), *FILLED_INPUTS, *variables, *inputs})


@dataclass
class _View:
    """What decides which templates a persona renders: the base persona, or it with one overlay."""

    where: str
    templates: Mapping[str, TemplateSource]
    inputs: Mapping[str, Any]
    variables: Mapping[str, Any]
    language: str | None
    model: str | None
    kinds: tuple[str, ...]
    roots: tuple[Path, ...]
    fields: Mapping[str, Any] = field(default_factory=dict)
    #: The deployment whose overlay this view applies, None for the base persona.
    deployment: str | None = None

    def line_of(self, config: _Persona, *path: str) -> tuple[tuple[str, ...], tuple[str, int] | None]:
        """(field path, where it was written): in this view's overlay when the overlay writes it."""
        if self.deployment is not None:
            found = config.line_of("deployments", self.deployment, *path)
            if found is not None:
                return ("deployments", self.deployment, *path), found
        return path, config.line_of(*path)


def _literal(value: Any) -> Any:
    """A field's value as written, or a dynamic field's default (the value when nothing answers)."""
    return value.default if isinstance(value, ConfigInfo) else value


def _kinds(templates: Mapping[str, Any], layout: Any, tools: Any) -> tuple[str, ...]:
    kinds = [*PROMPT_KINDS, *(kind for kind in templates if kind not in PROMPT_KINDS)]
    for slot in layout or ():
        if slot.kind and slot.kind not in kinds:
            kinds.append(slot.kind)
    if tools and "react" not in kinds:
        kinds.append("react")
    return tuple(kinds)


def _views(config: _Persona) -> list[_View]:
    def view(where: str, source: Any, over: Any = None, deployment: str | None = None) -> _View:
        def pick(name: str) -> Any:
            return getattr(over, name) if over is not None and name in over.model_fields_set else getattr(source, name)

        def merged(name: str) -> dict[str, Any]:
            own = getattr(over, name) if over is not None and name in over.model_fields_set else {}
            return {**getattr(source, name), **own}

        templates = merged("templates")
        return _View(
            where,
            templates,
            merged("inputs"),
            merged("variables"),
            _text(_literal(pick("language"))),
            _text(_literal(pick("model"))),
            _kinds(templates, pick("messages"), pick("tools")),
            tuple(pick("template_roots")),
            {name: _literal(pick(name)) for name in PROFILE_FIELDS},
            deployment,
        )

    views = [view("", config)]
    watched = {
        "templates",
        "inputs",
        "variables",
        "language",
        "model",
        "tools",
        "messages",
        "template_roots",
        *PROFILE_FIELDS,
    }
    for name, overlay in config.deployments.items():
        if watched & overlay.model_fields_set:
            views.append(view(f"deployment {name!r}: ", config, overlay, name))
    return views


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _template(renderer: Renderer, view: _View, kind: str) -> CompiledTemplate | None:
    """The template `view` renders `kind` with, or None when it cannot be known or compiled yet."""
    own = view.templates.get(kind)
    try:
        if own is not None:
            if own.store_key:
                return None  # fetched per context; checked when it renders
            return renderer.compile(own.source, f"{kind} ({own.origin})")
        if kind not in PROMPT_KINDS and kind != "react" and kind not in renderer.kinds:
            return None  # an unknown kind is refused when it renders, naming the known ones
        family = renderer.family_for(view.model)
        return renderer.find(kind, view.language, family)
    except ProfilesError:
        return None  # a syntax error or a missing template is reported when it renders, and by `check`


def _find(renderer: Renderer, name: str) -> str | None:
    """The file under the renderer's roots that the template `name` was loaded from, if any."""
    for root in renderer.roots:
        path = Path(root) / name
        if path.is_file():
            return str(path)
    return None


def _place(
    config: _Persona,
    renderer: Renderer,
    kind: str,
    compiled: CompiledTemplate,
    own: Any,
    item: Variable,
    view: _View | None = None,
) -> tuple[str, str | None, int | None]:
    """(field path, file, line) of the read `item` of `compiled`: in its own text, or in a file it pulls in;
    a template an overlay of `view` writes is placed in that overlay."""
    source_file = config.source_file
    written, at = view.line_of(config, "templates", kind) if view is not None else (("templates", kind), None)
    path = ".".join(written) if own is not None else ""
    if item.template != compiled.name:  # read in a file the template extends, includes or imports
        found = _find(renderer, item.template)
        return path, found or source_file, item.line if found else None
    if own is not None and own.origin.startswith("file:"):
        relative = own.origin[len("file:") :]
        base = Path(source_file).parent if source_file else None
        return path, str(base / relative) if base else relative, item.line
    if own is not None:
        at = at or config.line_of("templates", kind) or config.line_of("templates")
        return path, at[0] if at else source_file, at[1] if at else None
    found = _find(renderer, compiled.name)
    return "", found or source_file, item.line if found else None


def _reader(compiled: CompiledTemplate, own: Any, item: Variable) -> str:
    """How an issue names the place that reads the variable (its file and line go with the issue)."""
    if item.template != compiled.name:
        return f"{item.where} (from {compiled.label})"
    if own is not None and not own.origin.startswith("file:"):
        return item.where  # an inline template: the line inside its text
    return compiled.label


def check_declared_inputs(config: _Persona) -> list[ConfigIssue]:
    """Problems with the templates of a persona that declares `inputs:`; warns of unread inputs.

    Each problem names the template's file and line, the variable, and how to fix it. A template
    is checked with every file it extends, includes or imports, and a variable read in one of
    those is reported at that file's line. An input counts as read when any of those files reads
    it; when a template includes a name computed at render time, which inputs it reads is not
    known, so no input is reported as unread.
    """
    issues: list[ConfigIssue] = []
    seen: set[tuple[Any, ...]] = set()  # an overlay that keeps a template reports none of its problems again
    used_by_base: set[str] = set()
    open_in_base = False
    for index, view in enumerate(_views(config)):
        renderer = get_renderer(view.roots)
        used: set[str] = set()
        closed = True
        # the kinds of its template roots render too (`prompts/default/en/handoff.j2`), as `check` renders them
        rooted = sorted(renderer.kinds - set(view.kinds) - {"react"})
        for kind in (*view.kinds, *rooted):
            compiled = _template(renderer, view, kind)
            if compiled is None:
                continue
            used |= compiled.declared
            closed = closed and compiled.closed
            known = known_variables(kind, view.variables, view.inputs)
            own = view.templates.get(kind)
            for name in sorted(compiled.declared - known, key=lambda item: (compiled.line_of(item) or 0, item)):
                item = compiled.variables[name]
                # a file another template pulls in is reported once, whichever template reads it
                pulled_in = item.template != compiled.name
                key = (item.template, name) if pulled_in else (compiled.name, compiled.source, name)
                if key in seen:
                    continue
                seen.add(key)
                path, file, at = _place(config, renderer, kind, compiled, own, item, view)
                issues.append(
                    ConfigIssue(
                        f"{view.where}{_reader(compiled, own, item)} reads {name!r}, "
                        "which 'inputs:' does not declare; "
                        f"declare it (e.g. inputs: {{{name}: string}}) or give it a default under 'variables:'",
                        path,
                        file,
                        at,
                        loc=("inputs",),
                        code="undeclared_input",
                    )
                )
        every = known_variables("", view.variables, view.inputs) | {
            name for kind in view.kinds for name in PROMPT_INPUTS.get(kind, {})
        }
        for field_name in (*TEXT_FIELDS, *LIST_FIELDS):
            value = view.fields.get(field_name)
            for text in value if isinstance(value, (list, tuple)) else (value,):
                if not isinstance(text, str) or not has_template_syntax(text):
                    continue
                try:
                    compiled = renderer.compile(text, f"field '{field_name}'")
                except ProfilesError:
                    continue
                used |= compiled.declared
                closed = closed and compiled.closed
                for name in sorted(compiled.declared - every):
                    if (field_name, text, name) in seen:
                        continue
                    seen.add((field_name, text, name))
                    item = compiled.variables[name]
                    where = f" ({item.where})" if item.template != compiled.name else ""
                    written, found = view.line_of(config, field_name)
                    issues.append(
                        ConfigIssue(
                            f"{view.where}field {field_name!r}{where} reads {name!r}, which 'inputs:' does not "
                            f"declare; declare it (e.g. inputs: {{{name}: string}}) or give it a default under "
                            "'variables:'",
                            ".".join(written),
                            found[0] if found else config.source_file,
                            found[1] if found else None,
                            loc=written,
                            code="undeclared_input",
                        )
                    )
        if index == 0:
            used_by_base = used
            open_in_base = not closed
    if not issues and not open_in_base:
        _warn_unused(config, used_by_base)
    return issues


def _warn_unused(config: _Persona, used: set[str]) -> None:
    for name in config.inputs:
        if name in used:
            continue
        found = config.line_of("inputs", name) or config.line_of("inputs")
        where = f"{found[0]}:{found[1]}: " if found else (f"{config.source_file}: " if config.source_file else "")
        warn_at_caller(
            f"{where}input {name!r} is declared under 'inputs:' but no template of this persona reads it; "
            "remove the declaration, or use it in a template",
            UnusedInputWarning,
        )
