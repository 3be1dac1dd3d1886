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
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from .config import PYTHON_ONLY_FIELDS
from .errors import ConfigError, ConfigIssue
from .fields import confine_root_var, type_name
from .lookalikes import lookalike
from .profile_config import ProfileConfig
from .safe_yaml import as_path, locator, read_documents, read_text

__all__ = [
    "PERSONA_SUFFIXES",
    "PersonaFile",
    "iter_persona_files",
    "load_persona_files",
    "load_profile",
    "load_profiles",
    "parse_profiles",
]

#: Suffixes of persona files in a folder.
PERSONA_SUFFIXES = (".yaml", ".yml")

#: Keys whose entries' own keys get their lines recorded: each overlay's fields, for provenance,
#: and each template's kind, for messages about it.
_NESTED_KEYS = ("deployments", "templates")

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


def parse_profiles(
    text: str | bytes, *, file: str = "<string>", base_dir: str | Path | None = None, partial: bool = False
) -> list[ProfileConfig]:
    """Validate every YAML document of `text`; raise one `ConfigError` listing all problems.

    `extends:` paths are relative to `base_dir` (the working directory when None), which is also
    the root they must stay inside. `partial` reads personas that need not be complete, such as
    a dataset's base persona: a name and a role may come from elsewhere. Bytes are read as UTF-8,
    as a file is.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")  # as a file is read
        except UnicodeDecodeError as exc:
            raise ConfigError(ConfigIssue(f"not UTF-8 text (byte {exc.start}); give it as UTF-8", file=file)) from None
    if not isinstance(text, str):
        raise ConfigError(
            ConfigIssue(f"a persona must be given as text (a str of YAML), got {type(text).__name__}", file=file)
        )
    base_dir = None if base_dir is None else as_path(base_dir, kind="base_dir")
    documents, issues, field_lines = read_documents(text, file, nested=_NESTED_KEYS, mapped=_MAPPED_KEYS)
    issues = [replace(issue, file=file) for issue in issues]
    if not documents or all(document is None for document in documents):
        raise ConfigError(ConfigIssue("the file is empty; a persona needs at least a name and a role", file=file))
    configs = []
    problems = list(issues)
    starts: list[tuple[int, int]] | None = None
    for index, document in enumerate(documents):
        if document is None:
            continue  # an empty document, as a trailing `---` makes: nothing to load, nothing lost
        if not isinstance(document, dict):
            if starts is None:
                starts = _document_starts(text)
            line, column = starts[index] if index < len(starts) else (1, 1)
            problems.append(
                ConfigIssue(
                    f"a persona must be a mapping of fields (name: …, role: …), got {_kind_of(document)}",
                    file=file,
                    line=line,
                    column=column,
                )
            )
            continue
        if "fields" in document and set(document) <= {"fields", "id"}:
            problems.append(
                ConfigIssue(
                    "this is a dataset mapping (fields:, id:), not a persona; name it *.map.yaml so that "
                    "folder walks leave it out, and pass it to batch with --map",
                    file=file,
                    line=1,
                    column=1,
                )
            )
            continue
        other = lookalike(document, file)
        if other is not None:
            problems.append(ConfigIssue(other, file=file, line=1, column=1))
            continue
        source = _Source(text, index, file, base_dir, field_lines[index] if index < len(field_lines) else {})
        root = base_dir or Path.cwd()
        token = confine_root_var.set(root)  # parents' template paths stay inside this persona's folder
        try:
            configs.append(_build(document, source, root=root, chain=None, partial=partial))
        except ConfigError as exc:
            problems.extend(exc.issues)
        finally:
            confine_root_var.reset(token)
    if problems:
        problems.sort(key=lambda issue: (issue.line or 0, issue.column or 0))
        raise ConfigError(problems)
    return configs


def _document_starts(text: str) -> list[tuple[int, int]]:
    """Where each document's content starts (line, column), to place a problem with a whole document."""
    import yaml

    starts: list[tuple[int, int]] = []
    waiting = False
    try:
        for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(event, yaml.DocumentStartEvent):
                waiting = True
            elif waiting:
                starts.append((event.start_mark.line + 1, event.start_mark.column + 1))
                waiting = False
    except yaml.YAMLError:  # read once already; without places, problems go at the top
        return []
    return starts


def _kind_of(value: Any) -> str:
    """What a document that is not a persona holds: its text or number shown, else `type_name`'s words."""
    if isinstance(value, str):
        return f"the text {value[:40]!r}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"the number {value!r}"
    return type_name(value)


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
    for name in PYTHON_ONLY_FIELDS:
        if name in document:  # code cannot come from a file
            raise ConfigError(
                source.issue(f"{name} can be set only from Python (ProfileConfig({name}=…)); remove it", name)
            )
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
    from .inheritance import merge_configs  # imported here: most personas extend nothing

    data, lines = merge_configs([*parents, child])
    return source.validate(data, partial=partial, lines=lines)


