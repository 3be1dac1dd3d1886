"""The `env` provider: process environment over `.env.<deployment>` over `.env`, expanded safely."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from profiles import Context, EnvProvider, ResolutionError
from profiles.providers import dotenv as dotenv_module


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A persona folder and a separate working directory, the latter made current."""
    persona = tmp_path / "personas"
    work = tmp_path / "work"
    persona.mkdir()
    work.mkdir()
    monkeypatch.chdir(work)
    for name in ("ENV_TEST_NAME", "ENV_TEST_OTHER", "AWS_SECRET_ACCESS_KEY", "PROFILES_ENV_ALLOW"):
        monkeypatch.delenv(name, raising=False)
    return persona, work


def find(key: str, base_dir: Path | None, deployment: str | None = None):
    return EnvProvider().find(key, Context(deployment=deployment, base_dir=base_dir))


def test_process_environment_wins_over_files(dirs, monkeypatch):
    """A variable set in the process beats both files and is named as coming from the process."""
    persona, _ = dirs
    (persona / ".env").write_text("ENV_TEST_NAME=from-dotenv\n")
    (persona / ".env.prod").write_text("ENV_TEST_NAME=from-prod\n")
    monkeypatch.setenv("ENV_TEST_NAME", "from-process")
    found = find("ENV_TEST_NAME", persona, "prod")
    assert (found.value, found.source) == ("from-process", "env:ENV_TEST_NAME")


def test_deployment_file_wins_over_plain_dotenv(dirs):
    """`.env.prod` beats `.env`, and provenance names the file."""
    persona, _ = dirs
    (persona / ".env").write_text("ENV_TEST_NAME=from-dotenv\n")
    (persona / ".env.prod").write_text("ENV_TEST_NAME=from-prod\n")
    found = find("ENV_TEST_NAME", persona, "prod")
    assert found.value == "from-prod"
    assert found.source == f"env:ENV_TEST_NAME from {persona / '.env.prod'}"
    plain = find("ENV_TEST_NAME", persona, None)
    assert (plain.value, plain.source) == ("from-dotenv", f"env:ENV_TEST_NAME from {persona / '.env'}")


def test_other_deployments_file_is_not_read(dirs):
    persona, _ = dirs
    (persona / ".env.staging").write_text("ENV_TEST_NAME=from-staging\n")
    assert find("ENV_TEST_NAME", persona, "prod") is None


def test_persona_folder_before_working_directory(dirs):
    """The persona's `.env` beats the working directory's; a cwd `.env.prod` beats both `.env`s."""
    persona, work = dirs
    (persona / ".env").write_text("ENV_TEST_NAME=persona\n")
    (work / ".env").write_text("ENV_TEST_NAME=work\nENV_TEST_OTHER=work-other\n")
    assert find("ENV_TEST_NAME", persona).value == "persona"
    other = find("ENV_TEST_OTHER", persona)
    assert (other.value, other.source) == ("work-other", "env:ENV_TEST_OTHER from .env")
    (work / ".env.prod").write_text("ENV_TEST_NAME=work-prod\n")
    assert find("ENV_TEST_NAME", persona, "prod").value == "work-prod"


def test_empty_value_falls_through_to_next_layer(dirs, monkeypatch):
    persona, _ = dirs
    (persona / ".env").write_text("ENV_TEST_NAME=from-dotenv\n")
    (persona / ".env.prod").write_text("ENV_TEST_NAME=\n")
    monkeypatch.setenv("ENV_TEST_NAME", "")
    assert find("ENV_TEST_NAME", persona, "prod").value == "from-dotenv"


def test_files_never_reach_os_environ(dirs):
    persona, _ = dirs
    (persona / ".env").write_text("ENV_TEST_NAME=from-dotenv\n")
    assert find("ENV_TEST_NAME", persona).value == "from-dotenv"
    assert "ENV_TEST_NAME" not in os.environ


def test_parsed_files_are_cached_until_edited(dirs, monkeypatch):
    """Repeated lookups parse a file once; an edited file is read again at the next call."""
    persona, _ = dirs
    path = persona / ".env"
    path.write_text("ENV_TEST_NAME=first\n")
    calls = []
    real = dotenv_module._parse

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(dotenv_module, "_parse", counting)
    for _ in range(5):
        assert find("ENV_TEST_NAME", persona).value == "first"
    assert len(calls) == 1
    path.write_text("ENV_TEST_NAME=second, longer\n")
    assert find("ENV_TEST_NAME", persona).value == "second, longer"
    assert len(calls) == 2


def test_same_size_edit_with_new_mtime_is_seen(dirs):
    persona, _ = dirs
    path = persona / ".env"
    path.write_text("ENV_TEST_NAME=aaaa\n")
    assert find("ENV_TEST_NAME", persona).value == "aaaa"
    path.write_text("ENV_TEST_NAME=bbbb\n")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert find("ENV_TEST_NAME", persona).value == "bbbb"


