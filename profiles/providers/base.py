"""The contract every configuration provider follows.

A provider answers one question: what is the value of `key` for this context? It may answer
nothing (`None`), and the field's default is used. Providers that know more precisely where a
value came from (a file, a store version) override `find` to say so.
"""

from __future__ import annotations

from ..context import Context, Resolved

__all__ = ["ConfigProvider"]


class ConfigProvider:
    """Looks up values by key; subclass it and `register_provider` an instance to use your own.

    A subclass implements `lookup`, or `find` when it can say more precisely where a value came
    from; each of the two is written in terms of the other.

    Example:
        class VaultProvider(ConfigProvider):
            name = "vault"

            def lookup(self, key, *, language=None, model=None, deployment=None):
                return my_vault.read(key)
    """

    #: Name used in persona files (`provider: vault`) and in provenance (`vault:KEY`).
    name: str = "provider"

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.lookup is ConfigProvider.lookup and cls.find is ConfigProvider.find:
            raise TypeError(f"{cls.__name__} must implement lookup() or find()")

    def lookup(
        self,
        key: str,
        *,
        language: str | None = None,
        model: str | None = None,
        deployment: str | None = None,
    ) -> str | None:
        """Return the value for `key`, or None when this provider has none."""
        if type(self).find is ConfigProvider.find:
            raise NotImplementedError(f"{type(self).__name__} must implement lookup() or find()")
        found = self.find(key, Context(language=language, model=model, deployment=deployment))
        return None if found is None else found.value

    def find(self, key: str, context: Context) -> Resolved | None:
        """Return the value with its source; override to name the source more precisely."""
        value = self.lookup(key, language=context.language, model=context.model, deployment=context.deployment)
        if value is None:
            return None
        return Resolved(value, f"{self.name}:{key}")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
