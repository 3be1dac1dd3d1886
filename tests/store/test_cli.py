"""The ``store`` command group, run in-process with click's CliRunner against real stores."""

from __future__ import annotations

import json

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


def test_tables_show_control_characters_as_escapes(run):
    """A note or label written by someone else cannot drive the reader's terminal: `ESC ]` and the
    like print as escapes in every table, while `--json` keeps the text as it is."""
    note = "evil\x1b]0;pwned\x07 \x9b2J"
    run("put", "s", "--label", "la\x1bb", "--note", note, input="one\n")
    for args in (("history", "s"), ("list",)):
        shown = run(*args).output
        assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
        assert "la\\x1bb" in shown
    assert "evil\\x1b]0;pwned\\x07 \\x9b2J" in run("history", "s").output
    assert json.loads(run("history", "s", "--json").output)["versions"][0]["note"] == note


def test_list_history_label_and_diff(run):
    """The read commands print tables with a header and the label command moves a label."""
    run("put", "s", "--label", "production", "--author", "ana", input="one\n")
    run("put", "s", "--note", "shorter", "--author", "bo", input="two\n")
    moved = run("label", "s", "production", "2", "--author", "cy", "--note", "release 2")
    assert moved.exit_code == 0 and moved.output == "production -> s v2\n"
    listed = run("list").output.splitlines()
    assert listed[0].split() == ["name", "language", "model", "versions", "labels"]
    assert listed[1].split() == ["s", "-", "-", "2", "production=v2"]
    lines = run("history", "s").output.splitlines()
    assert lines[0].split() == ["version", "time", "author", "note", "labels"]
    assert [line.split()[0] for line in lines[1:3]] == ["v1", "v2"]
    assert lines[1].split()[2] == "ana" and lines[2].split()[2:] == ["bo", "shorter", "production"]
    moves = lines[lines.index("label moves") + 1 :]
    assert moves[0].split() == ["label", "move", "from", "to", "time", "author", "note"]
    assert moves[1].split()[:4] == ["production", "#1", "-", "v1"]
    assert moves[2].split()[:4] == ["production", "#2", "v1", "v2"] and moves[2].split()[-3:] == ["cy", "release", "2"]
    diff = run("diff", "s", "1", "2").output
    assert "-one\n" in diff and "+two\n" in diff


def test_read_commands_offer_json(run):
    """--json on every read command gives the data whole, for scripts."""
    run("put", "s", "--label", "production", "--author", "ana", "--note", "first", input="one\n")
    run("put", "s", "--author", "bo", input="two\n")
    run("rollout", "s", "staging", "1=75", "2=25", "--author", "cy")
    listed = json.loads(run("list", "--json").output)
    assert listed == [
        {
            "name": "s",
            "language": "",
            "model": "",
            "versions": 2,
            "updated_at": listed[0]["updated_at"],
            "labels": {"production": 1, "staging": 1},
            "rollouts": {"staging": [{"version": 1, "weight": 75}, {"version": 2, "weight": 25}]},
        }
    ]
    history = json.loads(run("history", "s", "--json").output)
    assert [item["version"] for item in history["versions"]] == [1, 2]
    first = history["versions"][0]
    assert first["content"] == "one\n" and first["labels"] == ["production", "staging"]
    assert [(move["label"], move["from"], move["to"], move["author"]) for move in history["moves"]] == [
        ("production", None, 1, "ana"),
        ("staging", None, 1, "cy"),
    ]
    assert history["moves"][1]["to_arms"] == [{"version": 1, "weight": 75}, {"version": 2, "weight": 25}]
    got = json.loads(run("get", "s", "--deployment", "prod", "--json").output)
    assert (got["version"], got["matched_label"], got["content"]) == (1, "production", "one\n")
    assert json.loads(run("get", "s", "--json").output)["matched_label"] == "latest"
    assert json.loads(run("diff", "s", "1", "2", "--json").output)["diff"].endswith("+two\n")
    assert json.loads(run("protect", "--json").output) == []
    run("protect", "production")
    assert [item["label"] for item in json.loads(run("protect", "--json").output)] == ["production"]


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
    run("put", "other", input="x")
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


def test_store_option_beats_the_env_var(runner, tmp_path, monkeypatch):
    """--store wins over PROFILES_STORE_URL, as documented in --help."""
    monkeypatch.setenv("PROFILES_STORE_URL", f"sqlite:///{tmp_path / 'env.db'}")
    result = runner.invoke(store_group, ["--store", f"sqlite:///{tmp_path / 'opt.db'}", "put", "s"], input="x")
    assert result.exit_code == 0
    assert (tmp_path / "opt.db").exists() and not (tmp_path / "env.db").exists()
    assert "Beats PROFILES_STORE_URL" in " ".join(runner.invoke(store_group, ["--help"]).output.split())


