"""The prompt store read over HTTP, from a `profiles serve` elsewhere: no database credentials needed.

`PROFILES_STORE_URL=http://host:8765` (or `https://…`, or `StoreProvider("http://…")`) makes the
`store` provider ask that server's `/api/store/prompt` instead of a database. The provider keeps
its TTL, label chains and stale fallback as on SQLite and PostgreSQL: this module only answers
what the provider asks a `PromptStore` (`match`, and `find`, `get`, `history`, `list` for other
readers); a label rolled out over several versions comes with every version and its weight, and
the provider picks one per rollout key as it does from a database.

Each answer is kept with its `ETag`; when the provider asks again after its TTL, the request
carries `If-None-Match`, and an unchanged prompt costs the server a hash and the network an
empty 304. A server that cannot be reached, answers 5xx or answers something that is not the
API is a `StoreError` (the provider then serves the last good value); a prompt the server does
not hold is a `PromptNotFoundError` (the provider then uses the field's default).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import PromptNotFoundError, StoreError

if TYPE_CHECKING:
    from ..store.models import LabelMatch, PromptSummary, PromptVersion

__all__ = ["DEFAULT_TIMEOUT", "HttpStore", "is_http_store"]

#: Seconds to wait for the server to connect or answer before the store counts as unreachable.
DEFAULT_TIMEOUT = 5.0
#: Answers kept for revalidation with their ETags, at most.
_KEPT_ANSWERS = 4096
#: Largest answer read, in bytes: a prompt store's answer, not a download.
_MAX_ANSWER_BYTES = 20_000_000


def is_http_store(url: str | None) -> bool:
    """Whether a store URL names a server (`http://`, `https://`) rather than a database."""
    return bool(url) and url.strip().lower().startswith(("http://", "https://"))


class HttpStore:
    """Reads a prompt store through a `profiles serve` API at `url` (its root, e.g. `http://host:8765`).

    Safe to share between threads: one connection pool, and the kept answers under a lock.

    Raises:
        StoreError: the URL is not an http(s) URL with a host.
    """

    def __init__(self, url: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        text = url.strip().rstrip("/")
        parts = urlsplit(text)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise StoreError(f"{url!r} is not a server's URL; give http://host:port of a `profiles serve`")
        if parts.username or parts.password:
            raise StoreError("give the store server's URL without a user or password; reads need none")
        self._base = text
        import httpx  # here, not at import: most processes never read a store over HTTP

        from .. import __version__

        self._client = httpx.Client(
            base_url=text,
            timeout=timeout,
            headers={"Accept": "application/json", "User-Agent": f"agent-profiles/{__version__}"},
        )
        self._lock = threading.Lock()
        self._kept: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[str, Any]] = {}

    @property
    def url(self) -> str:
        return self._base

    def __repr__(self) -> str:
        return f"HttpStore({self._base!r})"

    def close(self) -> None:
        self._client.close()

    # -- what the `store` provider asks --------------------------------------------------------------

    def match(
        self,
        name: str,
        *,
        language: str | None = None,
        model: str | None = None,
        labels: Sequence[str | None] = (None,),
        version: int | None = None,
    ) -> LabelMatch:
        """What `PromptStore.match` gives: the label of the chain that matched (None: the newest
        version) and every version it serves with its weight; with `version`, that version.

        Raises:
            PromptNotFoundError: the server holds no such prompt.
            StoreError: the server cannot be reached or did not answer as the API does.
        """
        if version is not None:
            params = _params(name=name, language=language, model=model, version=str(version))
        else:
            chain = ",".join("latest" if label is None else label for label in labels)
            params = _params(name=name, language=language, model=model, chain=chain)
        from ..store.models import Arm, LabelMatch  # here: `import profiles.providers` stays free of the store

        data = self._get("/api/store/prompt", params)
        matched = data.get("matched")
        label = None if version is not None or matched in (None, "latest") else str(matched)
        arms = data.get("arms")
        if arms is None:  # a server of an earlier release: one version, no rollouts
            return LabelMatch(label, (Arm(_version(data, self._base)),))
        try:
            found = tuple(
                Arm(_version(arm, self._base), _number(arm["weight"], "weight")) for arm in _list(arms, self._base)
            )
        except (KeyError, TypeError, ValueError):
            raise _not_the_api(self._base, "an arm without a weight of 1 or more") from None
        if not found:
            raise _not_the_api(self._base, "a match without a version")
        return LabelMatch(label, found)

    def find(
        self,
        name: str,
        *,
        language: str | None = None,
        model: str | None = None,
        labels: Sequence[str | None] = (None,),
    ) -> tuple[PromptVersion, str | None]:
        """The best version for a label chain, as `PromptStore.find` gives it (None: the newest version).

        Raises:
            PromptNotFoundError: the server holds no such prompt.
            StoreError: the server cannot be reached or did not answer as the API does.
        """
        found = self.match(name, language=language, model=model, labels=labels)
        return found.arms[0].record, found.label

    def get(
        self,
        name: str,
        *,
        language: str | None = None,
        model: str | None = None,
        label: str | None = None,
        version: int | None = None,
    ) -> PromptVersion:
        """The best matching version, as `PromptStore.get` gives it."""
        params = _params(
            name=name, language=language, model=model, label=label, version=None if version is None else str(version)
        )
        return _version(self._get("/api/store/prompt", params), self._base)

    def history(self, name: str, *, language: str | None = None, model: str | None = None) -> tuple[PromptVersion, ...]:
        """Every version of one exact key, oldest first."""
        data = self._get("/api/store/history", _params(name=name, language=language, model=model))
        return tuple(_version(item, self._base) for item in _list(data.get("versions"), self._base))

    def list(self, *, name: str | None = None) -> tuple[PromptSummary, ...]:
        """One summary per prompt key (of `name`, when given)."""
        from ..store.models import PromptSummary

        data = self._get("/api/store/prompts", ())
        found = []
        for item in _list(data.get("prompts"), self._base):
            try:
                summary = PromptSummary(
                    str(item["name"]),
                    str(item["language"]),
                    str(item["model"]),
                    int(item["latest_version"]),
                    datetime.fromisoformat(str(item["updated_at"])),
                    tuple(sorted((str(label), int(version)) for label, version in dict(item["labels"]).items())),
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise _not_the_api(self._base, f"a prompt without {exc}") from None
            if name is None or summary.name == name:
                found.append(summary)
        return tuple(found)

    # -- plumbing ------------------------------------------------------------------------------------

    def _get(self, path: str, params: tuple[tuple[str, str], ...]) -> dict[str, Any]:
        import httpx

        key = (path, params)
        with self._lock:
            kept = self._kept.get(key)
        headers = {"If-None-Match": kept[0]} if kept is not None else None
        try:
            with self._client.stream("GET", path, params=params, headers=headers) as response:
                content = self._read_bounded(response)
        except httpx.HTTPError as exc:
            raise StoreError(
                f"cannot reach the prompt store at {self._base}: {type(exc).__name__}: {exc or 'no answer'}; "
                "is `profiles serve` running there?"
            ) from exc
        if response.status_code == 304 and kept is not None:
            return kept[1]
        try:
            data = json.loads(content)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise _not_the_api(self._base, f"status {response.status_code} without a JSON object")
        if response.status_code == 404 and data.get("error") == "PromptNotFoundError":
            raise PromptNotFoundError(f"{data.get('message', 'no such prompt')} (at {self._base})")
        if response.status_code != 200:
            message = str(data.get("message") or data.get("detail") or "")[:500]
            raise StoreError(f"the prompt store at {self._base} answered {response.status_code}: {message}")
        etag = response.headers.get("etag")
        if etag:
            with self._lock:
                if len(self._kept) >= _KEPT_ANSWERS:
                    self._kept.clear()
                self._kept[key] = (etag, data)
        return data

    def _read_bounded(self, response: Any) -> bytes:
        """The answer's body, read no further than `_MAX_ANSWER_BYTES`: something that is not the
        API (a download, an endless stream) must not fill the memory of every agent reading it."""
        from ..bodies import read_bounded

        return read_bounded(
            response, _MAX_ANSWER_BYTES, lambda size: _not_the_api(self._base, f"a body of {size} bytes")
        )


def _params(**values: str | None) -> tuple[tuple[str, str], ...]:
    return tuple((key, value) for key, value in values.items() if value not in (None, ""))


def _list(value: Any, base: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise _not_the_api(base, "a list that is not one")
    return value


def _version(data: dict[str, Any], base: str) -> PromptVersion:
    from ..store.models import PromptVersion

    try:
        return PromptVersion(
            str(data["name"]),
            str(data["language"]),
            str(data["model"]),
            _number(data["version"], "version"),
            _text(data["content"]),
            datetime.fromisoformat(str(data["created_at"])),
            str(data.get("author") or ""),
            str(data.get("note") or ""),
            tuple(str(label) for label in data.get("labels") or ()),
        )
    except KeyError as exc:
        raise _not_the_api(base, f"a version without {exc}") from None
    except (TypeError, ValueError) as exc:
        raise _not_the_api(base, f"a version with {exc}") from None


def _number(value: Any, field: str) -> int:
    """A version or weight as the API sends it: a whole number from 1 (a rollout pick needs that)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{field!r} {value!r}, not a whole number from 1")
    return value


def _text(value: Any) -> str:
    """A prompt's text as the API sends it: a string, never the spelling of some other value."""
    if not isinstance(value, str):
        raise TypeError(f"'content' of type {type(value).__name__}, not text")
    return value


def _not_the_api(base: str, what: str) -> StoreError:
    return StoreError(
        f"{base} answered {what}, which is not the prompt store API; point PROFILES_STORE_URL at a "
        "`profiles serve` (http://host:port)"
    )
