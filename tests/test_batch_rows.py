"""Row plans (profiles.batch_rows): a batch's rows made from their shape's plan give exactly the
outcome (the same JSON line, the same issues) the general way gives, one profile per row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiles.batch import BatchOptions, _RowMaker, _RowSpec, run_batch
from profiles.batch_rows import _GENERAL
from profiles.factories.dataset import DatasetProfileFactory

REPO = Path(__file__).resolve().parent.parent
DATASETS = REPO / "profile_configs" / "datasets"
QUESTION = "What changed in the Q3 report?"

#: Base personas of different kinds: field templates reading variables, fields the rows set,
#: other templated fields and the question; an own template; model settings and tools.
BASES = [
    {
        "name": "Support agent",
        "role": "Customer support agent",
        "goal": "Help the customer with their question.",
        "constraints": ["The customer is on the {{ plan }} plan.", "Keep in mind: {{ notes }}", "Be kind."],
        "variables": {"plan": "standard", "notes": "no notes on file"},
    },
    {
        "role": "Guide",
        "desc": "{{ name }} helps with {{ goal }} ({{ plan | default('none') }}); asked: {{ question }}",
        "expand_prompt": "Remember {{ desc }} and {{ company }}.",
        "constraints": ["Say {{ name }}", "{% if notes is defined %}Notes: {{ notes }}{% endif %}"],
        "variables": {"company": "ACME"},
    },
    {
        "name": "Planner",
        "role": "Planner for {{ company }}",
        "model": "gpt-4o",
        "templates": {
            "system": {
                "inline": "{{ name }}|{{ role }}|{{ question }}|{% for c in constraints %}[{{ c }}]{% endfor %}"
            },
            "user": {"inline": "Q: {{ question }} / {{ plan }} / {{ language }}"},
        },
        "variables": {"company": "Initech", "plan": "basic"},
        "tools": [{"name": "lookup", "description": "Look a thing up", "parameters": {"type": "object"}}],
        "model_settings": {"temperature": 0.2},
    },
]

MAPPING = {
    "name": "name",
    "goal": "{{ row.segment }} support for {{ row.company }}",
    "language": "language",
    "model": "model",
    "constraints": "rules",
    "variables.plan": "plan",
    "variables.notes": "notes",
}

_cell = st.one_of(
    st.just(""),
    st.sampled_from(["Ann", "Bo {{ x }}", "{% raw %}", "line one\nline two", "  padded  ", "é 中文", "{# c #}"]),
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=12),
)
#: Cells as JSON lines or Python rows may hold them: numbers, lists, nothing.
_value = st.one_of(
    _cell, st.none(), st.integers(-5, 5), st.floats(allow_nan=False, width=16), st.lists(_cell, max_size=3)
)
_rows = st.lists(
    st.fixed_dictionaries(
        {
            "id": st.integers(1, 5).map(lambda n: f"c-{n}"),
            "name": _value,
            "company": _cell,
            "segment": st.sampled_from(["SMB", "Enterprise", "{{ oops }}"]),
            "language": st.sampled_from(["en", "zh", "", "fr"]),
            "model": st.sampled_from(["", "gpt-4o", "claude-3-5-sonnet", "granite-3.1-8b"]),
            "rules": _value,
            "plan": st.sampled_from(["premium", "", "trial", 3]),
            "notes": _value,
        }
    ),
    min_size=1,
    max_size=12,
)


def _outcomes(rows, base, *, plans, render=True, question=QUESTION, encode=True, language=None, model=None):
    factory = DatasetProfileFactory(rows, MAPPING, base=base, id_column="id", on_error="skip")
    spec = _RowSpec(None, None, None, None, render, question, None, language, model, None, encode=encode)
    maker = _RowMaker(spec, factory, plans=plans)
    return [maker(raw) for raw in factory.iter_raw()], maker


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_rows, st.sampled_from(range(len(BASES))), st.booleans(), st.sampled_from([None, "zh"]))
def test_planned_rows_equal_the_general_way(rows, base, render, language):
    """Every row's outcome, its JSON line or its issues, is the general way's, whatever its cells."""
    planned, maker = _outcomes(rows, BASES[base], plans=True, render=render, language=language)
    general, _ = _outcomes(rows, BASES[base], plans=False, render=render, language=language)
    assert maker.plans is not None
    assert planned == general
    # every shape learnt was planned: the first row made both ways agreed, so no plan is wrong
    assert all(shape is not _GENERAL for shape in maker.plans._shapes.values())


@pytest.mark.parametrize("base", range(len(BASES)))
@pytest.mark.parametrize("render", [True, False])
def test_every_base_is_planned(base, render):
    """Rows of one shape after the first come from its plan, for each kind of base persona."""
    rows = [{"id": f"c-{n}", "name": f"N{n} {{{{ x }}}}", "company": f"C{n}", "segment": "SMB", "language": "zh",
             "model": "gpt-4o", "rules": f"rule {n}\nmore", "plan": f"p{n}", "notes": f"n{n}"}
            for n in range(1, 5)]  # fmt: skip
    planned, maker = _outcomes(rows, BASES[base], plans=True, render=render)
    general, _ = _outcomes(rows, BASES[base], plans=False, render=render)
    assert planned == general
    assert all(payload is not None for _result, payload in planned)
    assert maker.plans.made == 3
    assert len({payload for _result, payload in planned}) == 4  # each row's own cells are in its line


def test_most_rows_of_the_example_are_made_by_a_plan():
    """The bundled example: a plan per shape (language, cells set), all but each shape's first row from it."""
    rows = [dict(row, model="") for row in _csv_rows(DATASETS / "customers.csv")] * 5
    base = json.loads(json.dumps(BASES[0]))
    planned, maker = _outcomes(rows, base, plans=True)
    general, _ = _outcomes(rows, base, plans=False)
    assert planned == general
    assert all(payload is not None for _result, payload in planned)
    assert maker.plans.made >= len(rows) - len(maker.plans._shapes)
    assert maker.plans.made > len(rows) // 2


