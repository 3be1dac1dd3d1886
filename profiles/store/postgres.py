"""PostgreSQL engines for the prompt store, through psycopg 3 (the ``postgres`` extra).

Teams share one server; writers serialise per prompt by locking its row (``SELECT ... FOR UPDATE``),
so version numbers stay gapless without retry storms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from profiles.errors import StoreError
from profiles.store.failures import first_line, shown_url

if TYPE_CHECKING:
    from sqlalchemy.engine import URL, Engine

__all__ = ["create_postgres_engine", "describe_postgres_error"]

#: Seconds to wait for the server to answer a connection attempt.
CONNECT_TIMEOUT = 10


def create_postgres_engine(url: URL) -> Engine:
    """Create a psycopg engine; ``postgresql://`` and ``postgres://`` URLs are read as psycopg ones.

    Raises:
        StoreError: psycopg is not installed.
    """
    from sqlalchemy import create_engine

    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise StoreError(
            "a PostgreSQL prompt store needs psycopg; "
            "install it with `pip install 'agent-profiles[postgres]'`"
        ) from exc
    from sqlalchemy import event

    url = url.set(drivername="postgresql+psycopg")
    # No pre-ping: it costs a round trip per checkout, as much as a lookup itself. A pooled
    # connection the server dropped fails its first statement instead; the store throws it away
    # and runs that work once more on a new one (PromptStore._run, lookup.BestMatch).
    engine = create_engine(url, connect_args={"connect_timeout": CONNECT_TIMEOUT})

    # Connections sit in psycopg's autocommit mode and the store's transactions begin with an
    # explicit BEGIN (COMMIT and ROLLBACK still end them), so a lookup, one statement, is one
    # round trip: no BEGIN before it, no ROLLBACK when the connection goes back to the pool.
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.autocommit = True

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN")

    return engine


def describe_postgres_error(error: BaseException, url: URL) -> str:
    """Turn a psycopg failure into a sentence naming the server (password hidden) and what to do."""
    from sqlalchemy.exc import InterfaceError, OperationalError

    where = shown_url(url)
    text = first_line(error)
    if isinstance(error, (OperationalError, InterfaceError)):
        return (
            f"cannot use the PostgreSQL prompt store at {where} ({text}); "
            "check that the server is running and the URL, user and password are right"
        )
    return f"the PostgreSQL prompt store at {where} failed: {text}"
