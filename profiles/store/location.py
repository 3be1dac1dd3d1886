"""Where the prompt store lives: an explicit URL (the CLI's ``--store``), else ``PROFILES_STORE_URL``,
else ``.profiles/store.db`` in the working directory.

An explicit choice beats the environment, as for every other option: a command that names its
store must not be sent elsewhere by a variable set in the shell for another purpose.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from profiles.errors import StoreError
from profiles.store.base import DEFAULT_LOCK_TIMEOUT, PromptStore

__all__ = [
    "ACCEPTED_FORMS",
    "DEFAULT_STORE_PATH",
    "STORE_URL_ENV",
    "check_store_value",
    "open_store",
    "resolve_store_url",
]

#: Environment variable naming the store's URL when no URL is passed in.
STORE_URL_ENV = "PROFILES_STORE_URL"
#: The store used when nothing else is given, relative to the working directory.
DEFAULT_STORE_PATH = Path(".profiles") / "store.db"
#: What a store location may be, for messages.
ACCEPTED_FORMS = (
    "sqlite:///path/to/store.db (a SQLite file; `profiles store put` creates it), "
    "postgresql+psycopg://user@host/db, or the path of an existing store file"
)


def resolve_store_url(url: str | None = None, *, environ: Mapping[str, str] | None = None) -> str:
    """Return the store URL to use, first found wins.

    1. ``url``, the explicit argument (for example the CLI's ``--store``);
    2. ``PROFILES_STORE_URL`` in the environment (ignored when empty);
    3. the SQLite file ``.profiles/store.db`` under the current working directory.
    """
    env = os.environ if environ is None else environ
    for candidate in (url, env.get(STORE_URL_ENV)):
        if candidate and candidate.strip():
            return candidate.strip()
    return "sqlite:///" + str(Path.cwd() / DEFAULT_STORE_PATH)


def check_store_value(value: str, *, origin: str = "--store") -> str:
    """Return the URL a store location given by a person means, or refuse it with the accepted forms.

    A URL (``scheme://…``) is checked for a supported backend; anything else must be the path of
    an existing file, so that a typo (``--store garbage``) is an error, not a new empty database
    called ``garbage``. A new SQLite store is named by URL: ``sqlite:///new.db``.

    Raises:
        StoreError: the value is neither a supported URL nor the path of an existing file.
    """
    from profiles.store.engine import parse_store_url

    text = value.strip()
    if "://" in text:
        parse_store_url(text)
        return text
    path = Path(text).expanduser()
    if text and path.is_file():
        return "sqlite:///" + str(path.resolve())
    raise StoreError(
        f"{origin} {value!r} is neither a store URL nor the path of an existing store file; "
        f"give {ACCEPTED_FORMS}"
    )


def open_store(
    url: str | None = None, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT, create: bool = True
) -> PromptStore:
    """Open the store at ``resolve_store_url(url)``; with ``create``, a missing SQLite file (and its
    folder) is created, else a missing store is a ``StoreNotFoundError``.

    Precedence, first wins: ``url`` > ``PROFILES_STORE_URL`` > ``.profiles/store.db`` in the
    working directory.

    Raises:
        StoreError: the store cannot be opened; the message names it and says what to do.
        StoreNotFoundError: ``create`` is False and there is no store there.
    """
    return PromptStore(resolve_store_url(url), lock_timeout=lock_timeout, create=create)
