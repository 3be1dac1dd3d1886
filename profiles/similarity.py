"""How alike two texts are, at the scale of whole populations: MinHash signatures and LSH buckets.

Near-duplicate personas ("Maria, a friendly bookshop owner who loves poetry" twenty times under
twenty names) share most of their wording, so the measure is the Jaccard similarity of their sets
of character shingles (``SHINGLE`` = 5 characters, after folding case, width and spacing),
estimated by MinHash: with ``NUM_PERM`` = 128 hash functions, the share of equal signature
entries estimates the Jaccard similarity within about ±0.04 (one standard deviation at 0.85).

Finding every pair above a threshold among n texts would take n²/2 comparisons; an LSH index cuts
each signature into ``bands`` of ``rows`` entries and compares a text only with those that share a
whole band with it, so adding a text costs about the same however many are indexed. Bands and rows
are chosen for the threshold as datasketch does (the least weighted sum of the chances of missing
a similar pair and of comparing a dissimilar one), weighted towards not missing pairs, and every
candidate is checked against the threshold with its signature, so LSH never reports a pair below
the threshold.

The implementation is numpy's: each text's shingles are hashed with a polynomial over its code
points and finalised with MurmurHash3's mixer, and the 128 functions are multiply-shift hashes
whose constants come from BLAKE2b, so signatures are the same on every machine and numpy version.
Measured against datasketch (`bench/run.py`), it signs texts many times faster, because datasketch
hashes each shingle with SHA-1 in Python. numpy is an optional dependency
(``pip install 'agent-profiles[dedupe]'``), imported when a signature is first made.

Nothing here knows what a persona is: callers say which text stands for what.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import FactoryError

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "NUM_PERM",
    "SHINGLE",
    "Match",
    "MinHasher",
    "NearDuplicateIndex",
    "estimated_similarity",
    "lsh_params",
    "nearest_neighbours",
    "normalise_text",
    "require_numpy",
    "shingles",
]

#: Hash functions per signature.
NUM_PERM = 128

#: Characters per shingle.
SHINGLE = 5

#: Texts signed at once: bounds the temporary arrays to a few megabytes.
_CHUNK_CHARS = 400_000

_MASK64 = (1 << 64) - 1
_POLY = 0x100000001B3  # the FNV-1a 64-bit prime: odd, with well-spread bits
_FMIX1 = 0xFF51AFD7ED558CCD
_FMIX2 = 0xC4CEB9FE1A85EC53


def require_numpy() -> Any:
    """numpy, or a clear error saying how to install it."""
    try:
        import numpy
    except ImportError:
        raise FactoryError(
            "near-duplicate detection needs numpy; install it with pip install 'agent-profiles[dedupe]'"
        ) from None
    return numpy


def normalise_text(text: str) -> str:
    """The text as shingles see it: NFKC-folded, lower case, runs of spacing as one space."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def shingles(text: str, size: int = SHINGLE) -> set[str]:
    """The character shingles of a normalised text (a shorter text is its own single shingle).

    This is the set whose Jaccard similarity signatures estimate; it is small enough to compute
    exactly for a handful of texts, e.g. to check an estimate.
    """
    text = normalise_text(text)
    if not text:
        return set()
    if len(text) < size:
        return {text}
    return {text[start : start + size] for start in range(len(text) - size + 1)}


def _constants(seed: int, count: int) -> tuple[list[int], list[int]]:
    """Multipliers (odd) and addends of the hash functions, the same everywhere for a seed."""
    multipliers, addends = [], []
    for index in range(count):
        digest = hashlib.blake2b(f"profiles-minhash:{seed}:{index}".encode(), digest_size=16).digest()
        multipliers.append(int.from_bytes(digest[:8], "little") | 1)
        addends.append(int.from_bytes(digest[8:], "little"))
    return multipliers, addends


