"""Sampling plans: validated like personas, drawn reproducibly, with exact quotas."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profiles.errors import ConfigError
from profiles.factories.plan import load_plan, parse_plan, quotas

PLAN = """\
count: 100
seed: 7
attributes:
  locale:
    weights: {en: 70, zh: 30}
    field: language
  temperament:
    values: [calm, brisk, playful]
    description: how the persona talks
  age:
    range: [18, 80]
  height_m:
    range: [1.5, 2.0]
  hobbies:
    k: 2
    of: [chess, hiking, jazz, pottery]
  occupation:
    given: age_band
    cases:
      young: {weights: {student: 3, barista: 1}}
      old: {values: [teacher, retired]}
  age_band:
    weights: {young: 1, old: 3}
  customer:
    rows: customers.csv
    columns: [contact_name, segment]
"""


@pytest.fixture
def plan_file(tmp_path: Path) -> Path:
    (tmp_path / "customers.csv").write_text(
        "customer_id,contact_name,segment\n"
        + "".join(f"{n},Name {n},{'SMB' if n % 2 else 'Ent'}\n" for n in range(1, 8)),
        encoding="utf-8",
    )
    path = tmp_path / "plan.yaml"
    path.write_text(PLAN, encoding="utf-8")
    return path


def test_every_kind_loads_in_drawing_order(plan_file):
    """Each kind of distribution is read; a conditional attribute is drawn after the one it depends on."""
    plan = load_plan(plan_file)
    assert plan.count == 100 and plan.seed == 7
    order = list(plan.attributes)
    assert order.index("age_band") < order.index("occupation")
    assert [type(dist).__name__ for dist in plan.attributes.values()].count("Categorical") == 3
    assert plan.field_map() == {"language": ("locale", None)}
    assert plan.categorical() == ["locale", "temperament", "age_band", "occupation"]


def test_draws_are_reproducible_and_seeded(plan_file):
    """The same seed gives the same draws; another seed other draws."""
    plan = load_plan(plan_file)
    assert plan.draw(50) == plan.draw(50) == plan.draw(50, 7)
    assert plan.draw(50, 8) != plan.draw(50)


def test_attribute_streams_do_not_depend_on_each_other(plan_file, tmp_path):
    """Adding an attribute leaves the draws of the others as they were."""
    plan = load_plan(plan_file)
    more = tmp_path / "more.yaml"
    more.write_text(PLAN + "  mood:\n    values: [happy, sad]\n", encoding="utf-8")
    first, second = plan.draw(40), load_plan(more).draw(40)
    assert [{k: v for k, v in draw.items() if k != "mood"} for draw in second] == first


def test_quotas_are_exact_and_values_in_range(plan_file):
    """70/30 of 100, 34/33/33 for three equal values, conditional quotas within each group."""
    plan = load_plan(plan_file)
    draws = plan.draw(100)
    assert Counter(draw["locale"] for draw in draws) == {"en": 70, "zh": 30}
    assert Counter(draw["temperament"] for draw in draws) == {"calm": 34, "brisk": 33, "playful": 33}
    assert Counter(draw["age_band"] for draw in draws) == {"young": 25, "old": 75}
    young = Counter(draw["occupation"] for draw in draws if draw["age_band"] == "young")
    old = Counter(draw["occupation"] for draw in draws if draw["age_band"] == "old")
    assert young == {"student": 19, "barista": 6} and old == {"teacher": 38, "retired": 37}
    assert all(18 <= draw["age"] <= 80 and isinstance(draw["age"], int) for draw in draws)
    assert all(1.5 <= draw["height_m"] <= 2.0 and round(draw["height_m"], 2) == draw["height_m"] for draw in draws)
    assert all(len(set(draw["hobbies"])) == 2 for draw in draws)
    order = ["chess", "hiking", "jazz", "pottery"]
    assert all(draw["hobbies"] == sorted(draw["hobbies"], key=order.index) for draw in draws)
    assert plan.targets(100)["occupation"] == {"student": 18.75, "barista": 6.25, "teacher": 37.5, "retired": 37.5}


def test_rows_are_drawn_without_replacement_then_again(plan_file):
    """Seven rows for fourteen personas: every row twice, each pass a shuffle of all of them."""
    draws = load_plan(plan_file).draw(14)
    names = [draw["customer"]["contact_name"] for draw in draws]
    assert sorted(names[:7]) == sorted(names[7:]) == sorted(f"Name {n}" for n in range(1, 8))
    assert set(draws[0]["customer"]) == {"contact_name", "segment"}


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.text("abcdef", min_size=1, max_size=3), st.integers(1, 1000) | st.floats(0.01, 50),
                    min_size=1, max_size=6),
    st.integers(0, 500),
)
def test_quotas_add_up_and_round_fairly(weights, count):
    """Largest remainder: the counts add up to the total and each is its share rounded down or up."""
    counts = quotas(weights, count)
    total = sum(weights.values())
    assert sum(counts.values()) == count and set(counts) == set(weights)
    for value, times in counts.items():
        share = count * weights[value] / total
        assert share - 1 < times < share + 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=5), st.integers(1, 300), st.integers(0, 10**6))
def test_drawn_categories_match_their_quotas(weights, count, seed):
    """For any weights, count and seed, the drawn values occur exactly as often as their quotas."""
    values = {f"v{index}": weight for index, weight in enumerate(weights)}
    plan = parse_plan("attributes:\n  x:\n    weights: {" + ", ".join(f"{k}: {w}" for k, w in values.items()) + "}\n")
    drawn = Counter(draw["x"] for draw in plan.draw(count, seed))
    assert {value: drawn.get(value, 0) for value in values} == quotas(values, count)


def test_check_finds_contradictions_and_fills_fields(plan_file):
    """A mapped field must agree (or is filled in); every other attribute must be echoed as drawn."""
    plan = load_plan(plan_file)
    draw = plan.draw(1)[0]
    echo = {name: value for name, value in draw.items() if name != "locale"}
    good = plan.check({"name": "A", "attributes": {**echo, "temperament": echo["temperament"].upper()}}, draw)
    assert good.problems == [] and good.fill == {"language": draw["locale"]}
    hobbies = list(reversed(echo["hobbies"]))  # order does not matter
    assert plan.check({"language": draw["locale"], "attributes": {**echo, "hobbies": hobbies}}, draw).problems == []
    bad = plan.check({"language": "fr", "attributes": {**echo, "age": echo["age"] + 1}}, draw)
    assert len(bad.problems) == 2
    assert bad.problems[0].startswith(f"field 'language': the plan drew {draw['locale']!r} for this persona")
    assert f"attribute 'age': the plan drew {echo['age']} for this persona, but the reply says {echo['age'] + 1}" in (
        bad.problems[1]
    )
    missing = plan.check({}, draw)
    assert missing.problems[0].startswith("field 'attributes': missing; echo the drawn attributes")


BAD_PLAN = """\
attributes:
  a:
    weights: {x: 0, y: 2}
  b:
    range: [5, 1]
  c:
    k: 5
    of: [p, q]
  d:
    given: nowhere
    cases: {x: {values: [u]}}
  e:
    colour: red
  f:
    values: [one]
    field: colour
  g:
    rows: ../outside.csv
