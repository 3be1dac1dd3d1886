"""The `store` provider (alias `prompt_manager`): values and templates from the prompt store.

A lookup asks the store for `key` in the context's language and model, with the label chain of
the deployment: every deployment reads a label named like itself first, so `prod` reads `prod`,
then `production`, then the newest version (`latest`); `staging` reads `staging`, then
`production`, then `latest`; any other deployment its own name, then `latest`. A label rolled out
over several versions gives the one the context's rollout key falls on (the first without a key),
and the provenance names the arm. Answers are kept for a few seconds per provider, so rendering a
batch of profiles does not query the database once per field and profile; the arm is picked per
lookup from the kept answer, so a thousand users cost one query. When the store cannot
be reached, the last good answer is served (else the field's default) with a warning, and the
provenance says so: `store:summarizer/name v3 label=production (stale: store unreachable)`; the
store is then left alone until the TTL passes, so a dead server costs one timeout, not one per field.

SQLAlchemy is imported at the first lookup, never by `import profiles`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..callers import warn_at_caller
from ..context import Context, Resolved
from ..environ import getenv
from ..errors import ConfigError, PromptNotFoundError, ResolutionError, StoreError, StoreNotFoundError
from .base import ConfigProvider
from .http_store import is_http_store

if TYPE_CHECKING:
    from ..store.base import PromptStore
    from ..store.models import LabelMatch
    from .http_store import HttpStore

__all__ = [
    "DEFAULT_LABEL_CHAINS",
    "DEFAULT_TTL",
    "LABELS_ENV",
    "LATEST",
    "StaleStoreWarning",
    "StoreProvider",
    "label_chain",
    "parse_label_chains",
]

#: The chain entry that means "the newest version", whatever its labels.
LATEST = "latest"

#: Labels tried per deployment, first wins; each starts with the deployment's own name, so a label
#: named like a deployment is always read for it. A deployment not listed reads its own name, then
#: the newest version; no deployment reads the newest version.
DEFAULT_LABEL_CHAINS: Mapping[str, tuple[str, ...]] = {
    "prod": ("prod", "production", LATEST),
    "production": ("production", LATEST),
    "staging": ("staging", "production", LATEST),
}

#: Environment variable whose entries replace chains per deployment, e.g.
#: `staging=staging,production,latest;dev=dev,latest`.
LABELS_ENV = "PROFILES_STORE_LABELS"

#: Seconds an answer (or a failure) is kept before the store is asked again.
DEFAULT_TTL = 5.0

#: Most label chains remembered per provider (one per deployment and labels setting seen).
_MEMO_LIMIT = 256


class StaleStoreWarning(UserWarning):
    """The prompt store could not be reached; a last good value or the default was used instead."""


def parse_label_chains(text: str, *, origin: str = LABELS_ENV) -> dict[str, tuple[str, ...]]:
    """Read `deployment=label,label,...` entries separated by `;` (or new lines).

    Raises:
        ResolutionError: an entry has no `=`, no deployment or no label.
    """
    chains: dict[str, tuple[str, ...]] = {}
    for entry in text.replace("\n", ";").split(";"):
        if not entry.strip():
            continue
        deployment, sep, labels = entry.partition("=")
        chain = tuple(label.strip() for label in labels.split(",") if label.strip())
        if not sep or not deployment.strip() or not chain:
            raise ResolutionError(
                f"{origin}: {entry.strip()!r} is not 'deployment=label,label,...'; "
                "write e.g. staging=staging,production,latest;prod=production,latest"
            )
        chains[deployment.strip()] = chain
    return chains


def label_chain(deployment: str | None, chains: Mapping[str, Sequence[str]] = DEFAULT_LABEL_CHAINS) -> tuple[str, ...]:
    """The labels a lookup tries for `deployment`, first wins; `latest` means the newest version."""
    if not deployment:
        return (LATEST,)
    chain = chains.get(deployment)
    if chain is None:
        return (deployment, LATEST)
    return tuple(chain)


def _checked_chains(chains: object) -> dict[str, tuple[str, ...]]:
    """`label_chains` as given, held to its shape: a chain given as one string would otherwise be
    read letter by letter (`"production"` as the labels p, r, o, …)."""
    if not isinstance(chains, Mapping):
        raise ConfigError(
            "StoreProvider: label_chains maps a deployment to the labels it tries, e.g. "
            f'{{"prod": ["production", "latest"]}}, got {type(chains).__name__}'
        )
    checked = {}
    for name, chain in chains.items():
        if (
            not isinstance(name, str)
            or isinstance(chain, str)
            or not isinstance(chain, Sequence)
            or not chain
            or not all(isinstance(label, str) and label.strip() for label in chain)
        ):
            raise ConfigError(
                f"StoreProvider: label_chains[{name!r}] must be a non-empty list of label names, e.g. "
                f'["production", "latest"], got {chain!r}'[:300]
            )
        checked[name] = tuple(chain)
    return checked


@dataclass
class _Entry:
    """What the provider knows about one (store, key, language, model, deployment, pin)."""

    match: LabelMatch | None  # what the store said at `checked`; None: no such prompt, or no answer
    checked: float
    good: LabelMatch | None  # the last answer the store actually gave
    failure: StoreError | None = None  # set while the store is unreachable
    #: The answer per (arm, whether a rollout key was given): what `find` returns, made once.
    answers: dict[tuple[int, bool], Resolved | None] = field(default_factory=dict)


class StoreProvider(ConfigProvider):
    """Looks keys up in a prompt store; the registered `store` provider is `StoreProvider()`.

    Without `url`, the store is `PROFILES_STORE_URL`, else `.profiles/store.db` in the working
    directory, read again at every lookup; a missing default file is an error ("no prompt store
    configured"), never a new empty database. With `url` (`sqlite:///file.db`,
    `postgresql+psycopg://...`), that store is used as given. An `http://` or `https://` URL names a
    `profiles serve`, whose API is read instead of a database (see `providers/http_store.py`),
    with the same TTL, label chains and stale fallback. The store opens at the first lookup.

    `label_chains` maps a deployment to the labels it tries (default `DEFAULT_LABEL_CHAINS`);
    `PROFILES_STORE_LABELS` replaces entries of it per deployment. `ttl` is how many seconds an
    answer is reused (0: ask every time). The cache belongs to this instance; nothing is shared
    across the process.

    Example:
        register_provider("store", StoreProvider("postgresql+psycopg://app@db/prompts", ttl=2))
    """

    name = "store"

    def __init__(
        self,
        url: str | None = None,
        *,
        label_chains: Mapping[str, Sequence[str]] | None = None,
        ttl: float = DEFAULT_TTL,
    ) -> None:
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl >= 0:  # NaN too
            raise ConfigError(f"StoreProvider: ttl must be 0 or more seconds, got {ttl!r}")
        if url is not None and not isinstance(url, str):
            raise ConfigError(
                "StoreProvider: url must be text such as sqlite:///store.db or http://host:8765, "
                f"got {type(url).__name__}"
            )
        self.url = url
        self.ttl = ttl
        base = DEFAULT_LABEL_CHAINS if label_chains is None else label_chains
        self._chains = _checked_chains(base)
        self._lock = threading.Lock()
        self._stores: dict[str, PromptStore | HttpStore] = {}
        self._cache: dict[tuple[str, ...], _Entry] = {}
        self._down: dict[str, tuple[float, StoreError]] = {}
        #: The chain per (deployment, PROFILES_STORE_LABELS as read), so a lookup parses neither.
        self._chain_memo: dict[tuple[str | None, str], tuple[str, ...]] = {}

    # -- the ConfigProvider contract --------------------------------------------------------------

    def find(self, key: str, context: Context) -> Resolved | None:
        """The stored text for `key` with provenance like `store:summarizer/name v3 label=production`.

        Returns None when the store holds no such prompt (the field's default is used then). When
        the store is unreachable: the last good answer, marked stale, or a `Resolved(None, ...)`
        whose source says why the default was used; either way with a `StaleStoreWarning`. A
        version pinned in `context.store_versions` is read as it is, whatever the labels say.

        Raises:
            ResolutionError: no store is configured, or `PROFILES_STORE_LABELS` is malformed.
        """
        url = self.url if self.url is not None else self._url()
        deployment = context.deployment
        raw = getenv(LABELS_ENV, "")
        chain = self._chain_memo.get((deployment, raw))
        if chain is None:
            chain = self.chain_for(deployment)
        pinned = context.store_versions.get(key) if context.store_versions else None
        cache_key = (url, key, context.language or "", context.model or "", deployment or "", pinned, *chain)
        now = time.monotonic()
        # a hit needs no lock (a dict read is atomic) and no key check: the entry exists only
        # because the same key, language and model passed the check when it was asked
        entry = self._cache.get(cache_key)
        if entry is None or now - entry.checked >= self.ttl:
            _check_key(key, context)
            entry = self._ask(url, key, context, chain, pinned, entry, now)
            with self._lock:
                self._cache[cache_key] = entry
        match = entry.match
        if match is None and entry.failure is None:
            return None
        index = 0 if match is None or len(match.arms) == 1 else match.pick(context.rollout_key)
        # the answer per arm is made once per entry: a thousand lookups share one Resolved
        answers = entry.answers
        which = (index, context.rollout_key is None)
        found = answers.get(which)
        if found is None:
            found = answers[which] = _answer(key, entry, context.rollout_key, pinned)
        return found

    def _ask(
        self,
        url: str,
        key: str,
        context: Context,
        chain: tuple[str, ...],
        pinned: int | None,
        entry: _Entry | None,
        now: float,
    ) -> _Entry:
        """Ask the store once; on an outage keep the last good match and warn."""
        try:
            self._check_not_down(url, now)
            store = self._store(url, key)
            if pinned is not None:
                match = store.match(key, language=context.language, model=context.model, version=pinned)
            else:
                labels = [None if item == LATEST else item for item in chain]
                match = store.match(key, language=context.language, model=context.model, labels=labels)
        except PromptNotFoundError:
            return _Entry(None, now, None)
        except StoreNotFoundError as exc:  # an existing file without the store's tables: no store here
            raise ResolutionError(f"cannot look {key!r} up: {exc.message}") from None
        except StoreError as exc:
            if not isinstance(exc, _StillDown):
                with self._lock:  # other keys skip the store until the TTL passes: one timeout, not one per field
                    self._down[url] = (now, exc)
            good = entry.good if entry is not None else None
            if good is not None:
                before = _answer(key, _Entry(good, now, good), context.rollout_key, pinned)
                assert before is not None
                served = f"serving {before.source.removeprefix('store:')} from before"
            else:
                served = "with no earlier answer to serve (a field then uses its default)"
            warn_at_caller(f"prompt store unreachable while reading {key!r}, {served}: {exc}", StaleStoreWarning)
            return _Entry(good, now, good, exc)
        return _Entry(match, now, match)

    # -- configuration ----------------------------------------------------------------------------

    def chain_for(self, deployment: str | None) -> tuple[str, ...]:
        """The labels tried for `deployment`: this provider's chains with `PROFILES_STORE_LABELS` on top."""
        chains = self._chains
        raw = os.environ.get(LABELS_ENV, "")
        if raw.strip():
            chains = {**chains, **parse_label_chains(raw)}
        chain = label_chain(deployment, chains)
        with self._lock:
            if len(self._chain_memo) >= _MEMO_LIMIT:
                self._chain_memo.clear()
            self._chain_memo[deployment, raw] = chain
        return chain

    def clear_cache(self) -> None:
        """Forget every cached answer, including the last good ones kept for outages."""
        with self._lock:
            self._cache.clear()
            self._down.clear()

    def expire(self) -> None:
        """Ask the store again at the next lookup of every key, keeping the last good answers to
        serve should it be unreachable then: what a process does after writing to the store it
        reads, so that its own write shows at once rather than after the TTL."""
        with self._lock:
            for entry in self._cache.values():
                entry.checked = float("-inf")

    def close(self) -> None:
        """Close the stores this provider opened; they reopen at the next lookup."""
        with self._lock:
            stores, self._stores = list(self._stores.values()), {}
        for store in stores:
            store.close()

    def __repr__(self) -> str:
        where = "PROFILES_STORE_URL or .profiles/store.db" if self.url is None else _hide_password(self.url)
        return f"<StoreProvider {where} ttl={self.ttl:g}s>"

    # -- helpers ----------------------------------------------------------------------------------

    def _url(self) -> str:
        if self.url is not None:
            return self.url
        from ..store.location import STORE_URL_ENV

        configured = (getenv(STORE_URL_ENV) or "").strip()
        return configured or "sqlite:///" + str(_default_path())

    def _check_not_down(self, url: str, now: float) -> None:
        """Raise the store's last failure again while it is recent; forget it once the TTL has passed."""
        with self._lock:
            down = self._down.get(url)
            if down is not None and now - down[0] >= self.ttl:
                del self._down[url]
                down = None
        if down is not None:
            raise _StillDown(str(down[1]))

    def _store(self, url: str, key: str) -> PromptStore | HttpStore:
        """The store at `url`, opened once; a SQLite file that does not exist is never created here."""
        with self._lock:
            store = self._stores.get(url)
        if store is not None:
            return store
        _check_exists(url, key, explicit=self.url is not None or url != "sqlite:///" + str(_default_path()))
        opened: PromptStore | HttpStore
        if is_http_store(url):  # another server's store, read through its API
            from .http_store import HttpStore

            opened = HttpStore(url)
        else:
            from ..store.base import PromptStore

            opened = PromptStore(url, create=False)  # a lookup never creates a store, nor its tables
        with self._lock:
            store = self._stores.setdefault(url, opened)
        if store is not opened:
            opened.close()  # another thread opened it first
        return store

class _StillDown(StoreError):
    """The store failed moments ago; it is not asked again until the TTL passes."""


def _answer(key: str, entry: _Entry, rollout_key: str | None, pinned: int | None) -> Resolved | None:
    """The answer a lookup gets from what the store said: the arm the rollout key picks, with its source."""
    match = entry.match
    if match is None:
        if entry.failure is None:
            return None
        return Resolved(None, f"store:{key} unreachable", stale=True, reason=str(entry.failure))
    index = match.pick(rollout_key)
    arm = match.arms[index]
    record = arm.record
    details: dict[str, object] = {"key": key, "version": record.version, "ref": record.ref}
    if pinned is not None:
        which = "pinned"
        details["pinned"] = True
    elif match.label is None:
        which = "latest"
        details["label"] = LATEST
    else:
        which = f"label={match.label}"
        details["label"] = match.label
    if match.is_rollout:
        total = sum(item.weight for item in match.arms)
        share = f"{arm.weight * 100 / total:g}%"
        why = "" if rollout_key is not None else ", no rollout key"
        which += f" arm {index + 1}/{len(match.arms)} ({share}{why})"
        details.update(arm=index + 1, arms=len(match.arms), weight=share)
    source = f"store:{record.ref} {which}"
    stale = entry.failure is not None
    if stale:
        source += " (stale: store unreachable)"
    details["stale"] = stale
    # a file or a here-string ends with a line break; a name or a goal does not
    return Resolved(record.content.rstrip("\r\n"), source, stale=stale, details=details)


def _default_path() -> Path:
    from ..store.location import DEFAULT_STORE_PATH

    return Path.cwd() / DEFAULT_STORE_PATH


def _check_key(key: str, context: Context) -> None:
    """Refuse a malformed key or language before the store is asked: that is no outage."""
    from ..store.keys import make_key

    try:
        make_key(key, context.language, context.model)
    except StoreError as exc:
        raise ResolutionError(f"cannot look {key!r} up in the prompt store: {exc}") from None


def _check_exists(url: str, key: str, *, explicit: bool) -> None:
    """Refuse a SQLite store whose file is missing: a lookup must not create an empty database."""
    if "://" in url and not url.startswith("sqlite:"):
        return
    from ..store.engine import parse_store_url
    from ..store.sqlite import sqlite_path

    try:
        path = sqlite_path(parse_store_url(url))
    except StoreError as exc:
        raise ResolutionError(f"cannot use the prompt store: {exc}") from None
    if path is None or path.exists():
        return
    if not explicit:
        raise ResolutionError(
            f"no prompt store configured to look up {key!r}: {path} does not exist; create it with "
            "`profiles store put NAME --label production`, set PROFILES_STORE_URL, or "
            "register_provider('store', StoreProvider(url)) (or give the field a different provider)"
        )
    raise ResolutionError(
        f"the prompt store {path} does not exist; create it with `profiles store --store {url} put NAME`, "
        "or fix the URL (PROFILES_STORE_URL or StoreProvider(url))"
    )


def _hide_password(url: str) -> str:
    """`url` as messages show it (password and credential query values hidden); a file path as it is."""
    from ..store.failures import shown_text

    return shown_text(url) if "://" in url else url

