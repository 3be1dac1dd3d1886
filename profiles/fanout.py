"""Fan chunks of work out to worker processes and hand the results back in input order.

`profiles batch --workers N` reads its dataset once, in the parent, and sends chunks of rows here;
each worker turns a chunk into encoded output, and the parent writes the results in the order the
chunks went out, so the output is byte for byte what one process writes. At most a few chunks
per worker are in flight, so memory stays flat however long the input.

Each worker builds its work function once, from a setup function and its arguments: module-level
functions and plain data, so it works whichever way processes start (fork on Linux, spawn
elsewhere). A worker that dies (killed, out of memory) ends the map with `BrokenProcessPool`:
the results before it were handed back already; the caller decides what survives.

A result comes back through a file in a private temporary folder, and only the file's name goes
through the pool's pipe. A worker killed while it wrote a big result into the pipe would leave half
a message there, and the pool's own thread would wait for the rest of it forever, so the batch would
hang instead of stopping; a name is far below the size a pipe writes at once (PIPE_BUF), so it
arrives whole or not at all.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import shutil
import signal
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .errors import BatchError

__all__ = ["BrokenProcessPool", "ordered_map"]

#: Chunks in flight per worker: enough to keep each busy while the parent writes.
IN_FLIGHT = 3

#: The work function of this worker process, made by `_start`.
_work: Callable[[Any], Any] | None = None
#: Where this worker process writes its results, and how many it wrote.
_results: str | None = None
_written = 0


#: Seconds between a worker's checks that its parent is still there.
PARENT_CHECK = 0.2


def _start(setup: Callable[..., Callable[[Any], Any]], args: tuple[Any, ...], results: str) -> None:
    global _work, _results
    # Ctrl-C reaches the whole process group; the parent alone decides what a stop keeps. A
    # forked worker inherits the parent's handlers too: SIGTERM must end it, as the pool expects
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    threading.Thread(target=_outlive_no_parent, args=(os.getppid(),), daemon=True).start()
    _results = results
    _work = setup(*args)


def _outlive_no_parent(parent: int) -> None:
    """End this worker once its parent is gone (killed, say): nobody would read what it makes, and
    a forked worker holds the parent's pipes open, so it would never see them close."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK)
    if _results is not None:
        shutil.rmtree(_results, ignore_errors=True)  # the results nobody will take
    os._exit(1)


def _run(chunk: Any) -> str:
    """Make one chunk's result and write it to a file of its own; its name is what goes back."""
    global _written
    assert _work is not None and _results is not None, "worker started without its setup"
    result = _work(chunk)
    _written += 1
    path = os.path.join(_results, f"{os.getpid()}-{_written}")
    try:
        with open(path, "wb") as file:
            pickle.dump(result, file, protocol=pickle.HIGHEST_PROTOCOL)
    except OSError as exc:
        raise _unusable(_results, exc) from None
    return path


def _take(path: str) -> Any:
    """A result a worker wrote, read once: its file goes as it is read."""
    try:
        with open(path, "rb") as file:
            result = pickle.load(file)
        os.unlink(path)
    except OSError as exc:
        raise _unusable(os.path.dirname(path), exc) from None
    return result


def _unusable(folder: str, exc: OSError) -> BatchError:
    return BatchError(
        f"the worker processes cannot hand back their results through {folder} ({exc.strerror}); "
        "free some space there, or point TMPDIR at a folder with room, or pass --workers 1"
    )


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
        BatchError: the results cannot be handed back (no room or no permission in the temporary folder).
        Exception: whatever `setup` or `work` raised, as it was raised in the worker.
    """
    try:
        results = tempfile.mkdtemp(prefix="profiles-results-")  # only this user can read it
    except OSError as exc:
        raise _unusable(tempfile.gettempdir(), exc) from None
    pool = ProcessPoolExecutor(workers, mp_context=_context(), initializer=_start, initargs=(setup, args, results))
    pending: deque[Future[str]] = deque()
    try:
        for chunk in chunks:
            pending.append(pool.submit(_run, chunk))
            if len(pending) >= workers * IN_FLIGHT:
                yield _take(pending.popleft().result())
        while pending:
            yield _take(pending.popleft().result())
    finally:
        for future in pending:
            future.cancel()
        # stopped early (an error, Ctrl-C, a dead worker): the queued chunks are dropped and each
        # worker stops after the chunk it is on, whose result then goes with the folder
        pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(results, ignore_errors=True)
