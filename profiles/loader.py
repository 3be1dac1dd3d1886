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

from .errors import ConfigError, ConfigIssue
from .inheritance import merge_configs
from .profile_config import ProfileConfig
from .safe_yaml import locator, read_documents, read_text

__all__ = ["PERSONA_SUFFIXES", "load_profile", "load_profiles", "parse_profiles"]

#: Suffixes of persona files in a folder.
PERSONA_SUFFIXES = (".yaml", ".yml")

#: Keys whose entries' own keys get their lines recorded: each overlay's fields, for provenance.
_NESTED_KEYS = ("deployments",)

#: Fields whose keys get their lines recorded: each setting, for provenance; each input, for warnings;
#: each template and sample, for problems found in them.
_MAPPED_KEYS = ("model_settings", "inputs", "templates", "samples")


def _located(issues: list[ConfigIssue], text: str, index: int, file: str) -> list[ConfigIssue]:
    keys = {issue.loc for issue in issues if issue.code == "extra_forbidden"}
    locate = locator(text, index, keys)
    located = []
    for issue in issues:
        if issue.file is not None:  # it knows its place already, e.g. a template file's line
            located.append(issue)
            continue
        line, column = locate(issue.loc) if issue.loc else (None, None)
        located.append(replace(issue, file=file, line=line, column=column))
    return located


def parse_profiles(text: str, *, file: str = "<string>", base_dir: Path | None = None) -> list[ProfileConfig]:
    """Validate every YAML document of `text`; raise one `ConfigError` listing all problems.

    `extends:` paths are relative to `base_dir` (the working directory when None), which is also
    the root they must stay inside.
    """
    documents, issues, field_lines = read_documents(text, file, nested=_NESTED_KEYS, mapped=_MAPPED_KEYS)
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
    text = read_text(path)
    documents, issues, field_lines = read_documents(text, label, nested=_NESTED_KEYS, mapped=_MAPPED_KEYS)
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
    configs = parse_profiles(read_text(path), file=str(path), base_dir=path.parent)
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
            configs = parse_profiles(read_text(file), file=str(file), base_dir=file.parent)
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
