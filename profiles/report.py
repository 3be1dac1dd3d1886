"""What a population of personas covers and how distinct its members are (`profiles report`).

A generated population is judged by two things: whether it has the intended mix, and whether
its members differ. The report gives, for a JSONL file of personas (the lines `profiles
generate` or `profiles batch` writes):

- ``count`` and ``distinct_names`` (names compared once normalised, as the LLM factory does);
- per attribute drawn from a sampling plan (each persona's ``metadata.plan``): how often each
  value occurs against the plan's target, and the largest deviation in percentage points; for
  numbers the lowest, mean and highest; for lists how often each item was drawn;
- the histogram of each persona's similarity to its nearest neighbour (estimated Jaccard
  similarity of the character shingles of its text fields, as `--dedupe` measures it), and the
  share of personas whose nearest neighbour is at 0.8 or more and at 0.9 or more.

Up to :data:`EXACT_NEIGHBOURS` personas every pair is compared; above that, neighbours are
searched through LSH buckets for similarities of 0.5 and more, and personas with none that close
are counted together in one bin below 0.5. Similarity figures need numpy
(``pip install 'agent-profiles[dedupe]'``); without it they are left out and the report says so.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError, ConfigIssue, FactoryError
from .jsonlines import loads as load_json

if TYPE_CHECKING:
    from .factories.plan import SamplingPlan

__all__ = [
    "EXACT_NEIGHBOURS",
    "AttributeReport",
    "DiversityReport",
    "diversity_report",
    "persona_of",
    "read_personas",
]

#: Most personas whose neighbours are found by comparing every pair.
EXACT_NEIGHBOURS = 2000

#: Below this, neighbours are not searched in populations over `EXACT_NEIGHBOURS`.
NEIGHBOUR_FLOOR = 0.5

#: Shares of near-duplicates the report gives, by nearest-neighbour similarity.
NEAR_DUPLICATE_LEVELS = (0.8, 0.9)

#: Longest JSONL line read, in bytes.
MAX_LINE_BYTES = 1_000_000


@dataclass
class AttributeReport:
    """How one attribute's drawn values came out."""

    name: str
    #: "categorical" (texts), "number", "list" (k of a list) or "row" (dataset rows).
    kind: str
    #: Personas carrying the attribute.
    count: int
    #: Categorical and list attributes: personas per value (or per list item).
    counts: dict[str, int] = field(default_factory=dict)
    #: The plan's expected count per value, when a plan is given.
    target: dict[str, float] | None = None
    #: The value whose share is furthest from its target: value, observed and target shares,
    #: and the difference in percentage points.
    largest_deviation: dict[str, Any] | None = None
    #: Numbers: lowest, mean and highest.
    numbers: dict[str, float] | None = None
    #: Rows: how many different rows were drawn.
    distinct: int | None = None


@dataclass
class DiversityReport:
    """The figures of one population; `as_dict()` is what `profiles report --json` prints."""

    count: int
    distinct_names: int
    attributes: list[AttributeReport] = field(default_factory=list)
    #: Bins of nearest-neighbour similarity: ``{"from", "to", "count"}``; None without numpy.
    histogram: list[dict[str, Any]] | None = None
    #: Share of personas whose nearest neighbour is at least each level, e.g. ``{"0.8": 0.05}``.
    near_duplicates: dict[str, float] | None = None
    #: "all pairs", or "lsh ≥ 0.5" for large populations; None when similarity was not measured.
    neighbours: str | None = None
    #: Why similarity figures are missing, when they are.
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def persona_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """The persona in one output line: `generate`'s (fields at the top) or `batch`'s (`persona`)."""
    inner = record.get("persona")
    if isinstance(inner, Mapping):
        return dict(inner)
    return {key: value for key, value in record.items() if not key.startswith("_")}


def read_personas(path: str | Path) -> Iterator[dict[str, Any]]:
    """The personas of a JSONL file, one per line, as :func:`persona_of` reads them.

    Raises:
        ConfigError: the file cannot be read, or a line is not a JSON object (file and line named).
    """
    path = Path(path)
    try:
        file = path.open("rb")
    except OSError as exc:
        raise ConfigError(ConfigIssue(f"cannot read the file ({exc.strerror or exc})", file=str(path))) from None
    with file:
        # readline with a bound: iterating the file would read a line without end (/dev/zero) whole
        for number, raw in enumerate(iter(lambda: file.readline(MAX_LINE_BYTES + 1), b""), start=1):
            if len(raw) > MAX_LINE_BYTES:
                raise ConfigError(
                    ConfigIssue(f"the line is over {MAX_LINE_BYTES} bytes", file=str(path), line=number)
                )
            if not raw.strip():
                continue
            try:
                record = load_json(raw)
            except ValueError as exc:
                raise ConfigError(
                    ConfigIssue(f"not JSON ({exc}); the file must hold one persona per line", file=str(path),
                                line=number)
                ) from None
            if not isinstance(record, dict):
                raise ConfigError(ConfigIssue("not a JSON object; one persona per line", file=str(path), line=number))
            yield persona_of(record)


