"""Every example in README.md runs and does what the text says.

Python blocks run as written from the repository's root. In bash blocks, each `profiles …`
line runs through the CLI and must exit 0, or 2 where the block is marked `<!-- exit 2 -->`.
The first two commands are the project's install-and-run commands, checked against `.ci/run`.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from profiles.cli import cli

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"(?:<!-- exit (\d) -->\n)?```(\w+)\n(.*?)```", re.S)
BLOCKS = [(int(code or 0), lang, body) for code, lang, body in BLOCK.findall(README)]
PYTHON = [body for _, lang, body in BLOCKS if lang == "python"]
COMMANDS = [
    (code, line)
    for code, lang, body in BLOCKS
    if lang == "bash"
    for line in body.splitlines()
    if line.startswith("profiles ")
]
#: What the text after a `<!-- exit 2 -->` block says its commands print, one quote per command, in order.
SHOWN_ERRORS = {
    line: " ".join(quote.split()).split("…")[0].strip()
    for block, prose in re.findall(r"<!-- exit 2 -->\n```bash\n(.*?)```\n\nprints (.*?)\n\n", README, re.S)
    for line, quote in zip(block.splitlines(), re.findall(r"`(Error: .*?)`", prose, re.S), strict=True)
}


@pytest.fixture(scope="module")
def _readme_store(tmp_path_factory) -> str:
    """One store for the whole module: the README's store commands build on each other, in order."""
    return f"sqlite:///{tmp_path_factory.mktemp('readme') / 'store.db'}"


@pytest.fixture(autouse=True)
def _store_outside_the_repo(_readme_store, monkeypatch):
    """The examples must not leave a `.profiles/store.db` in the repository."""
    monkeypatch.setenv("PROFILES_STORE_URL", _readme_store)
    monkeypatch.delenv("PROFILES_STORE_LABELS", raising=False)
    monkeypatch.delenv("PROFILES_ROLLOUT_KEY", raising=False)
    monkeypatch.setenv("PROFILES_AUTHOR", "readme")


@pytest.fixture(autouse=True)
def _providers_as_before():
    """An example that registers its own `store` provider does not change what the next one reads."""
    from profiles import providers

    saved = dict(providers._providers)
    yield
    providers._providers.clear()
    providers._providers.update(saved)


@pytest.fixture(scope="module", autouse=True)
def _no_snapshot_left():
    """The snapshot and export examples write under build/ (ignored by git); removed before and after."""
    import shutil

    folders = [REPO / "build" / "prompt-snapshot", REPO / "build" / "prompt-export"]
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    yield
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def test_readme_has_examples():
    assert len(PYTHON) >= 4 and len(COMMANDS) >= 5


@pytest.mark.parametrize("source", PYTHON, ids=[f"python-{index}" for index in range(len(PYTHON))])
def test_python_example(source, monkeypatch):
    monkeypatch.chdir(REPO)
    exec(compile(source, "README.md", "exec"), {"__name__": "readme"})


@pytest.mark.parametrize(("code", "line"), COMMANDS, ids=[line for _, line in COMMANDS])
def test_cli_example(runner, monkeypatch, code, line):
    monkeypatch.chdir(REPO)
    result = runner.invoke(cli, shlex.split(line)[1:])
    assert result.exit_code == code, result.output
    assert result.output.strip()
    if line in SHOWN_ERRORS:  # the message the README quotes for it
        assert SHOWN_ERRORS[line] in " ".join(result.output.split()), (SHOWN_ERRORS[line], result.output)


def test_every_error_the_readme_quotes_is_checked():
    assert len(SHOWN_ERRORS) == 3 and all(quote.startswith("Error: ") for quote in SHOWN_ERRORS.values())


