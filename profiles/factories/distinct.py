"""What makes two personas the same persona: one name, near-identical wording, or the same meaning.

A generated population is only useful when its members differ, and models repeat themselves:
the same name, or "Maria, a friendly bookshop owner who loves poetry" under twenty names. A
:class:`DistinctFilter` keeps the personas accepted so far and says, for a new one, which kept
persona it repeats, checking in this order:

1. ``name``: the same name once normalised (case, accents, punctuation and spacing aside);
2. ``text``: the estimated Jaccard similarity of the character shingles of its text fields
   (:func:`persona_text`) at or above ``threshold`` (MinHash with LSH buckets,
   :mod:`profiles.similarity`);
3. ``embedding``: the cosine similarity of the embeddings of those texts at or above
   ``embedding_threshold``, when an ``embed`` callable is given (e.g. an
   :class:`~profiles.factories.embeddings.EmbeddingClient`). Kept embeddings are compared one by
   one: fine for the thousands of personas a model writes, unlike the LSH step, which stays
   near-linear for any number.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from profiles.errors import FactoryError

from .json_reply import normalise_name

if TYPE_CHECKING:
    import numpy as np

__all__ = ["SIMILARITY_FIELDS", "DistinctFilter", "Embed", "Near", "Removal", "persona_text"]

#: The fields whose text stands for a persona when comparing wording: what it is and does, not
#: its name (names are compared on their own) or codes such as its language or model.
SIMILARITY_FIELDS = (
    "role",
    "goal",
    "desc",
    "constraints",
    "expand_prompt",
    "examples",
    "retry_goal",
    "retry_constraints",
)

#: Embeds texts: one vector per text, in order.
Embed = Callable[[Sequence[str]], Sequence[Sequence[float]]]


def persona_text(data: Mapping[str, Any]) -> str:
    """A persona's text fields (`SIMILARITY_FIELDS`) as one text, lists one item per line."""
    parts: list[str] = []
    for name in SIMILARITY_FIELDS:
        value = data.get(name)
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, (list, tuple)):
            parts.extend(item for item in value if isinstance(item, str))
    return "\n".join(part for part in parts if part.strip())


@dataclass(frozen=True)
class Near:
    """Which kept persona a new one repeats, how, and how closely (1.0 for a name)."""

    reason: str
    similarity: float
    key: Hashable
    name: str | None


@dataclass(frozen=True)
class Removal:
    """A persona left out because it repeats one already kept, for the ``*.removed.jsonl`` log."""

    #: The persona as it would have been written, with its ``_origin``.
    record: Mapping[str, Any]
    near: Near

    def as_dict(self) -> dict[str, Any]:
        """The removal as one JSON line: why, how alike, the persona it was near, and the persona."""
        key = self.near.key
        near: dict[str, Any] = (
            {"example": key[1]} if isinstance(key, tuple) and key and key[0] == "example" else {"id": key}
        )
        near["name"] = self.near.name
        return {
            "reason": self.near.reason,
            "similarity": round(self.near.similarity, 4),
            "near": near,
            "persona": dict(self.record),
        }


