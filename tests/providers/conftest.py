"""Real prompt stores for the `store` provider's tests: a SQLite file, and PostgreSQL when
PROFILES_TEST_POSTGRES_URL is set (``. .ci/services/postgres.sh``)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from urllib.parse import quote

import pytest

POSTGRES_ENV = "PROFILES_TEST_POSTGRES_URL"


@pytest.fixture(autouse=True)
def _no_store_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's PROFILES_STORE_URL or label chains must not redirect the tests."""
    monkeypatch.delenv("PROFILES_STORE_URL", raising=False)
    monkeypatch.delenv("PROFILES_STORE_LABELS", raising=False)


@pytest.fixture
def postgres_base() -> str:
    """The test server's URL; the test is skipped without one."""
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        pytest.skip(f"{POSTGRES_ENV} is not set; source .ci/services/postgres.sh to run the PostgreSQL tests")
    return base


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def postgres_url(postgres_base) -> Iterator[str]:
    """A URL whose connections see only a fresh schema, dropped afterwards."""
    base = postgres_base
    from sqlalchemy import create_engine, text

    schema = f"p_{uuid.uuid4().hex[:16]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    separator = "&" if "?" in base else "?"
    yield f"{base}{separator}options={quote(f'-csearch_path={schema}')}"
    with admin.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


@pytest.fixture(params=("sqlite", "postgres"))
def store_url(request) -> str:
    """The URL of an empty store, once per backend."""
    return request.getfixturevalue(f"{request.param}_url")
