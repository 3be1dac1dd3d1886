"""``PromptStore``: prompts keyed by name, language and model, with immutable numbered versions and
movable labels, on any SQLAlchemy URL the store supports (SQLite file or PostgreSQL).

Every public method runs in one transaction, so a failure leaves nothing half-written, and turns
database failures into ``StoreError``. SQLAlchemy is imported when a store opens, not when this
module is imported.
"""

from __future__ import annotations

import difflib
import random
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from profiles.errors import PromptNotFoundError, StoreError
from profiles.store.keys import PromptKey, candidate_keys, check_text, make_key
from profiles.store.models import ImportResult, PromptSummary, PromptVersion

if TYPE_CHECKING:
    from sqlalchemy import Connection

__all__ = ["DEFAULT_LOCK_TIMEOUT", "PromptStore"]

#: Seconds a writer waits for another process's lock before a "locked" StoreError.
DEFAULT_LOCK_TIMEOUT = 30.0
#: Times a write is retried after losing a race for a version number (should be rare: writers lock).
_WRITE_ATTEMPTS = 20

T = TypeVar("T")


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _check_label(label: str) -> str:
    if not isinstance(label, str) or not label.strip() or label != label.strip():
        raise StoreError(f"a label must be non-empty text without surrounding spaces, got {label!r}")
    return check_text("a label", label)


def _check_version(version: int) -> int:
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise StoreError(f"a version is a whole number from 1, got {version!r}")
    return version


def _check_text(what: str, value: str | None) -> str:
    value = value or ""
    if not isinstance(value, str):
        raise StoreError(f"{what} must be text, got {type(value).__name__}")
    return check_text(what, value)


