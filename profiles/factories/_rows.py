"""Read dataset rows lazily from CSV, TSV, JSONL, YAML, Parquet or an iterable of mappings.

Every reader yields one `RawRow` per data row, numbered from 1, with the file line it starts on
when the format has lines. A row that cannot be read (bad JSON, a short CSV row) is yielded with a
`problem` instead of data, so the caller decides whether to stop, skip or collect it; a file that
cannot be read at all raises `FactoryError`. Nothing is read ahead: memory stays flat however
long the dataset is.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import FactoryError
from ..jsonlines import MAX_JSON_DEPTH, SURROGATE_PROBLEM, lone_surrogate, nested_over
from ..jsonlines import loads as load_json

__all__ = ["FORMATS", "RawRow", "count_rows", "detect_format", "jsonl_blank", "jsonl_row", "read_rows"]

#: File suffixes and the format each is read as.
FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".parquet": "parquet",
    ".pq": "parquet",
}

#: Rows a Parquet record batch holds; one batch is in memory at a time.
PARQUET_BATCH_ROWS = 1024


@dataclass(frozen=True)
class RawRow:
    """One data row as read: its number (from 1), the file line it starts on, and its cells."""

    row: int
    line: int | None
    data: Mapping[str, Any] | None
    problem: str | None = None


def detect_format(path: Path, given: str | None = None) -> str:
    """The format of `path`: the one given, else the one its suffix names."""
    if given:
        fmt = given.lower().lstrip(".")
        if fmt not in set(FORMATS.values()):
            raise FactoryError(
                f"unknown dataset format {given!r}; use one of {', '.join(sorted(set(FORMATS.values())))}"
            )
        return fmt
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise FactoryError(
            f"{path}: cannot tell the dataset format from the suffix {path.suffix or '(none)'!r}; "
            f"name it {', '.join(FORMATS)}, or give the format (`--format` on the command line, `format=` in Python)"
        )
    return fmt


def read_rows(
    source: Path | Iterable[Mapping[str, Any]],
    fmt: str | None,
    on_columns: Callable[[list[str]], None] | None = None,
) -> Iterator[RawRow]:
    """Yield the rows of `source`; `on_columns` gets the header of formats that have one."""
    if not isinstance(source, Path):
        return _iterable(source)
    if not source.is_file():
        if source.is_dir():
            raise FactoryError(f"{source}: a folder, not a dataset file; name the .csv, .jsonl, .yaml or .parquet file")
        raise FactoryError(f"{source}: dataset file not found; check the path")
    readers = {"csv": _csv, "tsv": _csv, "jsonl": _jsonl, "yaml": _yaml, "parquet": _parquet}
    fmt = fmt or detect_format(source)
    return _read_or_fail(source, readers[fmt](source, fmt, on_columns))


def _read_or_fail(path: Path, rows: Iterator[RawRow]) -> Iterator[RawRow]:
    """`rows`, with a read that fails midway (a disk error, a file that cannot be read) said as a FactoryError."""
    try:
        yield from rows
    except OSError as exc:
        raise FactoryError(f"{path}: cannot read the dataset ({exc.strerror or exc}); check the file") from None


def count_rows(source: Path | Iterable[Any], fmt: str | None) -> int | None:
    """About how many rows `source` holds, cheaply, for a progress bar; None when unknown.

    CSV and JSONL count line breaks (a quoted cell spanning lines counts twice); Parquet reads its
    footer; YAML is not counted.
    """
    if not isinstance(source, Path):
        return len(source) if isinstance(source, Sized) else None
    fmt = fmt or detect_format(source)
    if fmt == "parquet":
        try:
            import pyarrow.parquet as pq

            return int(pq.ParquetFile(source).metadata.num_rows)
        except Exception:
            return None
    if fmt not in ("csv", "tsv", "jsonl"):
        return None
    lines = 0
    last = b"\n"
    try:
        with source.open("rb") as file:
            while chunk := file.read(1 << 20):
                lines += chunk.count(b"\n")
                last = chunk[-1:]
    except OSError:  # reading the rows says what is wrong with the file
        return None
    lines += last != b"\n"
    return max(lines - (fmt != "jsonl"), 0)


def _iterable(rows: Iterable[Mapping[str, Any]]) -> Iterator[RawRow]:
    for number, item in enumerate(rows, start=1):
        if isinstance(item, Mapping):
            yield RawRow(number, None, item)
        else:
            yield RawRow(
                number, None, None, f"expected a mapping of column to value, got {type(item).__name__}"
            )


def _csv(path: Path, fmt: str, on_columns: Callable[[list[str]], None] | None) -> Iterator[RawRow]:
    delimiter = "\t" if fmt == "tsv" else ","
    try:
        with path.open(newline="", encoding="utf-8-sig") as file:
            # strict: a quote opened and never closed is an error where its row starts, not a cell
            # that silently takes in every line after it (and `"a"b` is an error, not the text ab)
            reader = csv.reader(file, delimiter=delimiter, strict=True)
            cells: list[str] = []
            try:
                while not cells:  # blank lines before the header are not the header
                    first = reader.line_num + 1
                    cells = next(reader)
                header = [cell.strip() for cell in cells]
            except StopIteration:
                raise FactoryError(
                    f"{path}: the file is empty; a CSV dataset starts with a header row"
                ) from None
            except csv.Error as exc:
                raise FactoryError(
                    f"{path}:{first}: the header row cannot be read: {_csv_problem(exc)}"
                ) from None
            _check_header(path, header, reader.line_num)
            if on_columns is not None:
                on_columns(header)
            width = len(header)
            number = 0
            end = reader.line_num
            while True:
                start = end + 1
                try:
                    cells = next(reader)
                except StopIteration:
                    return
                except csv.Error as exc:
                    number += 1
                    end = reader.line_num
                    yield RawRow(number, start, None, f"the row cannot be read as CSV: {_csv_problem(exc, start, end)}")
                    continue
                end = reader.line_num
                if not cells:  # a blank line is not a row
                    continue
                number += 1
                if len(cells) != width:
                    yield RawRow(number, start, None, _width_problem(header, cells, delimiter))
                    continue
                yield RawRow(number, start, dict(zip(header, cells, strict=True)))
    except UnicodeDecodeError as exc:
        raise FactoryError(
            f"{path}: not UTF-8 text (byte {exc.start} of a chunk); save the file as UTF-8"
        ) from None


def _width_problem(header: list[str], cells: list[str], delimiter: str = ",") -> str:
    """Why a row's cells do not fit the header, naming the columns left without a value."""
    have = f"{len(cells)} cell{'s' if len(cells) != 1 else ''}"
    separator = "a tab" if delimiter == "\t" else "a comma"
    if len(cells) < len(header):
        missing = header[len(cells) :]
        return (
            f"has {have} but the header has {len(header)}: no value for {', '.join(map(repr, missing))}; "
            f"add the missing cells (an empty one is {separator}), or check the quoting"
        )
    extra = len(cells) - len(header)
    return (
        f"has {have} but the header has {len(header)}: {extra} cell{'s' if extra != 1 else ''} after the last "
        f"column, {header[-1]!r}; remove them, or quote a cell that holds {separator}"
    )


