"""`profiles batch --engine ray`: the same batch past one machine, on a Ray cluster.

Ray Data reads the dataset (`read_csv`, `read_parquet`, and JSON lines as the bytes of each line,
parsed by the local reader's code) in parallel across the cluster; `map_batches` runs, in worker
processes that each set up once, the function the local engine runs per row (row → persona →
prompts → its JSON line, `batch._RowMaker`); the driver takes the blocks back in input order and
writes one shard per block into the output folder:
`OUT/part-00000.jsonl`, `part-00001.jsonl` … (`part-00000.parquet` … when OUT ends in
`.parquet`, a folder Parquet readers open as one table). Read in order, the shards hold exactly
the bytes the local engine writes, the same ids, and the same bad rows (`--on-error`), listed in
`OUT/errors.jsonl` with `collect`.

What differs: Ray's CSV and Parquet readers do not say which file line a row started on, so a bad
row's issue names its row number without a line (CSV cells are read as text, as locally); a run is
not resumable (its shards are rewritten with `--force`). The `ray` extra installs Ray; nothing
here is imported otherwise.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .atomic import write_atomic
from .batch import SHOWN_ISSUES, BatchOptions, BatchReport, _fsync_dir, _make_folder, _RowMaker, _RowSpec
from .errors import BatchError, OutputError
from .jsonlines import dumps_line

__all__ = ["RAY_BATCH_ROWS", "run_batch_ray"]

#: Rows per batch a Ray actor makes at a time; each becomes one shard of the output.
RAY_BATCH_ROWS = 1000

#: The column Ray numbers the rows in; a dataset's own column of that name would be refused.
_ROW = "__profiles_row__"
#: The columns a JSON-lines file is read into: each line's number in the file, and its bytes.
_LINE, _TEXT = "__profiles_line__", "__profiles_text__"
#: Lines of a JSON-lines file per block Ray reads; a block at a time is in memory.
JSONL_BLOCK_LINES = 10_000


def run_batch_ray(
    options: BatchOptions,
    *,
    address: str | None = None,
    progress: Callable[[int, int | None], None] | None = None,
) -> BatchReport:
    """Run one batch on Ray (started here, or the one `address` names, or the one already
    initialised in this process) and write its shards to the folder `options.out`.

    Raises:
        BatchError: Ray is not installed, the options cannot be used with it, or the output exists
            without `force`.
        DatasetRowError: a bad row with `on_error="raise"`; the shards before it are written.
        ConfigError, FactoryError: the dataset, mapping or base persona cannot be read.
    """
    from .factories._rows import detect_format
    from .factories.dataset import DatasetProfileFactory, DatasetRowError, RowIssue

    ray, data = _import_ray()
    out = options.out
    _check(options)
    fmt = detect_format(options.source, options.format)
    if fmt == "yaml":
        raise BatchError("the Ray engine reads CSV, TSV, JSON lines and Parquet; convert the YAML dataset first")
    factory = DatasetProfileFactory(options.source, options.mapping, base=options.base, format=fmt, on_error="skip")
    parquet = out.suffix == ".parquet"
    _prepare_folder(out, options.force)
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False, include_dashboard=False)
    logging.getLogger("ray.data").setLevel(logging.WARNING)  # its per-run notes are not the batch's output
    context = data.DataContext.get_current()
    context.execution_options.preserve_order = True  # the shards come back in input order
    context.enable_progress_bars = False
    with _ray_errors(ray):
        dataset = _read(data, factory, fmt)
        total = dataset.count()
    report = BatchReport(out=out, errors_file=out / "errors.jsonl" if options.on_error == "collect" else None)
    if total == 0:  # no rows (Ray then has no schema to tell the columns by): no shards, as locally no lines
        if progress is not None:
            progress(0, 0)
        report.complete = True
        return report
    numbers = data.range(total).map_batches(
        lambda batch: {_ROW: batch["id"] + 1}, batch_format="numpy", zero_copy_batch=True
    )
    spec = _RowSpec(
        options.source, options.mapping, options.base, fmt, options.render, options.question,
        options.deployment, options.language, options.model, None, encode=True,
    )  # fmt: skip
    extra = {"concurrency": options.workers} if options.workers > 1 else {}
    with warnings.catch_warnings():
        # zip is what numbers rows in file order; order is kept (preserve_order above), which is
        # what Ray's deprecation notice asks for
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*zip.*")
        zipped = dataset.zip(numbers)
    made = zipped.map_batches(
        _make_rows,
        fn_kwargs={"spec": spec, "columns": list(factory_columns(dataset)), "parquet": parquet},
        batch_size=RAY_BATCH_ROWS,
        batch_format="pyarrow",
        **extra,
    )
    if progress is not None:
        progress(0, total)
    errors: list[bytes] = []
    for index, batch in enumerate(_batches(ray, made)):
        columns = batch.to_pydict()
        good: list[int] = []
        for position, row in enumerate(columns["row"]):
            report.rows_done = row
            if not columns["issues"][position]:
                good.append(position)
                continue
            issues = [RowIssue(**item) for item in json.loads(columns["issues"][position])]
            if options.on_error == "raise":
                _write_shard(out, index, columns, good, parquet)
                report.written += len(good)
                raise DatasetRowError(issues)
            report.failed += 1
            if options.on_error == "collect":
                errors.extend(dumps_line(issue.as_dict()) for issue in issues)
                room = SHOWN_ISSUES - len(report.issues)
                if room > 0:
                    report.issues.extend(issues[:room])
        _write_shard(out, index, columns, good, parquet)
        report.written += len(good)
        if progress is not None:
            progress(report.rows_done, total)
    if errors:
        path = out / "errors.jsonl"
        try:
            write_atomic(path, b"".join(errors), sync=True)
        except OSError as exc:
            raise OutputError(str(path), exc, kept="the shards before it are written") from None
    _fsync_dir(out)
    report.complete = True
    return report


def _batches(ray: Any, made: Any) -> Any:
    """The made batches in order; a failure inside Ray (its reader refusing a malformed file, say)
    is a BatchError naming Ray's reason, not a traceback."""
    batches = iter(made.iter_batches(batch_size=None, batch_format="pyarrow"))
    while True:
        with _ray_errors(ray):
            try:
                batch = next(batches)
            except StopIteration:
                return
        yield batch


