"""Prompt diffs and snapshots for review: `profiles diff` between deployments, languages, models and
store versions; `profiles check --snapshot` / `--snapshot-check` over every persona × deployment."""

from __future__ import annotations

import json

import pytest

from profiles import StoreProvider
from profiles.cli import cli
from profiles.review import MARKER, Side, compare_snapshot, diff_prompts, render_prompts, snapshot_prompts
from profiles.store import PromptStore

KINDS = ("system", "user", "write_memory")
PERSONA = """\
name: Ada
role: Reviewer
goal: Review {{ topic }}.
samples:
  topic: the code
  user: {question: Is it safe?}
deployments:
  staging:
    name: Grace
  prod: {}
"""


@pytest.fixture
def persona(write):
    return write("reviewer.yaml", PERSONA)


def test_diff_between_two_deployments(persona):
    from profiles.loader import load_profile

    diffs = {item.kind: item for item in diff_prompts(load_profile(persona), Side("staging"), Side("prod"))}
    assert list(diffs) == ["system", "user", "write_memory"]
    assert diffs["system"].changed and not diffs["user"].changed and diffs["user"].diff == ""
    assert diffs["system"].diff.splitlines()[:2] == ["--- system (deployment=staging)", "+++ system (deployment=prod)"]
    assert "-You are Grace. Your role: Reviewer." in diffs["system"].diff
    assert "+You are Ada. Your role: Reviewer." in diffs["system"].diff
    assert "No newline" not in diffs["system"].diff


def test_render_prompts_uses_samples_and_variables(persona):
    from profiles.loader import load_profile

    prompts = render_prompts(load_profile(persona), Side("prod"), variables={"topic": "the tests"})
    assert "Review the tests." in prompts["system"] and prompts["user"].endswith("Is it safe?")


def test_cli_diff_deployments_languages_and_models(runner, persona):
    result = runner.invoke(cli, ["diff", str(persona), "-d", "staging", "-d", "prod"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("--- system (deployment=staging)\n+++ system (deployment=prod)\n")
    languages = runner.invoke(cli, ["diff", str(persona), "-d", "prod", "-l", "en", "-l", "zh"])
    assert "--- user (language=en)" in languages.output and "+问题：Is it safe?" in languages.output
    same = runner.invoke(cli, ["diff", str(persona), "-m", "gpt-4o", "-m", "gpt-4o-mini"])
    assert same.exit_code == 0 and same.output.startswith("no difference in 3 prompt(s)")
    data = json.loads(runner.invoke(cli, ["diff", str(persona), "-d", "staging", "-d", "prod", "--json"]).output)
    assert (data["before"], data["after"]) == ("deployment=staging", "deployment=prod")
    assert [(item["kind"], item["changed"]) for item in data["prompts"]] == [
        ("system", True),
        ("user", False),
        ("write_memory", False),
    ]
    var = runner.invoke(cli, ["diff", str(persona), "-d", "staging", "-d", "prod", "--var", "topic=docs"])
    assert " Your goal: Review docs." in var.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-d", "prod"], "both sides are the same"),
        (["-d", "a", "-d", "b", "-d", "c"], "give it once"),
        (["--store-version", "nonsense"], "is not KEY=VERSION"),
    ],
)
def test_cli_diff_usage_errors(runner, persona, args, message):
    result = runner.invoke(cli, ["diff", str(persona), *args])
    assert result.exit_code == 2 and message in result.output


def test_cli_diff_store_versions(runner, write, store_url):
    """--store-version once: what releasing that version would change; twice: two versions."""
    with PromptStore(store_url) as store:
        store.put("reviewer/system", "You are {{ name }}.", label="production")
        store.put("reviewer/system", "You are {{ name }}, a careful {{ role }}.")
        store.put("reviewer/system", "{{ name }} v3")
    path = write("stored.yaml", "name: Ada\nrole: Reviewer\ntemplates:\n  system: {store: reviewer/system}\n")
    base = ["diff", str(path), "--store", store_url, "-d", "prod"]
    once = runner.invoke(cli, [*base, "--store-version", "reviewer/system=2"])
    assert once.exit_code == 0, once.output
    assert "--- system (deployment=prod)" not in once.output
    assert "+++ system (reviewer/system@v2)" in once.output and "+You are Ada, a careful Reviewer." in once.output
    twice = runner.invoke(cli, [*base, "--store-version", "reviewer/system=2", "--store-version", "reviewer/system=v3"])
    assert "--- system (reviewer/system@v2)" in twice.output and "+Ada v3" in twice.output


