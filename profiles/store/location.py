"""Where the prompt store lives: ``PROFILES_STORE_URL``, else an explicit URL, else ``.profiles/store.db``.

The order is the issue's: the environment wins so that a deployment can point every tool at one
shared database without editing commands that pass ``--store``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from profiles.store.base import DEFAULT_LOCK_TIMEOUT, PromptStore

__all__ = ["DEFAULT_STORE_PATH", "STORE_URL_ENV", "open_store", "resolve_store_url"]

#: Environment variable naming the store's URL; it beats any URL passed in.
STORE_URL_ENV = "PROFILES_STORE_URL"
#: The store used when nothing else is given, relative to the working directory.
DEFAULT_STORE_PATH = Path(".profiles") / "store.db"


def resolve_store_url(url: str | None = None, *, environ: Mapping[str, str] | None = None) -> str:
    """Return the store URL to use, first found wins.

    1. ``PROFILES_STORE_URL`` in the environment (ignored when empty);
    2. ``url``, the explicit argument (for example the CLI's ``--store``);
    3. the SQLite file ``.profiles/store.db`` under the current working directory.
    """
    env = os.environ if environ is None else environ
    for candidate in (env.get(STORE_URL_ENV), url):
        if candidate and candidate.strip():
            return candidate.strip()
    return "sqlite:///" + str(Path.cwd() / DEFAULT_STORE_PATH)


def open_store(url: str | None = None, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> PromptStore:
    """Open the store at ``resolve_store_url(url)``, creating a SQLite file and its folder on first use.

    Precedence, first wins: ``PROFILES_STORE_URL`` > ``url`` > ``.profiles/store.db`` in the working
    directory.

    Raises:
        StoreError: the store cannot be opened; the message names it and says what to do.
    """
    return PromptStore(resolve_store_url(url), lock_timeout=lock_timeout)
