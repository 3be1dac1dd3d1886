"""The SQL the prompt store runs, each function one statement or two on a caller's connection.

The caller owns the transaction; these functions never commit. Imported only when a store opens.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import Connection, and_, delete, func, inspect, select, tuple_
from sqlalchemy.dialects import postgresql, sqlite

from profiles.store.keys import PromptKey
from profiles.store.models import LabelMove, PromptSummary, PromptVersion, spell_arms
from profiles.store.schema import label_arms, label_moves, labels, metadata, prompts, protected_labels, versions

__all__ = [
    "Arms",
    "all_prompts",
    "arm_map",
    "ensure_schema",
    "find_prompt_ids",
    "insert_version",
    "label_map",
    "lock_existing_prompt",
    "lock_prompt",
    "move_label",
    "next_version",
    "parse_arms",
    "protect",
    "protected",
    "read_moves",
    "read_version",
    "read_versions",
    "schema_state",
    "set_label",
    "summaries",
    "unprotect",
]

#: A label's versions with their weights, in order: ``((3, 90), (4, 10))``; ``()`` outside a rollout.
Arms = tuple[tuple[int, int], ...]

#: Key for the PostgreSQL advisory lock that serialises creating the tables.
_SCHEMA_LOCK = 0x70726F66  # "prof"


def utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; every time the store stores or returns is UTC-aware."""
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def _insert(conn: Connection, table: Any) -> Any:
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


def schema_state(conn: Connection) -> str:
    """``"current"`` when every table is there, ``"missing"`` when none of the original ones is (no
    store yet), else ``"old"`` (a store an earlier release wrote, upgraded by ``ensure_schema``).

    Checked first so opening a current store takes no write lock.
    """
    inspector = inspect(conn)
    present = {table.name for table in metadata.sorted_tables if inspector.has_table(table.name)}
    if len(present) == len(metadata.sorted_tables):
        return "current"
    return "old" if prompts.name in present else "missing"


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


def lock_existing_prompt(conn: Connection, key: PromptKey) -> int | None:
    """Lock the prompt row of ``key`` for this transaction and return its id; None when it does not exist.

    Label moves lock the prompt like puts do, so two moves of one label take turns and the
    compare-and-set and the move log's numbering cannot interleave.
    """
    query = select(prompts.c.id).where(
        prompts.c.name == key.name, prompts.c.language == key.language, prompts.c.model == key.model
    )
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    found = conn.execute(query).scalar()
    return None if found is None else int(found)


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


def arm_map(conn: Connection, prompt_ids: list[int]) -> dict[int, dict[str, Arms]]:
    """Return ``{prompt_id: {label: ((version, weight), ...)}}`` for the labels rolled out over versions.

    Arms whose first version is not the one ``labels`` names are left out: an earlier release moved
    the label without knowing of them, and the label then serves that one version.
    """
    result: dict[int, dict[str, Arms]] = {prompt_id: {} for prompt_id in prompt_ids}
    found: dict[tuple[int, str], list[tuple[int, int]]] = {}
    for chunk in _chunks(prompt_ids):
        rows = conn.execute(
            select(label_arms.c.prompt_id, label_arms.c.label, label_arms.c.version, label_arms.c.weight)
            .where(label_arms.c.prompt_id.in_(chunk))
            .order_by(label_arms.c.prompt_id, label_arms.c.label, label_arms.c.position)
        )
        for row in rows:
            found.setdefault((row.prompt_id, row.label), []).append((row.version, row.weight))
    if found:
        targets = label_map(conn, sorted({prompt_id for prompt_id, _ in found}))
        for (prompt_id, label), arms in found.items():
            if len(arms) > 1 and targets[prompt_id].get(label) == arms[0][0]:
                result[prompt_id][label] = tuple(arms)
    return result


def parse_arms(text: str) -> Arms:
    """Read the move log's ``3=90,4=10`` back; "" is ``()``."""
    if not text:
        return ()
    return tuple((int(version), int(weight)) for version, weight in (item.split("=") for item in text.split(",")))


def move_label(
    conn: Connection,
    key: PromptKey,
    prompt_id: int,
    label: str,
    version: int | None,
    arms: Arms,
    now: datetime,
    *,
    author: str,
    note: str,
    undoes: int | None = None,
) -> LabelMove | None:
    """Point ``label`` at ``version`` (or at ``arms``, a rollout whose first version is ``version``;
    None removes the label) and record the move. The caller holds the prompt's lock.

    Returns the recorded move, or None when the label already pointed there (nothing is recorded).
    """
    before = label_map(conn, [prompt_id])[prompt_id].get(label)
    before_arms = arm_map(conn, [prompt_id])[prompt_id].get(label, ())
    arms = arms if len(arms) > 1 else ()
    if before == version and before_arms == arms:
        return None
    conn.execute(delete(label_arms).where(label_arms.c.prompt_id == prompt_id, label_arms.c.label == label))
    if version is None:
        conn.execute(delete(labels).where(labels.c.prompt_id == prompt_id, labels.c.label == label))
    else:
        set_label(conn, prompt_id, label, version, now)
        if arms:
            conn.execute(
                label_arms.insert(),
                [
                    {"prompt_id": prompt_id, "label": label, "position": index, "version": number, "weight": weight}
                    for index, (number, weight) in enumerate(arms)
                ],
            )
    seq = conn.execute(
        select(func.max(label_moves.c.seq)).where(label_moves.c.prompt_id == prompt_id, label_moves.c.label == label)
    ).scalar()
    row = {
        "prompt_id": prompt_id,
        "label": label,
        "seq": int(seq or 0) + 1,
        "from_version": before,
        "to_version": version,
        "from_arms": spell_arms(before_arms),
        "to_arms": spell_arms(arms),
        "moved_at": utc(now),
        "author": author,
        "note": note,
        "undoes": undoes,
    }
    conn.execute(label_moves.insert().values(**row))
    return _move(key, row)


