"""Reading other tools' files as untrusted input, and writing files they read.

Every file an importer reads goes through here: bounded in size, UTF-8, YAML through the
project's bounded safe loader (duplicate keys refused, alias bombs and deep nesting stopped before
anything is built) and JSON through the standard library with the same bounds. A file reference
inside an imported file is resolved only inside the folder of the file being imported. Nothing is
ever handed to the other tool's own loader: those follow code references and expand aliases.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from ..errors import ConfigError, ConfigIssue
from ..jsonlines import SURROGATE_PROBLEM, lone_surrogate
from ..safe_yaml import MAX_FILE_BYTES, MAX_YAML_DEPTH, MAX_YAML_NODES, read_documents

__all__ = [
    "Source",
    "confined",
    "dump_yaml",
    "front_matter_start",
    "parse_json",
    "parse_yaml",
    "read_source",
    "split_front_matter",
]

Locate = Callable[[tuple[Any, ...]], "int | None"]


@dataclass
class Source:
    """One parsed file: its data, its label for messages, and where each value was written."""

    data: Any
    file: str
    path: Path
    #: The line a value is written on, by its path in `data`; None where unknown (JSON keys).
    locate: Locate

    def line(self, *where: Any) -> int | None:
        return self.locate(tuple(where))

    def text_line(self, *where: Any) -> int | None:
        """The line a text value's first line is on: after the key for a `|` or `>` block."""
        line = self.line(*where)
        style = self.locate(("\x00style", *where))
        return None if line is None else line + (1 if style else 0)

    def issue(self, message: str, *where: Any) -> ConfigIssue:
        return ConfigIssue(message, file=self.file, line=self.line(*where) if where else None)


def read_source(path: Path, label: str | None = None) -> str:
    """A file's text, refused when missing, not a file, over `MAX_FILE_BYTES` or not UTF-8."""
    file = label or str(path)
    try:
        if not path.is_file():
            what = "a folder" if path.is_dir() else "not found"
            raise ConfigError(ConfigIssue(f"expected a file, but this is {what}; check the path", file=file))
        size = path.stat().st_size
    except OSError as exc:
        raise ConfigError(ConfigIssue(f"cannot read the file: {exc.strerror}", file=file)) from None
    if size > MAX_FILE_BYTES:
        raise ConfigError(ConfigIssue(f"file is {size} bytes, over the {MAX_FILE_BYTES}-byte limit", file=file))
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(ConfigIssue(f"cannot read the file: {exc.strerror}", file=file)) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(ConfigIssue(f"not UTF-8 text (byte {exc.start}); save it as UTF-8", file=file)) from None


def parse_yaml(text: str, file: str, path: Path, *, first_line: int = 1) -> Source:
    """One YAML document, read with the bounded safe loader; duplicate keys are an error here.

    `first_line` is the file line the text starts on (front matter starts on line 2).

    Raises:
        ConfigError: not YAML, several documents, a duplicate key, too deep or too big once expanded.
    """
    offset = first_line - 1
    try:
        documents, issues, _ = read_documents(text, file)
    except ConfigError as exc:
        raise ConfigError([_shifted(issue, offset) for issue in exc.issues]) from None
    if issues:
        raise ConfigError([_shifted(_with_file(issue, file), offset) for issue in issues])
    documents = [document for document in documents if document is not None]
    if len(documents) > 1:
        raise ConfigError(ConfigIssue("holds several YAML documents; keep one per file", file=file))
    root: list[Any] = []

    def locate(where: tuple[Any, ...]) -> int | None:
        if not root:
            root.append(_compose(text))
        if where and where[0] == "\x00style":  # asked by text_line: 1 for a block scalar, else None
            return 1 if _block_scalar(root[0], where[1:]) else None
        line = _key_line(root[0], where)
        return None if line is None else line + offset

    return Source(documents[0] if documents else None, file, path, locate)


