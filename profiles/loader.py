"""Read persona YAML into `ProfileConfig`, reporting every problem with file, line and column.

Loading is the hot path when thousands of personas are read, so the file is parsed once with
libyaml; positions of problems are recovered from a second parse only when something is wrong.
The lines of the fields themselves (for provenance: `yaml:a.yaml:4`, `overlay prod: a.yaml:9`)
are read from the nodes while constructing, which costs a walk over a few keys.

`extends:` names parent personas relative to the file that names it, confined to the folder of
the persona being loaded (the root): no absolute paths, no `..` or symlink leading out of it.
Each file is validated on its own, so a problem points at the file and line that hold it, and
the results merge as `inheritance.merge_configs` says.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from .config import ProfileConfig
from .errors import ConfigError, ConfigIssue

__all__ = ["MAX_FILE_BYTES", "PERSONA_SUFFIXES", "load_profile", "load_profiles", "parse_profiles", "safe_load"]

#: Largest persona file read, in bytes; personas are small and a huge file is a mistake or an attack.
MAX_FILE_BYTES = 2_000_000

#: Most values a document may hold once aliases are expanded; a small alias bomb expands to billions.
MAX_YAML_NODES = 100_000

#: Deepest nesting of mappings and lists in a document.
MAX_YAML_DEPTH = 64

# characters that do not show, or show as a line break: keys differing only by them look the same
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc", "Zl", "Zp", "Mn"})

PERSONA_SUFFIXES = (".yaml", ".yml")

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Scalar, _Sequence, _Mapping = yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode
_STR_TAG, _SEQ_TAG, _MAP_TAG = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"


def _plain_keys(node: yaml.MappingNode) -> bool:
    """Whether every key is distinct plain text, checked in bulk: the case that needs no key checks."""
    keys = [key_node.value for key_node, _ in node.value if key_node.__class__ is _Scalar and key_node.tag == _STR_TAG]
    joined = "".join(keys)
    return len(keys) == len(node.value) == len(set(keys)) and joined.isascii() and joined.isprintable()


class _PersonaLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe loading that records duplicate keys instead of silently keeping the last one."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.issues: list[ConfigIssue] = []
        #: Per document, the line each field (and each overlay's field) is written on.
        self.field_lines: list[dict[tuple[str, ...], int]] = []

    def construct_document(self, node: yaml.Node) -> Any:
        # measured before anything is built: an alias bomb loads fast but is huge once walked
        _measure(node)
        # the nodes are at hand here, so recording field lines costs a walk over a few keys,
        # not the second parse that recovering positions later would need
        self.field_lines.append(_field_lines(node))
        try:
            return self._build(node, {})
        finally:
            self.constructed_objects = {}
            self.recursive_objects = {}

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
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag == "tag:yaml.org,2002:merge":
                kept.append((key_node, value_node))
                continue
            key = _key_identity(key_node.value) if isinstance(key_node, yaml.ScalarNode) else id(key_node)
            if key in seen:
                first = seen[key].start_mark.line + 1
                shown = _shown(key_node.value)
                same = "" if key_node.value == seen[key].value else ", differing only in hidden or look-alike letters"
                self.issues.append(
                    ConfigIssue(
                        f"duplicate key {shown} (first at line {first}{same}); keep one of them",
                        shown.strip("'\""),
                        line=key_node.start_mark.line + 1,
                        column=key_node.start_mark.column + 1,
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


class _BoundedLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """The safe loader with the alias-expansion and depth bounds of persona files."""

    def construct_document(self, node: yaml.Node) -> Any:
        _measure(node)
        return super().construct_document(node)


def safe_load(text: str) -> Any:
    """`yaml.safe_load` for the project's other YAML files (family rules, mappings, store files).

    libyaml when present, with alias expansions and nesting bounded as in persona files; every
    failure, a too-deep document included, is a `yaml.YAMLError`, never a `RecursionError`.
    """
    loader = _BoundedLoader(text)
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


def _measure(root: yaml.Node) -> None:
    """Refuse a document that nests too deep or expands, through aliases, to too many values.

    A level-by-level walk that counts an aliased node each time it is used, and stops at the first
    bound passed, so it costs at most `MAX_YAML_NODES` steps; a self-referencing alias trips the
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
        if count > MAX_YAML_NODES:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"the document expands to over {MAX_YAML_NODES} values (aliases count each time they are "
                "used); write the values out or shorten them",
                below[0].start_mark,
            )
        level = below


def _keys(node: yaml.Node) -> Iterator[tuple[str, yaml.Node, yaml.Node]]:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                yield key_node.value, key_node, value_node


def _field_lines(root: yaml.Node) -> dict[tuple[str, ...], int]:
    """Where each top-level field and each `deployments.<name>.<field>` starts; the first of duplicates."""
    lines: dict[tuple[str, ...], int] = {}
    for key, key_node, value_node in _keys(root):
        lines.setdefault((key,), key_node.start_mark.line + 1)
        if key == "deployments":
            for deployment, deployment_node, overlay_node in _keys(value_node):
                lines.setdefault((key, deployment), deployment_node.start_mark.line + 1)
                for field, field_node, _ in _keys(overlay_node):
                    lines.setdefault((key, deployment, field), field_node.start_mark.line + 1)
    return lines


