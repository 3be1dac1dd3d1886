"""The registry of configuration providers, by the name persona files use."""

from __future__ import annotations

import threading

from ..errors import UnknownProviderError
from .base import ConfigProvider
from .env import EnvProvider
from .store import StoreProvider

__all__ = [
    "ConfigProvider",
    "EnvProvider",
    "StoreProvider",
    "get_provider",
    "known_providers",
    "register_provider",
]

#: Other names a provider answers to; `prompt_manager` is what DB-GPT calls the store.
ALIASES = {"prompt_manager": "store"}

_lock = threading.Lock()
_providers: dict[str, ConfigProvider] = {
    "env": EnvProvider(),
    "store": StoreProvider(),
}


def register_provider(name: str, provider: ConfigProvider) -> None:
    """Make `provider` available to persona files as `provider: <name>`; replaces any earlier one."""
    if not isinstance(provider, ConfigProvider):
        raise TypeError(f"provider for {name!r} must be a ConfigProvider, got {type(provider).__name__}")
    with _lock:
        _providers[ALIASES.get(name, name)] = provider


def known_providers() -> list[str]:
    """Names a field may use, aliases included, sorted."""
    return sorted([*_providers, *ALIASES])


def get_provider(name: str) -> ConfigProvider:
    """Return the provider registered under `name` (or its alias)."""
    try:
        return _providers[ALIASES.get(name, name)]
    except KeyError:
        known = ", ".join(known_providers())
        raise UnknownProviderError(
            f"unknown provider {name!r}; known providers are: {known}. "
            "Register your own with profiles.register_provider(name, provider)."
        ) from None
