"""The store's hot read: the best version for a key's language fallback, model and label chain, in
one SQL statement on one pooled connection.

A lookup runs on every store-backed field of every profile a process builds, so it is the one read
that is not written with SQLAlchemy's statement builder: building and compiling a select costs far
more than SQLite takes to answer it. Instead each shape of lookup (how many candidate keys, how many
labels, where ``latest`` stands, or a pinned version) gets its SQL text once, in the driver's own
parameter style, and runs on the pool's DBAPI connection. One statement is one snapshot on both
backends, so a label moving meanwhile cannot mix two states, and it needs no explicit transaction:
SQLite runs it in autocommit mode, PostgreSQL in autocommit too, so a read is one round trip.

What the statement returns for the winning key, besides the version (or the versions of a rollout):
every label and rollout arm of that prompt, because a returned version lists the labels that point
at it. Rollout arms count only when they are valid: more than one version and the first is the one
``labels.version`` names (see ``queries.arm_map``).
"""

from __future__ import annotations

import os
import re
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from profiles.store.keys import PromptKey
from profiles.store.models import Arm, LabelMatch, PromptVersion
from profiles.store.queries import utc

if TYPE_CHECKING:
    from profiles.store.engine import StoreEngine

__all__ = ["BestMatch", "Lookup", "lookup_sql"]

#: A hit is a (key, label of the chain) that names a version; the best hit is the first by key,
#: then by label. The foreign key from labels to versions means the version exists; only the
#: rollout statement checks it again, to fall back as ``queries`` does when an arm is missing.
_HITS_LABELS = """
  SELECT p.id AS pid, CASE {key_rank} END AS krank, CASE l.label {label_rank} END AS lrank,
         l.label AS label, l.version AS version
  FROM profiles_prompts p
  JOIN profiles_prompt_labels l ON l.prompt_id = p.id AND l.label IN ({labels}){check}
  WHERE p.name = :name AND ({key_match})"""

_CHECK_VERSION = """
  JOIN profiles_prompt_versions hv ON hv.prompt_id = l.prompt_id AND hv.version = l.version"""

_HITS_LATEST = """
  SELECT p.id AS pid, CASE {key_rank} END AS krank, {rank} AS lrank, NULL AS label, hv.version AS version
  FROM profiles_prompts p
  JOIN profiles_prompt_versions hv ON hv.prompt_id = p.id AND hv.version =
       (SELECT max(nv.version) FROM profiles_prompt_versions nv WHERE nv.prompt_id = p.id)
  WHERE p.name = :name AND ({key_match})"""

_HITS_VERSION = """
  SELECT p.id AS pid, CASE {key_rank} END AS krank, 0 AS lrank, NULL AS label, hv.version AS version
  FROM profiles_prompts p
  JOIN profiles_prompt_versions hv ON hv.prompt_id = p.id AND hv.version = :version
  WHERE p.name = :name AND ({key_match})"""

#: The usual answer: the best hit's version, once per label pointing at it (once with NULL when
#: none does), and whether the prompt has rollout arms at all; when it has, ``_FULL`` runs instead.
_LEAN = """
SELECT b.krank, b.label, v.version, v.content, v.created_at, v.author, v.note, x.label,
       EXISTS (SELECT 1 FROM profiles_label_arms a WHERE a.prompt_id = b.pid)
FROM ({hits}
  ORDER BY 2, 3 LIMIT 1) b
JOIN profiles_prompt_versions v ON v.prompt_id = b.pid AND v.version = b.version
LEFT JOIN profiles_prompt_labels x ON x.prompt_id = b.pid AND x.version = b.version
"""

#: The answer for a prompt with rollout arms. kind 0: the version the best hit names; 1: every
#: rollout arm of the prompt (with content for the arms of the winning label only); 2: every
#: label of the prompt.
_FULL = """
WITH best AS (
  SELECT pid, krank, lrank, label, version FROM ({hits}) h
  ORDER BY krank, lrank LIMIT 1
)
SELECT 0 AS kind, b.krank AS krank, b.label AS label, NULL AS position, NULL AS weight, v.version AS version,
       v.content AS content, v.created_at AS created_at, v.author AS author, v.note AS note
FROM best b JOIN profiles_prompt_versions v ON v.prompt_id = b.pid AND v.version = b.version
UNION ALL
SELECT 1, b.krank, a.label, a.position, a.weight, a.version, v.content, v.created_at, v.author, v.note
FROM best b JOIN profiles_label_arms a ON a.prompt_id = b.pid
LEFT JOIN profiles_prompt_versions v
  ON v.prompt_id = a.prompt_id AND v.version = a.version AND a.label = b.label
UNION ALL
SELECT 2, b.krank, l.label, NULL, NULL, l.version, NULL, NULL, NULL, NULL
FROM best b JOIN profiles_prompt_labels l ON l.prompt_id = b.pid
"""


