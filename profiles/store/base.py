"""``PromptStore``: prompts keyed by name, language and model, with immutable numbered versions and
movable labels, on any SQLAlchemy URL the store supports (SQLite file or PostgreSQL).

Every public method runs in one transaction, so a failure leaves nothing half-written, and turns
database failures into ``StoreError``. SQLAlchemy is imported when a store opens, not when this
module is imported.

Moving a label is a release, so every move is governed the same way, whether it comes from
``set_label``, ``put(label=...)``, ``rollout``, ``undo_label`` or ``import_``: it is recorded
(label, from, to, time, author, note) in the same transaction; ``expect=`` makes it a
compare-and-set; a protected label moves only with ``force=True``. A server in front of the store
decides who may pass ``force=True`` (an admin token); the store only enforces that someone did.
"""

from __future__ import annotations

import difflib
import os
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from profiles.errors import (
    LabelConflictError,
    PromptNotFoundError,
    ProtectedLabelError,
    StoreError,
    StoreNotFoundError,
)
from profiles.store.keys import (
    MAX_NUMBER,
    PromptKey,
    candidate_keys,
    check_content,
    check_size,
    check_text,
    make_key,
)
from profiles.store.models import (
    Arm,
    ImportResult,
    LabelMatch,
    LabelMove,
    PromptSummary,
    PromptVersion,
    ProtectedLabel,
)

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from profiles.store.lookup import BestMatch, Lookup

__all__ = ["DEFAULT_LOCK_TIMEOUT", "MAX_ARMS", "PromptStore"]

#: Seconds a writer waits for another process's lock before a "locked" StoreError.
DEFAULT_LOCK_TIMEOUT = 30.0
#: Times a write is retried after losing a race for a version number (should be rare: writers lock).
_WRITE_ATTEMPTS = 20
#: Most versions one label may be rolled out over.
MAX_ARMS = 16
#: Most validated lookups a store remembers (one per name, language, model and labels asked).
_MEMO_LIMIT = 1024

T = TypeVar("T")


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _check_label(label: str) -> str:
    if not isinstance(label, str) or not label.strip() or label != label.strip():
        raise StoreError(f"a label must be non-empty text without surrounding spaces, got {label!r}")
    return check_size("a label", check_text("a label", label))


#: What a label chain calls the newest version; a label of that name would never be read by a chain.
_NEWEST = "latest"


def _check_movable(label: str) -> str:
    """A label a move may point somewhere: any checked label but `latest`, which every label chain
    reads as the newest version, so a label of that name would say one thing and serve another."""
    _check_label(label)
    if label == _NEWEST:
        raise StoreError(
            "'latest' is not a label to move: label chains read it as the newest version, always; "
            "name the label something else, e.g. stable"
        )
    return label


def _check_version(version: int) -> int:
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= MAX_NUMBER:
        raise StoreError(f"a version is a whole number from 1 to {MAX_NUMBER}, got {version!r}")
    return version


def _check_expect(expect: int | None) -> int | None:
    if expect is not None and (
        isinstance(expect, bool) or not isinstance(expect, int) or not 0 <= expect <= MAX_NUMBER
    ):
        raise StoreError(
            f"expect= is the version the label points at now, from 1 to {MAX_NUMBER} (0: the label does not "
            f"exist yet), got {expect!r}"
        )
    return expect


def _check_chain(labels: object) -> list[str | None]:
    """A label chain given as something other than a list or tuple: a generator is read once, and
    anything else (one label as text, None) says what a chain is instead of being read letter by
    letter or failing inside the lookup."""
    if isinstance(labels, (str, bytes, Mapping)) or not isinstance(labels, Iterable):
        raise StoreError(
            f"labels= is a list of labels tried in order, e.g. ['staging', 'production', None] (None: the newest "
            f"version), got {labels!r}"[:300]
        )
    chain = list(labels)
    if not chain:
        raise StoreError("labels= names at least one label (None: the newest version), got an empty list")
    return chain


