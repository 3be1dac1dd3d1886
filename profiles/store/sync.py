"""A folder of YAML files that mirrors a prompt store, so prompts can live in git and sync both ways.

One file per prompt key holds every version and the labels::

    name: summary
    language: zh-TW
    model: ''
    labels:
      production: 2
      canary: {2: 90, 3: 10}    # a rollout: version → weight
    versions:
    - version: 1
      created_at: '2026-01-05T10:00:00+00:00'
      author: ana
      note: first draft
      content: |
        You summarise ...

The file's keys, not its name, say which prompt it holds; file names are only readable and unique
(a short hash is added when a name, language or model cannot be spelled safely in a file name).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from profiles.atomic import write_atomic
from profiles.errors import StoreError
from profiles.store.keys import MAX_NUMBER, PromptKey, check_content, check_text, make_key
from profiles.store.models import PromptVersion

__all__ = ["PromptRecord", "file_name", "read_folder", "write_folder"]

#: What a file name part may hold unchanged; anything else is replaced and a hash added.
_SAFE_PART = re.compile(r"[A-Za-z0-9.\-]{1,80}")
_SEPARATOR = "__"
_ANY = "any"


@dataclass(frozen=True)
class PromptRecord:
    """Everything a folder file says about one prompt key."""

    key: PromptKey
    versions: tuple[PromptVersion, ...]
    #: label → version, or → {version: weight} for a rollout
    labels: dict[str, Any] = field(default_factory=dict)
    source: str = ""


def _part(value: str) -> tuple[str, bool]:
    """Return a file-name-safe spelling of a key part and whether it is exact."""
    if not value:
        return _ANY, True
    if _SAFE_PART.fullmatch(value) and value != _ANY and not value.startswith(".") and "__" not in value:
        return value, True
    cleaned = re.sub(r"[^A-Za-z0-9.\-]+", "-", value).strip(".-")[:40] or "x"
    return cleaned, False


def file_name(key: PromptKey) -> str:
    """Return the file name for a key: ``name__language__model.yaml``, "any" for an empty part."""
    spelled = [_part(value) for value in (key.name, key.language, key.model)]
    stem = _SEPARATOR.join(text for text, _exact in spelled)
    if not all(exact for _text, exact in spelled):
        digest = hashlib.sha256("\x00".join((key.name, key.language, key.model)).encode()).hexdigest()[:12]
        stem += _SEPARATOR + digest
    return stem + ".yaml"


class _Dumper(yaml.SafeDumper):
    """Writes multi-line text as ``|`` blocks so diffs in git read like the prompt itself."""


#: Characters YAML readers take as line breaks or drop, but PyYAML writes raw outside double quotes.
_RISKY = frozenset("\r\x85\u2028\u2029\ufeff")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    # PyYAML falls back to a quoted style by itself when a block cannot hold the text exactly,
    # except for the characters above, which it would write raw and read back as something else
    if _RISKY.intersection(value):
        style: str | None = '"'
    else:
        style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def _dump(key: PromptKey, records: list[PromptVersion], label_targets: dict[str, Any]) -> str:
    document = {
        "name": key.name,
        "language": key.language,
        "model": key.model,
        "labels": dict(sorted(label_targets.items())),
        "versions": [
            {
                "version": record.version,
                "created_at": record.created_at.isoformat(),
                "author": record.author,
                "note": record.note,
                "content": record.content,
            }
            for record in records
        ],
    }
    from ..safe_yaml import safe_load, text_bound

    text = yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    # never write a file that reads back differently, read as `import` reads it
    if safe_load(text, max_nodes=text_bound(text)) != document:
        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=False, default_style='"', width=100)
    return text


def write_folder(
    directory: Path, prompts: dict[PromptKey, tuple[list[PromptVersion], dict[str, Any]]]
) -> list[Path]:
    """Write one file per key; files of other keys already in the folder are left alone."""
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    taken: set[str] = set()
    for key, (records, label_targets) in prompts.items():
        name = file_name(key)
        if name.casefold() in taken:  # two names that differ only in case on a case-blind disk
            digest = hashlib.sha256(repr((key.name, key.language, key.model)).encode()).hexdigest()[:12]
            name = name[: -len(".yaml")] + _SEPARATOR + digest + ".yaml"
        taken.add(name.casefold())
        path = directory / name
        write_atomic(path, _dump(key, records, label_targets))  # a failed export leaves the last one whole
        written.append(path)
    return written


def _fail(path: Path, problem: str) -> StoreError:
    return StoreError(f"{path}: {problem}; fix the file or export it again with `profiles store export`")


def _text(path: Path, document: dict[str, Any], field_name: str, where: str = "") -> str:
    value = document.get(field_name, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _fail(path, f"{where}field '{field_name}' must be text, got {type(value).__name__}")
    return value


def _parse_version(path: Path, key: PromptKey, index: int, entry: Any) -> PromptVersion:
    where = f"versions[{index}]: "
    if not isinstance(entry, dict):
        raise _fail(path, f"{where}expected a mapping")
    _unknown(path, where, entry, _VERSION_FIELDS)
    number = entry.get("version")
    if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= MAX_NUMBER:
        raise _fail(path, f"{where}field 'version' must be a whole number from 1 to {MAX_NUMBER}, got {number!r}")
    content = entry.get("content")
    if not isinstance(content, str) or not content.strip():
        raise _fail(path, f"{where}field 'content' must be non-empty text")
    try:
        created_at = datetime.fromisoformat(_text(path, entry, "created_at", where))
        if created_at.tzinfo is not None:  # the store keeps UTC, which may fall outside years 1 to 9999
            created_at.astimezone(timezone.utc)
    except (ValueError, OverflowError) as exc:
        raise _fail(
            path, f"{where}field 'created_at' must be an ISO 8601 time in the years 1 to 9999 UTC ({exc})"
        ) from exc
    texts = {name: _text(path, entry, name, where) for name in ("author", "note")}
    try:  # what `put` refuses must not come in by a file either
        check_content("field 'content'", content)
        for name, value in texts.items():
            check_text(f"field '{name}'", value)
    except StoreError as exc:
        raise _fail(path, f"{where}{exc.message}") from None
    return PromptVersion(
        name=key.name,
        language=key.language,
        model=key.model,
        version=number,
        content=content,
        created_at=created_at,
        author=texts["author"],
        note=texts["note"],
    )


#: The fields of a store file, and of each of its versions: anything else is a typo (`lables:`)
#: whose value an import would drop without a word.
_FIELDS = ("name", "language", "model", "labels", "versions")
_VERSION_FIELDS = ("version", "created_at", "author", "note", "content")


def _unknown(path: Path, where: str, entry: dict[Any, Any], known: tuple[str, ...]) -> None:
    extra = [key for key in entry if key not in known]
    if extra:
        raise _fail(path, f"{where}unknown field {str(extra[0])!r}; the fields are {', '.join(known)}")


def _parse(path: Path) -> PromptRecord:
    # bounded: a store file is as untrusted as a persona; duplicate keys are refused, not kept last
    from ..errors import ConfigError
    from ..safe_yaml import read_documents, text_bound

    try:
        text = path.read_text(encoding="utf-8")
        # a prompt's every version is one file, so its values are bounded by its length, not by
        # the count a persona may hold: an export of ten thousand versions reads back
        documents, issues, _ = read_documents(text, str(path), max_nodes=text_bound(text))
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(path, f"cannot read it ({exc})") from exc
    except ConfigError as exc:
        issue = exc.issues[0]
        at = f"line {issue.line}, column {issue.column}: " if issue.line is not None else ""
        raise _fail(path, f"cannot read it ({at}{issue.message})") from None
    for issue in issues:
        if issue.code == "duplicate_key":  # `labels: {production: 1, production: 2}` moved it to 2 silently
            raise _fail(path, f"line {issue.line}, column {issue.column}: {issue.message}")
    if len(documents) > 1:
        raise _fail(path, "holds several YAML documents (---); keep one prompt key per file")
    document = documents[0] if documents else None
    if not isinstance(document, dict):
        raise _fail(path, "expected a mapping with name, language, model, labels and versions")
    _unknown(path, "", document, _FIELDS)
    texts = [_text(path, document, part) for part in ("name", "language", "model")]
    try:
        key = make_key(*texts)
    except StoreError as exc:
        raise _fail(path, exc.message) from exc
    raw_versions = document.get("versions")
    raw_versions = [] if raw_versions is None else raw_versions
    if not isinstance(raw_versions, list):
        raise _fail(path, "field 'versions' must be a list")
    records = tuple(_parse_version(path, key, index, entry) for index, entry in enumerate(raw_versions))
    numbers = [record.version for record in records]
    if len(set(numbers)) != len(numbers):
        raise _fail(path, "a version number appears twice")
    raw_labels = document.get("labels")
    raw_labels = {} if raw_labels is None else raw_labels
    if not isinstance(raw_labels, dict) or not all(
        isinstance(label, str) and (_is_number(target) or _is_rollout(target)) for label, target in raw_labels.items()
    ):
        raise _fail(
            path, "field 'labels' must map label names to version numbers, or to {version: weight} for a rollout"
        )
    return PromptRecord(key, records, dict(raw_labels), str(path))


def _is_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_rollout(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and all(_is_number(k) and _is_number(v) for k, v in value.items())


def read_folder(directory: Path) -> list[PromptRecord]:
    """Read every ``*.yaml`` file under ``directory``; a key found in two files is an error.

    Raises:
        StoreError: the folder is missing or a file is malformed (the message names the file).
    """
    if not directory.is_dir():
        raise StoreError(f"{directory}: no such folder to import prompts from")
    records: dict[PromptKey, PromptRecord] = {}
    root = directory.resolve()
    for path in sorted(directory.rglob("*.yaml")):
        if not path.resolve().is_relative_to(root):  # a link out of the folder: import reads only what it holds
            raise StoreError(
                f"{path}: a link to {path.resolve()}, outside {directory}; an import reads only files inside the "
                "folder, so copy the file in or remove the link"
            )
        record = _parse(path)
        if record.key in records:
            raise _fail(path, f"prompt {record.key} is also in {records[record.key].source}")
        records[record.key] = record
    return list(records.values())
