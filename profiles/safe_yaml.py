"""YAML read safely and within bounds: the one way the project reads YAML it did not write.

Persona files, mapping files, family rules and store exports all come from people and shared
folders, so they are read with the safe loader (libyaml when present) and refused when they nest
too deep or expand, through aliases, to too many values: a small alias bomb expands to billions.
`read_documents` also reports duplicate keys (including keys that differ only in look-alike or
invisible letters) instead of keeping the last one silently, and records the line each key is
written on, for provenance and error messages.
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError, ConfigIssue

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "describe_yaml_error",
    "locator",
    "read_at_most",
    "read_documents",
    "read_text",
    "safe_load",
    "text_bound",
]

#: Largest persona file read, in bytes; personas are small and a huge file is a mistake or an attack.
MAX_FILE_BYTES = 2_000_000

#: Most values a document may hold once aliases are expanded; a small alias bomb expands to billions.
MAX_YAML_NODES = 100_000

#: Deepest nesting of mappings and lists in a document.
MAX_YAML_DEPTH = 64

# characters that do not show, or show as a line break: keys differing only by them look the same
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc", "Zl", "Zp", "Mn"})

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Scalar, _Sequence, _Mapping = yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode
_STR_TAG, _SEQ_TAG, _MAP_TAG = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"


def _plain_keys(node: yaml.MappingNode) -> bool:
    """Whether every key is distinct plain text, checked in bulk: the case that needs no key checks."""
    keys = [key_node.value for key_node, _ in node.value if key_node.__class__ is _Scalar and key_node.tag == _STR_TAG]
    joined = "".join(keys)
    return len(keys) == len(node.value) == len(set(keys)) and joined.isascii() and joined.isprintable()


class _CheckedLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe loading that records duplicate keys instead of silently keeping the last one."""

    def __init__(
        self, stream: str, nested: tuple[str, ...] = (), mapped: tuple[str, ...] = (), max_nodes: int = MAX_YAML_NODES
    ) -> None:
        super().__init__(stream)
        self.max_nodes = max_nodes
        #: Top-level keys whose mappings of mappings get their keys' lines recorded too.
        self.nested = nested
        #: Keys (top-level, and inside each nested entry) whose mappings get their keys' lines recorded.
        self.mapped = mapped
        self.issues: list[ConfigIssue] = []
        #: Per document, the line each field (and each overlay's field) is written on.
        self.field_lines: list[dict[tuple[str, ...], int]] = []
        self._placed: list[tuple[int, yaml.Node]] = []

    def construct_document(self, node: yaml.Node) -> Any:
        # measured before anything is built: an alias bomb loads fast but is huge once walked
        _measure(node, self.max_nodes)
        # the nodes are at hand here, so recording field lines costs a walk over a few keys,
        # not the second parse that recovering positions later would need
        self.field_lines.append(_field_lines(node, self.nested, self.mapped))
        #: Issues found in this document with the mapping each is in, named by its path once built.
        self._placed = []
        try:
            return self._build(node, {})
        finally:
            self.constructed_objects = {}
            self.recursive_objects = {}
            if self._placed:
                _name_by_path(node, self.issues, self._placed)

    def _build(self, node: yaml.Node, built: dict[int, Any]) -> Any:
        """Build plain text, lists and mappings directly; anything else the safe constructor builds.

        PyYAML's generic construction costs more than parsing; persona files are almost all text,
        lists and mappings, so those skip it. `built` keeps an aliased node one object, as PyYAML does.
        """
        kind = node.__class__
        if kind is _Scalar:
            return node.value if node.tag == _STR_TAG else self.construct_object(node, deep=True)
        done = built.get(id(node))
        if done is not None:
            return done
        if kind is _Sequence and node.tag == _SEQ_TAG:
            items: list[Any] = []
            built[id(node)] = items
            items.extend(self._build(child, built) for child in node.value)
            return items
        if kind is _Mapping and node.tag == _MAP_TAG and _plain_keys(node):
            mapping: dict[str, Any] = {}
            built[id(node)] = mapping
            for key_node, value_node in node.value:
                mapping[key_node.value] = self._build(value_node, built)
            return mapping
        value = built[id(node)] = self.construct_object(node, deep=True)
        return value

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if _plain_keys(node):
            construct = self.construct_object
            return {key_node.value: construct(value_node, deep=deep) for key_node, value_node in node.value}
        return self._construct_checked(node, deep)

    def _construct_checked(self, node: yaml.MappingNode, deep: bool) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        kept = []
        merge: yaml.Node | None = None
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag == "tag:yaml.org,2002:merge":
                if merge is not None:  # YAML allows one merge key per mapping; a second one silently loses
                    self._placed.append((len(self.issues), node))
                    self.issues.append(
                        ConfigIssue(
                            f"a second merge key '<<' in one mapping (first at line {merge.start_mark.line + 1}); "
                            "merge several mappings with one key: <<: [*first, *second]",
                            "<<",
                            line=key_node.start_mark.line + 1,
                            column=key_node.start_mark.column + 1,
                            code="duplicate_key",
                        )
                    )
                    continue
                merge = key_node
                kept.append((key_node, value_node))
                continue
            key = _key_identity(key_node.value) if isinstance(key_node, yaml.ScalarNode) else id(key_node)
            if key in seen:
                first = seen[key].start_mark.line + 1
                shown = _shown(key_node.value)
                same = "" if key_node.value == seen[key].value else ", differing only in hidden or look-alike letters"
                self._placed.append((len(self.issues), node))
                self.issues.append(
                    ConfigIssue(
                        f"duplicate key {shown} (first at line {first}{same}); keep one of them",
                        shown.strip("'\""),
                        line=key_node.start_mark.line + 1,
                        column=key_node.start_mark.column + 1,
                        code="duplicate_key",
                    )
                )
                continue
            seen[key] = key_node
            kept.append((key_node, value_node))
        node.value = kept
        mapping = super().construct_mapping(node, deep=deep)
        for key in mapping:
            if not isinstance(key, str):
                self.issues.append(
                    ConfigIssue(
                        f"key {key!r} is not text; quote it",
                        line=node.start_mark.line + 1,
                        column=node.start_mark.column + 1,
                    )
                )
        return mapping


