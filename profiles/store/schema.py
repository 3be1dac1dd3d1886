"""The prompt store's tables, declared once with SQLAlchemy Core and shared by every backend.

Empty language and model are stored as "" rather than NULL so the unique constraints hold: SQL
treats two NULLs as different, which would let two "any language" rows of one name coexist.
Imported only when a store opens, so ``import profiles`` never pays for SQLAlchemy.
"""

from __future__ import annotations

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
)

__all__ = ["labels", "metadata", "prompts", "versions"]

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
