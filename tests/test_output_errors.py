"""Output that cannot be written: a clear error naming it, a quiet end on a closed pipe, nothing lost.

Every case runs the real `profiles` process, writing to the real `/dev/full`, a real closed pipe,
a path under a file, `/proc` (which takes no new files, even for root) or a file over the
process's size limit (`RLIMIT_FSIZE`, which binds root too).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.llm_server import ChatServer

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "profile_configs"
DATASETS = CONFIGS / "datasets"
EXAMPLE = [
    "--from",
    str(DATASETS / "customers.csv"),
    "--map",
    str(DATASETS / "customers.map.yaml"),
    "--base",
    str(DATASETS / "support_agent.yaml"),
]


def _env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PROFILES_")}
    return {**env, **extra}


def profiles(*args: str, stdout=subprocess.PIPE, env: dict[str, str] | None = None, **kwargs):
    return subprocess.run(
        [sys.executable, "-m", "profiles", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        env=env or _env(),
        **kwargs,
    )


@pytest.fixture
def store_env(tmp_path) -> dict[str, str]:
    env = _env(PROFILES_STORE_URL=f"sqlite:///{tmp_path / 'store.db'}")
    put = subprocess.run(
        [sys.executable, "-m", "profiles", "store", "put", "team/name"],
        input="Ada",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert put.returncode == 0, put.stderr
    return env


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    return {
        "render": ["render", str(CONFIGS / "summarizer.yaml"), "-q", "What changed?"],
        "schema": ["schema"],
        "explain": ["explain", str(CONFIGS / "summarizer.yaml")],
        "validate": ["validate", str(CONFIGS)],
        "check": ["check", str(CONFIGS / "summarizer.yaml")],
        "batch": ["batch", *EXAMPLE, "--out", "-"],
        "help": ["--help"],
        "render help": ["render", "--help"],
    }


@pytest.mark.parametrize("name", list(_commands(Path())))
def test_a_full_stdout_is_a_clear_error(name, tmp_path):
    """`> /dev/full`: one `Error:` line naming standard output and the cause; exit status 2."""
    with open("/dev/full", "w") as full:
        proc = profiles(*_commands(tmp_path)[name], stdout=full)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("Error: cannot write standard output: no space left on device (ENOSPC)")
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr


def test_store_get_on_a_full_stdout(store_env):
    with open("/dev/full", "w") as full:
        proc = profiles("store", "get", "team/name", stdout=full, env=store_env)
    assert proc.returncode == 2
    assert proc.stderr.startswith("Error: cannot write standard output: no space left on device")


def test_generate_on_a_full_stdout(tmp_path):
    rules = tmp_path / "rules.txt"
    rules.write_text("Staff of a small bookshop.\n")
    with ChatServer() as server, open("/dev/full", "w") as full:
        server.script(json.dumps([{"name": "Ada", "role": "Clerk"}]))
        args = ["generate", "--base-url", server.url, "--model", "m", "--count", "1", "--rules", str(rules)]
        proc = profiles(*args, "--timeout", "5", stdout=full)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("Error: cannot write standard output: no space left on device")


@pytest.mark.parametrize("name", ["render", "schema", "explain", "batch", "help"])
def test_a_closed_pipe_ends_quietly(name, tmp_path):
    """`| head -1` that has gone away: no message, status 141 (128 + SIGPIPE), like `cat` or `git log`."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "profiles", *_commands(tmp_path)[name]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    proc.stdout.close()  # the reader is gone before the first line is written
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 141
    assert err == ""


def test_head_reads_the_first_line(tmp_path):
    """Through a real shell pipe: the reader gets what was written before it left."""
    command = f"{sys.executable} -m profiles batch {' '.join(EXAMPLE)} --out - | head -1"
    proc = subprocess.run(command, shell=True, capture_output=True, text=True, env=_env(), timeout=120)
    assert proc.returncode == 0 and "Error" not in proc.stderr
    assert json.loads(proc.stdout)["id"] == "c-001"