def diversity_report(personas: Iterable[Mapping[str, Any]], plan: SamplingPlan | None = None) -> DiversityReport:
    """The figures of a population, against the plan's targets when a plan is given."""
    from .factories.distinct import persona_text
    from .factories.json_reply import normalise_name

    names: set[str] = set()
    texts: list[str] = []
    draws: list[Mapping[str, Any]] = []
    if isinstance(personas, (str, bytes, Mapping)) or not isinstance(personas, Iterable):
        raise FactoryError(
            "diversity_report takes a list of personas, each a mapping of fields (as profiles generate writes "
            f"them, one JSON object a line), got {type(personas).__name__}"
        )
    for position, persona in enumerate(personas):
        if not isinstance(persona, Mapping):
            raise FactoryError(
                f"diversity_report: persona {position} is {type(persona).__name__}, not a mapping of fields; "
                "pass the personas as mappings, e.g. json.loads of each line of the output"
            )
        name = persona.get("name")
        if isinstance(name, str) and normalise_name(name):
            names.add(normalise_name(name))
        texts.append(persona_text(persona))
        metadata = persona.get("metadata")
        drawn = metadata.get("plan") if isinstance(metadata, Mapping) else None
        draws.append(drawn if isinstance(drawn, Mapping) else {})
    report = DiversityReport(count=len(texts), distinct_names=len(names))
    report.attributes = _attributes(draws, plan)
    _similarity(report, texts)
    return report


def _attributes(draws: list[Mapping[str, Any]], plan: SamplingPlan | None) -> list[AttributeReport]:
    from .factories.plan import Categorical, Conditional, DatasetRows, NumberRange, Subset

    count = len(draws)
    order: dict[str, None] = dict.fromkeys(plan.attributes) if plan is not None else {}
    for drawn in draws:
        order.update(dict.fromkeys(drawn))
    targets = plan.targets(count) if plan is not None else {}
    reports = []
    for name in order:
        values = [drawn[name] for drawn in draws if name in drawn]
        dist = plan.attributes.get(name) if plan is not None else None
        if isinstance(dist, (Categorical, Conditional)) and name in (plan.categorical() if plan else []):
            kind = "categorical"
        elif isinstance(dist, (NumberRange, Conditional)) and all(_is_number(value) for value in values):
            kind = "number"
        elif isinstance(dist, Subset):
            kind = "list"
        elif isinstance(dist, DatasetRows):
            kind = "row"
        else:
            kind = _kind_of(values)
        item = AttributeReport(name, kind, len(values))
        if kind == "categorical":
            item.counts = dict(Counter(str(value) for value in values).most_common())
            target = targets.get(name)
            if target is not None:
                item.target = target
                for value in target:
                    item.counts.setdefault(value, 0)
                item.largest_deviation = _largest_deviation(item.counts, target, count)
        elif kind == "number":
            numbers = [float(value) for value in values]
            if numbers:
                item.numbers = {"min": min(numbers), "mean": sum(numbers) / len(numbers), "max": max(numbers)}
        elif kind == "list":
            item.counts = dict(Counter(str(entry) for value in values for entry in value).most_common())
            if isinstance(dist, Subset):
                expected = {entry: count * dist.k / len(dist.of) for entry in dist.of}
                item.target = expected
                for entry in expected:
                    item.counts.setdefault(entry, 0)
                item.largest_deviation = _largest_deviation(item.counts, expected, count)
        elif kind == "row":
            item.distinct = len({json.dumps(value, sort_keys=True, default=str) for value in values})
        reports.append(item)
    return reports


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind_of(values: list[Any]) -> str:
    if values and all(_is_number(value) for value in values):
        return "number"
    if values and all(isinstance(value, list) for value in values):
        return "list"
    if values and all(isinstance(value, Mapping) for value in values):
        return "row"
    return "categorical"


def _largest_deviation(counts: Mapping[str, int], target: Mapping[str, float], count: int) -> dict[str, Any] | None:
    """The value whose observed share is furthest from its target share (ties: the first listed)."""
    if not count:
        return None
    best: dict[str, Any] | None = None
    for value in [*target, *(value for value in counts if value not in target)]:
        observed = counts.get(value, 0) / count
        expected = target.get(value, 0.0) / count
        points = (observed - expected) * 100
        if best is None or abs(points) > abs(best["points"]) + 1e-12:
            best = {"value": value, "observed": observed, "target": expected, "points": points}
    return best


def _similarity(report: DiversityReport, texts: list[str]) -> None:
    try:
        from .similarity import MinHasher, nearest_neighbours
    except ImportError:  # pragma: no cover - the module itself needs nothing beyond the standard library
        return
    try:
        hasher = MinHasher()
    except FactoryError as exc:
        report.note = exc.message
        return
    if len(texts) < 2:
        report.histogram, report.near_duplicates, report.neighbours = [], {}, "all pairs"
        return
    signatures = hasher.signatures(texts)
    best, exact = nearest_neighbours(signatures, exact_up_to=EXACT_NEIGHBOURS, floor=NEIGHBOUR_FLOOR)
    report.neighbours = "all pairs" if exact else f"lsh ≥ {NEIGHBOUR_FLOOR}"
    edges = [round(0.1 * step, 1) for step in range(11)]
    if not exact:
        edges = [0.0, *[edge for edge in edges if edge >= NEIGHBOUR_FLOOR]]
    counts = [0] * (len(edges) - 1)
    for value in best:
        value = 0.0 if value is None else value
        # the last bin holds 1.0 itself; a value exactly on an edge goes to the bin it opens
        position = next(
            (i for i in range(len(counts)) if value < edges[i + 1] - 1e-12), len(counts) - 1
        )
        counts[position] += 1
    report.histogram = [
        {"from": edges[i], "to": edges[i + 1], "count": counts[i]} for i in range(len(counts))
    ]
    total = len(best)
    report.near_duplicates = {
        f"{level:g}": sum(1 for value in best if value is not None and value >= level - 1e-12) / total
        for level in NEAR_DUPLICATE_LEVELS
    }