def test_store_option_after_the_subcommand(runner, tmp_path, monkeypatch):
    """--store is accepted on each subcommand too, and a subcommand's beats the group's."""
    monkeypatch.setenv("PROFILES_STORE_URL", f"sqlite:///{tmp_path / 'env.db'}")
    sub, group = f"sqlite:///{tmp_path / 'sub.db'}", f"sqlite:///{tmp_path / 'group.db'}"
    assert runner.invoke(store_group, ["put", "--store", sub, "s"], input="x").exit_code == 0
    assert runner.invoke(store_group, ["--store", group, "put", "s", "--store", sub], input="y").exit_code == 0
    assert runner.invoke(store_group, ["list", "--store", sub]).output.splitlines()[1].split()[3] == "2"
    assert not (tmp_path / "group.db").exists() and not (tmp_path / "env.db").exists()
    assert "--store URL" in runner.invoke(store_group, ["history", "--help"]).output


@pytest.mark.parametrize(
    "args",
    [("list",), ("get", "s"), ("history", "s"), ("diff", "s", "1", "2"), ("export", "out"), ("protect",)],
)
def test_read_commands_never_create_a_store(runner, tmp_path, monkeypatch, args):
    """A read on a missing store names the URL and says that put creates it; no file or folder appears."""
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'x' / 'y' / 'z.db'}"
    result = runner.invoke(store_group, ["--store", url, *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error: no prompt store at {url}") and "`profiles store put NAME`" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_read_commands_on_the_default_store_create_nothing(runner, tmp_path, monkeypatch):
    """Without --store or PROFILES_STORE_URL, reading does not make .profiles/store.db."""
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(store_group, ["list"])
    assert result.exit_code == 2 and ".profiles" in result.stderr
    assert not (tmp_path / ".profiles").exists()


@pytest.mark.parametrize("command", [("list",), ("put", "s")])
def test_a_store_value_that_is_no_url_and_no_file_is_refused(runner, tmp_path, monkeypatch, command):
    """`--store garbage` shows the accepted forms, for reads and writes, and creates no file 'garbage'."""
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(store_group, ["--store", "garbage", *command], input="x")
    assert result.exit_code == 2
    assert "'garbage' is neither a store URL nor the path of an existing store file" in result.stderr
    assert "sqlite:///" in result.stderr and "postgresql+psycopg://" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_bad_env_value_is_refused_too(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PROFILES_STORE_URL", "garbage")
    result = runner.invoke(store_group, ["put", "s"], input="x")
    assert result.exit_code == 2 and result.stderr.startswith("Error: PROFILES_STORE_URL 'garbage' is neither")


def test_an_existing_store_file_may_be_named_by_its_path(runner, sqlite_url):
    """A bare path is fine when it names a store that exists."""
    assert runner.invoke(store_group, ["--store", sqlite_url, "put", "s"], input="x").exit_code == 0
    path = sqlite_url.removeprefix("sqlite:///")
    assert runner.invoke(store_group, ["--store", path, "get", "s"]).output == "x"


@pytest.mark.parametrize("content", ["", "  \n\t\n"])
def test_empty_content_is_refused(run, content):
    """A put of nothing (`< /dev/null`) stores no version."""
    result = run("put", "s", input=content)
    assert result.exit_code == 2 and "is empty; a prompt needs text" in result.stderr
    assert run("list").exit_code == 2  # nothing was created: the store does not exist yet


def test_content_over_the_limit_is_refused_before_the_store_opens(run, tmp_path):
    """A file (or pipe) over the most a version holds is refused, read no further than that, storing nothing."""
    from profiles.store.keys import MAX_CONTENT_BYTES

    big = tmp_path / "big.txt"
    big.write_bytes(b"a" * (MAX_CONTENT_BYTES + 1))
    result = run("put", "s", "--file", str(big))
    assert result.exit_code == 2
    assert f"Error: {big}: over {MAX_CONTENT_BYTES:,} bytes, the most a stored prompt holds" in result.stderr
    assert run("list").exit_code == 2  # nothing was created: the store does not exist yet


def test_unchanged_put_adds_no_version_and_still_labels(run):
    """Putting the newest version's text again says so, adds nothing, and still applies --label."""
    run("put", "s", input="one\n")
    run("put", "s", input="two\n")
    again = run("put", "s", "--label", "production", input="two\n")
    assert again.exit_code == 0 and again.output.startswith("unchanged (v2)") and "(production)" in again.output
    history = json.loads(run("history", "s", "--json").output)
    assert [item["version"] for item in history["versions"]] == [1, 2]
    assert history["versions"][1]["labels"] == ["production"]
    assert run("put", "s", input="one\n").output == "stored s v3\n"  # equal to an older one: a new version


def test_label_expect_is_a_compare_and_set(run):
    run("put", "s", "--label", "production", input="one\n")
    run("put", "s", input="two\n")
    run("put", "s", input="three\n")
    assert run("label", "s", "production", "2", "--expect", "1").exit_code == 0
    lost = run("label", "s", "production", "3", "--expect", "1")
    assert lost.exit_code == 2 and "points at v2, not v1 as expected" in lost.stderr and "--expect 2" in lost.stderr
    assert run("get", "s", "--label", "production").output == "two\n"
    assert run("label", "s", "staging", "3", "--expect", "0").exit_code == 0  # 0: the label must not exist yet
    assert run("label", "s", "staging", "1", "--expect", "0").exit_code == 2


def test_label_undo_steps_back_through_the_moves(run):
    for text in ("one\n", "two\n", "three\n"):
        run("put", "s", input=text)
    run("label", "s", "production", "1")
    run("label", "s", "production", "2")
    run("label", "s", "production", "3")
    assert run("label", "s", "production", "--undo").output == "production -> s v2 (undid move #3)\n"
    assert run("label", "s", "production", "--undo").output == "production -> s v1 (undid move #2)\n"
    assert run("label", "s", "production", "--undo").output == "production removed from s (undid move #1)\n"
    left = run("label", "s", "production", "--undo")
    assert left.exit_code == 2 and "no recorded move left to undo" in left.stderr
    assert run("label", "s", "production").exit_code == 2  # neither VERSION nor --undo
    notes = [move["note"] for move in json.loads(run("history", "s", "--json").output)["moves"]]
    assert notes[3:] == ["undo of move #3 (v3 → v2)", "undo of move #2 (v2 → v1)", "undo of move #1 (v1 → -)"]


def test_protected_labels_need_force(run):
    run("put", "s", "--label", "production", input="one\n")
    assert run("protect", "production").output == "protected production\n"
    refused = run("put", "s", "--label", "production", input="two\n")
    assert refused.exit_code == 2 and "label 'production' is protected" in refused.stderr
    assert "--force" in refused.stderr
    assert json.loads(run("history", "s", "--json").output)["versions"][-1]["version"] == 1  # nothing written
    run("put", "s", input="two\n")
    assert run("label", "s", "production", "2").exit_code == 2
    assert run("rollout", "s", "production", "1=50", "2=50").exit_code == 2
    assert run("label", "s", "production", "2", "--force").exit_code == 0
    assert run("label", "s", "production", "--undo").exit_code == 2
    assert run("label", "s", "production", "--undo", "--force").exit_code == 0
    assert run("label", "s", "staging", "2").exit_code == 0  # other labels move freely
    assert run("unprotect", "production").output == "unprotected production\n"
    assert run("label", "s", "production", "2").exit_code == 0


def test_rollout_points_a_label_at_weighted_versions(run):
    run("put", "s", "--label", "production", input="one\n")
    run("put", "s", input="two\n")
    result = run("rollout", "s", "production", "1=90", "2=10")
    assert result.exit_code == 0 and result.output == "production -> s v1 (90%), v2 (10%)\n"
    assert run("list").output.splitlines()[1].split()[-1] == "production=v1:90,v2:10"
    assert run("get", "s", "--label", "production").output == "one\n"  # without a key: the first
    seen = {run("get", "s", "--label", "production", "--rollout-key", f"user-{n}").output for n in range(60)}
    assert seen == {"one\n", "two\n"}
    bad = run("rollout", "s", "production", "1=90", "oops")
    assert bad.exit_code == 2 and "is not VERSION=WEIGHT" in bad.output


def test_non_utf8_input_is_refused(run):
    """Bytes that are not UTF-8 are a clear usage error, and nothing is stored."""
    result = run("put", "s", input=b"\xff\xfe bad")
    assert result.exit_code == 2 and result.stderr.startswith("Error: <stdin>: not UTF-8")
    assert run("list").exit_code == 2  # refused before the store was opened: it was not even created
