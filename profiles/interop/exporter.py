"""Exporting: a persona's prompts, rendered by the persona itself, with every input left as a placeholder.

An exporter never re-implements rendering. It asks the profile to render each prompt of its
message layout with every input (and the question) set to a marker, then cuts the text at the
markers: literal text and placeholders, which each format writes in its own syntax. So the
exported prompt is what the persona would send, for the deployment asked, with the holes where
the caller's values go. Templates are checked first: a placeholder used by anything but a plain
`{{ name }}` (a filter, a loop, a comparison) cannot become another tool's placeholder and is
refused, except a condition that only tests whether it was given, which is written as given.

Secrets never reach a file: a field that holds a secret becomes a placeholder of its own
(Prompty: an input whose default is the `${env:KEY}` it came from), and a secret model setting
or model is refused where the format has no reference syntax.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..context import Resolved
from ..errors import ExportError
from ..fields import PROFILE_FIELDS
from ..messages import role_of
from ._draft import RESTORED_FIELDS, Note
from .placeholders import Piece, Unsupported, Var, from_jinja

__all__ = ["Exportable", "Message", "Placeholder", "export_files", "prepare"]

_OPEN, _CLOSE = "\ue000", "\ue001"
_MARK = re.compile(_OPEN + r"([A-Za-z_][A-Za-z0-9_]*)" + _CLOSE)
_HISTORY = _OPEN + "history" + _CLOSE + "\ue002"

#: Variables the library fills or documents with a default of nothing; never an exported input.
_FILLED = frozenset({
    "most_recent_memories", "resource_prompt", "out_schema", "now_time", "is_retry_chat", "resources", "thought",
    "action", "observation", "tools", "tool_names", "react",
})

#: Filters that keep a placeholder's value as it is, for a non-empty text.
_KEEPING_FILTERS = frozenset({"trim", "string"})

_MISSING: Any = object()


@dataclass
class Placeholder:
    """A hole in the exported prompts: an input, the question, a variable without value, or a secret."""

    name: str
    spec: Any = None
    default: Any = _MISSING
    #: Set when the placeholder stands for a secret field: its resolved value and source.
    secret: Resolved | None = None
    #: `plain`, or `condition` when a template also tests whether it was given.
    usage: str = "plain"

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING

    @property
    def kind(self) -> str:
        """The placeholder's JSON type: its input's, else its default's, else text."""
        if self.spec is not None and self.spec.types:
            return str(self.spec.types[0])
        if self.has_default and self.default is not None:
            value = self.default
            for kind, python in (("boolean", bool), ("integer", int), ("number", float), ("array", (list, tuple)),
                                 ("object", dict)):
                if isinstance(value, python):
                    return kind
        return "string"

    @property
    def env_key(self) -> str | None:
        """The env key a secret was read from (`env:KEY` or `env:KEY from .env`), if it was."""
        if self.secret is None:
            return None
        match = re.match(r"env:([A-Za-z_][A-Za-z0-9_.\-]*)", self.secret.source)
        return match.group(1) if match else None


@dataclass
class Message:
    """One slot of the layout: a prompt kind's text, or the history (kind None)."""

    kind: str | None
    role: str
    pieces: list[Piece] = field(default_factory=list)
    #: The persona's own template for the kind (its Jinja source), where it has one.
    source: str | None = None
    #: The text the format writes for the kind as it is, instead of `pieces` (see `prepare`).
    written: str | None = None


