"""Provenance for people: `explain` lists every field of a profile, its value and where it came from.

The answer to "why is the summarizer called Plato in prod?": a row per field naming the YAML
file and line, the deployment overlay, the env key and the file (or the process) that gave it, or
the default. Secrets show as `***`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .secrets import MASK

if TYPE_CHECKING:
    from .config import ProfileConfig
    from .profile import DefaultProfile

__all__ = ["ExplainRow", "explain", "explain_profile"]


@dataclass(frozen=True)
class ExplainRow:
    """One field of a profile: its value (already masked when secret) and its source."""

    field: str
    value: Any
    source: str
    secret: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping; a list value becomes a JSON array."""
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        return {"field": self.field, "value": value, "source": self.source, "secret": self.secret}


def explain_profile(profile: DefaultProfile) -> list[ExplainRow]:
    """The rows of a created profile, in the order `PROFILE_FIELDS` lists the fields."""
    from .config import PROFILE_FIELDS

    resolved = profile.resolved
    names = [name for name in PROFILE_FIELDS if name in resolved]
    names += [name for name in resolved if name not in names]
    rows = []
    for name in names:
        item = resolved[name]
        value = MASK if item.secret and item.value is not None else item.value
        rows.append(ExplainRow(name, value, item.source, item.secret))
    for kind, template in profile.templates.items():
        if getattr(template, "store_key", None):  # the version and label the store gave
            rows.append(ExplainRow(f"templates.{kind}", template.source, template.origin))
    return rows


def explain(
    persona: str | Path | ProfileConfig | DefaultProfile,
    *,
    deployment: str | None = None,
    language: str | None = None,
    model: str | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> list[ExplainRow]:
    """Where each field of a persona comes from for one context.

    `persona` is a persona file's path, a `ProfileConfig`, or an already created profile (then the
    context arguments are not used). The deployment falls back to `PROFILES_DEPLOYMENT`, as in
    `create_profile`.

    Raises:
        ConfigError: the persona file is invalid.
        ResolutionError: a field cannot be resolved.
    """
    from .config import ProfileConfig
    from .profile import DefaultProfile

    if isinstance(persona, DefaultProfile):
        return explain_profile(persona)
    if not isinstance(persona, ProfileConfig):
        from .loader import load_profile

        persona = load_profile(persona)
    profile = persona.create_profile(language=language, model=model, deployment=deployment, overrides=overrides)
    if not isinstance(profile, DefaultProfile):
        from .errors import FactoryError

        raise FactoryError(
            f"the persona's factory made a {type(profile).__name__}, which keeps no provenance; "
            "explain the persona without its factory"
        )
    return explain_profile(profile)