@pytest.mark.parametrize("out", ["a_file/out.jsonl", "a_file/out", "/proc/out.jsonl", "/proc/personas"])
def test_batch_out_that_cannot_be_made_names_it(out, tmp_path):
    """A path under a file (ENOTDIR) or in /proc (ENOENT, even for root): exit 2, the path and the cause."""
    (tmp_path / "a_file").write_text("not a folder")
    proc = profiles("batch", *EXAMPLE, "--out", out, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    reason = "not a directory (ENOTDIR)" if out.startswith("a_file") else "no such file or directory (ENOENT)"
    assert proc.stderr.startswith(f"Error: cannot write {out}: {reason}")
    assert "Nothing was written" in proc.stderr


def _file_size_limit(limit: int):
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_write_failing_midway_keeps_what_was_checkpointed(tmp_path):
    """The disk fills midway: the error names the file, the rows checkpointed stay, --resume completes."""
    source = tmp_path / "people.csv"
    source.write_text("id,name,role\n" + "".join(f"p{index},Agent {index},Helper\n" for index in range(3000)))
    out = tmp_path / "people.jsonl"
    args = ["batch", "--from", str(source), "--out", str(out)]
    proc = profiles(*args, preexec_fn=_file_size_limit(100_000))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"Error: cannot write {out}: file too large (EFBIG)")
    assert "--resume" in proc.stderr
    checkpoint = json.loads((tmp_path / "people.jsonl.checkpoint").read_text())
    assert 0 < checkpoint["rows_done"] < 3000
    kept = out.read_bytes()[: checkpoint["out_bytes"]].decode().splitlines()
    assert [json.loads(line)["row"] for line in kept] == list(range(1, checkpoint["rows_done"] + 1))
    assert f"The {checkpoint['written']} persona(s) of the first {checkpoint['rows_done']} row(s)" in proc.stderr

    resumed = profiles(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [record["row"] for record in records] == list(range(1, 3001))
    assert records[-1]["persona"]["name"] == "Agent 2999"


def test_library_batch_raises_output_error(tmp_path):
    """In Python the same failure is an `OutputError` naming the file, not a bare OSError."""
    from profiles import OutputError
    from profiles.batch import BatchOptions, run_batch

    (tmp_path / "a_file").write_text("")
    source = tmp_path / "people.csv"
    source.write_text("id,name,role\np1,Ada,Helper\n")
    with pytest.raises(OutputError) as caught:
        run_batch(BatchOptions(source=source, out=tmp_path / "a_file" / "out.jsonl"))
    assert caught.value.target == str(tmp_path / "a_file" / "out.jsonl")
    assert isinstance(caught.value.cause, NotADirectoryError)


def test_generate_out_failing_midway_keeps_what_was_written(tmp_path):
    """generate --out on a disk that fills: the partial file's name, the cause, the personas kept."""
    rules = tmp_path / "rules.txt"
    rules.write_text("Staff of a small bookshop.\n")
    out = tmp_path / "people.jsonl"
    with ChatServer() as server:
        server.script(json.dumps([{"name": f"Clerk {index}", "role": "Clerk" + "k" * 300} for index in range(5)]))
        args = ["generate", "--base-url", server.url, "--model", "m", "--count", "5", "--batch-size", "5",
                "--rules", str(rules), "--out", str(out), "--timeout", "5"]
        proc = profiles(*args, preexec_fn=_file_size_limit(1_000))
    assert proc.returncode == 2, proc.stderr
    partial = tmp_path / "people.jsonl.partial"
    assert proc.stderr.startswith(f"Error: cannot write {partial}: file too large (EFBIG)")
    kept = partial.read_text().splitlines()
    assert kept and f"The {len(kept)} persona(s) written before it are in {partial}" in proc.stderr
    assert [json.loads(line)["name"] for line in kept] == [f"Clerk {index}" for index in range(len(kept))]