def test_cli_diff_refuses_a_pin_nothing_was_read_at(runner, write, store_url):
    """A version the store lacks would leave the field's default under a header saying `name@v5`:
    the diff refuses it instead, as it refuses a pin of a key the persona never reads."""
    with PromptStore(store_url) as store:
        store.put("reviewer/name", "Ada", label="production")
        store.put("reviewer/system", "You are {{ name }}.", label="production")
    path = write(
        "pinned.yaml",
        "name: {key: reviewer/name, provider: store, default: Nobody}\nrole: R\n"
        "templates:\n  system: {store: reviewer/system}\n",
    )
    base = ["diff", str(path), "--store", store_url, "-d", "prod"]
    for pin in ("reviewer/name=5", "nobody/reads=1"):
        result = runner.invoke(cli, [*base, "--store-version", pin])
        assert result.exit_code == 2, (pin, result.output)
        assert f"{pin} pins a version nothing was read at" in result.stderr and "Traceback" not in result.output
    template = runner.invoke(cli, [*base, "--store-version", "reviewer/system=7"])  # a template has no default
    assert template.exit_code == 2 and "reviewer/system" in template.stderr
    assert runner.invoke(cli, [*base, "--store-version", "reviewer/name=1"]).exit_code == 0


def test_a_failing_side_is_named(runner, write):
    path = write("broken.yaml", "name: Ada\nrole: R\ndeployments:\n  prod:\n    goal: '{{ missing }}'\n")
    result = runner.invoke(cli, ["diff", str(path), "-d", "dev", "-d", "prod"])
    assert result.exit_code == 2 and "system prompt, deployment=prod" in result.stderr and "'missing'" in result.stderr


# -- snapshots --------------------------------------------------------------------------------------


def test_snapshot_names_are_deterministic(tmp_path, write):
    write("team/reviewer.yaml", PERSONA)
    write("team/zh.yaml", "name: 墨子\nrole: 分析师\nlanguage: zh\n---\nname: Second\nrole: R\n")
    snapshot = snapshot_prompts([tmp_path / "team"])
    assert snapshot.issues == []
    assert sorted(snapshot.files) == sorted(
        [
            *(f"reviewer/{d}/_default/{k}.txt" for d in ("_base", "prod", "staging") for k in KINDS),
            *(f"zh/_base/zh/{k}.txt" for k in KINDS),
            *(f"zh#2/_base/_default/{k}.txt" for k in KINDS),
        ]
    )
    assert snapshot.files["reviewer/staging/_default/system.txt"].startswith("You are Grace.")
    assert snapshot.files["zh/_base/zh/system.txt"].startswith("你是墨子。")
    assert snapshot_prompts([tmp_path / "team"]).files == snapshot.files


