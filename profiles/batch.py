"""`profiles batch`: turn a dataset into validated personas (and prompts), resumably, at flat memory.

Output goes one of two ways:

* `OUT` ending in `.jsonl`: one JSON object per row, `{"id", "row", "persona", "prompts"?}`.
  Whole lines are appended per chunk, flushed and fsynced; then a sidecar checkpoint
  (`OUT.checkpoint`) records how many rows are done and how long the file is, written through a
  temporary file and `os.replace`, so it is always either the old or the new checkpoint.
* `OUT` is `-`: JSON lines on standard output, written per chunk; there is nothing to resume.
* `OUT` a folder: one persona file `<id>.yaml` per row (loadable with `load_profile`), with
  `<id>.prompts.json` beside it when prompts are rendered; each written to a temporary file and
  moved into place with `os.replace`, and synced once per chunk. The checkpoint is
  `OUT/.checkpoint.json` (`OUT/.checkpoint-IofN.json` for a shard, so shards can share a folder).
  Two rows of one run with the same id (or ids giving one file name) would share a file: the
  second is a bad row, and so is a shard's row whose file another shard's id already holds.

After a crash, a kill or Ctrl-C, `resume=True` (`--resume`) cuts the output back to the length the
checkpoint recorded (dropping a torn last line and any line written after the last checkpoint),
skips the rows already done and goes on: the result has exactly the lines of an uninterrupted run.
A checkpoint is refused when the dataset (or the format it is read as), mapping, base persona, shard
or render options changed.
A run that completes removes its checkpoint: it served only to resume that run.

Output that cannot be written (a full disk, a read-only folder, a path under a file) is an
`OutputError` naming the file and the system's reason; what the last checkpoint covers stays
intact, so the same command with `--resume` continues once the output can be written.

`shard=(i, n)` (`--shard i/n`) keeps the rows whose id hashes to `i` modulo `n` (rows without an id
column go by row number); `n` runs with `0/n … n-1/n` cover every row exactly once.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .atomic import write_atomic
from .batch_rows import RowPlans
from .errors import BatchError, OutputError, ProfilesError
from .jsonlines import dumps_line

if TYPE_CHECKING:
    from .batch_rows import RowRead
    from .config import PersonaModel
    from .dynconfig import ConfigInfo
    from .factories.dataset import DatasetProfileFactory, RowIssue, RowResult
    from .profile import DefaultProfile

__all__ = [
    "BatchError",
    "BatchOptions",
    "BatchReport",
    "default_workers",
    "parse_shard",
    "persona_data",
    "row_persona_data",
    "run_batch",
]

#: Rows gathered before they are written, flushed, fsynced and checkpointed.
CHUNK_ROWS = 1000
#: Most bytes of output held before a chunk is written, whatever the row count.
CHUNK_BYTES = 1 << 20
#: Longest time between two checkpoints, in seconds, when rows are slow to make.
CHUNK_SECONDS = 1.0
#: Rows per chunk a worker process makes at a time.
WORKER_CHUNK_ROWS = 200
#: Issues a report keeps for display; all of them go to the errors file.
SHOWN_ISSUES = 20
CHECKPOINT_VERSION = 1
#: The `out` that means standard output.
STDOUT = "-"


@dataclass(frozen=True)
class BatchOptions:
    """What one batch run reads, writes and how; mirrors the `profiles batch` options."""

    source: Path
    out: Path
    mapping: Path | None = None
    base: Path | None = None
    render: bool = False
    question: str | None = None
    shard: tuple[int, int] | None = None
    resume: bool = False
    force: bool = False
    on_error: str = "raise"
    format: str | None = None
    #: The deployment (else `PROFILES_DEPLOYMENT`), language and model every profile is made for,
    #: as `create_profile(deployment=…, language=…, model=…)`: language and model win over the rows'.
    deployment: str | None = None
    language: str | None = None
    model: str | None = None
    chunk_rows: int = CHUNK_ROWS
    chunk_seconds: float = CHUNK_SECONDS
    #: Processes that make the rows: 1 makes them in this process; more read the input here once
    #: and fan chunks out to that many workers, writing their output in input order.
    workers: int = 1


@dataclass
class BatchReport:
    """What a run did: rows it handled, personas written, rows that failed, and where they went."""

    out: Path
    written: int = 0
    failed: int = 0
    #: Bad rows whose issues the errors file holds: fewer than `failed` when a run without
    #: `collect` left some out before this one resumed it.
    listed: int = 0
    rows_done: int = 0
    resumed_from: int = 0
    complete: bool = False
    already_complete: bool = False
    errors_file: Path | None = None
    issues: list[RowIssue] = field(default_factory=list)


#: The most worker processes a batch starts.
MAX_WORKERS = 1024


def default_workers() -> int:
    """Worker processes when none are asked for: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on every platform
        return max(1, os.cpu_count() or 1)


