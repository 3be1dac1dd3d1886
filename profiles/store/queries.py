"""The SQL the prompt store runs, each function one statement or two on a caller's connection.

The caller owns the transaction; these functions never commit. Imported only when a store opens.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import Connection, and_, func, inspect, select, tuple_
from sqlalchemy.dialects import postgresql, sqlite

from profiles.store.keys import PromptKey
from profiles.store.models import PromptSummary, PromptVersion
from profiles.store.schema import labels, metadata, prompts, versions

__all__ = [
    "all_prompts",
    "ensure_schema",
    "find_prompt_ids",
    "insert_version",
    "label_map",
    "lock_prompt",
    "next_version",
    "read_version",
    "read_versions",
    "schema_exists",
    "set_label",
    "summaries",
]

#: Key for the PostgreSQL advisory lock that serialises creating the tables.
_SCHEMA_LOCK = 0x70726F66  # "prof"


def utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; every time the store stores or returns is UTC-aware."""
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def _insert(conn: Connection, table: Any) -> Any:
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


def schema_exists(conn: Connection) -> bool:
    """Return whether every table is there; checked first so opening a store takes no write lock."""
    inspector = inspect(conn)
    return all(inspector.has_table(table.name) for table in metadata.sorted_tables)


def ensure_schema(conn: Connection) -> None:
    """Create missing tables; the caller holds a write transaction so racing processes take turns."""
    if conn.dialect.name == "postgresql":
        conn.execute(select(func.pg_advisory_xact_lock(_SCHEMA_LOCK)))
    metadata.create_all(conn, checkfirst=True)


def find_prompt_ids(conn: Connection, keys: list[PromptKey]) -> dict[PromptKey, int]:
    """Return the ids of those keys that exist."""
    if not keys:
        return {}
    wanted = [(key.name, key.language, key.model) for key in keys]
    rows = conn.execute(
        select(prompts.c.id, prompts.c.name, prompts.c.language, prompts.c.model).where(
            tuple_(prompts.c.name, prompts.c.language, prompts.c.model).in_(wanted)
        )
    )
    return {PromptKey(row.name, row.language, row.model): row.id for row in rows}


def lock_prompt(conn: Connection, key: PromptKey, now: datetime) -> int:
    """Create the prompt row if missing and lock it for this transaction; return its id.

    On PostgreSQL the row lock makes concurrent writers of one prompt take turns; on SQLite the
    ``BEGIN IMMEDIATE`` transaction already holds the database's write lock.
    """
    conn.execute(
        _insert(conn, prompts)
        .values(name=key.name, language=key.language, model=key.model, created_at=now)
        .on_conflict_do_nothing(index_elements=["name", "language", "model"])
    )
    query = select(prompts.c.id).where(
        prompts.c.name == key.name, prompts.c.language == key.language, prompts.c.model == key.model
    )
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    return int(conn.execute(query).scalar_one())


def next_version(conn: Connection, prompt_id: int) -> int:
    """Return the number the next version of a locked prompt gets."""
    newest = conn.execute(
        select(func.max(versions.c.version)).where(versions.c.prompt_id == prompt_id)
    ).scalar()
    return int(newest or 0) + 1


def insert_version(conn: Connection, prompt_id: int, record: PromptVersion) -> None:
    """Insert one version as given; the (prompt, version) key rejects a duplicate number."""
    conn.execute(
        versions.insert().values(
            prompt_id=prompt_id,
            version=record.version,
            content=record.content,
            created_at=utc(record.created_at),
            author=record.author,
            note=record.note,
        )
    )


def set_label(conn: Connection, prompt_id: int, label: str, version: int, now: datetime) -> None:
    """Point a label at a version in one statement, so a reader sees the old target or the new one."""
    statement = _insert(conn, labels).values(
        prompt_id=prompt_id, label=label, version=version, updated_at=now
    )
    conn.execute(
        statement.on_conflict_do_update(
            index_elements=["prompt_id", "label"],
            set_={"version": statement.excluded.version, "updated_at": statement.excluded.updated_at},
        )
    )


