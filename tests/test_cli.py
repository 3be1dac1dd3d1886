"""The `profiles` command: output, exit codes and clean error messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from profiles.cli import cli

BAD = "name: Aristotle\nrole: Summarizer\ngoal: [a, b]\ncolour: blue\nrole: Other\n"


def test_render_summarizer(runner, configs):
    result = runner.invoke(cli, ["render", str(configs / "summarizer.yaml"), "--question", "What changed?"])
    assert result.exit_code == 0, result.output
    assert "===== system prompt =====" in result.output and "===== user prompt =====" in result.output
    assert "You are Aristotle." in result.output and "Question: What changed?" in result.output


def test_render_one_kind_json_and_vars(runner, configs):
    result = runner.invoke(
        cli, ["render", str(configs / "planner.yaml"), "--var", "agents=Searcher, Coder", "--kind", "system", "--json"]
    )
    assert result.exit_code == 0, result.output
    prompts = json.loads(result.output)
    assert list(prompts) == ["system"] and "Searcher, Coder" in prompts["system"]


def test_render_language_option(runner, configs):
    result = runner.invoke(cli, ["render", str(configs / "summarizer.yaml"), "--language", "zh", "--kind", "system"])
    assert result.exit_code == 0 and result.output.startswith("你是Aristotle。")


def test_render_strict(runner, configs):
    args = ["render", str(configs / "summarizer.yaml"), "--var", "colour=red", "--strict"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 2 and "strict mode" in result.output


def test_render_strict_over_all_kinds_refuses_only_what_no_prompt_uses(runner, configs):
    """--kind all rendered each prompt strictly on its own: the memories the system and user prompts
    read were refused because the write-memory prompt does not read them."""
    base = ["render", str(configs / "planner.yaml"), "-q", "Plan", "--var", "agents=A, B", "--strict", "--json"]
    result = runner.invoke(cli, [*base, "--var", "most_recent_memories=Budget: 2,000 EUR"])
    assert result.exit_code == 0, result.output
    prompts = json.loads(result.output)
    assert set(prompts) == {"system", "user", "write_memory"} and "Budget: 2,000 EUR" in prompts["user"]
    refused = runner.invoke(cli, [*base, "--var", "colour=red"])
    assert refused.exit_code == 2
    assert "strict mode: no prompt (system, user, write_memory) uses variable(s) colour" in refused.output
    one = runner.invoke(cli, [*base[:-1], "--kind", "write_memory", "--var", "most_recent_memories=m"])
    assert one.exit_code == 2 and "write_memory prompt does not use variable(s) most_recent_memories" in one.output


def test_missing_variable_is_one_clean_error(runner, configs):
    result = runner.invoke(cli, ["render", str(configs / "planner.yaml"), "--kind", "system"])
    assert result.exit_code == 2
    persona = configs / "planner.yaml"
    line = persona.read_text().splitlines().index("expand_prompt: |-") + 1
    assert result.output.startswith(f"Error: {persona}:{line}: field 'expand_prompt' line 1 uses 'agents'")
    assert "Traceback" not in result.output


def test_bad_var_syntax(runner, configs):
    result = runner.invoke(cli, ["render", str(configs / "planner.yaml"), "--var", "agents"])
    assert result.exit_code == 2 and "is not KEY=VALUE" in result.output


def test_validate_examples(runner, configs):
    result = runner.invoke(cli, ["validate", str(configs)])
    assert result.exit_code == 0, result.output
    assert "ok " in result.output and "summarizer.yaml" in result.output


def test_validate_lists_every_problem(runner, configs, write):
    bad = write("bad.yaml", BAD)
    other = write("other.yaml", "name: x\n")
    result = runner.invoke(cli, ["validate", str(configs / "summarizer.yaml"), str(bad), str(other)])
    assert result.exit_code == 2
    assert f"{bad}:3:7: field 'goal'" in result.output
    assert f"{bad}:4:1: field 'colour': unknown field" in result.output
    assert f"{bad}:5:1: field 'role': duplicate key" in result.output
    assert f"{other}:1:1: field 'role': is required" in result.output


def test_validate_empty_folder(runner, tmp_path):
    result = runner.invoke(cli, ["validate", str(tmp_path)])
    assert result.exit_code == 2 and "no persona files" in result.output


def test_render_missing_file(runner, tmp_path):
    result = runner.invoke(cli, ["render", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2 and "file not found" in result.output


def test_schema_matches_committed_file(runner, configs):
    result = runner.invoke(cli, ["schema"])
    assert result.exit_code == 0
    committed = json.loads((configs.parent / "schema" / "persona.schema.json").read_text())
    assert json.loads(result.output) == committed


def test_help_shows_examples(runner):
    result = runner.invoke(cli, ["--help"])
    assert result.exit_code == 0 and "profiles render" in result.output
    for command in ("render", "validate", "schema"):
        assert command in result.output


def test_console_entry_point_has_no_traceback(tmp_path):
    """Run as a real process: the error is one line on stderr and the status is 2."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    proc = subprocess.run(
        [sys.executable, "-m", "profiles", "render", str(bad)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("Error: 3 problems:") and "Traceback" not in proc.stderr


REPO = Path(__file__).resolve().parent.parent

_IMPORTED_BY = """
import runpy, sys
sys.argv = ["profiles", *sys.argv[1:]]
try:
    runpy.run_module("profiles", run_name="__main__")
except SystemExit as exit:
    code = exit.code
print("MODULES", " ".join(sorted(name for name in sys.modules if name.startswith(("profiles", "sqlalchemy", "rich")))))
"""


def _modules_after(*argv: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORTED_BY, *argv], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    (line,) = [line for line in proc.stdout.splitlines() if line.startswith("MODULES ")]
    return set(line.split()[1:])


def test_a_command_imports_only_what_it_uses():
    """`profiles render` loads neither the store, nor batch, nor generation, nor rich; each of those
    commands still loads when it runs, and `--help` lists every command."""
    modules = _modules_after("render", "profile_configs/summarizer.yaml", "-q", "Hi")
    assert "profiles.cli.personas" in modules and "profiles.loader" in modules
    unused = {"profiles.cli.batch", "profiles.batch", "profiles.cli.store", "profiles.store.base", "sqlalchemy",
              "profiles.cli.generate", "profiles.generate", "profiles.cli.report", "rich"}
    assert not modules & unused
    assert "profiles.cli.batch" in _modules_after("batch", "--help")
    listing = subprocess.run([sys.executable, "-m", "profiles", "--help"], capture_output=True, text=True, timeout=60)
    for name in ("render", "validate", "check", "explain", "diff", "schema", "chat-template", "batch", "generate",
                 "report", "store"):
        assert f"  {name} " in listing.stdout


#: A file every read of fails with EIO, as a failing disk does: opening it works, reading does not.
UNREADABLE = "/proc/self/mem"


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["report", UNREADABLE], "cannot read the file (Input/output error)"),
        (["store", "put", "greeter/name", "--file", UNREADABLE], "cannot read the file (Input/output error)"),
        (["batch", "--from", UNREADABLE, "--format", "csv", "--out", "-"], "cannot read the dataset (Input/output"),
        (["batch", "--from", UNREADABLE, "--format", "jsonl", "--out", "o.jsonl"], "cannot read the dataset"),
        (["batch", "--from", UNREADABLE, "--format", "yaml", "--out", "-", "--workers", "2"], "cannot read the"),
        (["render", UNREADABLE], "cannot read the file: Input/output error"),
        (["chat-template", UNREADABLE, "c.json"], "cannot read the file: Input/output error"),
        (["import", "prompty", UNREADABLE, "--out", "o"], "cannot read the file: Input/output error"),
    ],
)
def test_a_file_that_cannot_be_read_midway_is_a_clean_error(runner, tmp_path, monkeypatch, args, shown):
    """Opening it works and reading fails: report, store put and batch reached 'internal error: OSError'."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PROFILES_STORE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    result = runner.invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert f"Error: {UNREADABLE}: {shown}" in result.output and "internal error" not in result.output
    assert not (tmp_path / "o.jsonl").exists()


def test_a_folder_given_as_a_dataset_says_it_is_a_folder(runner, tmp_path):
    result = runner.invoke(cli, ["batch", "--from", str(tmp_path), "--format", "csv", "--out", "-"])
    assert result.exit_code == 2
    assert f"Error: {tmp_path}: a folder, not a dataset file; name the .csv, .jsonl" in result.output


def test_a_file_name_that_is_not_utf8_is_printed_escaped(runner, tmp_path, configs):
    """A name holding the byte 0xFF reaches Python as '\\udcff': printing it on a strict stream failed."""
    persona = tmp_path / "\udcff.yaml"  # the file system holds the byte itself
    persona.write_text((configs / "summarizer.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    validated = runner.invoke(cli, ["validate", str(persona)])
    assert validated.exit_code == 0 and validated.output == f"ok {tmp_path}/\\udcff.yaml\n"
    snapshot = runner.invoke(cli, ["check", str(persona), "--snapshot", str(tmp_path / "snap\udcff")])
    assert snapshot.exit_code == 0, snapshot.output
    assert f"snapshot {tmp_path}/snap\\udcff: " in snapshot.output and "internal error" not in snapshot.output
    assert (tmp_path / "snap\udcff" / ".profiles-snapshot").is_file()


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["batch", "--from", "data.csv", "--out", "-", "--render", "--question", "Hi \udcff"], "--question"),
        (["batch", "--from", "data.csv", "--out", "-", "--language", "\udcff"], "--language"),
        (["batch", "--from", "data.csv", "--out", "-", "--model", "gpt-\udcff"], "--model"),
        (["batch", "--from", "data.csv", "--out", "-", "--deployment", "\udcff"], "--deployment"),
        (["generate", "--base-url", "http://127.0.0.1:9/\udcff", "--model", "m"], "--base-url"),
        (["generate", "--base-url", "http://127.0.0.1:9/v1", "--model", "\udcff"], "--model"),
        (["generate", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--language", "\udcff"], "--language"),
    ],
)
def test_batch_and_generate_text_options_that_are_not_utf8_are_usage_errors(runner, tmp_path, monkeypatch, args,
                                                                               option):
    """A byte that is not UTF-8 (0xFF reaches Python as '\\udcff') went on into every persona, prompt and
    request, and ended in 'internal error: UnicodeEncodeError'; render refused it already."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.csv").write_text("name,role\nAda,Guide\n", encoding="utf-8")
    (tmp_path / "rules.txt").write_text("Bookshop staff.\n", encoding="utf-8")
    if args[0] == "generate":
        args = [*args, "--rules", "rules.txt", "--count", "1", "--max-retries", "0"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for {option}: {option} holds the byte 0xFF, which is not UTF-8 text" in result.output