def _hits(keys: int, chain: Sequence[str | None] | None, check: bool) -> str:
    key_rank = " ".join(f"WHEN p.language = :l{i} AND p.model = :m{i} THEN {i}" for i in range(keys))
    key_match = " OR ".join(f"(p.language = :l{i} AND p.model = :m{i})" for i in range(keys))
    if chain is None:
        return _HITS_VERSION.format(key_rank=key_rank, key_match=key_match)
    parts = []
    # labels after the first `latest` can never win: latest matches every key that has a version
    cut = chain.index(None) if None in chain else len(chain)
    named = [rank for rank, label in enumerate(chain[:cut]) if label is not None]
    if named or cut == len(chain):
        parts.append(
            _HITS_LABELS.format(
                key_rank=key_rank,
                key_match=key_match,
                label_rank=" ".join(f"WHEN :c{rank} THEN {rank}" for rank in named) or "WHEN NULL THEN 0",
                labels=", ".join(f":c{rank}" for rank in named) or "NULL",
                check=_CHECK_VERSION if check else "",
            )
        )
    if cut < len(chain):
        parts.append(_HITS_LATEST.format(key_rank=key_rank, key_match=key_match, rank=cut))
    return "\n  UNION ALL".join(parts)


def lookup_sql(
    keys: int, chain: Sequence[str | None] | None, *, full: bool = False, pyformat: bool = False
) -> str:
    """The statement for ``keys`` candidate keys and a label ``chain`` (None: a pinned version).

    Parameters: ``name``, ``l0``/``m0`` … per key, ``c0`` … per label, ``version`` when pinned.
    ``full`` is the statement for a prompt with rollout arms; ``pyformat`` writes ``%(name)s``
    (psycopg) instead of ``:name`` (sqlite3).
    """
    sql = (_FULL if full else _LEAN).format(hits=_hits(keys, chain, check=full))
    if pyformat:
        sql = re.sub(r":([a-z]\w*)", r"%(\1)s", sql)
    return sql


@dataclass(frozen=True)
class Lookup:
    """One validated lookup, ready to run: its candidate keys, its statements and their parameters.

    The store keeps these per (name, language, model, labels, version) asked, so a repeated lookup
    skips validation and building parameters alike.
    """

    candidates: tuple[PromptKey, ...]
    chained: bool  # False: a pinned version
    lean: str
    full: str
    params: dict[str, Any]


class _Held:
    """One thread's read connection."""

    __slots__ = ("__weakref__", "dbapi", "lock", "pid")

    def __init__(self, dbapi: Any) -> None:
        self.dbapi = dbapi
        self.lock = threading.Lock()
        self.pid = os.getpid()

    def drop(self) -> None:
        dbapi, self.dbapi = self.dbapi, None
        if dbapi is not None:
            try:
                dbapi.close()
            except Exception:  # a connection the server dropped may fail to close; it is gone either way
                pass


#: Connections a forked process inherited: kept referenced, since closing a SQLite connection in
#: the child would release the parent's locks.
_INHERITED: list[_Held] = []


