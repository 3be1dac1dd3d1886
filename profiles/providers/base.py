"""The contract every configuration provider follows.

A provider answers one question: what is the value of `key` for this context? It may answer
nothing (`None`), and the field's default is used. Providers that know more precisely where a
value came from (a file, a store version) override `find` to say so.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from ..context import Context, Resolved

__all__ = ["ConfigProvider"]


class ConfigProvider(ABC):
    """Looks up values by key; subclass it and `register_provider` an instance to use your own.

    Example:
        class VaultProvider(ConfigProvider):
            name = "vault"

            def lookup(self, key, *, language=None, model=None, deployment=None):
                return my_vault.read(key)
    """

    #: Name used in persona files (`provider: vault`) and in provenance (`vault:KEY`).
    name: str = "provider"

    @abstractmethod
    def lookup(
        self,
        key: str,
        *,
        language: str | None = None,
        model: str | None = None,
        deployment: str | None = None,
    ) -> str | None:
        """Return the value for `key`, or None when this provider has none."""

    def find(self, key: str, context: Context) -> Resolved | None:
        """Return the value with its source; override to name the source more precisely."""
        value = self.lookup(key, language=context.language, model=context.model, deployment=context.deployment)
        if value is None:
            return None
        return Resolved(value, f"{self.name}:{key}")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