@contextmanager
def _ray_errors(ray: Any) -> Iterator[None]:
    """A failure inside Ray (its reader refusing a malformed file: a CSV row of the wrong width, a
    quote never closed) as a BatchError naming Ray's reason, wherever Ray runs the work: counting
    the rows reads the whole dataset, before any batch is made."""
    try:
        yield
    except ray.exceptions.RayError as exc:
        # what the task raised comes first in its cause (Ray's notes on retrying follow it); without
        # one, the last line of the report
        cause = getattr(exc, "cause", None)
        lines = str(cause).strip().splitlines() if cause is not None else []
        reason = lines[0] if lines else next(
            (line for line in reversed(str(exc).strip().splitlines()) if line.strip()), type(exc).__name__
        )
        raise BatchError(
            f"Ray could not make the batch: {reason[:300]}; the local engine (without --engine ray) reports "
            "a malformed row by its number and line"
        ) from None


def _import_ray() -> tuple[Any, Any]:
    try:
        import ray
        import ray.data
    except ImportError:
        raise BatchError(
            "--engine ray needs Ray; install it with `pip install 'agent-profiles[ray]'`, or leave --engine out"
        ) from None
    return ray, ray.data


def _check(options: BatchOptions) -> None:
    if options.resume:
        raise BatchError(
            "the Ray engine does not resume: its shards are written anew; run it again with --force, or use the "
            "local engine (without --engine ray), which resumes from its checkpoint"
        )
    if options.shard is not None:
        raise BatchError("--shard splits a batch over processes you start; with --engine ray, Ray splits it")
    if str(options.out) == "-" or options.out.suffix == ".jsonl":
        raise BatchError(
            f"--out {options.out}: the Ray engine writes shards into a folder; name a folder (JSON-lines shards) "
            "or a folder ending in .parquet (Parquet shards)"
        )


