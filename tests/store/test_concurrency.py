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


RACE_ROUNDS = 12


def test_racing_compare_and_set_moves_have_one_winner_per_round(store_url):
    """8 processes race `set_label(expect=...)` on one label, round after round: exactly one wins
    each round, and the move log records every winning move, numbered without a gap, each starting
    where the one before it ended."""
    from ._workers import RACE_VERSIONS, race_label

    with PromptStore(store_url) as store:
        for number in range(1, RACE_VERSIONS + 1):
            store.put("raced", f"v{number}")
        store.set_label("raced", "production", 1)
    reports = _race(race_label, store_url)
    winners = {}
    for round_ in range(RACE_ROUNDS):
        this_round = [report for report in reports if report[0] == round_]
        assert len(this_round) == PROCESSES
        assert len({report[3] for report in this_round}) == 1  # all read the same version
        won = [report for report in this_round if report[2]]
        assert len(won) == 1, f"round {round_}: {len(won)} winners"
        winners[round_] = won[0]
    with PromptStore(store_url) as store:
        moves = store.moves("raced", label="production")
        final = store.get("raced", label="production").version
    assert [move.seq for move in moves] == list(range(1, RACE_ROUNDS + 2))
    assert moves[0].from_version is None and moves[0].to_version == 1
    for before, after in zip(moves, moves[1:], strict=False):
        assert after.from_version == before.to_version
    for round_, (_, worker, _, expected, target) in winners.items():
        move = moves[round_ + 1]
        assert (move.from_version, move.to_version, move.author) == (expected, target, f"worker-{worker}")
        assert move.note == f"round {round_}"
    assert final == moves[-1].to_version


def test_racing_protects_and_unprotects_each_have_one_winner(store_url):
    """8 processes protect one label at once, then unprotect it at once, round after round: each
    time exactly one of them is told it protected it, and exactly one that it lifted it."""
    from ._workers import race_protect

    PromptStore(store_url).put("raced", "v1")  # creates the store and its tables before the race
    reports = _race(race_protect, store_url)
    for round_ in range(RACE_ROUNDS):
        this_round = [report for report in reports if report[0] == round_]
        assert sum(report[2] for report in this_round) == 1, f"round {round_}: protected by several"
        assert sum(report[3] for report in this_round) == 1, f"round {round_}: lifted by several"
    with PromptStore(store_url) as store:
        assert store.protected_labels() == ()


def _race(target, store_url):
    """Run `target` in PROCESSES spawned processes meeting at a barrier each round; their reports."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(PROCESSES)
    results = context.Queue()
    workers = [
        context.Process(target=target, args=(store_url, worker, RACE_ROUNDS, barrier, results))
        for worker in range(PROCESSES)
    ]
    for process in workers:
        process.start()
    reports = [results.get(timeout=300) for _ in range(PROCESSES * RACE_ROUNDS)]  # drained before joining
    for process in workers:
        process.join(timeout=300)
    assert [process.exitcode for process in workers] == [0] * PROCESSES
    return reports
