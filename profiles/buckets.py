"""Stable buckets: the same text falls in the same bucket on every machine, in every process.

One scheme for everything that splits by a key: CRC-32 of the stripped text's UTF-8 bytes, modulo
the number of buckets. `batch --shard I/N` keeps the rows whose id falls in bucket `I` of `N`;
a rolled-out label picks a version for a rollout key by its bucket of `BUCKETS`. Python's own
`hash()` is salted per process, so it could not do either.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

__all__ = ["BUCKETS", "stable_bucket", "weighted_choice"]

#: Buckets a rollout key is placed in; weights are honoured to 1/10,000.
BUCKETS = 10_000


def stable_bucket(text: str, count: int) -> int:
    """The bucket of `text` among `count`: `crc32(text.strip()) % count`."""
    # surrogatepass: half a surrogate pair (from JSON's "\ud800") still gets a bucket; valid text
    # encodes exactly as UTF-8, so no bucket of valid text changes
    return zlib.crc32(str(text).strip().encode("utf-8", "surrogatepass")) % count


def weighted_choice(key: str, weights: Sequence[int]) -> int:
    """The index of the weight `key` falls under; weights are relative (`90, 10` is `9, 1`).

    The arms take consecutive ranges of the buckets in the order given, so raising the last arm's
    weight (10 → 20 → 50) only moves keys into it: a key that already saw the new version keeps it.

    Raises:
        ValueError: no weight, or one that is not a positive whole number.
    """
    if not weights or any(isinstance(weight, bool) or not isinstance(weight, int) or weight < 1 for weight in weights):
        raise ValueError(f"weights must be positive whole numbers, got {list(weights)!r}")
    scaled = stable_bucket(key, BUCKETS) * sum(weights)
    edge = 0
    for index, weight in enumerate(weights):
        edge += weight
        if scaled < edge * BUCKETS:
            return index
    return len(weights) - 1  # unreachable: the last edge is sum(weights) * BUCKETS
