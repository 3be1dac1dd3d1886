"""Failures give a clear StoreError naming the store and a fix, and never leave a partial write."""

from __future__ import annotations

import os
import sqlite3

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import SQLAlchemyError

from profiles.errors import StoreError
from profiles.store import PromptStore, open_store

_FAIL_LABEL_WRITES = {
    "sqlite": [
        "CREATE TRIGGER refuse_labels BEFORE INSERT ON profiles_prompt_labels "
        "BEGIN SELECT RAISE(ABORT, 'label writes are switched off'); END"
    ],
    "postgresql": [
        "CREATE FUNCTION refuse_labels() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'label writes are switched off'; END $$",
        "CREATE TRIGGER refuse_labels BEFORE INSERT ON profiles_prompt_labels "
        "FOR EACH ROW EXECUTE FUNCTION refuse_labels()",
    ],
}


def _assert_clean(error: StoreError) -> None:
    """The message is ours: no SQL, no SQLAlchemy link, and the raised type is not a driver's."""
    assert not isinstance(error, (SQLAlchemyError, sqlite3.Error))
    assert "sqlalche.me" not in str(error) and "[SQL:" not in str(error)


def test_a_write_failing_midway_leaves_no_partial_version(store_url, store):
    """When the label write fails after the version row went in, the version is rolled back too."""
    store.put("s", "kept", label="production")
    engine = create_engine(store_url)
    with engine.begin() as conn:
        for statement in _FAIL_LABEL_WRITES[engine.dialect.name]:
            conn.execute(text(statement))
    engine.dispose()

    with pytest.raises(StoreError, match="label writes are switched off") as caught:
        store.put("s", "lost", label="staging")
    _assert_clean(caught.value)
    with pytest.raises(StoreError):
        store.put("new prompt", "lost too", label="production")
    assert [record.content for record in store.history("s")] == ["kept"]
    assert [summary.name for summary in store.list()] == ["s"]
    assert store.put("s", "next").version == 2  # the failed put used no number


def test_corrupt_file_names_the_file_and_the_fix(tmp_path):
    """Random bytes where the database should be give a StoreError, not a sqlite3 error."""
    path = tmp_path / "store.db"
    path.write_bytes(b"not sqlite " + os.urandom(4096))
    with pytest.raises(StoreError) as caught:
        PromptStore(f"sqlite:///{path}")
    message = str(caught.value)
    assert (
        str(path) in message
        and "not a readable SQLite database" in message
        and "move the file aside" in message
    )
    _assert_clean(caught.value)
    assert isinstance(caught.value.__cause__, (SQLAlchemyError, sqlite3.Error))


def test_corrupt_default_store_is_reported_by_open_store(tmp_path, monkeypatch):
    """The default location gets the same clear error."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".profiles").mkdir()
    (tmp_path / ".profiles" / "store.db").write_bytes(os.urandom(8192))
    with pytest.raises(StoreError, match=r"\.profiles/store\.db"):
        open_store()


def test_locked_database_says_so_and_loses_nothing(tmp_path):
    """A write blocked by another process's lock fails after the timeout with a clear message."""
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    with PromptStore(url) as store:
        store.put("s", "one")
    with PromptStore(url, lock_timeout=0.2) as store:
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(StoreError) as caught:
                store.put("s", "two")
            with pytest.raises(StoreError, match="locked"):
                PromptStore(url, lock_timeout=0.2)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        message = str(caught.value)
        assert str(path) in message and "locked by another process" in message and "try again" in message
        _assert_clean(caught.value)
        assert [record.content for record in store.history("s")] == ["one"]
        assert store.put("s", "two").version == 2


def test_folder_that_cannot_be_created(tmp_path):
    """A store path under a file is a StoreError naming the path."""
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="cannot create the folder"):
        PromptStore(f"sqlite:///{tmp_path / 'file' / 'store.db'}")


