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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ExportError
from ._draft import RESTORED_FIELDS, Note
from .holes import Message, Placeholder, holes_of, marked, marker, render_kind, render_layout, sources_of, usages
from .placeholders import Piece, Unsupported, Var, from_jinja

__all__ = ["Exportable", "Message", "Placeholder", "export_files", "prepare"]

_MISSING: Any = object()


def json_copy(value: Any) -> Any:
    """A plain JSON copy (dicts and lists) of a mapping that may be read-only."""
    import json

    return json.loads(json.dumps(value))


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

    def secret(self, name: str) -> bool:
        item = self.profile.resolved.get(name)
        return item is not None and item.secret

    def value(self, name: str) -> Any:
        """A field's value; None for a secret, which no id, file name or message may be made from."""
        return None if self.secret(name) else self.profile.values.get(name)

    def plain(self, name: str) -> Any:
        """A text field as plain text for a format's plain field (a description): escapes undone; None for a secret."""
        value = self.value(name)
        if not isinstance(value, str) or "{" not in value:
            return value
        try:
            pieces = from_jinja(value)
        except Unsupported:
            return value
        return "".join("{{ " + piece.name + " }}" if isinstance(piece, Var) else piece for piece in pieces)

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
            if name == "kinds":  # not a resolved field: the persona's own list, as written
                if self.config.kinds:
                    block["kinds"] = list(self.config.kinds)
                continue
            value = self._written(name)
            if value not in (None, {}, [], ()):
                block[name] = value
        return block

    def note_left_out(self, fields: Sequence[str], where: str) -> None:
        """Say which of `fields` (persona fields the format has no place for) this persona has and loses."""
        derived = set(self.imported.get("derived") or ())
        for name in fields:
            if name in derived:
                continue
            if name == "metadata":
                value: Any = {key: item for key, item in self.config.metadata.items()
                              if key not in ("imported", self.format)}
            else:
                value = self._written(name)
            if value not in (None, {}, [], (), ""):
                self.note("dropped", f"{name} not written: {where} has no place for it")

    def keep_exact(self, home: dict[str, Any], *, output_schema: Any = _MISSING, tools: Any = _MISSING) -> None:
        """Keep the output schema and tools whole in `home` where the file's own fields lose part of them.

        `output_schema` ({name, schema}) and `tools` (a list of tool mappings) are what an import of
        the written outputs and tools gives back; where that differs from the persona's (a nested
        property, a minimum, a parameter that is not required), the persona's are kept in `home`,
        and an import puts them back in place of the format's.
        """
        from ..output_schema import openai_strict_problems

        output = self.profile.output_schema
        if output_schema is not _MISSING and output is not None:
            exact: dict[str, Any] = {"name": output.name, "schema": output.as_dict(), "strict": output.strict}
            if output.description:
                exact["description"] = output.description
            again = dict(output_schema or {})
            if again.get("schema") is not None:
                again.setdefault("strict", not openai_strict_problems(again["schema"]))
            if again != exact:
                home["output_schema"] = exact
        if tools is not _MISSING and self.profile.tools:
            listed = [
                {"name": tool.name, "description": tool.description, "parameters": json_copy(tool.parameters),
                 **({} if tool.strict is None else {"strict": tool.strict})}
                for tool in self.profile.tools
            ]
            if list(tools or ()) != listed:
                home["tools"] = listed

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
        name = self.value("name")
        return self.config.source_file or (f"persona {name!r}" if name is not None else "the persona")


def prepare(
    persona: Any,
    format: str,
    *,
    deployment: str | None = None,
    language: str | None = None,
    model: str | None = None,
    inline_defaults: bool = False,
    optional_stay: bool = False,
    verbatim: Callable[[Exportable, str, str], str | None] | None = None,
) -> Exportable:
    """Render a persona's prompts for `format`, with markers where the caller's values go.

    `persona` is a persona file or a `ProfileConfig`. `inline_defaults` writes the value of a
    variable with a default into the text (for formats without defaults); `optional_stay` keeps
    an optional input whose default is empty a placeholder even so (ADK's `{name?}`). `verbatim`, for a
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
    kinds = [slot.kind for slot in profile.layout if slot.kind]
    others = [kind for kind in profile.templates if kind not in kinds]
    placeholders = holes_of(profile, [*kinds, *others], {}, keep_defaults=not inline_defaults,
                            optional_stay=optional_stay)
    exportable = Exportable(config, profile, format, placeholders, [])
    written: dict[str, str] = {}
    if verbatim is not None:
        for kind in [*kinds, *others]:
            if kind in profile.templates:
                text = verbatim(exportable, kind, profile.templates[kind].source)
                if text is not None:
                    written[kind] = text
    rendered_kinds = [kind for kind in [*kinds, *others] if kind not in written]
    for name, how in usages(sources_of(profile, rendered_kinds), set(placeholders)).items():
        if how == "condition":
            placeholders[name].usage = "condition"
            if name != "question":
                exportable.note("converted", f"a template tests whether {name!r} is given; written as if it always is")
        elif how != "plain":
            secret = placeholders[name].secret
            if secret is not None:  # a secret is never written, so it must stay a placeholder
                raise ExportError(
                    f"{exportable.label}: field {name!r} is a secret ({secret.source}), which is exported as a "
                    f"placeholder, but a template uses it through {how}, and {format} can only put a value in as "
                    f"it is; give the persona a template that prints it as {{{{ {name} }}}}, or export a deployment "
                    "where the field is not a secret"
                )
            # a format without defaults gets a variable's value written in; the others keep it a placeholder
            valued = ""
            if inline_defaults:
                valued = f", or give it a value under 'variables:', which {format} gets written in"
            raise ExportError(
                f"{exportable.label}: a template uses {name!r} through {how}; {format} can only put a value in as it "
                f"is, so write it as {{{{ {name} }}}} in the template{valued}"
            )

    def refuse(reason: str) -> ExportError:
        return ExportError(f"{exportable.label}: {reason}; {format} can only put the value in as it is")

    exportable.messages = render_layout(profile, placeholders, {}, refuse, written=written)
    rendered = marked(profile, placeholders)
    values = {name: marker(name) for name, item in placeholders.items() if item.secret is None}
    for kind in others:
        exportable.others[kind] = render_kind(profile, rendered, kind, profile.roles.get(kind, "user"), values,
                                              refuse, written)
    return exportable


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
    taken = getattr(module, "OPTIONS", ())
    for option, value in options.items():
        if option not in taken:
            known = ", ".join(("deployment", "language", "model", *taken))
            raise ExportError(f"{format} takes no option {option!r}; the options are {known}")
        if value is not None and not isinstance(value, str):
            raise ExportError(f"{option} must be text, got {type(value).__name__}")
    personas = list(persona) if isinstance(persona, (list, tuple)) else [persona]
    if not personas:
        raise ExportError(f"no persona to export: give {format} a persona file or ProfileConfig (a list of them for "
                          "a CrewAI crew)")
    if len(personas) != 1 and not getattr(module, "MANY", False):
        raise ExportError(f"{format} writes one persona per file; export them one at a time")
    inline = getattr(module, "INLINE_DEFAULTS", False)
    verbatim = getattr(module, "verbatim", None)
    prepared = [
        prepare(item, format, deployment=deployment, language=language, model=model, inline_defaults=inline,
                optional_stay=getattr(module, "OPTIONAL_PLACEHOLDERS", False), verbatim=verbatim)
        for item in personas
    ]
    files = module.write(prepared, **options)
    notes = [note for item in prepared for note in item.notes]
    return files, notes
