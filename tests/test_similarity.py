"""MinHash signatures and LSH buckets: estimates near the exact Jaccard similarity, no pair missed or invented."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profiles.similarity import (
    MinHasher,
    NearDuplicateIndex,
    estimated_similarity,
    lsh_params,
    nearest_neighbours,
    shingles,
)


def exact_jaccard(left: str, right: str) -> float:
    a, b = shingles(left), shingles(right)
    return len(a & b) / len(a | b) if a | b else 1.0


def sentences(count: int, seed: int = 3, words: int = 40) -> list[str]:
    rng = random.Random(seed)
    vocabulary = [
        "".join(rng.choice("bcdfgklmnprst") + rng.choice("aeiou") for _ in range(rng.randint(2, 4)))
        for _ in range(400)
    ]
    return [" ".join(rng.choice(vocabulary) for _ in range(words)) for _ in range(count)]


def edited(text: str, changes: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    words = text.split()
    for _ in range(changes):
        words[rng.randrange(len(words))] = "qq" + str(rng.randrange(1000))
    return " ".join(words)


def test_estimates_are_close_to_the_exact_similarity():
    """Over pairs from unrelated to almost equal, estimates stay within 0.15 of exact and 0.04 on average."""
    base = sentences(40)
    pairs = enumerate(zip(base, range(40), strict=True))
    texts = base + [edited(text, changes, seed) for seed, (text, changes) in pairs]
    signatures = MinHasher().signatures(texts)
    errors = [
        abs(estimated_similarity(signatures[i], signatures[j]) - exact_jaccard(texts[i], texts[j]))
        for i in range(0, len(texts), 3)
        for j in range(i + 1, len(texts), 2)
    ]
    assert max(errors) <= 0.15 and sum(errors) / len(errors) <= 0.04


def test_case_spacing_and_width_do_not_count():
    """Texts that differ only in case, spacing or full-width letters have equal signatures."""
    hasher = MinHasher()
    assert (hasher.signature("A friendly  Bookseller\n") == hasher.signature("a friendly bookseller")).all()
    assert (hasher.signature("ＡＢＣ shop") == hasher.signature("abc shop")).all()
    assert estimated_similarity(hasher.signature("abc"), hasher.signature("xyz")) == 0.0


def test_signatures_are_the_same_in_another_process():
    """Signatures depend on nothing but the text: a fresh interpreter (another hash seed) gives the same."""
    code = (
        "from profiles.similarity import MinHasher\n"
        "print(MinHasher().signature('Maria, a friendly bookshop owner who loves poetry.').tolist())\n"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": "123", "PATH": ""})
    here = MinHasher().signature("Maria, a friendly bookshop owner who loves poetry.").tolist()
    assert other.stdout.strip() == str(here)


def test_index_finds_every_near_duplicate_and_nothing_below_the_threshold():
    """Edited copies (similarity well above 0.85) are found; unrelated texts never match."""
    originals = sentences(300, seed=5)
    copies = [edited(text, 1, seed) for seed, text in enumerate(originals[:100])]
    hasher = MinHasher()
    index = NearDuplicateIndex(0.85, hasher=hasher)
    for position, signature in enumerate(hasher.signatures(originals)):
        assert index.add_if_new(position, signature) is None  # unrelated: all kept
    for position, signature in enumerate(hasher.signatures(copies)):
        assert exact_jaccard(copies[position], originals[position]) >= 0.9
        match = index.nearest(signature)
        assert match is not None and match.key == position and match.similarity >= 0.85
    assert len(index) == 300


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text("abcde ", min_size=0, max_size=40), min_size=2, max_size=30), st.floats(0.3, 0.95))
def test_index_never_reports_a_pair_below_its_threshold(texts, threshold):
    """Whatever is indexed, a match is at or above the threshold and is the best of the candidates."""
    hasher = MinHasher()
    index = NearDuplicateIndex(threshold, hasher=hasher)
    signatures = hasher.signatures(texts)
    for position, signature in enumerate(signatures):
        match = index.nearest(signature)
        if match is not None:
            assert match.similarity >= threshold
            assert match.similarity == estimated_similarity(signature, signatures[match.key])
        index.add(position, signature)


def test_lsh_parameters_make_an_s_curve_around_the_threshold():
    """The chance that a pair shares a band is high well above the threshold and low well below it."""
    for threshold in (0.5, 0.8, 0.85, 0.9):
        bands, rows = lsh_params(threshold)
        assert bands * rows <= 128

        def chance(similarity: float, b: int = bands, r: int = rows) -> float:
            return 1 - (1 - similarity**r) ** b

        assert chance(min(0.999, threshold + 0.05)) >= 0.99 and chance(threshold - 0.3) <= 0.2


def test_nearest_neighbours_match_a_brute_force_search():
    """Every pair compared (small populations) and LSH (large ones) agree with comparing all pairs."""
    originals = sentences(120, seed=9)
    texts = originals + [edited(text, 2, seed) for seed, text in enumerate(originals[:30])]
    signatures = MinHasher().signatures(texts)
    brute = []
    for i in range(len(texts)):
        brute.append(max(estimated_similarity(signatures[i], signatures[j]) for j in range(len(texts)) if j != i))
    exact, everything = nearest_neighbours(signatures)
    assert everything and exact == brute
    approximate, everything = nearest_neighbours(signatures, exact_up_to=10, floor=0.5)
    assert not everything
    assert approximate == [value if value >= 0.5 else None for value in brute]


@pytest.mark.parametrize("bad", [0.0, 1.0, 1.5])
def test_threshold_must_be_between_zero_and_one(bad):
    from profiles.errors import FactoryError

    with pytest.raises(FactoryError, match="between 0 and 1"):
        NearDuplicateIndex(bad)
