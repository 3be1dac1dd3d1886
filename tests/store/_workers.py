"""Code run in child processes by the concurrency tests (spawned, so it must be importable)."""

from __future__ import annotations

from typing import Any

__all__ = ["RACE_VERSIONS", "open_and_put", "put_many", "race_label", "race_protect"]


def put_many(url: str, worker: int, count: int, barrier: Any) -> None:
    """Open the store in this process, wait for every worker, then put ``count`` versions of one name."""
    from profiles.store import PromptStore

    store = PromptStore(url)
    barrier.wait()
    for index in range(count):
        store.put("shared", f"worker {worker} put {index}", author=f"worker-{worker}")
    store.close()


#: Versions the label race moves between.
RACE_VERSIONS = 10


def race_label(url: str, worker: int, rounds: int, barrier: Any, results: Any) -> None:
    """Each round: every worker reads where `production` points, waits for all, then tries to move it
    elsewhere with `expect=` what it read. Reports (round, worker, won, expected, target)."""
    from profiles.errors import LabelConflictError
    from profiles.store import PromptStore

    store = PromptStore(url)
    for round_ in range(rounds):
        barrier.wait()
        current = store.get("raced", label="production").version
        barrier.wait()  # everyone has read the same version: now all of them race
        target = (current + worker) % RACE_VERSIONS + 1  # never `current`: worker + 1 < RACE_VERSIONS
        try:
            store.set_label(
                "raced", "production", target, expect=current, author=f"worker-{worker}", note=f"round {round_}"
            )
            won = True
        except LabelConflictError:
            won = False
        results.put((round_, worker, won, current, target))
    store.close()


def open_and_put(url: str, worker: int, barrier: Any) -> None:
    """Open a store (perhaps one an earlier release wrote) at the same moment as the others, then put."""
    from profiles.store import PromptStore

    barrier.wait()
    store = PromptStore(url)
    store.put("shared", f"worker {worker}", author=f"worker-{worker}")
    store.close()


def race_protect(url: str, worker: int, rounds: int, barrier: Any, results: Any) -> None:
    """Each round: every worker protects one label at the same moment, then unprotects it at the same
    moment. Reports (round, worker, protected, unprotected): what each call said it did."""
    from profiles.store import PromptStore

    store = PromptStore(url)
    for round_ in range(rounds):
        barrier.wait()
        protected = store.protect("production", author=f"worker-{worker}")
        barrier.wait()
        unprotected = store.unprotect("production")
        results.put((round_, worker, protected, unprotected))
    store.close()
