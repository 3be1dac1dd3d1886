"""Message layout: which prompt kinds become which chat messages, and where the history goes.

A persona's prompts become a list of chat messages by its layout, by default

```yaml
messages:
  - {kind: system}     # the system prompt, sent as a system message
  - {history: true}    # the caller's history, checked
  - {kind: user}       # the user prompt, sent as a user message
```

and `roles:` gives a kind its role where a slot names none (`roles: {planner: developer}`).
A kind's role is, first found: the slot's `role`, the persona's `roles:`, `system` for the
system kind, `user` for any other. A prompt that renders empty leaves no message.

`assemble` builds the Chat-shaped list from rendered prompts; `to_style` gives the Anthropic
shape (`{"system": …, "messages": […]}`). Rendering is the profile's job: this module only
arranges what it is handed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .errors import HistoryError
from .history import check_history, copied, to_anthropic

__all__ = [
    "DEFAULT_LAYOUT",
    "LAYOUT_KEYS",
    "MESSAGE_ROLES",
    "STYLES",
    "LayoutSpecError",
    "MessageSlot",
    "Style",
    "assemble",
    "parse_layout",
    "parse_roles",
    "role_of",
    "to_style",
]

Style = Literal["openai", "anthropic"]

#: The shapes `format_messages` returns: OpenAI's message list, or Anthropic's system and messages.
STYLES: tuple[str, ...] = ("openai", "anthropic")

#: Roles a prompt may be sent as. `tool` needs a call to answer, so only history holds it.
MESSAGE_ROLES: tuple[str, ...] = ("system", "developer", "user", "assistant")

#: Keys one entry of `messages:` may hold.
LAYOUT_KEYS: tuple[str, ...] = ("kind", "role", "history")

_KIND = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")


class LayoutSpecError(ValueError):
    """`messages:` or `roles:` is malformed; `index` is the entry's position (None for the whole)."""

    def __init__(self, reason: str, index: int | None = None) -> None:
        self.reason = reason
        self.index = index
        super().__init__(reason if index is None else f"messages[{index}]: {reason}")


@dataclass(frozen=True)
class MessageSlot:
    """One entry of a layout: a prompt kind sent as one message, or the place of the history."""

    kind: str | None = None
    #: The role to send the kind as; None takes it from `roles:` or the kind's default.
    role: str | None = None
    history: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The slot as a persona file writes it."""
        if self.history:
            return {"history": True}
        return {"kind": self.kind, **({"role": self.role} if self.role else {})}


#: The layout of a persona that declares none; its roles come from `roles:`, else the kinds' defaults.
DEFAULT_LAYOUT: tuple[MessageSlot, ...] = (
    MessageSlot(kind="system"),
    MessageSlot(history=True),
    MessageSlot(kind="user"),
)


def _role(value: Any, where: str) -> str:
    if value not in MESSAGE_ROLES:
        raise LayoutSpecError(f"{where} must be one of {', '.join(MESSAGE_ROLES)}, got {value!r}")
    return str(value)


def _kind(value: Any, where: str) -> str:
    if not isinstance(value, str) or not _KIND.match(value):
        raise LayoutSpecError(f"{where} must name a prompt kind (system, user, or one of the persona's), got {value!r}")
    return value


def parse_layout(value: Any) -> tuple[MessageSlot, ...]:
    """Check a `messages:` list and return its slots; None gives the default layout.

    Raises:
        LayoutSpecError: naming the entry and what to fix.
    """
    if value is None:
        return DEFAULT_LAYOUT
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise LayoutSpecError("expected a list of messages, e.g. [{role: system, kind: system}, {history: true}]")
    if not value:
        raise LayoutSpecError("the layout is empty; list at least one message, or leave 'messages:' out")
    slots = []
    histories = 0
    for index, item in enumerate(value):
        if isinstance(item, MessageSlot):
            slot = item
        elif not isinstance(item, Mapping):
            raise LayoutSpecError("expected {role: …, kind: …} or {history: true}", index)
        else:
            unknown = sorted(str(key) for key in item if key not in LAYOUT_KEYS)
            if unknown:
                raise LayoutSpecError(
                    f"unknown key(s) {', '.join(unknown)}; allowed keys are kind, role, history", index
                )
            if "history" in item:
                if item["history"] is not True or len(item) != 1:
                    raise LayoutSpecError("the history slot is written {history: true}, with no other key", index)
                slot = MessageSlot(history=True)
            elif "kind" not in item:
                raise LayoutSpecError("a message needs the prompt kind it sends, e.g. {role: user, kind: user}", index)
            else:
                try:
                    kind = _kind(item["kind"], "kind")
                    role = _role(item["role"], "role") if "role" in item else None
                except LayoutSpecError as exc:
                    raise LayoutSpecError(exc.reason, index) from None
                slot = MessageSlot(kind=kind, role=role)
        if slot.history:
            histories += 1
            if histories > 1:
                raise LayoutSpecError("only one {history: true} slot; the history goes in one place", index)
        slots.append(slot)
    return tuple(slots)


def parse_roles(value: Any) -> dict[str, str]:
    """Check a `roles:` mapping of prompt kind to role.

    Raises:
        LayoutSpecError: naming the kind and what to fix.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise LayoutSpecError("expected a mapping of prompt kind to role, e.g. {planner: developer}")
    roles = {}
    for kind, role in value.items():
        _kind(kind, "a key of roles")
        roles[str(kind)] = _role(role, f"the role of {kind!r}")
    return roles


