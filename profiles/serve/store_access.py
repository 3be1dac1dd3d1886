"""The prompt store a server shows: opened once, read without creating it, written on demand.

Reading a store that does not exist yet (the default `.profiles/store.db` before the first put)
answers "empty", never creates a file; the first write creates it, as `profiles store put` does.
A server whose store URL is another server's (`http://…`) reads personas through it like any
agent, but has no store of its own to show: its store routes say where the store is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import PromptNotFoundError, ServeError, StoreError
from ..store.base import PromptStore
from ..store.location import DEFAULT_STORE_PATH
from ..store.models import LabelMatch, LabelMove, PromptSummary, PromptVersion, ProtectedLabel

__all__ = [
    "DEFAULT_READ_CACHE",
    "StoreAccess",
    "database_failure",
    "is_http_url",
    "match_dict",
    "move_dict",
    "protected_dict",
    "summary_dict",
    "version_dict",
]


def is_http_url(url: str | None) -> bool:
    """Whether a store URL names another server rather than a database."""
    return bool(url) and url.strip().lower().startswith(("http://", "https://"))


#: Seconds a read is kept by default before the database is asked again.
DEFAULT_READ_CACHE = 1.0
#: Reads kept at most; the cache starts over when it is full.
_KEPT_READS = 10_000
#: What `reads()` may call, and what `writes()` may call.
_READS = frozenset({"match", "find", "get", "history", "moves", "list", "protected_labels", "diff"})
_WRITES = frozenset({"put", "set_label", "rollout", "undo_label", "protect", "unprotect"})


class StoreAccess:
    """The store at `url` (None: `.profiles/store.db` in the working directory), opened lazily.

    Reads go through `reads()`, which keeps each answer (a "no such prompt" too) for
    `read_cache` seconds: agents polling a label, and the studio's pages, cost the database one
    query per second rather than one per request. Writes go through `writes()`, which forgets
    every kept answer once a write is done, so this server's own changes show at once; a change
    made elsewhere (the CLI on the same database, another server) shows within `read_cache`
    seconds. Compare-and-set moves are checked by the database, never against a kept answer.
    """

    def __init__(self, url: str | None, *, read_cache: float = DEFAULT_READ_CACHE) -> None:
        self.url = (url or "").strip() or "sqlite:///" + str(Path.cwd() / DEFAULT_STORE_PATH)
        self.remote = is_http_url(self.url)
        self.read_cache = read_cache
        self._store: PromptStore | None = None
        self._lock = threading.Lock()
        self._kept: dict[tuple[Any, ...], tuple[float, bool, Any]] = {}
        #: How many times the kept answers were forgotten: a read that began before a write must
        #: not keep its answer, which may be from before the write.
        self._generation = 0
        #: Called after every write: other caches of this process reading the same store.
        self._on_write: list[Callable[[], None]] = []

    @property
    def display(self) -> str:
        """The URL with any password hidden."""
        if self._store is not None:
            return self._store.url
        if not self.remote:
            from ..store.engine import parse_store_url
            from ..store.failures import shown_url

            try:
                return shown_url(parse_store_url(self.url))
            except StoreError:
                pass  # not a URL the store takes: opening it says so; shown as below meanwhile
        scheme, sep, rest = self.url.partition("://")
        if sep and "@" in rest:
            credentials, _, host = rest.rpartition("@")
            if ":" in credentials:
                return f"{scheme}://{credentials.split(':', 1)[0]}:***@{host}"
        return self.url

    def _open(self, *, create: bool) -> PromptStore | None:
        if self.remote:
            raise ServeError(
                f"this server reads its prompts from {self.display}, another server; its store is shown there",
                status=404,
            )
        with self._lock:
            if self._store is not None:
                return self._store
            if not create and self._missing():
                return None
            self._store = PromptStore(self.url)
            return self._store

    def _missing(self) -> bool:
        """Whether the store is a SQLite file that does not exist yet."""
        from ..store.engine import parse_store_url
        from ..store.sqlite import sqlite_path

        parsed = parse_store_url(self.url)
        if parsed.get_backend_name() != "sqlite":
            return False
        path = sqlite_path(parsed)
        return path is not None and not path.exists()

    def _require(self) -> PromptStore:
        store = self._open(create=False)
        if store is None:
            raise PromptNotFoundError(
                f"the prompt store {self.display} is empty: nothing has been put yet; "
                "add a prompt with `profiles store put NAME` or POST /api/store/put"
            )
        return store

    def reads(self) -> _Reads:
        """The store's read methods (`match`, `history`, `moves`, …), answers kept for `read_cache` s.

        Raises:
            PromptNotFoundError: the store does not exist yet.
        """
        return _Reads(self, self._require())

    def writes(self, *, create: bool = False) -> _Writes:
        """The store's write methods (`put`, `set_label`, …); `create` makes a missing store first.

        Raises:
            PromptNotFoundError: the store does not exist and `create` is False.
        """
        store = self._open(create=True) if create else self._require()
        assert store is not None
        return _Writes(self, store)

    def list(self) -> tuple[PromptSummary, ...]:
        """Every prompt key; none while the store does not exist."""
        return () if self._open(create=False) is None else self.reads().list()

    def protected(self) -> tuple[ProtectedLabel, ...]:
        """The protected labels; none while the store does not exist."""
        return () if self._open(create=False) is None else self.reads().protected_labels()

    def forget(self) -> None:
        """Drop every kept answer: the next read asks the database."""
        with self._lock:
            self._kept.clear()
            self._generation += 1
            listeners = list(self._on_write)
        for listener in listeners:
            listener()

    def on_write(self, listener: Callable[[], None]) -> None:
        """Call `listener` after every write through this access (once its kept answers are
        forgotten): the `store` provider rendering personas from the same store expires its own."""
        with self._lock:
            self._on_write.append(listener)

    def _read(self, key: tuple[Any, ...], read: Any) -> Any:
        now = time.monotonic()
        with self._lock:
            kept = self._kept.get(key)
            generation = self._generation
        if kept is not None and now - kept[0] < self.read_cache:
            _, failed, value = kept
            if failed:
                raise PromptNotFoundError(value)
            return value
        try:
            value = read()
        except PromptNotFoundError as exc:  # "no such prompt" is an answer too; a failure is not
            self._keep(key, now, True, exc.message, generation)
            raise
        self._keep(key, now, False, value, generation)
        return value

    def _keep(self, key: tuple[Any, ...], now: float, failed: bool, value: Any, generation: int) -> None:
        if self.read_cache <= 0:
            return
        with self._lock:
            if generation != self._generation:
                return  # a write ran while this read was on its way: its answer may be older
            if len(self._kept) >= _KEPT_READS:
                self._kept.clear()
            self._kept[key] = (now, failed, value)

    def close(self) -> None:
        with self._lock:
            store, self._store = self._store, None
            self._kept.clear()
        if store is not None:
            store.close()


class _Reads:
    """A store's read methods, through the access's cache."""

    def __init__(self, access: StoreAccess, store: PromptStore) -> None:
        self._access = access
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name not in _READS:
            raise AttributeError(f"{name!r} is not a read of the prompt store")
        method = getattr(self._store, name)

        def read(*args: Any, **kwargs: Any) -> Any:
            key = (name, repr(args), repr(sorted(kwargs.items())))
            return self._access._read(key, lambda: method(*args, **kwargs))

        return read


class _Writes:
    """A store's write methods; every kept read is forgotten once one has run."""

    def __init__(self, access: StoreAccess, store: PromptStore) -> None:
        self._access = access
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name not in _WRITES:
            raise AttributeError(f"{name!r} is not a write of the prompt store")
        method = getattr(self._store, name)

        def write(*args: Any, **kwargs: Any) -> Any:
            try:
                return method(*args, **kwargs)
            finally:
                self._access.forget()

        return write


