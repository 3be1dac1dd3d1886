"""What an import builds: a persona's data, where each part came from, and what changed on the way.

Each format's reader fills a `Draft` per agent or prompt it finds; `Draft.finish` validates it as
a persona (every check a persona file gets) and returns an `ImportedPersona`. What the source
says that a persona has no field for goes under `metadata.<format>`, each with a note; code
references and secret values are dropped, each with a note; a field made up because the format
has none (a role, say) is listed under `metadata.imported.derived` and its provenance says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ConfigIssue
from ..fields import MAX_METADATA_CHARS, MAX_METADATA_DEPTH
from ..settings import SETTING_NAMES, SettingError, check_setting
from .placeholders import Namer

__all__ = ["Draft", "ImportResult", "ImportedPersona", "Note", "is_reference", "secret_name", "slug", "title_words"]

#: The persona fields in the order an imported persona file lists them.
_ORDER = (
    "name", "role", "goal", "retry_goal", "desc", "expand_prompt", "constraints", "retry_constraints", "examples",
    "language", "model", "avatar", "model_settings", "output_schema", "inputs", "variables", "samples", "tools",
    "templates", "kinds", "roles", "messages", "metadata",
)

#: Persona fields an export keeps in a format's free-form metadata, and an import puts back.
RESTORED_FIELDS = (
    "role", "goal", "desc", "expand_prompt", "constraints", "examples", "language", "avatar", "retry_goal",
    "retry_constraints", "variables", "samples", "kinds", "metadata",
)

#: What an export keeps in `agent_profiles:` besides fields, for the prompt kinds the format's
#: messages cannot name: each message's kind, in order, and the kinds that are no message.
KIND_KEYS = ("message_kinds", "templates")

#: Fields an export keeps in the format's free-form metadata only where the format's own fields
#: (Prompty's and Agent Spec's outputs and tools) cannot hold them exactly; read back, they win.
EXACT_FIELDS = ("output_schema", "tools")

_ENV_REFERENCE = re.compile(r"^\$\{env:([A-Za-z_][A-Za-z0-9_.\-]*)(?::(.*))?\}$", re.S)


def message_kinds(roles: Sequence[str]) -> list[str]:
    """The prompt kind an import names each message by, from the roles of the messages in order.

    The first system message is the system prompt, the last user message the user prompt, and
    any other is `turn_<n>`. An export compares its kinds with these to know whether it must
    keep their names.
    """
    user_index = max((index for index, role in enumerate(roles) if role == "user"), default=None)
    kinds = []
    system_taken = False
    for index, role in enumerate(roles):
        if role == "system" and not system_taken:
            kinds.append("system")
            system_taken = True
        elif index == user_index:
            kinds.append("user")
        else:
            kinds.append(f"turn_{index + 1}")
    return kinds


def is_reference(value: Any) -> bool:
    """Whether `value` is a `${env:…}` or `${file:…}`-style reference rather than a literal."""
    return isinstance(value, str) and value.startswith("${") and value.endswith("}")


def slug(text: str, separator: str = "_") -> str:
    """A file-name and identifier-safe form of `text`: lower-case letters, digits and `separator`."""
    made = re.sub(r"[^0-9a-z]+", separator, text.lower()).strip(separator)
    if not made:
        made = "persona"
    if made[0].isdigit():
        made = "p" + separator + made
    return made


def title_words(text: str) -> str:
    """An id as words for a name or role: `triage_agent`, `local-chat`, `RestaurantHost` → `Triage Agent`, …

    Text that already has spaces is kept as written.
    """
    text = text.strip()
    if " " in text:
        return text
    parts = [re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", part) for part in re.split(r"[-_.]+", text) if part]
    words = " ".join(parts).split()
    return " ".join(word[:1].upper() + word[1:] for word in words) or text


@dataclass(frozen=True)
class Note:
    """One thing an import or export changed: kept under metadata, dropped, renamed or derived."""

    #: `metadata`, `dropped`, `code`, `secret`, `renamed`, `derived` or `converted`.
    kind: str
    message: str
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file + (f":{self.line}" if self.line else "") + ": "
        return f"{where}{self.kind}: {self.message}"


@dataclass
class ImportedPersona:
    """One persona an import made: the data to write, the validated config, and the notes."""

    #: A name for its file, e.g. `researcher` (written as `researcher.yaml`).
    stem: str
    #: The persona as a mapping, ready to be written as YAML.
    data: dict[str, Any]
    #: The persona, validated; its provenance names the imported file and line of each field.
    config: Any
    notes: list[Note] = field(default_factory=list)

    def to_yaml(self) -> str:
        """The persona file: a comment naming the source, then the persona."""
        from ._files import dump_yaml

        imported = self.data.get("metadata", {}).get("imported", {})
        from ..schema import SCHEMA_ID

        header = (
            f"# yaml-language-server: $schema={SCHEMA_ID}\n"
            f"# Imported from {imported.get('format', 'another format')} file {imported.get('source', '?')}"
            " by `profiles import`; metadata.imported says what was derived or renamed.\n"
        )
        return header + dump_yaml(self.data)


@dataclass
class ImportResult:
    """Every persona one import made, in the order the source lists them, and all their notes."""

    format: str
    source: str
    personas: list[ImportedPersona] = field(default_factory=list)
    #: Notes about the source as a whole (a task naming no agent, a root agent with no prompt).
    notes: list[Note] = field(default_factory=list)

    @property
    def configs(self) -> list[Any]:
        """The personas' validated configs, ready for `create_profile()`."""
        return [persona.config for persona in self.personas]

    def all_notes(self) -> list[Note]:
        return [*self.notes, *(note for persona in self.personas for note in persona.notes)]

    def __iter__(self) -> Any:
        return iter(self.personas)

    def __len__(self) -> int:
        return len(self.personas)


@dataclass
class Draft:
    """A persona being imported from one agent or prompt of a source file."""

    format: str
    file: str
    path: Path
    #: The agent's id or prompt's name in the source, kept for export (`metadata.imported.id`).
    id: str
    fields: dict[str, Any] = field(default_factory=dict)
    #: The source line each persona field came from.
    lines: dict[str, int] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    #: The line of each key kept under `extra` (by its dotted key), so one can be dropped again with its place.
    kept: dict[str, int | None] = field(default_factory=dict)
    derived: dict[str, str] = field(default_factory=dict)
    namer: Namer = field(default_factory=Namer)
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    samples: dict[str, Any] = field(default_factory=dict)
    #: Fields read back whole from `metadata.agent_profiles`, which the format's own fields do not replace.
    pinned: set[str] = field(default_factory=set)
    #: The file a field came from where it is not `file` (a prompt folder's config.json).
    files: dict[str, str] = field(default_factory=dict)
    #: Each message's prompt kind as an export kept it (`agent_profiles.message_kinds`), if it did.
    kept_kinds: list[str] | None = None
    #: Kinds that are no message, kept whole by an export (`agent_profiles.templates`).
    kept_templates: dict[str, Any] = field(default_factory=dict)

    # recording ---------------------------------------------------------------------------------
    def note(self, kind: str, message: str, line: int | None = None, *, file: str | None = None) -> None:
        self.notes.append(Note(kind, message, file or self.file, line))

    def set(self, name: str, value: Any, line: int | None = None) -> None:
        """Set persona field `name`, remembering the source line it came from."""
        if value is None or value == "" or value == {} or value == [] or name in self.pinned:
            return
        self.fields[name] = value
        if line is not None:
            self.lines[name] = line

    def set_text(self, name: str, value: Any, line: int | None = None) -> None:
        """Set a persona text field from a source's plain text: braces in it stay text, never a template."""
        from .placeholders import escape_jinja

        self.set(name, escape_jinja(value) if isinstance(value, str) else value, line)

    def keep(self, key: str, value: Any, line: int | None = None, *, why: str = "") -> None:
        """Keep a source field with no persona equivalent under `metadata.<format>.<key>`."""
        if secret_name(key.rsplit(".", 1)[-1]) and not _references_only(value):
            self.drop(key, "its name says it holds a credential, and its value is no ${env:…} reference; give it "
                      "through the environment instead", line, kind="secret")
            return
        secrets: list[str] = []
        value = _without_secrets(value, key, secrets)
        for inner in secrets:
            self.drop(inner, "its name says it holds a credential, and its value is no ${env:…} reference; give it "
                      "through the environment instead", line, kind="secret")
        *parents, last = key.split(".")
        levels = 1 + len(parents) + 1 + _nesting(value)  # metadata, <format>, the key's parts, the value's own
        if _nesting(value) and levels > MAX_METADATA_DEPTH:
            self.drop(key, f"it nests {_nesting(value)} levels deep, and as metadata.{self.format}.{key} that is over "
                      f"the {MAX_METADATA_DEPTH} levels a persona's metadata holds", line)
            return
        target = self.extra
        for part in parents:
            target = target.setdefault(part, {})
        target[last] = _plain(value)
        self.kept[key] = line
        self.note("metadata", f"{key} has no persona field; kept as metadata.{self.format}.{key}{why}", line)

    def drop(self, key: str, why: str, line: int | None = None, *, kind: str = "dropped") -> None:
        self.note(kind, f"{key} dropped: {why}", line)

    def derive(self, name: str, value: str, how: str) -> None:
        from .placeholders import escape_jinja

        self.fields[name] = escape_jinja(value)
        self.derived[name] = how
        self.note("derived", f"{name} {value!r} derived {how} ({self.format} has no {name})")

    def tool_description(self, name: Any, description: Any, line: int | None = None) -> Any:
        """A tool's description; for a tool without one (which the format allows), one made from its name.

        A persona's tool needs a description (it tells the model what the tool does), so a tool the
        other tool sends without one is described by its name, and the note says so.
        """
        if description or not isinstance(name, str) or not name.strip():
            return description if description is not None else ""
        made = f"{title_words(name)}."
        self.note("derived", f"tool {name!r} has no description, which a persona's tool needs; described as "
                  f"{made!r} from its name: write what it does", line)
        return made

    def text_reference(self, name: str, value: Any, line: int | None) -> Any:
        """A persona text field from a source value; `${env:KEY}` becomes a dynamic field, never a value."""
        if isinstance(value, str):
            match = _ENV_REFERENCE.match(value)
            if match:
                dynamic: dict[str, Any] = {"key": match.group(1), "provider": "env"}
                if match.group(2) is not None:
                    dynamic["default"] = match.group(2)
                self.note("converted", f"{name} reads ${{env:{match.group(1)}}}: kept as a dynamic field, not resolved",
                          line)
                return dynamic
            if is_reference(value):
                self.drop(name, f"{value!r} is a reference this import does not follow", line)
                return None
        return value

    def setting(self, name: str, value: Any, line: int | None, source_name: str) -> None:
        """A model option: a persona setting when it is one and its value fits, else metadata."""
        if name not in SETTING_NAMES:
            self.keep(source_name, value, line)
            return
        if isinstance(value, str) and _ENV_REFERENCE.match(value):
            match = _ENV_REFERENCE.match(value)
            assert match is not None
            dynamic: dict[str, Any] = {"key": match.group(1), "provider": "env"}
            if match.group(2) is not None:
                dynamic["default"] = match.group(2)
            self.fields.setdefault("model_settings", {})[name] = dynamic
            return
        try:
            checked = check_setting(name, value)
        except (SettingError, TypeError) as exc:
            reason = exc.reason if isinstance(exc, SettingError) else str(exc)
            self.keep(source_name, value, line, why=f" ({reason})")
            return
        self.fields.setdefault("model_settings", {})[name] = list(checked) if isinstance(checked, tuple) else checked

    def restore(self, block: Any, line: int | None) -> None:
        """Persona fields an export kept in the format's free-form metadata (`agent_profiles:`), put back."""
        if not isinstance(block, Mapping):
            self.drop("metadata.agent_profiles", "it is not a mapping of persona fields", line)
            return
        for key, value in block.items():
            if key in EXACT_FIELDS and value:
                self.pinned.discard(key)
                self.set(key, value, line)
                self.pinned.add(key)
            elif key in KIND_KEYS:
                self._restore_kinds(key, value, line)
            elif key not in RESTORED_FIELDS:
                self.drop(f"metadata.agent_profiles.{key}", "only plain persona fields are read back from metadata",
                          line)
            elif key == "metadata" and isinstance(value, Mapping):
                self.fields.setdefault("metadata", {}).update(
                    {name: item for name, item in value.items() if name != "imported"}
                )
            else:
                self.set(key, value, line)

    def _restore_kinds(self, key: str, value: Any, line: int | None) -> None:
        from ..fields import KIND_NAME

        if key == "message_kinds":
            if isinstance(value, list) and all(isinstance(kind, str) and KIND_NAME.fullmatch(kind) for kind in value):
                self.kept_kinds = list(value)
            else:
                self.drop("metadata.agent_profiles.message_kinds", "it is not a list of prompt kind names", line)
            return
        if not isinstance(value, Mapping):
            self.drop("metadata.agent_profiles.templates", "it is not a mapping of prompt kind to {inline: text}", line)
            return
        for kind, spec in value.items():
            # only inline text: a file or store reference would read what the imported file does not hold
            if (isinstance(kind, str) and KIND_NAME.fullmatch(kind) and isinstance(spec, Mapping)
                    and set(spec) == {"inline"} and isinstance(spec["inline"], str)):
                self.kept_templates[kind] = {"inline": spec["inline"]}
            else:
                self.drop(f"metadata.agent_profiles.templates.{kind}", "a kept template is {inline: text}", line)

    def layout(self, texts: list[tuple[str, str, int | None]], history_after: int | None) -> None:
        """Templates from (role, text, line) messages, and `messages:` where they differ from the default.

        The first system message is the system prompt, the last user message the user prompt, and
        any other becomes a prompt kind `turn_<n>` sent with its role, unless an export kept the
        kinds' own names (`agent_profiles.message_kinds`). The history goes after message
        `history_after`, else before the user prompt.
        """
        templates: dict[str, Any] = {}
        slots: list[dict[str, Any]] = []
        kinds = message_kinds([role for role, _, _ in texts])
        kept = self.kept_kinds
        if kept is not None and (len(kept) != len(texts) or len(set(kept)) != len(kept)):
            self.drop("metadata.agent_profiles.message_kinds", f"it names {len(kept)} prompt kinds for the file's "
                      f"{len(texts)} messages; the messages are named by their place")
            kept = None
        for index, (role, text, line) in enumerate(texts):
            if role not in ("system", "developer", "user", "assistant"):
                self.drop(f"the {role} message", "persona messages have no such role", line)
                continue
            kind = kinds[index] if kept is None else kept[index]
            templates[kind] = {"inline": text}
            slot: dict[str, Any] = {"kind": kind}
            if kind not in ("system", "user") or kind != role:
                slot["role"] = role
            slots.append(slot)
            if history_after == index:
                slots.append({"history": True})
        if history_after is None or history_after < 0:
            at = next((i for i, slot in enumerate(slots) if slot.get("kind") == "user"), len(slots))
            slots.insert(at if history_after is None else 0, {"history": True})
        self.set("templates", templates)
        if slots != [{"kind": "system"}, {"history": True}, {"kind": "user"}]:
            self.set("messages", slots)

    # finishing ---------------------------------------------------------------------------------
    def data(self) -> dict[str, Any]:
        """The persona as a mapping, fields in the usual order, metadata last."""
        fields = dict(self.fields)
        if self.kept_templates:  # kinds that are no message, after the messages' own
            own = dict(fields.get("templates") or {})
            kept = {kind: spec for kind, spec in self.kept_templates.items() if kind not in own}
            fields["templates"] = {**own, **kept}
        if self.inputs:
            # required is the default: written only where an input is optional
            fields["inputs"] = {
                name: {key: value for key, value in spec.items() if not (key == "required" and value is True)}
                for name, spec in self.inputs.items()
            }
        if self.samples:
            fields["samples"] = self.samples
        metadata = dict(fields.pop("metadata", {}) or {})
        imported: dict[str, Any] = {"format": self.format, "source": self.file, "id": self.id}
        if self.derived:
            imported["derived"] = dict(self.derived)
        if self.namer.renamed:
            imported["renamed"] = dict(self.namer.renamed)
        metadata["imported"] = imported
        if self.extra:
            metadata[self.format] = self.extra
        fields["metadata"] = metadata
        return {key: fields[key] for key in _ORDER if key in fields}

    def _fit_metadata(self) -> None:
        """Drop the largest kept fields, each with a note, until the metadata fits a persona's bound.

        A field with no persona equivalent is kept as metadata, which a persona bounds (64,000
        characters as JSON); one too bulky for it is left out, instead of failing the whole import.
        """
        import json

        def size(value: Any) -> int:
            return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))

        while self.kept and size(self.data()["metadata"]) > MAX_METADATA_CHARS:
            key = max(self.kept, key=lambda name: size(self._kept_value(name)))
            bulk = size(self._kept_value(key))
            line = self.kept.pop(key)
            *parents, last = key.split(".")
            chain = [self.extra]
            for part in parents:
                chain.append(chain[-1][part])
            del chain[-1][last]
            for parent, part in zip(reversed(chain[:-1]), reversed(parents), strict=True):  # no empty mapping left
                if not parent[part]:
                    del parent[part]
            kept = f"{key} has no persona field; kept as"
            self.notes = [note for note in self.notes if not note.message.startswith(kept)]
            self.drop(key, f"it is {bulk:,} characters as JSON, too much for a persona's "
                      f"metadata (at most {MAX_METADATA_CHARS:,} in all); keep bulky data elsewhere", line)

    def _kept_value(self, key: str) -> Any:
        value: Any = self.extra
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def finish(self, stem: str) -> ImportedPersona:
        """Validate the draft as a persona.

        Raises:
            ConfigError: the result is no valid persona; each problem names the source file and
                the line of the field it came from.
        """
        from ..profile_config import ProfileConfig

        self._fit_metadata()
        data = self.data()
        lines = {(name,): (self.files.get(name, self.file), line) for name, line in self.lines.items()}
        origin = f"import:{self.format}:{self.file}"
        if self.derived:
            origin += " (derived: " + ", ".join(sorted(self.derived)) + ")"
        try:
            config = ProfileConfig.from_data(
                data, base_dir=self.path.parent, source_file=self.file, lines=lines, origin=origin
            )
        except ConfigError as exc:
            issues = [
                ConfigIssue(
                    f"as a persona, {issue}" if not issue.file else f"as a persona ({issue}): check the source",
                    file=self.files.get(str(issue.loc[0]), self.file) if issue.loc else self.file,
                    line=self.lines.get(str(issue.loc[0])) if issue.loc else None,
                )
                for issue in exc.issues
            ]
            raise ConfigError(issues) from None
        return ImportedPersona(stem, data, config, list(self.notes))