def _compose(text: str) -> Any:
    """The YAML node tree (no values built), for finding lines; parsing already bounded it."""
    return yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _key_line(node: Any, where: tuple[Any, ...]) -> int | None:
    """The line of the key (or list item) at `where`; the nearest enclosing one when it is absent."""
    line = None
    for part in where:
        if isinstance(node, yaml.MappingNode):
            found = next(((key, value) for key, value in node.value
                          if isinstance(key, yaml.ScalarNode) and key.value == str(part)), None)
            if found is None:
                return line
            line = found[0].start_mark.line + 1
            node = found[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _block_scalar(node: Any, where: tuple[Any, ...]) -> bool:
    for part in where:
        if isinstance(node, yaml.MappingNode):
            node = next((value for key, value in node.value
                         if isinstance(key, yaml.ScalarNode) and key.value == str(part)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
        else:
            return False
    return isinstance(node, yaml.ScalarNode) and node.style in ("|", ">")


def _with_file(issue: ConfigIssue, file: str) -> ConfigIssue:
    return ConfigIssue(issue.message, issue.field, file, issue.line, issue.column, issue.loc, issue.code)


def _shifted(issue: ConfigIssue, offset: int) -> ConfigIssue:
    if not offset or issue.line is None:
        return issue
    return ConfigIssue(issue.message, issue.field, issue.file, issue.line + offset, issue.column, issue.loc, issue.code)


def _line_at(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _json_depth(text: str, file: str) -> None:
    """Refuse JSON nested deeper than YAML may be, before the parser recurses into it."""
    depth = 0
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise ConfigError(
                    ConfigIssue(
                        f"nested over {MAX_YAML_DEPTH} levels deep; flatten the structure",
                        file=file,
                        line=_line_at(text, index),
                    )
                )
        elif char in "]}":
            depth -= 1


def parse_json(text: str, file: str, path: Path) -> Source:
    """A JSON document with the YAML bounds: depth, values, no duplicate keys, no NaN.

    Raises:
        ConfigError: naming the file, and the line where JSON tells it.
    """
    _json_depth(text, file)
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        made: dict[str, Any] = {}
        for key, value in items:
            if key in made:
                duplicates.append(key)
            made[key] = value
        return made

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except json.JSONDecodeError as exc:
        issue = ConfigIssue(f"invalid JSON: {exc.msg}", file=file, line=exc.lineno, column=exc.colno)
        raise ConfigError(issue) from None
    except (ValueError, RecursionError) as exc:
        raise ConfigError(ConfigIssue(f"invalid JSON: {exc}", file=file)) from None
    if duplicates:
        issues = []
        for key in dict.fromkeys(duplicates):
            places = [match.start() for match in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
            line = _line_at(text, places[1]) if len(places) > 1 else None
            issues.append(ConfigIssue(f"duplicate key {key!r}; keep one of them", file=file, line=line))
        raise ConfigError(issues)
    count = 0
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
            count += len(item)
        elif isinstance(item, list):
            stack.extend(item)
            count += len(item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise ConfigError(ConfigIssue("holds a number JSON cannot write (infinite)", file=file))
        if count > MAX_YAML_NODES:
            raise ConfigError(ConfigIssue(f"holds over {MAX_YAML_NODES} values; split it", file=file))
    surrogate = lone_surrogate(data)
    if surrogate is not None:  # no persona file could hold it: YAML has no way to write one
        where, code = surrogate
        escape = re.search(re.escape(code), text, re.IGNORECASE)
        path_text = ".".join(str(part) for part in where) or "the document"
        issue = ConfigIssue(
            f"{path_text} holds the escape {code}, {SURROGATE_PROBLEM}",
            file=file,
            line=_line_at(text, escape.start()) if escape else None,
        )
        raise ConfigError(issue)
    return Source(data, file, path, lambda where: None)


def split_front_matter(text: str, file: str) -> tuple[str, str, int]:
    """The YAML front matter between `---` lines, the body after it, and the body's first line.

    Raises:
        ConfigError: the file does not start with `---`, or the front matter never ends.
    """
    lines = text.splitlines(keepends=True)
    start = front_matter_start(text)
    if start is None:
        raise ConfigError(ConfigIssue("expected YAML front matter starting with a '---' line", file=file, line=1))
    for index in range(start + 1, len(lines)):
        if lines[index].strip() == "---":
            # Windows line ends (\r\n, as an editor there saves the file) read as Prompty reads them: lines
            body = "".join(lines[index + 1 :]).replace("\r\n", "\n").replace("\r", "\n")
            return "".join(lines[start + 1:index]), body, index + 2
    raise ConfigError(
        ConfigIssue("the front matter has no closing '---' line; end it before the template", file=file, line=1)
    )


def front_matter_start(text: str) -> int | None:
    """The index of the `---` line that opens the front matter (blank lines may come first, as Prompty
    reads them); None when the file does not start with one."""
    for index, line in enumerate(text.splitlines()):
        if line.strip() == "---":
            return index
        if line.strip():
            return None
    return None


def within(root: Path, path: Path) -> bool:
    """Whether `path`, links followed, is inside `root`: a folder import reads nothing from elsewhere
    through a link placed in the folder."""
    base = root.resolve()
    target = path.resolve()
    return target == base or base in target.parents


def confined(root: Path, relative: Any, *, file: str, line: int | None, what: str) -> Path:
    """A path an imported file names, resolved inside `root` (the imported file's folder).

    Raises:
        ConfigError: the path is not text, is absolute, holds `..`, or leads out through a symlink.
    """
    if not isinstance(relative, str) or not relative.strip():
        raise ConfigError(ConfigIssue(f"{what} must be a path relative to this file", file=file, line=line))
    pure = PurePosixPath(relative.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or relative[1:3] in (":\\", ":/"):
        raise ConfigError(
            ConfigIssue(
                f"{what} {relative!r} must stay inside this file's folder: no absolute path, no '..'",
                file=file,
                line=line,
            )
        )
    base = root.resolve()
    target = (base / pure).resolve()
    if target != base and base not in target.parents:
        raise ConfigError(
            ConfigIssue(f"{what} {relative!r} leads outside this file's folder (through a symlink)", file=file,
                        line=line)
        )
    return target


# writing --------------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Multi-line text as `|` blocks, so a written prompt reads like the prompt itself."""


#: Characters YAML readers take as line breaks or drop, which PyYAML would write raw.
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


def dump_yaml(data: Any) -> str:
    """YAML that reads back as exactly `data`; falls back to quoted text where blocks would not."""
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    if yaml.safe_load(text) != data:
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_style='"', width=100)
    return text