def parse_shard(text: str) -> tuple[int, int]:
    """`"1/3"` → `(1, 3)`; the index counts from 0."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match or not 0 <= int(match[1]) < int(match[2]):
        raise BatchError(f"shard {text!r} must be I/N with 0 <= I < N, e.g. 0/3, 1/3, 2/3")
    return int(match[1]), int(match[2])


def persona_data(profile: DefaultProfile, base: Any = None) -> dict[str, Any]:
    """A profile as persona data that `ProfileConfig` accepts again: its resolved values.

    `profiles batch` writes `row_persona_data` instead, which keeps what the base persona holds
    (dynamic fields, template roots, deployments) so the file renders as the batch's profile did.

    Set fields, own templates (inline), variables, tools, inputs, model settings, the output schema
    (inline), roles and the message layout are written; template folders are not, since their
    paths belong to the base persona's folder.

    A secret field is written as its dynamic definition (provider and key), never as its value; a
    secret with no definition to write is left out.
    """
    from .dynconfig import ConfigInfo
    from .fields import PROFILE_FIELDS

    data: dict[str, Any] = {}
    for name in PROFILE_FIELDS:
        item = profile.resolved[name]
        if item.value in (None, "", ()):
            continue
        if item.secret:
            info = getattr(base, name, None)
            if isinstance(info, ConfigInfo):
                data[name] = {"key": info.key, "provider": info.provider_name, "secret": True}
            continue
        data[name] = list(item.value) if isinstance(item.value, tuple) else item.value
    if profile.templates:
        data["templates"] = {kind: {"inline": source.source} for kind, source in profile.templates.items()}
    if profile.bound:
        variables = {}
        for name, value in profile.bound.items():
            item = profile.resolved_variables.get(name)
            if item is not None and item.secret and value is item.value:  # its definition, never its value
                info = (getattr(base, "variables", None) or {}).get(name)
                if isinstance(info, ConfigInfo) and info.key:
                    variables[name] = {"key": info.key, "provider": info.provider_name, "secret": True}
                continue
            variables[name] = value
        data["variables"] = variables
    tools = getattr(profile, "tools", ())
    if tools:
        data["tools"] = [
            {
                "name": tool.name,
                "description": tool.description,
                "parameters": dict(tool.parameters),
                **({"strict": tool.strict} if getattr(tool, "strict", None) is not None else {}),
            }
            for tool in tools
        ]
    if getattr(profile, "requires_resources", False):
        data["requires_resources"] = True
    if getattr(profile, "allow_secrets", ()):
        data["allow_secrets"] = sorted(profile.allow_secrets)
    if getattr(profile, "metadata", None):
        data["metadata"] = dict(profile.metadata)
    data.update(_request_data(profile, base))
    return data


def _request_data(profile: DefaultProfile, base: Any) -> dict[str, Any]:
    """What turns the profile's prompts into messages and requests, as persona data."""
    from .dynconfig import ConfigInfo
    from .messages import DEFAULT_LAYOUT

    data: dict[str, Any] = {}
    inputs = getattr(profile, "inputs", {})
    if inputs:
        data["inputs"] = {name: spec.to_dict() for name, spec in inputs.items()}
    settings: dict[str, Any] = {}
    for name, item in getattr(profile, "settings", {}).items():
        if item.secret:  # its definition, never its value
            info = getattr(getattr(base, "model_settings", None), name, None)
            if isinstance(info, ConfigInfo):
                settings[name] = {"key": info.key, "provider": info.provider_name, "secret": True}
            continue
        settings[name] = item.value
    if getattr(profile, "settings_extra", None):
        settings["extra"] = dict(profile.settings_extra)
    if settings:
        data["model_settings"] = settings
    output = getattr(profile, "output_schema", None)
    if output is not None:
        data["output_schema"] = {"schema": output.as_dict(), "name": output.name, "strict": output.strict}
        if output.description:
            data["output_schema"]["description"] = output.description
    if getattr(profile, "roles", None):
        data["roles"] = dict(profile.roles)
    layout = getattr(profile, "layout", DEFAULT_LAYOUT)
    if layout != DEFAULT_LAYOUT:
        data["messages"] = [slot.to_dict() for slot in layout]
    return data


def row_persona_data(
    result: RowResult,
    base: PersonaModel | None = None,
    *,
    language: str | None = None,
    model: str | None = None,
    roots: Mapping[Path, str] | None = None,
) -> dict[str, Any]:
    """A row's persona as file data: the base persona with the row's values in it, as `ProfileConfig` reads it.

    Loaded again (as a file in the folder `roots` were copied to), it makes the profile the batch
    made: the row's cells are written as data (braces kept literal with `{% raw %}`), dynamic fields
    of the base stay dynamic, its templates are written inline, its template roots point at their
    copies (`roots` maps each root to its copy's relative path; without it they are left out), and
    its samples, kinds, tools, inputs, model settings, output schema (written out, or still named in
    the store), roles, message layout and deployments are kept; dynamic `variables:` stay dynamic.
    A deployment's overlay loses the fields the row sets, since the row's values win over the
    overlay's as they did in the batch. `language` and `model` are the batch's own, which won over
    the row's and the base's.

    A secret field is written as its definition (key and provider), never as a value, and without
    its default, which may itself be the secret; a secret with no key to write is left out.
    """
    return PersonaWriter(base, language=language, model=model, roots=roots).data(result)


class PersonaWriter:
    """`row_persona_data` for every row of one batch: what the base persona contributes (its own
    fields and each overlay's) is worked out once, not once per row."""

    def __init__(
        self,
        base: PersonaModel | None,
        *,
        language: str | None = None,
        model: str | None = None,
        roots: Mapping[Path, str] | None = None,
    ) -> None:
        self._base = _fields(base, roots) if base is not None else {}
        self._overlays = (
            {deployment: _fields(overlay, roots) for deployment, overlay in base.deployments.items()}
            if base is not None and base.deployments
            else None
        )
        self._given = {name: value for name, value in (("language", language), ("model", model)) if value}

    def data(self, result: RowResult) -> dict[str, Any]:
        """The row's persona as file data (see `row_persona_data`); a new mapping, the base's values shared."""
        return self.data_of(result.values, result.variables)

    def data_of(self, values: Mapping[str, Any], row_variables: Mapping[str, Any]) -> dict[str, Any]:
        """`data` of a row that set these fields and variables."""
        data = dict(self._base)
        for name, value in values.items():
            data[name] = _literal(value)
        if row_variables:
            data["variables"] = {**data.get("variables", {}), **row_variables}
        given = self._given
        if given:
            data.update(given)
        if self._overlays is not None:
            won = {*values, *given}
            deployments = {}
            for deployment, fields in self._overlays.items():
                entry = {name: value for name, value in fields.items() if name not in won}
                variables = {
                    key: value for key, value in entry.get("variables", {}).items() if key not in row_variables
                }
                if variables:
                    entry["variables"] = variables
                else:
                    entry.pop("variables", None)
                deployments[deployment] = entry
            data["deployments"] = deployments
        return data


def _fields(part: Any, roots: Mapping[Path, str] | None) -> dict[str, Any]:
    """The fields a persona (or one overlay) sets itself, as persona file data."""
    from .dynconfig import ConfigInfo
    from .fields import PROFILE_FIELDS

    data: dict[str, Any] = {}
    for name in type(part).model_fields:
        if name not in part.model_fields_set or name in ("factory", "deployments"):
            continue
        value = getattr(part, name)
        if name in PROFILE_FIELDS:
            dumped = _dynamic(value) if isinstance(value, ConfigInfo) else _plain(value)
            if dumped is not None:
                data[name] = dumped
        elif name == "templates":
            data[name] = {
                kind: {"store": source.store_key} if source.store_key else {"inline": source.source}
                for kind, source in value.items()
            }
        elif name == "tools":
            data[name] = [
                {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": dict(tool.parameters),
                    **({"strict": tool.strict} if getattr(tool, "strict", None) is not None else {}),
                }
                for tool in value
            ]
        elif name == "template_roots":
            if roots is not None and value:
                data[name] = [roots[root] for root in value]
        elif name == "variables":
            # a dynamic entry stays dynamic; a secret one without a key is left out, as for fields
            entries = {
                key: _dynamic(item) if isinstance(item, ConfigInfo) else _plain(item) for key, item in value.items()
            }
            data[name] = {key: item for key, item in entries.items() if item is not None}
        elif name in _REQUEST_FIELDS:
            dumped = _REQUEST_FIELDS[name](value)
            if dumped is not None:
                data[name] = dumped
        else:
            data[name] = _plain(value)
    return data


