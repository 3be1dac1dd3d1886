"""What counts as a secret, and how a secret's value is kept out of text people see.

A value is a secret when its field says `secret: true` or when it was read from a key whose name
looks like a credential. Secrets are masked in `explain`, reprs, logs and error messages, and
refused in prompts unless the persona lists the field under `allow_secrets:`.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["CREDENTIAL_WORDS", "MASK", "looks_like_credential", "redact"]

#: What is shown instead of a secret's value.
MASK = "***"

#: A key holding any of these words (in any case) is taken for a credential.
CREDENTIAL_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE")

#: Shorter values are not searched for in messages: masking every "a" would garble the text.
_MIN_REDACTED_CHARS = 3


def looks_like_credential(key: str) -> bool:
    """Whether a key's name says it holds a credential, e.g. `AWS_SECRET_ACCESS_KEY` or `db_password`.

    The test errs on the safe side: `MONKEY_NAME` counts too, and costs only a masked value.
    """
    upper = key.upper()
    return any(word in upper for word in CREDENTIAL_WORDS)


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
