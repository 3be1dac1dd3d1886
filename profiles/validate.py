"""`profiles validate`: whether a persona can render, found without rendering it.

Loading checks each field's value; this goes on to compile what the persona will render, in the
same sandbox that renders it: each template of its `templates:` (its overlays' too), each
template in its template roots, and each field value holding template syntax (a literal, or a
dynamic field's default). A template that does not parse is an error at the field or template
that holds it.

Every variable those templates read is compared with what the persona gives: its fields, the
inputs of the prompt kind, its `variables:`, its declared `inputs:` and its `samples:`. A variable
none of these gives may still be passed at render time (`--var agents=…`), so it is an error only
when it is a likely typo of a name the persona does give (`{{ nmae }}`: did you mean 'name'?);
declaring it under `samples:` or `variables:` says it is meant. (With `inputs:` declared, loading
already refuses every undeclared variable.) `profiles check` goes further: it renders every
kind with the samples and reports every variable nobody gives.

Templates named `{store: …}` are fetched when a profile is created, so they are not checked here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .config import PersonaModel
from .dynconfig import ConfigInfo
from .errors import ConfigIssue, RenderError, closest
from .fields import PROFILE_FIELDS, TemplateSource
from .rendering.renderer import CompiledTemplate, Renderer, get_renderer, has_template_syntax
from .rendering.templates import PROMPT_INPUTS, PROMPT_KINDS, REQUIRED_VARIABLES

__all__ = ["kind_inputs", "validate_config"]

#: Names every kind may read besides its own inputs: the tools, their names, the resources, and
#: the ReAct labels (`react`).
SHARED_NAMES = frozenset({"tools", "tool_names", "resources", "react"})


def kind_inputs(kind: str) -> frozenset[str]:
    """The inputs a template of `kind` may read without the persona giving them."""
    return frozenset(PROMPT_INPUTS.get(kind, {})) | SHARED_NAMES


def validate_config(config: PersonaModel) -> list[ConfigIssue]:
    """Every template and field template `config` would render, compiled; every likely typo in them.

    Never raises for a problem in the persona: each is an issue, with file and line when known.
    """
    checker = _Checker(config)
    checker.persona((), config)
    for deployment, overlay in config.deployments.items():
        checker.persona(("deployments", deployment), overlay, merged=config.for_deployment(deployment))
    return checker.issues


class _Checker:
    def __init__(self, config: PersonaModel) -> None:
        self.config = config
        self.issues: list[ConfigIssue] = []
        self._roots_done: set[tuple[Any, ...]] = set()

    def persona(self, prefix: tuple[str, ...], part: Any, merged: PersonaModel | None = None) -> None:
        """Check what `part` (the persona, or one overlay) sets itself, with names from the merged persona."""
        whole = merged or self.config
        renderer = get_renderer(whole.template_roots)
        own = part.model_fields_set if prefix else set(PROFILE_FIELDS) | {"templates"}
        kinds = sorted({*PROMPT_KINDS, *renderer.kinds, *whole.templates, *whole.kinds})
        every_kind = frozenset().union(*(self._given(whole, kind) for kind in kinds))
        for field in PROFILE_FIELDS:
            if field in own:
                for label, text in _field_texts(field, getattr(part, field)):
                    self._field(renderer, prefix, field, label, text, every_kind)
        if "templates" in own:
            for kind, source in part.templates.items():
                self._own_template(renderer, prefix, kind, source, self._given(whole, kind))
        if "messages" in own or not prefix:
            self._layout(prefix, part.messages, kinds)
        roots = tuple(whole.template_roots)
        if roots and roots not in self._roots_done:
            self._roots_done.add(roots)
            self._root_templates(renderer, whole, prefix)

    def _layout(self, prefix: tuple[str, ...], layout: Any, kinds: list[str]) -> None:
        """A message of the layout names a kind nothing renders: rendering it would fail every time."""
        for index, slot in enumerate(layout or ()):
            kind = getattr(slot, "kind", None)
            if kind is None or kind in kinds:
                continue
            close = closest(kind, kinds)
            hint = f"did you mean {close!r}? Else add" if close else "add"
            self._issue(
                f"the message layout sends prompt kind {kind!r}, which has no template; {hint} a template for it "
                f"under 'templates:' or as <family>/<locale>/{kind}.j2 in a template root",
                *prefix, "messages", str(index),
            )

    def _given(self, config: PersonaModel, kind: str) -> frozenset[str]:
        """What a template of `kind` may read: fields, the kind's inputs, variables, declared inputs and samples."""
        samples = config.samples
        own = samples.get(kind) if isinstance(samples.get(kind), Mapping) else {}
        shared = {name for name, value in samples.items() if not isinstance(value, Mapping)}
        given = {*config.variables, *config.inputs, *shared, *(own or {})}
        return frozenset(PROFILE_FIELDS) | kind_inputs(kind) | given

    def _where(self, *path: str) -> tuple[str | None, int | None]:
        for length in range(len(path), 0, -1):
            found = self.config.line_of(*path[:length])
            if found is not None:
                return found
        return self.config.source_file, None

    def _issue(self, message: str, *path: str) -> None:
        file, line = self._where(*path)
        self.issues.append(ConfigIssue(message, ".".join(path), file, line))

    def _compile(self, renderer: Renderer, source: str, name: str, *path: str) -> CompiledTemplate | None:
        try:
            return renderer.compile(source, name)
        except RenderError as exc:
            self._issue(exc.message, *path)
            return None

    def _field(
        self, renderer: Renderer, prefix: tuple[str, ...], field: str, label: str, text: str, given: frozenset[str]
    ) -> None:
        # an item of a list field is `constraints.1`, as pydantic names it in the load's own issues
        path = (*prefix, field) if label == field else (*prefix, field, label[len(field) + 1 : -1])
        name = f"field '{label}'"
        try:
            compiled = renderer.compile(text, name)
        except RenderError as exc:
            # the renderer names the template; here the issue names the field already
            reason = exc.message.removeprefix(f"template {name!r} ")
            self._issue(f"its template syntax does not parse: {reason}", *path)
            return
        self._typos(compiled, given, path, own_text=True)

    def _own_template(
        self, renderer: Renderer, prefix: tuple[str, ...], kind: str, source: TemplateSource, given: frozenset[str]
    ) -> None:
        if source.store_key:
            return  # fetched from the store when a profile is created
        path = (*prefix, "templates", kind)
        compiled = self._compile(renderer, source.source, f"{kind} ({source.origin})", *path)
        if compiled is None:
            return
        needed = REQUIRED_VARIABLES.get(kind, {})
        missing = [name for name in needed if name not in compiled.declared]
        if missing:
            reasons = "; ".join(f"{{{{ {name} }}}}: {needed[name]}" for name in missing)
            self._issue(f"{compiled.label} replaces the {kind} prompt but does not use {', '.join(missing)}; "
                        f"add {reasons}", *path)
        self._typos(compiled, given, path)

    def _root_templates(self, renderer: Renderer, config: PersonaModel, prefix: tuple[str, ...]) -> None:
        """The templates in the persona's own roots: those it renders when no `templates:` entry wins."""
        for root in config.template_roots:
            for file in sorted(root.glob("*/*/*.j2")):
                name = file.relative_to(root).as_posix()
                try:
                    compiled = renderer.load(name)
                except RenderError as exc:
                    self._issue(exc.message, *prefix, "template_roots")
                    continue
                self._typos(compiled, self._given(config, file.stem), (*prefix, "template_roots"))

    def _typos(
        self, compiled: CompiledTemplate, given: frozenset[str], path: tuple[str, ...], *, own_text: bool = False
    ) -> None:
        """Report each variable that is a likely typo of a name the persona gives.

        `own_text` is a field's own value, which the issue's field already names.
        """
        for name in sorted(compiled.declared - given):
            close = closest(name, given)
            if close is None:
                continue  # may be given at render time; `profiles check` renders with the samples
            line = compiled.line_of(name)
            if own_text:
                where = f"line {line}" if line else "its text"
            else:
                where = compiled.where(name)  # the file that reads it: this one, or one it extends or includes
            self._issue(
                f"{where} uses {name!r}, which this persona does not give; did you mean {close!r}? If {name!r} is "
                "passed at render time, list it under 'samples:' (or 'variables:' with a default)",
                *path,
            )


def _field_texts(field: str, value: Any) -> Iterable[tuple[str, str]]:
    """The texts of a field that hold template syntax, each with the label messages use (`constraints[2]`)."""
    if isinstance(value, ConfigInfo):
        if value.secret:
            return  # a secret's value is data, never a template
        value = value.default
    if isinstance(value, str):
        if has_template_syntax(value):
            yield field, value
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if isinstance(item, str) and has_template_syntax(item):
                yield f"{field}[{index}]", item
