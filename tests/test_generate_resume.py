"""`profiles generate`: resuming after a kill, refusing to overwrite, and a server that is down."""

from __future__ import annotations

import itertools
import json
import signal
import socket
import subprocess
import sys
import time
import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from profiles.cli import cli
from profiles.factories.plan import parse_plan
from tests.llm_server import ChatServer, Status
from tests.persona_writer import PersonaWriter

REPO = Path(__file__).resolve().parent.parent
PLAN = """\
attributes:
  locale:
    weights: {en: 70, zh: 30}
    field: language
  temperament:
    values: [calm, brisk, playful, shy]
  age:
    range: [18, 80]
"""


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def jaccard(left: str, right: str, size: int = 5) -> float:
    def grams(text: str) -> set[str]:
        text = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
        return {text[i : i + size] for i in range(max(1, len(text) - size + 1))}

    a, b = grams(left), grams(right)
    return len(a & b) / len(a | b)


def text_of(line: dict) -> str:
    return "\n".join(line.get(name, "") for name in ("role", "goal", "desc"))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "rules.txt").write_text("Staff of a small bookshop.\n", encoding="utf-8")
    (tmp_path / "plan.yaml").write_text(PLAN, encoding="utf-8")
    return {"rules": tmp_path / "rules.txt", "plan": tmp_path / "plan.yaml", "out": tmp_path / "out.jsonl"}


def command(server: ChatServer, files: dict[str, Path], count: int, *extra: str) -> list[str]:
    return [
        "generate", "--base-url", server.url, "--model", "writer", "--count", str(count),
        "--rules", str(files["rules"]), "--plan", str(files["plan"]), "--seed", "5", "--dedupe", "0.85",
        "--batch-size", "2", "--max-in-flight", "1", "--timeout", "10", "--out", str(files["out"]), *extra,
    ]  # fmt: skip