def _settings_data(settings: Any) -> dict[str, Any] | None:
    """`model_settings:` as file data: literal values, dynamic ones as their definitions, and `extra`."""
    from .dynconfig import ConfigInfo

    data = {}
    for name, value in settings.settings().items():
        dumped = _dynamic(value) if isinstance(value, ConfigInfo) else _plain(value)
        if dumped is not None:
            data[name] = dumped
    if settings.extra:
        data["extra"] = _plain(settings.extra)
    return data or None


def _output_schema_data(output: Any) -> dict[str, Any] | None:
    """`output_schema:` as file data: written out (a file's copy included), or still named in the store."""
    if output is None:
        return None
    data: dict[str, Any] = {"store": output.store_key} if output.store_key else {"schema": output.as_dict()}
    data.update(name=output.name, strict=output.strict)
    if output.description:
        data["description"] = output.description
    return data


#: How the fields that turn prompts into messages and requests are written back as file data.
_REQUEST_FIELDS: dict[str, Callable[[Any], Any]] = {
    "model_settings": _settings_data,
    "output_schema": _output_schema_data,
    "inputs": lambda inputs: {name: spec.to_dict() for name, spec in inputs.items()} or None,
    "roles": lambda roles: dict(roles) or None,
    "messages": lambda layout: [slot.to_dict() for slot in layout] if layout else None,
}


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _dynamic(info: ConfigInfo) -> dict[str, Any] | None:
    """A dynamic field as persona file data: the keys that differ from `DynConfig`'s defaults."""
    from .dynconfig import DEFAULT_SEPARATOR

    if info.secret:
        if not info.key:
            return None
        data: dict[str, Any] = {"key": info.key, "provider": info.provider_name, "secret": True}
    else:
        data = {"default": _plain(info.default)} if info.default is not None else {}
        for name in ("key", "provider", "description", "category"):
            if getattr(info, name):
                data[name] = getattr(info, name)
    if info.is_list:
        data["is_list"] = True
        if info.separator != DEFAULT_SEPARATOR:
            data["separator"] = info.separator
    return data


#: An `endraw` tag, in any of the spellings Jinja accepts.
_ENDRAW = re.compile(r"\{%[-+]?\s*endraw\s*[-+]?%\}")


def _literal(value: Any) -> Any:
    """A dataset cell as persona file data that renders as the cell: braces kept with `{% raw %}`."""
    if type(value) is str and "{" not in value:  # most cells: nothing to keep literal (see has_template_syntax)
        return value
    from .rendering.renderer import has_template_syntax

    if isinstance(value, (list, tuple)):
        return [_literal(item) for item in value]
    if not isinstance(value, str) or not has_template_syntax(value):
        return value
    # an endraw inside the text would end the raw block: print it through an expression instead
    body = _ENDRAW.sub(lambda match: "{% endraw %}{{ " + repr(match.group(0)) + " }}{% raw %}", value)
    return "{% raw %}" + body + "{% endraw %}"


def run_batch(options: BatchOptions, progress: Callable[[int, int | None], None] | None = None) -> BatchReport:
    """Run one batch; `progress(rows_done, total_rows)` is called as rows go by.

    Raises:
        BatchError: the output exists without `resume`/`force`, or its checkpoint does not match.
        DatasetRowError: a bad row, with `on_error="raise"`; the rows before it are written and
            checkpointed. Fixing the row changes the dataset, which a checkpoint refuses (rows
            already written might no longer match), so the fixed dataset is run with `force`.
            A run stopped before its first row removes the checkpoint and empty output it made.
        ConfigError, FactoryError: the dataset, mapping or base persona cannot be read.
    """
    from .factories.dataset import DatasetProfileFactory

    if options.on_error not in ("raise", "skip", "collect"):
        raise BatchError(f"on_error must be raise, skip or collect, got {options.on_error!r}")
    if isinstance(options.workers, bool) or not isinstance(options.workers, int) or options.workers < 1:
        raise BatchError(f"workers must be a whole number from 1, got {options.workers!r}")
    if options.workers > MAX_WORKERS:  # each is a process; the pool cannot even be built for 10**23
        raise BatchError(
            f"workers must be at most {MAX_WORKERS:,} processes, got {options.workers:,}; "
            f"this machine has {default_workers()} core(s)"
        )
    factory = DatasetProfileFactory(
        options.source, options.mapping, base=options.base, format=options.format, on_error="skip"
    )
    sink: _Sink
    if str(options.out) == STDOUT:
        sink = _StdoutSink(options)
    else:
        sinks = {"jsonl": _JsonlSink, "parquet": _ParquetSink, "folder": _FolderSink}
        sink = sinks[_out_kind(options.out)](options)
    _refuse_overwriting_inputs(options, sink)
    report = BatchReport(out=options.out, errors_file=sink.errors_path if options.on_error == "collect" else None)
    state = sink.open(_fingerprint(options, factory))
    if state.get("complete"):
        report.already_complete = report.complete = True
        report.rows_done, report.written, report.failed = (
            state["rows_done"],
            state["written"],
            state["failed"],
        )
        report.listed = state.get("listed", report.failed)
        return report
    report.resumed_from = report.rows_done = state["rows_done"]
    report.written, report.failed = state["written"], state["failed"]
    report.listed = state.get("listed", report.failed)
    try:
        return _run_rows(options, factory, sink, report, progress)
    except BaseException:
        # a run stopped before any row was recorded (a dataset without the mapped columns, a bad
        # first row, Ctrl-C at once) leaves nothing behind, so running it again needs no --force
        sink.close()
        if report.rows_done == 0:  # no row read past, in this run or before it
            sink.discard_if_untouched()
        raise


