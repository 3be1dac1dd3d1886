"""Read persona YAML into `ProfileConfig`, reporting every problem with file, line and column.

Loading is the hot path when thousands of personas are read, so the file is parsed once with
libyaml; positions are recovered from a second parse only when something is wrong.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from .config import ProfileConfig
from .errors import ConfigError, ConfigIssue

__all__ = ["MAX_FILE_BYTES", "PERSONA_SUFFIXES", "load_profile", "load_profiles", "parse_profiles"]

#: Largest persona file read, in bytes; personas are small and a huge file is a mistake or an attack.
MAX_FILE_BYTES = 2_000_000

PERSONA_SUFFIXES = (".yaml", ".yml")

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _PersonaLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe loading that records duplicate keys instead of silently keeping the last one."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.issues: list[ConfigIssue] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        kept = []
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag == "tag:yaml.org,2002:merge":
                kept.append((key_node, value_node))
                continue
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else id(key_node)
            if key in seen:
                first = seen[key].start_mark.line + 1
                self.issues.append(
                    ConfigIssue(
                        f"duplicate key {key!r} (first at line {first}); keep one of them",
                        str(key),
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


def _documents(text: str, file: str) -> tuple[list[Any], list[ConfigIssue]]:
    loader = _PersonaLoader(text)
    try:
        documents = []
        while loader.check_data():
            documents.append(loader.get_data())
        return documents, loader.issues
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (None, None)
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(ConfigIssue(f"invalid YAML: {problem}", file=file, line=line, column=column)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(ConfigIssue(f"invalid YAML: {exc}", file=file)) from None
    finally:
        loader.dispose()


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
    """Validate every YAML document of `text`; raise one `ConfigError` listing all problems."""
    documents, issues = _documents(text, file)
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
        try:
            configs.append(ProfileConfig.from_data(document, base_dir=base_dir, source_file=file))
        except ConfigError as exc:
            problems.extend(_located(exc.issues, text, index, file))
    if problems:
        problems.sort(key=lambda issue: (issue.line or 0, issue.column or 0))
        raise ConfigError(problems)
    return configs


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
    files = (
        sorted(p for p in path.iterdir() if p.suffix in PERSONA_SUFFIXES and p.is_file()) if path.is_dir() else [path]
    )
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
            yield from sorted(p for p in path.iterdir() if p.suffix in PERSONA_SUFFIXES and p.is_file())
        else:
            yield path