@dataclass
class Exportable:
    """A persona ready to be written in another format: its profile, prompts and placeholders."""

    config: Any
    profile: Any
    format: str
    placeholders: dict[str, Placeholder]
    messages: list[Message]
    notes: list[Note] = field(default_factory=list)
    #: The persona's own prompt kinds that no message of the layout sends (CrewAI tasks, say).
    others: dict[str, Message] = field(default_factory=dict)

    @property
    def imported(self) -> Mapping[str, Any]:
        return self.config.metadata.get("imported") or {}

    @property
    def same_format(self) -> bool:
        """Whether the persona was imported from the format it is written in."""
        return self.imported.get("format") == self.format

    @property
    def native(self) -> Mapping[str, Any]:
        """What the import kept for this format under `metadata.<format>`."""
        value = self.config.metadata.get(self.format) if self.same_format else None
        return value if isinstance(value, Mapping) else {}

    def note(self, kind: str, message: str) -> None:
        self.notes.append(Note(kind, message, self.config.source_file))

    def source_name(self, name: str) -> str:
        """The name a placeholder is written under: the format's own, when the import renamed it."""
        renamed = self.imported.get("renamed") or {}
        if self.same_format and isinstance(renamed, Mapping) and isinstance(renamed.get(name), str):
            return str(renamed[name])
        return name

    def identifier(self, fallback: str) -> str:
        """The id the source format used, when imported from it; else `fallback`."""
        value = self.imported.get("id")
        return str(value) if self.same_format and isinstance(value, str) and value else fallback

    def value(self, name: str) -> Any:
        return self.profile.values.get(name)

    def text(self, kind: str) -> list[Piece] | None:
        for message in self.messages:
            if message.kind == kind:
                return message.pieces
        return None

    def home(self, native: Sequence[str]) -> dict[str, Any]:
        """Persona fields the format has no place for: for its free-form metadata (`agent_profiles:`).

        Fields an import derived are left out, so importing the file again derives them again.
        """
        derived = set(self.imported.get("derived") or ())
        block: dict[str, Any] = {}
        for name in RESTORED_FIELDS:
            if name in native or name in derived:
                continue
            if name == "metadata":
                kept = {key: value for key, value in self.config.metadata.items()
                        if key not in ("imported", self.format)}
                if kept:
                    block["metadata"] = kept
                continue
            value = self._written(name)
            if value not in (None, {}, [], ()):
                block[name] = value
        return block

    def _written(self, name: str) -> Any:
        """A field as the persona file has it (a dynamic field's default, never a provider's secret)."""
        if name in ("variables", "samples"):
            return dict(getattr(self.config, name))
        item = self.profile.resolved.get(name)
        if item is None or item.value is None:
            return None
        if item.secret:
            self.note("secret", f"{name} holds a secret (source {item.source}); not written")
            return None
        value = item.value
        return list(value) if isinstance(value, tuple) else value

    def field_pieces(self, name: str, *, inline_defaults: bool) -> list[Piece]:
        """A text field as pieces, placeholders for inputs, defaults written in when asked.

        Raises:
            ExportError: the field holds a Jinja expression or statement.
        """
        item = self.profile.resolved.get(name)
        if item is None or item.value is None:
            return []
        if item.secret:
            self.placeholders.setdefault(name, Placeholder(name, secret=item))
            return [Var(name)]
        return self.text_pieces(str(item.value), f"field {name!r}", inline_defaults=inline_defaults)

    def list_pieces(self, name: str, *, inline_defaults: bool) -> list[list[Piece]]:
        """A list field's items as pieces each (see `field_pieces`)."""
        item = self.profile.resolved.get(name)
        if item is None or not item.value:
            return []
        if item.secret:
            self.placeholders.setdefault(name, Placeholder(name, secret=item))
            return [[Var(name)]]
        return [
            self.text_pieces(str(text), f"{name}[{index}]", inline_defaults=inline_defaults)
            for index, text in enumerate(item.value)
        ]

    def text_pieces(self, text: str, where: str, *, inline_defaults: bool) -> list[Piece]:
        try:
            pieces = from_jinja(text)
        except Unsupported as exc:
            raise ExportError(
                f"{where} of {self.label}: {exc.reason}; {self.format} takes only plain text with "
                "placeholders, so write it as text with {{ name }} placeholders"
            ) from None
        out: list[Piece] = []
        for piece in pieces:
            if isinstance(piece, Var) and piece.name not in self.placeholders:
                value = self.profile.bound.get(piece.name, _MISSING)
                if value is _MISSING and piece.name in self.profile.values:
                    value = self.profile.values[piece.name]
                if value is _MISSING:
                    self.placeholders[piece.name] = Placeholder(piece.name, self.profile.inputs.get(piece.name))
                    out.append(piece)
                elif inline_defaults or piece.name not in self.profile.bound:
                    out.append("" if value is None else str(value))
                else:
                    self.placeholders[piece.name] = Placeholder(piece.name, None, value)
                    out.append(piece)
            else:
                out.append(piece)
        return out

    @property
    def label(self) -> str:
        return self.config.source_file or f"persona {self.value('name')!r}"


def _untyped(spec: Any) -> Any:
    return replace(spec, types=(), enum=None)