def _prepare_folder(out: Path, force: bool) -> None:
    try:
        if out.exists() and not out.is_dir():
            raise BatchError(f"--out {out} is a file; the Ray engine writes shards into a folder")
        if out.is_dir() and any(out.iterdir()):
            if not force:
                raise BatchError(f"{out} already exists; pass --force to replace its shards, or another --out")
            for old in out.iterdir():
                if old.is_file() and (old.name.startswith("part-") or old.name == "errors.jsonl"):
                    old.unlink()
        _make_folder(out)
    except OSError as exc:
        raise OutputError(str(out), exc, kept="Nothing was written; fix that and run the same command again") from None


def factory_columns(dataset: Any) -> tuple[str, ...]:
    """The dataset's columns as Ray read them."""
    return tuple(dataset.schema().names)


def _read(data: Any, factory: Any, fmt: str) -> Any:
    """The dataset through Ray's reader, CSV cells as text (as the local reader has them)."""
    path = str(factory.source)
    if fmt in ("csv", "tsv"):
        import pyarrow.csv as pacsv

        raw, header = _csv_header(factory.source, fmt)
        import pyarrow as pa

        dataset = data.read_csv(
            path,
            parse_options=pacsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ",", newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                column_types={name: pa.string() for name in raw},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
        if raw != header:  # the local reader strips the names (` name ` is the column name)
            dataset = dataset.rename_columns(dict(zip(raw, header, strict=True)))
    elif fmt == "jsonl":
        # each line's bytes, parsed where its row is made by the local reader's own code: Ray's
        # read_json goes through pandas, which turned the text "0123" into 123, a 5 in a column with
        # a gap into 5.0, a date into a timestamp, and a key a row lacks into NaN
        return data.read_datasource(_json_lines_source(path))
    else:
        dataset = data.read_parquet(path)
    schema = dataset.schema()  # None when there are no rows (a CSV file of a header alone)
    columns = list(schema.names) if schema is not None else header if fmt in ("csv", "tsv") else []
    if _ROW in columns:
        raise BatchError(f"{path}: a column is named {_ROW!r}, which the Ray engine numbers rows in; rename it")
    factory._check_columns(columns)
    return dataset


def _csv_header(path: Path, fmt: str) -> tuple[list[str], list[str]]:
    """The CSV file's header as written and as the local reader names the columns, read and checked
    as it does (past blank lines; a column without a name or named twice is refused)."""
    import csv

    from .factories._rows import read_rows

    header: list[str] = []
    rows = read_rows(path, fmt, header.extend)
    try:
        next(rows, None)  # the header and at most its first row
    finally:
        rows.close()  # type: ignore[attr-defined]
    with path.open(newline="", encoding="utf-8-sig") as file:
        cells = csv.reader(file, delimiter="\t" if fmt == "tsv" else ",")
        raw = next((row for row in cells if row), [])  # the names as written, which Ray's reader keeps
    return raw, header


_JSON_LINES_SOURCE: Any = None


def _json_lines_source(path: str) -> Any:
    """A Ray datasource of a JSON-lines file's lines as the local reader splits them (at b"\\n"
    only), blank ones left out, in blocks of `JSONL_BLOCK_LINES`: columns `_LINE` and `_TEXT`."""
    global _JSON_LINES_SOURCE
    if _JSON_LINES_SOURCE is None:
        from ray.data.datasource import FileBasedDatasource

        class JsonLinesSource(FileBasedDatasource):  # type: ignore[misc]
            def _read_stream(self, f: Any, path: str) -> Any:
                import pyarrow as pa

                from .factories._rows import jsonl_blank

                def block(numbers: list[int], texts: list[bytes]) -> Any:
                    return pa.table({_LINE: pa.array(numbers, pa.int64()), _TEXT: pa.array(texts, pa.binary())})

                numbers: list[int] = []
                texts: list[bytes] = []
                line, rest, sent = 0, b"", False
                while True:
                    chunk = f.read(1 << 20)
                    parts = (rest + chunk).split(b"\n")
                    rest = parts.pop() if chunk else b""
                    for raw in parts:
                        line += 1
                        if not jsonl_blank(raw, line):
                            numbers.append(line)
                            texts.append(raw)
                    if len(numbers) >= JSONL_BLOCK_LINES or (not chunk and (numbers or not sent)):
                        yield block(numbers, texts)  # an empty file still gives the columns
                        numbers, texts, sent = [], [], True
                    if not chunk:
                        return

        _JSON_LINES_SOURCE = JsonLinesSource
    return _JSON_LINES_SOURCE(path)


#: The row makers this Ray worker process has set up, by batch: Ray reuses a worker for many
#: tasks, so each sets up once (a task, unlike an actor, holds no CPU between batches, so reading
#: and numbering the rows always find one).
_MAKERS: dict[_RowSpec, _RayRows] = {}


def _make_rows(batch: Any, *, spec: _RowSpec, columns: list[str], parquet: bool) -> Any:
    maker = _MAKERS.get(spec)
    if maker is None:
        maker = _MAKERS[spec] = _RayRows(spec, columns, parquet)
    return maker(batch)


class _RayRows:
    """A Ray worker's row maker: set up once, then one pyarrow batch of rows at a time."""

    def __init__(self, spec: _RowSpec, columns: list[str], parquet: bool) -> None:
        self.maker = _RowMaker(spec)
        self.columns = [name for name in columns if name != _ROW]
        self.parquet = parquet

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        from .factories._rows import RawRow, jsonl_row

        table = batch.to_pydict()
        out: dict[str, list[Any]] = {"row": [], "issues": [], "line": [], "id": [], "persona": [], "system": [],
                                     "user": []}
        lines = table.get(_LINE)
        for position, number in enumerate(table[_ROW]):
            if lines is not None:  # a JSON-lines file's line, read as the local engine reads it
                read = jsonl_row(table[_TEXT][position], lines[position], int(number))
                raw = read if read is not None else RawRow(int(number), lines[position], {})  # blank: never sent
            else:
                raw = RawRow(int(number), None, {name: table[name][position] for name in self.columns})
            result, line = self.maker(raw)
            out["row"].append(result.row)
            out["issues"].append(dumps_line([issue.as_dict() for issue in result.issues]) if result.issues else b"")
            out["line"].append(line or b"")
            record = json.loads(line) if (line and self.parquet) else None
            out["id"].append(None if record is None or record["id"] is None else str(record["id"]))
            out["persona"].append(None if record is None else dumps_line(record["persona"])[:-1].decode("utf-8"))
            prompts = (record or {}).get("prompts") or {}
            out["system"].append(prompts.get("system"))
            out["user"].append(prompts.get("user"))
        types = {"row": pa.int64(), "issues": pa.binary(), "line": pa.binary(), "id": pa.string(),
                 "persona": pa.string(), "system": pa.string(), "user": pa.string()}
        return pa.table({name: pa.array(values, type=types[name]) for name, values in out.items()})


def _write_shard(out: Path, index: int, columns: dict[str, list[Any]], good: list[int], parquet: bool) -> None:
    """One shard: the made rows of one batch, as JSON lines or as a Parquet file."""
    if not good:
        return
    name = f"part-{index:05d}.{'parquet' if parquet else 'jsonl'}"
    path = out / name
    try:
        if parquet:
            import pyarrow as pa
            import pyarrow.parquet as pq

            names = ["id", "row", "persona"] + (["system", "user"] if columns["system"][good[0]] is not None else [])
            types = {"id": pa.string(), "row": pa.int64(), "persona": pa.string(), "system": pa.string(),
                     "user": pa.string()}
            table = pa.table({key: pa.array([columns[key][i] for i in good], type=types[key]) for key in names})
            temp = path.with_name(f".{name}.tmp")
            pq.write_table(table, temp)
            temp.replace(path)
        else:
            write_atomic(path, b"".join(columns["line"][i] for i in good))
    except OSError as exc:
        raise OutputError(str(path), exc, kept="the shards before it are written") from None