def test_shell_batch_example_writes_what_the_readme_says(runner, tmp_path, monkeypatch):
    """The `sh` block of `profiles batch … --out personas.jsonl --render`, run as written in a copy of
    profile_configs (it writes into the working folder), gives the line the README shows."""
    import json
    import shutil

    (block,) = [body for _, lang, body in BLOCKS if lang == "sh" and "--out personas.jsonl --render" in body]
    shutil.copytree(REPO / "profile_configs", tmp_path / "profile_configs")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, shlex.split(block.replace("\\\n", " "))[1:])
    assert result.exit_code == 0, result.output
    first = json.loads((tmp_path / "personas.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert (first["id"], first["row"], list(first["prompts"])) == ("c-001", 1, ["system", "user"])
    assert first["prompts"]["user"].endswith("Where is my invoice?") and first["persona"]["name"]


def test_yaml_example_is_a_valid_persona(tmp_path):
    """The persona shown under 'Persona files' loads (its commented template file aside)."""
    from profiles.loader import parse_profiles

    yaml_blocks = [body for _, lang, body in BLOCKS if lang == "yaml"]
    (config,) = parse_profiles(yaml_blocks[0], base_dir=tmp_path)
    profile = config.create_profile()
    assert profile.format_user_prompt("Go") == "Task: Go"
    assert "3. " not in profile.format_system_prompt() and "2. Keep the summary" in profile.format_system_prompt()


def test_error_example_matches_real_output(runner, tmp_path):
    """The three-problem error shown in the README is what the CLI prints for that file."""
    shown = re.search(r"```text\n(Error: 3 problems:.*?)```", README, re.S).group(1)
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: Aristotle\nrole: Summarizer\ngoal:\n  - a\n  - b\ncolour: blue\nrole: Other\n")
    result = runner.invoke(cli, ["validate", str(bad)], catch_exceptions=False)
    assert result.exit_code == 2
    for shown_line in shown.strip().splitlines()[1:]:
        prefix = shown_line.strip().split("…")[0].replace("bad.yaml", str(bad))
        assert prefix in result.output, (prefix, result.output)


def test_lookalike_example_matches_real_output(runner, monkeypatch):
    """The sampling-plan line shown in the README is what a walk of its folder prints."""
    shown = re.search(r"```text\n(examples/generate/plan\.yaml:1:1: .*?)\n```", README, re.S).group(1)
    monkeypatch.chdir(REPO)
    result = runner.invoke(cli, ["validate", "examples/generate/"], catch_exceptions=False)
    assert result.exit_code == 2
    assert shown in result.output


def test_setup_commands_match_ci():
    """The README opens with the two commands, and CI runs the second one as written."""
    commands = [body.strip() for _, lang, body in BLOCKS[:2]]
    assert "pip install ." in commands[0] and "profiles render profile_configs/summarizer.yaml" in commands[0]
    assert commands[1].endswith("&& pytest") and 'pip install -e ".[test]"' in commands[1]
    ci = (REPO / ".ci" / "run").read_text()
    assert commands[1] in ci


def test_links_point_at_headings():
    """Every in-page link of the README leads to one of its headings."""

    def slug(heading: str) -> str:
        text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
        return text.replace(" ", "-")

    outside_code = re.sub(r"```.*?```", "", README, flags=re.S)
    headings = {slug(line.lstrip("#")) for line in outside_code.splitlines() if line.startswith("#")}
    links = set(re.findall(r"\]\(#([^)]+)\)", README))
    assert links and links <= headings, links - headings


def test_error_tree_matches_the_library():
    """The README's error tree is the one errors.py documents, and names every error class."""
    import importlib
    import inspect
    import pkgutil

    import profiles
    from profiles import errors

    def tree(text: str) -> str:
        start = text.index("```\nProfilesError") + 4
        return text[start : text.index("```", start)]

    assert tree(README) == tree(errors.__doc__)
    classes = set()
    for module in pkgutil.walk_packages(profiles.__path__, "profiles."):
        if not module.name.endswith("__main__"):
            for name, value in vars(importlib.import_module(module.name)).items():
                if inspect.isclass(value) and issubclass(value, errors.ProfilesError) and not name.startswith("_"):
                    classes.add(value.__name__)
    named = set(re.findall(r"^\s*(\w+Error)\b", tree(README), re.M))
    assert classes == named


def test_request_example_is_the_bundled_persona():
    """The persona shown under 'Messages, requests and replies' is profile_configs/triage.yaml as shipped."""
    shown = next(body for _, lang, body in BLOCKS if lang == "yaml" and body.startswith("name: Iris"))
    bundled = (REPO / "profile_configs" / "triage.yaml").read_text(encoding="utf-8")
    assert bundled.endswith(shown)
    assert all(line.startswith("#") for line in bundled[: -len(shown)].splitlines())
