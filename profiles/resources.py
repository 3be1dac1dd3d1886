"""Resources a system prompt is grounded in: documents given at render time, checked once.

Each resource is a mapping with `content` (text) and optional `source` and `title`. Blank
resources are dropped rather than rendered as an empty section, and a persona that says
`requires_resources: true` refuses a render left with none: a grounded agent without its
documents would answer from memory while its prompt claims otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import ResourceError

__all__ = ["RESOURCE_KEYS", "check_resources"]

#: Keys a resource may hold; `content` is required.
RESOURCE_KEYS = ("content", "source", "title")

_EXAMPLE = 'resources=[{"content": "…", "source": "https://…", "title": "…"}]'


def check_resources(value: Any) -> tuple[dict[str, Any], ...]:
    """Validate resources and number the non-blank ones from 1, as templates show them.

    Returns mappings with `index`, `content`, `source` and `title` (None when not given).

    Raises:
        ResourceError: naming the resource's position and what to fix.
    """
    if value is None:
        return ()
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple)):
        raise ResourceError(
            f"resources must be a list of mappings, got {type(value).__name__}; pass {_EXAMPLE}"
        )
    checked = []
    for position, item in enumerate(value):
        where = f"resources[{position}]"
        if not isinstance(item, Mapping):
            raise ResourceError(f"{where} is {type(item).__name__}, expected a mapping; pass {_EXAMPLE}")
        unknown = sorted(str(key) for key in item if key not in RESOURCE_KEYS)
        if unknown:
            raise ResourceError(
                f"{where} has unknown key(s) {', '.join(unknown)}; "
                f"a resource holds {', '.join(RESOURCE_KEYS)}"
            )
        content = item.get("content")
        if not isinstance(content, str):
            shown = "no 'content'" if content is None else f"'content' of type {type(content).__name__}"
            raise ResourceError(f"{where} has {shown}; give the document's text as 'content'")
        for key in ("source", "title"):
            if item.get(key) is not None and not isinstance(item[key], str):
                raise ResourceError(
                    f"{where} has '{key}' of type {type(item[key]).__name__}; give text or leave it out"
                )
        if not content.strip():
            continue
        checked.append(
            {
                "index": len(checked) + 1,
                "content": content,
                "source": (item.get("source") or "").strip() or None,
                "title": (item.get("title") or "").strip() or None,
            }
        )
    return tuple(checked)
