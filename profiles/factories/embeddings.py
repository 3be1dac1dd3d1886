"""A client for OpenAI-compatible ``/embeddings`` endpoints, for telling near-duplicate personas apart.

Two personas can say the same thing in different words, which character shingles miss; an
embedding model sees it. This client sends texts to ``POST {base_url}/embeddings`` and returns one
vector per text, with the chat client's retries, backoff, concurrency bound and key handling (it
is a :class:`~profiles.factories.chat.ChatClient` that reads another reply). An instance is a
callable, ``client(texts) -> vectors``, which is what the LLM factory's ``embed=`` takes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .chat import ChatClient, ChatError

if TYPE_CHECKING:
    import httpx

__all__ = ["EmbeddingClient", "MAX_TEXTS_PER_REQUEST"]

#: Texts sent in one request; more are split over several.
MAX_TEXTS_PER_REQUEST = 256


class EmbeddingClient(ChatClient):
    """Embeds texts with one model on an OpenAI-compatible ``/embeddings`` endpoint.

    Takes the options of :class:`~profiles.factories.chat.ChatClient`; ``base_url`` is the API
    root (``http://localhost:8000/v1``), to which ``/embeddings`` is added.
    """

    #: 256 vectors of a few thousand numbers each, as JSON, fit with room to spare.
    max_body_bytes = 200_000_000

    def __init__(self, base_url: str, model: str, **options: Any) -> None:
        super().__init__(base_url, model, **options)
        root = self.base_url.removesuffix("/chat/completions")
        self.url = root if root.endswith("/embeddings") else root + "/embeddings"

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed(texts)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order.

        Raises:
            ChatError: the request failed, or the reply is not one vector of numbers per text.
        """
        vectors: list[list[float]] = []
        for start in range(0, len(texts), MAX_TEXTS_PER_REQUEST):
            part = [text or " " for text in texts[start : start + MAX_TEXTS_PER_REQUEST]]
            got: list[list[float]] = self._send({"model": self.model, "input": part})  # type: ignore[assignment]
            if len(got) != len(part):
                raise ChatError(
                    f"embeddings request to {self._scrub(self.url)} returned {len(got)} embedding(s) for "
                    f"{len(part)} text(s); check that the server is an OpenAI-compatible embeddings API.",
                    url=self._scrub(self.url),
                )
            vectors.extend(got)
        return vectors

    def _reply(self, response: httpx.Response, attempts: int) -> Any:  # type: ignore[override]
        url = self._scrub(self.url)

        def fail(problem: str) -> ChatError:
            return ChatError(
                f"embeddings request to {url} returned {problem}; check that the URL serves an "
                "OpenAI-compatible embeddings API and that the model is an embedding model.",
                url=url,
                status=response.status_code,
                attempts=attempts,
                request_id=response.headers.get("x-request-id"),
            )

        try:
            body = response.json()
        except ValueError:
            raise fail("a body that is not JSON") from None
        items = body.get("data") if isinstance(body, dict) else None
        if not isinstance(items, list):
            raise fail("no list of embeddings under 'data'")
        ordered = sorted(
            (item for item in items if isinstance(item, dict)),
            key=lambda item: item.get("index", 0) if isinstance(item.get("index"), int) else 0,
        )
        vectors: list[list[float]] = []
        for item in ordered:
            vector = item.get("embedding")
            if (
                not isinstance(vector, list)
                or not vector
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in vector)
            ):
                raise fail("an embedding that is not a list of numbers")
            vectors.append([float(x) for x in vector])
        if len(vectors) != len(items) or len({len(vector) for vector in vectors}) > 1:
            raise fail("embeddings of different lengths")
        return vectors
