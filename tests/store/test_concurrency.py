"""Several processes writing one prompt at once never lose or duplicate a version."""

from __future__ import annotations

import multiprocessing

from profiles.store import PromptStore

from ._workers import put_many

PROCESSES = 8
PUTS_EACH = 50


def test_concurrent_writers_lose_and_duplicate_nothing(store_url):
    """8 processes x 50 puts to one name: versions 1..400, every put present exactly once."""
    PromptStore(store_url).close()  # the tables exist before the race; creating them is tested below
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(PROCESSES)
    workers = [
        context.Process(target=put_many, args=(store_url, worker, PUTS_EACH, barrier))
        for worker in range(PROCESSES)
    ]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=300)
    assert [process.exitcode for process in workers] == [0] * PROCESSES

    with PromptStore(store_url) as store:
        history = store.history("shared")
    assert [record.version for record in history] == list(range(1, PROCESSES * PUTS_EACH + 1))
    expected = {f"worker {w} put {i}" for w in range(PROCESSES) for i in range(PUTS_EACH)}
    contents = [record.content for record in history]
    assert len(contents) == len(set(contents)) and set(contents) == expected
    for worker in range(PROCESSES):  # each process's own puts stay in the order it made them
        mine = [record.content for record in history if record.author == f"worker-{worker}"]
        assert mine == [f"worker {worker} put {i}" for i in range(PUTS_EACH)]


def test_processes_creating_a_new_store_at_once_agree(store_url):
    """Opening a fresh store from several processes at once creates the tables once, without errors."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(4)
    workers = [context.Process(target=put_many, args=(store_url, worker, 3, barrier)) for worker in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=120)
    assert [process.exitcode for process in workers] == [0] * 4
    with PromptStore(store_url) as store:
        assert [record.version for record in store.history("shared")] == list(range(1, 13))


def test_label_moves_are_atomic_under_concurrent_readers(store):
    """While threads move a label back and forth, readers always find it on exactly one whole version."""
    import threading

    for number in range(1, 6):
        store.put("s", f"content of v{number}", label="production" if number == 1 else None)
    stop = threading.Event()
    seen: list[tuple[int, str, tuple[str, ...]]] = []
    failures: list[BaseException] = []

    def move(offset: int) -> None:
        try:
            for step in range(30):
                store.set_label("s", "production", (step + offset) % 5 + 1)
        except BaseException as exc:  # reported below; a thread cannot fail the test itself
            failures.append(exc)

    def read() -> None:
        try:
            while not stop.is_set():
                record = store.get("s", label="production")
                seen.append((record.version, record.content, record.labels))
        except BaseException as exc:
            failures.append(exc)

    readers = [threading.Thread(target=read) for _ in range(3)]
    movers = [threading.Thread(target=move, args=(offset,)) for offset in range(3)]
    for thread in readers + movers:
        thread.start()
    for thread in movers:
        thread.join()
    stop.set()
    for thread in readers:
        thread.join()

    assert failures == []
    assert seen and all(content == f"content of v{version}" for version, content, _ in seen)
    assert sum("production" in record.labels for record in store.history("s")) == 1
