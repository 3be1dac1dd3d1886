"""Read a store URL and build the matching SQLAlchemy engine: SQLite or PostgreSQL, nothing else.

Only these two backends are tested for the concurrency guarantees, so any other URL is refused with
a message rather than half-working.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from profiles.errors import StoreError

if TYPE_CHECKING:
    from pathlib import Path

    from sqlalchemy.engine import URL, Engine

__all__ = ["StoreEngine", "create_store_engine", "parse_store_url"]


def parse_store_url(url: str) -> URL:
    """Parse a store URL; a bare path (no ``://``) means a SQLite file.

    Raises:
        StoreError: the URL is malformed or names a backend other than SQLite or PostgreSQL.
    """
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    if not isinstance(url, (str, os.PathLike)):  # str() of None or 5 would name a SQLite file "None" or "5"
        raise StoreError(
            f"the prompt store URL must be text (a path or a URL such as sqlite:///store.db), got {type(url).__name__}"
        )
    text = str(url).strip()
    if not text:
        raise StoreError("the prompt store URL is empty; give a path or a URL such as sqlite:///store.db")
    if "://" not in text:
        return make_url("sqlite://").set(database=text)
    if text.startswith("postgres://"):
        text = "postgresql://" + text[len("postgres://") :]
    try:
        parsed = make_url(text)
    except (ArgumentError, ValueError) as exc:
        from profiles.store.failures import shown_text

        # the parser's own words quote what it could not read, which may be the password (a port
        # that is not a number is often user:password with the @host left out)
        problem = "its port is not a number" if "int()" in str(exc) else "it is not scheme://user@host/db"
        raise StoreError(
            f"cannot read the prompt store URL {shown_text(text)!r}: {problem}; write it as "
            "postgresql+psycopg://user:password@host:5432/db or sqlite:///path/to/store.db"
        ) from None
    backend = parsed.get_backend_name()
    if backend in ("http", "https"):
        from profiles.store.failures import shown_text

        raise StoreError(
            f"{shown_text(text)} names a server (`profiles serve`), not a database: the `store` provider reads "
            "it (render, explain, check with --store or PROFILES_STORE_URL), but the store commands need the "
            "database's URL, sqlite:///… or postgresql+psycopg://…"
        )
    if backend not in ("sqlite", "postgresql"):
        raise StoreError(
            f"the prompt store supports sqlite:/// and postgresql+psycopg:// URLs, not {backend}://; "
            "change PROFILES_STORE_URL or --store"
        )
    if backend == "postgresql" and parsed.get_driver_name() not in ("psycopg", "psycopg2", ""):
        raise StoreError(
            f"use postgresql+psycopg:// for a PostgreSQL prompt store, not {parsed.drivername}://"
        )
    return parsed


class StoreEngine:
    """An engine plus what the store needs to know about its backend."""

    def __init__(
        self,
        engine: Engine,
        url: URL,
        describe: Callable[[BaseException], str],
        driver_errors: tuple[type[BaseException], ...],
    ) -> None:
        self.engine = engine
        self.url = url
        self.describe = describe
        self.driver_errors = driver_errors

    @property
    def file(self) -> Path | None:
        """The SQLite file, None for PostgreSQL or an in-memory database."""
        if not self.is_sqlite:
            return None
        from profiles.store.sqlite import sqlite_path

        return sqlite_path(self.url)

    @property
    def is_sqlite(self) -> bool:
        return self.url.get_backend_name() == "sqlite"

    @property
    def display(self) -> str:
        """The URL with any password hidden, for messages."""
        from profiles.store.failures import shown_url

        return shown_url(self.url)



def create_store_engine(url: str, *, lock_timeout: float, create: bool = True) -> StoreEngine:
    """Build the engine for ``url`` with the backend's locking set up.

    With ``create=False`` a SQLite file that does not exist is refused before anything touches
    the disk: connecting would create an empty file (and its folders).

    Raises:
        StoreError: the URL is unsupported or its driver is missing.
        StoreNotFoundError: ``create=False`` and the SQLite file does not exist.
    """
    parsed = parse_store_url(url)
    if parsed.get_backend_name() == "sqlite":
        import sqlite3

        from profiles.store.sqlite import create_sqlite_engine, describe_sqlite_error

        engine = create_sqlite_engine(parsed, lock_timeout=lock_timeout, create=create)
        return StoreEngine(engine, parsed, lambda exc: describe_sqlite_error(exc, parsed), (sqlite3.Error,))

    from profiles.store.postgres import create_postgres_engine, describe_postgres_error

    engine = create_postgres_engine(parsed)
    import psycopg

    return StoreEngine(engine, engine.url, lambda exc: describe_postgres_error(exc, parsed), (psycopg.Error,))
