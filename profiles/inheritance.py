"""`extends:`: how a persona's fields combine with those of the personas it builds on.

Later wins: the parents in the order `extends` lists them, then the child. A field replaces the
same field of an earlier persona, except the mappings, which merge per key: `templates`,
`variables`, `samples`, `inputs`, `roles` and `model_settings` per name, `metadata` per top-level
key, `deployments` per deployment and, inside one deployment, per field. Each persona's own
`{file: …}` templates were already read relative to its own folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import PersonaModel

__all__ = ["EXTENDS_DESCRIPTION", "MERGED_FIELDS", "merge_configs"]

#: What `extends:` holds, for the JSON Schema and the README's field table (the loader reads it,
#: so it is no field of the persona model).
EXTENDS_DESCRIPTION = (
    "Parent persona file(s), relative to this file and inside the loaded persona's folder; this file's fields "
    "replace theirs, and templates, variables, samples, inputs, roles, model_settings, metadata and deployments "
    "merge per key."
)

#: Fields that merge per key rather than replace.
MERGED_FIELDS = ("templates", "variables", "samples", "inputs", "roles", "deployments", "metadata")

_OVERLAY_MAPPINGS = ("templates", "variables", "samples", "inputs", "roles")


def merge_configs(
    configs: Sequence[PersonaModel],
) -> tuple[dict[str, Any], dict[tuple[str, ...], tuple[str, int]]]:
    """The fields of `configs` combined, later winning, with where each surviving field was written.

    Only the fields each persona sets itself count, so a parent's value is never hidden by a
    child's unset default.
    """
    data: dict[str, Any] = {}
    lines: dict[tuple[str, ...], tuple[str, int]] = {}
    for config in configs:
        for field in config.model_fields_set:
            value = getattr(config, field)
            if field == "deployments":
                merged = data.setdefault("deployments", {})
                for deployment, overlay in value.items():
                    entry = merged.setdefault(deployment, {})
                    for name in overlay.model_fields_set:
                        item = getattr(overlay, name)
                        if name == "model_settings":
                            entry[name] = _merged_settings(entry.get(name), item)
                        else:
                            entry[name] = {**entry.get(name, {}), **item} if name in _OVERLAY_MAPPINGS else item
            elif field == "model_settings":
                data[field] = _merged_settings(data.get(field), value)
            elif field in MERGED_FIELDS:
                data[field] = {**data.get(field, {}), **_mapping(value)}
            else:
                data[field] = value
        lines.update(config._lines)
    return data, lines


def _merged_settings(earlier: Any, later: Any) -> Any:
    from .fields import merge_model_settings

    return later if earlier is None else merge_model_settings(earlier, later)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
