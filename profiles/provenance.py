"""Provenance for people: `explain` lists every field of a profile, its value and where it came from.

The answer to "why is the summarizer called Plato in prod?": a row per field and per template
variable naming the YAML file and line, the deployment overlay, the env key and the file (or the
process) that gave it, or the default. Model settings get a row each (`model_settings.temperature`),
and the output schema one naming where it came from. Secrets show as `***`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .context import Resolved
from .fields import PROFILE_FIELDS
from .secrets import MASK

__all__ = ["ExplainRow", "Explainable", "explain_profile"]


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


class Explainable(Protocol):
    """What explaining needs of a profile: its resolved fields and its templates."""

    resolved: Mapping[str, Resolved]
    templates: Mapping[str, Any]


def explain_profile(profile: Explainable) -> list[ExplainRow]:
    """The rows of a created profile: its fields in the order `PROFILE_FIELDS` lists them, then each
    of its `variables:` as `variables.<name>`, each model setting as `model_settings.<name>`, each
    template fetched from the store, the output schema and the stored prompts templates include."""
    resolved = profile.resolved
    names = [name for name in PROFILE_FIELDS if name in resolved]
    names += [name for name in resolved if name not in names]
    rows = []
    for name in names:
        item = resolved[name]
        value = MASK if item.secret and item.value is not None else item.value
        rows.append(ExplainRow(name, value, item.source, item.secret))
    for name, item in getattr(profile, "resolved_variables", {}).items():
        value = MASK if item.secret and item.value is not None else item.value
        rows.append(ExplainRow(f"variables.{name}", value, item.source, item.secret))
    for name, item in getattr(profile, "settings", {}).items():
        value = MASK if item.secret and item.value is not None else item.value
        rows.append(ExplainRow(f"model_settings.{name}", value, item.source, item.secret))
    for kind, template in profile.templates.items():
        if getattr(template, "store_key", None):  # the version and label the store gave
            rows.append(ExplainRow(f"templates.{kind}", template.source, template.origin))
    output = getattr(profile, "output_schema", None)
    if output is not None:
        rows.append(ExplainRow("output_schema", output.name, output.origin))
    for name, part in getattr(profile, "includes", {}).items():  # stored prompts the templates include
        rows.append(ExplainRow(f"include {name}", part.source, part.origin))
    return rows
