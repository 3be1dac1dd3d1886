"""The prompt store's tables, declared once with SQLAlchemy Core and shared by every backend.

Empty language and model are stored as "" rather than NULL so the unique constraints hold: SQL
treats two NULLs as different, which would let two "any language" rows of one name coexist.
Imported only when a store opens, so ``import profiles`` never pays for SQLAlchemy.

The first three tables are the original store; the label move log, rollout arms and protected
labels were added later as tables of their own, never as columns of the old ones. So a store
written by an earlier release upgrades in place by creating the missing tables (see
``queries.ensure_schema``), and an earlier release can still read and write an upgraded store:
``labels.version`` is always the version a label serves without a rollout key.
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
)

__all__ = ["label_arms", "label_moves", "labels", "metadata", "prompts", "protected_labels", "versions"]

metadata = MetaData()

#: One row per (name, language, model); writers lock this row to number versions one at a time.
prompts = Table(
    "profiles_prompts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", Text, nullable=False),
    Column("language", Text, nullable=False, server_default=""),
    Column("model", Text, nullable=False, server_default=""),
    Column("created_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("name", "language", "model", name="uq_profiles_prompts_key"),
)

#: Immutable versions; the unique (prompt, version) pair is what makes a lost race fail loudly.
versions = Table(
    "profiles_prompt_versions",
    metadata,
    Column("prompt_id", Integer, ForeignKey("profiles_prompts.id", ondelete="CASCADE"), primary_key=True),
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("content", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("author", Text, nullable=False, server_default=""),
    Column("note", Text, nullable=False, server_default=""),
)

#: Movable labels; the primary key means a label names at most one version of a prompt.
labels = Table(
    "profiles_prompt_labels",
    metadata,
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

#: Every label move, in order per (prompt, label): ``seq`` counts 1, 2, 3 … with no gap, because a
#: move and its log row are written in one transaction under the prompt's lock. ``from_version``
#: is NULL when the label did not exist before, ``to_version`` when the move removed it (an undo of
#: its first move). ``*_arms`` spell a rollout (``3=90,4=10``) and are "" for a single version.
#: ``undoes`` is the ``seq`` of the move an undo reverted, so a second undo steps further back.
label_moves = Table(
    "profiles_label_moves",
    metadata,
    Column("prompt_id", Integer, ForeignKey("profiles_prompts.id", ondelete="CASCADE"), nullable=False),
    Column("label", Text, nullable=False),
    Column("seq", Integer, nullable=False, autoincrement=False),
    Column("from_version", Integer, nullable=True),
    Column("to_version", Integer, nullable=True),
    Column("from_arms", Text, nullable=False, server_default=""),
    Column("to_arms", Text, nullable=False, server_default=""),
    Column("moved_at", DateTime(timezone=True), nullable=False),
    Column("author", Text, nullable=False, server_default=""),
    Column("note", Text, nullable=False, server_default=""),
    Column("undoes", Integer, nullable=True),
    PrimaryKeyConstraint("prompt_id", "label", "seq", name="pk_profiles_label_moves"),
)

#: The versions a rolled-out label serves, with weights, in order; ``position`` 0 is the version
#: ``labels.version`` names. A label without rows here serves its one version. Rows whose first
#: version differs from ``labels.version`` are ignored: an earlier release moved the label.
label_arms = Table(
    "profiles_label_arms",
    metadata,
    Column("prompt_id", Integer, primary_key=True),
    Column("label", Text, primary_key=True),
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("version", Integer, nullable=False),
    Column("weight", Integer, nullable=False),
    ForeignKeyConstraint(
        ["prompt_id", "version"],
        ["profiles_prompt_versions.prompt_id", "profiles_prompt_versions.version"],
        ondelete="CASCADE",
        name="fk_profiles_label_arms_version",
    ),
)

#: Labels of the whole store that move only with ``force=True`` (``--force``): releases.
protected_labels = Table(
    "profiles_protected_labels",
    metadata,
    Column("label", Text, primary_key=True),
    Column("protected_at", DateTime(timezone=True), nullable=False),
    Column("author", Text, nullable=False, server_default=""),
)
