"""A folder with many problems lists every one of them, each line bounded, not the first few."""

from __future__ import annotations

from click.testing import CliRunner

from profiles import ConfigError, ConfigIssue
from profiles.cli import cli
from profiles.cli.group import MAX_LISTED_PROBLEMS


def test_validate_lists_every_problem_of_a_big_folder(tmp_path):
    for number in range(300):
        (tmp_path / f"p{number:03}.yaml").write_text(f"name: P{number}\nrole: Summarizer\nrolee: typo\n")
    result = CliRunner().invoke(cli, ["validate", str(tmp_path)])
    assert result.exit_code == 2
    assert "300 problems:" in result.output
    assert "message cut" not in result.output
    for number in (0, 150, 299):
        assert f"p{number:03}.yaml:3:1: field 'rolee'" in result.output


def test_listing_bounds_each_line_and_the_count():
    long = ConfigIssue("x" * 10_000, file="a.yaml", line=1, column=1)
    error = ConfigError([long, *(ConfigIssue(f"problem {n}") for n in range(MAX_LISTED_PROBLEMS + 5))])
    listing = error.listing(MAX_LISTED_PROBLEMS)
    lines = listing.splitlines()
    assert lines[0] == f"{MAX_LISTED_PROBLEMS + 6} problems:"
    assert lines[1].endswith("(message cut)") and len(lines[1]) < 4100
    assert lines[-1] == "  … and 6 more"
    assert len(lines) == MAX_LISTED_PROBLEMS + 2
    assert len(str(error)) <= 4000  # the exception's own message stays bounded


def test_one_problem_is_one_line():
    assert ConfigError("only this").listing() == "only this"


def test_a_folder_where_one_persona_is_wanted_says_so(tmp_path):
    for command in (["render"], ["explain"]):
        result = CliRunner().invoke(cli, [*command, str(tmp_path)])
        assert result.exit_code == 2
        assert "this is a folder; name one persona file in it" in result.output


def test_a_folder_where_another_file_is_wanted_names_that_file(tmp_path):
    """Only persona commands suggest the folder commands; the others name the file they want."""
    conversation = tmp_path / "conversation.json"
    conversation.write_text('{"messages": []}', encoding="utf-8")
    template = tmp_path / "chat.jinja"
    template.write_text("{{ messages | length }}", encoding="utf-8")
    dataset = tmp_path / "rows.csv"
    dataset.write_text("name,role\nAda,Guide\n", encoding="utf-8")
    cases = {
        "chat template": ["chat-template", str(tmp_path), str(conversation)],
        "conversation": ["chat-template", str(template), str(tmp_path)],
        "dataset mapping": ["batch", "--from", str(dataset), "--map", str(tmp_path), "--out", "-"],
    }
    for kind, args in cases.items():
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, (kind, result.output)
        assert f"this is a folder; name the {kind} file itself" in result.output, (kind, result.output)
        assert "profiles validate" not in result.output
