"""Real stores for the store tests: a SQLite file in tmp_path and, when PROFILES_TEST_POSTGRES_URL is
set (``. .ci/services/postgres.sh``), a PostgreSQL schema of its own per test, dropped afterwards."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from profiles.store import PromptStore

POSTGRES_ENV = "PROFILES_TEST_POSTGRES_URL"
BACKENDS = ("sqlite", "postgres")


@pytest.fixture(autouse=True)
def _no_store_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PROFILES_STORE_URL in the developer's shell must not redirect the tests."""
    monkeypatch.delenv("PROFILES_STORE_URL", raising=False)


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


def _postgres_schema_url() -> Iterator[str]:
    """Yield a URL whose connections see only a fresh schema, so tests never see each other's rows."""
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        pytest.skip(f"{POSTGRES_ENV} is not set; source .ci/services/postgres.sh to run the PostgreSQL tests")
    from sqlalchemy import create_engine, text

    schema = f"t_{uuid.uuid4().hex[:16]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    separator = "&" if "?" in base else "?"
    yield f"{base}{separator}options={quote(f'-csearch_path={schema}')}"
    with admin.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    yield from _postgres_schema_url()


@pytest.fixture(params=BACKENDS)
def store_url(request) -> str:
    """The URL of an empty store, once per backend."""
    return request.getfixturevalue(f"{request.param}_url")


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


@pytest.fixture
def second_postgres_url() -> Iterator[str]:
    yield from _postgres_schema_url()
