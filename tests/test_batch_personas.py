"""A persona `profiles batch` writes renders exactly as the profile the batch made, whatever the base holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profiles import DatasetProfileFactory, ProfileConfig, load_profile
from profiles.batch import BatchOptions, run_batch
from profiles.cli import cli
from profiles.context import Context

BASE = """\
name: Support agent
role: Customer support agent
goal: {key: TEAM_GOAL, default: "Help {{ plan }} customers."}
constraints:
  - "The customer is on the {{ plan }} plan."
variables:
  plan: standard
template_roots: [prompts]
templates:
  user: {file: user.j2}
tools:
  - {name: lookup, description: Look up an order, parameters: {type: object}}
samples:
  handoff: {ticket: T-1}
deployments:
  prod:
    goal: Keep {{ plan }} customers happy in production.
    variables: {plan: gold, tier: one}
  staging:
    name: Staging agent
"""

ROWS = """\
id,contact,plan,note
c-1,Ada,premium,"Likes {{ braces }} and {% endraw %} kept as typed"
c-2,Grace,,No plan on file
"""

MAPPING = """\
id: id
fields:
  name: "Agent for {{ row.contact }}"
  desc: note
  variables.plan: plan
"""


@pytest.fixture
def team(write, tmp_path) -> Path:
    write("team/base.yaml", BASE)
    write("team/user.j2", "Ticket from {{ name }}: {{ question }}")
    write("team/prompts/default/en/handoff.j2", "{{ name }} hands {{ ticket }} over. "
          "{% include 'default/en/sign.j2' %}")
    write("team/prompts/default/en/sign.j2", "-- the support desk")
    write("team/prompts/families.yaml", "rules:\n  - {match: 'acme-*', family: acme}\n")
    write("team/prompts/acme/en/system.j2", "ACME prompt for {{ name }} ({{ plan }}): {{ desc }}")
    write("team/rows.csv", ROWS)
    write("team/rows.map.yaml", MAPPING)
    return tmp_path / "team"


def _prompts(profile) -> dict[str, str]:
    return {
        "system": profile.format_system_prompt("Where is my order?"),
        "user": profile.format_user_prompt("Where is my order?"),
        "write_memory": profile.format_write_memory_prompt("q", "t", "a", "o"),
        "handoff": profile.format_prompt("handoff", ticket="T-9"),
        "react": profile.format_prompt("react", question="Where is my order?"),
    }


def _in_memory(team: Path, **context) -> dict[str, dict[str, str]]:
    factory = DatasetProfileFactory(team / "rows.csv", team / "rows.map.yaml", base=team / "base.yaml")
    return {
        result.profile_id: _prompts(result.profile)
        for result in factory.iter_results(context=Context(**context))
    }


@pytest.mark.parametrize(
    "context",
    [{}, {"deployment": "prod"}, {"deployment": "staging", "language": "zh"}, {"model": "acme-7"}],
    ids=["base", "prod", "staging-zh", "acme-model"],
)
def test_folder_personas_render_as_the_batch_made_them(team, tmp_path, context):
    out = tmp_path / "out"
    run_batch(
        BatchOptions(
            source=team / "rows.csv", mapping=team / "rows.map.yaml", base=team / "base.yaml", out=out, **context
        )
    )
    expected = _in_memory(team, **context)
    for profile_id, prompts in expected.items():
        written = load_profile(out / f"{profile_id}.yaml").create_profile(deployment=context.get("deployment"))
        assert _prompts(written) == prompts, profile_id
    assert "Likes {{ braces }} and {% endraw %} kept as typed" in expected["c-1"]["handoff"] + expected["c-1"]["system"]


def test_jsonl_personas_render_as_the_batch_made_them(team, tmp_path):
    out = tmp_path / "people.jsonl"
    run_batch(BatchOptions(source=team / "rows.csv", mapping=team / "rows.map.yaml", base=team / "base.yaml", out=out))
    expected = _in_memory(team)
    for line in out.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        config = ProfileConfig.from_data(record["persona"], base_dir=out.parent)
        assert _prompts(config.create_profile()) == expected[record["id"]]


def test_the_written_persona_keeps_what_the_base_holds(team, tmp_path):
    out = tmp_path / "out"
    run_batch(BatchOptions(source=team / "rows.csv", mapping=team / "rows.map.yaml", base=team / "base.yaml", out=out))
    config = load_profile(out / "c-1.yaml")
    assert config.samples == {"handoff": {"ticket": "T-1"}}
    assert [tool.name for tool in config.tools] == ["lookup"]
    assert config.template_roots == ((out / "_templates" / "prompts").resolve(),)
    # the row's name wins over staging's, so the overlay keeps only what the row leaves
    assert set(config.deployments) == {"prod", "staging"} and config.deployments["staging"].model_fields_set == set()
    assert config.deployments["prod"].variables == {"tier": "one"}  # the row set plan


def test_cli_render_of_a_written_persona_finds_its_root_kind(team, tmp_path, runner):
    """The reported case: `profiles render out/c-1.yaml --kind handoff`."""
    out = tmp_path / "out"
    args = ["batch", "--from", str(team / "rows.csv"), "--map", str(team / "rows.map.yaml"),
            "--base", str(team / "base.yaml"), "--out", str(out), "--deployment", "prod", "--model", "acme-7"]
    assert runner.invoke(cli, args).exit_code == 0
    result = runner.invoke(cli, ["render", str(out / "c-1.yaml"), "--kind", "handoff", "--var", "ticket=T-2"])
    assert result.exit_code == 0, result.output
    assert result.output == "Agent for Ada hands T-2 over. -- the support desk\n"
    checked = runner.invoke(cli, ["check", str(out)])
    assert checked.exit_code == 0, checked.output


def test_batch_options_reach_the_prompts(team, tmp_path, runner):
    out = tmp_path / "people.jsonl"
    args = ["batch", "--from", str(team / "rows.csv"), "--map", str(team / "rows.map.yaml"),
            "--base", str(team / "base.yaml"), "--out", str(out), "--render", "-q", "Hi",
            "--deployment", "prod", "--language", "zh", "--model", "acme-7"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    second = json.loads(out.read_text(encoding="utf-8").splitlines()[1])  # c-2 has no plan: prod's gold
    # zh is the outer choice (default/zh before acme/en), so the model's family shows in English only
    assert second["prompts"]["system"].startswith("你是Agent for Grace。") and "gold" in second["prompts"]["system"]
    assert second["persona"]["language"] == "zh" and second["persona"]["model"] == "acme-7"
    english = tmp_path / "english.jsonl"
    args[args.index(str(out))] = str(english)
    assert runner.invoke(cli, args[:-4] + ["--model", "acme-7"]).exit_code == 0
    record = json.loads(english.read_text(encoding="utf-8").splitlines()[1])
    assert record["prompts"]["system"] == "ACME prompt for Agent for Grace (gold): No plan on file"
    resumed = runner.invoke(cli, [*args[:-6], "--resume"])
    assert resumed.exit_code == 2 and "a batch that finishes removes its own" in resumed.output


REQUEST_BASE = """\
name: Support agent
role: Customer support agent
model: gpt-4o
inputs:
  ticket: {type: string, description: The customer's message.}
  max_labels: {type: integer, default: 3}
variables:
  company: {key: BATCH_COMPANY_NAME, default: Acme}
templates:
  user: {inline: "{{ ticket }} for {{ company }}, at most {{ max_labels }} labels"}
model_settings:
  temperature: 0.2
  seed: {key: BATCH_SEED, default: 7}
output_schema: {type: object, properties: {labels: {type: array}}, required: [labels]}
roles: {user: user}
messages: [{kind: system}, {history: true}, {kind: user}]
tools:
  - {name: lookup, description: Look up an order, parameters: {type: object}, strict: false}
deployments:
  prod:
    model_settings: {temperature: 0}
"""


@pytest.mark.parametrize("deployment", [None, "prod"])
def test_written_personas_make_the_same_requests(write, tmp_path, monkeypatch, deployment):
    """Inputs, model settings, the output schema, roles, the layout and dynamic variables survive the file."""
    base = write("req/base.yaml", REQUEST_BASE)
    rows = write("req/rows.csv", "id,contact\nc-1,Ada\n")
    mapping = write("req/rows.map.yaml", "id: id\nfields:\n  name: contact\n")
    out = tmp_path / "out"
    run_batch(BatchOptions(source=rows, mapping=mapping, base=base, out=out, deployment=deployment))
    factory = DatasetProfileFactory(rows, mapping, base=base)
    (made,) = factory.iter_results(context=Context(deployment=deployment))
    written = load_profile(out / "c-1.yaml")
    assert written.create_profile(deployment=deployment).to_request("q", ticket="T") == made.profile.to_request(
        "q", ticket="T"
    )
    # what was dynamic in the base is dynamic in the file: a later value still reaches it
    monkeypatch.setenv("BATCH_COMPANY_NAME", "Initech")
    monkeypatch.setenv("BATCH_SEED", "11")
    body = written.create_profile(deployment=deployment).to_request("q", ticket="T")
    assert "T for Initech" in body["messages"][-1]["content"] and body["seed"] == 11