def test_personas_named_in_other_scripts_keep_their_own_snapshot_folders(runner, tmp_path, write):
    """客服.yaml and 销售.yaml were both the folder '-', so a folder holding both could not be snapshot."""
    from unicodedata import normalize

    for name in ("客服", "销售", normalize("NFD", "café")):
        write(f"team/{name}.yaml", f"name: {name}\nrole: R\n")
    snapshot = snapshot_prompts([tmp_path / "team"])
    assert snapshot.issues == []
    assert {name.split("/")[0] for name in snapshot.files} == {"客服", "销售", "café"}  # composed, as read back
    result = runner.invoke(cli, ["check", str(tmp_path / "team"), "--snapshot", str(tmp_path / "snap")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "snap" / "客服" / "_base" / "_default" / "system.txt").read_text().startswith("You are 客服.")
    again = runner.invoke(cli, ["check", str(tmp_path / "team"), "--snapshot-check", str(tmp_path / "snap")])
    assert again.exit_code == 0 and "none changed" in again.output


def test_check_snapshot_then_snapshot_check(runner, tmp_path, write):
    folder = tmp_path / "personas"
    path = write("personas/reviewer.yaml", PERSONA)
    snaps = tmp_path / "snaps"
    written = runner.invoke(cli, ["check", str(folder), "--snapshot", str(snaps)])
    assert written.exit_code == 0, written.output
    assert "9 prompt(s), 9 written, 0 removed" in written.output and (snaps / MARKER).is_file()
    assert (snaps / "reviewer" / "prod" / "_default" / "system.txt").read_text().startswith("You are Ada.")
    clean = runner.invoke(cli, ["check", str(folder), "--snapshot-check", str(snaps)])
    assert clean.exit_code == 0 and "none changed" in clean.output

    path.write_text(PERSONA.replace("name: Grace", "name: Hopper").replace("  prod: {}\n", ""))
    changed = runner.invoke(cli, ["check", str(folder), "--snapshot-check", str(snaps)])
    assert changed.exit_code == 2
    assert "4 prompt(s) differ from the snapshot" in changed.stderr
    listed = [line.strip() for line in changed.stderr.splitlines() if line.startswith("  ")]
    assert listed == [
        "removed: reviewer/prod/_default/system.txt",
        "removed: reviewer/prod/_default/user.txt",
        "removed: reviewer/prod/_default/write_memory.txt",
        "changed: reviewer/staging/_default/system.txt",
    ]
    assert "-You are Grace. Your role: Reviewer.\n+You are Hopper. Your role: Reviewer." in changed.stdout
    assert f"profiles check {folder} --snapshot {snaps}" in changed.stderr


def test_snapshot_check_lists_added_removed_and_changed(tmp_path, write):
    write("p/a.yaml", "name: A\nrole: R\n")
    write("p/b.yaml", "name: B\nrole: R\n")
    snaps = tmp_path / "snaps"
    from profiles.review import write_snapshot

    write_snapshot(snapshot_prompts([tmp_path / "p"]), snaps)
    (tmp_path / "p" / "b.yaml").unlink()
    write("p/a.yaml", "name: A2\nrole: R\n")
    write("p/c.yaml", "name: C\nrole: R\n")
    changes = {(change.status, change.name) for change in compare_snapshot(snapshot_prompts([tmp_path / "p"]), snaps)}
    assert ("changed", "a/_base/_default/system.txt") in changes
    assert ("removed", "b/_base/_default/user.txt") in changes
    assert ("added", "c/_base/_default/write_memory.txt") in changes
    assert ("changed", "a/_base/_default/user.txt") not in changes  # the user prompt does not show the name
    changed, removed = write_snapshot(snapshot_prompts([tmp_path / "p"]), snaps)
    assert "a/_base/_default/system.txt" in changed and "b/_base/_default/system.txt" in removed
    assert not (snaps / "b").exists()  # emptied folders go too
    assert compare_snapshot(snapshot_prompts([tmp_path / "p"]), snaps) == []


def test_a_folder_that_is_no_snapshot_is_left_alone(runner, tmp_path, write):
    folder = write("p/a.yaml", "name: A\nrole: R\n").parent
    precious = write("work/notes.txt", "keep me")
    result = runner.invoke(cli, ["check", str(folder), "--snapshot", str(precious.parent)])
    assert result.exit_code == 2 and "is not a prompt snapshot" in result.stderr
    assert precious.read_text() == "keep me"
    missing = runner.invoke(cli, ["check", str(folder), "--snapshot-check", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "no prompt snapshot at" in missing.stderr


def test_snapshot_of_store_templates(runner, tmp_path, write, store_url):
    """A persona whose templates live in the store is snapshotted as the store serves each deployment."""
    with PromptStore(store_url) as store:
        store.put("reviewer/system", "Prod {{ name }}.", label="production")
        store.put("reviewer/system", "Staging {{ name }}.", label="staging")
    folder = write("p/r.yaml", PERSONA + "templates:\n  system: {store: reviewer/system}\n").parent
    snaps = tmp_path / "snaps"
    result = runner.invoke(cli, ["check", str(folder), "--store", store_url, "--snapshot", str(snaps)])
    assert result.exit_code == 0, result.output
    assert (snaps / "r/staging/_default/system.txt").read_text() == "Staging Grace.\n"
    assert (snaps / "r/prod/_default/system.txt").read_text() == "Prod Ada.\n"
    assert (snaps / "r/_base/_default/system.txt").read_text() == "Staging Ada.\n"  # latest


def test_check_problems_come_before_the_snapshot(runner, tmp_path, write):
    folder = write("p/bad.yaml", "name: A\nrole: R\ngoal: '{{ nope }}'\n").parent
    result = runner.invoke(cli, ["check", str(folder), "--snapshot", str(tmp_path / "snaps")])
    assert result.exit_code == 2 and "nope" in result.stderr and not (tmp_path / "snaps").exists()


def test_check_store_option_does_not_outlive_the_command(runner, write, sqlite_url):
    """check --store answers `store` lookups for that command only."""
    from profiles.providers import get_provider

    with PromptStore(sqlite_url) as store:
        store.put("reviewer/system", "Hi {{ name }}.")
    folder = write("p/r.yaml", "name: Ada\nrole: R\ntemplates:\n  system: {store: reviewer/system}\n").parent
    before = get_provider("store")
    assert runner.invoke(cli, ["check", str(folder), "--store", sqlite_url]).exit_code == 0
    assert get_provider("store") is before and isinstance(before, StoreProvider)