def _usages(sources: list[str], names: set[str]) -> dict[str, str]:
    """How each name is used by the Jinja sources: `plain`, `condition`, or the first other use."""
    import jinja2
    from jinja2 import nodes

    environment = jinja2.Environment()
    found: dict[str, str] = {}
    for source in sources:
        try:
            tree = environment.parse(source)
        except jinja2.TemplateSyntaxError:
            continue
        stack: list[tuple[nodes.Node, list[nodes.Node]]] = [(tree, [])]
        while stack:
            node, parents = stack.pop()
            if isinstance(node, nodes.Name) and node.ctx == "load" and node.name in names:
                found[node.name] = _worst(found.get(node.name, "plain"), _usage(node, parents))
            for child in node.iter_child_nodes():
                stack.append((child, [*parents, node]))
    return found


def _usage(node: Any, parents: list[Any]) -> str:
    from jinja2 import nodes

    current = node
    for parent in reversed(parents):
        if isinstance(parent, nodes.Filter) and parent.node is current and parent.name in _KEEPING_FILTERS:
            current = parent
            continue
        if isinstance(parent, nodes.Output):
            return "plain"
        if isinstance(parent, (nodes.If, nodes.CondExpr)) and parent.test is current:
            return "condition"
        if isinstance(parent, nodes.Not) and parent.node is current:
            return "condition"
        if isinstance(parent, nodes.Filter):
            return f"the filter {parent.name!r}"
        if isinstance(parent, nodes.For):
            return "a loop"
        if isinstance(parent, nodes.Getattr):
            return f"its attribute {parent.attr!r}"
        if isinstance(parent, nodes.Getitem):
            return "an index"
        return f"a {type(parent).__name__.lower()} expression"
    return "plain"


def _worst(first: str, second: str) -> str:
    order = {"plain": 0, "condition": 1}
    return first if order.get(first, 2) >= order.get(second, 2) else second


def prepare(
    persona: Any,
    format: str,
    *,
    deployment: str | None = None,
    language: str | None = None,
    model: str | None = None,
    inline_defaults: bool = False,
    verbatim: Callable[[Exportable, str, str], str | None] | None = None,
) -> Exportable:
    """Render a persona's prompts for `format`, with markers where the caller's values go.

    `persona` is a persona file or a `ProfileConfig`. `inline_defaults` writes the value of a
    variable with a default into the text (for formats without defaults). `verbatim`, for a
    format that renders Jinja itself, returns a kind's own template as that format takes it
    (or None): such a kind is written as its template, not rendered.

    Raises:
        ExportError: a placeholder is used in a way the text cannot keep (a filter, a loop).
        ProfilesError: the persona does not load or render.
    """
    from ..loader import load_profile
    from ..profile import DefaultProfile

    if isinstance(persona, (str, Path)):
        persona = load_profile(persona)
    if isinstance(persona, DefaultProfile) or not hasattr(persona, "create_profile"):
        raise ExportError("export takes a persona file or a ProfileConfig, which carry the persona's own fields")
    config = persona
    profile = config.create_profile(deployment=deployment, language=language, model=model)
    slots = list(profile.layout)
    kinds = [slot.kind for slot in slots if slot.kind]
    others = [kind for kind in profile.templates if kind not in kinds]
    plans = {kind: profile._plan(kind) for kind in [*kinds, *others]}
    used: set[str] = set()
    for plan in plans.values():
        used |= set(plan.used)
    # every secret a prompt reads, allowed into prompts or not: a file gets a reference, never the value
    secret = {name for name, item in profile.resolved.items() if item.secret and item.value is not None} & used
    order = [*profile.inputs, "question", *sorted(used)]
    placeholders: dict[str, Placeholder] = {}
    for name in dict.fromkeys(order):
        if name not in used or name in _FILLED or (name in PROFILE_FIELDS and name not in secret):
            continue
        spec = profile.inputs.get(name)
        if name in secret:
            placeholders[name] = Placeholder(name, None, secret=profile.resolved[name])
        elif name in profile.bound:
            # an optional input stays a placeholder even where defaults are written in
            if not inline_defaults or (spec is not None and not spec.required):
                placeholders[name] = Placeholder(name, spec, profile.bound[name])
        elif name not in profile.values:
            placeholders[name] = Placeholder(name, spec)
    exportable = Exportable(config, profile, format, placeholders, [])
    written: dict[str, str] = {}
    if verbatim is not None:
        for kind in plans:
            if kind in profile.templates:
                text = verbatim(exportable, kind, profile.templates[kind].source)
                if text is not None:
                    written[kind] = text
    sources: list[str] = [plan.compiled.source for kind, plan in plans.items() if kind not in written]
    fields_read: set[str] = set()
    for kind, plan in plans.items():
        if kind not in written:
            fields_read |= {name for name, _ in plan.fields}
    for name in fields_read:
        value = profile.values.get(name)
        sources += [value] if isinstance(value, str) else [item for item in value or () if isinstance(item, str)]
    for name, how in _usages(sources, set(placeholders)).items():
        if how == "condition":
            placeholders[name].usage = "condition"
            if name != "question":
                exportable.note("converted", f"a template tests whether {name!r} is given; written as if it always is")
        elif how != "plain":
            raise ExportError(
                f"{exportable.label}: a template uses {name!r} through {how}; {format} can only put a value in as it "
                f"is, so write it as {{{{ {name} }}}}, or give it a fixed value (--var {name}=…)"
            )
    _render(exportable, slots, others, written)
    return exportable


