"""The contract of everything that makes profiles in bulk or on demand."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..profile import Profile

__all__ = ["ProfileFactory"]


class ProfileFactory(ABC):
    """Creates profiles; options are keyword-only so adding one never breaks a subclass.

    Subclasses implement `create_profile`; `create_profiles` streams one profile per id.
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

    def create_profiles(self, profile_ids: Iterable[Any], **options: Any) -> Iterator[Profile]:
        """Yield a profile for each id that the factory answers, lazily, in order."""
        for profile_id in profile_ids:
            profile = self.create_profile(profile_id, **options)
            if profile is not None:
                yield profile