class PromptStore:
    """A versioned prompt store at a SQLAlchemy URL; see ``open_store`` for where the URL comes from.

    Versions are numbered 1, 2, 3 … per (name, language, model) and never change once written.
    Labels (``production``, ``staging`` or any name) point at one version each and can move.
    Safe to share between threads; each process opens its own.

    Args:
        url: ``sqlite:///path.db``, a bare file path, or ``postgresql+psycopg://user:pw@host/db``.
        lock_timeout: seconds to wait for another writer's lock (SQLite) before failing.

    Raises:
        StoreError: the URL is unsupported, the database cannot be reached, is locked or corrupt.
    """

    def __init__(self, url: str, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> None:
        from profiles.store.engine import create_store_engine

        self._backend = create_store_engine(url, lock_timeout=lock_timeout)
        try:
            self._open()
        except BaseException:
            self._backend.engine.dispose()  # a corrupt or locked file must not stay open
            raise

    # -- plumbing ---------------------------------------------------------------------------------

    def _open(self) -> None:
        from profiles.store import queries

        if not self._run(queries.schema_exists):
            self._run(queries.ensure_schema, write=True)

    def _run(self, work: Callable[[Connection], T], *, write: bool = False) -> T:
        """Run ``work`` in one transaction (``BEGIN IMMEDIATE`` on SQLite for writes), retrying a
        write that lost a race for a unique key, and translating database errors to StoreError."""
        from sqlalchemy.exc import IntegrityError

        from profiles.store.failures import translate_errors
        from profiles.store.sqlite import WRITE_OPTION

        backend = self._backend
        with translate_errors(backend.describe, backend.driver_errors):
            attempt = 0
            while True:
                attempt += 1
                try:
                    with backend.engine.connect() as conn:
                        if write:
                            conn = conn.execution_options(**{WRITE_OPTION: True})
                        with conn.begin():
                            return work(conn)
                except IntegrityError:
                    if not write or attempt >= _WRITE_ATTEMPTS:
                        raise
                    time.sleep(random.uniform(0, 0.005 * attempt))

    @property
    def url(self) -> str:
        """The store's URL with any password hidden."""
        return self._backend.display

    def close(self) -> None:
        """Close pooled connections; the store can still be used and reconnects on demand."""
        self._backend.engine.dispose()

    def __enter__(self) -> PromptStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PromptStore({self.url!r})"

    # -- writing ----------------------------------------------------------------------------------

    def put(
        self,
        name: str,
        content: str,
        *,
        language: str | None = None,
        model: str | None = None,
        author: str | None = None,
        note: str | None = None,
        label: str | None = None,
    ) -> PromptVersion:
        """Add a new version (the prompt's newest number plus one) and optionally point ``label`` at it.

        Raises:
            StoreError: a part is invalid, or the database fails; nothing is written then.
        """
        from profiles.store import queries

        key = make_key(name, language, model)
        content = _check_text("the content", content)
        author = _check_text("the author", author)
        note = _check_text("the note", note)
        if label is not None:
            _check_label(label)

        def write(conn: Connection) -> PromptVersion:
            now = _now()
            prompt_id = queries.lock_prompt(conn, key, now)
            record = PromptVersion(
                key.name,
                key.language,
                key.model,
                queries.next_version(conn, prompt_id),
                content,
                now,
                author,
                note,
            )
            queries.insert_version(conn, prompt_id, record)
            if label is not None:
                queries.set_label(conn, prompt_id, label, record.version, now)
            found = queries.read_version(conn, key, prompt_id, record.version)
            assert found is not None  # just inserted in this transaction
            return found

        return self._run(write, write=True)

    def set_label(
        self, name: str, label: str, version: int, *, language: str | None = None, model: str | None = None
    ) -> PromptVersion:
        """Point ``label`` at ``version`` of one exact prompt key, moving it if it pointed elsewhere.

        Raises:
            PromptNotFoundError: that key has no such version.
        """
        from profiles.store import queries

        key = make_key(name, language, model)
        _check_label(label)
        _check_version(version)

        def write(conn: Connection) -> PromptVersion:
            prompt_id = queries.find_prompt_ids(conn, [key]).get(key)
            if prompt_id is None or queries.read_version(conn, key, prompt_id, version) is None:
                raise PromptNotFoundError(
                    f"cannot label {key} v{version}: no such version; see `profiles store history`"
                )
            queries.set_label(conn, prompt_id, label, version, _now())
            found = queries.read_version(conn, key, prompt_id, version)
            assert found is not None
            return found

        return self._run(write, write=True)

    # -- reading ----------------------------------------------------------------------------------

    def get(
        self,
        name: str,
        *,
        language: str | None = None,
        model: str | None = None,
        label: str | None = None,
        version: int | None = None,
    ) -> PromptVersion:
        """Return the best matching version.

        Keys are tried in this order, first match wins: the exact language, then its fallback chain
        (``zh-TW`` → ``zh``), then no language; within each, the exact model, then no model. A key
        matches when it has the requested ``version``, else the requested ``label``, else any version
        (its latest is returned).

        Raises:
            PromptNotFoundError: no key matches; the message lists what was tried.
            StoreError: both ``label`` and ``version`` were given.
        """
        from profiles.store import queries

        if label is not None and version is not None:
            raise StoreError("ask for a label or a version, not both")
        if label is not None:
            _check_label(label)
        if version is not None:
            _check_version(version)
        candidates = list(candidate_keys(name, language, model))

        def read(conn: Connection) -> PromptVersion | None:
            ids = queries.find_prompt_ids(conn, candidates)
            for key in candidates:
                prompt_id = ids.get(key)
                if prompt_id is None:
                    continue
                wanted = version
                if label is not None:
                    wanted = queries.label_map(conn, [prompt_id])[prompt_id].get(label)
                    if wanted is None:
                        continue
                found = queries.read_version(conn, key, prompt_id, wanted)
                if found is not None:
                    return found
            return None

        found = self._run(read)
        if found is None:
            wanted = (
                f"label {label!r}"
                if label is not None
                else f"version {version}"
                if version
                else "any version"
            )
            tried = ", ".join(f"({key.language or '-'}, {key.model or '-'})" for key in candidates)
            raise PromptNotFoundError(
                f"no prompt {name!r} with {wanted} in {self.url}; tried (language, model): {tried}; "
                "see `profiles store list`"
            )
        return found

    def find(
        self,
        name: str,
        *,
        language: str | None = None,
        model: str | None = None,
        labels: Sequence[str | None] = (None,),
    ) -> tuple[PromptVersion, str | None]:
        """Return the best version for a label chain and which entry of ``labels`` picked it.

        Keys are tried in ``get``'s order (language, then its fallbacks, then no language; exact
        model before no model); for each key, ``labels`` in order, first match wins. A ``None`` in
        ``labels`` matches the key's newest version. So a Chinese prompt labelled only ``production``
        beats an English one labelled ``staging`` when the chain is staging → production: a prompt
        in the wrong language is worse than one a release behind. Everything is read in one
        transaction, so a label moving meanwhile cannot mix two states.

        Raises:
            PromptNotFoundError: no key has any of the labels; the message lists what was tried.
        """
        from profiles.store import queries

        chain = [None if label is None else _check_label(label) for label in labels]
        candidates = list(candidate_keys(name, language, model))

        def read(conn: Connection) -> tuple[PromptVersion, str | None] | None:
            ids = queries.find_prompt_ids(conn, candidates)
            maps = queries.label_map(conn, list(ids.values()))
            for key in candidates:
                prompt_id = ids.get(key)
                if prompt_id is None:
                    continue
                for label in chain:
                    wanted = None if label is None else maps[prompt_id].get(label)
                    if label is not None and wanted is None:
                        continue
                    found = queries.read_version(conn, key, prompt_id, wanted)
                    if found is not None:
                        return found, label
            return None

        found = self._run(read)
        if found is None:
            wanted = " → ".join("latest" if label is None else repr(label) for label in chain)
            tried = ", ".join(f"({key.language or '-'}, {key.model or '-'})" for key in candidates)
            raise PromptNotFoundError(
                f"no prompt {name!r} with {wanted} in {self.url}; tried (language, model): {tried}; "
                "see `profiles store list`"
            )
        return found

    def history(
        self, name: str, *, language: str | None = None, model: str | None = None
    ) -> tuple[PromptVersion, ...]:
        """Return every version of one exact key, oldest first.

        Raises:
            PromptNotFoundError: the key has no versions.
        """
        from profiles.store import queries

        key = make_key(name, language, model)

        def read(conn: Connection) -> list[PromptVersion]:
            prompt_id = queries.find_prompt_ids(conn, [key]).get(key)
            return [] if prompt_id is None else queries.read_versions(conn, key, prompt_id)

        found = self._run(read)
        if not found:
            raise PromptNotFoundError(f"no prompt {key} in {self.url}; see `profiles store list`")
        return tuple(found)

    def list(self, *, name: str | None = None) -> tuple[PromptSummary, ...]:
        """Return one summary per prompt key (or per key of ``name``), sorted by name, language, model."""
        from profiles.store import queries

        return tuple(self._run(lambda conn: queries.summaries(conn, name)))

    def diff(
        self,
        name: str,
        from_version: int,
        to_version: int,
        *,
        language: str | None = None,
        model: str | None = None,
        context: int = 3,
    ) -> str:
        """Return a unified diff from one version of a key to another; "" when the contents are equal.

        Raises:
            PromptNotFoundError: either version is missing.
        """
        old = self.get(name, language=language, model=model, version=from_version)
        new = self.get(name, language=language, model=model, version=to_version)
        if (old.language, old.model) != (new.language, new.model):
            raise PromptNotFoundError(
                f"{old.ref} and {new.ref} are different prompts; give --language/--model"
            )
        lines = difflib.unified_diff(
            _lines(old.content), _lines(new.content), fromfile=old.ref, tofile=new.ref, n=context
        )
        return "".join(lines)

    # -- folder sync ------------------------------------------------------------------------------

    def export(self, directory: str | PathLike[str]) -> tuple[Path, ...]:
        """Write every prompt, all versions and labels, as one YAML file per key under ``directory``.

        Returns the files written. Files for keys the store lacks are left alone.
        """
        from profiles.store import queries
        from profiles.store.sync import write_folder

        def read(conn: Connection) -> dict[PromptKey, tuple[list[PromptVersion], dict[str, int]]]:
            found = queries.all_prompts(conn)
            label_maps = queries.label_map(conn, list(found.values()))
            return {
                key: (queries.read_versions(conn, key, prompt_id), label_maps[prompt_id])
                for key, prompt_id in found.items()
            }

        snapshot = {key: value for key, value in self._run(read).items() if value[0]}
        try:
            return tuple(write_folder(Path(directory), snapshot))
        except OSError as exc:
            raise StoreError(f"cannot export prompts to {directory}: {exc}") from exc

    def import_(self, directory: str | PathLike[str]) -> ImportResult:
        """Add the versions and labels of a folder written by ``export``, all at once or not at all.

        A version already in the store with the same content is skipped, so importing an export
        again adds nothing. Labels move to the versions the files name.

        Raises:
            StoreError: a file is malformed, or a version number in a file holds different content
                than the store (versions never change; put the new text as a new version instead).
        """
        from profiles.store import queries
        from profiles.store.sync import read_folder

        records = read_folder(Path(directory))

        def write(conn: Connection) -> ImportResult:
            added = moved = 0
            now = _now()
            for record in records:
                prompt_id = queries.lock_prompt(conn, record.key, now)
                present = {
                    found.version: found for found in queries.read_versions(conn, record.key, prompt_id)
                }
                for incoming in record.versions:
                    existing = present.get(incoming.version)
                    if existing is None:
                        queries.insert_version(conn, prompt_id, incoming)
                        present[incoming.version] = incoming
                        added += 1
                    elif existing.content != incoming.content:
                        raise StoreError(
                            f"{record.source}: {existing.ref} in the store holds different content than the "
                            "file; versions never change, so put the file's text as a new version or "
                            "renumber it in the file"
                        )
                current = queries.label_map(conn, [prompt_id])[prompt_id]
                for label, target in sorted(record.labels.items()):
                    _check_label(label)
                    if target not in present:
                        raise StoreError(
                            f"{record.source}: label {label!r} points at v{target}, which does not exist"
                        )
                    if current.get(label) != target:
                        queries.set_label(conn, prompt_id, label, target, now)
                        moved += 1
            return ImportResult(versions_added=added, labels_moved=moved)

        return self._run(write, write=True)


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines
