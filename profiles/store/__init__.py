"""The prompt store: versioned, labelled prompts in SQLite or PostgreSQL, synced to YAML folders.

Importing this package is cheap: SQLAlchemy loads when a store is opened.
"""

from __future__ import annotations

from profiles.store.base import DEFAULT_LOCK_TIMEOUT, PromptStore
from profiles.store.keys import PromptKey, candidate_keys, language_chain, normalize_language
from profiles.store.location import (
    DEFAULT_STORE_PATH,
    STORE_URL_ENV,
    check_store_value,
    open_store,
    resolve_store_url,
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

__all__ = [
    "Arm",
    "DEFAULT_LOCK_TIMEOUT",
    "DEFAULT_STORE_PATH",
    "ImportResult",
    "LabelMatch",
    "LabelMove",
    "PromptKey",
    "PromptStore",
    "PromptSummary",
    "PromptVersion",
    "ProtectedLabel",
    "STORE_URL_ENV",
    "candidate_keys",
    "check_store_value",
    "language_chain",
    "normalize_language",
    "open_store",
    "resolve_store_url",
]