"""


def test_every_problem_is_reported_with_its_line(tmp_path):
    """A bad plan names each problem with file, line and attribute, all at once."""
    path = tmp_path / "plan.yaml"
    path.write_text(BAD_PLAN, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_plan(path)
    found = {(issue.line, issue.field): issue.message for issue in caught.value.issues}
    assert all(issue.file == str(path) for issue in caught.value.issues)
    assert "weights must be above 0" in found[(3, "attributes.a.weights")]
    assert "the low bound 5 is above the high bound 1" in found[(5, "attributes.b.range")]
    assert "k is 5; it must be between 1 and the 2 items" in found[(7, "attributes.c.k")]
    assert "say how to draw it with one of weights, values" in found[(13, "attributes.e")]
    assert "'colour' is not a text field a model writes" in found[(16, "attributes.f.field")]


def test_conditions_are_checked(tmp_path):
    """An unknown attribute, a circle, a missing case and a dataset outside the folder are refused."""
    cases = {
        "  a:\n    given: nowhere\n    cases: {x: {values: [u]}}\n": "names 'nowhere', which is not an attribute",
        "  a:\n    given: b\n    cases: {x: {values: [u]}}\n  b:\n    given: a\n    cases: {u: {values: [x]}}\n":
            "conditions go round in a circle: a → b → a",
        "  a:\n    values: [x, y]\n  b:\n    given: a\n    cases: {x: {values: [u]}}\n": "no case for 'y' of 'a'",
        "  a:\n    rows: ../outside.csv\n": "relative to the plan, without '..'",
        "  a:\n    values: [x]\n    field: language\n  b:\n    values: [y]\n    field: language\n":
            "fills field 'language', which 'a' fills already",
    }
    for body, message in cases.items():
        with pytest.raises(ConfigError, match=message) as caught:
            parse_plan("attributes:\n" + body, file="p.yaml", base_dir=tmp_path)
        assert all(issue.line for issue in caught.value.issues), body


def test_plan_yaml_is_read_safely(tmp_path):
    """Duplicate keys are refused like in a persona file."""
    with pytest.raises(ConfigError, match="duplicate key 'a'"):
        parse_plan("attributes:\n  a: {values: [x]}\n  a: {values: [y]}\n")
