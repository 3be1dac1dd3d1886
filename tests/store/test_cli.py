"""The ``store`` command group, run in-process with click's CliRunner against real stores."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from profiles.cli.store import store as store_group
from profiles.store import PromptStore


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def run(runner, store_url):
    """Invoke ``store --store URL ...`` and return the click Result."""

    def invoke(*args: str, input: str | bytes | None = None):
        return runner.invoke(store_group, ["--store", store_url, *args], input=input)

    return invoke


def test_put_then_get_round_trips_exact_content(run):
    """Content from stdin comes back byte for byte, without an added newline."""
    result = run(
        "put",
        "summary",
        "--language",
        "zh_tw",
        "--label",
        "production",
        "--note",
        "first",
        "--author",
        "ana",
        input="第一行\r\nno final newline",
    )
    assert result.exit_code == 0, result.output
    assert result.output == "stored summary [zh-TW] v1 (production)\n"
    got = run("get", "summary", "--language", "zh-TW", "--label", "production")
    assert got.exit_code == 0 and got.stdout_bytes == "第一行\r\nno final newline".encode()


def test_put_reads_a_file(run, tmp_path, store_url):
    """--file reads the prompt from a file; the store holds it."""
    (tmp_path / "prompt.txt").write_text("from a file\n", encoding="utf-8")
    assert run("put", "s", "--file", str(tmp_path / "prompt.txt"), "--model", "gpt-4o").exit_code == 0
    with PromptStore(store_url) as opened:
        assert opened.get("s", model="gpt-4o").content == "from a file\n"


def test_get_uses_fallbacks_and_versions(run):
    """get follows the language chain and reads a given version."""
    run("put", "s", input="generic v1\n")
    run("put", "s", input="generic v2\n")
    run("put", "s", "--language", "zh", input="zh\n")
    assert run("get", "s", "--language", "zh-TW").output == "zh\n"
    assert run("get", "s", "--language", "fr").output == "generic v2\n"
    assert run("get", "s", "--version", "1").output == "generic v1\n"


def test_list_history_label_and_diff(run):
    """The read commands print one line per item and the label command moves a label."""
    run("put", "s", "--label", "production", "--author", "ana", input="one\n")
    run("put", "s", "--note", "shorter", input="two\n")
    moved = run("label", "s", "production", "2")
    assert moved.exit_code == 0 and moved.output == "production -> s v2\n"
    assert run("list").output == "s\t-\t-\tv2\tproduction=v2\n"
    lines = run("history", "s").output.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["v1", "v2"]
    assert lines[0].split("\t")[2] == "ana" and lines[1].endswith("\tproduction\tshorter")
    diff = run("diff", "s", "1", "2").output
    assert "-one\n" in diff and "+two\n" in diff


def test_export_and_import(run, tmp_path, runner):
    """export writes YAML files; import into another store copies them; a second import adds nothing."""
    run("put", "s", "--label", "production", input="one\n")
    exported = run("export", str(tmp_path / "out"))
    assert exported.exit_code == 0 and "exported 1 prompt file(s)" in exported.output
    other = f"sqlite:///{tmp_path / 'other.db'}"
    first = runner.invoke(store_group, ["--store", other, "import", str(tmp_path / "out")])
    assert first.exit_code == 0 and first.output == "added 1 version(s), moved 1 label(s)\n"
    again = runner.invoke(store_group, ["--store", other, "import", str(tmp_path / "out")])
    assert again.output == "added 0 version(s), moved 0 label(s)\n"
    assert (
        runner.invoke(store_group, ["--store", other, "get", "s", "--label", "production"]).output == "one\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("get", "missing"), "no prompt 'missing'"),
        (("label", "missing", "production", "1"), "no such version"),
        (("history", "missing"), "no prompt missing"),
        (("get", "s", "--label", "a", "--version", "1"), "not both"),
    ],
)
def test_store_errors_print_a_message_and_exit_2(run, args, message):
    """A ProfilesError is printed as 'Error: ...' on stderr, with no traceback, exit status 2."""
    result = run(*args)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: ") and message in result.stderr
    assert "Traceback" not in result.output and result.stdout == ""


def test_corrupt_store_is_a_clean_error(runner, tmp_path):
    """A corrupt store file is reported with its path, exit 2."""
    path = tmp_path / "bad.db"
    path.write_bytes(b"\x00garbage" * 500)
    result = runner.invoke(store_group, ["--store", f"sqlite:///{path}", "list"])
    assert result.exit_code == 2 and str(path) in result.stderr and "Traceback" not in result.output


def test_env_var_beats_the_store_option(runner, tmp_path, monkeypatch):
    """PROFILES_STORE_URL wins over --store, as documented in --help."""
    monkeypatch.setenv("PROFILES_STORE_URL", f"sqlite:///{tmp_path / 'env.db'}")
    result = runner.invoke(
        store_group, ["--store", f"sqlite:///{tmp_path / 'opt.db'}", "put", "s"], input="x"
    )
    assert result.exit_code == 0
    assert (tmp_path / "env.db").exists() and not (tmp_path / "opt.db").exists()
    assert "PROFILES_STORE_URL" in runner.invoke(store_group, ["--help"]).output


def test_non_utf8_input_is_refused(run):
    """Bytes that are not UTF-8 are a clear usage error, and nothing is stored."""
    result = run("put", "s", input=b"\xff\xfe bad")
    assert result.exit_code == 2 and result.stderr.startswith("Error: <stdin>: not UTF-8")
    assert run("list").output == ""
