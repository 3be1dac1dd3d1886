"""The context a profile is created for: who asks, in which deployment, language and model.

Providers look values up for a context, so the same persona can carry one identity in `dev` and
another in `prod`, or in English and Chinese, without copying files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Context", "Resolved"]


@dataclass(frozen=True)
class Context:
    """What a dynamic field is resolved for.

    `deployment` is what `create_profile(deployment=...)` or the CLI's `--deployment` gave, else
    `PROFILES_DEPLOYMENT`, else None; it picks the persona's overlay and the `env` provider's
    `.env.<deployment>` file. `base_dir` is the folder of the persona file, where file-based
    providers look first (the `env` provider then tries the working directory).

    `rollout_key` (a user or session id, `create_profile(rollout_key=...)` or
    `PROFILES_ROLLOUT_KEY`) picks one version of a label rolled out over several, the same one for
    the same key every time. `store_versions` pins store keys to versions (`{"summarizer/system":
    4}`), bypassing the label chain: how `profiles diff --store-version` renders a version before
    it is released.
    """

    language: str | None = None
    model: str | None = None
    deployment: str | None = None
    base_dir: Path | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    rollout_key: str | None = None
    store_versions: Mapping[str, int] = field(default_factory=dict)

    def __hash__(self) -> int:
        # frozen, so usable as a cache key; the two mappings are left out (equal contexts agree on the rest)
        return hash((self.language, self.model, self.deployment, self.base_dir, self.rollout_key))


@dataclass(frozen=True)
class Resolved:
    """A value together with where it came from, for `explain` and error messages.

    `stale` says the provider could not reach its source: the value is one it gave earlier, or
    None (then `reason` says why, for an error message; it never goes into provenance). `details`
    holds what a provider knows in parts, for traces: the store gives `key`, `version`, `label`
    and, for a rollout, `arm`, `arms` and `weight`.
    """

    value: Any
    source: str
    secret: bool = False
    stale: bool = False
    reason: str | None = field(default=None, compare=False)
    details: Mapping[str, Any] | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        shown = "'***'" if self.secret else repr(self.value)
        return f"Resolved(value={shown}, source={self.source!r}, secret={self.secret})"
