"""`profiles generate` against a real scripted chat-completions server on 127.0.0.1."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from profiles.cli import cli
from profiles.cli.progress import persona_progress as _progress
from tests.llm_server import ChatServer, Empty, Status

SECRET = "sk-test-Hx7Wq0Rr5n"
MODEL = "persona-writer"


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    with ChatServer() as server:
        yield server


@pytest.fixture
def rules(write) -> Path:
    return write("rules.txt", "Staff of a small bookshop.\n")


def personas(*names: str) -> str:
    return json.dumps([{"name": name, "role": "Bookseller"} for name in names])


def run(runner, server: ChatServer, rules: Path, *args: str, count: int = 2):
    base = ["generate", "--base-url", server.url, "--model", MODEL, "--count", str(count), "--rules", str(rules)]
    return runner.invoke(cli, [*base, "--timeout", "1", *args])


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_writes_jsonl_with_origin(runner, chat_server, rules, tmp_path):
    """Each line holds a persona's fields and its origin; the partial file is gone at the end."""
    chat_server.script('```json\n[{"name": "Ada", "role": "Clerk", "constraints": ["Be kind",],},\n'
                       '{"name": "Ben", "role": "Buyer"}]\n```')
    out = tmp_path / "out.jsonl"
    result = run(runner, chat_server, rules, "--seed", "9", "--out", str(out))
    assert result.exit_code == 0, result.output
    lines = read_jsonl(out)
    assert [line["name"] for line in lines] == ["Ada", "Ben"]
    assert lines[0]["constraints"] == ["Be kind"]
    assert lines[0]["_origin"] == {
        "model": MODEL,
        "request_id": "req-1",
        "prompt_hash": lines[0]["_origin"]["prompt_hash"],
        "seed": 9,
        "batch": 0,
        "fix_round": 0,
    }
    assert len(lines[0]["_origin"]["prompt_hash"]) == 16
    assert chat_server.requests[0]["seed"] == 9
    assert not (tmp_path / "out.jsonl.partial").exists()
    assert result.stdout == ""
    assert result.stderr.startswith(f"wrote 2 persona(s) to {out} in 1 batch request(s)")


def test_stdout_without_out(runner, chat_server, rules):
    """Without --out the lines go to standard output and the summary to standard error."""
    chat_server.script(personas("Ada", "Ben"))
    result = run(runner, chat_server, rules)
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["name"] for line in result.stdout.splitlines()] == ["Ada", "Ben"]
    assert "wrote 2 persona(s) in 1 batch request(s)" in result.stderr


def test_examples_are_shown_and_their_names_taken(runner, chat_server, rules, configs):
    """Example persona files reach the prompt; a persona named like one is dropped."""
    chat_server.script(personas("hypatia", "Ada"), personas("Ben"))
    planner = configs / "planner.yaml"
    result = run(runner, chat_server, rules, "--examples", str(planner), "--batch-size", "2")
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["name"] for line in result.stdout.splitlines()] == ["Ada", "Ben"]
    prompt = chat_server.requests[0]["messages"][0]["content"]
    assert '"name": "Hypatia"' in prompt and "{{" not in prompt.split("Examples of good personas:")[1]
    assert "1 duplicate(s) dropped" in result.stderr


def test_fix_round_and_rate_limit(runner, chat_server, rules, tmp_path):
    """A 429 is waited out and an invalid persona fixed, all within one command."""
    chat_server.script(
        Status(429, {"Retry-After": "0.01"}),
        '[{"name": "Ada", "role": ["Clerk"]}]',
        personas("Ada"),
    )
    out = tmp_path / "out.jsonl"
    result = run(runner, chat_server, rules, "--out", str(out), count=1)
    assert result.exit_code == 0, result.output
    assert read_jsonl(out)[0]["_origin"]["fix_round"] == 1
    assert "expected text, got a list" in chat_server.requests[2]["messages"][-1]["content"]
    assert "1 invalid on first reply, 1 fixed" in result.stderr


@pytest.mark.parametrize(
    "reply",
    [
        '[{"name": "Gr\\ud800ce", "role": "Clerk"}, {"name": "Ben", "role": "Buyer"}]',  # the escape in the text
        '[{"name": "Gr\ud800ce", "role": "Clerk"}, {"name": "Ben", "role": "Buyer"}]',  # the JSON body holds it
    ],
)
def test_a_lone_surrogate_in_a_reply_is_sent_back_to_be_fixed(runner, chat_server, rules, tmp_path, reply):
    """Half a surrogate pair is no character: the persona goes back to the model, and no line or request breaks."""
    chat_server.script(reply, personas("Grace"))
    out = tmp_path / "out.jsonl"
    result = run(runner, chat_server, rules, "--out", str(out))
    assert result.exit_code == 0, result.output
    assert [line["name"] for line in read_jsonl(out)] == ["Ben", "Grace"]
    fix = chat_server.requests[1]["messages"]
    assert fix[-2] == {"role": "assistant", "content": reply.replace("\ud800", "\\ud800")}
    assert "field 'name': holds \\ud800, half of a surrogate pair" in fix[-1]["content"]