def _move(key: PromptKey, row: Any) -> LabelMove:
    get = row.get if isinstance(row, dict) else row._mapping.get
    return LabelMove(
        name=key.name,
        language=key.language,
        model=key.model,
        label=get("label"),
        seq=get("seq"),
        from_version=get("from_version"),
        to_version=get("to_version"),
        moved_at=utc(get("moved_at")),
        author=get("author") or "",
        note=get("note") or "",
        from_arms=parse_arms(get("from_arms") or ""),
        to_arms=parse_arms(get("to_arms") or ""),
        undoes=get("undoes"),
    )


def read_moves(conn: Connection, key: PromptKey, prompt_id: int, label: str | None = None) -> list[LabelMove]:
    """Read the moves of a prompt's labels (or of one label), oldest first."""
    query = select(label_moves).where(label_moves.c.prompt_id == prompt_id)
    if label is not None:
        query = query.where(label_moves.c.label == label)
    moves = [_move(key, row) for row in conn.execute(query)]
    # per label, seq is the order; across labels, time (an equal time keeps labels apart)
    return sorted(moves, key=lambda move: (move.moved_at, move.label, move.seq))


def protected(conn: Connection) -> dict[str, tuple[datetime, str]]:
    """Return the protected labels with when and by whom each was protected."""
    rows = conn.execute(select(protected_labels))
    return {row.label: (utc(row.protected_at), row.author) for row in rows}


def protect(conn: Connection, label: str, now: datetime, author: str) -> bool:
    """Protect a label of the whole store; False when it already was.

    The insert itself answers, by the row it returns (psycopg leaves `rowcount` at -1 here): of
    two writers protecting a label at once, exactly one is told it protected it.
    """
    written = conn.execute(
        _insert(conn, protected_labels)
        .values(label=label, protected_at=now, author=author)
        .on_conflict_do_nothing(index_elements=["label"])
        .returning(protected_labels.c.label)
    )
    return written.first() is not None


def unprotect(conn: Connection, label: str) -> bool:
    """Lift a label's protection; False when it was not protected (or another writer lifted it first)."""
    removed = conn.execute(
        delete(protected_labels).where(protected_labels.c.label == label).returning(protected_labels.c.label)
    )
    return removed.first() is not None


def label_map(conn: Connection, prompt_ids: list[int]) -> dict[int, dict[str, int]]:
    """Return ``{prompt_id: {label: version}}`` for those prompts."""
    result: dict[int, dict[str, int]] = {prompt_id: {} for prompt_id in prompt_ids}
    for chunk in _chunks(prompt_ids):
        rows = conn.execute(
            select(labels.c.prompt_id, labels.c.label, labels.c.version).where(labels.c.prompt_id.in_(chunk))
        )
        for row in rows:
            result[row.prompt_id][row.label] = row.version
    return result


#: Most ids one `IN (...)` names: PostgreSQL takes at most 65,535 parameters in a statement, and
#: SQLite builds may take as few as 32,766, so a store of more prompts is read in parts.
_IN_LIMIT = 10_000


def _chunks(ids: list[int]) -> list[list[int]]:
    """`ids` in parts of at most `_IN_LIMIT`, read in the caller's one transaction."""
    return [ids[start : start + _IN_LIMIT] for start in range(0, len(ids), _IN_LIMIT)]


def _record(
    key: PromptKey, row: Any, labels_of_prompt: dict[str, int], arms_of_prompt: dict[str, Arms] | None = None
) -> PromptVersion:
    pointing = {label for label, version in labels_of_prompt.items() if version == row.version}
    for label, arms in (arms_of_prompt or {}).items():
        if any(version == row.version for version, _weight in arms):
            pointing.add(label)
    return PromptVersion(
        name=key.name,
        language=key.language,
        model=key.model,
        version=row.version,
        content=row.content,
        created_at=utc(row.created_at),
        author=row.author,
        note=row.note,
        labels=tuple(sorted(pointing)),
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
    return _record(key, row, label_map(conn, [prompt_id])[prompt_id], arm_map(conn, [prompt_id])[prompt_id])


def read_versions(conn: Connection, key: PromptKey, prompt_id: int) -> list[PromptVersion]:
    """Read every version of a prompt, oldest first."""
    rows = conn.execute(
        select(*_VERSION_COLUMNS).where(versions.c.prompt_id == prompt_id).order_by(versions.c.version)
    ).all()
    labels_of_prompt = label_map(conn, [prompt_id])[prompt_id]
    arms_of_prompt = arm_map(conn, [prompt_id])[prompt_id]
    return [_record(key, row, labels_of_prompt, arms_of_prompt) for row in rows]


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
    arm_maps = arm_map(conn, [row.id for row in rows])
    return [
        PromptSummary(
            name=row.name,
            language=row.language,
            model=row.model,
            latest_version=row.latest,
            updated_at=utc(row.created_at),
            labels=tuple(sorted(label_maps[row.id].items())),
            rollouts=tuple(sorted(arm_maps[row.id].items())),
        )
        for row in rows
    ]