def _render(exportable: Exportable, slots: list[Any], others: list[str], written: dict[str, str]) -> None:
    profile = exportable.profile
    placeholders = exportable.placeholders
    values = dict(profile.values)
    resolved = dict(profile.resolved)
    for name, placeholder in placeholders.items():
        if placeholder.secret is not None:
            values[name] = _OPEN + name + _CLOSE
            resolved[name] = Resolved(values[name], "export placeholder")
    marked = replace(
        profile,
        inputs=MappingProxyType({name: _untyped(spec) for name, spec in profile.inputs.items()}),
        values=MappingProxyType(values),
        resolved=MappingProxyType(resolved),
        bound=MappingProxyType({key: value for key, value in profile.bound.items() if key not in placeholders}),
        plans={},
    )
    given = {name: _OPEN + name + _CLOSE for name, item in placeholders.items() if item.secret is None}

    def message(kind: str, role: str) -> Message:
        source = profile.templates[kind].source if kind in profile.templates else None
        if kind in written:
            return Message(kind, role, [], source, written[kind])
        return Message(kind, role, _cut(marked.format_prompt(kind, **given), exportable), source)

    for slot in slots:
        if slot.history:
            exportable.messages.append(Message(None, "history"))
            continue
        made = message(slot.kind, role_of(slot, profile.roles))
        if made.pieces or made.written is not None:
            exportable.messages.append(made)
    for kind in others:
        exportable.others[kind] = message(kind, profile.roles.get(kind, "user"))


def _cut(text: str, exportable: Exportable) -> list[Piece]:
    pieces: list[Piece] = []
    position = 0
    for match in _MARK.finditer(text):
        if match.start() > position:
            pieces.append(text[position : match.start()])
        pieces.append(Var(match.group(1)))
        position = match.end()
    rest = text[position:]
    if rest:
        pieces.append(rest)
    stray = [piece for piece in pieces if isinstance(piece, str) and (_OPEN in piece or _CLOSE in piece)]
    if stray:
        raise ExportError(
            f"{exportable.label}: a template changes a placeholder's value (a filter such as upper); "
            f"{exportable.format} can only put the value in as it is"
        )
    return pieces


def export_files(
    persona: Any,
    format: str,
    *,
    deployment: str | None = None,
    language: str | None = None,
    model: str | None = None,
    **options: Any,
) -> dict[str, str]:
    """The files of `format` for one persona (or, for `crewai`, a list of them: a crew), by name.

    Raises:
        ExportError: the format is unknown, or the persona cannot be written in it.
    """
    return write(persona, format, deployment=deployment, language=language, model=model, **options)[0]


def write(
    persona: Any,
    format: str,
    *,
    deployment: str | None = None,
    language: str | None = None,
    model: str | None = None,
    **options: Any,
) -> tuple[dict[str, str], list[Note]]:
    """Like `export_files`, with the notes on what was written in, converted or left out."""
    from importlib import import_module

    from .formats import EXPORT_FORMATS, IMPORT_FORMATS

    if format not in EXPORT_FORMATS:
        raise ExportError(f"unknown export format {format!r}; the formats are {', '.join(EXPORT_FORMATS)}")
    module = import_module(f".{IMPORT_FORMATS[format]}", __package__)
    personas = list(persona) if isinstance(persona, (list, tuple)) else [persona]
    if len(personas) != 1 and not getattr(module, "MANY", False):
        raise ExportError(f"{format} writes one persona per file; export them one at a time")
    inline = getattr(module, "INLINE_DEFAULTS", False)
    verbatim = getattr(module, "verbatim", None)
    prepared = [
        prepare(item, format, deployment=deployment, language=language, model=model, inline_defaults=inline,
                verbatim=verbatim)
        for item in personas
    ]
    files = module.write(prepared, **options)
    notes = [note for item in prepared for note in item.notes]
    return files, notes
