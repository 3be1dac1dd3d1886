"""What counts as a secret, and how a secret's value is kept out of text people see.

A value is a secret when its field says `secret: true` or when it was read from a key whose name
looks like a credential: a whole part of the name (split at `_`, `-`, `.` and camelCase) is a
credential word such as KEY or TOKEN. Secrets are masked in `explain`, reprs, logs and error messages, and
refused in prompts unless the persona lists the field under `allow_secrets:`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["CREDENTIAL_WORDS", "MASK", "MaskedMapping", "first_leak", "looks_like_credential", "name_parts", "redact"]

#: What is shown instead of a secret's value.
MASK = "***"

class MaskedMapping(Mapping[str, Any]):
    """A read-only mapping that hands out its values but prints its secret ones as `***`.

    What a profile gives as `values` and `bound` when some of them are secret, so printing or
    logging them (a debugger, an f-string) never shows a credential; reading an entry still gives
    the value itself, the same object.
    """

    __slots__ = ("_data", "_secret")

    def __init__(self, data: Mapping[str, Any], secret: Iterable[str]) -> None:
        self._data = data
        self._secret = frozenset(secret)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Any:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{key!r}: {MASK!r}" if key in self._secret else f"{key!r}: {value!r}" for key, value in self._data.items()
        )
        return f"{type(self).__name__}({{{shown}}})"

    __str__ = __repr__


#: A key with one of these as a whole part of its name (in any case, singular or plural) is taken
#: for a credential: `API_KEY`, `aws_secret_access_key`, `dbPassword`, `GITHUB_TOKEN`.
CREDENTIAL_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "PRIVATE")

#: Credential words written together without a separator, taken as whole parts too.
_GLUED = ("APIKEY", "SECRETKEY", "PRIVATEKEY", "ACCESSKEY", "AUTHTOKEN", "ACCESSTOKEN", "BEARERTOKEN")

_PART_WORDS = frozenset(
    {*CREDENTIAL_WORDS, *(f"{word}S" for word in CREDENTIAL_WORDS), *_GLUED, *(f"{word}S" for word in _GLUED)}
)

# runs of capitals before a capitalised word (API in APIKey), capitalised or lower words, capitals, digits
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

#: Shorter values are not searched for in messages: masking every "a" would garble the text.
_MIN_REDACTED_CHARS = 3


def name_parts(key: str) -> list[str]:
    """The words a key's name is made of, split at `_`, `-`, `.`, other punctuation, camelCase and digits.

    `aws_secret_access_key` → aws, secret, access, key; `dbPassword` → db, Password;
    `APIKey2` → API, Key, 2.
    """
    return _PARTS.findall(key)


def looks_like_credential(key: str) -> bool:
    """Whether a key's name says it holds a credential: one of its parts is a credential word.

    Whole parts only: `HOCKEY_TEAM_NAME`, `SUPPORT_KEYWORDS` and `MONKEY_NAME` are not credentials,
    while `API_KEY`, `aws_secret_access_key`, `dbPassword` and `GITHUB_TOKEN` are. Anything
    that is not text names no key, so it is no credential's.
    """
    if not isinstance(key, str):
        return False
    return any(part.upper() in _PART_WORDS for part in name_parts(key))


def redact(text: str, secrets: Iterable[object]) -> str:
    """Replace every occurrence of each secret's text (or of each item of a list) in `text` with the mask."""
    values: set[str] = set()
    for value in secrets:
        if isinstance(value, (list, tuple)):
            values.update(str(item) for item in value if item is not None)
        elif value is not None:
            values.add(str(value))
    for value in sorted(values, key=len, reverse=True):  # longest first: one secret may hold another
        if len(value) >= _MIN_REDACTED_CHARS:
            text = text.replace(value, MASK)
    return text


def _texts(data: Any) -> Iterable[str]:
    """Every text inside `data` (a message list, a request body), keys included, however deep."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def first_leak(data: Any, secrets: Iterable[tuple[str, Any]]) -> str | None:
    """The name of the first secret whose value (or an item of it) appears in a text inside `data`.

    `secrets` pairs a name with its value. Values shorter than three characters are not searched
    for, as in `redact`.
    """
    texts: list[str] | None = None
    for name, value in secrets:
        for item in value if isinstance(value, (list, tuple)) else (value,):
            needle = "" if item is None else str(item)
            if len(needle) < _MIN_REDACTED_CHARS:
                continue
            if texts is None:
                texts = list(_texts(data))
            if any(form in text for form in _spellings(needle) for text in texts):
                return name
    return None


def _spellings(needle: str) -> set[str]:
    """A secret's text, and how it reads inside JSON text (a tool call's arguments): escaped as
    `json.dumps` escapes it, with and without `ensure_ascii`. The model reads the arguments decoded."""
    return {needle, json.dumps(needle)[1:-1], json.dumps(needle, ensure_ascii=False)[1:-1]}
