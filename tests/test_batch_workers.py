"""`profiles batch --workers N`: the same bytes whatever N, one checkpoint, and resuming after the
parent or one of its worker processes is killed loses and repeats nothing."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from profiles.batch import BatchError, BatchOptions, run_batch

from .test_batch import DATASETS, REPO, make_customers

MAP, BASE = DATASETS / "customers.map.yaml", DATASETS / "support_agent.yaml"


def _options(source: Path, out: Path, **extra) -> BatchOptions:
    return BatchOptions(source=source, out=out, mapping=MAP, base=BASE, **extra)


@pytest.mark.parametrize("render", [False, True], ids=["personas", "prompts"])
def test_every_worker_count_writes_the_same_bytes(tmp_path, render):
    source = make_customers(tmp_path / "c.csv", 700)
    outputs = {}
    for workers in (1, 2, 3):
        out = tmp_path / f"w{workers}.jsonl"
        report = run_batch(_options(source, out, workers=workers, render=render, question="Where is my invoice?"))
        assert report.complete and report.written == 700
        outputs[workers] = out.read_bytes()
    assert outputs[1] == outputs[2] == outputs[3]
    assert [json.loads(line)["row"] for line in outputs[1].splitlines()] == list(range(1, 701))


def test_bad_rows_and_their_list_are_the_same_with_workers(tmp_path, write):
    rows = ["customer_id,contact_name,company,segment,language,plan,notes"]
    for number in range(1, 601):
        identity = "" if number % 97 == 0 else f"c-{number:04d}"  # a row without its id is bad
        rows.append(f"{identity},Customer {number},Co,SMB,en,premium,n")
    source = write("bad.csv", "\n".join(rows) + "\n")
    mapping = write("bad.map.yaml", "id: customer_id\nfields:\n  name: contact_name\n  goal: company\n")
    results = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}" / "out.jsonl"
        report = run_batch(
            BatchOptions(source=source, out=out, mapping=mapping, base=BASE, on_error="collect", workers=workers)
        )
        assert report.failed == 6 and report.written == 594
        results[workers] = (out.read_bytes(), out.with_name("out.errors.jsonl").read_bytes(), report.issues)
    assert results[1] == results[2]
    assert b'"row":97' in results[1][1]


def test_a_bad_row_stops_a_parallel_batch_after_the_rows_before_it(tmp_path, write):
    rows = ["customer_id,contact_name,company,segment,language,plan,notes"]
    rows += [f"{'' if n == 450 else f'c-{n:04d}'},C {n},Co,SMB,en,premium,n" for n in range(1, 901)]
    source = write("bad.csv", "\n".join(rows) + "\n")
    mapping = write("bad.map.yaml", "id: customer_id\nfields:\n  name: contact_name\n")
    out = tmp_path / "out.jsonl"
    from profiles.errors import DatasetRowError

    with pytest.raises(DatasetRowError, match="row 450"):
        run_batch(BatchOptions(source=source, out=out, mapping=mapping, base=BASE, workers=2, chunk_rows=100))
    assert [json.loads(line)["row"] for line in out.read_text(encoding="utf-8").splitlines()] == list(range(1, 450))


def test_standard_output_and_folders_are_the_same_with_workers(tmp_path, runner):
    from profiles.cli import cli

    source = make_customers(tmp_path / "c.csv", 300)
    args = ["batch", "--from", str(source), "--map", str(MAP), "--base", str(BASE), "--quiet"]
    one = runner.invoke(cli, [*args, "--out", "-", "--workers", "1"])
    two = runner.invoke(cli, [*args, "--out", "-", "--workers", "2"])
    assert one.exit_code == two.exit_code == 0, (one.output, two.output)
    assert one.stdout_bytes == two.stdout_bytes and one.stdout_bytes.count(b"\n") == 300
    for workers in (1, 2):
        folder = tmp_path / f"folder{workers}"
        assert runner.invoke(cli, [*args, "--out", str(folder), "--workers", str(workers)]).exit_code == 0
    first, second = tmp_path / "folder1", tmp_path / "folder2"
    names = sorted(path.name for path in first.iterdir() if path.suffix == ".yaml")
    assert len(names) == 300 and names == sorted(path.name for path in second.iterdir() if path.suffix == ".yaml")
    body = [line for line in (first / names[0]).read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    other = [line for line in (second / names[0]).read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    assert body == other  # the first line names the run, which differs


def test_workers_must_be_at_least_one(tmp_path, runner):
    from profiles.cli import cli

    with pytest.raises(BatchError, match="workers"):
        run_batch(_options(DATASETS / "customers.csv", tmp_path / "o.jsonl", workers=0))
    result = runner.invoke(cli, ["batch", "--from", str(DATASETS / "customers.csv"), "--out", str(tmp_path / "o.jsonl"),
                                 "--workers", "0"])
    assert result.exit_code == 2 and "--workers" in result.output


# -- killed mid-way ---------------------------------------------------------------------------------


#: Rows of the killed batches: enough that thousands are still to come when the first checkpoint
#: appears (at 1,000 rows), however fast the machine, so the kill always lands mid-way.
KILLED_BATCH_ROWS = 20_000


def _args(source: Path) -> list[str]:
    return [sys.executable, "-m", "profiles", "batch", "--from", str(source), "--map", str(MAP), "--base", str(BASE),
            "--render", "--quiet", "--workers", "2"]


def _rows_done(checkpoint: Path) -> int:
    try:
        return json.loads(checkpoint.read_text(encoding="utf-8"))["rows_done"]
    except (OSError, ValueError, KeyError):
        return 0


def _wait_for(checkpoint: Path, rows: int, child: subprocess.Popen) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if _rows_done(checkpoint) >= rows:
            return
        assert child.poll() is None, "the batch finished before it could be killed; use more rows"
        time.sleep(0.01)
    raise AssertionError("no progress within 90 s")


def _workers_of(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(item) for item in children.read_text().split()] if children.exists() else []


def _resume_equals_whole(tmp_path: Path, source: Path, cut: Path) -> None:
    whole = tmp_path / "whole.jsonl"
    subprocess.run([*_args(source), "--out", str(whole)], check=True, cwd=REPO)
    resumed = subprocess.run([*_args(source), "--out", str(cut), "--resume"], cwd=REPO, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert cut.read_bytes() == whole.read_bytes()
    assert not cut.with_name(cut.name + ".checkpoint").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the worker processes through /proc")
def test_killing_the_parent_then_resuming_equals_an_uninterrupted_run(tmp_path):
    source = make_customers(tmp_path / "c.csv", KILLED_BATCH_ROWS)
    cut = tmp_path / "cut.jsonl"
    child = subprocess.Popen([*_args(source), "--out", str(cut)], cwd=REPO, stderr=subprocess.PIPE, text=True)
    _wait_for(cut.with_name("cut.jsonl.checkpoint"), 1000, child)
    workers = _workers_of(child.pid)
    assert len(workers) == 2
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 30  # orphaned workers see their parent gone and stop
    while any(Path(f"/proc/{pid}").exists() and "zombie" not in _state(pid) for pid in workers):
        assert time.monotonic() < deadline, "worker processes outlived their parent"
        time.sleep(0.05)
    _resume_equals_whole(tmp_path, source, cut)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the worker processes through /proc")
def test_killing_a_worker_stops_the_batch_and_resume_finishes_it(tmp_path):
    source = make_customers(tmp_path / "c.csv", KILLED_BATCH_ROWS)
    cut = tmp_path / "cut.jsonl"
    child = subprocess.Popen([*_args(source), "--out", str(cut)], cwd=REPO, stderr=subprocess.PIPE, text=True)
    _wait_for(cut.with_name("cut.jsonl.checkpoint"), 1000, child)
    workers = _workers_of(child.pid)
    assert len(workers) == 2
    import os

    os.kill(workers[0], signal.SIGKILL)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 2, stderr
    assert "a worker process stopped unexpectedly" in stderr and "--resume" in stderr
    assert "internal error" not in stderr
    done = _rows_done(cut.with_name("cut.jsonl.checkpoint"))
    assert 1000 <= done < KILLED_BATCH_ROWS
    assert len(cut.read_bytes().splitlines()) == done  # exactly the rows the checkpoint covers
    _resume_equals_whole(tmp_path, source, cut)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:", 1)[1].split("\n", 1)[0].lower()
    except (OSError, IndexError):
        return "zombie"


@pytest.mark.parametrize("workers", [1025, 10**23])
def test_more_workers_than_a_batch_starts_is_a_batch_error(runner, tmp_path, workers):
    """--workers 10**23 reached 'internal error: OverflowError' from the process pool."""
    from profiles.cli import cli

    source = make_customers(tmp_path / "c.csv", 3)
    with pytest.raises(BatchError, match=f"workers must be at most 1,024 processes, got {workers:,}"):
        run_batch(_options(source, tmp_path / "out.jsonl", workers=workers))
    result = runner.invoke(cli, ["batch", "--from", str(source), "--out", "-", "--workers", str(workers)])
    assert result.exit_code == 2 and "at most 1,024 processes" in result.output
    assert "internal error" not in result.output
    assert not (tmp_path / "out.jsonl").exists()
