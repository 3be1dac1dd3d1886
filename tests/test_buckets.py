"""The stable hash behind `batch --shard` and rollouts: the same key lands in the same bucket in
every process, and weights hold over many keys."""

from __future__ import annotations

import subprocess
import sys
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from profiles.buckets import BUCKETS, stable_bucket, weighted_choice

KEYS = 10_000
#: Key spellings a caller might use: numbers, user ids, e-mail addresses, UUID-like strings.
SPELLINGS = ["{}", "user-{}", "customer-{}@example.com", "{:08x}-4e1f-9a7c-3b2d5e6f7a8b"]


def test_the_bucket_is_crc32_as_for_shards():
    """One scheme: the shard of a row id and the bucket of a rollout key are the same CRC-32."""
    assert stable_bucket(" user-42 ", 7) == zlib.crc32(b"user-42") % 7


def test_the_same_key_gets_the_same_bucket_in_another_process():
    code = "from profiles.buckets import weighted_choice as w; print([w(f'u{i}', [90, 10]) for i in range(50)])"
    command = [sys.executable, "-c", code]
    runs = {subprocess.run(command, capture_output=True, text=True, check=True).stdout for _ in range(2)}
    assert len(runs) == 1
    assert runs.pop().strip() == str([weighted_choice(f"u{i}", [90, 10]) for i in range(50)])


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("weights", [[90, 10], [50, 50], [70, 20, 10], [1, 1, 1, 1], [99, 1]])
def test_weights_hold_over_ten_thousand_keys(spelling, weights):
    """Each arm's share of 10,000 keys is within 2 percentage points of its weight."""
    counts = [0] * len(weights)
    for number in range(KEYS):
        counts[weighted_choice(spelling.format(number), weights)] += 1
    total = sum(weights)
    for count, weight in zip(counts, weights, strict=True):
        assert abs(count / KEYS - weight / total) <= 0.02, (counts, weights)


@given(key=st.text(max_size=40), weights=st.lists(st.integers(1, 1000), min_size=1, max_size=8))
def test_a_choice_is_an_arm_and_stable(key, weights):
    index = weighted_choice(key, weights)
    assert 0 <= index < len(weights) and weighted_choice(key, list(weights)) == index


@given(key=st.text(max_size=40), new=st.integers(1, 99), more=st.integers(0, 99))
def test_raising_the_last_weight_only_moves_keys_into_it(key, new, more):
    """Going from old=100-n/new=n to a bigger n never takes the new version away from a key."""
    bigger = min(new + more, 99)
    if weighted_choice(key, [100 - new, new]) == 1:
        assert weighted_choice(key, [100 - bigger, bigger]) == 1


@pytest.mark.parametrize("weights", [[], [0], [1, -1], [1.5], [True]])
def test_bad_weights_are_refused(weights):
    with pytest.raises(ValueError, match="positive whole numbers"):
        weighted_choice("k", weights)


def test_there_are_ten_thousand_buckets():
    assert BUCKETS == 10_000
