"""Values from the process environment."""

from __future__ import annotations

import os

from .base import ConfigProvider

__all__ = ["EnvProvider"]


class EnvProvider(ConfigProvider):
    """Reads `os.environ` at every lookup, so a changed variable shows at the next call."""

    name = "env"

    def lookup(
        self,
        key: str,
        *,
        language: str | None = None,
        model: str | None = None,
        deployment: str | None = None,
    ) -> str | None:
        return os.environ.get(key)
