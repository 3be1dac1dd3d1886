"""HTTP answer bodies read no further than a size limit, and within a time limit if given.

httpx's timeout bounds each wait for bytes, not the whole body, and `response.read()` takes all
there is: a download, an endless stream or a server dripping a byte at a time would hold a client
for ever and fill its memory. The store's HTTP client and the chat and embeddings clients read
through here instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["read_bounded"]


def read_bounded(
    response: Any, limit: int, too_big: Callable[[str], Exception], *, seconds: float | None = None
) -> bytes:
    """The body of a streamed httpx `response`, refused as `too_big(size)` once past `limit` bytes.

    `size` is the text naming how big it is ("25,000,000" from its content-length, or "over
    20,000,000" when streamed). With `seconds`, a body that has not arrived whole by then raises
    httpx's `ReadTimeout`, so a caller retries it like any stalled read.
    """
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_big(f"{int(declared):,}")
    deadline = None if seconds is None else time.monotonic() + seconds
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            raise too_big(f"over {limit:,}")
        chunks.append(chunk)
        if deadline is not None and time.monotonic() > deadline:
            import httpx

            raise httpx.ReadTimeout("the body did not arrive in time", request=response.request)
    return b"".join(chunks)
