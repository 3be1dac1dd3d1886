"""The README's batch section runs as written."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from profiles.cli import cli

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
SECTION = README[README.index("## Personas in bulk") :]


def _block(language: str, index: int = 0) -> str:
    return re.findall(rf"```{language}\n(.*?)```", SECTION, re.S)[index]


def test_readme_mapping_is_the_example_mapping():
    """The mapping shown is the example file's, below its leading comments."""
    shown = _block("yaml").split("\n", 1)[1]
    text = (REPO / "profile_configs/datasets/customers.map.yaml").read_text(encoding="utf-8")
    assert text[text.index("id: customer_id") :] == shown


def test_readme_command_runs(runner, tmp_path, monkeypatch):
    """The README's `profiles batch` command writes twelve personas with prompts.

    It is in an `sh` block, which tests/test_readme.py leaves alone: it spans lines and writes a
    file, so it runs here with its output moved to a temporary folder.
    """
    monkeypatch.chdir(REPO)
    args = shlex.split(_block("sh").replace("\\\n", " "))
    assert args[:2] == ["profiles", "batch"]
    out = tmp_path / "personas.jsonl"
    args[args.index("personas.jsonl")] = str(out)
    result = runner.invoke(cli, args[1:])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 12 and records[0]["id"] == "c-001"
    assert set(records[0]["prompts"]) == {"system", "user"}


def test_readme_python_runs(monkeypatch, capsys):
    """The README's Python example prints what its comments say."""
    monkeypatch.chdir(REPO)
    exec(compile(_block("python"), "README.md", "exec"), {})
    assert capsys.readouterr().out.splitlines() == ["Support agent for 李白", "[]"]