def test_records_equal_when_not_encoded():
    """A folder output takes the records themselves: those are equal too."""
    rows = [{"id": f"c-{n}", "name": f"N{n}", "company": "X", "segment": "SMB", "language": "en", "model": "",
             "rules": "a\nb", "plan": "trial", "notes": ""} for n in range(1, 6)]  # fmt: skip
    planned, maker = _outcomes(rows, BASES[1], plans=True, encode=False)
    general, _ = _outcomes(rows, BASES[1], plans=False, encode=False)
    assert planned == general
    assert maker.plans.made == 4
    assert isinstance(planned[1][1], dict) and planned[1][1]["prompts"]["system"]


def test_a_row_failing_in_a_planned_shape_is_reported_as_without_plans():
    """A render that fails for one row's cells (a range past the sandbox's bound) fails as the general way says."""
    base = {**BASES[0], "constraints": ["{{ range(notes | int) | length }} notes"]}
    rows = [{"id": f"c-{n}", "name": "N", "company": "X", "segment": "SMB", "language": "en", "model": "",
             "rules": "", "plan": "", "notes": "10" if n != 3 else "10000000"} for n in range(1, 6)]  # fmt: skip
    planned, maker = _outcomes(rows, base, plans=True)
    general, _ = _outcomes(rows, base, plans=False)
    assert planned == general
    assert planned[2][1] is None and planned[2][0].issues
    assert "range" in planned[2][0].issues[0].message
    assert b"10 notes" in planned[1][1]
    assert maker.plans.made == 3


def test_personas_the_plans_do_not_apply_to_go_the_general_way(monkeypatch):
    """A dynamic field (an environment read per profile) or declared inputs: no plans at all."""
    monkeypatch.setenv("AGENT_GOAL", "Help well")
    rows = [{"id": "c-1", "name": "A", "company": "X", "segment": "SMB", "language": "en", "model": "",
             "rules": "", "plan": "", "notes": ""}]  # fmt: skip
    dynamic = {**BASES[0], "goal": {"key": "AGENT_GOAL", "default": "Help"}}
    planned, maker = _outcomes(rows, dynamic, plans=True)
    assert maker.plans is None
    assert planned == _outcomes(rows, dynamic, plans=False)[0]
    declared = {**BASES[0], "inputs": {"question": {"type": "string"}}}
    assert _outcomes(rows, declared, plans=True)[1].plans is None


@pytest.mark.parametrize("workers", [1, 2])
def test_batch_output_is_the_same_without_plans(tmp_path, workers, monkeypatch):
    """End to end: `run_batch` writes the same bytes with and without plans, on one worker or two."""
    import profiles.batch as batch

    source = tmp_path / "customers.csv"
    source.write_bytes((DATASETS / "customers.csv").read_bytes())
    options = dict(source=source, mapping=DATASETS / "customers.map.yaml", base=DATASETS / "support_agent.yaml",
                   render=True, question=QUESTION, workers=workers)  # fmt: skip
    run_batch(BatchOptions(out=tmp_path / "planned.jsonl", **options))
    monkeypatch.setattr(batch.RowPlans, "applies", staticmethod(lambda base: False))
    run_batch(BatchOptions(out=tmp_path / "general.jsonl", **{**options, "workers": 1}))
    planned = (tmp_path / "planned.jsonl").read_bytes()
    assert planned == (tmp_path / "general.jsonl").read_bytes()
    assert planned.count(b"\n") == 12


