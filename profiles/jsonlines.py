"""One JSON line per record, in one byte form whichever encoder writes it.

Batch output is compared, resumed and concatenated byte for byte (a resumed run must equal an
uninterrupted one, `--workers 4` must equal `--workers 1`), so every writer encodes through
`dumps_line`. It uses orjson when installed (the `fast` extra), several times faster than the
standard library, and otherwise `json.dumps` with the settings that give orjson's exact bytes:
compact separators, UTF-8 rather than `\\u` escapes. A record holding something the two would
spell differently (a float, an integer past 64 bits, a key that is not text, any other type, which
is written as `str(value)`) is encoded by the standard library either way.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = [
    "MAX_JSON_DEPTH",
    "NestingError",
    "SURROGATE_PROBLEM",
    "dumps_line",
    "encoder_name",
    "escape_surrogates",
    "loads",
    "lone_surrogate",
    "nested_over",
    "non_finite",
]

try:  # the `fast` extra; its absence changes speed, never bytes
    import orjson as _orjson
except ImportError:  # pragma: no cover - exercised by the tests that hide orjson
    _orjson = None

#: Integers both encoders write alike: orjson refuses anything wider than 64 bits.
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


def _plain(value: Any) -> bool:
    """Whether orjson writes `value` exactly as `json.dumps` does: text, whole numbers, true/false,
    null, and lists and mappings (with text keys) of those."""
    kind = type(value)
    if kind is str or value is None or kind is bool:
        return True
    if kind is int:
        return _INT_MIN <= value <= _INT_MAX
    if kind is dict:
        return all(type(key) is str and _plain(item) for key, item in value.items())
    if kind is list or kind is tuple:
        return all(_plain(item) for item in value)
    return False


def _stdlib(record: Any) -> bytes:
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.encode("utf-8") + b"\n"


def dumps_line(record: Any) -> bytes:
    """`record` as one line of JSON, UTF-8, ending in a line break.

    Raises:
        UnicodeEncodeError: a text holds a lone surrogate, which UTF-8 cannot encode.
        ValueError: the record refers to itself.
    """
    if _orjson is not None and _plain(record):
        try:
            return _orjson.dumps(record, option=_orjson.OPT_APPEND_NEWLINE)
        except _orjson.JSONEncodeError:  # a lone surrogate: let the standard library say so, as without orjson
            pass
    return _stdlib(record)


#: How deep JSON read from others (a dataset row, a tool call's arguments, a command line's JSON)
#: may nest: as deep as a persona file's YAML may. Past it, copying, pickling or writing the value
#: would recurse as deep, and a few hundred levels exhaust Python's stack.
MAX_JSON_DEPTH = 64


def nested_over(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether `value` holds lists or mappings nested more than `limit` levels deep (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= limit:
                return True
            stack.extend((entry, depth + 1) for entry in (item.values() if isinstance(item, dict) else item))
    return False


class NestingError(ValueError):
    """JSON nested deeper than the parser can recurse into: invalid input, like any other."""


def loads(text: str | bytes, object_pairs_hook: Any = None) -> Any:
    """`json.loads`, except that JSON nested too deep to parse is a `ValueError` (a `NestingError`)
    like any other invalid JSON, not the `RecursionError` that `json.loads` raises for it: text
    from a file, a command line or a model can be `[[[[…` thousands of levels deep."""
    try:
        return json.loads(text, object_pairs_hook=object_pairs_hook)
    except RecursionError:
        raise NestingError("nested too deeply to read; flatten it to at most a few hundred levels") from None


#: What to say of the surrogate `lone_surrogate` finds, after naming where it is and the escape.
SURROGATE_PROBLEM = (
    "half of a UTF-16 surrogate pair without its other half, which is not text; "
    "write the character itself, or both halves of its pair"
)

#: Half of a UTF-16 pair: `json.loads` reads a lone `"\\ud800"` into a text that UTF-8 cannot encode.
_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(value: Any) -> tuple[tuple[Any, ...], str] | None:
    """The first lone surrogate in a JSON value: the path to it (keys and indexes) and the
    surrogate written as `\\uXXXX` (in the path's keys too); None when every text is one `dumps_line` can encode.

    JSON read from others (a dataset, a model's reply) can hold one; finding it where the value
    comes in lets the error name the row or field instead of failing when the line is written.
    """
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found:
                # the path is for a message, which must be printable: a key may hold the surrogate
                shown = tuple(_SURROGATE.sub(_escaped, part) if isinstance(part, str) else part for part in path)
                return shown, _escaped(found)
        elif isinstance(item, dict):
            for key, entry in reversed(list(item.items())):
                stack.append(((*path, key), entry))
                stack.append(((*path, key), key))
        elif isinstance(item, list):
            stack.extend(((*path, index), entry) for index, entry in reversed(list(enumerate(item))))
    return None


def non_finite(value: Any) -> tuple[tuple[Any, ...], str] | None:
    """The path to the first NaN or infinity in a parsed JSON value, and how JSON text spells it
    (`NaN`, `Infinity`, `-Infinity`); None when every number is one JSON has.

    `json.loads` reads those words, and `1e999` as infinity, though JSON has no such numbers: a
    value holding one is written back as text no other JSON reader takes, and NaN passes every
    `minimum` and `maximum` of a schema.
    """
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return path, "NaN" if math.isnan(item) else ("-Infinity" if item < 0 else "Infinity")
        if isinstance(item, dict):
            stack.extend(((*path, key), child) for key, child in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend(((*path, index), child) for index, child in reversed(list(enumerate(item))))
    return None


def _escaped(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"


def escape_surrogates(text: str) -> str:
    """`text` with each lone surrogate written as the six characters `\\uXXXX`, the JSON escape
    a server sent it as: text that can be encoded again (into a request, a line), and that a JSON
    reader turns back into the surrogate, for `lone_surrogate` to report where it sits."""
    return _SURROGATE.sub(_escaped, text)


def encoder_name() -> str:
    """Which encoder `dumps_line` uses for plain records: "orjson" or "json"."""
    return "json" if _orjson is None else "orjson"
