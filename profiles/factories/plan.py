"""Sampling plans: the attributes each generated persona is drawn with, before a model writes it.

A population is useful when its members differ where they should and cover the intended mix, so
the mix is declared, drawn with a seed, and the model fills in the rest (as TinyTroupe and
Nemotron-Personas do). A plan is a YAML file, validated like a persona (every problem at once,
each with file, line and column):

```yaml
count: 100                       # optional: `--count` wins
seed: 7                          # optional: `--seed` wins
attributes:
  locale:                        # categorical, with weights; quotas are exact
    weights: {en: 70, zh: 30}
    field: language              # the persona's `language` must agree
  temperament:
    values: [calm, brisk, playful]   # categorical, equal weights
  age:
    range: [18, 80]              # whole numbers; [1.5, 2.0] draws numbers with `decimals` places
  hobbies:
    k: 2                         # two different items of the list
    of: [chess, hiking, jazz, pottery]
  age_band:
    weights: {young: 1, old: 1}
  occupation:
    given: age_band              # conditional: one distribution per value of another attribute
    cases:
      young: {weights: {student: 3, barista: 1}}
      old: {values: [teacher, retired]}
  customer:
    rows: customers.csv          # a row of a dataset (csv, tsv, jsonl, yaml, parquet) per persona
    columns: [contact_name, segment]
    fields: {name: contact_name} # optional: persona fields that must equal a column
```

Drawing is seeded per attribute (the stream of `age` does not change when another attribute is
added). A categorical attribute is not sampled independently per persona: for `count` personas,
each value gets its share by the largest-remainder method (70 and 30 of 100; 3, 2 and 2 of 7
with equal weights, the earlier values getting the rounding), and the values are then shuffled
with the seed, so quotas hold exactly. A conditional categorical attribute holds its quotas
within each group of the attribute it depends on. Dataset rows are drawn without replacement,
starting a new shuffled pass when the personas outnumber the rows.

Each persona's draws reach the generation prompt as variables, are checked in the reply (a field
an attribute maps onto must agree; the others are echoed back under ``attributes``), and are kept
under ``metadata.plan`` of the persona.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from profiles.errors import ConfigError, ConfigIssue, FactoryError

__all__ = [
    "MAX_PLAN_ROWS",
    "Categorical",
    "Conditional",
    "DatasetRows",
    "NumberRange",
    "PlanCheck",
    "SamplingPlan",
    "Subset",
    "load_plan",
    "parse_plan",
    "quotas",
]

#: Most dataset rows a plan reads; they are held in memory while drawing.
MAX_PLAN_ROWS = 100_000
#: The most personas one plan or generating run makes: each has its draw and id held in memory.
MAX_COUNT = 1_000_000

#: Most attributes in one plan: each is listed in every prompt.
MAX_ATTRIBUTES = 64

#: Persona fields an attribute may map onto: the plain text fields a model writes.
MAPPABLE_FIELDS = (
    "name",
    "role",
    "goal",
    "desc",
    "expand_prompt",
    "examples",
    "retry_goal",
    "language",
    "model",
    "avatar",
)


class _Kind(BaseModel):
    """What every distribution may say besides how to draw."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Shown to the model beside the value, e.g. "the customer's age in years".
    description: str | None = None


def _check_field(value: str | None) -> str | None:
    if value is not None and value not in MAPPABLE_FIELDS:
        raise ValueError(f"{value!r} is not a text field a model writes; use one of {', '.join(MAPPABLE_FIELDS)}")
    return value


class Categorical(_Kind):
    """Values with weights (`weights: {en: 70, zh: 30}`) or equal ones (`values: [a, b]`)."""

    kind: Literal["categorical"] = "categorical"
    weights: dict[str, float]
    #: The persona field the value must appear in.
    field: str | None = None

    @field_validator("weights", mode="before")
    @classmethod
    def _weights(cls, value: Any) -> Any:
        if not isinstance(value, Mapping) or not value:
            raise ValueError("expected a mapping of value to weight, e.g. {en: 70, zh: 30}")
        for key, weight in value.items():
            if not isinstance(key, str) or not key.strip():
                raise ValueError(f"value {key!r} is not text; quote it")
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
                raise ValueError(f"the weight of {key!r} is not a number")
            if weight <= 0:
                raise ValueError(
                    f"the weight of {key!r} is {weight}; weights must be above 0 (leave a value out instead)"
                )
        return value

    @field_validator("field")
    @classmethod
    def _field(cls, value: str | None) -> str | None:
        return _check_field(value)

    def values(self) -> list[str]:
        return list(self.weights)


