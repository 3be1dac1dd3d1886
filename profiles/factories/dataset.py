"""`DatasetProfileFactory`: one validated persona per row of a CSV, JSONL, YAML or Parquet dataset.

People who need hundreds or millions of personas (simulated users, test populations, one agent
per customer) keep them as rows. A mapping says which column (or which sandboxed Jinja expression
over the row) fills which persona field; a base persona holds what every row shares. Each row is
validated as a `ProfileConfig`, and a bad row is reported with its row number, file line, column
and reason.

Rows are read lazily and each profile is built from one row, so memory does not grow with the
dataset. Row values are data, never templates: braces in a cell are printed as they are.

The mapping file (`--map` on the command line) is YAML::

    id: customer_id                    # optional: the column holding each persona's id
    fields:
      name: contact_name               # a column name: the cell's text
      goal: "{{ row.segment }} support for {{ row.company }}"   # a template over the row
      constraints: rules               # list fields: a list, or a text split at line breaks
      variables.company: company       # a template variable the prompts can use as {{ company }}

A value holding `{{` or `{%` is a template; anything else names a column.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..buckets import stable_bucket
from ..config import FILLED_VARIABLES, kind_typos
from ..context import Context, Resolved
from ..errors import ConfigError, ConfigIssue, DatasetRowError, FactoryError, ProfilesError, RenderError, RowIssue
from ..fields import LIST_FIELDS, PROFILE_FIELDS, REQUIRED_FIELDS, TEXT_FIELDS
from ..profile import build_profile
from ..profile_config import ProfileConfig
from ..rendering.templates import language_problem
from ..resolve import choose_deployment, env_template_roots, require_fields, resolve_fields, resolve_variables
from ._rows import RawRow, count_rows, detect_format, read_rows
from .base import ProfileFactory

if TYPE_CHECKING:
    from ..profile import Profile
    from ..rendering.renderer import CompiledTemplate

__all__ = [
    "MAPPABLE_FIELDS",
    "DatasetProfileFactory",
    "DatasetRowError",
    "FieldMapping",
    "ProfileStream",
    "RowIssue",
    "RowResult",
    "load_mapping",
]

#: Persona fields a mapping may fill; `variables.NAME` adds a template variable.
MAPPABLE_FIELDS = (*TEXT_FIELDS, *LIST_FIELDS)

#: The prefix of a mapping key that binds a template variable instead of a persona field.
VARIABLE_PREFIX = "variables."

#: Longest text one mapping template may produce, in characters.
MAX_MAPPED_CHARS = 20_000

OnError = Literal["raise", "skip", "collect"]
_ON_ERROR = ("raise", "skip", "collect")


@dataclass(frozen=True)
class RowResult:
    """What became of one row: its profile, or the issues that kept it from being one."""

    row: int
    line: int | None
    profile_id: Any
    profile: Profile | None
    issues: tuple[RowIssue, ...] = ()
    #: The persona fields the row itself set (its cells, shaped), for writing the persona out.
    values: Mapping[str, Any] = field(default_factory=dict)
    #: The template variables the row set through `variables.NAME` entries.
    variables: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FieldMapping:
    """Which column or row template fills each persona field, and which column holds the id."""

    fields: Mapping[str, str] = field(default_factory=dict)
    id: str | None = None

    def __post_init__(self) -> None:
        problems = [issue for key, value in self.fields.items() if (issue := _check_entry(key, value))]
        if self.id is not None and (not isinstance(self.id, str) or not self.id.strip()):
            problems.append(ConfigIssue("must name a column", "id"))
        if problems:
            raise ConfigError(problems)


def _check_entry(key: Any, value: Any) -> ConfigIssue | None:
    where = f"fields.{key}"
    if not isinstance(key, str):
        return ConfigIssue("a field name must be text", where)
    if key.startswith(VARIABLE_PREFIX):
        name = key[len(VARIABLE_PREFIX) :]
        if not name.isidentifier():
            return ConfigIssue("a variable name must be an identifier, e.g. variables.company", where)
        if name in PROFILE_FIELDS or name in FILLED_VARIABLES:  # what a persona file refuses under variables:
            instead = f"map the column to {name} itself" if name in PROFILE_FIELDS else "rename the variable"
            return ConfigIssue(f"{name!r} cannot be a variable's name, as in a persona file; {instead}", where)
    elif key not in MAPPABLE_FIELDS:
        close = difflib.get_close_matches(key, MAPPABLE_FIELDS, n=1)
        hint = (
            f"did you mean '{close[0]}'?"
            if close
            else f"mappable fields are {', '.join(MAPPABLE_FIELDS)} and variables.NAME"
        )
        return ConfigIssue(f"not a persona field; {hint}", where)
    if not isinstance(value, str) or not value.strip():
        return ConfigIssue('expected a column name or a template such as "{{ row.company }}"', where)
    return None


def load_mapping(path: str | Path) -> FieldMapping:
    """Read a mapping file: `{fields: {persona_field: column_or_template, ...}, id: column}`.

    Raises:
        ConfigError: the file is not such a mapping; the message names the file and line.
    """
    import yaml

    from ..safe_yaml import as_path, describe_yaml_error, read_text, safe_load

    path = as_path(path, kind="dataset mapping")
    text = read_text(path, kind="dataset mapping")
    try:
        node = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        data = safe_load(text)
    except yaml.MarkedYAMLError as exc:
        problem, line, column = describe_yaml_error(exc)
        raise ConfigError(ConfigIssue(f"invalid YAML: {problem}", file=str(path), line=line, column=column)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(ConfigIssue(f"invalid YAML: {exc}", file=str(path))) from None
    if not isinstance(data, dict):
        raise ConfigError(ConfigIssue("a mapping file holds `fields:` (and optionally `id:`)", file=str(path), line=1))
    unknown = sorted(str(key) for key in data if key not in ("fields", "id"))
    problems = [ConfigIssue(f"unknown key {key!r}; a mapping file holds fields and id", key) for key in unknown]
    fields = data.get("fields") or {}
    if not isinstance(fields, dict):
        problems.append(ConfigIssue("expected a mapping of persona field to column or template", "fields"))
        fields = {}
    try:
        mapping = FieldMapping(fields=fields, id=data.get("id"))
    except ConfigError as exc:
        problems.extend(exc.issues)
        mapping = None
    if problems:
        raise ConfigError([_locate(issue, node, str(path)) for issue in problems])
    assert mapping is not None
    return mapping


def _located(issues: Iterable[ConfigIssue], path: Path) -> list[ConfigIssue]:
    """Issues found in a mapping file already read (a template that does not compile), at their lines."""
    import yaml

    from ..safe_yaml import read_text

    try:
        node = yaml.compose(read_text(path), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, ProfilesError, yaml.YAMLError):  # read fine a moment ago; name the file at least
        node = None
    return [_locate(issue, node, str(path)) for issue in issues]


def _locate(issue: ConfigIssue, root: Any, file: str) -> ConfigIssue:
    """Point an issue at the line of its key in the mapping file."""
    from dataclasses import replace

    import yaml

    node, line = root, None
    for part in issue.field.split(".", 1) if issue.field else []:
        found = None
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if getattr(key_node, "value", None) == part:
                    found, line = value_node, key_node.start_mark.line + 1
                    break
        if found is None:
            break
        node = found
    return replace(issue, file=file, line=line)


@dataclass(frozen=True)
class _Source:
    """Where one mapped value comes from: a column, or a template compiled once."""

    target: str
    column: str | None = None
    template: CompiledTemplate | None = None


class DatasetProfileFactory(ProfileFactory):
    """Creates one profile per row of a dataset, validated, streaming, in file order.

    Args:
        source: a `.csv`, `.tsv`, `.jsonl`/`.ndjson`, `.yaml`/`.yml` (a list of mappings) or
            `.parquet` file (needs the `parquet` extra), or any iterable of mappings.
        mapping: a `FieldMapping`, a mapping file's path, or a plain `{field: column_or_template}`.
            Without one, columns named like persona fields fill those fields.
        base: the persona (a `ProfileConfig`, a mapping of its fields, or a YAML path) holding what
            every row shares; a row's non-empty values win over it, empty cells leave its values
            standing. It need not be complete: only each row's merged persona must have a name
            and a role.
        id_column: the column holding each profile's id (overrides the mapping's `id`); without
            one, the id is the row number.
        format: the file format when the suffix does not tell it.
        on_error: what a bad row does: `raise` a `DatasetRowError`, `skip` it, or `collect` its
            issues in `errors` (and on the stream) and go on.

    Row values are never run as templates, and they reach the prompts only through the fields and
    `variables.NAME` entries the mapping names: a stray column (an e-mail, an internal note) never
    slips into a prompt. Mapping templates see the row as `row` and its number as `row_number`.
    """

    def __init__(
        self,
        source: str | Path | Iterable[Mapping[str, Any]],
        mapping: FieldMapping | Mapping[str, str] | str | Path | None = None,
        *,
        base: ProfileConfig | Mapping[str, Any] | str | Path | None = None,
        id_column: str | None = None,
        format: str | None = None,
        on_error: OnError = "raise",
    ) -> None:
        if on_error not in _ON_ERROR:
            raise FactoryError(f"on_error must be one of {', '.join(_ON_ERROR)}, got {on_error!r}")
        if isinstance(source, (str, os.PathLike)):
            self.source: Path | Iterable[Mapping[str, Any]] = Path(source)
            self.format: str | None = detect_format(self.source, format)
            self.label = str(source)
        elif isinstance(source, (Iterable, Iterator)) and not isinstance(source, (bytes, Mapping)):
            self.source, self.format, self.label = source, None, "<rows>"
        else:  # said now, not as a TypeError once the first profile is asked for
            raise FactoryError(
                "a dataset is a file path (.csv, .tsv, .jsonl, .yaml, .parquet) or an iterable of row mappings "
                f"([{{'name': 'Ada', 'role': 'Analyst'}}]), got {type(source).__name__}"
                + ("; put one row in a list" if isinstance(source, Mapping) else "")
            )
        mapping_file = Path(mapping) if isinstance(mapping, (str, os.PathLike)) else None
        if mapping_file is not None:
            mapping = load_mapping(mapping_file)
        elif mapping is not None and not isinstance(mapping, FieldMapping):
            mapping = FieldMapping(fields=dict(mapping))
        self.mapping: FieldMapping | None = mapping
        self.id_column = id_column or (mapping.id if mapping else None)
        self.on_error: OnError = on_error
        self.errors: list[RowIssue] = []
        self.base = self._load_base(base)
        #: The base's declared inputs: a `variables.NAME` cell for one is read by its type.
        self._inputs: Mapping[str, Any] = dict(self.base.inputs) if self.base is not None else {}
        from ..rendering.renderer import Renderer

        # one private sandbox for the mapping's templates, compiled once here
        self._renderer = Renderer(())
        try:
            self._sources = self._compile(mapping) if mapping is not None and mapping.fields else None
        except ConfigError as exc:
            if mapping_file is None:
                raise
            raise ConfigError(_located(exc.issues, mapping_file)) from None

    # -- public API ------------------------------------------------------------------------------
    def create_profile(
        self,
        profile_id: Any = None,
        *,
        name: str | None = None,
        role: str | None = None,
        goal: str | None = None,
        language: str | None = None,
        model: str | None = None,
        **options: Any,
    ) -> Profile | None:
        """The profile of the row whose id column equals `profile_id` (compared as text).

        Without an id column, `profile_id` is a row number (1 is the first data row). The rows
        are scanned from the start until the id is found, so one lookup costs up to one pass over
        the dataset; to make many profiles, iterate `create_profiles()` instead. The options fill
        fields that both the row and the base persona leave empty. Returns None for an unknown
        id, and for a bad row unless `on_error` is `raise`.
        """
        fallbacks = _fallbacks(name=name, role=role, goal=goal, language=language, model=model)
        run = self._settings(options.get("deployment"))
        wanted = str(profile_id)
        for raw in read_rows(self.source, self.format, self._check_columns):
            if self.id_column is None:
                if str(raw.row) != wanted:
                    continue
            elif raw.data is None or str(raw.data.get(self.id_column, "")) != wanted:
                continue
            result = self.make(raw, fallbacks, run=run)
            if result.issues:
                self._fail(result.issues)
                return None
            return result.profile
        return None

    def create_profiles(self, profile_ids: Iterable[Any] | None = None, **options: Any) -> ProfileStream:
        """Every row's profile, lazily, in file order; with `profile_ids`, just those rows.

        `options` are those of `create_profile`, plus `start` and `shard` of `iter_results`; an
        iterable source (not a file) is read once, so a generator gives its rows to one pass only.

        Bad rows are handled per `on_error`; collected issues are on the returned stream's
        `errors` and on this factory's `errors` (a fresh list for each call).
        """
        if profile_ids is not None:
            return ProfileStream(self._each(profile_ids, options), self.errors)
        self.errors = []
        return ProfileStream(
            (result.profile for result in self.iter_results(**options) if result.profile is not None),
            self.errors,
        )

    def iter_results(
        self,
        *,
        start: int = 0,
        shard: tuple[int, int] | None = None,
        name: str | None = None,
        role: str | None = None,
        goal: str | None = None,
        language: str | None = None,
        model: str | None = None,
        deployment: str | None = None,
        context: Context | None = None,
    ) -> Iterator[RowResult]:
        """One `RowResult` per row after the first `start` rows that falls in `shard`.

        `shard=(i, n)` keeps the rows whose id hashes (CRC-32 of its text) to `i` modulo `n`, or,
        for rows without an id, whose row number minus one is `i` modulo `n`; so `n` processes
        given `0..n-1` split a dataset with no overlap and no gap, and a row stays in its shard
        when rows are added or reordered. `on_error` is applied: `raise` raises at a bad row,
        `collect` appends its issues to `errors`; bad rows are yielded with their issues either way.
        The base persona's overlay for `deployment` (else `PROFILES_DEPLOYMENT`) applies to every row.
        `context` is what every profile is created for, as in `ProfileConfig.create_profile`: its
        language and model win over the row's and the base's (unlike `language` and `model`, which
        fill only what both leave empty), and its deployment, when set, is used for `deployment`.
        """
        fallbacks = _fallbacks(name=name, role=role, goal=goal, language=language, model=model)
        run = self.settings(context, deployment)
        for raw in self.iter_raw(start=start, shard=shard):
            result = self.make(raw, fallbacks, run=run)
            if result.issues:
                self._fail(result.issues)
            yield result

    def iter_raw(self, *, start: int = 0, shard: tuple[int, int] | None = None) -> Iterator[RawRow]:
        """The rows `iter_results` makes profiles of, read and filtered but not made yet: what a
        batch reads once and hands to worker processes, which `make` each with `settings()`."""
        if shard is not None:
            index, count = shard
            if not (isinstance(index, int) and isinstance(count, int) and 0 <= index < count):
                raise FactoryError(f"shard must be (index, count) with 0 <= index < count, got {shard!r}")
        for raw in read_rows(self.source, self.format, self._check_columns):
            if raw.row <= start:
                continue
            if shard is not None and _shard_of(raw, self.id_column, shard[1]) != shard[0]:
                continue
            yield raw

    def settings(self, context: Context | None = None, deployment: str | None = None) -> _Run:
        """What every row of one pass shares, for `make(raw, run=...)`: as `iter_results` works it out."""
        if context is not None:
            return self._settings(context.deployment or deployment, context.language, context.model)
        return self._settings(deployment)

    def estimate_rows(self) -> int | None:
        """About how many rows the dataset holds, for a progress bar; None when it cannot tell."""
        return count_rows(self.source, self.format)

    def make(self, raw: RawRow, fallbacks: Mapping[str, str] | None = None, *, run: _Run | None = None) -> RowResult:
        """Turn one read row into a profile, or into the issues that stop it; never raises for data."""
        run = run or self._settings()
        cells = self.cells(raw)
        if isinstance(cells, RowResult):
            return cells
        profile_id, values, variables, columns = cells

        def issue(message: str, column: str | None = None, target: str | None = None) -> RowIssue:
            return RowIssue(raw.row, message, self.label, raw.line, column, target)

        try:
            profile = self._build(profile_id, raw, values, variables, columns, fallbacks or {}, run)
        except ConfigError as exc:
            found = []
            for config_issue in exc.issues:
                target = str(config_issue.loc[0]) if config_issue.loc else config_issue.field
                message = config_issue.message
                if config_issue.code == "identity_missing":
                    message = _missing(target, columns)
                found.append(issue(message, columns.get(target), config_issue.field or target))
            return RowResult(raw.row, raw.line, profile_id, None, tuple(found))
        except ProfilesError as exc:
            return RowResult(raw.row, raw.line, profile_id, None, (issue(exc.message),))
        return RowResult(raw.row, raw.line, profile_id, profile, values=values, variables=variables)

    def cells(self, raw: RawRow) -> RowResult | tuple[Any, dict[str, Any], dict[str, Any], dict[str, str | None]]:
        """What the mapping reads from one row, before any profile is made of it: its id, the persona
        fields it sets (shaped as `_shape` says), the variables it sets, and the column behind each
        field (None for a template); or, for a row that cannot be read so far, its `RowResult` with
        the issues. `make` starts from this, and so does a batch's row plan (`profiles.batch_rows`)."""

        def issue(message: str, column: str | None = None, target: str | None = None) -> RowIssue:
            return RowIssue(raw.row, message, self.label, raw.line, column, target)

        if raw.data is None:
            return RowResult(raw.row, raw.line, raw.row, None, (issue(raw.problem or "unreadable row"),))
        data = raw.data
        profile_id: Any = raw.row
        if self.id_column is not None:
            value = data.get(self.id_column)
            if value is None or (isinstance(value, str) and not value.strip()):
                why = "is empty" if self.id_column in data else "is missing"
                return RowResult(raw.row, raw.line, None, None, (issue(f"the id {why}", self.id_column, "id"),))
            if isinstance(value, float) and not math.isfinite(value):  # written as NaN, no JSON, into the output
                problem = f"the id is {value!r}, which is no number JSON has; give every row an id"
                return RowResult(raw.row, raw.line, None, None, (issue(problem, self.id_column, "id"),))
            profile_id = value.strip() if isinstance(value, str) else value
        values: dict[str, Any] = {}
        variables: dict[str, Any] = {}
        columns: dict[str, str | None] = {}
        issues: list[RowIssue] = []
        for source in self._sources if self._sources is not None else self._identity(data):
            column = source.column
            if column is not None and type(value := data.get(column, _ABSENT)) is str:
                value = value.strip() or None  # a text cell, as `_value` reads it, without the call
            else:
                try:
                    value = self._value(source, data, raw.row)
                except _RowProblem as exc:
                    issues.append(issue(str(exc), source.column, source.target))
                    continue
            if source.target.startswith(VARIABLE_PREFIX):
                if value is not None:
                    name = source.target[len(VARIABLE_PREFIX) :]
                    spec = self._inputs.get(name)
                    if spec is not None:  # read by the declared type, as `--var` and a dynamic entry are
                        value, problem = _typed(spec, value)
                        if problem is not None:
                            message = f"does not fit inputs.{name}: {problem}"
                            issues.append(issue(message, column, source.target))
                            continue
                    variables[name] = value
                continue
            value = _shape(source.target, value)
            columns[source.target] = source.column
            if value is not None:
                values[source.target] = value
        if issues:
            return RowResult(raw.row, raw.line, profile_id, None, tuple(issues))
        return profile_id, values, variables, columns

    # -- internals -------------------------------------------------------------------------------
    def _fail(self, issues: Iterable[RowIssue]) -> None:
        if self.on_error == "raise":
            raise DatasetRowError(list(issues))
        if self.on_error == "collect":
            self.errors.extend(issues)

    @staticmethod
    def _load_base(base: ProfileConfig | Mapping[str, Any] | str | Path | None) -> ProfileConfig | None:
        """The base persona, which holds what the rows share and so need not be complete itself.

        Each row's merged persona is what must be whole: a name and role may come from the rows.
        """
        if base is None or isinstance(base, ProfileConfig):
            config = base
        elif isinstance(base, Mapping):
            config = ProfileConfig.from_data(base, partial=True)
        else:
            from ..loader import load_profile

            config = load_profile(base, partial=True)
        if config is not None:
            if config.factory is not None:
                raise FactoryError("the base persona of a dataset must not have a factory of its own; remove it")
            typos = kind_typos(config)  # a partial persona skips this check; rows cannot add kinds
            if typos:
                raise ConfigError(typos)
        return config

    def _compile(self, mapping: FieldMapping) -> tuple[_Source, ...]:
        from ..rendering.renderer import has_template_syntax

        sources = []
        for target, spec in mapping.fields.items():
            if not has_template_syntax(spec):
                sources.append(_Source(target, column=spec.strip()))
                continue
            label = f"field '{target}'"
            try:
                compiled = self._renderer.compile(spec, label)
            except RenderError as exc:
                raise ConfigError(
                    ConfigIssue(f"the template does not parse: {exc.message}", f"fields.{target}")
                ) from None
            unknown = sorted(compiled.declared - {"row", "row_number"})
            if unknown:
                raise ConfigError(
                    ConfigIssue(
                        f"the template uses {', '.join(unknown)}; a row's values are under `row`, "
                        f"e.g. {{{{ row.{unknown[0]} }}}}",
                        f"fields.{target}",
                    )
                )
            sources.append(_Source(target, template=compiled))
        return tuple(sources)

    def _identity(self, data: Mapping[str, Any]) -> Iterator[_Source]:
        for key in data:
            if key in MAPPABLE_FIELDS:
                yield _Source(key, column=key)

    def _check_columns(self, columns: list[str]) -> None:
        """Refuse a file whose header lacks a mapped column: every row would fail the same way."""
        wanted = [source.column for source in self._sources or () if source.column]
        if self.id_column:
            wanted.append(self.id_column)
        missing = [column for column in dict.fromkeys(wanted) if column not in columns]
        if missing:
            raise FactoryError(
                f"{self.label}: the mapping names column(s) {', '.join(map(repr, missing))} that the "
                f"dataset does not have; its columns are {', '.join(columns)}"
            )

    def _value(self, source: _Source, data: Mapping[str, Any], row: int) -> Any:
        if source.column is not None:
            if source.column not in data:
                raise _RowProblem(f"the row has no column {source.column!r}")
            value = data[source.column]
        else:
            assert source.template is not None
            try:
                value = self._renderer.render(
                    source.template, {"row": data, "row_number": row}, max_chars=MAX_MAPPED_CHARS
                )
            except RenderError as exc:
                raise _RowProblem(exc.message) from None
        if isinstance(value, str):
            value = value.strip()
            return value or None
        if isinstance(value, (float, list, dict)):
            from ..jsonlines import non_finite

            found = non_finite(value)
            if found is not None:  # written as "nan" into a field, or as NaN, which is no JSON, into the output
                path, spelt = found
                where = "".join(f"[{part!r}]" for part in path)
                raise _RowProblem(
                    f"holds {spelt}{' at ' + where if where else ''}, which is no number JSON has; leave the cell "
                    "empty (null) for no value, or write the number as text"
                )
        if isinstance(value, Mapping) and not source.target.startswith(VARIABLE_PREFIX) and not _names_a_lookup(value):
            # the persona model reads a mapping in a field as a dynamic field, and would say its keys are unknown
            wanted = "a list of texts, or a text split at line breaks" if source.target in LIST_FIELDS else "text"
            raise _RowProblem(f"holds a mapping, expected {wanted}; write the value itself")
        if _names_a_lookup(value):
            raise _RowProblem(
                "holds a mapping with 'key:', which a persona reads as a dynamic field; a dataset gives "
                "values, never lookups of the environment or the store: write the value itself, or put the "
                "dynamic field in the base persona"
            )
        return value

    def _settings(self, deployment: str | None = None, language: str | None = None, model: str | None = None) -> _Run:
        """What every row of one pass shares: the deployment, its base persona, template roots, context."""
        deployment = choose_deployment(deployment)
        base = self.base.for_deployment(deployment) if self.base is not None else None
        return _Run(deployment, base, env_template_roots(), language, model)

    def _build(
        self,
        profile_id: Any,
        raw: RawRow,
        values: dict[str, Any],
        variables: dict[str, Any],
        columns: Mapping[str, str | None],
        fallbacks: Mapping[str, str],
        run: _Run,
    ) -> Profile:
        base = run.base
        if base is None:
            config = ProfileConfig(**{**fallbacks, **values}, variables=variables)
        else:
            # only the row's own values are validated; the base's were, once, when it was loaded
            update = _checked(values)
            if update is None:  # something other than text: the model says what is wrong with it
                checked = ProfileConfig(**values, variables=variables, factory=_check_only)
                update = {name: getattr(checked, name) for name in values}
            for name, value in fallbacks.items():
                if name not in update and getattr(base, name) in (None, ""):
                    update[name] = value
            missing = [name for name in REQUIRED_FIELDS if update.get(name, getattr(base, name)) in (None, "")]
            if missing:
                raise ConfigError(
                    [ConfigIssue("is required", name, loc=(name,), code="identity_missing") for name in missing]
                )
            if variables:
                update["variables"] = {**base.variables, **variables}
            update["deployments"] = {}
            config = base._copy_unchecked(update=update)  # checked above, the base when it was loaded
        context = Context(language=run.language, model=run.model, deployment=run.deployment, base_dir=config._base_dir)
        resolved = resolve_fields(config, context)
        require_fields(config, resolved)
        where = f"dataset:{self.label}:{raw.line}" if raw.line is not None else f"dataset:{self.label}"
        for name in values:
            if (name == "language" and run.language) or (name == "model" and run.model):
                continue  # the context's argument won over the cell
            column = columns.get(name)
            origin = f"{where} row {raw.row}" + (f" column {column}" if column else f" template {name}")
            resolved[name] = Resolved(resolved[name].value, origin)
        roots = (*config.template_roots, *run.roots)
        chosen = replace(context, language=resolved["language"].value, model=resolved["model"].value)
        bound = resolve_variables(config, chosen)
        for name in variables:
            column = columns.get(f"{VARIABLE_PREFIX}{name}")
            origin = f"{where} row {raw.row}" + (f" column {column}" if column else f" template {name}")
            bound[name] = Resolved(bound[name].value, origin)
        return build_profile(
            config, profile_id, resolved, template_roots=roots, literal=values.keys(), variables=bound
        )