def _csv_rows(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open(newline="", encoding="utf-8") as file:
        return [
            {"id": row["customer_id"], "name": row["contact_name"], "rules": "", **row} for row in csv.DictReader(file)
        ]


def test_a_cell_json_cannot_hold_goes_to_a_folder_as_without_plans():
    """A lone surrogate (possible in JSON lines input) cannot be encoded; a folder output takes the
    record itself, and learning a shape from such a row must not fail the row."""
    rows = [{"id": f"c-{n}", "name": "N\ud800" if n == 1 else f"N{n}", "company": "X", "segment": "SMB",
             "language": "en", "model": "", "rules": "", "plan": "", "notes": ""} for n in range(1, 4)]  # fmt: skip
    planned, maker = _outcomes(rows, BASES[0], plans=True, encode=False)
    general, _ = _outcomes(rows, BASES[0], plans=False, encode=False)
    assert planned == general
    assert planned[0][1]["persona"]["name"] == "N\ud800"
    assert maker.plans.made == 1  # the second row was learnt from, the third made by its plan


_text = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1, max_size=30).filter(
    lambda text: text.strip() != ""
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(_text, _text, _text, _text, _text), min_size=2, max_size=8),
    st.sampled_from(range(len(BASES))),
    st.sampled_from(["en", "zh"]),
    st.sampled_from(["", "gpt-4o", "granite-3.1-8b"]),
)
def test_rows_of_one_shape_all_come_from_its_plan(cells, base, language, model):
    """Rows that set the same fields (any text in them, braces included) share one plan and equal the general way."""
    rows = [
        {"id": f"c-{n}", "name": name, "company": company, "segment": "SMB", "language": language, "model": model,
         "rules": rules, "plan": plan, "notes": notes}
        for n, (name, company, rules, plan, notes) in enumerate(cells, start=1)
    ]  # fmt: skip
    planned, maker = _outcomes(rows, BASES[base], plans=True)
    general, _ = _outcomes(rows, BASES[base], plans=False)
    assert planned == general
    assert all(payload is not None for _result, payload in general)
    assert len(maker.plans._shapes) == 1 and maker.plans.made == len(rows) - 1


_NO_BASE_MAPPING = {**MAPPING, "role": "role"}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "id": st.integers(1, 4).map(lambda n: f"c-{n}"),
                "name": _value,
                "role": st.sampled_from(["Guide", "", "Helper {{ x }}"]),
                "company": _cell,
                "segment": st.sampled_from(["SMB", "Enterprise"]),
                "language": st.sampled_from(["en", "zh", ""]),
                "model": st.sampled_from(["", "gpt-4o"]),
                "rules": _value,
                "plan": st.one_of(st.sampled_from(["premium", ""]), st.just({"key": "HOME"})),
                "notes": _value,
            }
        ),
        min_size=1,
        max_size=10,
    ),
    st.booleans(),
)
def test_rows_without_a_base_equal_the_general_way(rows, render):
    """Without a base persona each row is the whole persona; its plan gives the general way's outcome,
    and a variable cell shaped like a dynamic entry (`{key: …}`) is left to the persona model."""

    def outcomes(plans):
        factory = DatasetProfileFactory(rows, _NO_BASE_MAPPING, id_column="id", on_error="skip")
        spec = _RowSpec(None, None, None, None, render, QUESTION, None, None, None, None, encode=True)
        maker = _RowMaker(spec, factory, plans=plans)
        return [maker(raw) for raw in factory.iter_raw()], maker

    planned, maker = outcomes(True)
    assert maker.plans is not None
    assert planned == outcomes(False)[0]
    assert all(shape is not _GENERAL for shape in maker.plans._shapes.values())


def test_rows_without_a_base_are_planned():
    rows = [{"id": f"c-{n}", "name": f"N{n}", "role": "Guide", "company": "X", "segment": "SMB", "language": "en",
             "model": "", "rules": "a\nb", "plan": "p", "notes": f"n{n}"} for n in range(1, 6)]  # fmt: skip
    factory = DatasetProfileFactory(rows, _NO_BASE_MAPPING, id_column="id")
    maker = _RowMaker(_RowSpec(None, None, None, None, True, QUESTION, None, None, None, None, encode=True), factory)
    general = _RowMaker(_RowSpec(None, None, None, None, True, QUESTION, None, None, None, None, encode=True), factory,
                        plans=False)  # fmt: skip
    raws = list(factory.iter_raw())
    assert [maker(raw) for raw in raws] == [general(raw) for raw in raws]
    assert maker.plans.made == 4
