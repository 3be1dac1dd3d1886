"""Fields whose value is decided when a profile is created, not when the persona is written.

`DynConfig(...)` describes where a value comes from (a provider and key) and what to use when
nothing answers (the default). Nothing is looked up until `resolve` is called, so the same
persona resolves differently per deployment, language and model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .context import Context, Resolved
from .errors import ConfigError, ResolutionError
from .providers import get_provider
from .providers.env import check_env_key

__all__ = ["DEFAULT_SEPARATOR", "DYNAMIC_KEYS", "ConfigInfo", "DynConfig", "type_name"]

DEFAULT_SEPARATOR = "[LIST_SEP]"

#: Keys a dynamic field's mapping may hold, in a persona file or as `DynConfig` arguments.
DYNAMIC_KEYS = ("default", "key", "provider", "is_list", "separator", "secret", "description", "category")

#: A field of this category with no provider reads from the prompt store.
STORE_CATEGORY = "agent"


@dataclass(frozen=True)
class ConfigInfo:
    """A value to be resolved later; made by `DynConfig`."""

    default: Any = None
    key: str | None = None
    provider: str | None = None
    is_list: bool = False
    separator: str = DEFAULT_SEPARATOR
    secret: bool = False
    description: str | None = None
    category: str | None = None

    @property
    def provider_name(self) -> str:
        """The provider asked for `key`: the one named, else the store for agent prompts, else env."""
        if self.provider:
            return self.provider
        return "store" if self.category == STORE_CATEGORY else "env"

    def resolve(self, context: Context | None = None) -> Resolved:
        """Return the value for `context` with its source.

        The provider's answer wins; no answer or an empty string falls back to the default.
        """
        context = context or Context()
        found: Resolved | None = None
        if self.key:
            provider = get_provider(self.provider_name)
            try:
                found = provider.find(self.key, context)
            except ResolutionError:
                raise
            except Exception as exc:  # a user's provider failed: say which, keep the cause
                raise ResolutionError(
                    f"provider {self.provider_name!r} failed to look up {self.key!r}: "
                    f"{type(exc).__name__}; check that provider's configuration"
                ) from exc
            if found is not None and (type(found) is not Resolved or type(found.source) is not str):
                self._check_found(found)
        if found is None or found.value in (None, ""):
            # a provider that answers Resolved(None, why) says why the default is used (a store outage)
            why = f" ({found.source})" if found is not None and found.value is None and found.source else ""
            stale = found is not None and found.stale
            return Resolved(self._shape(self.default), f"default{why}", self.secret, stale=stale)
        if type(found) is Resolved and not self.is_list and found.reason is None and (found.secret or not self.secret):
            return found  # already what this field resolves to: immutable, so it is handed on as it is
        return Resolved(
            self._shape(found.value), found.source, self.secret or found.secret, found.stale, details=found.details
        )

    def _check_found(self, found: Any) -> None:
        """Refuse what a provider's own `find` gave when it is no `Resolved` with a text source."""
        if isinstance(found, Resolved) and isinstance(found.source, str):
            return
        got = "a Resolved whose source is no text" if isinstance(found, Resolved) else type(found).__name__
        raise ResolutionError(
            f"provider {self.provider_name!r} answered {self.key!r} with {got}; its find() returns "
            "Resolved(value, source) with the source as text, or None (or implement lookup() instead)"
        )

    def query(self, **context: Any) -> Any:
        """Return just the value; `context` takes `language`, `model` and `deployment`."""
        return self.resolve(Context(**context)).value

    def _shape(self, value: Any) -> Any:
        if not self.is_list:
            return value
        if value is None:
            return []
        if isinstance(value, str):
            return [item.strip() for item in value.split(self.separator) if item.strip()]
        if not isinstance(value, (list, tuple)):
            return value  # a provider's answer of another kind: refused where the field is resolved
        # stripped, and blank items left out, as when a text answer is split
        return [
            item.strip() if isinstance(item, str) else item
            for item in value
            if not isinstance(item, str) or item.strip()
        ]

    def __repr__(self) -> str:
        default = "'***'" if self.secret and self.default is not None else repr(self.default)
        parts = [f"default={default}"]
        for name in ("key", "provider", "category"):
            if getattr(self, name) is not None:
                parts.append(f"{name}={getattr(self, name)!r}")
        if self.is_list:
            parts.append("is_list=True")
        if self.secret:
            parts.append("secret=True")
        return f"ConfigInfo({', '.join(parts)})"


def _is_number(value: Any) -> bool:
    """A model setting's default may be a number (`DynConfig(0.2, key="TEMPERATURE")`); true/false is none."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def type_name(value: Any) -> str:
    """What a value is, in the words of a persona author: "a number", "a list", "true/false", "null"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if _is_number(value):
        return "a number"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__


def DynConfig(  # noqa: N802 - named like a class, as in DB-GPT, because it stands for one
    default: Any = None,
    *,
    key: str | None = None,
    provider: str | None = None,
    is_list: bool = False,
    separator: str = DEFAULT_SEPARATOR,
    secret: bool = False,
    description: str | None = None,
    category: str | None = None,
) -> ConfigInfo:
    """Describe a field resolved at `create_profile` time.

    Args:
        default: used when there is no key or the provider answers nothing or "": text, a list
            of texts, or, for a model setting, a number.
        key: what to ask the provider for.
        provider: a registered provider name (`env`, `store`, or your own); default `env`,
            or `store` when `category="agent"`.
        is_list: split a text answer on `separator` and strip each item; a list default implies it.
        secret: mask the value everywhere and refuse to render it unless allowed.

    Raises:
        ConfigError: when there is neither a default nor a key, an option has the wrong type, or
            an env key could not name an environment variable (a path separator, `..`, a space).
    """
    if default is None and not key:
        raise ConfigError("a dynamic field needs a default, a key, or both")
    if key is not None and (not isinstance(key, str) or not key.strip()):
        raise ConfigError(f"key must be non-empty text, got {key!r}")
    if provider is not None and not isinstance(provider, str):
        raise ConfigError(f"provider must be a provider's name, got {type(provider).__name__}")
    for option_name, option in (("description", description), ("category", category)):
        if option is not None and not isinstance(option, str):
            raise ConfigError(f"{option_name} must be text, got {type_name(option)}; quote it")
    if not isinstance(separator, str) or not separator:
        raise ConfigError("separator must be non-empty text")
    for flag_name, flag in (("is_list", is_list), ("secret", secret)):
        if not isinstance(flag, bool):
            raise ConfigError(f"{flag_name} must be true or false, got {flag!r}")
    if isinstance(default, (list, tuple)):
        is_list = True
        for number, item in enumerate(default, start=1):
            if not isinstance(item, str):  # str() would print true as 'True' and null as 'None' into the prompt
                raise ConfigError(f"default's item {number} must be text, got {type_name(item)}; quote it")
        default = list(default)
    elif default is not None and not isinstance(default, str) and not _is_number(default):
        raise ConfigError(f"default must be text or a list of text, got {type(default).__name__}")
    if provider is not None:
        get_provider(provider)  # an unknown name fails here, when the field is defined
    info = ConfigInfo(default, key, provider, is_list, separator, secret, description, category)
    if key is not None and info.provider_name == "env":
        why = check_env_key(key)
        if why is not None:
            store = " (a prompt store key such as summarizer/name needs provider: store)" if "/" in key else ""
            raise ConfigError(
                f"env key {key!r} {why}; an environment variable's name is letters, digits and '_'{store}"
            )
    return info
