"""SQLite engines for the prompt store: one file, many processes, no lost versions.

pysqlite opens transactions lazily and never with ``BEGIN IMMEDIATE``, so two writers can both read
the newest version number before either takes the write lock. SQLAlchemy documents the fix
(https://docs.sqlalchemy.org/en/20/dialects/sqlite.html#serializable-isolation-savepoints-transactional-ddl):
turn off the driver's own transaction handling and emit ``BEGIN`` ourselves. Writers ask for
``BEGIN IMMEDIATE`` through the ``profiles_write`` execution option, so they queue on SQLite's
busy timeout instead of racing; readers use a plain ``BEGIN``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from profiles.errors import StoreError, StoreNotFoundError
from profiles.store.failures import first_line, shown_url

if TYPE_CHECKING:
    from sqlalchemy.engine import URL, Engine

__all__ = ["WRITE_OPTION", "create_sqlite_engine", "describe_sqlite_error", "sqlite_path"]

#: Execution option a connection sets to open its transaction with ``BEGIN IMMEDIATE``.
WRITE_OPTION = "profiles_write"


def sqlite_path(url: URL) -> Path | None:
    """Return the database file of a SQLite URL, or None for an in-memory database."""
    database = url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database)


def create_sqlite_engine(url: URL, *, lock_timeout: float, create: bool = True) -> Engine:
    """Create an engine whose write transactions start with ``BEGIN IMMEDIATE``.

    With ``create``, the parent folder is created on first use; without, a missing file is an
    error and nothing is created. ``lock_timeout`` is how long a connection waits for another
    process's lock before giving up with "database is locked".

    Raises:
        StoreError: the folder cannot be created.
        StoreNotFoundError: ``create`` is False and the file does not exist.
    """
    from sqlalchemy import create_engine, event

    path = sqlite_path(url)
    if path is not None and path.is_dir():
        raise StoreError(
            f"the SQLite prompt store {str(path)!r} is a folder, not a file; name the store's file instead, "
            f"e.g. sqlite:///{path / 'store.db'}"
        )
    if path is not None and not create and not path.is_file():
        raise StoreNotFoundError(
            f"no prompt store at {shown_url(url)}: {str(path)!r} does not exist; "
            "reading never creates a store, `profiles store put NAME` does (or fix --store / PROFILES_STORE_URL)"
        )
    if path is not None and create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the folder of the SQLite prompt store {str(path)!r} ({exc.strerror or exc}); "
                "choose another path with --store or PROFILES_STORE_URL"
            ) from exc
    engine = create_engine(url, connect_args={"timeout": lock_timeout})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # we emit BEGIN ourselves (below); the driver's implicit BEGIN would be a deferred one
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {int(lock_timeout * 1000)}")
            cursor.execute("PRAGMA foreign_keys = ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        immediate = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def describe_sqlite_error(error: BaseException, url: URL) -> str:
    """Turn a sqlite3 failure into a sentence that names the file and says what to do."""
    path = sqlite_path(url)
    where = f"SQLite prompt store {str(path)!r}" if path else "in-memory SQLite prompt store"
    text = first_line(error)
    lowered = text.lower()
    if "locked" in lowered or "busy" in lowered:
        return (
            f"the {where} is locked by another process or connection ({text}); "
            "wait for it to finish or stop it, then try again"
        )
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return (
            f"the {where} is not a readable SQLite database ({text}); "
            "move the file aside (a new store is created in its place) or restore it from a backup "
            "or an export (`profiles store import DIR`)"
        )
    if "unable to open" in lowered or "readonly" in lowered or "read-only" in lowered:
        return (
            f"cannot open the {where} for writing ({text}); "
            "check that the folder exists and that you may write to it, or set PROFILES_STORE_URL"
        )
    return f"the {where} failed: {text}"
