"""The contract of everything that makes profiles in bulk or on demand."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import FactoryError

if TYPE_CHECKING:
    from ..profile import Profile

__all__ = ["ProfileFactory"]


class ProfileFactory(ABC):
    """Creates profiles; options are keyword-only so adding one never breaks a subclass.

    A subclass implements `create_profile`, which answers one id with a `Profile` or None
    ("not mine"). `create_profiles` streams profiles for many ids; a factory that can list its own
    profiles (a dataset, say) overrides it so that `create_profiles()` without ids yields them all.

    A factory is also what `ProfileConfig(factory=...)` accepts: the persona calls
    `create_profile(profile_id, name=..., role=..., goal=..., language=..., model=...)` with its own
    resolved values, and a non-None answer wins over the persona's fields.

    Example:
        class Greeters(ProfileFactory):
            def create_profile(self, profile_id=None, *, name=None, role=None, goal=None,
                               language=None, model=None, **options):
                return ProfileConfig(name=f"Greeter {profile_id}", role="Greeter").create_profile(profile_id)
    """

    @abstractmethod
    def create_profile(
        self,
        profile_id: Any = None,
        *,
        name: str | None = None,
        role: str | None = None,
        goal: str | None = None,
        language: str | None = None,
        model: str | None = None,
        **options: Any,
    ) -> Profile | None:
        """Return a profile for `profile_id`, or None to let the persona's own fields stand."""

    def create_profiles(self, profile_ids: Iterable[Any] | None = None, **options: Any) -> Iterator[Profile]:
        """Yield a profile for each id that the factory answers, lazily, in order.

        Ids the factory answers with None are left out. Without ids, a factory that cannot list
        its own profiles raises `FactoryError`.
        """
        if profile_ids is None:
            raise FactoryError(
                f"{type(self).__name__} cannot list its profiles; pass the profile ids to create_profiles()"
            )
        return self._each(profile_ids, options)

    def _each(self, profile_ids: Iterable[Any], options: dict[str, Any]) -> Iterator[Profile]:
        for profile_id in profile_ids:
            profile = self.create_profile(profile_id, **options)
            if profile is not None:
                yield profile
