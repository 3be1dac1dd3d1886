"""Every failure reaches the user as a bounded ProfilesError; the CLI never shows a traceback."""

from __future__ import annotations

import pytest

import profiles.loader
from profiles.cli import cli
from profiles.errors import MAX_MESSAGE_CHARS, ProfilesError, RenderError

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.mark.parametrize("error", [ValueError("boom"), RecursionError("deep"), MemoryError(), KeyError("k")])
def test_unexpected_errors_are_one_line_internal_errors(runner, write, monkeypatch, error):
    def fail(*_args, **_kwargs):
        raise error

    monkeypatch.setattr(profiles.loader, "load_profile", fail)
    monkeypatch.delenv("PROFILES_DEBUG", raising=False)
    result = runner.invoke(cli, ["render", str(write("p.yaml", "name: A\nrole: B\n"))])
    assert result.exit_code == 1
    assert result.output.startswith("Error: internal error: " + type(error).__name__)
    assert "Please report it" in result.output and "PROFILES_DEBUG=1" in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_debug_shows_the_exception(runner, write, monkeypatch):
    def fail(*_args, **_kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(profiles.loader, "load_profile", fail)
    monkeypatch.setenv("PROFILES_DEBUG", "1")
    result = runner.invoke(cli, ["render", str(write("p.yaml", "name: A\nrole: B\n"))])
    assert isinstance(result.exception, ValueError)


def test_user_errors_exit_2_without_traceback(runner, write):
    result = runner.invoke(cli, ["render", str(write("p.yaml", "name: A\nrole: B\ngoal: '{{ 7 ** 2000000000 }}'\n"))])
    assert result.exit_code == 2
    assert result.output.startswith("Error: ") and "exponent" in result.output
    assert "Traceback" not in result.output


def test_messages_are_bounded():
    assert len(str(ProfilesError("x" * 100_000))) <= MAX_MESSAGE_CHARS


def test_a_secret_in_a_template_error_is_not_echoed(write, monkeypatch):
    """A template that fails on a secret's value (int() quoting it) does not show the value."""
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    path = write(
        "p.yaml",
        "name: {key: AWS_SECRET_ACCESS_KEY, default: N}\nrole: B\nallow_secrets: [name]\n"
        "templates:\n  user: {inline: '{{ name|int(base=2) }}{{ name.nope }}'}\n",
    )
    profile = profiles.loader.load_profile(path).create_profile()
    try:
        profile.format_user_prompt()
    except RenderError as exc:
        assert SECRET not in str(exc)
    with pytest.raises(RenderError) as caught:
        profile.format_prompt("user", strict=False)
    assert SECRET not in str(caught.value)
