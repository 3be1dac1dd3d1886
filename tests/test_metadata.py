"""`metadata:`: free-form data that travels with a persona, checked and bounded, never rendered."""

from __future__ import annotations

import json

import pytest

from profiles import ConfigError, ProfileConfig, parse_profiles
from profiles.batch import persona_data
from profiles.fields import MAX_METADATA_CHARS, MAX_METADATA_DEPTH
from profiles.loader import load_profile


def test_metadata_loads_and_reaches_the_profile_unchanged():
    """Metadata is kept as written (YAML lists become lists) and the profile carries it."""
    (config,) = parse_profiles(
        "name: Ada\nrole: Clerk\nmetadata:\n  plan: {age: 34, hobbies: [chess, jazz], locale: en}\n  note: null\n"
    )
    profile = config.create_profile()
    assert dict(profile.metadata) == {"plan": {"age": 34, "hobbies": ["chess", "jazz"], "locale": "en"}, "note": None}
    assert "34" not in profile.format_system_prompt() and "chess" not in profile.format_system_prompt()


def test_metadata_is_written_out_and_loads_again():
    """A profile written as persona data keeps its metadata, and that data validates again."""
    config = ProfileConfig(name="Ada", role="Clerk", metadata={"plan": {"tags": ("a", "b")}, "score": 1.5})
    data = persona_data(config.create_profile())
    assert data["metadata"] == {"plan": {"tags": ["a", "b"]}, "score": 1.5}
    assert json.loads(json.dumps(data)) == data
    assert ProfileConfig(**data).metadata == data["metadata"]


def test_no_metadata_writes_none():
    """A persona without metadata writes no metadata key."""
    assert "metadata" not in persona_data(ProfileConfig(name="Ada", role="Clerk").create_profile())


@pytest.mark.parametrize(
    ("yaml_value", "message"),
    [
        ("[a, b]", "expected a mapping of text keys to values, got a list"),
        ("{1: a}", "has the key 1, which is not text"),
        ("{when: 2024-01-01}", "metadata.when is date; use text, numbers"),
        ("{x: .nan}", "metadata.x is nan; JSON has no such number"),
        ("{a: " + "[" * MAX_METADATA_DEPTH + "1" + "]" * MAX_METADATA_DEPTH + "}", "nests over"),
        ("{blob: " + "x" * (MAX_METADATA_CHARS + 1) + "}", f"over the limit of {MAX_METADATA_CHARS}"),
    ],
)
def test_bad_metadata_is_refused_with_file_and_line(tmp_path, yaml_value, message):
    """Metadata that is not JSON-able, too deep or too big is a ConfigError naming file and line."""
    path = tmp_path / "p.yaml"
    path.write_text(f"name: Ada\nrole: Clerk\nmetadata: {yaml_value}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    (issue,) = [issue for issue in caught.value.issues if issue.field == "metadata"]
    assert issue.field == "metadata" and issue.line == 3 and issue.file == str(path)
    assert message in issue.message


def test_extends_merges_metadata_per_key(tmp_path):
    """A child's metadata keys replace its parent's; the parent's other keys stay."""
    (tmp_path / "base.yaml").write_text("role: Clerk\nmetadata: {team: books, plan: {age: 1}}\n", encoding="utf-8")
    child = tmp_path / "child.yaml"
    child.write_text("extends: base.yaml\nname: Ada\nmetadata: {plan: {age: 2}}\n", encoding="utf-8")
    assert load_profile(child).metadata == {"team": "books", "plan": {"age": 2}}


def test_deployment_overlay_cannot_set_metadata():
    """Metadata belongs to the persona, not to a deployment."""
    with pytest.raises(ConfigError) as caught:
        parse_profiles("name: Ada\nrole: Clerk\ndeployments:\n  prod:\n    metadata: {a: 1}\n")
    assert "deployments.prod.metadata" in str(caught.value) and "unknown field" in str(caught.value)


def test_batch_writes_the_base_personas_metadata(runner, tmp_path, write):
    """`profiles batch` passes a base persona's metadata through to JSONL lines and persona files."""
    from profiles.cli import cli

    base = write("base.yaml", "name: A\nrole: R\nmetadata: {team: books, tags: [a, b]}\n")
    rows = write("rows.csv", "goal\nHelp\n")
    out = tmp_path / "o.jsonl"
    assert runner.invoke(cli, ["batch", "--from", str(rows), "--base", str(base), "--out", str(out)]).exit_code == 0
    (line,) = [json.loads(text) for text in out.read_text(encoding="utf-8").splitlines()]
    assert line["persona"]["metadata"] == {"team": "books", "tags": ["a", "b"]}
    folder = tmp_path / "folder"
    assert runner.invoke(cli, ["batch", "--from", str(rows), "--base", str(base), "--out", str(folder)]).exit_code == 0
    assert load_profile(folder / "1.yaml").metadata == {"team": "books", "tags": ["a", "b"]}
