"""How a prompt is keyed (name, language, model) and which keys a lookup tries, in order.

Kept apart from the database code so the preference order is one small, pure function that the
store, the CLI and later the ``store`` provider all share.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from profiles.errors import StoreError

__all__ = [
    "KEY_PART_BYTES",
    "MAX_CONTENT_BYTES",
    "MAX_NUMBER",
    "PromptKey",
    "candidate_keys",
    "check_size",
    "check_text",
    "language_chain",
    "make_key",
    "normalize_language",
]

#: The largest version number, weight or expected version both backends can store (PostgreSQL's
#: ``integer``); a larger one is refused before it reaches the database.
MAX_NUMBER = 2**31 - 1
#: Most UTF-8 bytes of each part of a key, and of a label: PostgreSQL indexes at most about 2,700
#: bytes per row of an index, and (name, language, model) is one index, (prompt, label) another.
KEY_PART_BYTES = {"prompt name": 1500, "language": 100, "model": 500, "a label": 1000}


@dataclass(frozen=True, order=True)
class PromptKey:
    """One prompt's identity; an empty ``language`` or ``model`` means "any"."""

    name: str
    language: str = ""
    model: str = ""

    def __str__(self) -> str:
        parts = [self.name]
        if self.language:
            parts.append(f"language={self.language}")
        if self.model:
            parts.append(f"model={self.model}")
        return " ".join(parts)


def normalize_language(language: str | None) -> str:
    """Return a language tag in its usual BCP 47 spelling: ``zh_tw`` becomes ``zh-TW``, None becomes "".

    Subtags keep their meaning; only case and the separator change, so the same language typed two
    ways is one prompt, not two.

    Raises:
        StoreError: the tag holds something other than ASCII letters and digits in subtags of 1 to 8.
    """
    if not language:
        return ""
    subtags = [part for part in language.strip().replace("_", "-").split("-") if part]
    if not subtags:
        return ""
    if not all(part.isascii() and part.isalnum() and len(part) <= 8 for part in subtags):
        raise StoreError(
            f"language {language[:40]!r} is not a BCP 47 tag; "
            "use letters and digits joined by hyphens, e.g. zh-TW"
        )
    spelled = [subtags[0].lower()]
    for part in subtags[1:]:
        if len(part) == 4 and part.isalpha():
            spelled.append(part.title())  # script, e.g. Hant
        elif len(part) == 2 and part.isalpha():
            spelled.append(part.upper())  # region, e.g. TW
        else:
            spelled.append(part.lower())
    return "-".join(spelled)


def language_chain(language: str | None) -> tuple[str, ...]:
    """Return the languages a lookup tries, most specific first, ending with "" (no language).

    ``zh-Hant-TW`` gives ``("zh-Hant-TW", "zh-Hant", "zh", "")``.
    """
    tag = normalize_language(language)
    chain: list[str] = []
    while tag:
        chain.append(tag)
        tag = tag.rpartition("-")[0]
    chain.append("")
    return tuple(chain)


def check_text(what: str, value: str) -> str:
    """Return ``value`` if both backends can store it: UTF-8 encodable and free of NUL characters.

    Raises:
        StoreError: the text holds a NUL or a lone surrogate.
    """
    if "\x00" in value:
        raise StoreError(f"{what} contains a NUL character, which PostgreSQL cannot store; remove it")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise StoreError(
            f"{what} is not valid Unicode text ({exc.reason} at position {exc.start}); fix it"
        ) from exc
    return value


#: The most UTF-8 bytes one version's content may hold. A stored prompt becomes a field's text or
#: a template, and a template file may hold this much; the HTTP API takes about this in one body.
MAX_CONTENT_BYTES = 1_000_000


def check_content(what: str, value: str) -> str:
    """Return ``value`` if it is storable text (``check_text``) of at most ``MAX_CONTENT_BYTES``.

    Raises:
        StoreError: it holds a NUL or a lone surrogate, or it is longer.
    """
    check_text(what, value)
    size = len(value.encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise StoreError(
            f"{what} is {size:,} bytes of UTF-8; a stored prompt holds at most {MAX_CONTENT_BYTES:,} (what a "
            "template file may), so shorten it or split it into several prompts"
        )
    return value


def make_key(name: str, language: str | None = None, model: str | None = None) -> PromptKey:
    """Build a validated key: the name must be non-empty; language is normalised; model is stripped.

    Raises:
        StoreError: the name is empty or a part holds a NUL character.
    """
    if not isinstance(name, str) or not name.strip():
        raise StoreError(f"a prompt name must be non-empty text, got {name!r}")
    for what, value in (("language", language), ("model", model)):
        if value is not None and not isinstance(value, str):
            raise StoreError(f"the {what} must be text (or None: any), got {type(value).__name__}")
    key = PromptKey(name, normalize_language(language), (model or "").strip())
    for what, value in (("prompt name", key.name), ("language", key.language), ("model", key.model)):
        check_text(what, value)
        check_size(what, value)
    return key


def check_size(what: str, value: str) -> str:
    """Return ``value`` if it is short enough for the database to index (see ``KEY_PART_BYTES``).

    Raises:
        StoreError: it is longer; SQLite would store it, PostgreSQL would refuse it.
    """
    size = len(value.encode("utf-8"))
    limit = KEY_PART_BYTES[what]
    if size > limit:
        raise StoreError(
            f"{what} {value[:40]!r}… is {size:,} bytes of UTF-8; at most {limit:,}, so that every backend "
            "can index it; shorten it"
        )
    return value


def candidate_keys(name: str, language: str | None = None, model: str | None = None) -> Iterator[PromptKey]:
    """Yield the keys a lookup tries, first wins.

    Language matters more than model: a prompt in the right language for any model beats one tuned for
    the model in the wrong language. So for ``zh-TW`` and ``gpt-4o`` the order is
    ``(zh-TW, gpt-4o), (zh-TW, ""), (zh, gpt-4o), (zh, ""), ("", gpt-4o), ("", "")``.
    """
    key = make_key(name, language, model)
    models = (key.model, "") if key.model else ("",)
    for lang in language_chain(key.language):
        for mod in models:
            yield PromptKey(key.name, lang, mod)