def role_of(slot: MessageSlot, roles: Mapping[str, str]) -> str:
    """The role a slot's prompt is sent as: the slot's, the persona's `roles:`, else the kind's default."""
    if slot.role:
        return slot.role
    kind = slot.kind or ""
    return roles.get(kind) or ("system" if kind == "system" else "user")


def assemble(
    layout: Sequence[MessageSlot],
    roles: Mapping[str, str],
    render: Callable[[str], str],
    history: Sequence[Mapping[str, Any]] | None,
    *,
    api: str = "openai-chat",
) -> list[dict[str, Any]]:
    """The Chat-shaped message list: each slot's prompt rendered by `render(kind)`, history in its slot.

    History is checked for `api` first, so a problem names the caller's own turn
    (`history[2]`) rather than its place in the assembled list.

    Raises:
        HistoryError: the history is malformed, or the layout has no place for it.
    """
    turns: list[dict[str, Any]] = []
    if history is not None:  # an empty mapping or text is a mistake to name, not "no history"
        problems = check_history(history, api)
        if problems:
            raise HistoryError(problems)
    if history:
        if not any(slot.history for slot in layout):
            raise HistoryError(
                "this persona's 'messages:' layout has no {history: true} slot, so history has nowhere to go; "
                "add one, or leave history out"
            )
        turns = copied(history)
    messages: list[dict[str, Any]] = []
    for slot in layout:
        if slot.history:
            messages.extend(turns)
            continue
        text = render(slot.kind or "")
        if text.strip():
            messages.append({"role": role_of(slot, roles), "content": text})
    return messages


def to_style(messages: list[dict[str, Any]], style: str) -> list[dict[str, Any]] | dict[str, Any]:
    """`messages` (Chat-shaped, checked) as `style` asks: the list itself, or Anthropic's shape.

    Raises:
        HistoryError: Anthropic's first message would not be the user's.
    """
    if style == "openai":
        return messages
    if style != "anthropic":
        raise ValueError(f"unknown style {style!r}; use one of {', '.join(STYLES)}")
    converted = to_anthropic(messages)
    first = converted["messages"][0]["role"] if converted["messages"] else None
    if first is not None and first != "user":
        raise HistoryError(
            f"Anthropic's first message must be the user's, but this one is {first!r}; start the history with a "
            "user turn, or put a user prompt before it in the persona's 'messages:' layout"
        )
    return converted