def test_interpolation_uses_layered_file_keys(dirs):
    """`${VAR}` in `.env.prod` may refer to a key defined in `.env`."""
    persona, _ = dirs
    (persona / ".env").write_text("FIRST=Plato\n")
    (persona / ".env.prod").write_text("ENV_TEST_NAME=${FIRST} the Wise\n")
    found = find("ENV_TEST_NAME", persona, "prod")
    assert found.value == "Plato the Wise"
    assert found.source.endswith(".env.prod")
    assert not found.secret


def test_interpolation_never_reads_the_process_environment(dirs, monkeypatch):
    """A `.env` that tries `${AWS_SECRET_ACCESS_KEY}` does not get the process's secret."""
    persona, _ = dirs
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "process-secret-value")
    (persona / ".env").write_text("ENV_TEST_NAME=${AWS_SECRET_ACCESS_KEY}\nENV_TEST_OTHER=x${AWS_SECRET_ACCESS_KEY}y\n")
    assert find("ENV_TEST_NAME", persona).value == ""
    other = find("ENV_TEST_OTHER", persona)
    assert other.value == "xy"
    assert "process-secret-value" not in repr(other)


def test_interpolation_default_and_process_value_of_same_key(dirs, monkeypatch):
    """`${VAR:-default}` uses the default when no file has VAR, even when the process has it."""
    persona, _ = dirs
    monkeypatch.setenv("ENV_TEST_OTHER", "from-process")
    (persona / ".env").write_text("ENV_TEST_NAME=${ENV_TEST_OTHER:-fallback}\n")
    assert find("ENV_TEST_NAME", persona).value == "fallback"


def test_interpolated_credential_taints_the_value(dirs):
    """A value built from a credential-like key is a secret even if its own key is not."""
    persona, _ = dirs
    (persona / ".env").write_text("API_TOKEN=t0k3n\nENV_TEST_NAME=bearer ${API_TOKEN}\n")
    found = find("ENV_TEST_NAME", persona)
    assert found.value == "bearer t0k3n"
    assert found.secret
    assert "t0k3n" not in repr(found)


def test_interpolation_cycle_is_an_error(dirs):
    persona, _ = dirs
    (persona / ".env").write_text("ENV_TEST_NAME=${ENV_TEST_OTHER}\nENV_TEST_OTHER=${ENV_TEST_NAME}\n")
    with pytest.raises(ResolutionError, match="ENV_TEST_NAME → ENV_TEST_OTHER → ENV_TEST_NAME"):
        find("ENV_TEST_NAME", persona)


def test_credential_key_is_secret(dirs, monkeypatch):
    persona, _ = dirs
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI")
    found = find("AWS_SECRET_ACCESS_KEY", persona)
    assert found.secret and found.value == "wJalrXUtnFEMI"
    assert "wJalrXUtnFEMI" not in repr(found)


def test_allow_list_refuses_process_and_file_keys(dirs, monkeypatch):
    """PROFILES_ENV_ALLOW limits reads from the process and from files, naming key and variable."""
    persona, _ = dirs
    (persona / ".env").write_text("ENV_TEST_OTHER=file\n")
    monkeypatch.setenv("ENV_TEST_NAME", "process")
    monkeypatch.setenv("PROFILES_ENV_ALLOW", "SUMMARY_*, PUBLIC_*")
    for key in ("ENV_TEST_NAME", "ENV_TEST_OTHER"):
        with pytest.raises(ResolutionError) as caught:
            find(key, persona)
        assert key in str(caught.value) and "PROFILES_ENV_ALLOW" in str(caught.value)
    monkeypatch.setenv("PROFILES_ENV_ALLOW", "ENV_TEST_*")
    assert find("ENV_TEST_NAME", persona).value == "process"
    assert find("ENV_TEST_OTHER", persona).value == "file"


def test_allow_list_applies_to_references(dirs, monkeypatch):
    persona, _ = dirs
    (persona / ".env").write_text("HIDDEN=x\nENV_TEST_NAME=${HIDDEN}\n")
    monkeypatch.setenv("PROFILES_ENV_ALLOW", "ENV_TEST_*")
    with pytest.raises(ResolutionError, match="'HIDDEN'"):
        find("ENV_TEST_NAME", persona)


@pytest.mark.parametrize("deployment", ["../etc", "a/b", ".hidden", "", "x" * 80])
def test_unsafe_deployment_names_are_refused(dirs, deployment):
    persona, _ = dirs
    (persona / ".env").write_text("ENV_TEST_NAME=x\n")
    if deployment == "":
        assert find("ENV_TEST_NAME", persona, deployment).value == "x"  # empty means none
        return
    with pytest.raises(ResolutionError, match="deployment name"):
        find("ENV_TEST_NAME", persona, deployment)


