"""Folder walks: every persona in the folder and its subfolders, and predictably nothing else."""

from __future__ import annotations

import pytest

from profiles import ConfigError, load_profiles
from profiles.cli import cli
from profiles.loader import load_persona_files


@pytest.fixture
def project(write, tmp_path):
    """A support team's folder: personas, a parent, a mapping, template roots, hidden files."""
    write("ada.yaml", "extends: bases/common.yaml\nname: Ada\n")
    write("night/grace.yaml", "name: Grace\nrole: Night shift\n")
    write("bases/common.yaml", "role: Support agent\n")  # a parent: no name of its own
    write("data/customers.map.yaml", "id: customer_id\nfields:\n  name: contact_name\n")
    write("data/customers.csv", "customer_id,contact_name\nc1,Lin\n")
    write("prompts/families.yaml", "rules:\n  - {match: 'granite*', family: granite}\n")
    write("prompts/default/en/handoff.j2", "Hand over to {{ name }}.")
    write(".cache/stale.yaml", "not: a persona\n")
    write("solo.yaml", "name: Solo\nrole: Helper\ntemplate_roots: [prompts]\n")
    return tmp_path


def test_a_folder_is_walked_with_its_subfolders(project):
    walked = [loaded.path.relative_to(project).as_posix() for loaded in load_persona_files([project])]
    assert walked == ["ada.yaml", "night/grace.yaml", "solo.yaml"]


def test_check_and_validate_pass_the_whole_project(project, runner):
    for command in ("check", "validate"):
        result = runner.invoke(cli, [command, str(project)])
        assert result.exit_code == 0, result.output
        assert [line.split()[1] for line in result.output.splitlines()] == [
            str(project / "ada.yaml"),
            str(project / "night" / "grace.yaml"),
            str(project / "solo.yaml"),
        ]


def test_a_file_named_directly_is_always_loaded(project, runner):
    """A parent named on the command line is checked as a whole persona, and found lacking."""
    result = runner.invoke(cli, ["validate", str(project / "bases" / "common.yaml")])
    assert result.exit_code == 2 and "field 'name': is required" in result.output


def test_a_parent_nobody_in_the_walk_extends_is_a_persona(project, runner):
    result = runner.invoke(cli, ["validate", str(project / "bases")])
    assert result.exit_code == 2 and "field 'name': is required" in result.output


def test_the_bundled_datasets_folder_checks_clean(configs, runner):
    result = runner.invoke(cli, ["check", str(configs / "datasets")])
    assert result.exit_code == 0, result.output
    assert result.output == f"ok {configs / 'datasets' / 'support_agent.yaml'}\n"


def test_load_profiles_reads_one_folder_and_leaves_out_parents_and_mappings(write, tmp_path):
    write("base.yaml", "role: Shared\n")
    write("one.yaml", "extends: base.yaml\nname: One\n")
    write("team.map.yaml", "fields:\n  name: who\n")
    write("sub/deeper.yaml", "name: Deep\nrole: r\n")
    assert sorted(load_profiles(tmp_path)) == ["one"]


def test_a_mapping_under_another_name_says_what_it_is(write):
    path = write("mapping.yaml", "id: customer_id\nfields:\n  name: contact_name\n")
    with pytest.raises(ConfigError, match=r"mapping.yaml:1:1: this is a dataset mapping .*name it \*\.map\.yaml"):
        load_profiles(path)


def test_a_walk_stays_inside_its_folder(project, tmp_path_factory, runner):
    """A link to a persona elsewhere, a linked folder and a link back up into the folder are not
    followed; a link to a file inside the folder is."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "outsider.yaml").write_text("name: Outsider\nrole: Not ours\n")
    (project / "outsider.yaml").symlink_to(elsewhere / "outsider.yaml")
    (project / "elsewhere").symlink_to(elsewhere, target_is_directory=True)
    (project / "night" / "loop").symlink_to(project, target_is_directory=True)
    (project / "also-grace.yaml").symlink_to(project / "night" / "grace.yaml")
    walked = [loaded.path.relative_to(project).as_posix() for loaded in load_persona_files([project])]
    assert walked == ["ada.yaml", "also-grace.yaml", "night/grace.yaml", "solo.yaml"]
    result = runner.invoke(cli, ["validate", str(project)])
    assert result.exit_code == 0, result.output
    assert "Outsider" not in result.output and "loop" not in result.output
    named = runner.invoke(cli, ["validate", str(project / "outsider.yaml")])
    assert named.exit_code == 0  # a file named directly is always loaded