class NumberRange(_Kind):
    """Numbers between two bounds, inclusive: whole numbers when both bounds are whole."""

    kind: Literal["range"] = "range"
    range: tuple[float, float]
    #: Decimal places kept of a drawn number when a bound is not whole.
    decimals: int = 2
    whole: bool = True

    @field_validator("range", mode="before")
    @classmethod
    def _range(cls, value: Any) -> Any:
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise ValueError("expected two numbers, [low, high]")
        if any(
            isinstance(item, bool) or not isinstance(item, (int, float)) or not math.isfinite(item) for item in value
        ):
            raise ValueError("expected two numbers, [low, high]")
        if value[0] > value[1]:
            raise ValueError(f"the low bound {value[0]} is above the high bound {value[1]}")
        return value

    @field_validator("decimals")
    @classmethod
    def _decimals(cls, value: int) -> int:
        if not 0 <= value <= 6:
            raise ValueError("decimals must be between 0 and 6")
        return value


class Subset(_Kind):
    """`k` different items of a list (`k: 2, of: [chess, hiking, jazz]`), in the list's order."""

    kind: Literal["subset"] = "subset"
    k: int
    of: list[str]

    @field_validator("of")
    @classmethod
    def _items(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("the list to draw from is empty")
        if len(set(value)) != len(value):
            raise ValueError("the list to draw from repeats an item")
        return value


class DatasetRows(_Kind):
    """One row of a dataset per persona, as a mapping of column to value."""

    kind: Literal["rows"] = "rows"
    rows: str
    columns: list[str] | None = None
    #: Persona fields that must equal a column of the row: `{name: contact_name}`.
    fields: dict[str, str] = {}
    format: str | None = None

    @field_validator("fields")
    @classmethod
    def _fields(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            _check_field(name)
        return value


class Conditional(_Kind):
    """A distribution per value of another categorical attribute: `given: age_band, cases: {...}`."""

    kind: Literal["conditional"] = "conditional"
    given: str
    cases: dict[str, Any]
    field: str | None = None

    @field_validator("field")
    @classmethod
    def _field(cls, value: str | None) -> str | None:
        return _check_field(value)


Distribution = Categorical | NumberRange | Subset | DatasetRows | Conditional

#: Which keys pick which kind of distribution, in the order a message lists them.
_KINDS: tuple[tuple[str, type[_Kind]], ...] = (
    ("weights", Categorical),
    ("values", Categorical),
    ("range", NumberRange),
    ("k", Subset),
    ("of", Subset),
    ("given", Conditional),
    ("cases", Conditional),
    ("rows", DatasetRows),
)


@dataclass(frozen=True)
class PlanCheck:
    """What a reply's persona says against its draws: fields to fill in, and contradictions."""

    #: Persona fields a mapped attribute gives and the reply left out.
    fill: dict[str, str]
    #: Each contradiction or missing echo, phrased for the model.
    problems: list[str]


@dataclass(frozen=True)
class SamplingPlan:
    """A validated plan: attributes in drawing order (an attribute after those it depends on)."""

    attributes: Mapping[str, Distribution]
    count: int | None = None
    seed: int | None = None
    source: str = "<plan>"
    #: The rows of each `rows:` attribute, read when the plan was loaded.
    rows: Mapping[str, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)

    # -- drawing ---------------------------------------------------------------------------

    def draw(self, count: int, seed: int | None = None) -> list[dict[str, Any]]:
        """The attributes of `count` personas; the same plan, count and seed give the same draws."""
        seed = self.seed if seed is None else seed
        seed = 0 if seed is None else seed
        draws: list[dict[str, Any]] = [{} for _ in range(count)]
        for name, dist in self.attributes.items():
            rng = random.Random(f"profiles-plan:{seed}:{name}")
            if isinstance(dist, Conditional):
                groups: dict[str, list[int]] = {}
                for index, drawn in enumerate(draws):
                    groups.setdefault(str(drawn[dist.given]), []).append(index)
                # groups in the order of the parent's values, so draws do not depend on dict order
                for value in self._values_of(dist.given):
                    members = groups.get(value, [])
                    case = self._case(dist, value)
                    for index, item in zip(members, self._draw_one(name, case, len(members), rng), strict=True):
                        draws[index][name] = item
            else:
                for index, item in enumerate(self._draw_one(name, dist, count, rng)):
                    draws[index][name] = item
        return draws

    def _draw_one(self, name: str, dist: Any, count: int, rng: random.Random) -> list[Any]:
        if isinstance(dist, Categorical):
            values = [value for value, times in quotas(dist.weights, count).items() for _ in range(times)]
            rng.shuffle(values)
            return values
        if isinstance(dist, NumberRange):
            low, high = dist.range
            if dist.whole:
                return [rng.randint(int(low), int(high)) for _ in range(count)]
            return [round(rng.uniform(low, high), dist.decimals) for _ in range(count)]
        if isinstance(dist, Subset):
            order = {item: index for index, item in enumerate(dist.of)}
            return [sorted(rng.sample(dist.of, dist.k), key=order.__getitem__) for _ in range(count)]
        if isinstance(dist, DatasetRows):
            rows = self.rows[name]
            drawn: list[Any] = []
            while len(drawn) < count:
                order = list(range(len(rows)))
                rng.shuffle(order)
                drawn.extend(dict(rows[index]) for index in order[: count - len(drawn)])
            return drawn
        raise AssertionError(f"cannot draw {dist!r}")

    def _case(self, dist: Conditional, value: str) -> Any:
        return dist.cases[value]

    def _values_of(self, name: str) -> list[str]:
        """Every value a categorical (or conditional categorical) attribute can take, in plan order."""
        dist = self.attributes[name]
        if isinstance(dist, Categorical):
            return dist.values()
        if isinstance(dist, Conditional):
            seen: dict[str, None] = {}
            for case in dist.cases.values():
                seen.update(dict.fromkeys(case.values()))
            return list(seen)
        return []

    # -- targets, for reports --------------------------------------------------------------

    def targets(self, count: int) -> dict[str, dict[str, float]]:
        """Expected count per value of each categorical attribute, for `count` personas.

        For an unconditional categorical attribute these are its exact quotas; for a conditional
        one, the expected counts given the parent's quotas.
        """
        result: dict[str, dict[str, float]] = {}
        for name, dist in self.attributes.items():
            if isinstance(dist, Categorical):
                result[name] = {value: float(times) for value, times in quotas(dist.weights, count).items()}
            elif isinstance(dist, Conditional) and name in self.categorical():
                parent = result.get(dist.given)
                if parent is None:
                    continue
                expected: dict[str, float] = {}
                for value, times in parent.items():
                    case = dist.cases[value]
                    total = sum(case.weights.values())
                    for item, weight in case.weights.items():
                        expected[item] = expected.get(item, 0.0) + times * weight / total
                result[name] = expected
        return result

    def categorical(self) -> list[str]:
        """Attributes whose values are texts from a fixed set: quotas hold for them."""
        return [
            name
            for name, dist in self.attributes.items()
            if isinstance(dist, Categorical)
            or (isinstance(dist, Conditional) and all(isinstance(case, Categorical) for case in dist.cases.values()))
        ]

    # -- the prompt and the reply ----------------------------------------------------------

    def field_map(self) -> dict[str, tuple[str, str | None]]:
        """Persona field → (attribute, column or None) for every attribute that maps onto a field."""
        mapped: dict[str, tuple[str, str | None]] = {}
        for name, dist in self.attributes.items():
            if isinstance(dist, (Categorical, Conditional)) and dist.field:
                mapped[dist.field] = (name, None)
            elif isinstance(dist, DatasetRows):
                for persona_field, column in dist.fields.items():
                    mapped[persona_field] = (name, column)
        return mapped

    def describe(self, draw: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One persona's draws as the prompt shows them: name, value as JSON text, field, description."""
        fields = {attribute: persona_field for persona_field, (attribute, column) in self.field_map().items()
                  if column is None}
        shown = []
        for name, dist in self.attributes.items():
            value = draw[name]
            columns = (
                [{"field": persona_field, "column": column} for persona_field, column in dist.fields.items()]
                if isinstance(dist, DatasetRows)
                else []
            )
            shown.append(
                {
                    "name": name,
                    "value": value if isinstance(value, str) else json.dumps(value, ensure_ascii=False),
                    "field": fields.get(name),
                    "columns": columns,
                    "description": dist.description,
                    "echo": name not in fields,
                }
            )
        return shown

    def echoed(self, draw: Mapping[str, Any]) -> dict[str, Any]:
        """The attributes a reply must echo back under ``attributes``: those mapped onto no field."""
        fields = {attribute for attribute, column in self.field_map().values() if column is None}
        return {name: value for name, value in draw.items() if name not in fields}

    def check(self, item: Mapping[str, Any], draw: Mapping[str, Any]) -> PlanCheck:
        """Compare a reply's persona with the attributes drawn for it."""
        fill: dict[str, str] = {}
        problems: list[str] = []
        for persona_field, (attribute, column) in self.field_map().items():
            expected = draw[attribute] if column is None else draw[attribute].get(column)
            if expected is None or expected == "":
                continue
            expected = str(expected)
            given = item.get(persona_field)
            if given is None or (isinstance(given, str) and not given.strip()):
                fill[persona_field] = expected
            elif not _agrees(expected, given):
                source = f"attribute '{attribute}'" + (f", column '{column}'" if column else "")
                problems.append(
                    f"field '{persona_field}': the plan drew {expected!r} for this persona ({source}), "
                    f"but the persona says {_short(given)}; set it to {expected!r}"
                )
        echoes = item.get("attributes")
        wanted = self.echoed(draw)
        if wanted and not isinstance(echoes, Mapping):
            example = json.dumps(wanted, ensure_ascii=False)
            problems.append(f"field 'attributes': missing; echo the drawn attributes as \"attributes\": {example}")
            return PlanCheck(fill, problems)
        for name, expected in wanted.items():
            shown = json.dumps(expected, ensure_ascii=False)
            if name not in echoes:
                problems.append(f"attribute '{name}': missing from \"attributes\"; echo it as \"{name}\": {shown}")
            elif not _agrees(expected, echoes[name]):
                problems.append(
                    f"attribute '{name}': the plan drew {shown} for this persona, but the reply says "
                    f"{_short(echoes[name])}; write the persona for {shown} and echo that value"
                )
        return PlanCheck(fill, problems)

    def agrees(self, item: Mapping[str, Any], draw: Mapping[str, Any]) -> bool:
        """Whether a reply's persona contradicts nothing drawn for it."""
        return not self.check(item, draw).problems


def quotas(weights: Mapping[str, float], count: int) -> dict[str, int]:
    """Exact counts per value for `count` draws: the largest-remainder (Hamilton) method.

    Each value gets the whole part of its share; the rest go one each to the largest
    remainders, earlier values first on ties, so the counts add up to `count` exactly.
    """
    total = sum(weights.values())
    shares = {value: count * weight / total for value, weight in weights.items()}
    counts = {value: int(math.floor(share + 1e-9)) for value, share in shares.items()}
    left = count - sum(counts.values())
    order = sorted(weights, key=lambda value: (-(shares[value] - counts[value]), list(weights).index(value)))
    for value in order[:left]:
        counts[value] += 1
    return counts


def _normal(value: Any) -> Any:
    if isinstance(value, str):
        text = " ".join(value.split()).casefold()
        try:
            number = float(text)
        except ValueError:
            return text
        return number if math.isfinite(number) else text
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    return value


def _agrees(expected: Any, given: Any) -> bool:
    """Whether a reply's value says what was drawn: case, spacing and list order aside."""
    if isinstance(expected, Mapping):
        return isinstance(given, Mapping) and all(
            key in given and _agrees(value, given[key]) for key, value in expected.items() if value not in (None, "")
        )
    if isinstance(expected, (list, tuple)):
        if isinstance(given, str):
            given = [part for part in (piece.strip() for piece in given.split(",")) if part]
        if not isinstance(given, (list, tuple)) or len(given) != len(expected):
            return False
        return sorted(map(str, map(_normal, expected))) == sorted(map(str, map(_normal, given)))
    left, right = _normal(expected), _normal(given)
    if isinstance(left, float) and isinstance(right, float):
        return abs(left - right) <= 1e-9 * max(1.0, abs(left))
    return left == right


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:79] + "…"


# -- reading a plan -----------------------------------------------------------------------------


class _PlanFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    count: int | None = None
    seed: int | None = None
    attributes: dict[str, Any]

    @field_validator("count")
    @classmethod
    def _count(cls, value: int | None) -> int | None:
        if value is not None and not 1 <= value <= MAX_COUNT:
            raise ValueError(f"count must be from 1 to {MAX_COUNT:,}; split a bigger population into runs")
        return value

    @field_validator("attributes", mode="before")
    @classmethod
    def _attributes(cls, value: Any) -> Any:
        if not isinstance(value, Mapping) or not value:
            raise ValueError("expected a mapping of attribute name to its distribution")
        if len(value) > MAX_ATTRIBUTES:
            raise ValueError(f"over {MAX_ATTRIBUTES} attributes; a prompt lists every one")
        return value


def _issues(exc: ValidationError, prefix: tuple[Any, ...]) -> list[ConfigIssue]:
    issues = []
    for error in exc.errors(include_url=False):
        loc = (*prefix, *error["loc"])
        if error["type"] == "extra_forbidden":
            message = "unknown key"
        elif error["type"] == "missing":
            message = "is required"
        else:
            message = error["msg"].removeprefix("Value error, ")
        issues.append(ConfigIssue(message, ".".join(map(str, loc)), loc=loc, code=error["type"]))
    return issues


def _distribution(data: Any, loc: tuple[Any, ...], issues: list[ConfigIssue], *, nested: bool = False) -> Any:
    """Validate one distribution (recursively for `cases`), collecting problems into `issues`."""
    where = ".".join(map(str, loc))
    if not isinstance(data, Mapping):
        issues.append(ConfigIssue("expected a mapping that says how to draw it, e.g. {weights: {a: 1, b: 2}}",
                                  where, loc=loc))
        return None
    kinds = {kind for key, kind in _KINDS if key in data}
    if len(kinds) != 1:
        keys = "weights, values, range, k and of, given and cases, or rows"
        found = "none of them" if not kinds else "keys of several"
        issues.append(ConfigIssue(f"say how to draw it with one of {keys}; found {found}", where, loc=loc))
        return None
    (kind,) = kinds
    data = dict(data)
    if kind is Categorical and "values" in data:
        values = data.pop("values")
        if "weights" in data:
            issues.append(ConfigIssue("give weights or values, not both", where, loc=loc))
            return None
        if not isinstance(values, list) or not values or not all(isinstance(item, str) for item in values):
            issues.append(ConfigIssue("expected a list of texts, e.g. [calm, brisk]", f"{where}.values",
                                      loc=(*loc, "values")))
            return None
        if len(set(values)) != len(values):
            issues.append(ConfigIssue("repeats a value", f"{where}.values", loc=(*loc, "values")))
            return None
        data["weights"] = dict.fromkeys(values, 1)
    if kind is NumberRange and isinstance(data.get("range"), (list, tuple)):
        data["whole"] = all(isinstance(item, int) and not isinstance(item, bool) for item in data["range"])
    if kind is Conditional:
        if nested:
            issues.append(ConfigIssue("a case cannot itself depend on another attribute", where, loc=loc))
            return None
        cases = data.get("cases")
        if not isinstance(cases, Mapping) or not cases:
            issues.append(ConfigIssue("expected a mapping of the other attribute's values to distributions",
                                      f"{where}.cases", loc=(*loc, "cases")))
            return None
        data["cases"] = {
            str(value): _distribution(case, (*loc, "cases", value), issues, nested=True)
            for value, case in cases.items()
        }
        if any(case is None for case in data["cases"].values()):
            return None
        if any(isinstance(case, DatasetRows) for case in data["cases"].values()):
            issues.append(ConfigIssue("a case cannot draw dataset rows", where, loc=loc))
            return None
    try:
        made = kind(**data)
    except ValidationError as exc:
        issues.extend(_issues(exc, loc))
        return None
    if isinstance(made, Subset) and not 1 <= made.k <= len(made.of):
        issues.append(ConfigIssue(f"k is {made.k}; it must be between 1 and the {len(made.of)} items of the list",
                                  f"{where}.k", loc=(*loc, "k")))
        return None
    if isinstance(made, Conditional) and made.field and not all(
        isinstance(case, Categorical) for case in made.cases.values()
    ):
        issues.append(ConfigIssue("only categorical cases can fill a field", f"{where}.field", loc=(*loc, "field")))
        return None
    return made


def _order(attributes: dict[str, Any], issues: list[ConfigIssue], categorical: set[str]) -> list[str]:
    """Attributes in drawing order: each after the one it is conditional on."""
    for name, dist in attributes.items():
        if isinstance(dist, Conditional):
            loc = ("attributes", name, "given")
            if dist.given not in attributes:
                issues.append(ConfigIssue(
                    f"names {dist.given!r}, which is not an attribute of this plan; attributes are "
                    f"{', '.join(attributes)}", ".".join(loc), loc=loc))
            elif dist.given == name:
                issues.append(ConfigIssue("an attribute cannot depend on itself", ".".join(loc), loc=loc))
            elif dist.given not in categorical:
                issues.append(ConfigIssue(
                    f"{dist.given!r} is not categorical; a condition needs an attribute with weights or values",
                    ".".join(loc), loc=loc))
    if issues:
        return list(attributes)
    order: list[str] = []
    placed: set[str] = set()

    def place(name: str, chain: tuple[str, ...]) -> None:
        if name in placed:
            return
        if name in chain:
            cycle = " → ".join((*chain[chain.index(name):], name))
            loc = ("attributes", name, "given")
            issues.append(ConfigIssue(f"conditions go round in a circle: {cycle}", ".".join(loc), loc=loc))
            return
        dist = attributes[name]
        if isinstance(dist, Conditional):
            place(dist.given, (*chain, name))
        placed.add(name)
        order.append(name)

    for name in attributes:
        place(name, ())
    return order


def _read_rows(
    name: str, dist: DatasetRows, base_dir: Path, issues: list[ConfigIssue]
) -> tuple[Mapping[str, Any], ...]:
    from ._rows import read_rows

    loc = ("attributes", name, "rows")
    where = ".".join(loc)
    pure = PurePosixPath(dist.rows.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or dist.rows[1:3] in (":\\", ":/"):
        issues.append(ConfigIssue("name the dataset relative to the plan, without '..'", where, loc=loc))
        return ()
    path = base_dir / pure
    root = base_dir.resolve()
    try:
        inside = path.resolve().is_relative_to(root)
    except OSError:
        inside = False
    if not inside:
        issues.append(ConfigIssue("the dataset leads outside the plan's folder", where, loc=loc))
        return ()
    rows: list[Mapping[str, Any]] = []
    try:
        for raw in read_rows(path, dist.format):
            if raw.problem is not None:
                issues.append(ConfigIssue(f"{path}: row {raw.row}: {raw.problem}", where, loc=loc))
                return ()
            data = dict(raw.data or {})
            if dist.columns is not None:
                missing = [column for column in dist.columns if column not in data]
                if missing:
                    issues.append(ConfigIssue(f"{path}: row {raw.row} has no column {', '.join(map(repr, missing))}",
                                              where, loc=loc))
                    return ()
                data = {column: data[column] for column in dist.columns}
            rows.append(data)
            if len(rows) > MAX_PLAN_ROWS:
                issues.append(ConfigIssue(f"{path} holds over {MAX_PLAN_ROWS} rows; a plan keeps them in memory",
                                          where, loc=loc))
                return ()
    except FactoryError as exc:
        issues.append(ConfigIssue(exc.message, where, loc=loc))
        return ()
    if not rows:
        issues.append(ConfigIssue(f"{path} holds no rows", where, loc=loc))
        return ()
    for persona_field, column in dist.fields.items():
        if column not in rows[0]:
            loc_field = ("attributes", name, "fields", persona_field)
            issues.append(ConfigIssue(f"column {column!r} is not in {path}", ".".join(loc_field), loc=loc_field))
    return tuple(rows)


def parse_plan(text: str, *, file: str = "<plan>", base_dir: Path | None = None) -> SamplingPlan:
    """Validate a plan's YAML text; every problem is reported at once with file, line and column.

    Dataset paths are relative to `base_dir` (the working directory when None) and stay inside it.

    Raises:
        ConfigError: the plan is invalid.
    """
    from profiles.safe_yaml import locator, read_documents

    documents, issues, _ = read_documents(text, file)
    issues = [replace(issue, file=file) for issue in issues]
    if len(documents) != 1 or not isinstance(documents[0], Mapping):
        raise ConfigError(
            issues or [ConfigIssue("a plan is one YAML mapping with attributes:, and optionally count: and seed:",
                                   file=file, line=1, column=1)]
        )
    problems: list[ConfigIssue] = []
    try:
        top = _PlanFile(**{key: value for key, value in documents[0].items() if isinstance(key, str)})
    except ValidationError as exc:
        problems.extend(_issues(exc, ()))
        top = None
    attributes: dict[str, Any] = {}
    if top is not None:
        for name, data in top.attributes.items():
            made = _distribution(data, ("attributes", name), problems)
            if made is not None:
                attributes[name] = made
    rows: dict[str, tuple[Mapping[str, Any], ...]] = {}
    if not problems:
        categorical = {
            name for name, dist in attributes.items()
            if isinstance(dist, Categorical)
            or (isinstance(dist, Conditional) and all(isinstance(case, Categorical) for case in dist.cases.values()))
        }
        order = _order(attributes, problems, categorical)
        for name, dist in attributes.items():
            if isinstance(dist, Conditional) and dist.given in attributes and not problems:
                parent = SamplingPlan(attributes)._values_of(dist.given)
                missing = [value for value in parent if value not in dist.cases]
                extra = [value for value in dist.cases if value not in parent]
                loc = ("attributes", name, "cases")
                if missing:
                    problems.append(ConfigIssue(f"no case for {', '.join(map(repr, missing))} of {dist.given!r}",
                                                ".".join(loc), loc=loc))
                if extra:
                    problems.append(ConfigIssue(
                        f"case(s) {', '.join(map(repr, extra))} are not values of {dist.given!r}",
                        ".".join(loc),
                        loc=loc,
                    ))
        mapped: dict[str, str] = {}
        for name, dist in attributes.items():
            targets = [dist.field] if isinstance(dist, (Categorical, Conditional)) and dist.field else []
            targets += list(dist.fields) if isinstance(dist, DatasetRows) else []
            for persona_field in targets:
                if persona_field in mapped:
                    loc = ("attributes", name)
                    problems.append(ConfigIssue(
                        f"fills field {persona_field!r}, which {mapped[persona_field]!r} fills already",
                        ".".join(loc), loc=loc))
                mapped[persona_field] = name
        for name, dist in attributes.items():
            if isinstance(dist, DatasetRows):
                rows[name] = _read_rows(name, dist, base_dir or Path.cwd(), problems)
        attributes = {name: attributes[name] for name in order}
    if problems or issues:
        keys = {issue.loc for issue in problems if issue.code == "extra_forbidden"}
        locate = locator(text, 0, keys)
        located = []
        for issue in problems:
            line, column = locate(issue.loc) if issue.loc else (None, None)
            located.append(replace(issue, file=file, line=line, column=column))
        all_issues = sorted([*issues, *located], key=lambda issue: (issue.line or 0, issue.column or 0))
        raise ConfigError(all_issues)
    assert top is not None
    return SamplingPlan(attributes, count=top.count, seed=top.seed, source=file, rows=rows)


def load_plan(path: str | Path) -> SamplingPlan:
    """Read and validate a plan file (bounded like a persona file); datasets are read beside it.

    Raises:
        ConfigError: the file cannot be read or the plan is invalid.
    """
    from profiles.safe_yaml import as_path, read_text

    path = as_path(path, kind="sampling plan")
    return parse_plan(read_text(path, kind="sampling plan"), file=str(path), base_dir=path.parent)


def plan_from(value: SamplingPlan | str | Path | Mapping[str, Any] | None) -> SamplingPlan | None:
    """A plan given as a `SamplingPlan`, a path to its file, or its data as a mapping."""
    if value is None or isinstance(value, SamplingPlan):
        return value
    if isinstance(value, Mapping):
        import yaml

        return parse_plan(yaml.safe_dump(dict(value), allow_unicode=True, sort_keys=False))
    return load_plan(value)


def draws_fingerprint(draws: Sequence[Mapping[str, Any]]) -> str:
    """A short digest of a run's draws, so a resumed run can tell that its draws are unchanged."""
    import hashlib

    digest = hashlib.sha256()
    for draw in draws:
        digest.update(json.dumps(draw, ensure_ascii=False, sort_keys=True, default=str).encode("utf-8") + b"\n")
    return digest.hexdigest()[:16]