def label_map(conn: Connection, prompt_ids: list[int]) -> dict[int, dict[str, int]]:
    """Return ``{prompt_id: {label: version}}`` for those prompts."""
    result: dict[int, dict[str, int]] = {prompt_id: {} for prompt_id in prompt_ids}
    if prompt_ids:
        rows = conn.execute(
            select(labels.c.prompt_id, labels.c.label, labels.c.version).where(
                labels.c.prompt_id.in_(prompt_ids)
            )
        )
        for row in rows:
            result[row.prompt_id][row.label] = row.version
    return result


def _record(key: PromptKey, row: Any, labels_of_prompt: dict[str, int]) -> PromptVersion:
    return PromptVersion(
        name=key.name,
        language=key.language,
        model=key.model,
        version=row.version,
        content=row.content,
        created_at=utc(row.created_at),
        author=row.author,
        note=row.note,
        labels=tuple(sorted(label for label, version in labels_of_prompt.items() if version == row.version)),
    )


_VERSION_COLUMNS = (
    versions.c.version,
    versions.c.content,
    versions.c.created_at,
    versions.c.author,
    versions.c.note,
)


def read_version(
    conn: Connection, key: PromptKey, prompt_id: int, version: int | None
) -> PromptVersion | None:
    """Read one version, or the newest when ``version`` is None; None when it does not exist."""
    query = select(*_VERSION_COLUMNS).where(versions.c.prompt_id == prompt_id)
    if version is None:
        query = query.order_by(versions.c.version.desc()).limit(1)
    else:
        query = query.where(versions.c.version == version)
    row = conn.execute(query).first()
    if row is None:
        return None
    return _record(key, row, label_map(conn, [prompt_id])[prompt_id])


def read_versions(conn: Connection, key: PromptKey, prompt_id: int) -> list[PromptVersion]:
    """Read every version of a prompt, oldest first."""
    rows = conn.execute(
        select(*_VERSION_COLUMNS).where(versions.c.prompt_id == prompt_id).order_by(versions.c.version)
    ).all()
    labels_of_prompt = label_map(conn, [prompt_id])[prompt_id]
    return [_record(key, row, labels_of_prompt) for row in rows]


def all_prompts(conn: Connection, name: str | None = None) -> dict[PromptKey, int]:
    """Return every prompt key (or those of one name) with its id, sorted by key."""
    query = select(prompts.c.id, prompts.c.name, prompts.c.language, prompts.c.model)
    if name is not None:
        query = query.where(prompts.c.name == name)
    found = {PromptKey(row.name, row.language, row.model): row.id for row in conn.execute(query)}
    return dict(sorted(found.items()))


def summaries(conn: Connection, name: str | None = None) -> list[PromptSummary]:
    """Return one summary per prompt key that has at least one version, sorted by key."""
    newest = (
        select(
            versions.c.prompt_id,
            func.max(versions.c.version).label("latest"),
        )
        .group_by(versions.c.prompt_id)
        .subquery()
    )
    query = (
        select(
            prompts.c.id,
            prompts.c.name,
            prompts.c.language,
            prompts.c.model,
            newest.c.latest,
            versions.c.created_at,
        )
        .join(newest, newest.c.prompt_id == prompts.c.id)
        .join(versions, and_(versions.c.prompt_id == prompts.c.id, versions.c.version == newest.c.latest))
    )
    if name is not None:
        query = query.where(prompts.c.name == name)
    # sorted here, not in SQL: PostgreSQL's collation would order names differently from SQLite
    rows = sorted(conn.execute(query).all(), key=lambda row: (row.name, row.language, row.model))
    label_maps = label_map(conn, [row.id for row in rows])
    return [
        PromptSummary(
            name=row.name,
            language=row.language,
            model=row.model,
            latest_version=row.latest,
            updated_at=utc(row.created_at),
            labels=tuple(sorted(label_maps[row.id].items())),
        )
        for row in rows
    ]
