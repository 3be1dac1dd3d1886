"""Fanning chunks out to worker processes: results in order, and a dead worker stops the map at once."""

from __future__ import annotations

import os
import signal
import tempfile
import threading

import pytest

from profiles.fanout import BrokenProcessPool, ordered_map

#: Far more than a pipe holds, so a result handed back through one would take many writes.
BIG = 4 << 20


def _doubler(offset: int):
    return lambda chunk: [offset + 2 * item for item in chunk]


def _suicidal(delay: float):
    def work(chunk: int) -> bytes:
        if chunk == 2:  # this chunk's worker dies a moment after it starts handing back its result
            threading.Timer(delay, os.kill, (os.getpid(), signal.SIGKILL)).start()
        return bytes(BIG)

    return work


def _failing(_: None):
    def work(chunk: int) -> int:
        if chunk == 3:
            raise ValueError("chunk 3 is bad")
        return chunk

    return work


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """Temporary folders made here, to see that the map leaves none behind."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_results_come_back_in_order_and_leave_nothing_behind(private_tmp):
    chunks = [list(range(start, start + 5)) for start in range(0, 200, 5)]
    results = list(ordered_map(_doubler, (1,), chunks, 2))
    assert results == [[1 + 2 * item for item in chunk] for chunk in chunks]
    assert list(private_tmp.iterdir()) == []


def test_an_error_in_a_worker_reaches_the_caller_after_the_results_before_it(private_tmp):
    seen = []
    with pytest.raises(ValueError, match="chunk 3 is bad"):
        for result in ordered_map(_failing, (None,), range(20), 2):
            seen.append(result)
    assert seen == [0, 1, 2]
    assert list(private_tmp.iterdir()) == []


@pytest.mark.parametrize("delay", [0.0, 0.001, 0.003, 0.01, 0.03])
def test_a_worker_killed_while_handing_back_a_big_result_stops_the_map(delay):
    """Half a result left in the pool's pipe would make the pool wait for the rest forever: the map
    must end in BrokenProcessPool, whenever the kill lands."""
    outcome: list = []

    def consume() -> None:
        try:
            for result in ordered_map(_suicidal, (delay,), range(50), 2):
                outcome.append(len(result))
        except BrokenProcessPool:
            outcome.append("broken")

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the map hangs after a worker was killed"
    assert outcome[-1] == "broken"
    assert all(length == BIG for length in outcome[:-1])


def test_a_temporary_folder_that_takes_no_files_is_a_batch_error(tmp_path, monkeypatch):
    from profiles.errors import BatchError

    missing = tmp_path / "gone"
    monkeypatch.setattr(tempfile, "tempdir", str(missing))
    with pytest.raises(BatchError, match=r"cannot hand back their results through .*gone.*--workers 1"):
        list(ordered_map(_doubler, (0,), [[1]], 2))