def _check_arms(arms: Mapping[int, int] | Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    if isinstance(arms, (str, bytes)) or not isinstance(arms, (Mapping, Iterable)):
        raise StoreError(f"a rollout is a mapping of version to weight, e.g. {{3: 90, 4: 10}}, got {arms!r}"[:300])
    items = tuple(arms.items() if isinstance(arms, Mapping) else arms)
    if not items:
        raise StoreError("a rollout needs at least one version=weight, e.g. 3=90 4=10")
    if len(items) > MAX_ARMS:
        raise StoreError(f"a rollout has at most {MAX_ARMS} versions, got {len(items)}")
    checked = []
    for item in items:
        if not isinstance(item, tuple) or len(item) != 2:
            raise StoreError(f"a rollout arm is (version, weight), got {item!r}")
        version, weight = item
        _check_version(version)
        if isinstance(weight, bool) or not isinstance(weight, int) or not 1 <= weight <= MAX_NUMBER:
            raise StoreError(
                f"the weight of v{version} must be a whole number from 1 to {MAX_NUMBER}, got {weight!r}"
            )
        checked.append((version, weight))
    numbers = [version for version, _ in checked]
    if len(set(numbers)) != len(numbers):
        raise StoreError(f"a rollout names each version once; got versions {numbers}")
    return tuple(checked)


def _where(version: int | None, arms: tuple[tuple[int, int], ...] = ()) -> str:
    if arms:
        return ", ".join(f"v{number} ({weight})" for number, weight in arms)
    return "nowhere (the label does not exist)" if version is None else f"v{version}"


def _check_text(what: str, value: str | None) -> str:
    value = value or ""
    if not isinstance(value, str):
        raise StoreError(f"{what} must be text, got {type(value).__name__}")
    return check_text(what, value)


class PromptStore:
    """A versioned prompt store at a SQLAlchemy URL; see ``open_store`` for where the URL comes from.

    Versions are numbered 1, 2, 3 … per (name, language, model) and never change once written.
    Labels (``production``, ``staging`` or any name) point at one version each, or at several
    with weights (a rollout), and can move; every move is recorded. Safe to share between
    threads; each process opens its own.

    A store written by an earlier release is upgraded in place when it is opened: the tables it
    lacks are created, once, however many processes open it at the same moment.

    Args:
        url: ``sqlite:///path.db``, a bare file path, or ``postgresql+psycopg://user:pw@host/db``.
        lock_timeout: seconds to wait for another writer's lock (SQLite) before failing.
        create: create the store when there is none (the default); with False, a missing SQLite
            file or a database without the store's tables is a ``StoreNotFoundError``, and
            nothing is created: that is how reading commands open a store.

    Raises:
        StoreError: the URL is unsupported, the database cannot be reached, is locked or corrupt.
        StoreNotFoundError: ``create=False`` and there is no store at ``url``.
    """

    def __init__(self, url: str, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT, create: bool = True) -> None:
        from profiles.store.engine import create_store_engine

        self._backend = create_store_engine(url, lock_timeout=lock_timeout, create=create)
        self._reader: BestMatch | None = None
        #: Validated lookups by what was asked, so a repeated one goes straight to the database.
        self._lookups: dict[Any, Lookup] = {}
        self._memo_lock = threading.Lock()
        self._create = create
        #: The SQLite file, and which file it was when opened (device, inode): see `_check_file`.
        self._file = self._backend.file
        self._file_id: tuple[int, int] | None = None
        self._file_checked = time.monotonic()
        self._file_lock = threading.Lock()
        try:
            self._open(create)
        except BaseException:
            self._backend.engine.dispose()  # a corrupt or locked file must not stay open
            raise

    # -- plumbing ---------------------------------------------------------------------------------

    def _open(self, create: bool) -> None:
        from profiles.store import queries

        state = self._execute(queries.schema_state)
        if state == "missing" and not create:
            raise StoreNotFoundError(
                f"no prompt store at {self.url}: the database holds none yet; reading never creates one, "
                "`profiles store put NAME` does"
            )
        if state != "current":  # new, or written by an earlier release: add the missing tables
            try:
                self._execute(queries.ensure_schema, write=True)
            except StoreError as exc:
                if state != "old":
                    raise
                raise StoreError(
                    f"the prompt store at {self.url} was written by an earlier release, and this one reads it only "
                    f"once its new tables are added, which failed: {exc.message}; open it once where it may be "
                    "written (`profiles store list` as a user who may write the file), then it reads anywhere"
                ) from exc
        if self._file is not None:
            self._file_id = _file_identity(self._file)

    def _check_file(self, write: bool) -> None:
        """Follow a SQLite file that was removed or replaced while the store was open.

        An open SQLite connection keeps reading and writing the file it opened, even once that
        file is deleted or another file is moved in its place (a restore from a backup, a new
        store imported in its place): a long-running process would serve the old prompts and
        write into a file nobody can see. So the file is checked before each write, and at most
        once a second before reads; when it changed, every connection is dropped and the store
        opens the file that is there now. A removed file is an error for reads; a write
        creates a new store there when this store may create one.

        Raises:
            StoreError: the file was removed (and this is a read, or the store may not create).
            StoreNotFoundError: a file that holds no store was put in its place.
        """
        path = self._file
        if path is None:
            return
        now = time.monotonic()
        if not write and now - self._file_checked < _FILE_CHECK_SECONDS:
            return
        self._file_checked = now
        if _file_identity(path) == self._file_id:
            return
        with self._file_lock:
            current = _file_identity(path)
            if current == self._file_id:
                return  # another thread followed it meanwhile
            if self._reader is not None:
                self._reader.close()
            self._backend.engine.dispose()
            if current is None and not (write and self._create):  # and so on at every check till it is back
                raise StoreError(
                    f"the SQLite prompt store {str(path)!r} was removed while it was open; put it back, or "
                    "point --store or PROFILES_STORE_URL at the store to use (a write with `profiles store put` "
                    "creates a new one there)"
                )
            self._open(self._create and write)

    def _run(self, work: Callable[[Connection], T], *, write: bool = False) -> T:
        """``_execute`` on the store's current file (see ``_check_file``)."""
        self._check_file(write)
        return self._execute(work, write=write)

    def _execute(self, work: Callable[[Connection], T], *, write: bool = False) -> T:
        """Run ``work`` in one transaction (``BEGIN IMMEDIATE`` on SQLite for writes), retrying a
        write that lost a race for a unique key, and translating database errors to StoreError."""
        from sqlalchemy.exc import DBAPIError, IntegrityError

        from profiles.store.failures import translate_errors
        from profiles.store.sqlite import WRITE_OPTION

        backend = self._backend
        with translate_errors(backend.describe, backend.driver_errors):
            attempt = 0
            while True:
                attempt += 1
                committing = False
                try:
                    with backend.engine.connect() as conn:
                        if write:
                            conn = conn.execution_options(**{WRITE_OPTION: True})
                        with conn.begin():
                            result = work(conn)
                            committing = True
                        return result
                except IntegrityError:
                    if not write or attempt >= _WRITE_ATTEMPTS:
                        raise
                    time.sleep(random.uniform(0, 0.005 * attempt))
                except DBAPIError as exc:
                    # a pooled connection the server dropped (there is no pre-ping): nothing was
                    # committed, so the work runs once more on a fresh connection; a failure while
                    # committing is not retried, since the commit may have happened
                    if not exc.connection_invalidated or committing or attempt > 1:
                        raise

    def _lookup(self) -> BestMatch:
        """The one-statement reader of ``match``, made at the first lookup."""
        reader = self._reader
        if reader is None:
            from profiles.store.lookup import BestMatch

            reader = self._reader = BestMatch(self._backend)
        return reader

    @property
    def url(self) -> str:
        """The store's URL with any password hidden."""
        return self._backend.display

    def close(self) -> None:
        """Close pooled connections; the store can still be used and reconnects on demand."""
        if self._reader is not None:
            self._reader.close()
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
        expect: int | None = None,
        force: bool = False,
    ) -> PromptVersion:
        """Add a new version (the prompt's newest number plus one) and optionally point ``label`` at it.

        Content equal to the newest version's adds no version: the newest is returned with
        ``unchanged=True``, and ``label`` still moves to it. ``expect`` and ``force`` govern the
        label move as in ``set_label``; when the move is refused, no version is added either.

        Raises:
            StoreError: the content is empty, a part is invalid, or the database fails; nothing is
                written then.
            LabelConflictError: ``expect`` no longer holds.
            ProtectedLabelError: ``label`` is protected and ``force`` is False.
        """
        from profiles.store import queries

        key = make_key(name, language, model)
        content = _check_text("the content", content)
        check_content("the content", content)
        if not content.strip():
            raise StoreError(
                f"the content for {key} is empty; a prompt needs text (give --file FILE or pipe the text in)"
            )
        author = _check_text("the author", author)
        note = _check_text("the note", note)
        if label is not None:
            _check_movable(label)
        _check_expect(expect)

        def write(conn: Connection) -> PromptVersion:
            now = _now()
            prompt_id = queries.lock_prompt(conn, key, now)
            newest = queries.read_version(conn, key, prompt_id, None)
            unchanged = newest is not None and newest.content == content
            if unchanged:
                assert newest is not None
                version = newest.version
            else:
                version = queries.next_version(conn, prompt_id)
                record = PromptVersion(key.name, key.language, key.model, version, content, now, author, note)
                queries.insert_version(conn, prompt_id, record)
            if label is not None:
                self._move(conn, key, prompt_id, label, version, (), now, expect, force, author, note)
            found = queries.read_version(conn, key, prompt_id, version)
            assert found is not None  # inserted or read in this transaction
            return replace(found, unchanged=unchanged)

        return self._run(write, write=True)

    def set_label(
        self,
        name: str,
        label: str,
        version: int,
        *,
        language: str | None = None,
        model: str | None = None,
        expect: int | None = None,
        force: bool = False,
        author: str | None = None,
        note: str | None = None,
    ) -> PromptVersion:
        """Point ``label`` at ``version`` of one exact prompt key, moving it if it pointed elsewhere.

        The move is recorded with ``author`` and ``note`` (see ``moves``); pointing a label where it
        already points records nothing. ``expect`` makes the move a compare-and-set: it happens only
        if the label still points at that version (0: only if the label does not exist yet), so
        two releasers cannot overwrite each other.

        Raises:
            PromptNotFoundError: that key has no such version.
            LabelConflictError: the label no longer points at ``expect``.
            ProtectedLabelError: the label is protected and ``force`` is False.
        """
        _check_version(version)
        return self._label_write(name, label, version, (), language, model, expect, force, author, note)[0].record

    def rollout(
        self,
        name: str,
        label: str,
        arms: Mapping[int, int] | Iterable[tuple[int, int]],
        *,
        language: str | None = None,
        model: str | None = None,
        expect: int | None = None,
        force: bool = False,
        author: str | None = None,
        note: str | None = None,
    ) -> tuple[Arm, ...]:
        """Point ``label`` at several versions with weights, e.g. ``{3: 90, 4: 10}``; recorded like a move.

        A lookup with a rollout key picks one of them, the same for the same key every time, in
        proportion to the weights (relative: ``90, 10`` is ``9, 1``); without a key, the first.
        One version is an ordinary label move. ``expect`` compares with the version the label
        serves without a key (its first). Returns the arms as stored.

        Raises:
            StoreError: no arm, a weight below 1, a version named twice, or over ``MAX_ARMS``.
            PromptNotFoundError: a version does not exist.
            LabelConflictError, ProtectedLabelError: as for ``set_label``.
        """
        checked = _check_arms(arms)
        return self._label_write(name, label, checked[0][0], checked, language, model, expect, force, author, note)

    def undo_label(
        self,
        name: str,
        label: str,
        *,
        language: str | None = None,
        model: str | None = None,
        expect: int | None = None,
        force: bool = False,
        author: str | None = None,
        note: str | None = None,
    ) -> LabelMove:
        """Move ``label`` back to where it pointed before its last move, and record that as a move.

        Undoing again steps further back (an undo is never itself undone this way); undoing the
        move that created the label removes it. Returns the recorded move.

        Raises:
            StoreError: the label has no recorded move left to undo.
            LabelConflictError: the label moved without a record (by an earlier release), or
                ``expect`` no longer holds.
            ProtectedLabelError: the label is protected and ``force`` is False.
        """
        from profiles.store import queries

        key = make_key(name, language, model)
        _check_label(label)
        _check_expect(expect)
        author = _check_text("the author", author)
        note = _check_text("the note", note)

        def write(conn: Connection) -> LabelMove:
            prompt_id = queries.lock_existing_prompt(conn, key)
            if prompt_id is None:
                raise PromptNotFoundError(f"no prompt {key} in {self.url}; see `profiles store list`")
            moves = queries.read_moves(conn, key, prompt_id, label)
            undone = {move.undoes for move in moves if move.undoes is not None}
            last = next(
                (move for move in reversed(moves) if move.undoes is None and move.seq not in undone), None
            )
            if last is None:
                raise StoreError(
                    f"label {label!r} of {key} has no recorded move left to undo; see `profiles store history {name}`"
                )
            current = queries.label_map(conn, [prompt_id])[prompt_id].get(label)
            current_arms = queries.arm_map(conn, [prompt_id])[prompt_id].get(label, ())
            if (current, current_arms) != (last.to_version, last.to_arms):
                raise LabelConflictError(
                    f"label {label!r} of {key} points at {_where(current, current_arms)}, but its last recorded "
                    f"move (#{last.seq}) took it to {_where(last.to_version, last.to_arms)}: it was moved "
                    "without a record, so there is nothing safe to undo; move it with `profiles store label`"
                )
            why = note or f"undo of move #{last.seq} ({last.after} → {last.before})"
            move = self._move(
                conn, key, prompt_id, label, last.from_version, last.from_arms, _now(), expect, force, author, why,
                undoes=last.seq,
            )
            assert move is not None  # the undone move changed something, so undoing it does too
            return move

        return self._run(write, write=True)

    def protect(self, label: str, *, author: str | None = None) -> bool:
        """Protect ``label`` in the whole store: from now on it moves only with ``force=True``.

        Returns False when it was protected already. Who may protect, unprotect or force is for
        whatever sits in front of the store to decide (the HTTP API asks for its admin token).
        `latest` is no label to move, so none to protect.
        """
        from profiles.store import queries

        _check_movable(label)
        who = _check_text("the author", author)
        return self._run(lambda conn: queries.protect(conn, label, _now(), who), write=True)

    def unprotect(self, label: str) -> bool:
        """Lift the protection of ``label``; False when it was not protected."""
        from profiles.store import queries

        _check_label(label)
        return self._run(lambda conn: queries.unprotect(conn, label), write=True)

    def protected_labels(self) -> tuple[ProtectedLabel, ...]:
        """The protected labels of the store, sorted by name."""
        from profiles.store import queries

        found = self._run(queries.protected)
        return tuple(ProtectedLabel(label, when, who) for label, (when, who) in sorted(found.items()))

    def _label_write(
        self,
        name: str,
        label: str,
        version: int,
        arms: tuple[tuple[int, int], ...],
        language: str | None,
        model: str | None,
        expect: int | None,
        force: bool,
        author: str | None,
        note: str | None,
    ) -> tuple[Arm, ...]:
        """Move a label to one version or to rollout ``arms``, governed and recorded; return the arms."""
        from profiles.store import queries

        key = make_key(name, language, model)
        _check_movable(label)
        _check_expect(expect)
        author = _check_text("the author", author)
        note = _check_text("the note", note)
        wanted = arms or ((version, 1),)

        def write(conn: Connection) -> tuple[Arm, ...]:
            prompt_id = queries.lock_existing_prompt(conn, key)
            records = []
            for number, weight in wanted:
                found = None if prompt_id is None else queries.read_version(conn, key, prompt_id, number)
                if found is None:
                    raise PromptNotFoundError(
                        f"cannot label {key} v{number}: no such version; see `profiles store history`"
                    )
                records.append((found, weight))
            assert prompt_id is not None
            self._move(conn, key, prompt_id, label, version, arms, _now(), expect, force, author, note)
            return tuple(
                Arm(queries.read_version(conn, key, prompt_id, found.version) or found, weight)
                for found, weight in records
            )

        return self._run(write, write=True)

    def _move(
        self,
        conn: Connection,
        key: PromptKey,
        prompt_id: int,
        label: str,
        version: int | None,
        arms: tuple[tuple[int, int], ...],
        now: datetime,
        expect: int | None,
        force: bool,
        author: str,
        note: str,
        *,
        undoes: int | None = None,
    ) -> LabelMove | None:
        """The one gate every label move passes, inside the caller's transaction and prompt lock:
        compare-and-set, then protection, then the move and its record."""
        from profiles.store import queries

        current = queries.label_map(conn, [prompt_id])[prompt_id].get(label)
        if expect is not None and current != (expect or None):
            current_arms = queries.arm_map(conn, [prompt_id])[prompt_id].get(label, ())
            hint = f"--expect {current}" if current is not None else "--expect 0"
            raise LabelConflictError(
                f"label {label!r} of {key} points at {_where(current, current_arms)}, not "
                f"{_where(expect or None)} as expected: it moved since you looked; check "
                f"`profiles store history {key.name}` and retry with {hint} if the move is still right"
            )
        current_arms = queries.arm_map(conn, [prompt_id])[prompt_id].get(label, ())
        if (current, current_arms) == (version, arms if len(arms) > 1 else ()):
            return None  # already there: nothing to move, nothing to record
        if not force and label in queries.protected(conn):
            raise ProtectedLabelError(
                f"label {label!r} is protected, so moving it on {key} needs --force (force=True in Python); "
                f"it points at {_where(current, current_arms)}"
            )
        return queries.move_label(
            conn, key, prompt_id, label, version, arms, now, author=author, note=note, undoes=undoes
        )

    # -- reading ----------------------------------------------------------------------------------

    def get(
        self,
        name: str,
        *,
        language: str | None = None,
        model: str | None = None,
        label: str | None = None,
        version: int | None = None,
        rollout_key: str | None = None,
    ) -> PromptVersion:
        """Return the best matching version.

        Keys are tried in this order, first match wins: the exact language, then its fallback chain
        (``zh-TW`` → ``zh``), then no language; within each, the exact model, then no model. A key
        matches when it has the requested ``version``, else the requested ``label`` (``latest`` is the
        newest version, as in a label chain), else any version (its latest is returned). A rolled-out
        label gives the version ``rollout_key`` picks (the first without a key).

        Raises:
            PromptNotFoundError: no key matches; the message lists what was tried.
            StoreError: both ``label`` and ``version`` were given.
        """
        if label is not None and version is not None:
            raise StoreError("ask for a label or a version, not both")
        if version is not None:
            _check_version(version)
            return self.match(name, language=language, model=model, version=version).arms[0].record
        return self.find(name, language=language, model=model, labels=[label], rollout_key=rollout_key)[0]

    def find(
        self,
        name: str,
        *,
        language: str | None = None,
        model: str | None = None,
        labels: Sequence[str | None] = (None,),
        rollout_key: str | None = None,
    ) -> tuple[PromptVersion, str | None]:
        """Return the best version for a label chain and which entry of ``labels`` picked it.

        Keys are tried in ``get``'s order (language, then its fallbacks, then no language; exact
        model before no model); for each key, ``labels`` in order, first match wins. A ``None`` in
        ``labels`` matches the key's newest version. So a Chinese prompt labelled only ``production``
        beats an English one labelled ``staging`` when the chain is staging → production: a prompt
        in the wrong language is worse than one a release behind. Everything is read in one
        transaction, so a label moving meanwhile cannot mix two states. A rolled-out label gives
        the version ``rollout_key`` picks (``LabelMatch.pick``).

        Raises:
            PromptNotFoundError: no key has any of the labels; the message lists what was tried.
        """
        found = self.match(name, language=language, model=model, labels=labels)
        return found.arms[found.pick(rollout_key)].record, found.label

    def match(
        self,
        name: str,
        *,
        language: str | None = None,
        model: str | None = None,
        labels: Sequence[str | None] = (None,),
        version: int | None = None,
    ) -> LabelMatch:
        """What ``find`` reads, with every version of a rolled-out label: the first label of the
        chain that matched and its arms. With ``version``, that version of the first key holding it
        (``labels`` is not used then; the match's label is None).

        Raises:
            PromptNotFoundError: nothing matches; the message lists what was tried.
        """
        if self._file is not None:
            self._check_file(False)
        reader = self._reader or self._lookup()
        if not isinstance(labels, (list, tuple)):
            labels = _check_chain(labels)
        try:
            memo_key: Any = (name, language, model, tuple(labels), version)
            lookup = self._lookups.get(memo_key)
        except TypeError:  # something unhashable: validation below says what is wrong with it
            memo_key, lookup = None, None
        if lookup is None:
            # `latest` asked for as a label is the newest version, as in a chain: no label may
            # be called that, so reading it literally could only ever find nothing
            if not labels:
                _check_chain(labels)
            chain = [None if label is None or label == _NEWEST else _check_label(label) for label in labels]
            if version is not None:
                _check_version(version)
            candidates = list(candidate_keys(name, language, model))
            lookup = reader.plan(candidates, None if version is not None else chain, version)
            if memo_key is not None:
                with self._memo_lock:
                    if len(self._lookups) >= _MEMO_LIMIT:
                        self._lookups.clear()
                    self._lookups[memo_key] = lookup
        try:
            found = reader.read(lookup)
        except reader.failures as exc:  # as translate_errors does, without a context manager per read
            raise StoreError(self._backend.describe(exc)) from exc
        if found is None:
            chain = list(labels)
            if version is not None:
                wanted = f"version {version}"
            else:
                wanted = " → ".join("latest" if label is None else repr(label) for label in chain)
                wanted = f"label {wanted}" if chain != [None] else "any version"
            tried = ", ".join(f"({key.language or '-'}, {key.model or '-'})" for key in lookup.candidates)
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

    def moves(
        self, name: str, *, language: str | None = None, model: str | None = None, label: str | None = None
    ) -> tuple[LabelMove, ...]:
        """Return the recorded label moves of one exact key (or of one of its labels), oldest first.

        Raises:
            PromptNotFoundError: the key does not exist.
        """
        from profiles.store import queries

        key = make_key(name, language, model)
        if label is not None:
            _check_label(label)

        def read(conn: Connection) -> list[LabelMove] | None:
            prompt_id = queries.find_prompt_ids(conn, [key]).get(key)
            return None if prompt_id is None else queries.read_moves(conn, key, prompt_id, label)

        found = self._run(read)
        if found is None:
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
        """Write every prompt, all versions and labels (rollouts with their weights), as one YAML file
        per key under ``directory``.

        Returns the files written. Files for keys the store lacks are left alone. The move log and
        the protected labels stay in the store.
        """
        from profiles.store import queries
        from profiles.store.sync import write_folder

        _check_folder(directory, "export")

        def read(conn: Connection) -> dict[PromptKey, tuple[list[PromptVersion], dict[str, Any]]]:
            found = queries.all_prompts(conn)
            label_maps = queries.label_map(conn, list(found.values()))
            arm_maps = queries.arm_map(conn, list(found.values()))
            result: dict[PromptKey, tuple[list[PromptVersion], dict[str, Any]]] = {}
            for key, prompt_id in found.items():
                targets: dict[str, Any] = dict(label_maps[prompt_id])
                targets.update({label: dict(arms) for label, arms in arm_maps[prompt_id].items()})
                result[key] = (queries.read_versions(conn, key, prompt_id), targets)
            return result

        snapshot = {key: value for key, value in self._run(read).items() if value[0]}
        try:
            return tuple(write_folder(Path(directory), snapshot))
        except OSError as exc:
            raise StoreError(f"cannot export prompts to {directory}: {exc}") from exc

    def import_(
        self, directory: str | PathLike[str], *, force: bool = False, author: str | None = None
    ) -> ImportResult:
        """Add the versions and labels of a folder written by ``export``, all at once or not at all.

        A version already in the store with the same content is skipped, so importing an export
        again adds nothing. Labels move to the versions the files name; each move is recorded
        (``author``, a note naming the folder), and a protected label moves only with ``force``.

        Raises:
            StoreError: a file is malformed, or a version number in a file holds different content
                than the store (versions never change; put the new text as a new version instead).
            ProtectedLabelError: the folder would move a protected label and ``force`` is False.
        """
        from profiles.store import queries
        from profiles.store.sync import read_folder

        _check_folder(directory, "import_")
        records = read_folder(Path(directory))
        who = _check_text("the author", author)
        note = _check_text("the note", f"import from {directory}")

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
                for label, target in sorted(record.labels.items()):
                    try:
                        _check_movable(label)
                        arms = _check_arms(target) if isinstance(target, dict) else ((target, 1),)
                    except StoreError as exc:
                        raise StoreError(f"{record.source}: label {label!r}: {exc.message}") from None
                    for number, _weight in arms:
                        if number not in present:
                            raise StoreError(
                                f"{record.source}: label {label!r} points at v{number}, which does not exist"
                            )
                    rollout = arms if len(arms) > 1 else ()
                    if self._move(conn, record.key, prompt_id, label, arms[0][0], rollout, now, None, force, who, note):
                        moved += 1
            return ImportResult(versions_added=added, labels_moved=moved)

        return self._run(write, write=True)


#: Most seconds a read goes on from a SQLite file that was replaced or removed (writes check each time).
_FILE_CHECK_SECONDS = 1.0


def _file_identity(path: Path) -> tuple[int, int] | None:
    """Which file `path` is now (device, inode), None when there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _check_folder(directory: object, method: str) -> None:
    if isinstance(directory, bytes) or not isinstance(directory, (str, PathLike)):
        raise StoreError(f"{method} takes a folder's path (text or pathlib.Path), got {type(directory).__name__}")


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines
