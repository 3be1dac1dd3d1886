"""The small frozen records the prompt store hands out, free of any database type.

Callers keep these after the store is closed, compare them and put them in sets; nothing in them
can change the database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

__all__ = [
    "Arm",
    "ImportResult",
    "LabelMatch",
    "LabelMove",
    "PromptSummary",
    "PromptVersion",
    "ProtectedLabel",
    "spell_arms",
]


@dataclass(frozen=True)
class PromptVersion:
    """One immutable version of a prompt, with the labels that point at it when it was read."""

    name: str
    language: str
    model: str
    version: int
    content: str
    created_at: datetime
    author: str = ""
    note: str = ""
    labels: tuple[str, ...] = ()
    #: Set by ``put`` when the content was already the newest version, so no version was added.
    unchanged: bool = field(default=False, compare=False, repr=False)

    @property
    def ref(self) -> str:
        """Short reference used in provenance and messages, e.g. ``summary [zh-TW] v3``."""
        where = ",".join(part for part in (self.language, self.model) if part)
        return f"{self.name}{f' [{where}]' if where else ''} v{self.version}"


@dataclass(frozen=True)
class PromptSummary:
    """One prompt key as ``list`` shows it: its newest version and where each label points."""

    name: str
    language: str
    model: str
    latest_version: int
    updated_at: datetime
    labels: tuple[tuple[str, int], ...] = ()
    #: Labels rolled out over several versions: ``(label, ((version, weight), ...))``. Such a label
    #: is in ``labels`` too, with the version it serves without a rollout key (its first).
    rollouts: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = ()

    def label_text(self, label: str, version: int) -> str:
        """How a label reads in a listing: ``production=v2``, or ``production=v3:90,v4:10``."""
        for name, arms in self.rollouts:
            if name == label:
                return f"{label}={','.join(f'v{number}:{weight}' for number, weight in arms)}"
        return f"{label}=v{version}"


@dataclass(frozen=True)
class ImportResult:
    """What an import changed; both zero when the folder was already in the store."""

    versions_added: int = 0
    labels_moved: int = 0


def spell_arms(arms: tuple[tuple[int, int], ...]) -> str:
    """``((3, 90), (4, 10))`` as ``3=90,4=10``: how the move log and the CLI write a rollout."""
    return ",".join(f"{version}={weight}" for version, weight in arms)


@dataclass(frozen=True)
class LabelMove:
    """One recorded move of a label: where it pointed before and after, when, by whom and why.

    ``from_version`` is None when the label was new; ``to_version`` is None when the move removed
    it (undoing its first move). For a rollout, ``*_arms`` hold every version with its weight and
    ``*_version`` the first of them; both are ``()`` for a single version. ``seq`` counts the moves
    of one label of one prompt from 1 with no gap; ``undoes`` is the ``seq`` an undo reverted.
    """

    name: str
    language: str
    model: str
    label: str
    seq: int
    from_version: int | None
    to_version: int | None
    moved_at: datetime
    author: str = ""
    note: str = ""
    from_arms: tuple[tuple[int, int], ...] = ()
    to_arms: tuple[tuple[int, int], ...] = ()
    undoes: int | None = None

    @staticmethod
    def _side(version: int | None, arms: tuple[tuple[int, int], ...]) -> str:
        if arms:
            return ",".join(f"v{number}:{weight}" for number, weight in arms)
        return "-" if version is None else f"v{version}"

    @property
    def before(self) -> str:
        """Where the label pointed before: ``v2``, ``v3:90,v4:10`` or ``-`` (nowhere)."""
        return self._side(self.from_version, self.from_arms)

    @property
    def after(self) -> str:
        """Where the label points after the move, spelled like ``before``."""
        return self._side(self.to_version, self.to_arms)


@dataclass(frozen=True)
class Arm:
    """One version a label serves, with its weight (1 for a label that is not rolled out)."""

    record: PromptVersion
    weight: int = 1


@dataclass(frozen=True)
class LabelMatch:
    """What a lookup found: the label of the chain that matched (None: the newest version) and the
    versions it serves, one ``Arm`` each; more than one when the label is rolled out.

    The provider keeps a match for its TTL and picks an arm per rollout key, so a thousand users
    cost one query, not a thousand.
    """

    label: str | None
    arms: tuple[Arm, ...]

    @property
    def is_rollout(self) -> bool:
        return len(self.arms) > 1

    def pick(self, rollout_key: str | None) -> int:
        """The index of the arm ``rollout_key`` falls in; the first arm without a key.

        The same key picks the same arm every time (see ``profiles.buckets``); over many keys each
        arm gets its share of the weights.
        """
        if rollout_key is None or len(self.arms) == 1:
            return 0
        from profiles.buckets import weighted_choice

        return weighted_choice(rollout_key, [arm.weight for arm in self.arms])


@dataclass(frozen=True)
class ProtectedLabel:
    """A label of the whole store that moves only with ``force=True``: when and by whom it was protected."""

    label: str
    protected_at: datetime
    author: str = ""
