"""The `store` provider's place holder until a prompt store is configured."""

from __future__ import annotations

from ..errors import ResolutionError
from .base import ConfigProvider

__all__ = ["UnconfiguredStoreProvider"]


class UnconfiguredStoreProvider(ConfigProvider):
    """Refuses every lookup with a clear message instead of answering a silent None."""

    name = "store"

    def lookup(
        self,
        key: str,
        *,
        language: str | None = None,
        model: str | None = None,
        deployment: str | None = None,
    ) -> str | None:
        raise ResolutionError(
            f"no prompt store configured to look up {key!r}; register one with "
            "register_provider('store', provider) or give the field a different provider"
        )
