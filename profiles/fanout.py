"""Fan chunks of work out to worker processes and hand the results back in input order.

`profiles batch --workers N` reads its dataset once, in the parent, and sends chunks of rows here;
each worker turns a chunk into encoded output, and the parent writes the results in the order the
chunks went out, so the output is byte for byte what one process writes. At most a few chunks
per worker are in flight, so memory stays flat however long the input.

Each worker builds its work function once, from a setup function and its arguments: module-level
functions and plain data, so it works whichever way processes start (fork on Linux, spawn
elsewhere). A worker that dies (killed, out of memory) ends the map with `BrokenProcessPool`:
the results before it were handed back already; the caller decides what survives.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

__all__ = ["BrokenProcessPool", "ordered_map"]

#: Chunks in flight per worker: enough to keep each busy while the parent writes.
IN_FLIGHT = 3

#: The work function of this worker process, made by `_start`.
_work: Callable[[Any], Any] | None = None


#: Seconds between a worker's checks that its parent is still there.
PARENT_CHECK = 0.2


def _start(setup: Callable[..., Callable[[Any], Any]], args: tuple[Any, ...]) -> None:
    global _work
    # Ctrl-C reaches the whole process group; the parent alone decides what a stop keeps. A
    # forked worker inherits the parent's handlers too: SIGTERM must end it, as the pool expects
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    threading.Thread(target=_outlive_no_parent, args=(os.getppid(),), daemon=True).start()
    _work = setup(*args)


def _outlive_no_parent(parent: int) -> None:
    """End this worker once its parent is gone (killed, say): nobody would read what it makes, and
    a forked worker holds the parent's pipes open, so it would never see them close."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK)
    os._exit(1)


def _run(chunk: Any) -> Any:
    assert _work is not None, "worker started without its setup"
    return _work(chunk)


def _context() -> Any:
    """fork where it is safe (a single-threaded parent on a platform that has it): workers start at
    once and inherit what the parent imported; spawn otherwise."""
    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def ordered_map(
    setup: Callable[..., Callable[[Any], Any]],
    args: tuple[Any, ...],
    chunks: Iterable[Any],
    workers: int,
) -> Iterator[Any]:
    """Yield `work(chunk)` for every chunk, in order, where each of `workers` processes made
    `work = setup(*args)` once.

    Raises:
        BrokenProcessPool: a worker process died; no result after the last one yielded follows.
        Exception: whatever `setup` or `work` raised, as it was raised in the worker.
    """
    pool = ProcessPoolExecutor(workers, mp_context=_context(), initializer=_start, initargs=(setup, args))
    pending: deque[Future[Any]] = deque()
    try:
        for chunk in chunks:
            pending.append(pool.submit(_run, chunk))
            if len(pending) >= workers * IN_FLIGHT:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        # stopped early (an error, Ctrl-C, a dead worker): the queued chunks are dropped and each
        # worker stops after the chunk it is on. Killing them instead could cut a result in half
        # on its way back, and the pool's own thread would wait for the rest of it forever.
        pool.shutdown(wait=not pending, cancel_futures=True)