def _load_parent(ref: str, source: _Source, root: Path, chain: tuple[Any, ...]) -> ProfileConfig:
    """The persona `ref` names, read relative to the file that names it and confined to `root`."""
    folder = source.base_dir or Path.cwd()
    if "\x00" in ref:  # no file name holds one: the system refuses the path outright
        raise ConfigError(source.issue(f"{ref!r} holds a NUL character; name the parent's file without it", "extends"))
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
    parents = _PARENTS.get()
    if parents is not None:
        parents.add(resolved)
    seen = [path for path, _ in chain]
    if resolved in seen:
        cycle = " → ".join([*(name for _, name in chain[seen.index(resolved) :]), label])
        raise ConfigError(source.issue(f"extends cycle: {cycle}; remove one of these extends", "extends"))
    if len(chain) >= MAX_EXTENDS_DEPTH:
        raise ConfigError(source.issue(f"extends chain is over {MAX_EXTENDS_DEPTH} files deep; flatten it", "extends"))
    if path.is_dir():
        raise ConfigError(source.issue(f"parent persona {label!r} is a folder; name a persona file in it", "extends"))
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
    try:
        return _build(documents[0], parent, root=root, chain=(*chain, (resolved, label)), partial=True)
    except ConfigError as exc:
        # say which persona the parent's problem breaks; a deeper parent already named its whole chain
        through = " → ".join(name for _, name in chain) or source.file
        raise ConfigError([issue if issue.via else replace(issue, via=(through,)) for issue in exc.issues]) from None


def load_profile(
    path: str | Path, *, name: str | None = None, index: int | None = None, partial: bool = False
) -> ProfileConfig:
    """Load the persona in a YAML file; in a file of several `---` documents, the one picked.

    `name` picks the persona whose `name:` is that text; `index` the persona at that place (1 is
    the first document). With `partial`, the persona need not have a name and role.

    Raises:
        ConfigError: with every problem in the file, each with file, line, column and field; or the
            file holds several personas and none was picked, or the one asked for is not there.
    """
    path = as_path(path)
    configs = parse_profiles(read_text(path), file=str(path), base_dir=path.parent, partial=partial)
    return _pick(configs, str(path), name, index)


def _pick(configs: list[ProfileConfig], file: str, name: str | None, index: int | None) -> ProfileConfig:
    def names() -> str:
        return ", ".join(f"{number}: {config.name if isinstance(config.name, str) else '(dynamic)'}"
                         for number, config in enumerate(configs, start=1))

    if name is not None and index is not None:
        raise ConfigError(ConfigIssue("pick a persona by name or by index, not both", file=file))
    if index is not None and type(index) is not int:
        raise ConfigError(
            ConfigIssue(f"index must be a whole number (1 is the first persona), got {type(index).__name__}", file=file)
        )
    if name is not None and not isinstance(name, str):
        raise ConfigError(
            ConfigIssue(f"name must be text, a persona's name: value, got {type(name).__name__}", file=file)
        )
    if index is not None:
        if not 1 <= index <= len(configs):
            raise ConfigError(
                ConfigIssue(f"holds {len(configs)} persona(s), so there is no number {index}; they are {names()}",
                            file=file)
            )
        return configs[index - 1]
    if name is not None:
        found = [config for config in configs if config.name == name]
        if len(found) != 1:
            what = "no persona" if not found else f"{len(found)} personas"
            how = "; pick one by number instead (--index N, load_profile(path, index=N))" if found else ""
            raise ConfigError(
                ConfigIssue(f"holds {what} named {name!r}; its personas are {names()}{how}", file=file)
            )
        return found[0]
    if len(configs) != 1:
        raise ConfigError(
            ConfigIssue(
                f"holds {len(configs)} personas ({names()}); pick one by name or number (--name NAME or --index N "
                "on the command line, name=… or index=N in Python, as in load_profile(path, name=…) and "
                "explain(path, name=…)), or load them all with load_profiles()",
                file=file,
            )
        )
    return configs[0]


def load_profiles(path: str | Path) -> dict[str, ProfileConfig]:
    """Load every persona in a folder of `*.yaml`/`*.yml` files, or in a file of several documents.

    A folder is read without its subfolders, leaving out what is not a persona (see
    `load_persona_files`). Keys are file stems; a file of several documents adds `#2`, `#3`, …
    after the first. Problems of every file are reported together.
    """
    result: dict[str, ProfileConfig] = {}
    problems: list[ConfigIssue] = []
    for loaded in load_persona_files([as_path(path)], recursive=False):
        problems.extend(loaded.issues)
        for index, config in enumerate(loaded.configs, start=1):
            result[loaded.path.stem if index == 1 else f"{loaded.path.stem}#{index}"] = config
    if problems:
        raise ConfigError(problems)
    return result


