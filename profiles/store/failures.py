"""Turn database failures into ``StoreError`` messages that name the store and say what to do.

Callers of the store should never see a raw SQLAlchemy or driver exception: those name internal
SQL and rarely the file or server at fault. Each backend module explains its own errors; this
module holds the one place that catches them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from profiles.errors import StoreError

__all__ = ["first_line", "translate_errors"]


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