def _run_rows(
    options: BatchOptions,
    factory: DatasetProfileFactory,
    sink: _Sink,
    report: BatchReport,
    progress: Callable[[int, int | None], None] | None,
) -> BatchReport:
    """The rows of a batch whose output is open, from its checkpoint on."""
    roots = sink.place_roots(factory.base.template_roots if factory.base is not None else ())
    spec = _RowSpec(
        options.source, options.mapping, options.base, options.format, options.render, options.question,
        options.deployment, options.language, options.model, roots, encode=sink.encodes,
    )  # fmt: skip
    total = factory.estimate_rows() if progress is not None else None
    if progress is not None:
        progress(report.rows_done, total)
    last_commit = time.monotonic()
    rows = factory.iter_raw(start=report.rows_done, shard=options.shard)
    # each row's outcome as plain data: (row, line, id, issues, payload); a bad row has issues
    outcomes: Iterator[tuple[Any, ...]]
    broken: tuple[type[BaseException], ...] = ()
    if options.workers > 1:
        from .fanout import BrokenProcessPool, ordered_map

        broken = (BrokenProcessPool,)
        # the rows are read here, once; workers make them, and their outcomes come back in order
        done = ordered_map(_worker, (spec,), _chunks(rows, WORKER_CHUNK_ROWS), options.workers)
        outcomes = (outcome for chunk in done for outcome in chunk)
    else:
        maker = _RowMaker(spec, factory)
        outcomes = (maker.outcome(raw) for raw in rows)
    from .factories.dataset import RowResult

    lines = sink.encodes  # a JSON line needs nothing of its row's result to be written
    try:
        try:
            for row, line, profile_id, issues, payload in outcomes:
                if issues:
                    _bad_row(options, sink, report, RowResult(row, line, profile_id, None, issues))
                elif lines:
                    sink.add_line(payload)
                    report.written += 1
                else:
                    try:
                        sink.add(RowResult(row, line, profile_id, None), payload)
                        report.written += 1
                    except _RowFailure as failure:
                        _bad_row(options, sink, report, failure.result)
                report.rows_done = row
                if progress is not None:
                    progress(row, total)
                if (
                    sink.pending >= options.chunk_rows
                    or sink.pending_bytes >= CHUNK_BYTES
                    or time.monotonic() - last_commit >= options.chunk_seconds
                ):
                    sink.commit(report)
                    last_commit = time.monotonic()
        except broken:
            sink.commit(report)  # every row handed back so far is written: keep it
            raise BatchError(
                f"a worker process stopped unexpectedly (killed, or out of memory) after row {report.rows_done}. "
                f"{sink._kept()}"
            ) from None
        report.complete = True
        sink.commit(report)
        sink.finish()
    finally:
        close = getattr(outcomes, "close", None)
        if close is not None:
            close()  # stop the workers before the output closes
        sink.close()
    if progress is not None:
        progress(report.rows_done, report.rows_done)
    return report


# -- rows -----------------------------------------------------------------------------------------
class _RowFailure(Exception):
    """A row whose profile was made but whose prompts or output failed."""

    def __init__(self, result: RowResult) -> None:
        self.result = result


def _record(result: RowResult, spec: _RowSpec, factory: DatasetProfileFactory, writer: PersonaWriter) -> dict[str, Any]:
    from dataclasses import replace

    from .factories.dataset import RowIssue

    profile: Any = result.profile
    record: dict[str, Any] = {"id": result.profile_id, "row": result.row, "persona": writer.data(result)}
    if spec.render:
        try:
            record["prompts"] = {
                "system": profile.format_system_prompt(spec.question),
                "user": profile.format_user_prompt(spec.question),
            }
        except ProfilesError as exc:
            issue = RowIssue(result.row, exc.message, factory.label, result.line)
            raise _RowFailure(replace(result, profile=None, issues=(issue,))) from None
    return record


@dataclass(frozen=True)
class _RowSpec:
    """How one batch turns a row into output, as plain data: what a worker process starts from."""

    source: Path
    mapping: Path | None
    base: Path | None
    format: str | None
    render: bool
    question: str | None
    deployment: str | None
    language: str | None
    model: str | None
    #: Where the base persona's template roots were copied, for the written personas.
    roots: Mapping[Path, str] | None
    #: True: hand back each record as its JSON line (the sink writes bytes); False: the record.
    encode: bool


