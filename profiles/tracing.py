"""Span attributes for OpenTelemetry: which persona, deployment, store versions and template made a prompt.

When an application traces with OpenTelemetry and a span is recording, `create_profile` and every
call that renders (`format_system_prompt`, `format_prompt`, …, and `to_request`) add attributes to
the current span, so a trace of a bad answer says which prompt version produced it:

| attribute | holds |
|---|---|
| `profiles.persona.file` | the persona file, as loaded |
| `profiles.deployment`, `profiles.language`, `profiles.model` | the context the profile was made for |
| `profiles.store.keys`, `.versions`, `.labels`, `.arms` | one entry per store value or template, in step |
| `profiles.stale` | whether any store value was served stale (the store was unreachable) |
| `profiles.prompt.kind` | the prompt kind rendered |
| `profiles.template.name`, `profiles.template.hash` | its template and the SHA-256 (16 hex) of its text |
| `profiles.request.api` | the API `to_request` built a body for (`openai-chat`, `openai-responses`, `anthropic`) |

Values are never attributes: no field, no variable, no rendered text, no rollout key, so no
secret can reach a trace.

This module imports nothing of OpenTelemetry: the `otel` extra (`pip install
'agent-profiles[otel]'`) installs `opentelemetry-api`, and an application that traces has already
imported `opentelemetry.trace` to start its spans. Until it has, every call here is a dictionary
lookup and returns. A renderer elsewhere in the package (a `to_request`) records its call with
`annotate(profile.trace_attributes(kind))` after checking `recording()`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["AttributeValue", "PREFIX", "annotate", "current_span", "recording"]

#: Every attribute this package sets starts with it.
PREFIX = "profiles."

#: What OpenTelemetry accepts as an attribute value.
AttributeValue = str | bool | int | float | Sequence[str] | Sequence[bool] | Sequence[int] | Sequence[float]

_TRACE_MODULE = "opentelemetry.trace"


def current_span() -> Any | None:
    """The recording span of the current context, or None (OpenTelemetry not in use, no span, or not sampled)."""
    trace = sys.modules.get(_TRACE_MODULE)
    if trace is None:
        return None
    span = trace.get_current_span()
    return span if span.is_recording() else None


def recording() -> bool:
    """Whether attributes would be recorded now; cheap enough to ask before building them."""
    return current_span() is not None


def annotate(attributes: Mapping[str, AttributeValue | None]) -> None:
    """Set `attributes` on the current recording span; None values and empty lists are left out."""
    span = current_span()
    if span is None:
        return
    kept = {
        name: list(value) if isinstance(value, (list, tuple)) else value
        for name, value in attributes.items()
        if value is not None and value != () and value != []
    }
    if kept:
        span.set_attributes(kept)
