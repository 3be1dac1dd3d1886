"""`profiles report`: every figure equals one computed here, independently of the library's code paths."""

from __future__ import annotations

import json
import random
import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from profiles.cli import cli
from profiles.factories.distinct import persona_text
from profiles.factories.plan import parse_plan, quotas
from profiles.report import diversity_report, read_personas
from profiles.similarity import MinHasher

PLAN = """\
attributes:
  locale:
    weights: {en: 3, zh: 1}
  age:
    range: [20, 60]
  hobbies:
    k: 1
    of: [chess, jazz]
"""


def _words(rng: random.Random, count: int) -> str:
    return " ".join("".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3)) for _ in range(count))


def population(tmp_path: Path, count: int = 40) -> tuple[Path, list[dict]]:
    """A JSONL file of personas with plan metadata, a few near-duplicates and a repeated name."""
    rng = random.Random(4)
    plan = parse_plan(PLAN)
    draws = plan.draw(count, 1)
    # skew one value so the deviation is not zero: the first zh becomes en
    first_zh = next(index for index, draw in enumerate(draws) if draw["locale"] == "zh")
    draws[first_zh] = {**draws[first_zh], "locale": "en"}
    personas = []
    for index, draw in enumerate(draws):
        persona = {"name": f"Person {index}", "role": "Clerk", "desc": _words(rng, 30), "metadata": {"plan": draw}}
        if index % 10 == 9:  # a near-duplicate of the one before
            words = personas[-1]["desc"].split()
            persona["desc"] = " ".join(words[:-1] + ["zzzzzz"])
        personas.append(persona)
    personas[5]["name"] = "PERSON 0"  # the same name once normalised
    path = tmp_path / "personas.jsonl"
    path.write_text(
        "".join(json.dumps({**persona, "_origin": {"batch": 0}}) + "\n" for persona in personas), encoding="utf-8"
    )
    return path, personas


def expected_similarity(personas: list[dict]) -> tuple[list[int], dict[str, float]]:
    """Brute force: each persona's best estimated similarity to any other, binned by tenths."""
    signatures = MinHasher().signatures([persona_text(persona) for persona in personas])
    best = []
    for i, left in enumerate(signatures):
        best.append(max(float((left == right).mean()) for j, right in enumerate(signatures) if j != i))
    bins = [0] * 10
    for value in best:
        bins[min(9, int(value * 10 + 1e-9))] += 1
    shares = {level: sum(value >= float(level) for value in best) / len(best) for level in ("0.8", "0.9")}
    return bins, shares


def test_figures_equal_those_computed_independently(tmp_path):
    """Count, distinct names, per-attribute distribution and deviation, histogram and near-duplicate shares."""
    path, personas = population(tmp_path)
    report = diversity_report(read_personas(path), parse_plan(PLAN))
    assert report.count == 40
    names = {unicodedata.normalize("NFKC", p["name"]).casefold() for p in personas}
    assert report.distinct_names == len(names) == 39
    locale, age, hobbies = report.attributes
    observed = Counter(p["metadata"]["plan"]["locale"] for p in personas)
    assert locale.kind == "categorical" and locale.counts == dict(observed)
    target = quotas({"en": 3, "zh": 1}, 40)
    assert locale.target == {value: float(times) for value, times in target.items()}
    assert locale.largest_deviation["value"] == "en"
    assert locale.largest_deviation["points"] == pytest.approx((observed["en"] - target["en"]) / 40 * 100)
    ages = [p["metadata"]["plan"]["age"] for p in personas]
    assert age.kind == "number" and age.numbers == {"min": min(ages), "mean": sum(ages) / 40, "max": max(ages)}
    items = Counter(item for p in personas for item in p["metadata"]["plan"]["hobbies"])
    assert hobbies.kind == "list" and hobbies.counts == dict(items) and hobbies.target == {"chess": 20, "jazz": 20}
    bins, shares = expected_similarity(personas)
    assert [item["count"] for item in report.histogram] == bins
    assert [(item["from"], item["to"]) for item in report.histogram][:2] == [(0.0, 0.1), (0.1, 0.2)]
    assert report.near_duplicates == shares and shares["0.8"] > 0
    assert report.neighbours == "all pairs"