_SECRET_WORDS = frozenset({"apikey", "secret", "password", "passwd", "passphrase", "credential", "credentials", "token",
                           # HTTP headers that carry one: `Authorization: Bearer sk-…`, a session cookie
                           "authorization", "cookie"})

#: Words that make a following `key` a credential: `api_key`, `accessKey`, …
_KEY_OWNERS = frozenset({"api", "access", "private", "secret", "auth", "client", "subscription", "account", "master"})


def secret_name(name: str) -> bool:
    """Whether a source field's name says it holds a credential: `api_key`, `apiKey`, `token`, `key`, …

    Whole words only, so `max_tokens`, `keywords` and `output_key` are not taken for secrets.
    """
    words = [word.lower() for word in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]
    if any(word in _SECRET_WORDS for word in words):
        return True
    return words == ["key"] or any(word == "key" and index and words[index - 1] in _KEY_OWNERS
                                   for index, word in enumerate(words))


def _nesting(value: Any) -> int:
    """How many levels of lists and mappings `value` has (0 for a text or number)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, (list, tuple)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in item)
    return deepest


def _plain(value: Any) -> Any:
    """`value` as JSON-like data, as metadata holds it: YAML dates become ISO text."""
    import datetime

    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(item) for item in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _without_secrets(value: Any, where: str, dropped: list[str]) -> Any:
    """`value` less every entry, however deep, whose name says credential and whose value is a literal.

    A connection block kept as metadata (`model.connection.apiKey: sk-…`) must not carry the key
    into a persona file; a `${env:KEY}` reference stays. The paths left out go into `dropped`.
    """
    if isinstance(value, Mapping):
        kept = {}
        for name, item in value.items():
            path = f"{where}.{name}"
            if secret_name(str(name)) and not _references_only(item):
                dropped.append(path)
            else:
                kept[name] = _without_secrets(item, path, dropped)
        return kept
    if isinstance(value, (list, tuple)):
        return [_without_secrets(item, f"{where}.{index}", dropped) for index, item in enumerate(value)]
    return value


def _references_only(value: Any) -> bool:
    """Whether every text in `value` is a reference (`${env:KEY}`) or empty, never a literal secret."""
    if isinstance(value, str):
        return not value or is_reference(value)
    if isinstance(value, Mapping):
        return all(_references_only(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return all(_references_only(item) for item in value)
    return value is None
