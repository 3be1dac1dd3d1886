"""The registry of configuration providers, by the name persona files use.

The `store` provider is made at its first lookup, not when this registry is imported: a persona
without store fields (and `profiles render` of it) never loads the store's code.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..context import Context
from ..errors import ConfigError, UnknownProviderError
from .base import ConfigProvider
from .env import EnvProvider

if TYPE_CHECKING:
    from .store import StoreProvider

__all__ = [
    "ConfigProvider",
    "EnvProvider",
    "StoreProvider",
    "get_provider",
    "known_providers",
    "register_provider",
    "store_answering_from",
]

#: Other names a provider answers to; `prompt_manager` is what DB-GPT calls the store.
ALIASES = {"prompt_manager": "store"}

_lock = threading.Lock()
_providers: dict[str, ConfigProvider] = {"env": EnvProvider()}

#: Built-in providers made when first asked for (see `get_provider`).
_BUILT_IN_LATER = ("store",)


def __getattr__(name: str) -> Any:
    if name == "StoreProvider":
        from .store import StoreProvider

        return StoreProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register_provider(name: str, provider: ConfigProvider) -> None:
    """Make `provider` available to persona files as `provider: <name>`; replaces any earlier one.

    Raises:
        ConfigError: the name is not text a persona can write, or `provider` is no `ConfigProvider`.
    """
    # a name that is no text would break every later listing of the known providers
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(
            f"a provider's name must be text that a persona names it by (provider: vault), got {name!r}"
        )
    if not isinstance(provider, ConfigProvider):
        raise ConfigError(
            f"provider for {name!r} must be a ConfigProvider, got {type(provider).__name__}; subclass "
            "profiles.ConfigProvider and implement lookup(key, *, language=None, model=None, deployment=None)"
        )
    _check_signature(name, provider)
    with _lock:
        _providers[ALIASES.get(name, name)] = provider


def _check_signature(name: str, provider: ConfigProvider) -> None:
    """Refuse a provider whose `lookup` or `find` cannot be called as every lookup calls it.

    Said when it is registered, not as "failed to look up" at each field that uses it.
    """
    import inspect

    kind = type(provider)
    if kind.find is not ConfigProvider.find:
        method, call, written = provider.find, (("key", Context()), {}), "find(self, key, context)"
    elif kind.lookup is not ConfigProvider.lookup:
        method = provider.lookup
        call = (("key",), {"language": None, "model": None, "deployment": None})
        written = "lookup(self, key, *, language=None, model=None, deployment=None)"
    else:
        return
    try:
        signature = inspect.signature(method)
    except (TypeError, ValueError):  # a builtin or C method: nothing to check
        return
    try:
        signature.bind(*call[0], **call[1])
    except TypeError as exc:
        raise ConfigError(
            f"provider {name!r} ({kind.__name__}) cannot be asked for a value: {method.__name__}{signature} "
            f"{exc}; write it as {written}"
        ) from None


def known_providers() -> list[str]:
    """Names a field may use, aliases included, sorted."""
    return sorted({*_providers, *_BUILT_IN_LATER, *ALIASES})


def get_provider(name: str) -> ConfigProvider:
    """Return the provider registered under `name` (or its alias)."""
    key = ALIASES.get(name, name)
    provider = _providers.get(key)
    if provider is not None:
        return provider
    if key in _BUILT_IN_LATER:
        with _lock:
            provider = _providers.get(key)
            if provider is None:
                from .store import StoreProvider

                provider = _providers[key] = StoreProvider()
        return provider
    known = ", ".join(known_providers())
    raise UnknownProviderError(
        f"unknown provider {name!r}; known providers are: {known}. "
        "Register your own with profiles.register_provider(name, provider)."
    )


@contextmanager
def store_answering_from(url: str, *, ttl: float | None = None) -> Iterator[StoreProvider]:
    """Answer `store` lookups from the store at `url` (a database URL or a served store) inside the
    block, with answers kept `ttl` seconds (the provider's default when None); yields the provider,
    then puts back the one registered before and closes the one made here."""
    from .store import DEFAULT_TTL, StoreProvider

    previous = get_provider("store")
    provider = StoreProvider(url, ttl=DEFAULT_TTL if ttl is None else ttl)
    register_provider("store", provider)
    try:
        yield provider
    finally:
        register_provider("store", previous)
        provider.close()
