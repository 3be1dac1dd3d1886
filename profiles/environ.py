"""Reading environment variables as they are now, at the cost of a dictionary lookup.

`create_profile` reads the environment at every call (the deployment, the template path, the
rollout key, the keys a persona may read, the field's own key), so that a changed variable shows
at the next call. `os.environ.get` costs about a microsecond for a variable that is not set (its
mapping raises and catches a `KeyError` inside), several times the work of building a profile;
`getenv` answers the same without the exception. Nothing is cached but how each name is encoded,
so a variable set, changed or removed through `os.environ` shows at once, exactly as
`os.environ.get` would show it.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["getenv"]

#: The type of `os.environ`; anything else put in its place is asked through its own `get`.
_ENVIRON_TYPE = type(os.environ)

#: Each name as `os.environ` keys it (bytes on POSIX), worked out once per name.
_ENCODED: dict[str, Any] = {}

#: Most names whose encoding is kept; more are encoded again, after the memory is cleared.
_MAX_NAMES = 1024


def getenv(name: str, default: str | None = None) -> str | None:
    """`os.environ.get(name, default)`: the variable's current value, or `default` when unset."""
    environ = os.environ
    if type(environ) is not _ENVIRON_TYPE:  # replaced by a mapping of another kind
        return environ.get(name, default)
    key = _ENCODED.get(name)
    if key is None:
        key = environ.encodekey(name)  # type: ignore[attr-defined]
        if len(_ENCODED) >= _MAX_NAMES:
            _ENCODED.clear()
        _ENCODED[name] = key
    value = environ._data.get(key)  # type: ignore[attr-defined]
    return default if value is None else environ.decodevalue(value)  # type: ignore[attr-defined,no-any-return]