class _RowMaker:
    """The row → persona → prompts → output function every engine runs, made once per process.

    Each row comes back as `(result, payload)`: the result without its profile (its row, line, id
    and issues; a bad row has issues and no payload) and the record, or its JSON line.
    """

    def __init__(self, spec: _RowSpec, factory: DatasetProfileFactory | None = None, *, plans: bool = True) -> None:
        from .context import Context
        from .factories.dataset import DatasetProfileFactory

        if factory is None:
            factory = DatasetProfileFactory(
                spec.source, spec.mapping, base=spec.base, format=spec.format, on_error="skip"
            )
        self.spec = spec
        self.factory = factory
        self.run = factory.settings(Context(language=spec.language, model=spec.model, deployment=spec.deployment))
        self.writer = PersonaWriter(factory.base, language=spec.language, model=spec.model, roots=spec.roots)
        # rows of one shape share a plan: made without a profile each (see profiles.batch_rows)
        # (`plans=False` makes every row the general way, which the plans are tested against)
        self.plans: RowPlans | None = None
        if plans and RowPlans.applies(self.run.base):
            self.plans = RowPlans(factory, self.run.base, spec.question, spec.render)

    def __call__(self, raw: Any) -> tuple[RowResult, Any]:
        plans = self.plans
        if plans is not None:
            read = plans.read(raw)
            if read is not None:
                shape = plans.shape(read)
                if shape:
                    record = plans.record(shape, raw, read, self.writer)  # type: ignore[arg-type]
                    if record is not None:
                        kept = plans.row_result(raw.row, raw.line, read.profile_id, None)
                        return kept, dumps_line(record) if self.spec.encode else record
                elif shape is None:  # the shape's first row: made the general way, and learnt from
                    return self._general(raw, read)
        return self._general(raw)

    def _general(self, raw: Any, read: RowRead | None = None) -> tuple[RowResult, Any]:
        """The row made through its own profile; with `read`, its shape is learnt from that profile."""
        from .factories.dataset import RowResult

        result = self.factory.make(raw, run=self.run)
        kept = RowResult(result.row, result.line, result.profile_id, None, result.issues)
        if result.issues:
            if read is not None and self.plans is not None:
                self.plans.learn(raw, read, None, None, self.writer)
            return kept, None
        try:
            record = _record(result, self.spec, self.factory, self.writer)
        except _RowFailure as failure:
            if read is not None and self.plans is not None:
                self.plans.learn(raw, read, None, None, self.writer)
            return failure.result, None
        encoded: bytes | None = None
        if self.spec.encode:
            encoded = dumps_line(record)
        elif read is not None:
            try:  # only to compare with the plan's record: a file output may hold what JSON cannot
                encoded = dumps_line(record)
            except ValueError:  # a lone surrogate (UnicodeEncodeError) or a record that refers to itself
                encoded = None
        if read is not None and self.plans is not None:
            self.plans.learn(raw, read, result.profile, encoded, self.writer)  # type: ignore[arg-type]
        return kept, encoded if self.spec.encode else record

    def outcome(self, raw: Any) -> tuple[Any, ...]:
        """The row's outcome as the batch loop takes it: `(row, line, id, issues, payload)`."""
        result, payload = self(raw)
        return result.row, result.line, result.profile_id, result.issues, payload

    def chunk(self, raws: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """A worker's chunk: read rows in and outcomes out as plain tuples (see `_chunks`)."""
        from .factories._rows import RawRow

        return [self.outcome(RawRow(*fields)) for fields in raws]


def _worker(spec: _RowSpec) -> Callable[[list[tuple[Any, ...]]], list[tuple[Any, ...]]]:
    """A worker process's work: chunks of read rows in, their outcomes out (see `profiles.fanout`)."""
    return _RowMaker(spec).chunk


def _chunks(rows: Iterator[Any], size: int) -> Iterator[list[tuple[Any, ...]]]:
    """Read rows in chunks for the workers, each row as a plain tuple: a tuple pickles about three
    times faster than the dataclass, and every row crosses to a worker and its outcome back."""
    chunk: list[tuple[Any, ...]] = []
    for row in rows:
        chunk.append((row.row, row.line, row.data, row.problem))
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _bad_row(options: BatchOptions, sink: _Sink, report: BatchReport, result: RowResult) -> None:
    from .factories.dataset import DatasetRowError

    if options.on_error == "raise":
        sink.commit(report)  # keep every good row before this one
        raise DatasetRowError(list(result.issues))
    report.failed += 1
    if options.on_error == "collect":
        report.listed += 1
        sink.add_issues(result.issues)
        room = SHOWN_ISSUES - len(report.issues)
        if room > 0:
            report.issues.extend(result.issues[:room])


def _out_kind(out: Path) -> str:
    """What `--out` names: a "jsonl" file, a "parquet" file, or a "folder" of persona files."""
    if out.suffix in (".jsonl", ".parquet"):
        return out.suffix[1:]
    if out.suffix in (".json", ".yaml", ".yml", ".csv", ".txt"):
        raise BatchError(
            f"--out {out}: name a .jsonl file for JSON lines, a .parquet file, or a folder for one YAML file per "
            "persona"
        )
    return "folder"


def _refuse_overwriting_inputs(options: BatchOptions, sink: _Sink) -> None:
    """Refuse an output (or its errors file or checkpoint) that is one of the files the batch reads:
    `--force` removed the dataset before reading it, and the batch wrote 0 personas over it."""
    if str(options.out) == STDOUT:
        return
    inputs = [("the dataset (--from)", options.source), ("the mapping (--map)", options.mapping),
              ("the base persona (--base)", options.base)]  # fmt: skip
    outputs = [options.out, sink.errors_path, sink.checkpoint_path]
    for what, source in inputs:
        if source is None:
            continue
        for output in outputs:
            try:
                same = os.path.samefile(source, output)
            except (OSError, ValueError):  # either does not exist (yet), or cannot be compared
                same = False
            if same:
                raise BatchError(
                    f"--out {options.out} would write over {what}, {source}; name another --out"
                    + ("" if output == options.out else f" (it writes {output})")
                )


def _digest(path: Path | None) -> str | None:
    if path is None:
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fingerprint(options: BatchOptions, factory: DatasetProfileFactory) -> dict[str, Any]:
    """What must not change between a run and its resumption."""
    from .resolve import choose_deployment

    stat = options.source.stat()
    return {
        "source": str(options.source.resolve()),
        "source_size": stat.st_size,
        "source_mtime_ns": stat.st_mtime_ns,
        "format": factory.format,  # the same file read as CSV or as TSV holds other rows
        "mapping": _digest(options.mapping),
        "base": _digest(options.base),
        "shard": list(options.shard) if options.shard else None,
        "render": options.render,
        "question": options.question,
        "deployment": choose_deployment(options.deployment),
        "language": options.language,
        "model": options.model,
    }


# -- output ---------------------------------------------------------------------------------------
def _fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable; best effort, since not every platform can open a folder."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _make_folder(folder: Path) -> None:
    """Create `folder` and its parents; a file in the way is `ENOTDIR`, which says what is wrong."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder)) from None


class _Sink:
    """Where records go, and the checkpoint that says how far they got."""

    checkpoint_path: Path
    errors_path: Path
    #: True: `put` takes each record as its JSON line, encoded where the row was made (a worker).
    encodes = False

    def __init__(self, options: BatchOptions) -> None:
        self.options = options
        self.pending = 0
        self.pending_bytes = 0
        self._errors: list[bytes] = []
        self._errors_file: Any = None
        self._state: dict[str, Any] = {}
        #: The state the checkpoint on disk holds; None until one is saved.
        self._saved: dict[str, Any] | None = None

    # checkpoint ---------------------------------------------------------------------------------
    def open(self, fingerprint: dict[str, Any]) -> dict[str, Any]:
        """Start fresh or pick up the checkpoint; return the state to continue from."""
        state = self._read_checkpoint()
        out, resume, force = self.options.out, self.options.resume, self.options.force
        if state is not None and not resume and not force:
            raise BatchError(self._describe(state))
        if state is None or not resume:
            if not resume and not force and self._has_output():
                raise BatchError(f"{out} already exists; pass --force to overwrite it, or another --out")
            if resume and self._has_output():
                raise BatchError(
                    f"{out} exists but has no checkpoint ({self.checkpoint_path.name}): a batch that finishes "
                    "removes its own, and without one it is not known which rows the output holds; pass "
                    "--force (without --resume) to make it again"
                )
            state = {
                "version": CHECKPOINT_VERSION,
                "run": uuid.uuid4().hex,
                "fingerprint": fingerprint,
                "rows_done": 0,
                "written": 0,
                "failed": 0,
                "listed": 0,
                "out_bytes": 0,
                "errors_bytes": 0,
                "complete": False,
            }
            self._start_fresh()
        else:
            if state.get("version") != CHECKPOINT_VERSION or state.get("fingerprint") != fingerprint:
                changed = sorted(
                    key for key in fingerprint if (state.get("fingerprint") or {}).get(key) != fingerprint[key]
                )
                what = ", ".join(changed) or "checkpoint format"
                raise BatchError(
                    f"cannot resume {out}: the {what} changed since it was written, so the rows already "
                    "written may not match; pass --force to start over"
                )
            self._saved = dict(state)
        self._state = state
        if not state["complete"]:
            self._prepare(state)  # the output first: a failure there names what the user named
            self._errors_file = self._open_truncated(self.errors_path, state["errors_bytes"])
            self._save_checkpoint()
        return dict(state)

    def commit(self, report: BatchReport) -> None:
        """Make everything added so far durable, then move the checkpoint past it."""
        self._flush()
        if self._errors:
            with self._writing(self.errors_path):
                self._errors_file.write(b"".join(self._errors))
                self._errors_file.flush()
                os.fsync(self._errors_file.fileno())
            self._errors = []
        self._state.update(
            rows_done=report.rows_done,
            written=report.written,
            failed=report.failed,
            listed=report.listed,
            errors_bytes=self._errors_file.tell() if self._errors_file else 0,
            complete=report.complete,
        )
        self._save_checkpoint()
        self.pending = self.pending_bytes = 0

    def finish(self) -> None:
        """The batch is complete and durable: its checkpoint served only to resume it, so it goes."""
        with self._writing(self.checkpoint_path):
            self.checkpoint_path.unlink(missing_ok=True)
        _fsync_dir(self.checkpoint_path.parent)

    def add_issues(self, issues: tuple[RowIssue, ...]) -> None:
        for issue in issues:
            self._errors.append(dumps_line(issue.as_dict()))
        self.pending += 1

    def close(self) -> None:
        if self._errors_file is not None:
            file, self._errors_file = self._errors_file, None  # closed once, however often asked
            with self._writing(self.errors_path):
                file.close()
                if file.name and os.path.getsize(file.name) == 0:
                    os.unlink(file.name)

    def discard_if_untouched(self) -> None:
        """Remove what a run made that stopped before its first row: its checkpoint, the empty
        output and the template roots it created.

        Called once the sink is closed after a failure with no row read; a checkpoint recording
        rows, or output holding any, is kept, so that it still says what is there.
        """
        saved = self._saved
        if saved is None or saved.get("rows_done") or saved.get("written") or saved.get("failed"):
            return
        if not self._untouched():
            return
        try:
            self.checkpoint_path.unlink(missing_ok=True)
            if self._made_roots and self.roots_folder is not None:
                shutil.rmtree(self.roots_folder, ignore_errors=True)
            self._remove_own()
        except OSError:
            pass  # left as it was: the next run names what it finds

    def _untouched(self) -> bool:
        """Whether the output holds nothing yet (its checkpoint aside)."""
        return False

    def _remove_own(self) -> None:
        """Remove the empty output this run created."""

    #: Where a persona's template roots are copied, relative to the folder its file is in; None:
    #: nowhere (standard output), and the written personas leave their roots out.
    roots_folder: Path | None = None
    #: Whether this run created `roots_folder`.
    _made_roots = False
    #: Whether this run created the output (file or folder).
    _made_out = False

    def place_roots(self, roots: tuple[Path, ...]) -> dict[Path, str] | None:
        """Copy each template root next to the output, so written personas render as the batch's did.

        Returns each root's copy as a path relative to the written personas' folder. Only regular
        files are copied: a symlink could lead out of its root, which the renderer would refuse.
        """
        if self.roots_folder is None:
            return None
        self._made_roots = bool(roots) and not self.roots_folder.exists()
        placed: dict[Path, str] = {}
        used: set[str] = set()
        home = self.roots_folder.parent
        for root in roots:
            name, number = root.name or "templates", 1
            while name in used:  # two roots of the same name, from different folders
                number += 1
                name = f"{root.name}-{number}"
            used.add(name)
            target = self.roots_folder / name
            for file in sorted(root.rglob("*")):
                if file.is_symlink() or not file.is_file():
                    continue
                copy = target / file.relative_to(root)
                with self._writing(copy):
                    _make_folder(copy.parent)
                    write_atomic(copy, file.read_bytes())
            placed[root] = target.relative_to(home).as_posix()
        return placed

    def _describe(self, state: dict[str, Any]) -> str:
        """What an earlier batch's checkpoint says is there, for a run given neither --resume nor --force."""
        out = self.options.out
        rows, written = state.get("rows_done", 0), state.get("written", 0)
        there = "" if self._has_output() or not written else f"; {out} itself is gone"
        if state.get("complete"):
            return (
                f"{self.checkpoint_path} records a finished batch of {rows} row(s) and {written} persona(s) in "
                f"{out}{there}; pass --resume to keep it as it is, or --force to make it again"
            )
        return (
            f"{self.checkpoint_path} records an unfinished batch that stopped after row {rows}, with "
            f"{written} persona(s) written to {out}{there}; pass --resume to continue it, or --force to start over"
        )

    def _kept(self) -> str:
        """What survives a failed write: the rows the last checkpoint on disk covers."""
        saved = self._saved
        if saved is None:
            return "Nothing was written; fix that and run the same command again"
        if not saved.get("rows_done"):
            return "No persona was written yet; fix that and run the same command with --resume"
        return (
            f"The {saved.get('written', 0)} persona(s) of the first {saved['rows_done']} row(s) are kept "
            f"({self.checkpoint_path.name}); fix that and run the same command with --resume to continue"
        )

    @contextmanager
    def _writing(self, path: Path | str) -> Iterator[None]:
        """Turn a failed write into an `OutputError` naming `path` and what earlier output survives."""
        try:
            yield
        except OSError as exc:
            raise OutputError(str(path), exc, kept=self._kept()) from None

    def _read_checkpoint(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.checkpoint_path.read_text(encoding="utf-8"))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, ValueError) as exc:
            raise BatchError(
                f"{self.checkpoint_path}: unreadable checkpoint ({exc}); pass --force to start over"
            ) from None

    def _save_checkpoint(self) -> None:
        with self._writing(self.checkpoint_path):
            write_atomic(self.checkpoint_path, json.dumps(self._state, indent=1), sync=True)
        _fsync_dir(self.checkpoint_path.parent)
        self._saved = dict(self._state)

    def _open_truncated(self, path: Path, length: int) -> Any:
        with self._writing(path):
            _make_folder(path.parent)
            file = open(path, "ab")  # noqa: SIM115 - kept open for the whole run
        if file.tell() < length:
            file.close()
            raise BatchError(f"{path} is shorter than its checkpoint says; it was changed by hand, pass --force")
        with self._writing(path):
            file.truncate(length)
        return file

    # per format -----------------------------------------------------------------------------------
    def add(self, result: RowResult, record: dict[str, Any]) -> None:
        raise NotImplementedError

    def add_line(self, line: bytes) -> None:
        raise NotImplementedError

    def _has_output(self) -> bool:
        raise NotImplementedError

    def _start_fresh(self) -> None:
        raise NotImplementedError

    def _prepare(self, state: dict[str, Any]) -> None:
        raise NotImplementedError

    def _flush(self) -> None:
        raise NotImplementedError


