"""Where the store lives: the explicit URL, else PROFILES_STORE_URL, else .profiles/store.db."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiles.errors import StoreError, StoreNotFoundError
from profiles.store import (
    DEFAULT_STORE_PATH,
    STORE_URL_ENV,
    PromptStore,
    check_store_value,
    open_store,
    resolve_store_url,
)


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


def test_explicit_url_beats_the_env_var(tmp_path, monkeypatch):
    """An explicit URL wins over PROFILES_STORE_URL, which is then left untouched."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(STORE_URL_ENV, f"sqlite:///{tmp_path / 'from_env.db'}")
    with open_store(f"sqlite:///{tmp_path / 'explicit.db'}") as store:
        store.put("s", "x")
    assert (tmp_path / "explicit.db").is_file()
    assert not (tmp_path / "from_env.db").exists()
    assert not (tmp_path / ".profiles").exists()


def test_env_var_beats_the_default(tmp_path, monkeypatch):
    """Without an explicit URL, PROFILES_STORE_URL is used and no default store is made."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(STORE_URL_ENV, f"sqlite:///{tmp_path / 'from_env.db'}")
    with open_store() as store:
        store.put("s", "x")
    assert (tmp_path / "from_env.db").is_file() and not (tmp_path / ".profiles").exists()


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
        ({STORE_URL_ENV: "sqlite:///env.db"}, "sqlite:///arg.db", "sqlite:///arg.db"),
        ({STORE_URL_ENV: "sqlite:///env.db"}, "  ", "sqlite:///env.db"),
        ({STORE_URL_ENV: "sqlite:///env.db"}, None, "sqlite:///env.db"),
        ({STORE_URL_ENV: "  "}, "sqlite:///arg.db", "sqlite:///arg.db"),
        ({}, " sqlite:///arg.db ", "sqlite:///arg.db"),
        ({STORE_URL_ENV: ""}, None, "default"),
    ],
)
def test_resolve_store_url_order(tmp_path, monkeypatch, environ, url, expected):
    """First non-empty wins: argument, env var, default."""
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


def test_reading_a_missing_store_creates_nothing(tmp_path):
    """create=False on a path whose folders do not exist: a StoreNotFoundError naming it, and no folder."""
    url = f"sqlite:///{tmp_path / 'x' / 'y' / 'z.db'}"
    with pytest.raises(StoreNotFoundError, match=r"no prompt store at sqlite:///.*z\.db.*`profiles store put NAME`"):
        open_store(url, create=False)
    assert list(tmp_path.iterdir()) == []


def test_reading_an_empty_file_creates_no_tables(tmp_path):
    """An existing file that holds no store is no store: reading it adds no tables to it."""
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    with pytest.raises(StoreNotFoundError, match="holds none yet"):
        PromptStore(f"sqlite:///{path}", create=False)
    assert path.read_bytes() == b""


def test_reading_a_postgres_database_without_a_store(postgres_url):
    """A PostgreSQL schema without the store's tables is no store when reading; writing creates it."""
    from sqlalchemy import create_engine, inspect

    with pytest.raises(StoreNotFoundError, match="holds none yet"):
        PromptStore(postgres_url, create=False)
    engine = create_engine(postgres_url)
    assert inspect(engine).get_table_names() == []
    with PromptStore(postgres_url) as store:
        store.put("s", "x")
    with PromptStore(postgres_url, create=False) as store:
        assert store.get("s").content == "x"
    engine.dispose()


@pytest.mark.parametrize("value", ["garbage", "no/such/store.db", "", "  "])
def test_a_store_value_that_is_no_url_and_no_file_shows_the_accepted_forms(tmp_path, monkeypatch, value):
    """A typo is an error listing what --store accepts, not a new database named like the typo."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match=r"neither a store URL nor the path of an existing store file.*sqlite:///.*postgresql"):
        check_store_value(value)
    assert list(tmp_path.iterdir()) == []


def test_a_store_value_may_be_an_existing_file_or_a_url(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with PromptStore(f"sqlite:///{tmp_path / 'team.db'}") as store:
        store.put("s", "x")
    assert check_store_value("team.db") == f"sqlite:///{tmp_path / 'team.db'}"
    assert check_store_value("sqlite:///new.db") == "sqlite:///new.db"
    with pytest.raises(StoreError, match="not mysql://"):
        check_store_value("mysql://db/x")


@pytest.mark.parametrize("url", [None, 5, 2.5, ["sqlite:///a.db"]])
def test_a_store_url_that_is_no_text_creates_no_file(tmp_path, monkeypatch, url):
    """PromptStore(None) made a SQLite file named 'None' in the working folder."""
    from profiles.store import PromptStore

    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match=f"the prompt store URL must be text.*got {type(url).__name__}"):
        PromptStore(url)
    assert list(tmp_path.iterdir()) == []
    with PromptStore(tmp_path / "made.db") as store:  # a Path is a path, as a text one is
        assert store.url.endswith("made.db")