def test_failure_keeps_partial_and_leaves_out_untouched(runner, chat_server, rules, tmp_path):
    """When the run fails, what was made stays in OUT.partial and OUT keeps its old content."""
    out = tmp_path / "out.jsonl"
    out.write_text("old\n", encoding="utf-8")
    chat_server.script(personas("Ada"), *[Empty()] * 10)
    result = run(runner, chat_server, rules, "--out", str(out), "--force", count=3)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: made 1 of 3 persona(s)")
    assert f"The 1 persona(s) made are in {out}.partial; run the same command with --resume" in result.stderr
    assert "Traceback" not in result.output
    assert out.read_text(encoding="utf-8") == "old\n"
    assert [line["name"] for line in read_jsonl(tmp_path / "out.jsonl.partial")] == ["Ada"]

    again = run(runner, chat_server, rules, "--out", str(out), count=1)
    assert again.exit_code == 2
    assert f"{out}.partial exists, left by an earlier run that did not finish; pass --resume" in again.stderr
    assert len(read_jsonl(tmp_path / "out.jsonl.partial")) == 1


def test_max_batches_bounds_the_run(runner, chat_server, rules):
    """--max-batches caps the batch requests; the error names the limit."""
    chat_server.script(*[Empty()] * 5)
    result = run(runner, chat_server, rules, "--max-batches", "2")
    assert result.exit_code == 2
    assert "in 2 batch request(s) and 0 fix request(s) (--max-batches=2)" in result.stderr
    assert "Raise --max-batches," in result.stderr and "max_batches" not in result.stderr
    assert ".." not in result.stderr
    assert len(chat_server.requests) == 2


def test_out_folder_missing(runner, chat_server, rules, tmp_path):
    """An --out in a folder that does not exist is a clear error, before any request."""
    out = tmp_path / "nowhere" / "out.jsonl"
    result = run(runner, chat_server, rules, "--out", str(out))
    assert result.exit_code == 2
    assert f"Error: cannot write {out}.partial (No such file or directory)" in result.stderr
    assert chat_server.requests == []


def test_failure_with_nothing_made_leaves_no_partial(runner, chat_server, rules, tmp_path):
    """A run that made nothing leaves no partial file behind."""
    chat_server.script(*[Status(404)] * 3)
    out = tmp_path / "out.jsonl"
    result = run(runner, chat_server, rules, "--out", str(out))
    assert result.exit_code == 2
    assert "made 0 of 2 persona(s), then the server refused a request" in result.stderr
    assert list(tmp_path.glob("out.jsonl*")) == []


def test_api_key_never_shown(runner, chat_server, rules, monkeypatch):
    """The key named by --api-key-env is sent, and neither output nor error shows it."""
    monkeypatch.setenv("SHOP_KEY", SECRET)
    chat_server.script(personas("Ada", "Ben"), Status(401, body=f"invalid key {SECRET}"))
    ok = run(runner, chat_server, rules, "--api-key-env", "SHOP_KEY")
    refused = run(runner, chat_server, rules, "--api-key-env", "SHOP_KEY")
    assert ok.exit_code == 0 and refused.exit_code == 2
    assert chat_server.headers[0]["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in ok.output and SECRET not in refused.output
    assert "invalid key ***" in refused.stderr and "$SHOP_KEY" in refused.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("  \n", "the rules file is empty"),
        (b"\xff\xfe", "the rules file is not UTF-8 text"),
    ],
)
def test_bad_rules_file(runner, chat_server, tmp_path, content, message):
    """An empty or non-UTF-8 rules file is refused, naming the file, before any request."""
    path = tmp_path / "rules.txt"
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    result = run(runner, chat_server, path)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {path}: {message}")
    assert chat_server.requests == []


def test_missing_option(runner, rules):
    """The required options are required."""
    result = runner.invoke(cli, ["generate", "--model", MODEL, "--count", "1", "--rules", str(rules)])
    assert result.exit_code == 2
    assert "Missing option '--base-url'" in result.stderr


def test_progress_shows_only_on_a_terminal(monkeypatch):
    """The progress bar draws on a terminal and stays silent otherwise."""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert _progress().disable
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert not _progress().disable


def test_readme_command(runner, chat_server, tmp_path, monkeypatch, configs):
    """The README's command runs as written against a server at the URL it names."""
    import re
    import shlex

    readme = (configs.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Generating personas with an LLM", 1)[1].split("\n## ", 1)[0]
    (command,) = re.findall(r"```sh\n(.*?)```", section, re.S)
    args = shlex.split(command.replace("\\\n", " ").replace("http://localhost:8000/v1", chat_server.url))
    assert args[0] == "profiles"
    monkeypatch.chdir(configs.parent)
    args = [str(tmp_path / arg) if arg in ("rules.txt", "personas.jsonl") else arg for arg in args]
    (tmp_path / "rules.txt").write_text("Staff of a small bookshop.", encoding="utf-8")
    from collections import Counter

    from tests.persona_writer import PersonaWriter

    writer = PersonaWriter(fields={"locale": "language"})
    chat_server.script(*[writer] * 40)
    result = runner.invoke(cli, args[1:])
    assert result.exit_code == 0, result.output
    lines = read_jsonl(tmp_path / "personas.jsonl")
    assert len(lines) == 20 and lines[0]["_origin"]["seed"] == 1
    assert sorted(line["_origin"]["draw"] for line in lines) == list(range(20))
    assert Counter(line["language"] for line in lines) == {"en": 13, "zh": 7}  # 2:1 of 20
    assert "nearest neighbour (all pairs)" in result.stderr


def test_a_rules_device_is_read_no_further_than_the_limit(runner, chat_server):
    """A device has no size to check first: `--rules /dev/zero` was read until memory ran out."""
    args = ["generate", "--base-url", chat_server.url, "--model", "m", "--count", "2", "--rules", "/dev/zero"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 2 and "/dev/zero: the rules file is over 100000 bytes; shorten it" in result.output
    assert chat_server.requests == []