class _LinesSink(_Sink):
    """A sink of JSON lines: records wait as encoded lines until the next commit writes them."""

    encodes = True

    def __init__(self, options: BatchOptions) -> None:
        super().__init__(options)
        self._lines: list[bytes] = []

    def add(self, result: RowResult, record: dict[str, Any]) -> None:
        self.add_line(dumps_line(record))

    def add_line(self, line: bytes) -> None:
        """A record already encoded (by a worker process): the same bytes `add` would append."""
        self._lines.append(line)
        self.pending += 1
        self.pending_bytes += len(line)


class _JsonlSink(_LinesSink):
    def __init__(self, options: BatchOptions) -> None:
        super().__init__(options)
        out = options.out
        self.checkpoint_path = out.with_name(out.name + ".checkpoint")
        self.errors_path = out.with_name(out.stem + ".errors.jsonl")
        self.roots_folder = out.with_name(out.stem + "_templates")
        self._file: Any = None

    def _has_output(self) -> bool:
        return self.options.out.exists() and self.options.out.stat().st_size > 0

    def _start_fresh(self) -> None:
        for path in (self.options.out, self.errors_path):
            if path.exists():
                with self._writing(path):
                    if path.is_symlink():  # emptied where it leads: the link stays the output's name
                        open(path, "wb").close()
                    else:
                        path.unlink()

    def _prepare(self, state: dict[str, Any]) -> None:
        # everything past the checkpoint is a torn line or rows that will be made again
        self._made_out = not self.options.out.exists()
        self._file = self._open_truncated(self.options.out, state["out_bytes"])
        for temp in self.options.out.parent.glob(f".{self.checkpoint_path.name}.*.tmp"):
            temp.unlink(missing_ok=True)

    def _flush(self) -> None:
        if self._lines:
            with self._writing(self.options.out):
                self._file.write(b"".join(self._lines))
                self._file.flush()
                os.fsync(self._file.fileno())
            self._lines = []
        if self._file is not None:
            self._state["out_bytes"] = self._file.tell()

    def close(self) -> None:
        if self._file is not None:
            file, self._file = self._file, None
            try:
                file.close()
            except OSError:
                pass  # a write that failed already said why; the checkpoint says what is kept
        super().close()

    def _untouched(self) -> bool:
        out = self.options.out
        return not out.exists() or out.stat().st_size == 0

    def _remove_own(self) -> None:
        if self._made_out:
            self.options.out.unlink(missing_ok=True)


