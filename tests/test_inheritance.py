"""`extends:`: a persona built on others, with errors pointing into the file that holds them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from profiles import ConfigError, load_profile, load_profiles
from profiles.cli import cli


def test_child_fields_replace_parent_and_provenance_names_each_file(write):
    base = write("base.yaml", "role: Base role\ngoal: Base goal\nname: Base\n")
    child = write("child.yaml", "extends: base.yaml\nname: Child\n")
    profile = load_profile(child).create_profile()
    assert (profile.get_name(), profile.get_role(), profile.get_goal()) == ("Child", "Base role", "Base goal")
    assert profile.provenance["name"] == f"yaml:{child}:2"
    assert profile.provenance["role"] == f"yaml:{base}:1"
    assert profile.provenance["goal"] == f"yaml:{base}:2"


def test_mappings_merge_per_key_child_winning(write):
    write(
        "base.yaml",
        "role: r\nvariables: {a: A, b: B}\n"
        "templates:\n  user: {inline: 'base user {{ a }} {{ b }}'}\n  system: {inline: 'base system'}\n"
        "deployments:\n  prod: {name: BaseProd, goal: BaseProdGoal}\n  dev: {name: Dev}\n",
    )
    child = write(
        "child.yaml",
        "extends: base.yaml\nname: C\nvariables: {b: B2}\n"
        "templates:\n  system: {inline: 'child system'}\n"
        "deployments:\n  prod: {name: ChildProd}\n",
    )
    config = load_profile(child)
    profile = config.create_profile()
    assert profile.format_user_prompt() == "base user A B2"
    assert profile.format_system_prompt() == "child system"
    prod = config.create_profile(deployment="prod")
    assert (prod.get_name(), prod.get_goal()) == ("ChildProd", "BaseProdGoal")
    assert prod.provenance["name"] == f"overlay prod: {child}:7"
    assert prod.provenance["goal"].startswith("overlay prod: ") and prod.provenance["goal"].endswith("base.yaml:7")
    assert config.create_profile(deployment="dev").get_name() == "Dev"


def test_several_parents_later_wins(write):
    write("one.yaml", "role: One\ngoal: One goal\n")
    write("two.yaml", "role: Two\n")
    child = write("child.yaml", "extends: [one.yaml, two.yaml]\nname: C\n")
    profile = load_profile(child).create_profile()
    assert (profile.get_role(), profile.get_goal()) == ("Two", "One goal")


def test_chain_of_parents(write):
    write("a.yaml", "role: A role\ngoal: A goal\n")
    write("b.yaml", "extends: a.yaml\ngoal: B goal\n")
    child = write("c.yaml", "extends: b.yaml\nname: C\n")
    profile = load_profile(child).create_profile()
    assert (profile.get_role(), profile.get_goal()) == ("A role", "B goal")


def test_parent_template_files_resolve_from_parent_folder(write):
    write("bases/system.j2", "From the base folder: {{ name }}")
    write("system.j2", "Wrong folder")
    write("bases/base.yaml", "role: r\ntemplates:\n  system: {file: system.j2}\n")
    child = write("child.yaml", "extends: bases/base.yaml\nname: Kid\n")
    assert load_profile(child).create_profile().format_system_prompt() == "From the base folder: Kid"


def test_parent_in_subfolder_may_extend_a_sibling_inside_root(write):
    write("common.yaml", "goal: Common goal\n")
    write("bases/base.yaml", "extends: ../common.yaml\nrole: r\n")
    child = write("child.yaml", "extends: bases/base.yaml\nname: C\n")
    assert load_profile(child).create_profile().get_goal() == "Common goal"


def test_cycle_is_an_error_printing_the_chain(write, monkeypatch, tmp_path):
    write("a.yaml", "extends: b.yaml\nname: A\nrole: r\n")
    write("b.yaml", "role: r\nextends: a.yaml\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as caught:
        load_profile("a.yaml")
    text = str(caught.value)
    assert "a.yaml → b.yaml → a.yaml" in text
    (issue,) = caught.value.issues
    assert (issue.file, issue.line) == ("b.yaml", 2)


def test_self_extends_is_a_cycle(write):
    path = write("self.yaml", "name: S\nrole: r\nextends: self.yaml\n")
    with pytest.raises(ConfigError, match="extends cycle"):
        load_profile(path)


def test_cli_reports_cycle(runner, write, tmp_path, monkeypatch):
    write("a.yaml", "extends: b.yaml\nname: A\nrole: r\n")
    write("b.yaml", "extends: a.yaml\n")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["validate", "a.yaml"])
    assert result.exit_code == 2
    assert "Error: b.yaml:1:1: field 'extends': extends cycle: a.yaml → b.yaml → a.yaml" in result.output


def test_bad_parent_field_points_into_parent(write):
    base = write("base.yaml", "role: r\ngoal:\n  - not\n  - text\n")
    child = write("child.yaml", "extends: base.yaml\nname: C\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(child)
    (issue,) = caught.value.issues
    assert (issue.file, issue.line, issue.field) == (str(base), 3, "goal")


def test_parent_and_child_problems_reported_together(write):
    write("base.yaml", "role: r\ncolour: blue\n")
    child = write("child.yaml", "extends: base.yaml\nname: C\ngoal: [a]\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(child)
    assert {(Path(issue.file).name, issue.line) for issue in caught.value.issues} == {
        ("base.yaml", 2),
        ("child.yaml", 3),
    }


def test_missing_identity_after_merge_is_reported_on_child(write):
    write("base.yaml", "goal: g\n")
    child = write("child.yaml", "extends: base.yaml\nname: C\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(child)
    (issue,) = caught.value.issues
    assert (issue.file, issue.field) == (str(child), "role")
    assert "required" in issue.message


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("/etc/passwd", "absolute path"),
        ("../outside.yaml", "leads outside"),
        ("sub/../../outside.yaml", "leads outside"),
        ("missing.yaml", "not found"),
    ],
)
def test_parent_path_is_confined(tmp_path, ref, message):
    (tmp_path / "outside.yaml").write_text("role: r\n")
    inner = tmp_path / "inner"
    (inner / "sub").mkdir(parents=True)
    child = inner / "child.yaml"
    child.write_text(f"name: C\nrole: r\nextends: {ref}\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(child)
    (issue,) = caught.value.issues
    assert message in issue.message
    assert (issue.file, issue.line, issue.field) == (str(child), 3, "extends")


def test_symlink_out_of_root_is_refused(tmp_path):
    (tmp_path / "outside.yaml").write_text("role: r\n")
    inner = tmp_path / "inner"
    inner.mkdir()
    try:
        os.symlink(tmp_path / "outside.yaml", inner / "link.yaml")
    except OSError:
        pytest.skip("symlinks not available")
    child = inner / "child.yaml"
    child.write_text("name: C\nextends: link.yaml\n")
    with pytest.raises(ConfigError, match="leads outside"):
        load_profile(child)


@pytest.mark.parametrize("value", ["[]", "5", "{a: b}", "[base.yaml, 3]"])
def test_extends_must_be_paths(write, value):
    write("base.yaml", "role: r\n")
    child = write("child.yaml", f"name: C\nrole: r\nextends: {value}\n")
    with pytest.raises(ConfigError, match="extends: base.yaml"):
        load_profile(child)


def test_parent_with_several_documents_is_refused(write):
    write("base.yaml", "role: a\n---\nrole: b\n")
    child = write("child.yaml", "extends: base.yaml\nname: C\n")
    with pytest.raises(ConfigError, match="one YAML mapping"):
        load_profile(child)


def test_folder_of_children_loads(write, tmp_path, runner):
    write("lib/base.yaml", "role: Shared role\n")
    write("one.yaml", "extends: lib/base.yaml\nname: One\n")
    write("two.yaml", "extends: lib/base.yaml\nname: Two\n")
    configs = load_profiles(tmp_path)
    assert sorted(configs) == ["one", "two"]
    assert {config.create_profile().get_role() for config in configs.values()} == {"Shared role"}
    result = runner.invoke(cli, ["validate", str(tmp_path)])
    assert result.exit_code == 0, result.output


def test_explain_shows_parent_lines(write, runner):
    base = write("base.yaml", "goal: g\nrole: Base role\n")
    child = write("child.yaml", "extends: base.yaml\nname: C\n")
    result = runner.invoke(cli, ["explain", str(child)])
    assert result.exit_code == 0, result.output
    role_line = next(line for line in result.output.splitlines() if line.startswith("role"))
    assert f"yaml:{base}:2" in role_line


def test_parent_template_roots_resolve_from_parent_folder(write):
    write("bases/prompts/default/en/system.j2", "Root of the base: {{ name }}")
    write("bases/base.yaml", "role: r\ntemplate_roots: [prompts]\n")
    child = write("child.yaml", "extends: bases/base.yaml\nname: Kid\n")
    assert load_profile(child).create_profile().format_system_prompt() == "Root of the base: Kid"


# -- a parent's paths are confined to the loaded persona's folder; its problems are named once --------


def test_a_parent_in_bases_reaches_prompts_beside_it(write, runner):
    """`bases/common.yaml` names `../prompts`, inside the folder of the persona being loaded."""
    write("team/prompts/default/en/handoff.j2", "{{ name }} hands over.")
    write("team/prompts/system.j2", "Shared system for {{ name }}.")
    write("team/bases/common.yaml", "role: Support\ntemplate_roots: [../prompts]\n"
          "templates:\n  system: {file: ../prompts/system.j2}\n")
    child = write("team/ada.yaml", "extends: bases/common.yaml\nname: Ada\n")
    profile = load_profile(child).create_profile()
    assert profile.format_prompt("handoff") == "Ada hands over."
    assert profile.format_system_prompt() == "Shared system for Ada."
    result = runner.invoke(cli, ["render", str(child), "--kind", "handoff"])
    assert result.exit_code == 0 and result.output == "Ada hands over.\n"


def test_a_persona_loaded_alone_stays_in_its_folder(write):
    write("team/prompts/default/en/handoff.j2", "x")
    lone = write("team/bases/common.yaml", "name: A\nrole: Support\ntemplate_roots: [../prompts]\n")
    with pytest.raises(ConfigError, match=r"template path '\.\./prompts' leads outside .*team/bases, the folder"):
        load_profile(lone)


def test_a_parent_reaching_out_is_reported_once_naming_its_children(write, tmp_path, runner):
    write("outside/default/en/handoff.j2", "x")
    write("team/bases/common.yaml", "role: Support\ntemplate_roots: [../../outside]\n")
    write("team/ada.yaml", "extends: bases/common.yaml\nname: Ada\n")
    write("team/grace.yaml", "extends: bases/common.yaml\nname: Grace\n")
    result = runner.invoke(cli, ["validate", str(tmp_path / "team")])
    assert result.exit_code == 2
    assert result.output.count("leads outside") == 1
    assert f"{tmp_path / 'team'}, the folder of the persona being loaded (extended by " in result.output
    assert f"{tmp_path / 'team' / 'ada.yaml'} and {tmp_path / 'team' / 'grace.yaml'})" in result.output


def test_a_deep_parent_names_the_whole_chain(write):
    write("team/mid/deep/base.yaml", "role: [not, text]\n")
    write("team/mid/mid.yaml", "extends: deep/base.yaml\n")
    child = write("team/ada.yaml", "extends: mid/mid.yaml\nname: Ada\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(child)
    assert str(caught.value).endswith(f"(extended by {child} → {child.parent / 'mid' / 'mid.yaml'})")


def test_a_parent_that_is_a_folder_is_named_as_one(tmp_path):
    """It was "not found", beside a folder of that very name."""
    (tmp_path / "bases").mkdir()
    path = tmp_path / "ada.yaml"
    path.write_text("extends: bases\nname: Ada\nrole: R\n")
    with pytest.raises(ConfigError, match="parent persona '.*bases' is a folder; name a persona file in it"):
        load_profile(path)