@dataclass
class PersonaFile:
    """One persona file a walk loaded: its personas, or the problems that kept it from loading."""

    path: Path
    configs: list[ProfileConfig]
    issues: list[ConfigIssue]

    def label(self, index: int) -> str:
        """How a report names persona `index` (from 1): the file, or `FILE#N (name)` in a file of several."""
        if len(self.configs) == 1:
            return str(self.path)
        name = self.configs[index - 1].name
        return f"{self.path}#{index}" + (f" ({name})" if isinstance(name, str) else "")


def load_persona_files(paths: list[Path], *, recursive: bool = True) -> list[PersonaFile]:
    """Load the persona files named, and those found in the folders named (with subfolders, by default).

    A file named directly is always loaded. In a folder, these are left out, as not personas:

    * names starting with `.` (files and folders alike);
    * linked folders, and linked files that lead outside the folder named;
    * dataset mappings, `*.map.yaml` / `*.map.yml`, and model-family rules, `families.yaml`;
    * parents: a file that another file of the walk `extends` is loaded as part of each child,
      not on its own, since it need not be a whole persona.

    Problems are reported per file; the same problem reached through several children (a
    parent's) is reported once.
    """
    found: list[tuple[Path, bool]] = []
    for path in paths:
        if path.is_dir():
            found.extend((file, False) for file in iter_persona_files([path], recursive=recursive))
        else:
            found.append((path, True))
    loaded: list[tuple[PersonaFile, bool]] = []
    parents: set[Path] = set()
    # a parent's problem reaches every child that extends it: report it once, naming them all
    first: dict[ConfigIssue, tuple[PersonaFile, int]] = {}
    for file, named in found:
        used: set[Path] = set()
        token = _PARENTS.set(used)
        try:
            result = PersonaFile(file, parse_profiles(read_text(file), file=str(file), base_dir=file.parent), [])
        except ConfigError as exc:
            result = PersonaFile(file, [], [])
            for issue in exc.issues:
                if issue in first:
                    owner, index = first[issue]
                    earlier = owner.issues[index]
                    more = tuple(chain for chain in issue.via if chain not in earlier.via)
                    owner.issues[index] = replace(earlier, via=(*earlier.via, *more))
                    continue
                first[issue] = (result, len(result.issues))
                result.issues.append(issue)
        finally:
            _PARENTS.reset(token)
        parents |= used
        loaded.append((result, named))
    if not parents:
        return [result for result, _ in loaded]
    return [result for result, named in loaded if named or result.path.resolve() not in parents]


#: Files a folder walk leaves out by name: dataset mappings and model-family rules.
NOT_PERSONAS = (".map.yaml", ".map.yml")
RULES_FILES = ("families.yaml", "families.yml")

#: While a walk loads one file, the parent files its personas extend, resolved.
_PARENTS: ContextVar[set[Path] | None] = ContextVar("profiles_parents", default=None)


def iter_persona_files(paths: list[Path], *, recursive: bool = True) -> Iterator[Path]:
    """Persona files named directly, or found in named folders by the rules of `load_persona_files`.

    Only the rules by name apply here; leaving out parents takes loading the files.
    """
    for path in paths:
        if path.is_dir():
            yield from _persona_files(path, recursive)
        else:
            yield path


def _is_persona_name(name: str) -> bool:
    return (
        name.endswith(PERSONA_SUFFIXES)
        and not name.startswith(".")
        and not name.endswith(NOT_PERSONAS)
        and name not in RULES_FILES
    )


def _persona_files(folder: Path, recursive: bool, root: Path | None = None) -> list[Path]:
    """The persona files in `folder` (and its subfolders), in name order; one directory read per folder.

    A walk stays inside the folder it was given: a linked file counts only when it leads to a file
    inside that folder, and a linked folder is not entered (it could lead outside, or back up into
    itself).
    """
    root = root or folder.resolve()
    files: list[Path] = []
    with os.scandir(folder) as entries:
        items = sorted(entries, key=lambda entry: entry.name)
    for entry in items:
        if entry.name.startswith("."):
            continue
        if entry.is_file():
            if _is_persona_name(entry.name) and (
                not entry.is_symlink() or Path(entry.path).resolve().is_relative_to(root)
            ):
                files.append(folder / entry.name)
        elif recursive and entry.is_dir(follow_symlinks=False):
            files.extend(_persona_files(folder / entry.name, recursive, root))
    return files
