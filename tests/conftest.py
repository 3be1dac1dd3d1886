"""Fixtures that give tests real resources: files, environment variables, the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "profile_configs"


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