class MinHasher:
    """Makes MinHash signatures of texts: ``num_perm`` unsigned 32-bit minima per text."""

    def __init__(self, num_perm: int = NUM_PERM, shingle: int = SHINGLE, seed: int = 1) -> None:
        if num_perm < 8:
            raise FactoryError(f"num_perm must be 8 or more, got {num_perm}")
        if shingle < 1:
            raise FactoryError(f"shingle must be 1 or more, got {shingle}")
        np = require_numpy()
        self.num_perm = num_perm
        self.shingle = shingle
        multipliers, addends = _constants(seed, num_perm)
        self._a = np.array(multipliers, dtype=np.uint64)
        self._b = np.array(addends, dtype=np.uint64)
        self._powers = np.array([pow(_POLY, shingle - 1 - j, 1 << 64) for j in range(shingle)], dtype=np.uint64)

    def signature(self, text: str) -> np.ndarray:
        """The signature of one text."""
        return self.signatures([text])[0]

    def signatures(self, texts: Sequence[str]) -> np.ndarray:
        """Signatures of many texts as one ``(len(texts), num_perm)`` array of uint32."""
        np = require_numpy()
        out = np.empty((len(texts), self.num_perm), dtype=np.uint32)
        start = 0
        while start < len(texts):
            end, size = start, 0
            while end < len(texts) and (end == start or size < _CHUNK_CHARS):
                size += len(texts[end]) + self.shingle
                end += 1
            out[start:end] = self._chunk([normalise_text(text) for text in texts[start:end]])
            start = end
        return out

    def _chunk(self, texts: list[str]) -> np.ndarray:
        np = require_numpy()
        k = self.shingle
        # every text padded to at least k characters (NUL never appears in a normalised text), so
        # each has one shingle or more; shingles never span two texts
        padded = [text + "\0" * (k - len(text)) if len(text) < k else text for text in texts]
        codes = np.frombuffer("".join(padded).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
        lengths = np.fromiter((len(text) for text in padded), dtype=np.int64, count=len(padded))
        ends = np.cumsum(lengths)
        starts = ends - lengths
        counts = lengths - k + 1
        with np.errstate(over="ignore"):
            hashed = np.zeros(len(codes) - k + 1, dtype=np.uint64)
            for j in range(k):
                hashed += codes[j : len(codes) - k + 1 + j] * self._powers[j]
            # MurmurHash3's finaliser spreads the polynomial's bits before the top 32 are taken
            hashed ^= hashed >> np.uint64(33)
            hashed *= np.uint64(_FMIX1)
            hashed ^= hashed >> np.uint64(33)
            hashed *= np.uint64(_FMIX2)
            hashed ^= hashed >> np.uint64(33)
            # the shingles of each text: positions starts[i] .. starts[i] + counts[i] - 1
            offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
            positions = np.arange(int(counts.sum()), dtype=np.int64) + offsets
            values = hashed[positions] >> np.uint64(32)
            segment_starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
            signature = np.empty((len(texts), self.num_perm), dtype=np.uint32)
            for index in range(self.num_perm):
                permuted = (values * self._a[index] + self._b[index]) >> np.uint64(32)
                signature[:, index] = np.minimum.reduceat(permuted, segment_starts)
        return signature


def estimated_similarity(left: np.ndarray, right: np.ndarray) -> float:
    """The Jaccard similarity two signatures estimate: the share of equal entries."""
    return float((left == right).mean())


#: How much a missed similar pair weighs against a dissimilar pair compared, when choosing bands:
#: a missed near-duplicate ends up in the output, a needless comparison costs a microsecond.
FALSE_NEGATIVE_WEIGHT = 0.95


def lsh_params(threshold: float, num_perm: int = NUM_PERM) -> tuple[int, int]:
    """(bands, rows) for a threshold: the least weighted sum of false-positive and false-negative areas.

    The areas are datasketch's; the weights favour finding pairs (`FALSE_NEGATIVE_WEIGHT`): at
    0.85 with 128 functions, 12 bands of 10 rows find a pair of similarity 0.9 with probability
    0.994, where datasketch's equal weights (8 bands of 16) find it with 0.81.
    """
    if not 0.0 < threshold < 1.0:
        raise FactoryError(f"a similarity threshold must be between 0 and 1, got {threshold}")

    def area(fn: Any, low: float, high: float, steps: int = 200) -> float:
        width = (high - low) / steps
        return sum(fn(low + (i + 0.5) * width) for i in range(steps)) * width

    best: tuple[float, int, int] | None = None
    for bands in range(1, num_perm + 1):
        for rows in range(1, num_perm // bands + 1):
            false_positive = area(lambda s, b=bands, r=rows: 1 - (1 - s**r) ** b, 0.0, threshold)
            false_negative = area(lambda s, b=bands, r=rows: 1 - (1 - (1 - s**r) ** b), threshold, 1.0)
            error = (1 - FALSE_NEGATIVE_WEIGHT) * false_positive + FALSE_NEGATIVE_WEIGHT * false_negative
            if best is None or error < best[0]:
                best = (error, bands, rows)
    assert best is not None
    return best[1], best[2]


_PARAMS: dict[tuple[float, int], tuple[int, int]] = {}


def _cached_params(threshold: float, num_perm: int) -> tuple[int, int]:
    key = (round(threshold, 6), num_perm)
    if key not in _PARAMS:
        _PARAMS[key] = lsh_params(threshold, num_perm)
    return _PARAMS[key]


@dataclass(frozen=True)
class Match:
    """The indexed text most like a query, and how alike they are."""

    key: Hashable
    similarity: float


class NearDuplicateIndex:
    """Texts indexed by LSH buckets, answering "which indexed text is at least this alike?".

    ``add`` and ``nearest`` cost about the same however many texts are indexed (a few bucket
    look-ups and a comparison with the texts that share a bucket); the signatures are kept in one
    growing array, 4 bytes per hash function per text.
    """

    def __init__(self, threshold: float, *, num_perm: int = NUM_PERM, shingle: int = SHINGLE,
                 hasher: MinHasher | None = None) -> None:
        np = require_numpy()
        self.threshold = float(threshold)
        self.hasher = hasher or MinHasher(num_perm, shingle)
        self.bands, self.rows = _cached_params(self.threshold, self.hasher.num_perm)
        self._buckets: list[dict[int, Any]] = [{} for _ in range(self.bands)]
        self._signatures = np.empty((64, self.hasher.num_perm), dtype=np.uint32)
        self._keys: list[Hashable] = []
        self._weights = np.array([pow(_POLY, j, 1 << 64) for j in range(self.rows)], dtype=np.uint64)

    def __len__(self) -> int:
        return len(self._keys)

    def _band_keys(self, signature: np.ndarray) -> list[int]:
        np = require_numpy()
        used = signature[: self.bands * self.rows].astype(np.uint64).reshape(self.bands, self.rows)
        with np.errstate(over="ignore"):
            keys = (used * self._weights).sum(axis=1, dtype=np.uint64)
        return [int(key) for key in keys]

    def candidates(self, signature: np.ndarray) -> list[int]:
        """Positions of indexed texts sharing at least one band with `signature`."""
        found: dict[int, None] = {}
        for band, key in zip(self._buckets, self._band_keys(signature), strict=True):
            entry = band.get(key)
            if entry is None:
                continue
            if isinstance(entry, int):
                found[entry] = None
            else:
                found.update(dict.fromkeys(entry))
        return list(found)

    def nearest(self, signature: np.ndarray, threshold: float | None = None) -> Match | None:
        """The indexed text most like `signature` at or above the threshold, or None."""
        np = require_numpy()
        floor = self.threshold if threshold is None else threshold
        positions = self.candidates(signature)
        if not positions:
            return None
        similarities = (self._signatures[positions] == signature).mean(axis=1)
        best = int(np.argmax(similarities))
        if similarities[best] < floor:
            return None
        return Match(self._keys[positions[best]], float(similarities[best]))

    def add(self, key: Hashable, signature: np.ndarray) -> None:
        """Index a text's signature under `key`."""
        np = require_numpy()
        position = len(self._keys)
        if position == len(self._signatures):
            grown = np.empty((2 * len(self._signatures), self.hasher.num_perm), dtype=np.uint32)
            grown[:position] = self._signatures
            self._signatures = grown
        self._signatures[position] = signature
        self._keys.append(key)
        for band, band_key in zip(self._buckets, self._band_keys(signature), strict=True):
            entry = band.get(band_key)
            if entry is None:
                band[band_key] = position
            elif isinstance(entry, int):
                band[band_key] = [entry, position]
            else:
                entry.append(position)

    def add_if_new(self, key: Hashable, signature: np.ndarray) -> Match | None:
        """Index the text unless an indexed one is at least `threshold` alike; return that one."""
        match = self.nearest(signature)
        if match is None:
            self.add(key, signature)
        return match


def nearest_neighbours(signatures: np.ndarray, *, exact_up_to: int = 2000,
                       floor: float = 0.5) -> tuple[list[float | None], bool]:
    """Each text's similarity to its most similar other text, and whether every pair was compared.

    Up to `exact_up_to` texts, every pair is compared. Above, candidates come from LSH buckets for
    `floor`, and a text with none at or above `floor` gets None (its neighbour is below `floor`).
    """
    np = require_numpy()
    count = len(signatures)
    if count < 2:
        return [None] * count, True
    if count <= exact_up_to:
        best = np.full(count, -1.0)
        step = max(1, 4_000_000 // (count * signatures.shape[1]))
        for start in range(0, count, step):
            block = (signatures[start : start + step, None, :] == signatures[None, :, :]).mean(axis=2)
            for offset in range(block.shape[0]):
                block[offset, start + offset] = -1.0
            best[start : start + step] = block.max(axis=1)
        return [float(value) for value in best], True
    index = NearDuplicateIndex(floor, num_perm=signatures.shape[1])
    for position, signature in enumerate(signatures):
        index.add(position, signature)
    result: list[float | None] = []
    for position, signature in enumerate(signatures):
        others = [candidate for candidate in index.candidates(signature) if candidate != position]
        if not others:
            result.append(None)
            continue
        value = float((signatures[others] == signature).mean(axis=1).max())
        result.append(value if value >= floor else None)
    return result, False