def version_dict(record: PromptVersion) -> dict[str, Any]:
    """A version as the API gives it."""
    return {
        "name": record.name,
        "language": record.language,
        "model": record.model,
        "version": record.version,
        "ref": record.ref,
        "content": record.content,
        "created_at": record.created_at.isoformat(),
        "author": record.author,
        "note": record.note,
        "labels": list(record.labels),
    }


def summary_dict(summary: PromptSummary) -> dict[str, Any]:
    """A prompt key as the list gives it: newest version, where each label points, and the labels
    rolled out over several versions with their weights."""
    return {
        "name": summary.name,
        "language": summary.language,
        "model": summary.model,
        "latest_version": summary.latest_version,
        "updated_at": summary.updated_at.isoformat(),
        "labels": {label: version for label, version in summary.labels},
        "rollouts": {label: [[version, weight] for version, weight in arms] for label, arms in summary.rollouts},
    }


def match_dict(match: LabelMatch) -> dict[str, Any]:
    """A lookup's answer: the version a reader without a rollout key gets, the label that matched
    (`latest` for the newest version), and every version the label serves with its weight."""
    first = match.arms[0].record
    return {
        **version_dict(first),
        "matched": "latest" if match.label is None else match.label,
        "arms": [{**version_dict(arm.record), "weight": arm.weight} for arm in match.arms],
    }


def move_dict(move: LabelMove) -> dict[str, Any]:
    """One recorded label move, as the move log gives it."""
    return {
        "name": move.name,
        "language": move.language,
        "model": move.model,
        "label": move.label,
        "seq": move.seq,
        "from_version": move.from_version,
        "to_version": move.to_version,
        "from_arms": [list(arm) for arm in move.from_arms],
        "to_arms": [list(arm) for arm in move.to_arms],
        "before": move.before,
        "after": move.after,
        "moved_at": move.moved_at.isoformat(),
        "author": move.author,
        "note": move.note,
        "undoes": move.undoes,
    }


def protected_dict(item: ProtectedLabel) -> dict[str, Any]:
    return {"label": item.label, "protected_at": item.protected_at.isoformat(), "author": item.author}


def database_failure(error: StoreError) -> bool:
    """Whether a store error is the database failing (503) rather than a request it refused (4xx)."""
    cause = error.__cause__
    origin = type(cause).__module__.split(".")[0] if cause is not None else ""
    return origin in ("sqlalchemy", "psycopg", "sqlite3", "psycopg2")
