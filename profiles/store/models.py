"""The small frozen records the prompt store hands out, free of any database type.

Callers keep these after the store is closed, compare them and put them in sets; nothing in them
can change the database.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

__all__ = ["ImportResult", "PromptSummary", "PromptVersion"]


@dataclass(frozen=True)
class PromptVersion:
    """One immutable version of a prompt, with the labels that point at it when it was read."""

    name: str
    language: str
    model: str
    version: int
    content: str
    created_at: datetime
    author: str = ""
    note: str = ""
    labels: tuple[str, ...] = ()

    @property
    def ref(self) -> str:
        """Short reference used in provenance and messages, e.g. ``summary [zh-TW] v3``."""
        where = ",".join(part for part in (self.language, self.model) if part)
        return f"{self.name}{f' [{where}]' if where else ''} v{self.version}"


@dataclass(frozen=True)
class PromptSummary:
    """One prompt key as ``list`` shows it: its newest version and where each label points."""

    name: str
    language: str
    model: str
    latest_version: int
    updated_at: datetime
    labels: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class ImportResult:
    """What an import changed; both zero when the folder was already in the store."""

    versions_added: int = 0
    labels_moved: int = 0
