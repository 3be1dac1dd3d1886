"""Review prompts before they ship: diff a persona's rendered prompts between two contexts, and keep
snapshots of every prompt so a pull request shows exactly which prompts it changes.

Prompts are rendered the way `profiles check` renders them: every prompt kind it checks (the
built-in ones, the persona's own, `react` when it has tools), each with the persona's `samples:`,
and the caller's variables on top.

A snapshot is a folder of text files, one per persona × deployment × prompt kind:

    <persona>/<deployment>/<language>/<kind>.txt

`<persona>` is the persona file's path inside the folder that was checked, without `.yaml` (a
document after the first of a multi-document file adds `#2`, `#3`, …); `<deployment>` is each
deployment the persona lists under `deployments:`, and `_base` for the persona without one;
`<language>` is the language that deployment resolves to, `_default` when none. The names depend
only on the personas, so the same personas give the same files on every machine, and a diff of
the folder in a pull request is the diff of the prompts.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .check import kind_samples, prompt_kinds
from .errors import ConfigError, ConfigIssue, ProfilesError, ResolutionError

__all__ = [
    "BASE",
    "MARKER",
    "NO_LANGUAGE",
    "PromptDiff",
    "Side",
    "Snapshot",
    "SnapshotChange",
    "compare_snapshot",
    "diff_prompts",
    "render_prompts",
    "snapshot_prompts",
    "write_snapshot",
]

#: The folder name of a persona rendered without a deployment.
BASE = "_base"
#: The folder name of a persona rendered without a language (English templates).
NO_LANGUAGE = "_default"
#: The file that marks a folder as a snapshot, so `write_snapshot` may remove files from it.
MARKER = ".profiles-snapshot"

_UNSAFE = re.compile(r"[^\w.-]+")


@dataclass(frozen=True)
class Side:
    """One context of a comparison: what `create_profile` is given."""

    deployment: str | None = None
    language: str | None = None
    model: str | None = None
    store_versions: Mapping[str, int] = field(default_factory=dict)

    def label(self, shown: Iterable[str] = ("deployment", "language", "model", "store_versions")) -> str:
        """`deployment=prod language=zh`, naming only the parts in `shown` that are set."""
        shown = tuple(shown)
        parts = []
        for name in shown:
            value = getattr(self, name)
            if name == "store_versions":
                if value:
                    parts.append(" ".join(f"{key}@v{version}" for key, version in sorted(value.items())))
            elif value is not None:
                parts.append(f"{name}={value}")
        if parts:
            return " ".join(parts)
        if "store_versions" in shown:
            return "as labelled"  # the side without pins reads what the labels say
        return f"no {shown[0]}" if shown else "no deployment"


@dataclass(frozen=True)
class PromptDiff:
    """One prompt kind on both sides: its texts (None where that side has no such kind) and their diff."""

    kind: str
    before: str | None
    after: str | None
    diff: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


def render_prompts(
    config: Any,
    side: Side = Side(),
    *,
    variables: Mapping[str, Any] | None = None,
    rollout_key: str | None = None,
) -> dict[str, str]:
    """Every prompt kind of `config` rendered for `side`, with its samples and `variables` on top.

    Raises:
        ProfilesError: the profile cannot be created, or a kind cannot be rendered; the message
            names the kind and the side.
    """
    return _render(config, _create(config, side, rollout_key), side, variables)


def _create(config: Any, side: Side, rollout_key: str | None) -> Any:
    try:
        profile = config.create_profile(
            deployment=side.deployment,
            language=side.language,
            model=side.model,
            rollout_key=rollout_key,
            store_versions=dict(side.store_versions),
        )
    except ConfigError:
        raise
    except ProfilesError as exc:
        raise _within(exc, side.label()) from None
    _check_pins(profile, side)
    return profile


def _check_pins(profile: Any, side: Side) -> None:
    """Refuse a pin nothing was read by: a diff headed `name@v5` must show v5, not the field's
    default that a version the store lacks leaves in place.

    Raises:
        ResolutionError: no field, template or include of the profile was read at the pinned version.
    """
    sources = [str(source) for source in profile.provenance.values()]
    for key, version in side.store_versions.items():
        read = re.compile(rf"store:{re.escape(key)}( \[[^\]]*\])? v{version} pinned\b")
        if not any(read.match(source) for source in sources):
            raise ResolutionError(
                f"{side.label()}: {key}={version} pins a version nothing was read at: the store holds no "
                f"v{version} of {key} for this language and model, or the persona reads no {key}; see "
                f"`profiles store history {key}`"
            )


def _render(config: Any, profile: Any, side: Side, variables: Mapping[str, Any] | None) -> dict[str, str]:
    kinds = prompt_kinds(config, profile)
    prompts = {}
    for kind, samples in kind_samples(config, kinds).items():
        try:
            prompts[kind] = profile.format_prompt(kind, **{**samples, **(variables or {})})
        except ProfilesError as exc:
            raise _within(exc, f"{kind} prompt, {side.label()}") from None
    return prompts


def _within(error: ProfilesError, where: str) -> ProfilesError:
    """The same error with the place it happened in front of its message."""
    try:
        return type(error)(f"{where}: {error.message}")
    except TypeError:  # an error class whose constructor takes more than a message
        wrapped = ProfilesError(f"{where}: {error.message}")
        wrapped.exit_code = error.exit_code
        return wrapped


def diff_prompts(
    config: Any,
    before: Side,
    after: Side,
    *,
    variables: Mapping[str, Any] | None = None,
    rollout_key: str | None = None,
    context: int = 3,
) -> list[PromptDiff]:
    """A unified diff per prompt kind from `before` to `after`, in `check`'s kind order.

    The diff headers name the kind and the parts of the two sides that differ, e.g.
    `--- system (deployment=staging)` and `+++ system (deployment=prod)`. A kind that only one side
    has is diffed against nothing.
    """
    shown = [
        name
        for name in ("deployment", "language", "model", "store_versions")
        if getattr(before, name) != getattr(after, name)
    ] or ["deployment"]
    old = render_prompts(config, before, variables=variables, rollout_key=rollout_key)
    new = render_prompts(config, after, variables=variables, rollout_key=rollout_key)
    result = []
    for kind in [*old, *(kind for kind in new if kind not in old)]:
        a, b = old.get(kind), new.get(kind)
        lines = difflib.unified_diff(  # a prompt ends without a line break; diff it as a file that has one
            _lines(None if a is None else a + "\n"),
            _lines(None if b is None else b + "\n"),
            fromfile=f"{kind} ({before.label(shown)})",
            tofile=f"{kind} ({after.label(shown)})",
            n=context,
        )
        result.append(PromptDiff(kind, a, b, "".join(lines)))
    return result


@dataclass
class Snapshot:
    """Every rendered prompt of some personas, by snapshot file name, and the problems met."""

    files: dict[str, str] = field(default_factory=dict)
    issues: list[ConfigIssue] = field(default_factory=list)


@dataclass(frozen=True)
class SnapshotChange:
    """One prompt that differs from a snapshot: `changed`, `added` (no file yet) or `removed`
    (a file no persona renders any more), with a unified diff from the file to the prompt."""

    name: str
    status: str
    diff: str


def snapshot_prompts(paths: Iterable[str | Path]) -> Snapshot:
    """Render every prompt of every persona in `paths` × each deployment it declares, for a snapshot.

    Never raises for a problem in a persona: each is an issue of the snapshot.
    """
    from .loader import load_persona_files

    snapshot = Snapshot()
    owners: dict[str, str] = {}
    for given in (Path(path) for path in paths):
        try:
            loaded_files = load_persona_files([given])  # the walk `check` makes: no mappings, no parents
        except ProfilesError as exc:
            snapshot.issues.append(ConfigIssue(exc.message, file=str(given)))
            continue
        for loaded in loaded_files:
            file = loaded.path
            if loaded.issues:
                snapshot.issues.extend(loaded.issues)
                continue
            stem = _persona_name(given, file)
            for index, config in enumerate(loaded.configs, start=1):
                persona = stem + ("" if index == 1 else f"#{index}")
                if persona in owners and owners[persona] != str(file):
                    snapshot.issues.append(
                        ConfigIssue(
                            f"its snapshot folder {persona!r} is also that of {owners[persona]}; "
                            "check the two in separate runs, or give their common folder",
                            file=str(file),
                        )
                    )
                    continue
                owners[persona] = str(file)
                _snapshot_persona(config, persona, str(file), snapshot)
    return snapshot


def _snapshot_persona(config: Any, persona: str, file: str, snapshot: Snapshot) -> None:
    for deployment in (None, *sorted(config.deployments)):
        side = Side(deployment=deployment)
        try:
            profile = _create(config, side, None)
            language = profile.get_language() if hasattr(profile, "get_language") else None
            prompts = _render(config, profile, side, None)
        except ProfilesError as exc:
            snapshot.issues.append(ConfigIssue(exc.message, file=file))
            continue
        folder = f"{persona}/{_safe(deployment or BASE)}/{_safe(str(language)) if language else NO_LANGUAGE}"
        for kind, text in prompts.items():
            snapshot.files[f"{folder}/{_safe(kind)}.txt"] = text + "\n"


def write_snapshot(snapshot: Snapshot, directory: str | Path) -> tuple[list[str], list[str]]:
    """Write `snapshot` to `directory` and remove the files of prompts no longer rendered there.

    Returns the names written with a change, and those removed. A folder holding files but no
    snapshot marker is refused, so pointing this at the wrong folder deletes nothing.

    Raises:
        ProfilesError: the folder is not a snapshot folder, or cannot be written.
    """
    root = Path(directory)
    try:
        if root.exists() and any(root.iterdir()) and not (root / MARKER).is_file():
            raise ProfilesError(
                f"{root} holds files but is not a prompt snapshot (no {MARKER} file); "
                "give an empty or new folder for the snapshot"
            )
        root.mkdir(parents=True, exist_ok=True)
        (root / MARKER).write_text("Prompts rendered by `profiles check --snapshot`; do not edit.\n")
        old = _read_snapshot(root)
        changed = []
        for name, text in sorted(snapshot.files.items()):
            if old.get(name) != text:
                path = root / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8", newline="\n")
                changed.append(name)
        removed = sorted(set(old) - set(snapshot.files))
        for name in removed:
            (root / name).unlink()
        for folder in sorted((path for path in root.rglob("*") if path.is_dir()), reverse=True):
            if not any(folder.iterdir()):
                folder.rmdir()
    except OSError as exc:
        raise ProfilesError(f"cannot write the prompt snapshot in {root}: {exc.strerror or exc}") from exc
    return changed, removed


def compare_snapshot(snapshot: Snapshot, directory: str | Path) -> list[SnapshotChange]:
    """The prompts of `snapshot` that differ from the files in `directory`, sorted by name.

    Raises:
        ProfilesError: the folder does not exist or cannot be read.
    """
    root = Path(directory)
    if not root.is_dir():
        raise ProfilesError(f"no prompt snapshot at {root}; write one with `profiles check PATH --snapshot {root}`")
    try:
        old = _read_snapshot(root)
    except OSError as exc:
        raise ProfilesError(f"cannot read the prompt snapshot in {root}: {exc.strerror or exc}") from exc
    changes = []
    for name in sorted(set(old) | set(snapshot.files)):
        before, after = old.get(name), snapshot.files.get(name)
        if before == after:
            continue
        status = "added" if before is None else "removed" if after is None else "changed"
        diff = "".join(difflib.unified_diff(_lines(before), _lines(after), fromfile=f"a/{name}", tofile=f"b/{name}"))
        changes.append(SnapshotChange(name, status, diff))
    return changes


def _read_snapshot(root: Path) -> dict[str, str]:
    return {
        unicodedata.normalize("NFC", path.relative_to(root).as_posix()): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*.txt"))
        if path.is_file()
    }


def _persona_name(given: Path, file: Path) -> str:
    relative = file.relative_to(given) if given.is_dir() else Path(file.name)
    return "/".join(_safe(part) for part in relative.with_suffix("").parts)


def _safe(text: str) -> str:
    """A file-name-safe spelling: letters and digits of any script, `.`, `_` and `-`; anything else
    becomes `-`. Composed (NFC), as `_read_snapshot` reads names back, whatever the file system keeps."""
    cleaned = _UNSAFE.sub("-", unicodedata.normalize("NFC", text)).strip(".") or "-"
    return cleaned


def _lines(text: str | None) -> list[str]:
    if text is None:
        return []
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines
