"""Fixtures that give tests real resources: files, environment variables, the CLI."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "profile_configs"

#: The switches that keep the agent frameworks the adapters drive from phoning home (the OpenAI
#: Agents SDK exports traces to api.openai.com, CrewAI sends telemetry, LangSmith traces), set
#: before any test imports one. Tests reach only 127.0.0.1; tests/network.py refuses the rest.
#: (OTEL_SDK_DISABLED would also silence CrewAI's exporter, but the tracing tests need the SDK;
#: the CrewAI tests set it for their own run.)
QUIET_FRAMEWORKS = {
    "OPENAI_AGENTS_DISABLE_TRACING": "1",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_TRACING": "false",
    "CREWAI_DISABLE_TELEMETRY": "true",
    "CREWAI_DISABLE_TRACKING": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "CREWAI_DISABLE_VERSION_CHECK": "true",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "DO_NOT_TRACK": "1",
}
os.environ.update(QUIET_FRAMEWORKS)
for _proxy in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
    os.environ.pop(_proxy, None)
os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def configs() -> Path:
    return CONFIGS


@pytest.fixture
def write(tmp_path: Path):
    """Write a file under tmp_path and return its path."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return _write


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests start without the variables the examples read, whatever the machine has set."""
    for name in (
        "SUMMARY_PROFILE_NAME",
        "PROFILES_DEPLOYMENT",
        "PROFILES_ENV_ALLOW",
        "PROFILES_STORE_URL",
        "PROFILES_STORE_LABELS",
        "PROFILES_TEMPLATE_PATH",
    ):
        monkeypatch.delenv(name, raising=False)


# -- prompt stores: a SQLite file, and PostgreSQL when PROFILES_TEST_POSTGRES_URL is set -------------
# (`. .ci/services/postgres.sh` starts a server and sets it; CI always does)

POSTGRES_ENV = "PROFILES_TEST_POSTGRES_URL"


@pytest.fixture
def postgres_base() -> str:
    """The test server's URL; the test is skipped without one."""
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        pytest.skip(f"{POSTGRES_ENV} is not set; source .ci/services/postgres.sh to run the PostgreSQL tests")
    return base


def _schema_url(base: str) -> Iterator[str]:
    """Yield a URL whose connections see only a fresh schema, so tests never see each other's rows."""
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
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def postgres_url(postgres_base: str) -> Iterator[str]:
    yield from _schema_url(postgres_base)


@pytest.fixture
def second_postgres_url(postgres_base: str) -> Iterator[str]:
    yield from _schema_url(postgres_base)


@pytest.fixture(params=("sqlite", "postgres"))
def store_url(request: pytest.FixtureRequest) -> str:
    """The URL of an empty store, once per backend."""
    return request.getfixturevalue(f"{request.param}_url")
