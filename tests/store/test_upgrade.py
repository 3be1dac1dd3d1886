"""A store written by the previous release (three tables: prompts, versions, labels) opens with the
new code, is upgraded in place once however many processes open it together, and keeps working;
a label an earlier release moves afterwards is read as that release left it."""

from __future__ import annotations

import multiprocessing
from datetime import datetime, timezone

import pytest
from sqlalchemy import (
    Column,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Integer,
    MetaData,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    inspect,
    text,
)

from profiles.errors import LabelConflictError
from profiles.store import PromptStore

# -- the schema as the previous release declared it (profiles/store/schema.py before the move log) --
OLD = MetaData()
old_prompts = Table(
    "profiles_prompts",
    OLD,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", Text, nullable=False),
    Column("language", Text, nullable=False, server_default=""),
    Column("model", Text, nullable=False, server_default=""),
    Column("created_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("name", "language", "model", name="uq_profiles_prompts_key"),
)
old_versions = Table(
    "profiles_prompt_versions",
    OLD,
    Column("prompt_id", Integer, ForeignKey("profiles_prompts.id", ondelete="CASCADE"), primary_key=True),
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("content", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("author", Text, nullable=False, server_default=""),
    Column("note", Text, nullable=False, server_default=""),
)
old_labels = Table(
    "profiles_prompt_labels",
    OLD,
    Column("prompt_id", Integer, primary_key=True),
    Column("label", Text, primary_key=True),
    Column("version", Integer, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    ForeignKeyConstraint(
        ["prompt_id", "version"],
        ["profiles_prompt_versions.prompt_id", "profiles_prompt_versions.version"],
        ondelete="CASCADE",
        name="fk_profiles_prompt_labels_version",
    ),
)
NOW = datetime(2026, 1, 5, 10, 0, tzinfo=timezone.utc)


def _old_store(url: str) -> None:
    """What the previous release left: summarizer/name v1 (production) and v2 (staging)."""
    engine = create_engine(url)
    OLD.create_all(engine)
    with engine.begin() as conn:
        prompt = conn.execute(old_prompts.insert().values(name="summarizer/name", created_at=NOW))
        (prompt_id,) = prompt.inserted_primary_key
        conn.execute(
            old_versions.insert().values(created_at=NOW),
            [
                {"prompt_id": prompt_id, "version": 1, "content": "Plato", "author": "ana", "note": ""},
                {"prompt_id": prompt_id, "version": 2, "content": "Zeno", "author": "", "note": "shorter"},
            ],
        )
        conn.execute(
            old_labels.insert(),
            [
                {"prompt_id": prompt_id, "label": "production", "version": 1, "updated_at": NOW},
                {"prompt_id": prompt_id, "label": "staging", "version": 2, "updated_at": NOW},
            ],
        )
    engine.dispose()


def _old_release_moves(url: str, label: str, version: int) -> None:
    """What the previous release's set_label ran: an upsert of the label row, nothing else."""
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "UPDATE profiles_prompt_labels SET version = :version WHERE label = :label AND prompt_id = "
                "(SELECT id FROM profiles_prompts WHERE name = 'summarizer/name')"
            ),
            {"version": version, "label": label},
        )
    engine.dispose()


def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_an_old_store_opens_and_keeps_its_prompts(store_url):
    _old_store(store_url)
    assert "profiles_label_moves" not in _tables(store_url)
    with PromptStore(store_url, create=False) as store:  # even a reading open upgrades it
        assert {"profiles_label_moves", "profiles_label_arms", "profiles_protected_labels"} <= _tables(store_url)
        assert store.get("summarizer/name", label="production").content == "Plato"
        assert [(r.version, r.author, r.note, r.labels) for r in store.history("summarizer/name")] == [
            (1, "ana", "", ("production",)),
            (2, "", "shorter", ("staging",)),
        ]
        assert store.moves("summarizer/name") == ()  # moves before the upgrade were never recorded
        store.set_label("summarizer/name", "production", 2, expect=1, author="bo")
        assert [(m.before, m.after) for m in store.moves("summarizer/name")] == [("v1", "v2")]
        assert store.put("summarizer/name", "Socrates").version == 3
        store.protect("production")
    with PromptStore(store_url) as again:  # opening again changes nothing
        assert again.undo_label("summarizer/name", "production", force=True).after == "v1"


def test_opening_an_old_store_from_many_processes_at_once_upgrades_it_once(store_url):
    _old_store(store_url)
    from ._workers import open_and_put

    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(6)
    workers = [context.Process(target=open_and_put, args=(store_url, worker, barrier)) for worker in range(6)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=300)
    assert [process.exitcode for process in workers] == [0] * 6
    with PromptStore(store_url) as store:
        assert [record.version for record in store.history("shared")] == [1, 2, 3, 4, 5, 6]
        assert store.get("summarizer/name", label="staging").content == "Zeno"


def test_an_old_release_moving_a_rolled_out_label_wins(store_url):
    """An earlier release does not know rollouts; when it moves the label, the label serves what it
    chose, and undo refuses to guess instead of undoing a move the log never saw."""
    _old_store(store_url)
    with PromptStore(store_url) as store:
        store.put("summarizer/name", "Socrates")
        store.rollout("summarizer/name", "production", {1: 50, 3: 50})
        assert store.match("summarizer/name", labels=["production"]).is_rollout
        _old_release_moves(store_url, "production", 2)
        found = store.match("summarizer/name", labels=["production"])
        assert not found.is_rollout and found.arms[0].record.content == "Zeno"
        assert {store.get("summarizer/name", label="production", rollout_key=str(n)).version for n in range(50)} == {2}
        with pytest.raises(LabelConflictError, match="moved without a record"):
            store.undo_label("summarizer/name", "production")
        store.set_label("summarizer/name", "production", 1, expect=2)
        assert store.moves("summarizer/name")[-1].before == "v2"
