"""Deployment overlays: one persona file, a different identity in dev, staging, prod or per customer.

A persona's `deployments:` maps a deployment name to the fields it changes:

```yaml
name: Aristotle
deployments:
  staging: {name: Socrates}
```

The overlay's fields replace the persona's; `templates`, `variables`, `samples`, `inputs`, `roles`
and `model_settings` merge per key, the overlay winning (`model_settings.extra` per key too).
Provenance names the overlay and the line it was written on (`overlay staging: a.yaml:4`).
"""

from __future__ import annotations

import threading
from typing import Any, TypeVar

from .callers import warn_at_caller
from .config import DeploymentOverlay, PersonaModel
from .fields import PROFILE_FIELDS, merge_model_settings

__all__ = ["MERGED_FIELDS", "UnknownDeploymentWarning", "apply_overlay", "for_deployment", "warn_unknown_deployment"]

#: Overlay fields that merge per key instead of replacing the persona's.
MERGED_FIELDS = ("templates", "variables", "samples", "inputs", "roles", "model_settings")

Config = TypeVar("Config", bound=PersonaModel)


class UnknownDeploymentWarning(UserWarning):
    """Warned when a persona with overlays is created for a deployment it does not list."""


#: Most (file, deployment) pairs remembered as warned about; past that the memory starts over.
MAX_WARNED = 1024

_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()


def warn_unknown_deployment(file: str, deployment: str, known: list[str]) -> None:
    """Warn, once per (file, deployment), that the base persona stands in for `deployment`."""
    with _warned_lock:
        if (file, deployment) in _warned:
            return
        if len(_warned) >= MAX_WARNED:  # a server asked for endless made-up names: start over
            _warned.clear()
        _warned.add((file, deployment))
    warn_at_caller(
        f"{file}: deployment {deployment!r} has no entry under 'deployments:' (it lists "
        f"{', '.join(known)}); using the base persona. Add '{deployment}:' under 'deployments:' "
        "to give it its own fields, or leave it empty to keep the base persona without this warning",
        UnknownDeploymentWarning,
    )


def for_deployment(config: Config, deployment: str | None) -> Config:
    """`config` with `deployment`'s overlay applied; `config` itself when there is none.

    An overlay's fields replace the persona's; its `templates` and `variables` merge per key,
    the overlay winning. A deployment the persona's `deployments:` does not list uses the base
    persona and warns once per (file, deployment). A persona without `deployments:` never warns.
    Each overlaid config is made once and kept with its persona.
    """
    if not deployment or not config.deployments:
        return config
    made: dict[str, Config] = config._memo.setdefault("overlaid", {})
    found = made.get(deployment)
    if found is not None:
        return found
    overlay = config.deployments.get(deployment)
    if overlay is None:  # not kept: names nobody lists would pile up in the persona's memory
        warn_unknown_deployment(config.source_file or "<persona>", deployment, sorted(config.deployments))
        return config
    found = made[deployment] = apply_overlay(config, deployment, overlay)
    return found


def apply_overlay(config: Config, deployment: str, overlay: DeploymentOverlay) -> Config:
    """A copy of `config` with `overlay`'s fields in place, each remembering the overlay as its source."""
    updates: dict[str, Any] = {}
    sources = dict(config._overlay_sources)
    for field in overlay.model_fields_set:
        value = getattr(overlay, field)
        if field == "model_settings":
            updates[field] = merge_model_settings(config.model_settings, value)
            for name in value.settings():
                where = config.line_of("deployments", deployment, field, name)
                shown = f"overlay {deployment}: {where[0]}:{where[1]}" if where else f"overlay {deployment}"
                sources[f"{field}.{name}"] = shown
            continue
        if field in MERGED_FIELDS:
            updates[field] = {**getattr(config, field), **value}
            if field == "variables":
                where = config.line_of("deployments", deployment, field)
                for name in value:
                    sources[f"variables.{name}"] = (
                        f"overlay {deployment}: {where[0]}:{where[1]}" if where else f"overlay {deployment}"
                    )
            continue
        updates[field] = value
        if field in PROFILE_FIELDS or field == "output_schema":
            where = config.line_of("deployments", deployment, field)
            sources[field] = f"overlay {deployment}: {where[0]}:{where[1]}" if where else f"overlay {deployment}"
    made = config._copy_unchecked(update=updates)  # each value was checked with the persona
    # model_copy shares private attributes; the copy needs its own
    made._overlay_sources = sources
    made._lines = config._lines
    return made