def _name_by_path(root: yaml.Node, issues: list[ConfigIssue], placed: list[tuple[int, yaml.Node]]) -> None:
    """Name each placed issue's field by its whole path (`variables.a`), not its key alone.

    The constructor sees one mapping at a time, so the path is found afterwards, by a walk
    over the document's nodes that runs only when a duplicate was found.
    """
    paths: dict[int, tuple[str, ...]] = {}
    stack: list[tuple[yaml.Node, tuple[str, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if id(node) in paths:
            continue
        paths[id(node)] = path
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else "?"
                stack.append((value_node, path if key_node.tag == "tag:yaml.org,2002:merge" else (*path, str(key))))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((child, (*path, str(index))) for index, child in enumerate(node.value))
    for index, mapping in placed:
        prefix = paths.get(id(mapping), ())
        if prefix:
            issues[index] = dataclasses.replace(issues[index], field=".".join((*prefix, issues[index].field)))


class _BoundedLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """The safe loader with the alias-expansion and depth bounds of persona files, refusing a
    duplicate key (or a second `<<`) where PyYAML silently keeps the last one."""

    max_nodes = MAX_YAML_NODES

    def construct_document(self, node: yaml.Node) -> Any:
        _measure(node, self.max_nodes)
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if not _plain_keys(node):
            seen: dict[Any, yaml.Node] = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = (key_node.tag, _key_identity(key_node.value))
                first = seen.setdefault(key, key_node)
                if first is not key_node:
                    line = first.start_mark.line + 1
                    problem = (
                        f"a second merge key '<<' in one mapping (first at line {line}); merge several mappings "
                        "with one key: <<: [*first, *second]"
                        if key_node.tag == "tag:yaml.org,2002:merge"
                        else f"duplicate key {_shown(key_node.value)} (first at line {line}); keep one of them"
                    )
                    raise yaml.constructor.ConstructorError(None, None, problem, key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def safe_load(text: str, *, max_nodes: int = MAX_YAML_NODES) -> Any:
    """`yaml.safe_load` for the project's other YAML files (family rules, mappings, store files).

    libyaml when present, with alias expansions and nesting bounded as in persona files and
    duplicate keys refused as there; every failure, a too-deep document included, is a
    `yaml.YAMLError`, never a `RecursionError`. `max_nodes` is the most values the document may
    expand to (see `text_bound` for files whose size is their own bound).
    """
    if isinstance(text, str) and _SURROGATE.search(text):
        raise yaml.YAMLError(_surrogate_problem(text)[0])
    loader = _BoundedLoader(text)
    loader.max_nodes = max_nodes
    try:
        return loader.get_single_data()
    except RecursionError:
        raise yaml.YAMLError(f"nested too deeply to read; keep nesting under {MAX_YAML_DEPTH} levels") from None
    finally:
        loader.dispose()


def _key_identity(key: str) -> str:
    """What a key looks like to a reader: NFKC-folded, without invisible characters or line breaks."""
    if key.isascii() and key.isprintable():
        return key  # the fast path: almost every key
    import unicodedata

    folded = unicodedata.normalize("NFKC", key)
    return "".join(char for char in folded if unicodedata.category(char) not in _INVISIBLE_CATEGORIES)


def _shown(value: Any, limit: int = 60) -> str:
    """A value quoted for a message: escaped, so invisible characters show, and cut when long."""
    text = ascii(value) if isinstance(value, str) and not value.isprintable() else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def text_bound(text: str) -> int:
    """A value bound for a file that may legitimately be long (a store export of every version):
    as many values as the text has characters, and never fewer than `MAX_YAML_NODES`.

    Written out, every value takes at least one character of the text, so no file within the bound
    is refused for its length alone; only aliases can expand a document past it, and then to no
    more than the text itself could hold.
    """
    return max(MAX_YAML_NODES, len(text))


def _measure(root: yaml.Node, max_nodes: int = MAX_YAML_NODES) -> None:
    """Refuse a document that nests too deep or expands, through aliases, to too many values.

    A level-by-level walk that counts an aliased node each time it is used, and stops at the first
    bound passed, so it costs at most `max_nodes` steps; a self-referencing alias trips the
    depth bound. Being iterative, a deep document raises `ConfigError`, never `RecursionError`.
    """
    level = [root]
    depth = count = 0
    mapping, sequence = yaml.MappingNode, yaml.SequenceNode
    while level:
        depth += 1
        if depth > MAX_YAML_DEPTH:
            raise yaml.constructor.ConstructorError(
                None, None, f"nested over {MAX_YAML_DEPTH} levels deep; flatten the structure", level[0].start_mark
            )
        below: list[yaml.Node] = []
        for node in level:
            kind = node.__class__
            if kind is mapping:
                for pair in node.value:
                    below += pair
            elif kind is sequence:
                below += node.value
        count += len(below)
        if count > max_nodes:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"the document expands to over {max_nodes} values (aliases count each time they are "
                "used); write the values out or shorten them",
                below[0].start_mark,
            )
        level = below


def _keys(node: yaml.Node) -> Iterator[tuple[str, yaml.Node, yaml.Node]]:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                yield key_node.value, key_node, value_node


#: Top-level keys whose entries get lines of their own, for provenance and errors.
_ITEMIZED = frozenset({"variables", "templates"})


def _field_lines(root: yaml.Node, nested: tuple[str, ...], mapped: tuple[str, ...] = ()) -> dict[tuple[str, ...], int]:
    """Where each top-level key, some of their entries, and each `<nested>.<name>.<key>` starts.

    The first of duplicates counts. Entries of `variables:` and `templates:` are keyed by name
    (`("variables", "company")`), and items of a list that may be templates by index
    (`("constraints", 2)`), so a provenance row or an error can point at the one entry's line.
    Keys of a `mapped` field's mapping are recorded too, at the top level (`model_settings.seed`)
    and inside each nested entry (`deployments.prod.model_settings.seed`).
    """
    lines: dict[tuple[str, ...], int] = {}
    for key, key_node, value_node in _keys(root):
        lines.setdefault((key,), key_node.start_mark.line + 1)
        kind = value_node.__class__
        if kind is yaml.SequenceNode:
            for index, item in enumerate(value_node.value):
                # only items that may be templates: their errors point at their own line
                if item.__class__ is yaml.ScalarNode and "{" in item.value:
                    lines.setdefault((key, index), item.start_mark.line + 1)  # type: ignore[arg-type]
        elif (key in _ITEMIZED or key in mapped) and kind is yaml.MappingNode:
            for name, name_node, _ in _keys(value_node):
                lines.setdefault((key, name), name_node.start_mark.line + 1)
        if key in nested:
            for deployment, deployment_node, overlay_node in _keys(value_node):
                lines.setdefault((key, deployment), deployment_node.start_mark.line + 1)
                for field, field_node, inner in _keys(overlay_node):
                    lines.setdefault((key, deployment, field), field_node.start_mark.line + 1)
                    if field in mapped:
                        for name, name_node, _ in _keys(inner):
                            lines.setdefault((key, deployment, field, name), name_node.start_mark.line + 1)
    return lines


def read_documents(
    text: str,
    file: str,
    *,
    nested: tuple[str, ...] = (),
    mapped: tuple[str, ...] = (),
    max_nodes: int = MAX_YAML_NODES,
) -> tuple[list[Any], list[ConfigIssue], list[dict[tuple[str, ...], int]]]:
    """Every document of `text`, the duplicate-key problems found, and per document each key's line.

    `nested` names top-level keys whose entries' own keys get their lines recorded too (a persona's
    `deployments`); `mapped` names fields whose own keys get theirs (`model_settings`), at the top
    and inside nested entries. Problems that stop parsing raise; duplicate keys are returned, so a
    caller can report them with every other problem of the file.

    Raises:
        ConfigError: the text is not YAML, nests too deep or expands to too many values.
    """
    if isinstance(text, str) and _SURROGATE.search(text):
        problem, line, column = _surrogate_problem(text)
        raise ConfigError(ConfigIssue(problem, file=file, line=line, column=column))
    loader = _CheckedLoader(text, nested, mapped, max_nodes)
    try:
        documents = []
        while loader.check_data():
            documents.append(loader.get_data())
        return documents, loader.issues, loader.field_lines
    except yaml.MarkedYAMLError as exc:
        problem, line, column = describe_yaml_error(exc)
        raise ConfigError(ConfigIssue(f"invalid YAML: {problem}", file=file, line=line, column=column)) from None
    except yaml.reader.ReaderError as exc:  # a character YAML refuses (NUL, other controls): only an offset
        raise ConfigError(_reader_issue(exc, text, file)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(ConfigIssue(f"invalid YAML: {_cut(str(exc))}", file=file)) from None
    except RecursionError:
        raise ConfigError(
            ConfigIssue(f"nested too deeply to read; keep nesting under {MAX_YAML_DEPTH} levels", file=file)
        ) from None
    finally:
        loader.dispose()


#: A lone surrogate: text decoded with `surrogateescape`, or a JSON `\ud800` escape; libyaml cannot take it.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_problem(text: str) -> tuple[str, int, int]:
    """The first lone surrogate of `text`, as a message and its line and column (from 1)."""
    found = _SURROGATE.search(text)
    assert found is not None
    position = found.start()
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return (
        f"invalid YAML: the character U+{ord(found.group()):04X} is half of a UTF-16 pair (a lone surrogate), "
        "which no YAML text can hold; remove it, or write the whole character it was cut from",
        line,
        column,
    )


def _reader_issue(exc: yaml.reader.ReaderError, text: str, file: str) -> ConfigIssue:
    """A character YAML does not allow, at its line and column instead of PyYAML's offset."""
    position = exc.position if isinstance(exc.position, int) and 0 <= exc.position <= len(text) else None
    if position is None:
        return ConfigIssue(f"invalid YAML: {_cut(str(exc))}", file=file)
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    code = exc.character if isinstance(exc.character, int) else ord(text[position]) if position < len(text) else 0
    escape = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return ConfigIssue(
        f"invalid YAML: the character U+{code:04X} is not allowed in a YAML file; remove it, or write it as an "
        f'escape inside a double-quoted text ("{escape}")',
        file=file,
        line=line,
        column=column,
    )


#: What was left open, by the context PyYAML names, and what closes it.
_UNCLOSED = {
    "while parsing a flow sequence": ("the '[' opened here", "add ']'"),
    "while parsing a flow mapping": ("the '{' opened here", "add '}'"),
    "while scanning a quoted scalar": ("the quote opened here", "close it with the same quote"),
}


def describe_yaml_error(exc: yaml.MarkedYAMLError) -> tuple[str, int | None, int | None]:
    """A YAML syntax error as a message and the line and column (from 1) to fix it at.

    An unclosed `[`, `{` or quote is noticed lines later, where the parser gives up; the message
    points at where it was opened, which is where the fix goes, and says where it was noticed.
    Other errors point where they were noticed and name what was being read, and from where.
    """
    problem = exc.problem or exc.context or "invalid YAML"
    opened, noticed = exc.context_mark, exc.problem_mark
    if opened is not None and noticed is not None and (opened.line, opened.column) != (noticed.line, noticed.column):
        at = f"line {noticed.line + 1}, column {noticed.column + 1}"
        unclosed = _UNCLOSED.get(exc.context or "")
        if unclosed is not None:
            what, fix = unclosed
            return f"{what} is not closed (noticed at {at}: {problem}); {fix}", opened.line + 1, opened.column + 1
        problem = f"{problem} ({exc.context} from line {opened.line + 1})"
    if isinstance(exc, yaml.constructor.ConstructorError) and "constructor for the tag" in problem:
        problem += "; a tag that builds an object is never loaded here: remove the tag and write the value plainly"
    mark = noticed or opened
    return problem, (mark.line + 1 if mark else None), (mark.column + 1 if mark else None)


def _cut(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def locator(text: str, index: int, key_locs: set[tuple[Any, ...]]) -> Any:
    """Map a field path in document `index` to (line, column), composing the YAML only now.

    Paths in `key_locs` (unknown fields) point at their key; any other path at its value.
    """
    nodes = list(yaml.compose_all(text, Loader=_BaseLoader))
    root = nodes[index] if index < len(nodes) else None

    def locate(loc: tuple[Any, ...]) -> tuple[int | None, int | None]:
        node = root
        if node is None:
            return None, None
        for depth, part in enumerate(loc):
            found = None
            if isinstance(node, yaml.MappingNode):
                for key_node, value_node in node.value:
                    if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                        found = key_node if depth == len(loc) - 1 and loc in key_locs else value_node
                        break
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                found = node.value[part]
            if found is None:
                break
            node = found
        return node.start_mark.line + 1, node.start_mark.column + 1

    return locate


def as_path(path: object, *, kind: str = "persona") -> Path:
    """`path` as a Path; anything else is said here as a ConfigError, not by `Path()` as a TypeError."""
    if isinstance(path, str) or (isinstance(path, os.PathLike) and isinstance(os.fspath(path), str)):
        return Path(path)
    raise ConfigError(f"a {kind} path must be text or a pathlib.Path, got {type(path).__name__}")


def read_at_most(path: Path, limit: int) -> bytes | None:
    """The file's bytes, or None when it holds more than `limit`.

    Read no further than that: a device or a pipe (`/dev/zero`, `<(…)`) has no size to check
    first, and a file can grow after its size was read.

    Raises:
        OSError: the file cannot be opened or read.
    """
    with path.open("rb") as file:
        raw = file.read(limit + 1)
    return raw if len(raw) <= limit else None


def read_text(path: Path, *, kind: str = "persona") -> str:
    """A YAML file's text, refused when missing, unreadable, over `MAX_FILE_BYTES` or not UTF-8.

    `kind` names what the file should hold (a persona, a dataset mapping, …) in the messages.
    """
    try:
        status = path.stat()
        size, mode = status.st_size, status.st_mode
    except FileNotFoundError:
        raise ConfigError(ConfigIssue("file not found; check the path", file=str(path))) from None
    except OSError as exc:
        raise ConfigError(ConfigIssue(f"cannot read the file: {exc.strerror}", file=str(path))) from None
    if stat.S_ISDIR(mode):
        remedy = (
            "name one persona file in it (`profiles validate` and `profiles check` take folders)"
            if kind == "persona"
            else f"name the {kind} file itself"
        )
        raise ConfigError(ConfigIssue(f"this is a folder; {remedy}", file=str(path)))
    if size > MAX_FILE_BYTES:
        raise ConfigError(
            ConfigIssue(f"file is {size} bytes, over the {MAX_FILE_BYTES}-byte limit for a {kind}", file=str(path))
        )
    try:
        raw = read_at_most(path, MAX_FILE_BYTES)
    except OSError as exc:
        raise ConfigError(ConfigIssue(f"cannot read the file: {exc.strerror}", file=str(path))) from None
    if raw is None:
        raise ConfigError(
            ConfigIssue(f"file holds over {MAX_FILE_BYTES} bytes, the limit for a {kind}", file=str(path))
        )
    try:
        return raw.decode("utf-8-sig")  # a BOM some editors write is not part of the persona
    except UnicodeDecodeError as exc:
        raise ConfigError(
            ConfigIssue(f"not UTF-8 text (byte {exc.start}); save the file as UTF-8", file=str(path))
        ) from None