def _wait_for_lines(path: Path, lines: int, child: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= lines:
            return
        assert child.poll() is None, "the run finished before it could be killed; make it longer"
        time.sleep(0.01)
    raise AssertionError("no progress within 60 s")


def test_killed_run_resumes_without_losing_or_repeating_a_persona(files):
    """A real `profiles generate` killed with SIGKILL, then --resume: every draw once, quotas exact."""
    count = 40
    writer = PersonaWriter(fields={"locale": "language"}, delay=0.05)
    partial = files["out"].with_name("out.jsonl.partial")
    with ChatServer(default=writer) as server:
        argv = [sys.executable, "-m", "profiles", *command(server, files, count)]
        child = subprocess.Popen(argv, cwd=REPO, stderr=subprocess.PIPE, text=True)
        _wait_for_lines(partial, 10, child)
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
        assert child.returncode == -signal.SIGKILL
        before = [line for line in partial.read_text(encoding="utf-8").splitlines(keepends=True)
                  if line.endswith("\n")]
        assert 10 <= len(before) < count and not files["out"].exists()
        resumed = subprocess.run([*argv, "--resume"], cwd=REPO, capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
    assert f"(resumed after {len(before)})" in resumed.stderr
    text = files["out"].read_text(encoding="utf-8")
    assert text.startswith("".join(before))  # what was written stays, in place
    lines = read_jsonl(files["out"])
    assert len(lines) == count and not partial.exists()
    draws = [line["_origin"]["draw"] for line in lines]
    assert sorted(draws) == list(range(count))  # none lost, none repeated
    expected = parse_plan(PLAN).draw(count, 5)
    assert [line["metadata"]["plan"] for line in lines] == [expected[draw] for draw in draws]
    assert Counter(line["metadata"]["plan"]["locale"] for line in lines) == {"en": 28, "zh": 12}
    assert Counter(line["metadata"]["plan"]["temperament"] for line in lines) == dict.fromkeys(
        ["calm", "brisk", "playful", "shy"], 10
    )
    assert len({line["name"].casefold() for line in lines}) == count
    for left, right in itertools.combinations(lines, 2):
        assert jaccard(text_of(left), text_of(right)) < 0.85
    # the resumed run went on with later batches (and seeds), not the ones already used
    old = {json.loads(line)["_origin"]["batch"] for line in before}
    new = {line["_origin"]["batch"] for line in lines[len(before):]}
    assert min(new) > max(old)
    assert {line["_origin"]["seed"] - line["_origin"]["batch"] for line in lines} == {5}


def test_torn_last_line_is_cut_and_made_again(runner, files):
    """A partial file ending in half a line resumes from the last whole one."""
    with ChatServer(default=PersonaWriter(fields={"locale": "language"})) as server:
        partial = files["out"].with_name("out.jsonl.partial")
        first = runner.invoke(cli, command(server, files, 6, "--max-batches", "2"))
        assert first.exit_code == 2 and "run the same command with --resume" in first.stderr
        kept = partial.read_text(encoding="utf-8")
        assert kept.count("\n") == 4
        partial.write_text(kept + '{"name": "Torn', encoding="utf-8")
        again = runner.invoke(cli, command(server, files, 6, "--resume"))
        assert again.exit_code == 0, again.output
    lines = read_jsonl(files["out"])
    assert len(lines) == 6 and "Torn" not in files["out"].read_text(encoding="utf-8")
    assert sorted(line["_origin"]["draw"] for line in lines) == list(range(6))


def test_a_bad_line_before_the_last_is_named_and_nothing_is_cut(runner, files):
    """Only the last line can be torn; cutting the file at a bad line in the middle threw away every
    persona after it, without a word."""
    with ChatServer(default=PersonaWriter(fields={"locale": "language"})) as server:
        partial = files["out"].with_name("out.jsonl.partial")
        first = runner.invoke(cli, command(server, files, 6, "--max-batches", "2"))
        assert first.exit_code == 2
        lines = partial.read_text(encoding="utf-8").splitlines(keepends=True)
        assert len(lines) == 4
        edited = "".join([lines[0], "not json\n", *lines[2:]])
        partial.write_text(edited, encoding="utf-8")
        again = runner.invoke(cli, command(server, files, 6, "--resume"))
        assert again.exit_code == 2
        assert f"{partial}:2: this line is not a JSON object, and lines after it are" in again.stderr
        assert partial.read_text(encoding="utf-8") == edited
        partial.write_text("".join(lines), encoding="utf-8")
        fixed = runner.invoke(cli, command(server, files, 6, "--resume"))
        assert fixed.exit_code == 0, fixed.output
    assert [line["name"] for line in read_jsonl(files["out"])[:4]] == [json.loads(line)["name"] for line in lines]


@pytest.mark.parametrize("state", ["[]", "7", '"text"'])
def test_a_state_file_that_is_not_an_object_is_named(runner, files, state):
    with ChatServer(default=PersonaWriter(fields={"locale": "language"})) as server:
        assert runner.invoke(cli, command(server, files, 6, "--max-batches", "1")).exit_code == 2
        files["out"].with_name("out.jsonl.partial.json").write_text(state, encoding="utf-8")
        again = runner.invoke(cli, command(server, files, 6, "--resume"))
    assert again.exit_code == 2, again.output
    assert "out.jsonl.partial.json: holds a JSON" in again.stderr and "--force to start over" in again.stderr


def test_resume_refuses_other_options(runner, files):
    """A partial file made with another seed or plan is not continued; the message names what changed."""
    with ChatServer(default=PersonaWriter(fields={"locale": "language"})) as server:
        first = runner.invoke(cli, command(server, files, 6, "--max-batches", "1"))
        assert first.exit_code == 2
        args = command(server, files, 6, "--resume")
        args[args.index("--seed") + 1] = "6"
        other = runner.invoke(cli, args)
    assert other.exit_code == 2
    assert "cannot resume" in other.stderr and "draws, seed changed" in other.stderr
    assert "--force to start over" in other.stderr


def test_resume_with_nothing_to_resume(runner, files):
    """--resume without a partial file says so; after a complete run it says there is nothing to do."""
    with ChatServer(default=PersonaWriter(fields={"locale": "language"})) as server:
        nothing = runner.invoke(cli, command(server, files, 2, "--resume"))
        assert nothing.exit_code == 2 and "nothing to resume" in nothing.stderr
        assert runner.invoke(cli, command(server, files, 2)).exit_code == 0
        done = runner.invoke(cli, command(server, files, 2, "--resume"))
    assert done.exit_code == 0 and "already complete" in done.stderr


def test_removed_personas_are_logged_beside_the_output(runner, files):
    """Each removal is a line of out.removed.jsonl: why, how alike, the persona it was near, the persona."""
    writer = PersonaWriter(fields={"locale": "language"})
    with ChatServer(default=writer) as server:
        result = runner.invoke(cli, [*command(server, files, 20), "--batch-size", "5"])
    assert result.exit_code == 0, result.output
    removed = read_jsonl(files["out"].with_name("out.removed.jsonl"))
    assert len(removed) == writer.near_duplicates + writer.name_duplicates > 0
    kept = read_jsonl(files["out"])
    for line in removed:
        near = kept[line["near"]["id"]]
        assert near["name"] == line["near"]["name"]
        assert line["reason"] in ("name", "text") and set(line["persona"]) >= {"name", "_origin"}
    assert f"removed personas are listed in {files['out'].with_name('out.removed.jsonl')}" in result.stderr
    assert f"{writer.near_duplicates} near-duplicate(s) removed" in result.stderr


def test_out_is_not_overwritten_without_force(runner, files):
    """An existing --out is refused before any request; --force replaces it."""
    files["out"].write_text("precious\n", encoding="utf-8")
    with ChatServer(default=PersonaWriter(fields={"locale": "language"})) as server:
        refused = runner.invoke(cli, command(server, files, 2))
        assert refused.exit_code == 2 and server.requests == []
        assert f"{files['out']} already exists; pass --force to overwrite it" in refused.stderr
        assert files["out"].read_text(encoding="utf-8") == "precious\n"
        forced = runner.invoke(cli, command(server, files, 2, "--force"))
    assert forced.exit_code == 0, forced.output
    assert len(read_jsonl(files["out"])) == 2


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_server_down_fails_at_once_with_one_message(runner, files):
    """Nothing listening: one error line naming the URL and the flag to check, not four, no retries."""
    url = f"http://127.0.0.1:{free_port()}/v1"
    args = ["generate", "--base-url", url, "--model", "m", "--count", "8", "--rules", str(files["rules"])]
    result = runner.invoke(cli, args)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: made 0 of 8 persona(s): cannot connect to {url}/")
    assert "--base-url" in lines[0] and "base_url" not in lines[0].replace("--base-url", "")
    assert "Traceback" not in result.output


def test_max_retries_bounds_the_tries(runner, files):
    """--max-retries N: a failing request is sent N + 1 times, and the advice names the flag."""
    with ChatServer() as server:
        server.script(*[Status(503)] * 10)
        args = ["generate", "--base-url", server.url, "--model", "m", "--count", "1", "--rules",
                str(files["rules"]), "--max-retries", "2", "--max-batches", "1", "--timeout", "10"]
        result = runner.invoke(cli, args)
        assert len(server.requests) == 3
    assert result.exit_code == 2
    assert "after 3 attempt(s): HTTP 503" in result.stderr and "raise --max-retries" in result.stderr