def test_unreachable_postgres_hides_the_password():
    """A server that does not answer is a StoreError that names it without the password."""
    with pytest.raises(StoreError) as caught:
        PromptStore("postgresql+psycopg://user:hunter2secret@127.0.0.1:1/db")
    message = str(caught.value)
    assert "cannot use the PostgreSQL prompt store" in message and "127.0.0.1:1" in message
    assert "hunter2secret" not in message
    _assert_clean(caught.value)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("mysql://u@h/db", "supports sqlite"),
        ("postgresql+asyncpg://u@h/db", r"postgresql\+psycopg"),
        ("   ", "empty"),
        ("sqlite://:bad//", "cannot read"),
    ],
)
def test_unsupported_urls_are_refused(url, problem):
    """Only SQLite and PostgreSQL through psycopg are accepted, with a message saying so."""
    with pytest.raises(StoreError, match=problem):
        PromptStore(url)


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg://127.0.0.1:notaport/db?password=hunter2secret",
        "postgresql+psycopg://postgres:hunter2secret/db",  # user:password with the @host left out
        "postgresql+psycopg://user:hunter2secret@127.0.0.1:notaport/db",
        "postgresql+psycopg ://user:hunter2secret@host/db",
        "http://127.0.0.1:8765/?token=hunter2secret",
    ],
)
def test_a_url_that_cannot_be_read_is_named_without_its_password(url):
    """The parser's own words quote what it could not read; the message shows the URL with every
    credential hidden and says how to write one instead."""
    with pytest.raises(StoreError) as caught:
        PromptStore(url)
    message = str(caught.value)
    assert "hunter2secret" not in message and "***" in message
    assert "cannot read the prompt store URL" in message or "names a server" in message
    _assert_clean(caught.value)


@pytest.fixture
def every_read_checks_the_file(monkeypatch):
    """Reads look at the file at most once a second; these tests look at every read."""
    import profiles.store.base

    monkeypatch.setattr(profiles.store.base, "_FILE_CHECK_SECONDS", 0, raising=False)


def test_a_sqlite_file_replaced_while_open_is_followed(tmp_path, every_read_checks_the_file):
    """A store file another is moved over (a restore, a fresh import) is the one read and written
    next: the open connections kept reading the old file and wrote where nobody could see it."""
    path, other = tmp_path / "store.db", tmp_path / "restored.db"
    with PromptStore(f"sqlite:///{other}") as restored:
        restored.put("greeter/name", "Grace", label="production")
    with PromptStore(f"sqlite:///{path}") as store:
        store.put("greeter/name", "Ada", label="production")
        assert store.get("greeter/name", label="production").content == "Ada"
        os.replace(other, path)
        assert store.get("greeter/name", label="production").content == "Grace"
        assert store.put("greeter/name", "Hopper").version == 2
    with PromptStore(f"sqlite:///{path}") as reopened:
        assert [record.content for record in reopened.history("greeter/name")] == ["Grace", "Hopper"]


def test_a_sqlite_file_removed_while_open_is_an_error_and_is_not_created_by_reads(
    tmp_path, every_read_checks_the_file
):
    """Reads of a removed file fail naming it (the provider then serves its last answer), on every
    thread, and create no empty file; a write makes a new store there, as `put` would."""
    import threading

    path = tmp_path / "store.db"
    store = PromptStore(f"sqlite:///{path}")
    store.put("greeter/name", "Ada", label="production")
    store.get("greeter/name")
    path.unlink()
    with pytest.raises(StoreError, match="was removed while it was open") as caught:
        store.get("greeter/name")
    assert str(path) in str(caught.value)
    failures = []

    def read() -> None:
        try:
            store.find("greeter/name", labels=["production"])
        except StoreError as exc:
            failures.append(exc)

    thread = threading.Thread(target=read)
    thread.start()
    thread.join()
    assert len(failures) == 1 and not path.exists()
    assert store.put("greeter/name", "Grace").version == 1
    assert store.get("greeter/name").content == "Grace"
    store.close()


@pytest.mark.parametrize("create", [True, False])
def test_a_folder_named_as_the_store_file_says_so(tmp_path, create):
    """Reading said the folder did not exist, writing that it could not be opened for writing."""
    (tmp_path / "store.db").mkdir()
    with pytest.raises(StoreError, match="is a folder, not a file; name the store's file instead") as caught:
        PromptStore(f"sqlite:///{tmp_path / 'store.db'}", create=create)
    assert str(tmp_path / "store.db" / "store.db") in str(caught.value)


def test_an_earlier_release_s_store_that_cannot_be_written_says_why_it_needs_writing(tmp_path):
    """Reading a store an earlier release wrote adds its new tables first; where the file may not
    be written, the error says that is why a read wants to write, and how to get past it."""
    from .test_upgrade import _old_store

    path = tmp_path / "old.db"
    _old_store(f"sqlite:///{path}")
    with pytest.raises(StoreError, match="attempt to write a readonly database") as caught:
        PromptStore(f"sqlite:///file:{path}?mode=ro&uri=true", create=False)
    message = str(caught.value)
    assert "written by an earlier release" in message and "open it once where it may be written" in message