class BestMatch:
    """Runs the one-statement lookup on a store's pool; safe to share between threads."""

    def __init__(self, backend: StoreEngine) -> None:
        from sqlalchemy import DateTime
        from sqlalchemy.exc import SQLAlchemyError

        engine = backend.engine
        self._engine = engine
        self._postgres = not backend.is_sqlite
        dialect = engine.dialect
        self._created_at = DateTime(timezone=True).dialect_impl(dialect).result_processor(dialect, None)
        self._statements: dict[tuple[Any, bool], str] = {}
        self._lock = threading.Lock()
        self._local = threading.local()
        self._all: weakref.WeakSet[_Held] = weakref.WeakSet()
        if self._postgres:
            import psycopg

            self._disconnects: tuple[type[BaseException], ...] = (psycopg.OperationalError, psycopg.InterfaceError)
        else:
            self._disconnects = ()
        #: What a read may raise that the store reports as a StoreError naming the store.
        self.failures: tuple[type[BaseException], ...] = (SQLAlchemyError, *backend.driver_errors)

    def plan(
        self, candidates: Sequence[PromptKey], chain: Sequence[str | None] | None, version: int | None = None
    ) -> Lookup:
        """The lookup for ``chain`` (or for the pinned ``version`` when ``chain`` is None)."""
        shape = (len(candidates), None if chain is None else tuple(None if label is None else "" for label in chain))
        params: dict[str, Any] = {"name": candidates[0].name}
        for index, key in enumerate(candidates):
            params[f"l{index}"] = key.language
            params[f"m{index}"] = key.model
        if chain is None:
            params["version"] = version
        else:
            for index, label in enumerate(chain):
                if label is not None:
                    params[f"c{index}"] = label
        lean = self._statement(shape, chain, False)
        full = self._statement(shape, chain, True)
        return Lookup(tuple(candidates), chain is not None, lean, full, params)

    def read(self, lookup: Lookup) -> LabelMatch | None:
        """What ``lookup`` finds; None: nothing. Raises the driver's errors (the store translates them)."""
        rows = self._fetch(lookup.lean, lookup.params)
        if not rows:
            return None
        if not rows[0][8]:
            return self._lean(lookup.candidates, lookup.chained, rows)
        # a prompt with rollout arms: read again, arms and labels included, in one statement
        rows = self._fetch(lookup.full, lookup.params)
        return self._match(lookup.candidates, lookup.chained, rows) if rows else None

    def _statement(self, shape: Any, chain: Sequence[str | None] | None, full: bool) -> str:
        sql = self._statements.get((shape, full))
        if sql is None:
            sql = lookup_sql(shape[0], chain, full=full, pyformat=self._postgres)
            with self._lock:
                self._statements[shape, full] = sql
        return sql

    def _lean(self, candidates: Sequence[PromptKey], chained: bool, rows: list[Any]) -> LabelMatch:
        first = rows[0]
        key = candidates[first[0]]
        created = first[4] if self._created_at is None else self._created_at(first[4])
        record = PromptVersion(
            name=key.name,
            language=key.language,
            model=key.model,
            version=first[2],
            content=first[3],
            created_at=utc(created),
            author=first[5],
            note=first[6],
            labels=tuple(sorted(row[7] for row in rows if row[7] is not None)),
        )
        return LabelMatch(first[1] if chained else None, (Arm(record),))

    def _fetch(self, sql: str, params: dict[str, Any]) -> list[Any]:
        # Each thread reads on a connection of its own, kept out of the pool: checking one out
        # and back in per lookup costs as much as SQLite takes to answer. It is in the driver's
        # autocommit mode on both backends (the store emits BEGIN itself for its transactions),
        # so the one statement runs without BEGIN or ROLLBACK. Without a pre-ping, a connection the
        # server dropped fails instead; it is replaced and the read runs once more.
        retried = False
        while True:
            held = self._held()
            with held.lock:
                dbapi = held.dbapi
                if dbapi is None:  # closed by PromptStore.close meanwhile: open another
                    continue
                try:
                    return dbapi.execute(sql, params).fetchall()
                except self._disconnects:
                    held.drop()
                    if retried:
                        raise
                    retried = True
            # the server went away (a restart, most likely): the pooled connections are as dead,
            # so the next one comes from a fresh pool; connections in use elsewhere are left alone
            self._engine.dispose()

    def _held(self) -> _Held:
        held: _Held | None = getattr(self._local, "held", None)
        if held is None or held.dbapi is None or held.pid != os.getpid():
            if held is not None and held.pid != os.getpid():
                _INHERITED.append(held)  # a forked child must not close its parent's connection
            fairy = self._engine.raw_connection()
            fairy.detach()  # ours now: closed by close(), never returned to the pool
            held = _Held(fairy.dbapi_connection)
            self._local.held = held
            with self._lock:
                self._all.add(held)
        return held

    def close(self) -> None:
        """Close every thread's read connection (each waits for its thread's read in flight)."""
        with self._lock:
            every = list(self._all)
        for held in every:
            with held.lock:
                held.drop()

    def _match(self, candidates: Sequence[PromptKey], chained: bool, rows: list[Any]) -> LabelMatch | None:
        single = None
        arm_rows: dict[str, list[Any]] = {}
        targets: dict[str, int] = {}
        for row in rows:
            kind = row[0]
            if kind == 0:
                single = row
            elif kind == 1:
                arm_rows.setdefault(row[2], []).append(row)
            else:
                targets[row[2]] = row[5]
        if single is None:
            return None
        key = candidates[single[1]]
        label = single[2]
        valid: dict[str, list[Any]] = {}
        for name, arms in arm_rows.items():
            arms.sort(key=lambda row: row[3])
            if len(arms) > 1 and targets.get(name) == arms[0][5]:
                valid[name] = arms

        def record(row: Any) -> PromptVersion:
            number = row[5]
            pointing = {name for name, target in targets.items() if target == number}
            pointing.update(name for name, arms in valid.items() if any(arm[5] == number for arm in arms))
            created = row[7] if self._created_at is None else self._created_at(row[7])
            return PromptVersion(
                name=key.name,
                language=key.language,
                model=key.model,
                version=number,
                content=row[6],
                created_at=utc(created),
                author=row[8],
                note=row[9],
                labels=tuple(sorted(pointing)),
            )

        if chained and label is not None:
            arms = valid.get(label)
            if arms and all(arm[6] is not None for arm in arms):
                return LabelMatch(label, tuple(Arm(record(arm), arm[4]) for arm in arms))
        return LabelMatch(label if chained else None, (Arm(record(single)),))