def _csv_problem(exc: csv.Error, start: int | None = None, end: int | None = None) -> str:
    """What the csv module's error means, and what to do about it."""
    text = str(exc)
    if "unexpected end of data" in text:
        span = f" (lines {start}-{end} were read into it)" if start and end and end > start else ""
        return f"a quoted cell is never closed{span}; add the closing quote, or double a quote inside a cell (\"\")"
    if "expected after" in text:
        return (
            f"{text}: a quoted cell ends at its closing quote; quote the whole cell, doubling any quote inside it "
            '("")'
        )
    if "field larger than field limit" in text:
        return (
            f"a cell is longer than {csv.field_size_limit():,} characters, the most a CSV cell may hold here; "
            "check for a quote left open, or write such rows as JSON lines (.jsonl)"
        )
    return text


def _check_header(path: Path, header: list[str], line: int = 1) -> None:
    seen: set[str] = set()
    for index, name in enumerate(header, start=1):
        if not name:
            raise FactoryError(f"{path}:{line}: header cell {index} is empty; name every column")
        if name in seen:
            raise FactoryError(f"{path}:{line}: column {name!r} appears twice in the header; rename one")
        seen.add(name)


def _jsonl(path: Path, fmt: str, on_columns: Callable[[list[str]], None] | None) -> Iterator[RawRow]:
    number = 0
    with path.open("rb") as file:
        for line, raw in enumerate(file, start=1):
            row = jsonl_row(raw, line, number + 1)
            if row is not None:
                number += 1
                yield row


def jsonl_blank(raw: bytes, line: int) -> bool:
    """Whether a JSON-lines file's line `line` (its bytes, as split at b"\\n") is blank: no row."""
    try:
        return not raw.decode("utf-8-sig" if line == 1 else "utf-8").strip()
    except UnicodeDecodeError:
        return not raw.strip()


