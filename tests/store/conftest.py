"""Opened stores for the store tests, on the backends tests/conftest.py gives: a SQLite file, and a
PostgreSQL schema of its own per test when PROFILES_TEST_POSTGRES_URL is set."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from profiles.store import PromptStore


@pytest.fixture
def store(store_url) -> Iterator[PromptStore]:
    opened = PromptStore(store_url)
    yield opened
    opened.close()


@pytest.fixture
def other_store(request, store_url) -> Iterator[PromptStore]:
    """A second, empty store on the same backend as ``store`` (for export/import between stores)."""
    backend = "postgresql" if store_url.startswith("postgresql") else "sqlite"
    if backend == "sqlite":
        url = f"sqlite:///{request.getfixturevalue('tmp_path') / 'other.db'}"
    else:
        url = request.getfixturevalue("second_postgres_url")
    opened = PromptStore(url)
    yield opened
    opened.close()
