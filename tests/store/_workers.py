"""Code run in child processes by the concurrency tests (spawned, so it must be importable)."""

from __future__ import annotations

from typing import Any

__all__ = ["put_many"]


def put_many(url: str, worker: int, count: int, barrier: Any) -> None:
    """Open the store in this process, wait for every worker, then put ``count`` versions of one name."""
    from profiles.store import PromptStore

    store = PromptStore(url)
    barrier.wait()
    for index in range(count):
        store.put("shared", f"worker {worker} put {index}", author=f"worker-{worker}")
    store.close()
