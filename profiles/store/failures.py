"""Turn database failures into ``StoreError`` messages that name the store and say what to do.

Callers of the store should never see a raw SQLAlchemy or driver exception: those name internal
SQL and rarely the file or server at fault. Each backend module explains its own errors; this
module holds the one place that catches them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from profiles.errors import StoreError

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

__all__ = ["first_line", "shown_text", "shown_url", "translate_errors"]


def first_line(error: BaseException) -> str:
    """Return the driver's own message (not SQLAlchemy's wrapper with SQL and links), first line only."""
    inner = getattr(error, "orig", None) or error
    text = str(inner).strip()
    return text.splitlines()[0] if text else type(inner).__name__


@contextmanager
def translate_errors(
    describe: Callable[[BaseException], str], driver_errors: tuple[type[BaseException], ...]
) -> Iterator[None]:
    """Re-raise SQLAlchemy and driver errors raised in the block as ``StoreError(describe(error))``.

    ``StoreError`` itself passes through untouched.
    """
    from sqlalchemy.exc import SQLAlchemyError

    catchable: tuple[type[BaseException], ...] = (SQLAlchemyError, *driver_errors)
    try:
        yield
    except StoreError:
        raise
    except catchable as exc:
        raise StoreError(describe(exc)) from exc


def shown_url(url: URL) -> str:
    """`url` as messages and pages show it: the password hidden, and so is every query parameter
    named like a credential (`?password=…`, `sslpassword=…`), which libpq takes as well."""
    from profiles.secrets import looks_like_credential

    hidden = {key: "***" for key in url.query if looks_like_credential(key)}
    if not hidden:
        return url.render_as_string(hide_password=True)
    return url.update_query_dict(hidden).render_as_string(hide_password=True).replace("=%2A%2A%2A", "=***")


def shown_text(url: str) -> str:
    """A URL that could not be parsed, as messages show it: what stands between `scheme://` and the
    last `@` as `user:***`, and every credential's query value as `***`. Without an `@`, a
    `host:port` whose port is no number may be `user:password` with the host left out: hidden too."""
    from profiles.secrets import looks_like_credential

    scheme, sep, rest = url.partition("://")
    if not sep:
        return "***"
    rest, mark, query = rest.partition("?")
    if mark:
        pairs = [part.partition("=") for part in query.split("&")]
        query = "&".join(
            f"{key}={'***' if looks_like_credential(key) else value}" if eq else key for key, eq, value in pairs
        )
    netloc, slash, path = rest.partition("/")
    if "@" in netloc:
        credentials, _, host = netloc.rpartition("@")
        user, colon, _password = credentials.partition(":")
        netloc = f"{user}:***@{host}" if colon else f"{user}@{host}"
    else:
        host, colon, port = netloc.rpartition(":")
        if colon and not port.isdigit() and not netloc.endswith("]"):
            netloc = f"{host}:***"
    return f"{scheme}://{netloc}{slash}{path}{mark}{query}"
