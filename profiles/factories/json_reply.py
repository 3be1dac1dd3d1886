"""Turn a model's reply into the JSON objects it holds, repairing what models commonly break.

Models asked for JSON answer with code fences, prose around the JSON, trailing commas, single
quotes, wrong item types, or a reply cut off at the token limit. The LLM profile factory needs the
objects that are really there, a list of what was dropped and why (to ask again), and an error it
can send back to the model as a correction when nothing is usable.

Truncation rule: json-repair would "complete" an object that was cut off mid-way, inventing an
empty or partial value for its last field. That object is not what the model meant, so it is
dropped: only items whose closing brace is in the reply are kept. A reply that is a single object
cut off mid-way therefore yields nothing.

``normalise_name`` and ``prompt_hash`` live here too: they are the other two pure functions the
factory applies to what it sends and receives (deduplication and provenance).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from profiles.errors import FactoryError

__all__ = [
    "DEFAULT_LIST_KEYS",
    "ParsedReply",
    "extract_json_objects",
    "normalise_name",
    "parse_json_reply",
    "prompt_hash",
]

logger = logging.getLogger(__name__)

#: Keys under which a reply object may hold its list of items, e.g. ``{"personas": [...]}``.
#: Matched case-insensitively; an object with a single key whose value is a list is a wrapper too.
DEFAULT_LIST_KEYS: tuple[str, ...] = (
    "personas",
    "profiles",
    "items",
    "data",
    "results",
    "agents",
    "characters",
)

#: Longest reply parsed; a longer one is refused rather than scanned.
MAX_REPLY_CHARS = 1_000_000

#: How many places a JSON value may start at in one block before the search gives up (prose can
#: hold many brackets that open nothing).
MAX_CANDIDATES = 32

# a language tag counts only when a newline follows it, so "```[{...}]```" on one line keeps its JSON;
# a fence left open (a truncated reply) runs to the end
_FENCE = re.compile(r"```[ \t]*(?:[A-Za-z0-9_+.-]*[ \t]*\n)?(.*?)(?:```|\Z)", re.DOTALL)
_OPENER = re.compile(r"[\[{]")
_SIGNIFICANT = re.compile(r"[\[\]{}\"'\\\n]")
_CLOSERS = {"{": "}", "[": "]"}

_CORRECTION = (
    "Reply with only a JSON array of objects, for example "
    '[{"name": "...", "role": "..."}], with no prose or code fences around it.'
)


@dataclass(frozen=True)
class ParsedReply:
    """What :func:`parse_json_reply` found in a reply."""

    #: The items that are JSON objects, in reply order.
    objects: list[dict[str, Any]]
    #: What was dropped or fixed and why, phrased so it can be sent back to the model.
    problems: tuple[str, ...]
    #: The reply ended inside a JSON value (usually the token limit).
    truncated: bool
    #: The JSON was not valid as sent and had to be repaired.
    repaired: bool


@dataclass
class _Scan:
    end: int  # index just past the value, or len(text) when it never closed
    stack: list[str]  # brackets still open at ``end``; empty when the value closed
    last_close: dict[int, int]  # depth -> index just past the last child that closed at that depth


def _scan(text: str, start: int) -> _Scan:
    """Find where the JSON-ish value opening at ``text[start]`` ends, tracking strings and brackets.

    Tolerant on purpose: single-quoted strings are strings too (json-repair accepts them), a
    single-quoted string ends at a newline (so an apostrophe in prose cannot swallow the rest), and
    a mismatched closer still closes the innermost bracket.
    """
    stack: list[str] = []
    last_close: dict[int, int] = {}
    quote: str | None = None
    pos = start
    while True:
        match = _SIGNIFICANT.search(text, pos)
        if match is None:
            return _Scan(len(text), stack, last_close)
        ch = match.group()
        pos = match.end()
        if quote is not None:
            if ch == "\\":
                pos += 1  # skip the escaped character
            elif ch == quote or (ch == "\n" and quote == "'"):
                quote = None
        elif ch == '"' or (ch == "'" and _opens_value(text, match.start())):
            quote = ch
        elif ch in "[{":
            stack.append(ch)
            last_close[len(stack)] = pos  # no child closed yet: cutting here keeps none
        elif ch in "]}":
            if stack:
                stack.pop()
            if not stack:
                return _Scan(pos, [], last_close)
            last_close[len(stack)] = pos


def _opens_value(text: str, index: int) -> bool:
    """Tell whether a quote at ``text[index]`` stands where a key or value may start.

    An apostrophe after a letter (``here's``) is prose, not the start of a single-quoted string.
    """
    before = text[max(0, index - 64) : index].rstrip()
    return not before or before[-1] in "[{,:"


_TRAILING_COMMA = re.compile(r'("(?:[^"\\]|\\.)*")|,(\s*[\]}])', re.DOTALL)


def _keep_string_or_closer(match: re.Match[str]) -> str:
    return match.group(1) or match.group(2)


def _load(text: str) -> tuple[Any, bool]:
    """Parse ``text`` as JSON, else repair it; return the value and whether it was repaired."""
    try:
        return json.loads(text), False
    except (ValueError, RecursionError):
        pass
    # The commonest fault first, fixed exactly: json-repair mangles some escapes
    # (a backslash before "\\u001f").
    try:
        return json.loads(_TRAILING_COMMA.sub(_keep_string_or_closer, text)), True
    except (ValueError, RecursionError):
        pass
    import json_repair  # lazy: keeps `import profiles` light

    try:
        value = json_repair.loads(text)
    except Exception:  # json-repair's failure modes are not a documented exception type
        return None, True
    return _join_surrogates(value), True


_SURROGATE = re.compile("[\ud800-\udfff]")


def _join_surrogates(value: Any) -> Any:
    """Join the surrogate pairs json-repair leaves split.

    ``"\\ud83d\\ude00"`` is one emoji to ``json.loads`` but two lone surrogates to json-repair
    (0.64); models escape non-BMP characters that way, so repaired text is put right here.
    """
    if isinstance(value, str):
        if not _SURROGATE.search(value):
            return value
        try:
            return value.encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:  # a lone surrogate: keep it, as json.loads would
            return value
    if isinstance(value, list):
        return [_join_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_join_surrogates(key): _join_surrogates(item) for key, item in value.items()}
    return value


def _wrapper_key(value: dict[str, Any], list_keys: Sequence[str]) -> str | None:
    """Return the key of ``value`` that holds the item list, or None if ``value`` is itself an item."""
    by_fold = {key.casefold(): key for key in value if isinstance(key, str)}
    for wanted in list_keys:
        key = by_fold.get(wanted.casefold())
        if key is not None and isinstance(value[key], list):
            return key
    if len(value) == 1:
        (key,) = value
        if isinstance(value[key], list):
            return key
    return None


def _describe(item: Any) -> str:
    kind = {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "a list"}.get(
        type(item), "null" if item is None else type(item).__name__
    )
    shown = repr(item)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{kind} ({shown})" if item is not None else kind


class _Collector:
    def __init__(self) -> None:
        self.objects: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.truncated = False
        self.repaired = False
        self.found_container = False
        self.skipped: list[str] = []  # problems of lists passed over, reported only if nothing is found

    def add_items(self, items: list[Any], where: str) -> None:
        for index, item in enumerate(items, 1):
            if isinstance(item, dict):
                self.objects.append(item)
            else:
                self.problems.append(
                    f"{where}item {index} is {_describe(item)}, not an object; it was dropped."
                )

    def take(self, chunk: str, scan: _Scan, list_keys: Sequence[str]) -> bool:
        """Collect the items of one JSON value; return False if it holds no JSON container at all."""
        value, repaired = _load(chunk)
        if not isinstance(value, (dict, list)):
            return False
        self.found_container = True
        if isinstance(value, list) and not any(isinstance(item, dict) for item in value) and not scan.stack:
            # a list with no object in it, like "[sic]" in prose: note why, then look inside it
            where = len(self.problems)
            self.add_items(value, "")
            self.skipped.extend(self.problems[where:])
            del self.problems[where:]
            return False
        self.repaired |= repaired
        cut_off = bool(scan.stack)
        self.truncated |= cut_off
        key = _wrapper_key(value, list_keys) if isinstance(value, dict) else None
        if isinstance(value, dict) and key is None:
            if cut_off:
                self.problems.append("the reply was cut off inside an object; it was dropped.")
            else:
                self.objects.append(value)
            return True
        # items sit one level below a top-level list, two below a wrapper object
        depth = 1 if isinstance(value, list) else 2
        item_list_is_open = (
            len(scan.stack) >= depth
            and scan.stack[depth - 1] == "["
            and (key is None or list(value)[-1] == key)  # the wrapper's list is the one cut
        )
        if item_list_is_open:
            # Cut back to just after the last item that closed, then close what is still open: the
            # result is what the model had fully written, with nothing json-repair made up.
            closers = "".join(_CLOSERS[b] for b in reversed(scan.stack[:depth]))
            value, _ = _load(chunk[: scan.last_close.get(depth, 0)] + closers)
            if isinstance(value, dict):
                key = _wrapper_key(value, list_keys) or key
            if len(scan.stack) > depth:
                self.problems.append("the reply was cut off inside the last item; that item was dropped.")
        items = value if isinstance(value, list) else (value.get(key) if isinstance(value, dict) else None)
        if not isinstance(items, list):
            items = []
        self.add_items(items, f"under {key!r}: " if key else "")
        return True


def _blocks(text: str) -> list[str]:
    """Return the fenced code blocks of ``text`` that may hold JSON, or ``[text]`` when there are none."""
    blocks = [m.group(1) for m in _FENCE.finditer(text) if _OPENER.search(m.group(1))]
    return blocks or [text]


def parse_json_reply(text: str, *, list_keys: Sequence[str] = DEFAULT_LIST_KEYS) -> ParsedReply:
    """Find the JSON objects in a model's reply and say what had to be dropped or fixed.

    Fenced code blocks are read when there are any, else the whole reply; prose around the JSON is
    skipped. A block may hold a list of objects, an object wrapping that list under one of
    ``list_keys`` (or under its only key), a single object, or several of these one after another.
    Broken JSON (trailing commas, single quotes, unquoted keys, missing brackets) is repaired with
    json-repair; items cut off by truncation are dropped (see the module docstring), and so are
    items that are not objects, each with a line in ``problems``.

    Raises:
        FactoryError: the reply holds no usable object; the message is fit to send to the model.
    """
    if not isinstance(text, str):
        raise FactoryError(f"expected the reply as text, got {type(text).__name__}.")
    if len(text) > MAX_REPLY_CHARS:
        raise FactoryError(
            f"The reply is {len(text)} characters long, over the {MAX_REPLY_CHARS} this parser reads. "
            "Ask for fewer items per reply."
        )
    found = _Collector()
    for block in _blocks(text):
        pos = 0
        for _ in range(MAX_CANDIDATES):
            match = _OPENER.search(block, pos)
            if match is None:
                break
            scan = _scan(block, match.start())
            if found.take(block[match.start() : scan.end], scan, list_keys):
                pos = scan.end  # never look for items inside a value already taken
            else:
                pos = match.start() + 1  # a bracket in prose: look further
            if pos >= len(block):
                break
    if not found.objects:
        if not text.strip():
            detail = "The reply was empty."
        elif not found.found_container:
            detail = "The reply held no JSON array or object."
        else:
            detail = "The reply held no usable JSON object: " + " ".join(
                found.problems or found.skipped or ["the JSON held no objects."]
            )
        raise FactoryError(f"{detail} {_CORRECTION}")
    return ParsedReply(
        objects=found.objects,
        problems=tuple(found.problems),
        truncated=found.truncated,
        repaired=found.repaired,
    )


def extract_json_objects(text: str, *, list_keys: Sequence[str] = DEFAULT_LIST_KEYS) -> list[dict[str, Any]]:
    """Return the JSON objects a model's reply holds; what was dropped is logged at INFO.

    See :func:`parse_json_reply`, which also returns what was dropped and why.

    Raises:
        FactoryError: the reply holds no usable object; the message is fit to send to the model.
    """
    parsed = parse_json_reply(text, list_keys=list_keys)
    for problem in parsed.problems:
        logger.info("model reply: %s", problem)
    return parsed.objects


def normalise_name(name: str) -> str:
    """Return the form of a name used to spot duplicates: same letters, any case, width or punctuation.

    NFKC folds compatibility forms (full-width letters, ligatures), ``casefold`` folds case more
    thoroughly than ``lower`` (``"Straße"`` matches ``"STRASSE"``), and every run of punctuation,
    symbols, whitespace or control characters becomes one space, trimmed at both ends: so
    ``"Dr.  Jane O'Neil"``, ``"dr jane o’neil"`` and ``"DR. JANE O NEIL"`` are all ``"dr jane o neil"``.
    """
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", str(name)).casefold())
    out: list[str] = []
    gap = False
    for ch in text:
        if unicodedata.category(ch)[0] in "LNM":  # letters, numbers, combining marks
            if gap and out:
                out.append(" ")
            out.append(ch)
            gap = False
        else:
            gap = True
    return "".join(out)


def prompt_hash(messages: Sequence[Mapping[str, Any]], *, length: int = 16) -> str:
    """Return a short, stable hex digest of a conversation, for a profile's provenance.

    The digest is SHA-256 over canonical JSON (keys sorted, no spaces, UTF-8), so the same
    messages give the same hash on any machine and Python version, whatever the key order.

    Raises:
        TypeError: a message holds a value JSON cannot encode.
    """
    canonical = json.dumps(
        [dict(message) for message in messages],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        allow_nan=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:length]