@dataclass(frozen=True)
class _Run:
    deployment: str | None
    base: ProfileConfig | None
    roots: tuple[Path, ...]
    language: str | None = None
    model: str | None = None


def _checked(values: Mapping[str, Any]) -> dict[str, Any] | None:
    """A row's mapped values as the persona model would hold them, checked without building one:
    a text field's text, a list field's texts as a tuple. None when a value is anything else, so
    the model validates it and reports it in its own words; the result is the same either way."""
    checked: dict[str, Any] = {}
    for name, value in values.items():
        if name in LIST_FIELDS:
            if type(value) not in (list, tuple) or not all(type(item) is str for item in value):
                return None
            checked[name] = tuple(value)
        elif type(value) is str and not (name == "language" and language_problem(value)):
            checked[name] = value
        else:
            return None
    return checked


def _check_only(*args: Any, **kwargs: Any) -> None:
    """Stands in as a factory while a row's values are checked alone, so name and role may be absent."""
    return None


class ProfileStream(Iterator["Profile"]):
    """An iterator of profiles that also carries the issues of the rows it left out."""

    def __init__(self, profiles: Iterator[Profile], errors: list[RowIssue]) -> None:
        self._profiles = profiles
        self.errors = errors

    def __iter__(self) -> ProfileStream:
        return self

    def __next__(self) -> Profile:
        return next(self._profiles)