def test_oversized_dotenv_is_refused(dirs, monkeypatch):
    persona, _ = dirs
    monkeypatch.setattr(dotenv_module, "MAX_DOTENV_BYTES", 10)
    (persona / ".env").write_text("ENV_TEST_NAME=far too long for the limit\n")
    with pytest.raises(ResolutionError, match="limit"):
        find("ENV_TEST_NAME", persona)


def test_lookup_without_persona_reads_working_directory(dirs):
    _, work = dirs
    (work / ".env.prod").write_text("ENV_TEST_NAME=cwd-prod\n")
    assert EnvProvider().lookup("ENV_TEST_NAME", deployment="prod") == "cwd-prod"


@pytest.mark.parametrize(
    ("text", "line", "named"),
    [
        ('ENV_TEST_OTHER=ok\nENV_TEST_NAME="never closed\nMORE=x\n', 2, "the line setting ENV_TEST_NAME"),
        ("this is not a setting\nENV_TEST_NAME=ok\n", 1, "this line"),
    ],
)
def test_unparseable_dotenv_line_is_an_error_at_its_line(dirs, text, line, named):
    """A line python-dotenv skips (with a log line naming no file) would drop keys without a trace."""
    persona, _ = dirs
    (persona / ".env").write_text(text)
    with pytest.raises(ResolutionError) as caught:
        find("ENV_TEST_NAME", persona)
    message = str(caught.value)
    assert f"{persona / '.env'}:{line}: cannot parse {named}" in message and "KEY=value" in message
    assert "never closed" not in message  # the value may be a secret


def test_dotenv_that_is_not_utf8_names_its_line_not_its_bytes(dirs):
    persona, _ = dirs
    (persona / ".env").write_bytes(b"ENV_TEST_OTHER=ok\nENV_TEST_NAME=caf\xe9\n")
    with pytest.raises(ResolutionError, match=r"\.env:2: this line is not UTF-8") as caught:
        find("ENV_TEST_NAME", persona)
    assert "xe9" not in str(caught.value)


def test_dotenv_syntax_python_dotenv_accepts(dirs):
    """A BOM, CRLF, `export`, quotes, comments and multiline values read as python-dotenv reads them."""
    from dotenv import dotenv_values

    persona, _ = dirs
    (persona / ".env").write_bytes(
        b'\xef\xbb\xbfexport ENV_TEST_NAME="two\r\nlines" # comment\r\nENV_TEST_OTHER=\'it # stays\'\r\n'
    )
    assert find("ENV_TEST_NAME", persona).value == "two\nlines"  # as python-dotenv opening the file reads it
    assert find("ENV_TEST_OTHER", persona).value == "it # stays"
    without_bom = persona / "plain.env"
    without_bom.write_bytes((persona / ".env").read_bytes()[3:])
    assert dotenv_values(without_bom, interpolate=False)["ENV_TEST_NAME"] == "two\nlines"


def test_a_variable_that_is_not_utf8_is_refused_without_its_value(dirs, monkeypatch):
    """Python hands such bytes on as lone surrogates, printed as '�' and not encodable into a request."""
    persona, _ = dirs
    monkeypatch.setenv("ENV_TEST_NAME", "caf\udce9")  # the bytes b"caf\xe9", as a Latin-1 shell sets them
    with pytest.raises(ResolutionError, match="ENV_TEST_NAME holds bytes that are not UTF-8") as caught:
        find("ENV_TEST_NAME", persona)
    assert "caf" not in str(caught.value)
    monkeypatch.setenv("ENV_TEST_NAME", "café 你好")
    assert find("ENV_TEST_NAME", persona).value == "café 你好"


#: Pieces `.env` lines are made of, odd ones included: quotes, escapes, comments, `export`, CR.
_DOTENV_PIECES = st.sampled_from(
    ["KEY", "OTHER_2", "=", " ", "'", '"', "\\", "#", "export ", "\n", "\r\n", "value", "${KEY}", "é", "\t", "a b"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_DOTENV_PIECES, max_size=14).map("".join))
@example("KEY=\nKEY")  # a bare key unsets the line before it
def test_dotenv_files_read_as_python_dotenv_reads_them_or_fail_at_a_line(text):
    """Every file python-dotenv parses whole gives its keys; one with a line it skips is an error at that line."""
    import io

    from dotenv import dotenv_values
    from dotenv.parser import parse_stream

    bad = [binding.original.line for binding in parse_stream(io.StringIO(text)) if binding.error]
    try:
        got = dotenv_module._parse_text(text, ".env")
    except ResolutionError as exc:
        assert bad and str(exc).startswith(f".env:{bad[0]}: cannot parse"), (text, str(exc))
        return
    assert not bad, text
    expected = {key: value for key, value in dotenv_values(stream=io.StringIO(text), interpolate=False).items()}
    assert got == {key: value for key, value in expected.items() if value is not None}