def _read(path: Path) -> str:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise ConfigError(ConfigIssue("file not found; check the path", file=str(path))) from None
    except OSError as exc:
        raise ConfigError(ConfigIssue(f"cannot read the file: {exc.strerror}", file=str(path))) from None
    if size > MAX_FILE_BYTES:
        raise ConfigError(
            ConfigIssue(f"file is {size} bytes, over the {MAX_FILE_BYTES}-byte limit for a persona", file=str(path))
        )
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(ConfigIssue(f"cannot read the file: {exc.strerror}", file=str(path))) from None
    try:
        return raw.decode("utf-8-sig")  # a BOM some editors write is not part of the persona
    except UnicodeDecodeError as exc:
        raise ConfigError(
            ConfigIssue(f"not UTF-8 text (byte {exc.start}); save the file as UTF-8", file=str(path))
        ) from None


def _documents(text: str, file: str) -> tuple[list[Any], list[ConfigIssue], list[dict[tuple[str, ...], int]]]:
    loader = _PersonaLoader(text)
    try:
        documents = []
        while loader.check_data():
            documents.append(loader.get_data())
        return documents, loader.issues, loader.field_lines
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (None, None)
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(ConfigIssue(f"invalid YAML: {problem}", file=file, line=line, column=column)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(ConfigIssue(f"invalid YAML: {_cut(str(exc))}", file=file)) from None
    except RecursionError:
        raise ConfigError(
            ConfigIssue(f"nested too deeply to read; keep nesting under {MAX_YAML_DEPTH} levels", file=file)
        ) from None
    finally:
        loader.dispose()


def _cut(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _locator(text: str, index: int, key_locs: set[tuple[Any, ...]]) -> Any:
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


def _located(issues: list[ConfigIssue], text: str, index: int, file: str) -> list[ConfigIssue]:
    keys = {issue.loc for issue in issues if issue.code == "extra_forbidden"}
    locate = _locator(text, index, keys)
    located = []
    for issue in issues:
        line, column = locate(issue.loc) if issue.loc else (None, None)
        located.append(replace(issue, file=file, line=line, column=column))
    return located


def parse_profiles(text: str, *, file: str = "<string>", base_dir: Path | None = None) -> list[ProfileConfig]:
    """Validate every YAML document of `text`; raise one `ConfigError` listing all problems.

    `extends:` paths are relative to `base_dir` (the working directory when None), which is also
    the root they must stay inside.
    """
    documents, issues, field_lines = _documents(text, file)
    issues = [replace(issue, file=file) for issue in issues]
    if not documents or all(document is None for document in documents):
        raise ConfigError(ConfigIssue("the file is empty; a persona needs at least a name and a role", file=file))
    configs = []
    problems = list(issues)
    for index, document in enumerate(documents):
        if not isinstance(document, dict):
            kind = "a list" if isinstance(document, list) else type(document).__name__
            problems.append(
                ConfigIssue(f"a persona must be a mapping of fields, got {kind}", file=file, line=1, column=1)
            )
            continue
        source = _Source(text, index, file, base_dir, field_lines[index] if index < len(field_lines) else {})
        try:
            configs.append(_build(document, source, root=base_dir or Path.cwd(), chain=None))
        except ConfigError as exc:
            problems.extend(exc.issues)
    if problems:
        problems.sort(key=lambda issue: (issue.line or 0, issue.column or 0))
        raise ConfigError(problems)
    return configs


#: Deepest chain of `extends` followed; deeper is surely a mistake.
MAX_EXTENDS_DEPTH = 16


@dataclass(frozen=True)
class _Source:
    """One persona document and where it came from, for locating its problems."""

    text: str
    index: int
    file: str
    base_dir: Path | None
    lines: dict[tuple[str, ...], int]

    def issue(self, message: str, *path: str) -> ConfigIssue:
        line = self.lines.get(path) if path else None
        return ConfigIssue(message, ".".join(path), self.file, line, 1 if line else None, loc=path)

    def validate(self, data: dict[str, Any], *, partial: bool, lines: Any = None) -> ProfileConfig:
        own_lines = {path: (self.file, line) for path, line in self.lines.items()}
        try:
            return ProfileConfig.from_data(
                data,
                base_dir=self.base_dir,
                source_file=self.file,
                lines=own_lines if lines is None else lines,
                partial=partial,
            )
        except ConfigError as exc:
            raise ConfigError(_located(exc.issues, self.text, self.index, self.file)) from None


def _build(
    document: dict[str, Any], source: _Source, *, root: Path, chain: tuple[Any, ...] | None, partial: bool = False
) -> ProfileConfig:
    """Validate one persona document, first loading and merging the personas it `extends`.

    `chain` is the files being loaded, outermost first; None for a top-level document, whose own
    file is looked up only when it extends another (most do not, and loading stays fast).
    """
    if "extends" not in document:
        return source.validate(document, partial=partial)
    if chain is None:
        path = Path(source.file)
        chain = ((path.resolve(), source.file),) if source.file != "<string>" and path.is_file() else ()
    from .inheritance import merge_configs

    refs = document["extends"]
    if isinstance(refs, str):
        refs = [refs]
    if not isinstance(refs, list) or not refs or not all(isinstance(ref, str) and ref.strip() for ref in refs):
        raise ConfigError(
            source.issue("expected a persona file's path or a list of them, e.g. extends: base.yaml", "extends")
        )
    problems: list[ConfigIssue] = []
    parents: list[ProfileConfig] = []
    for ref in refs:
        try:
            parents.append(_load_parent(ref, source, root, chain))
        except ConfigError as exc:
            problems.extend(exc.issues)
    own = {key: value for key, value in document.items() if key != "extends"}
    try:
        child = source.validate(own, partial=True)
    except ConfigError as exc:
        problems.extend(exc.issues)
    if problems:
        raise ConfigError(problems)
    data, lines = merge_configs([*parents, child])
    return source.validate(data, partial=partial, lines=lines)


def _load_parent(ref: str, source: _Source, root: Path, chain: tuple[Any, ...]) -> ProfileConfig:
    """The persona `ref` names, read relative to the file that names it and confined to `root`."""
    folder = source.base_dir or Path.cwd()
    pure = PurePosixPath(ref.replace("\\", "/"))
    if pure.is_absolute() or ref[1:3] in (":\\", ":/"):
        raise ConfigError(
            source.issue(f"{ref!r} is an absolute path; name the parent relative to this file", "extends")
        )
    path = folder / pure
    label = os.path.normpath(path)
    try:
        resolved = path.resolve()
        inside = resolved.is_relative_to(root.resolve())
    except OSError:
        inside = False
    if not inside:
        raise ConfigError(
            source.issue(
                f"{ref!r} leads outside {root}, the folder of the persona being loaded; "
                "keep parent personas in that folder or below it",
                "extends",
            )
        )
    seen = [path for path, _ in chain]
    if resolved in seen:
        cycle = " → ".join([*(name for _, name in chain[seen.index(resolved) :]), label])
        raise ConfigError(source.issue(f"extends cycle: {cycle}; remove one of these extends", "extends"))
    if len(chain) >= MAX_EXTENDS_DEPTH:
        raise ConfigError(source.issue(f"extends chain is over {MAX_EXTENDS_DEPTH} files deep; flatten it", "extends"))
    if not path.is_file():
        raise ConfigError(source.issue(f"parent persona {label!r} not found; check the path", "extends"))
    text = _read(path)
    documents, issues, field_lines = _documents(text, label)
    if issues:
        raise ConfigError([replace(issue, file=label) for issue in issues])
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise ConfigError(
            ConfigIssue("a parent persona must be one YAML mapping of fields", file=label, line=1, column=1)
        )
    parent = _Source(text, 0, label, path.parent, field_lines[0] if field_lines else {})
    return _build(documents[0], parent, root=root, chain=(*chain, (resolved, label)), partial=True)


def load_profile(path: str | Path) -> ProfileConfig:
    """Load the persona in a YAML file.

    Raises:
        ConfigError: with every problem in the file, each with file, line, column and field.
    """
    path = Path(path)
    configs = parse_profiles(_read(path), file=str(path), base_dir=path.parent)
    if len(configs) != 1:
        raise ConfigError(
            ConfigIssue(f"holds {len(configs)} personas; use load_profiles() for several", file=str(path))
        )
    return configs[0]


def load_profiles(path: str | Path) -> dict[str, ProfileConfig]:
    """Load every persona in a folder of `*.yaml`/`*.yml` files, or in a file of several documents.

    Keys are file stems; a file of several documents adds `#2`, `#3`, … after the first.
    Problems of every file are reported together.
    """
    path = Path(path)
    files = _persona_files(path) if path.is_dir() else [path]
    result: dict[str, ProfileConfig] = {}
    problems: list[ConfigIssue] = []
    for file in files:
        try:
            configs = parse_profiles(_read(file), file=str(file), base_dir=file.parent)
        except ConfigError as exc:
            problems.extend(exc.issues)
            continue
        for index, config in enumerate(configs, start=1):
            result[file.stem if index == 1 else f"{file.stem}#{index}"] = config
    if problems:
        raise ConfigError(problems)
    return result


def iter_persona_files(paths: list[Path]) -> Iterator[Path]:
    """Persona files named directly or found (not recursively) in named folders."""
    for path in paths:
        if path.is_dir():
            yield from _persona_files(path)
        else:
            yield path


def _persona_files(folder: Path) -> list[Path]:
    """The persona files directly in `folder`, by name; one directory read, no stat per file."""
    with os.scandir(folder) as entries:
        names = sorted(
            entry.name for entry in entries if entry.name.endswith(PERSONA_SUFFIXES) and entry.is_file()
        )
    return [folder / name for name in names]
