"""Where the store lives: PROFILES_STORE_URL, else the explicit URL, else .profiles/store.db."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiles.store import DEFAULT_STORE_PATH, STORE_URL_ENV, open_store, resolve_store_url


def test_default_store_is_created_on_first_use(tmp_path, monkeypatch):
    """With nothing configured, .profiles/store.db appears in the working directory when first opened."""
    monkeypatch.chdir(tmp_path)
    assert not (tmp_path / ".profiles").exists()
    with open_store() as store:
        store.put("s", "hello")
    assert (tmp_path / DEFAULT_STORE_PATH).is_file()
    assert store.url.endswith(str(Path(".profiles") / "store.db"))
    with open_store() as again:
        assert again.get("s").content == "hello"


def test_env_var_beats_the_explicit_url(tmp_path, monkeypatch):
    """PROFILES_STORE_URL wins over the argument, which is then left untouched."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(STORE_URL_ENV, f"sqlite:///{tmp_path / 'from_env.db'}")
    with open_store(f"sqlite:///{tmp_path / 'explicit.db'}") as store:
        store.put("s", "x")
    assert (tmp_path / "from_env.db").is_file()
    assert not (tmp_path / "explicit.db").exists()
    assert not (tmp_path / ".profiles").exists()


def test_explicit_url_beats_the_default(tmp_path, monkeypatch):
    """Without the env var, the argument is used and no default store is made."""
    monkeypatch.chdir(tmp_path)
    with open_store(str(tmp_path / "bare-path.db")) as store:
        store.put("s", "x")
    assert (tmp_path / "bare-path.db").is_file()
    assert not (tmp_path / ".profiles").exists()


@pytest.mark.parametrize(
    ("environ", "url", "expected"),
    [
        ({STORE_URL_ENV: "sqlite:///env.db"}, "sqlite:///arg.db", "sqlite:///env.db"),
        ({STORE_URL_ENV: "  "}, "sqlite:///arg.db", "sqlite:///arg.db"),
        ({}, " sqlite:///arg.db ", "sqlite:///arg.db"),
        ({STORE_URL_ENV: ""}, None, "default"),
    ],
)
def test_resolve_store_url_order(tmp_path, monkeypatch, environ, url, expected):
    """First non-empty wins: env var, argument, default."""
    monkeypatch.chdir(tmp_path)
    if expected == "default":
        expected = f"sqlite:///{tmp_path / '.profiles' / 'store.db'}"
    assert resolve_store_url(url, environ=environ) == expected


def test_importing_the_store_package_does_not_load_sqlalchemy():
    """``import profiles.store`` stays light; SQLAlchemy loads when a store opens."""
    import subprocess
    import sys

    code = "import sys, profiles, profiles.store, profiles.cli.store; print('sqlalchemy' in sys.modules)"
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert result.stdout.strip() == "False"