class DistinctFilter:
    """Remembers kept personas and finds which one a new persona repeats, if any.

    Args:
        threshold: estimated Jaccard similarity of text shingles at which a persona repeats
            another; None compares names only (and embeddings, when given).
        embed: embeds texts, for the cosine check; None skips it.
        embedding_threshold: cosine similarity at which a persona repeats another.
        names: compare normalised names (the factory always does).
    """

    def __init__(
        self,
        *,
        threshold: float | None = None,
        embed: Embed | None = None,
        embedding_threshold: float = 0.9,
        names: bool = True,
    ) -> None:
        if threshold is not None and not 0.0 < threshold < 1.0:
            raise FactoryError(f"the near-duplicate threshold must be between 0 and 1 (e.g. 0.85), got {threshold}")
        if embed is not None and not -1.0 < embedding_threshold < 1.0:
            raise FactoryError(
                f"the embedding threshold must be between -1 and 1 (e.g. 0.9), got {embedding_threshold}"
            )
        self.threshold = threshold
        self.embed = embed
        self.embedding_threshold = embedding_threshold
        self.names = names
        self._taken: dict[str, tuple[Hashable, str]] = {}
        self._index: Any = None
        if threshold is not None:
            from profiles.similarity import NearDuplicateIndex

            self._index = NearDuplicateIndex(threshold)
        self._vectors: np.ndarray | None = None
        self._vector_keys: list[tuple[Hashable, str | None]] = []

    def __len__(self) -> int:
        return len(self._vector_keys) if self.embed is not None else len(self._taken)

    @property
    def taken_names(self) -> list[str]:
        """The names kept so far, as written, oldest first."""
        return [name for _, name in self._taken.values()]

    def prepare(self, items: Sequence[Mapping[str, Any]]) -> list[tuple[Any, Any]]:
        """Signatures and embeddings for `items`, made in one go (one embeddings request)."""
        texts = [persona_text(item) for item in items]
        signatures: Sequence[Any] = [None] * len(items)
        embeddings: Sequence[Any] = [None] * len(items)
        if self._index is not None and items:
            signatures = list(self._index.hasher.signatures(texts))
        if self.embed is not None and items:
            embeddings = self._unit(self.embed(texts), len(items))
        return list(zip(signatures, embeddings, strict=True))

    def _unit(self, vectors: Sequence[Sequence[float]], expected: int) -> list[Any]:
        from profiles.similarity import require_numpy

        np = require_numpy()
        if len(vectors) != expected:
            raise FactoryError(f"the embed callable returned {len(vectors)} vector(s) for {expected} text(s)")
        matrix = np.asarray(vectors, dtype=np.float64)
        if matrix.ndim != 2:
            raise FactoryError("the embed callable must return one vector of numbers per text, all of one length")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return list(matrix / norms)

    def find(self, item: Mapping[str, Any], prepared: tuple[Any, Any] | None = None) -> Near | None:
        """The kept persona `item` repeats, checked by name, then wording, then meaning; or None."""
        if self.names:
            key = normalise_name(str(item.get("name") or ""))
            if key and key in self._taken:
                kept, name = self._taken[key]
                return Near("name", 1.0, kept, name)
        signature, embedding = prepared if prepared is not None else self.prepare([item])[0]
        if self._index is not None:
            match = self._index.nearest(signature)
            if match is not None:
                kept, name = match.key
                return Near("text", match.similarity, kept, name)
        if self.embed is not None and self._vectors is not None and len(self._vector_keys):
            from profiles.similarity import require_numpy

            np = require_numpy()
            cosines = self._vectors[: len(self._vector_keys)] @ embedding
            best = int(np.argmax(cosines))
            if cosines[best] >= self.embedding_threshold:
                kept, name = self._vector_keys[best]
                return Near("embedding", float(cosines[best]), kept, name)
        return None

    def keep(self, key: Hashable, item: Mapping[str, Any], prepared: tuple[Any, Any] | None = None) -> None:
        """Remember a kept persona under `key` (a profile id, or ``("example", n)``)."""
        name = item.get("name")
        name = name if isinstance(name, str) else None
        if self.names and name:
            normal = normalise_name(name)
            if normal:
                self._taken.setdefault(normal, (key, name))
        if self._index is None and self.embed is None:
            return
        signature, embedding = prepared if prepared is not None else self.prepare([item])[0]
        if self._index is not None:
            self._index.add((key, name), signature)
        if self.embed is not None:
            from profiles.similarity import require_numpy

            np = require_numpy()
            count = len(self._vector_keys)
            if self._vectors is None:
                self._vectors = np.empty((64, len(embedding)), dtype=np.float64)
            elif len(embedding) != self._vectors.shape[1]:
                raise FactoryError(
                    f"the embed callable returned vectors of {len(embedding)} numbers after "
                    f"{self._vectors.shape[1]}; use one embedding model for a run"
                )
            if count == len(self._vectors):
                grown = np.empty((2 * count, self._vectors.shape[1]), dtype=np.float64)
                grown[:count] = self._vectors
                self._vectors = grown
            self._vectors[count] = embedding
            self._vector_keys.append((key, name))