class _ParquetSink(_Sink):
    """One Parquet file: a row group per chunk, streamed, never the whole output in memory.

    Columns: `id` (text), `row`, `persona` (the persona as JSON, the bytes the JSON-lines output
    holds) and, when rendering, `system` and `user`. A Parquet file is readable only once its
    footer is written, so the file is made as `OUT.partial` and moved into place when the batch
    completes: a stopped run leaves no half file under the name asked for, and starts over with
    `--force` (there is nothing to resume).
    """

    def __init__(self, options: BatchOptions) -> None:
        super().__init__(options)
        out = options.out
        self.checkpoint_path = out.with_name(out.name + ".checkpoint")
        self.errors_path = out.with_name(out.stem + ".errors.jsonl")
        self.roots_folder = out.with_name(out.stem + "_templates")
        # a link is written through: the file goes where it leads, made beside it, so that the
        # rename stays on one file system and leaves the link in place
        self.target = out.resolve() if out.is_symlink() else out
        self.partial = self.target.with_name(self.target.name + ".partial")
        self._columns: dict[str, list[Any]] = {}
        self._writer: Any = None

    def open(self, fingerprint: dict[str, Any]) -> dict[str, Any]:
        if self.options.resume and not self._read_checkpoint_complete():
            raise BatchError(
                f"--out {self.options.out}: a Parquet file is written whole, so a stopped batch cannot be "
                "resumed; run it again with --force (or write .jsonl, which resumes)"
            )
        return super().open(fingerprint)

    def _describe(self, state: dict[str, Any]) -> str:
        if state.get("complete"):
            return super()._describe(state)
        # what it made is in the partial file, which is no Parquet file yet, and cannot be resumed
        return (
            f"{self.checkpoint_path} records an unfinished batch that stopped after row {state.get('rows_done', 0)}; "
            f"a Parquet file is written whole, so it cannot be resumed: pass --force to make {self.options.out} "
            "again (or write .jsonl, which resumes)"
        )

    def _read_checkpoint_complete(self) -> bool:
        state = self._read_checkpoint()
        return state is not None and bool(state.get("complete"))

    def _has_output(self) -> bool:
        return self.options.out.exists()

    def _start_fresh(self) -> None:
        for path in (self.target, self.errors_path, self.partial):
            if path.exists():
                with self._writing(path):
                    path.unlink()

    def _prepare(self, state: dict[str, Any]) -> None:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise BatchError(
                "--out *.parquet needs pyarrow; install it with `pip install 'agent-profiles[parquet]'`"
            ) from None
        with self._writing(self.partial):
            _make_folder(self.partial.parent)
        if self.partial.exists():  # a stopped run's: it is started over
            with self._writing(self.partial):
                self.partial.unlink()

    def add(self, result: RowResult, record: dict[str, Any]) -> None:
        columns = self._columns
        if not columns:
            columns.update(id=[], row=[], persona=[])
            if "prompts" in record:
                columns.update(system=[], user=[])
        columns["id"].append(None if record["id"] is None else str(record["id"]))
        columns["row"].append(record["row"])
        persona = dumps_line(record["persona"])[:-1].decode("utf-8")
        columns["persona"].append(persona)
        if "system" in columns:
            columns["system"].append(record["prompts"]["system"])
            columns["user"].append(record["prompts"]["user"])
        self.pending += 1
        self.pending_bytes += len(persona)

    def _flush(self) -> None:
        if not self._columns or not self._columns["id"]:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({name: pa.array(values, type=_PARQUET_TYPES[name]) for name, values in self._columns.items()})
        with self._writing(self.partial):
            if self._writer is None:
                self._writer = pq.ParquetWriter(self.partial, table.schema)
            self._writer.write_table(table)
        for values in self._columns.values():
            values.clear()

    def finish(self) -> None:
        with self._writing(self.partial):
            if self._writer is None:  # no row made it: still a valid, empty file
                import pyarrow as pa
                import pyarrow.parquet as pq

                schema = pa.schema([(name, _PARQUET_TYPES[name]) for name in ("id", "row", "persona")])
                self._writer = pq.ParquetWriter(self.partial, schema)
            self._writer.close()
            self._writer = None
            os.replace(self.partial, self.target)
        _fsync_dir(self.target.parent)
        super().finish()

    def close(self) -> None:
        if self._writer is not None:
            writer, self._writer = self._writer, None
            try:
                writer.close()
            except OSError:
                pass
        super().close()

    def _untouched(self) -> bool:
        return not self.partial.exists()


def _parquet_types() -> dict[str, Any]:
    import pyarrow as pa

    return {"id": pa.string(), "row": pa.int64(), "persona": pa.string(), "system": pa.string(), "user": pa.string()}


class _ParquetTypes(dict):
    """The Parquet output's column types, made when first asked for: pyarrow loads only then."""

    def __missing__(self, name: str) -> Any:
        self.update(_parquet_types())
        return dict.__getitem__(self, name)


_PARQUET_TYPES: dict[str, Any] = _ParquetTypes()


