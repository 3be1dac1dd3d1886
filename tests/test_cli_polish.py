"""The command line's finish: coloured labels on a terminal only, an example in every --help, rates."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import uuid

import pytest

from profiles import ProfileConfig, UnknownModelWarning
from profiles.cli import cli

SUMMARIZER = os.path.join(os.path.dirname(__file__), "..", "profile_configs", "summarizer.yaml")
RED, YELLOW = "\x1b[31m\x1b[1mError:\x1b[0m", "\x1b[33m\x1b[1mWarning:\x1b[0m"


def _stderr_on_a_terminal(args: list[str], **env: str) -> tuple[int, str]:
    """Run `profiles` with standard error on a real pseudo-terminal; its status and what it showed."""
    master, slave = pty.openpty()
    environment = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "PROFILES_DEBUG")}
    child = subprocess.Popen(
        [sys.executable, "-m", "profiles", *args], stdout=subprocess.DEVNULL, stderr=slave, env={**environment, **env}
    )
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    return child.wait(timeout=60), shown.decode()


def test_error_is_red_on_a_terminal():
    status, shown = _stderr_on_a_terminal(["render", "/no/such/persona.yaml"])
    assert status == 2 and shown.startswith(f"{RED} /no/such/persona.yaml: file not found")


def test_a_usage_error_is_red_too():
    status, shown = _stderr_on_a_terminal(["render", "--bogus"])
    assert status == 2 and f"{RED} No such option '--bogus'." in shown and shown.startswith("Usage: ")


def test_warning_is_yellow_on_a_terminal():
    model = f"unheard-of-{uuid.uuid4().hex[:8]}"
    status, shown = _stderr_on_a_terminal(["render", SUMMARIZER, "--model", model, "--kind", "system"])
    assert status == 0 and shown.startswith(f"{YELLOW} no template family matches model '{model}'")


def test_no_color_turns_colour_off():
    status, shown = _stderr_on_a_terminal(["render", "/no/such/persona.yaml"], NO_COLOR="1")
    assert status == 2 and shown.startswith("Error: /no/such/persona.yaml") and "\x1b[" not in shown


def test_piped_output_has_no_colour():
    done = subprocess.run([sys.executable, "-m", "profiles", "render", "/no/such/persona.yaml"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith("Error: ") and "\x1b[" not in done.stderr


@pytest.mark.parametrize(
    "command", [[], ["render"], ["validate"], ["check"], ["explain"], ["schema"], ["batch"], ["diff"], ["report"]]
)
def test_every_help_shows_an_example(runner, command):
    result = runner.invoke(cli, [*command, "--help"])
    assert result.exit_code == 0
    assert "Example" in result.output
    assert f"profiles {command[0]} " in result.output if command else "profiles render " in result.output


@pytest.mark.parametrize(
    ("per_second", "shown"),
    [(2181.4, "2,181"), (123.4, "123"), (12.34, "12.3"), (1.234, "1.23"), (0.0519, "0.0519"), (0.0, "0")],
)
def test_one_format_for_every_rate(per_second, shown):
    from profiles.cli.progress import format_rate

    assert format_rate(per_second) == shown


def test_unknown_model_warnings_fail_a_test_that_does_not_expect_them():
    """The suite turns a stray UnknownModelWarning into an error (pyproject's filterwarnings)."""
    with pytest.raises(UnknownModelWarning):
        ProfileConfig(name="n", role="r").create_profile(model=f"stray-{uuid.uuid4().hex[:8]}")


def test_yaml_error_for_an_unclosed_bracket_names_where_it_opened(write, runner):
    path = write("p.yaml", "name: Ada\nrole: Helper\nconstraints: [one, two\ngoal: x\ndesc: y\n")
    result = runner.invoke(cli, ["validate", str(path)])
    assert result.exit_code == 2
    assert result.output == (
        f"Error: {path}:3:14: invalid YAML: the '[' opened here is not closed (noticed at line 4, column 5: "
        "did not find expected ',' or ']'); add ']'\n"
    )


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("name: Ada\ntools: {name: x\n\n\nrole: y\n", "2:8", "the '{' opened here is not closed"),
        ('name: "Ada\nrole: Helper\n', "1:7", "the quote opened here is not closed"),
    ],
)
def test_other_unclosed_openers_name_where_they_opened(write, text, where, what):
    from profiles import ConfigError, load_profile

    path = write("p.yaml", text)
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    assert str(caught.value).startswith(f"{path}:{where}: invalid YAML: {what}")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_every_command_shows_a_warning_as_a_warning_line(tmp_path, workers):
    """batch printed Python's raw warning, naming click's core.py (or the process pool's) and its source line."""
    data = tmp_path / "rows.csv"
    data.write_text("name,role\nAda,Guide\n", encoding="utf-8")
    model = f"unheard-of-{uuid.uuid4().hex[:8]}"
    args = ["batch", "--from", str(data), "--out", "-", "--model", model, "--workers", workers, "--quiet"]
    done = subprocess.run([sys.executable, "-m", "profiles", *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(f"Warning: no template family matches model '{model}'")
    assert "UnknownModelWarning" not in done.stderr and ".py:" not in done.stderr
