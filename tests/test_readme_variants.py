"""The README's section on families, kinds and tools runs as written."""

from __future__ import annotations

import re
from pathlib import Path

from profiles.loader import load_profile

SECTION = "## Model families, prompt kinds and tools"


def _blocks(language: str) -> list[str]:
    text = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    following = section.find("\n## ", len(SECTION))
    section = section if following == -1 else section[:following]
    return re.findall(rf"```{language}\n(.*?)```", section, re.S)


def test_python_example_runs():
    """The Python example's assertions hold."""
    (code,) = _blocks("python")
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert "Could not read your reply" in namespace["correction"]


def test_planner_example_renders(tmp_path):
    """The planner template and persona from the README render the documented kind."""
    families, persona = _blocks("yaml")
    (template,) = _blocks("jinja")
    (tmp_path / "prompts" / "default" / "en").mkdir(parents=True)
    (tmp_path / "prompts" / "default" / "en" / "planner.j2").write_text(template, encoding="utf-8")
    (tmp_path / "prompts" / "families.yaml").write_text(families, encoding="utf-8")
    (tmp_path / "prompts" / "granite33" / "en").mkdir(parents=True)
    (tmp_path / "hypatia.yaml").write_text(persona, encoding="utf-8")
    config = load_profile(tmp_path / "hypatia.yaml")
    profile = config.create_profile()
    expected = "Plan for Hypatia: split a trip into at most 5 steps."
    assert profile.format_prompt("planner", task="a trip") == expected
    assert config.create_profile(model="granite-3.3-8b").family == "granite33"