class _StdoutSink(_LinesSink):
    """JSON lines on standard output, a chunk at a time. There is no checkpoint: printed lines stay printed."""

    def __init__(self, options: BatchOptions) -> None:
        super().__init__(options)
        self.checkpoint_path = self.errors_path = Path(STDOUT)  # neither is written

    def open(self, fingerprint: dict[str, Any]) -> dict[str, Any]:
        if self.options.resume:
            raise BatchError("--out - prints to standard output, which cannot be resumed; name a .jsonl file")
        if self.options.on_error == "collect":
            raise BatchError(
                "--on-error collect saves the bad rows beside the output file; with --out - use --on-error skip, "
                "or name a .jsonl file"
            )
        self._state = {"rows_done": 0, "written": 0, "failed": 0, "complete": False}
        return dict(self._state)

    def commit(self, report: BatchReport) -> None:
        import sys

        if self._lines:
            stream = sys.stdout
            with self._writing("standard output"):
                stream.flush()  # text printed before goes first
                buffer = getattr(stream, "buffer", None)
                if buffer is not None:
                    buffer.write(b"".join(self._lines))
                    buffer.flush()
                else:
                    stream.write(b"".join(self._lines).decode("utf-8"))
                    stream.flush()
            self._lines = []
        self.pending = self.pending_bytes = 0

    def finish(self) -> None:
        return None

    def close(self) -> None:
        return None

    def _kept(self) -> str:
        return ""


#: Characters kept in a persona file name; anything else becomes `_`.
_UNSAFE_NAME = re.compile(r"[^\w.-]+")


def _file_stem(profile_id: Any, row: int) -> str:
    stem = _UNSAFE_NAME.sub("_", str(profile_id)).strip("._")[:120]
    return stem or f"row-{row}"


#: How the first line of every persona file a batch writes begins; the run's id and the row follow.
_MARKER_PREFIX = "# agent-profiles batch "


def _first_line(path: Path) -> str:
    """The first line of `path`, or "" when it cannot be read as text (a user's own file, say)."""
    try:
        with open(path, encoding="utf-8") as file:
            return file.readline()
    except (OSError, UnicodeDecodeError):
        return ""


class _FolderSink(_Sink):
    def __init__(self, options: BatchOptions) -> None:
        super().__init__(options)
        # shards may share one folder, so each keeps its own checkpoint and errors file
        suffix = f"-{options.shard[0]}of{options.shard[1]}" if options.shard else ""
        self.checkpoint_path = options.out / f".checkpoint{suffix}.json"
        self.errors_path = options.out / f"errors{suffix}.jsonl"
        self.roots_folder = options.out / "_templates"

    def _has_output(self) -> bool:
        if self.options.shard:  # the other shards' files are expected
            return False
        return self.options.out.is_dir() and any(self.options.out.iterdir())

    def _start_fresh(self) -> None:
        if self.options.out.exists() and not self.options.out.is_dir():
            raise BatchError(f"--out {self.options.out} is a file; name a folder, or a .jsonl file")
        self._made_out = not self.options.out.exists()
        with self._writing(self.options.out):
            _make_folder(self.options.out)
            if self.errors_path.exists():
                self.errors_path.unlink()

    def _prepare(self, state: dict[str, Any]) -> None:
        with self._writing(self.options.out):
            _make_folder(self.options.out)
        if not self.options.shard:  # temporary files a killed run left; a shard's may be live
            for temp in self.options.out.glob(".*.tmp"):
                temp.unlink(missing_ok=True)

    def add(self, result: RowResult, record: dict[str, Any]) -> None:
        import yaml

        stem = _file_stem(result.profile_id, result.row)
        target = self.options.out / f"{stem}.yaml"
        marker = f"{_MARKER_PREFIX}{self._state['run']} row {result.row}"
        self._check_unique(target, marker, result)
        header = f"{marker}: id {result.profile_id!r} from {self.options.source.name}\n"
        body = yaml.safe_dump(record["persona"], allow_unicode=True, sort_keys=False, width=100)
        with self._writing(target):
            write_atomic(target, header + body)
        prompts_path = target.with_name(f"{stem}.prompts.json")
        with self._writing(prompts_path):
            if "prompts" in record:
                prompts = json.dumps(record["prompts"], ensure_ascii=False, indent=2) + "\n"
                write_atomic(prompts_path, prompts)
            else:  # an earlier run's prompts for this persona no longer match it
                prompts_path.unlink(missing_ok=True)
        self.pending += 1

    def finish(self) -> None:
        """Remove the personas an earlier batch wrote here that this one did not rewrite, then the checkpoint.

        A run given --force over a folder from a bigger dataset would otherwise leave the old
        rows' files beside the new ones, looking like its output. Only files whose first line is
        an earlier batch's marker go (with their prompts), and only once this run is complete, so a
        run stopped midway still has them; other files in the folder are left alone. Shards share
        a folder with other runs, so they remove nothing.
        """
        if not self.options.shard:
            ours = f"{_MARKER_PREFIX}{self._state['run']} "
            for path in sorted(self.options.out.glob("*.yaml")):
                first = _first_line(path)
                if first.startswith(_MARKER_PREFIX) and not first.startswith(ours):
                    with self._writing(path):
                        path.with_name(f"{path.stem}.prompts.json").unlink(missing_ok=True)
                        path.unlink(missing_ok=True)
        super().finish()

    def _untouched(self) -> bool:
        return True  # no row was read, so no persona file was written

    def _remove_own(self) -> None:
        if self._made_out:
            try:
                self.options.out.rmdir()  # only when empty: nothing of anyone else's is removed
            except OSError:
                pass

    def _check_unique(self, target: Path, marker: str, result: RowResult) -> None:
        """Refuse a second row with the same file name in one run; a replayed row may rewrite its own."""
        from dataclasses import replace

        from .factories.dataset import RowIssue

        first = _first_line(target)
        run_prefix = marker.rsplit(" row ", 1)[0] + " row "
        problem = None
        if first.startswith(run_prefix) and not first.startswith(marker + ":"):
            problem = f"another row of this batch already wrote {target.name}; ids must be unique"
        elif (
            self.options.shard
            and first.startswith(_MARKER_PREFIX)
            and not first.startswith(run_prefix)
            and f": id {result.profile_id!r} from " not in first
        ):
            # the other shards write into this folder too: an id of theirs with the same file name
            # (a/b and a_b) would be overwritten without a word, where one run reports it
            problem = (
                f"{target.name} holds the persona of another id, which a batch (another shard) wrote into this "
                "folder; ids must give distinct file names (letters, digits, . and - are kept, the rest become _)"
            )
        if problem is not None:
            issue = RowIssue(result.row, problem, str(self.options.source), result.line, None, "id")
            raise _RowFailure(replace(result, profile=None, issues=(issue,)))

    def _flush(self) -> None:
        # one sync for the chunk's files instead of one fsync per file, before the checkpoint moves
        if self.pending and hasattr(os, "sync"):
            with self._writing(self.options.out):
                os.sync()
