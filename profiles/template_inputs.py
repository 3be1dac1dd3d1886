"""Declared inputs against the variables a persona's templates read, checked when it is loaded.

Once a persona declares `inputs:`, every variable its templates read must be one of: a persona
field (`name`, `goal`, …), an input the library gives that prompt kind (`question`,
`most_recent_memories`, `tools`, …), a default under `variables:`, or a declared input. Any other
is a typo or a forgotten declaration, and loading the persona fails with the template's file and
line, before anything renders. A declared input no template reads warns
(`UnusedInputWarning`), at the declaration's line.

The templates checked are those the persona itself picks: its own `templates:`, and for each kind
it renders (system, user, write_memory, the kinds of its `messages:` layout, `react` when it has
tools) the template its template roots and the bundled ones give for its own language and model.
Templates that depend on the context (`{store: …}`, a dynamic language or model,
`PROFILES_TEMPLATE_PATH`) are checked again when the profile renders them.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .dynconfig import ConfigInfo
from .errors import ConfigIssue, ProfilesError
from .fields import LIST_FIELDS, PROFILE_FIELDS, TEXT_FIELDS, TemplateSource
from .rendering.renderer import CompiledTemplate, Renderer, get_renderer, has_template_syntax
from .rendering.templates import PROMPT_INPUTS, PROMPT_KINDS

if TYPE_CHECKING:
    from .config import PersonaModel

__all__ = ["FILLED_INPUTS", "UnusedInputWarning", "check_declared_inputs", "known_variables"]

#: Variables the library fills for every kind, whatever the kind's own inputs.
FILLED_INPUTS = frozenset({"react", "tools", "tool_names", "resources", "out_schema"})


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


def _views(config: PersonaModel) -> list[_View]:
    def view(where: str, source: Any, over: Any = None) -> _View:
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
            views.append(view(f"deployment {name!r}: ", config, overlay))
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


def _place(
    config: PersonaModel, renderer: Renderer, kind: str, compiled: CompiledTemplate, own: Any, line: int | None
) -> tuple[str, str | None, int | None]:
    """(field path, file, line) of a variable read at `line` of `compiled`."""
    source_file = config.source_file
    if own is not None and own.origin.startswith("file:"):
        relative = own.origin[len("file:") :]
        base = Path(source_file).parent if source_file else None
        return f"templates.{kind}", str(base / relative) if base else relative, line
    if own is not None:
        found = config.line_of("templates", kind) or config.line_of("templates")
        return f"templates.{kind}", found[0] if found else source_file, found[1] if found else None
    for root in renderer.roots:
        path = Path(root) / compiled.name
        if path.is_file():
            return "", str(path), line
    return "", source_file, None


def check_declared_inputs(config: PersonaModel) -> list[ConfigIssue]:
    """Problems with the templates of a persona that declares `inputs:`; warns of unread inputs.

    Each problem names the template's file and line, the variable, and how to fix it.
    """
    issues: list[ConfigIssue] = []
    seen: set[tuple[Any, ...]] = set()  # an overlay that keeps a template reports none of its problems again
    used_by_base: set[str] = set()
    for index, view in enumerate(_views(config)):
        renderer = get_renderer(view.roots)
        used: set[str] = set()
        for kind in view.kinds:
            compiled = _template(renderer, view, kind)
            if compiled is None:
                continue
            used |= compiled.declared
            known = known_variables(kind, view.variables, view.inputs)
            for name in sorted(compiled.declared - known, key=lambda item: (compiled.line_of(item) or 0, item)):
                line = compiled.line_of(name)
                own = view.templates.get(kind)
                path, file, at = _place(config, renderer, kind, compiled, own, line)
                if (compiled.name, compiled.source, name) in seen:
                    continue
                seen.add((compiled.name, compiled.source, name))
                template_line = (
                    f" line {line}" if line and own is not None and not own.origin.startswith("file:") else ""
                )
                issues.append(
                    ConfigIssue(
                        f"{view.where}{compiled.label}{template_line} reads {name!r}, "
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
                for name in sorted(compiled.declared - every):
                    if (field_name, text, name) in seen:
                        continue
                    seen.add((field_name, text, name))
                    found = config.line_of(field_name)
                    issues.append(
                        ConfigIssue(
                            f"{view.where}field {field_name!r} reads {name!r}, which 'inputs:' does not declare; "
                            f"declare it (e.g. inputs: {{{name}: string}}) or give it a default under 'variables:'",
                            field_name,
                            found[0] if found else config.source_file,
                            found[1] if found else None,
                            loc=(field_name,),
                            code="undeclared_input",
                        )
                    )
        if index == 0:
            used_by_base = used
    if not issues:
        _warn_unused(config, used_by_base)
    return issues


def _warn_unused(config: PersonaModel, used: set[str]) -> None:
    for name in config.inputs:
        if name in used:
            continue
        found = config.line_of("inputs", name) or config.line_of("inputs")
        where = f"{found[0]}:{found[1]}: " if found else (f"{config.source_file}: " if config.source_file else "")
        warnings.warn(
            f"{where}input {name!r} is declared under 'inputs:' but no template of this persona reads it; "
            "remove the declaration, or use it in a template",
            UnusedInputWarning,
            stacklevel=4,
        )