#: A cell the row does not have, told apart from a cell holding None.
_ABSENT = object()


def _typed(spec: Any, value: Any) -> tuple[Any, str | None]:
    """A cell bound to a declared input as that input takes it: text read by its type (a CSV cell
    `5` for an integer is 5), anything else (JSON, YAML) checked as it is; and why it does not fit."""
    from ..inputs import InputSpecError

    if isinstance(value, str):
        try:
            return spec.from_text(value), None
        except InputSpecError as exc:
            return value, exc.reason
    return value, spec.problem(value)


def _names_a_lookup(value: Any, depth: int = 0) -> bool:
    """Whether a cell's value holds, at any depth, a mapping with `key`: a dynamic field's shape."""
    if depth > 32:
        return True  # deeper than any persona value; refused rather than walked further
    if isinstance(value, Mapping):
        return "key" in value or any(_names_a_lookup(item, depth + 1) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(_names_a_lookup(item, depth + 1) for item in value)
    return False


class _RowProblem(Exception):
    """A mapped value could not be read from the row."""


def _missing(target: str, columns: Mapping[str, str | None]) -> str:
    if target not in columns:
        return "is required; map a column to it or set it in the base persona"
    source = f"column {columns[target]!r}" if columns[target] else "its template"
    return f"is required, but {source} is empty here and the base persona does not set it"


def _fallbacks(**options: str | None) -> dict[str, str]:
    return {name: value for name, value in options.items() if value not in (None, "")}


def _shape(target: str, value: Any) -> Any:
    """A cell as a field wants it: numbers become text, list fields split text at line breaks."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if target in LIST_FIELDS and isinstance(value, str):
        items = [item.strip() for item in value.splitlines()]
        return [item for item in items if item] or None
    if isinstance(value, (list, tuple)) and not value:
        return None
    return value


def _shard_of(raw: RawRow, id_column: str | None, count: int) -> int:
    if id_column is not None and raw.data is not None:
        value = raw.data.get(id_column)
        if value is not None and str(value).strip():
            return stable_bucket(str(value), count)  # the scheme rollouts use too
    return (raw.row - 1) % count