def jsonl_row(raw: bytes, line: int, number: int) -> RawRow | None:
    """Line `line` of a JSON-lines file (its bytes, as split at b"\\n") as row `number`; None: a
    blank line, which is no row. What the Ray engine's workers read each line with too."""
    try:
        text = raw.decode("utf-8-sig" if line == 1 else "utf-8")
    except UnicodeDecodeError:
        if raw.strip():
            return RawRow(number, line, None, "not UTF-8 text; save the file as UTF-8")
        return None
    if not text.strip():
        return None
    try:
        data = load_json(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey as exc:  # read as whichever came last, one of the two values was dropped unseen
        return RawRow(number, line, None, f"duplicate key {exc.key!r}; keep one of them")
    except ValueError as exc:
        reason = getattr(exc, "msg", str(exc))
        column = getattr(exc, "colno", None)
        return RawRow(number, line, None, f"invalid JSON: {reason}" + (f" at column {column}" if column else ""))
    if not isinstance(data, dict):
        return RawRow(number, line, None, f"expected a JSON object, got {_json_kind(data)}")
    problem = _unreadable(data)
    if problem is not None:
        return RawRow(number, line, None, problem)
    return RawRow(number, line, data)


class _DuplicateKey(ValueError):
    """A JSON object names one key twice: as YAML datasets and CSV headers, refused."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return data


def _unreadable(data: Mapping[str, Any]) -> str | None:
    """Why a row read from JSON or YAML cannot become a persona whatever the mapping says, or None."""
    if nested_over(data, MAX_JSON_DEPTH + 1):  # the row itself is one level
        return f"nested over {MAX_JSON_DEPTH} levels deep; flatten the structure"
    surrogate = lone_surrogate(data)
    if surrogate is None:
        return None
    path, code = surrogate
    where = f"column {path[0]!r}" if path else "the row"
    return f"{where} holds {code}, {SURROGATE_PROBLEM}"


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return type(value).__name__


class _RowLoader(yaml.SafeLoader):
    """Composes one sequence item at a time; aliases are refused, since rows stand alone."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "aliases are not allowed in a dataset; repeat the value", event.start_mark
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        keys = set()
        for key_node, _ in node.value:
            key = getattr(key_node, "value", None)
            if key in keys:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}; keep one of them", key_node.start_mark
                )
            keys.add(key)
        return super().construct_mapping(node, deep=deep)


def _yaml(path: Path, fmt: str, on_columns: Callable[[list[str]], None] | None) -> Iterator[RawRow]:
    # the pure-Python loader reads the file in small chunks, so a long list is never held whole
    with path.open("rb") as file:
        loader = _RowLoader(file)
        try:
            yield from _yaml_items(path, loader)
        except yaml.MarkedYAMLError as exc:
            from ..safe_yaml import describe_yaml_error

            problem, line, _ = describe_yaml_error(exc)
            where = f"{path}:{line}" if line else str(path)
            raise FactoryError(f"{where}: invalid YAML: {problem}") from None
        except yaml.YAMLError as exc:
            raise FactoryError(f"{path}: invalid YAML: {exc}") from None
        except RecursionError:  # the composer recurses once per level; the rest of the file cannot be read
            line = loader.line + 1 if hasattr(loader, "line") else None
            where = f"{path}:{line}" if line else str(path)
            raise FactoryError(f"{where}: a row is nested too deeply to read; flatten it") from None
        finally:
            loader.dispose()


def _yaml_items(path: Path, loader: _RowLoader) -> Iterator[RawRow]:
    loader.get_event()  # stream start
    if loader.check_event(yaml.StreamEndEvent):
        return
    loader.get_event()  # document start
    if not loader.check_event(yaml.SequenceStartEvent):
        raise FactoryError(f"{path}: a YAML dataset must be a list of mappings (- name: …), one per row")
    loader.get_event()
    number = 0
    while not loader.check_event(yaml.SequenceEndEvent):
        node = loader.compose_node(None, None)
        number += 1
        line = node.start_mark.line + 1
        if not isinstance(node, yaml.MappingNode):
            yield RawRow(number, line, None, "expected a mapping of column to value")
            continue
        data = loader.construct_document(node)
        bad = [key for key in data if not isinstance(key, str)]
        if bad:
            yield RawRow(number, line, None, f"key {bad[0]!r} is not text; quote it")
            continue
        problem = _unreadable(data)
        if problem is not None:
            yield RawRow(number, line, None, problem)
            continue
        yield RawRow(number, line, data)
    loader.get_event()  # sequence end
    loader.get_event()  # document end
    if not loader.check_event(yaml.StreamEndEvent):
        raise FactoryError(f"{path}: holds several YAML documents; a dataset is one list of rows")


def _parquet(path: Path, fmt: str, on_columns: Callable[[list[str]], None] | None) -> Iterator[RawRow]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise FactoryError(
            f"{path}: reading Parquet needs pyarrow; install it with: pip install 'agent-profiles[parquet]'"
        ) from None
    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:
        raise FactoryError(f"{path}: not a readable Parquet file ({type(exc).__name__}: {exc})") from None
    if on_columns is not None:
        on_columns(list(parquet.schema_arrow.names))
    number = 0
    for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS):
        for data in batch.to_pylist():
            number += 1
            yield RawRow(number, None, data)
