"""`.env` files: parsed once per version of the file, and expanded only from their own keys.

python-dotenv's `${VAR}` expansion falls back to `os.environ`, which would let a `.env` file copy a
process secret (`NAME=${AWS_SECRET_ACCESS_KEY}`) into an innocent-looking key. Files are therefore
read with `interpolate=False`, and `${VAR}` / `${VAR:-default}` are expanded here over the keys of
the layered files only.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISLNK, S_ISREG
from types import MappingProxyType

from ..errors import ResolutionError

__all__ = ["MAX_DOTENV_BYTES", "DotEnvFile", "expand", "read_dotenv"]

#: Largest `.env` file read, in bytes; a bigger one is a mistake, not configuration.
MAX_DOTENV_BYTES = 1_000_000

#: How many parsed files are kept; the least recently used goes first.
CACHE_SIZE = 256

#: Deepest chain of `${VAR}` references followed before giving up.
MAX_EXPANSION_DEPTH = 32

# the same syntax python-dotenv expands: ${NAME} and ${NAME:-default}
_VARIABLE = re.compile(r"\$\{(?P<name>[^}:]*)(?::-(?P<default>[^}]*))?\}")

# the key a line of a `.env` file sets, to name a line that cannot be parsed without its value
_KEY_OF_LINE = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=")


@dataclass(frozen=True)
class DotEnvFile:
    """One parsed `.env` file: its raw (unexpanded) values and how to name it in provenance."""

    path: Path
    label: str
    values: Mapping[str, str]


_cache: OrderedDict[str, tuple[int, int, Mapping[str, str]]] = OrderedDict()
_lock = threading.Lock()


def read_dotenv(path: Path, label: str | None = None) -> DotEnvFile | None:
    """The file at `path` parsed, or None when there is no such file.

    Parsed files are kept by (path, mtime, size), so repeated lookups cost one `stat` while an
    edited file is read again at the next call. Nothing is written into `os.environ`.

    Raises:
        ResolutionError: the file is too big or cannot be read.
    """
    label = label or str(path)
    try:
        stat = os.lstat(path)
        if S_ISLNK(stat.st_mode):
            _check_link(path, label)
            stat = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ResolutionError(f"cannot read {label}: {exc.strerror}; check its permissions") from None
    if not S_ISREG(stat.st_mode):
        return None
    key = os.path.abspath(path)
    with _lock:
        cached = _cache.get(key)
        if cached is not None and cached[0] == stat.st_mtime_ns and cached[1] == stat.st_size:
            _cache.move_to_end(key)
            return DotEnvFile(path, label, cached[2])
    if stat.st_size > MAX_DOTENV_BYTES:
        raise ResolutionError(
            f"{label} is {stat.st_size} bytes, over the {MAX_DOTENV_BYTES}-byte limit for a .env file"
        )
    values: Mapping[str, str] = MappingProxyType(_parse(path, label))
    with _lock:
        _cache[key] = (stat.st_mtime_ns, stat.st_size, values)
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return DotEnvFile(path, label, values)


def _parse(path: Path, label: str) -> dict[str, str]:
    """The keys of the file at `path`, later lines winning, as python-dotenv reads them.

    A line python-dotenv cannot parse (an unclosed quote, a key with a space) is an error naming
    the file and line: skipping it, as python-dotenv does with a log line that names neither,
    would drop the key without a trace, and a persona would silently fall back to its default.

    Raises:
        ResolutionError: the file cannot be read, is not UTF-8, or has a line that cannot be parsed.
    """
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_DOTENV_BYTES + 1)
    except OSError as exc:
        raise ResolutionError(f"cannot read {label}: {exc.strerror}; check its permissions") from None
    if len(data) > MAX_DOTENV_BYTES:  # it grew since it was measured
        raise ResolutionError(f"{label} is over the {MAX_DOTENV_BYTES}-byte limit for a .env file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:  # the bytes are not shown: they may be part of a secret
        line = data[: exc.start].count(b"\n") + 1
        raise ResolutionError(f"{label}:{line}: this line is not UTF-8 text; save the file as UTF-8") from None
    # line endings as python-dotenv sees them when it opens the file itself (universal newlines)
    return _parse_text(text.replace("\r\n", "\n").replace("\r", "\n"), label)


def _parse_text(text: str, label: str) -> dict[str, str]:
    """The keys of a `.env` file's text, later lines winning; `label` names it in errors.

    Raises:
        ResolutionError: a line cannot be parsed.
    """
    import io

    from dotenv.parser import parse_stream  # imported on first use: most processes never read a .env

    values: dict[str, str] = {}
    for binding in parse_stream(io.StringIO(text)):
        if binding.error:
            named = _KEY_OF_LINE.match(binding.original.string)  # the key only: the value may be a secret
            what = f"the line setting {named.group(1)}" if named else "this line"
            raise ResolutionError(
                f"{label}:{binding.original.line}: cannot parse {what}; write KEY=value, one per line, "
                "closing every quote (a value with spaces, '#' or line breaks goes in quotes)"
            )
        if binding.key is None:
            continue
        if binding.value is None:  # a bare `KEY` line unsets what an earlier line set, as in python-dotenv
            values.pop(binding.key, None)
        else:
            values[binding.key] = binding.value
    return values


def _check_link(path: Path, label: str) -> None:
    """Refuse a `.env` that is a symlink leading outside its own folder: it could read any file.

    A link to a file further down the folder (`.env -> config/dev.env`) stays inside and is read.
    """
    folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    target = os.path.realpath(path)
    if target == folder or os.path.commonpath([folder, target]) != folder:
        raise ResolutionError(
            f"{label} is a symlink leading outside its folder; copy the file there instead of linking it"
        )


def expand(
    key: str,
    layers: Sequence[DotEnvFile],
    *,
    check: Callable[[str, str], None] | None = None,
) -> tuple[str, DotEnvFile, frozenset[str]] | None:
    """The value of `key` in the first layer that has it, with `${VAR}` expanded over the layers.

    Returns `(value, file that held key, every key the value was built from)` or None. A reference
    is looked up in the same layers, first wins, never in the process environment; an unknown
    reference expands to its `:-default`, else to "". `check(key, file_label)` may refuse a
    referenced key.

    Raises:
        ResolutionError: references form a cycle or nest too deeply.
    """
    holder = _holder(key, layers)
    if holder is None:
        return None
    used: set[str] = {key}

    def value_of(name: str, chain: tuple[str, ...]) -> str | None:
        owner = _holder(name, layers)
        if owner is None:
            return None
        raw = owner.values[name]
        if "${" not in raw:
            return raw
        if len(chain) > MAX_EXPANSION_DEPTH:
            raise ResolutionError(
                f"{owner.label}: ${{...}} references nest over {MAX_EXPANSION_DEPTH} deep at {name!r}; flatten them"
            )

        def substitute(match: re.Match[str]) -> str:
            ref = match.group("name")
            if ref in chain:
                cycle = " → ".join((*chain[chain.index(ref) :], ref))
                raise ResolutionError(
                    f"{owner.label}: {name!r} refers back to itself through ${{...}}: {cycle}; break the cycle"
                )
            if check is not None:
                check(ref, owner.label)
            used.add(ref)
            found = value_of(ref, (*chain, ref))
            if found in (None, ""):
                return match.group("default") or ""
            return found

        return _VARIABLE.sub(substitute, raw)

    value = value_of(key, (key,))
    return (value or ""), holder, frozenset(used)


def _holder(key: str, layers: Sequence[DotEnvFile]) -> DotEnvFile | None:
    for layer in layers:
        if layer.values.get(key) not in (None, ""):
            return layer
    return None