def test_report_without_plan_reads_what_metadata_holds(tmp_path):
    """Without a plan, attributes come from metadata alone, with no targets."""
    path, personas = population(tmp_path)
    report = diversity_report(read_personas(path))
    assert [item.name for item in report.attributes] == ["locale", "age", "hobbies"]
    assert all(item.target is None and item.largest_deviation is None for item in report.attributes)


def test_json_output(runner, tmp_path):
    """--json prints the same figures as the library."""
    path, _ = population(tmp_path)
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN, encoding="utf-8")
    result = runner.invoke(cli, ["report", str(path), "--plan", str(plan), "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown == json.loads(json.dumps(diversity_report(read_personas(path), parse_plan(PLAN)).as_dict()))
    assert shown["count"] == 40 and len(shown["histogram"]) == 10


def test_chart_output(runner, tmp_path):
    """Without --json, a small chart: counts, shares against targets, bars, and the histogram."""
    path, _ = population(tmp_path)
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN, encoding="utf-8")
    result = runner.invoke(cli, ["report", str(path), "--plan", str(plan)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"{path}: 40 persona(s), 39 distinct name(s)" in out
    assert "locale (categorical)" in out and "target" in out and "█" in out
    assert "largest deviation: en +2.5 points (77.5% against 75.0%)" in out
    assert "nearest neighbour (all pairs)" in out and "0.9–1.0" in out
    assert "near-duplicates (nearest neighbour ≥ 0.8: " in out


def test_batch_output_is_read_too(runner, tmp_path, configs):
    """The lines `profiles batch` writes ({"persona": {...}}) report as well; batch prints the report."""
    datasets = configs / "datasets"
    out = tmp_path / "b.jsonl"
    example = [
        "batch", "--from", str(datasets / "customers.csv"), "--map", str(datasets / "customers.map.yaml"),
        "--base", str(datasets / "support_agent.yaml"),
    ]
    result = runner.invoke(cli, [*example, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"{out}: 12 persona(s), 12 distinct name(s)" in result.stderr
    assert "nearest neighbour (all pairs)" in result.stderr
    report = diversity_report(read_personas(out))
    assert report.count == 12 and sum(item["count"] for item in report.histogram) == 12
    quiet = runner.invoke(cli, [*example, "--out", str(tmp_path / "q.jsonl"), "--quiet"])
    assert quiet.exit_code == 0 and quiet.output == ""


def test_large_populations_use_buckets(tmp_path, monkeypatch):
    """Over the exact limit, neighbours come from LSH buckets and the low bins are one."""
    import profiles.report as module

    path, personas = population(tmp_path)
    monkeypatch.setattr(module, "EXACT_NEIGHBOURS", 10)
    report = diversity_report(read_personas(path))
    assert report.neighbours == "lsh ≥ 0.5"
    assert report.histogram[0] == {"from": 0.0, "to": 0.5, "count": report.histogram[0]["count"]}
    bins, shares = expected_similarity(personas)
    assert [item["count"] for item in report.histogram] == [sum(bins[:5]), *bins[5:]]
    assert report.near_duplicates == shares


def test_bad_lines_are_named(runner, tmp_path):
    """A line that is not a JSON object is an error naming file and line."""
    path = tmp_path / "p.jsonl"
    path.write_text('{"name": "A"}\nnot json\n', encoding="utf-8")
    result = runner.invoke(cli, ["report", str(path)])
    assert result.exit_code == 2 and result.stderr.startswith(f"Error: {path}:2: not JSON")
    path.write_text('{"name": "A"}\n{"name": ' + "[" * 5000 + "]" * 5000 + "}\n", encoding="utf-8")
    deep = runner.invoke(cli, ["report", str(path)])
    assert deep.exit_code == 2 and deep.stderr.startswith(f"Error: {path}:2: not JSON (nested too deeply to read")


def test_a_line_without_end_is_read_no_further_than_the_limit(runner, tmp_path):
    """/dev/zero is one line that never ends: reading it whole ran out of memory."""
    result = runner.invoke(cli, ["report", "/dev/zero"])
    assert result.exit_code == 2 and result.stderr.startswith("Error: /dev/zero:1: the line is over 1000000 bytes")
    path = tmp_path / "edge.jsonl"
    line = '{"name": "A", "role": "' + "x" * (1_000_000 - 26) + '"}\n'
    path.write_text(line * 2, encoding="utf-8")  # each line, its end included, exactly at the limit
    assert len(line.encode()) == 1_000_000
    assert runner.invoke(cli, ["report", str(path)]).exit_code == 0
