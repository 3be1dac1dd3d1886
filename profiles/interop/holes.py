"""Rendering a persona's prompts with holes: every value the caller gives later left as a marker.

Exporters and adapters need a persona's prompts as text with placeholders where the caller's
values go: another tool's file, or a framework's own prompt template. They never render on their
own. The profile renders each prompt with every such variable set to a marker, and the text is
cut at the markers into literal pieces and placeholders (`placeholders.Var`). A template that
does more with a hole than print it (a filter, a loop, a comparison) cannot keep it as a
placeholder, and `usages` finds such uses before anything is rendered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from ..context import Resolved
from ..fields import PROFILE_FIELDS
from ..messages import role_of
from .placeholders import Piece, Var

__all__ = [
    "FILLED", "Message", "Placeholder", "cut", "holes_of", "marked", "marker", "render_kind", "render_layout",
    "sources_of", "usages",
]

_OPEN, _CLOSE = "\ue000", "\ue001"
_MARK = re.compile(_OPEN + r"([A-Za-z_][A-Za-z0-9_]*)" + _CLOSE)

#: Variables the library fills or documents with a default of nothing; never a hole.
FILLED = frozenset({
    "most_recent_memories", "resource_prompt", "out_schema", "now_time", "is_retry_chat", "resources", "thought",
    "action", "observation", "tools", "tool_names", "react",
})

#: Filters that keep a value as it is, for a non-empty text.
_KEEPING_FILTERS = frozenset({"trim", "string"})

_MISSING: Any = object()


def marker(name: str) -> str:
    """The text a hole renders as while the prompt is cut."""
    return _OPEN + name + _CLOSE


@dataclass
class Placeholder:
    """A hole in the exported prompts: an input, the question, a variable without value, or a secret."""

    name: str
    spec: Any = None
    default: Any = _MISSING
    #: Set when the placeholder stands for a secret field: its resolved value and source.
    secret: Resolved | None = None
    #: `plain`, or `condition` when a template also tests whether it was given.
    usage: str = "plain"

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING

    @property
    def kind(self) -> str:
        """The placeholder's JSON type: its input's, else its default's, else text."""
        if self.spec is not None and self.spec.types:
            return str(self.spec.types[0])
        if self.has_default and self.default is not None:
            value = self.default
            for kind, python in (("boolean", bool), ("integer", int), ("number", float), ("array", (list, tuple)),
                                 ("object", dict)):
                if isinstance(value, python):
                    return kind
        return "string"

    @property
    def env_key(self) -> str | None:
        """The env key a secret was read from (`env:KEY` or `env:KEY from .env`), if it was."""
        if self.secret is None:
            return None
        match = re.match(r"env:([A-Za-z_][A-Za-z0-9_.\-]*)", self.secret.source)
        return match.group(1) if match else None


@dataclass
class Message:
    """One slot of the layout: a prompt kind's text, or the history (kind None)."""

    kind: str | None
    role: str
    pieces: list[Piece] = field(default_factory=list)
    #: The persona's own template for the kind (its Jinja source), where it has one.
    source: str | None = None
    #: The text the format writes for the kind as it is, instead of `pieces` (see `prepare`).
    written: str | None = None


def untyped(spec: Any) -> Any:
    return replace(spec, types=(), enum=None)


def usages(sources: list[str], names: set[str]) -> dict[str, str]:
    """How each name is used by the Jinja sources: `plain`, `condition`, or the first other use."""
    import jinja2
    from jinja2 import nodes

    environment = jinja2.Environment()
    found: dict[str, str] = {}
    for source in sources:
        try:
            tree = environment.parse(source)
        except jinja2.TemplateSyntaxError:
            continue
        stack: list[tuple[nodes.Node, list[nodes.Node]]] = [(tree, [])]
        while stack:
            node, parents = stack.pop()
            if isinstance(node, nodes.Name) and node.ctx == "load" and node.name in names:
                found[node.name] = _worst(found.get(node.name, "plain"), _usage(node, parents))
            for child in node.iter_child_nodes():
                stack.append((child, [*parents, node]))
    return found


def _usage(node: Any, parents: list[Any]) -> str:
    from jinja2 import nodes

    current = node
    for parent in reversed(parents):
        if isinstance(parent, nodes.Filter) and parent.node is current and parent.name in _KEEPING_FILTERS:
            current = parent
            continue
        if isinstance(parent, nodes.Output):
            return "plain"
        if isinstance(parent, (nodes.If, nodes.CondExpr)) and parent.test is current:
            return "condition"
        if isinstance(parent, nodes.Not) and parent.node is current:
            return "condition"
        if isinstance(parent, nodes.Filter):
            return f"the filter {parent.name!r}"
        if isinstance(parent, nodes.For):
            return "a loop"
        if isinstance(parent, nodes.Getattr):
            return f"its attribute {parent.attr!r}"
        if isinstance(parent, nodes.Getitem):
            return "an index"
        return f"a {type(parent).__name__.lower()} expression"
    return "plain"


def _worst(first: str, second: str) -> str:
    order = {"plain": 0, "condition": 1}
    return first if order.get(first, 2) >= order.get(second, 2) else second



def holes_of(profile: Any, kinds: Iterable[str], given: Mapping[str, Any], *, keep_defaults: bool,
             optional_stay: bool = False, allowed_secrets: bool = False) -> dict[str, Placeholder]:
    """The variables the prompts of `kinds` read that the caller gives later, with their specs.

    The question, declared inputs and variables nothing gives are holes; fields, the library's
    own variables and what `given` holds are not. A variable with a default is a hole (with its
    default) when `keep_defaults`, else its default is rendered in, except for an optional input
    whose default is empty when `optional_stay` (ADK's `{name?}` puts nothing where it is missing,
    which is what such a default renders; any other default is rendered in). A secret a prompt
    reads is a hole too: every one for a file, or with `allowed_secrets` only those the persona
    does not let into prompts (the others render in).
    """
    used: set[str] = set()
    for kind in kinds:
        used |= set(profile._plan(kind).used)
    secret = {
        name for name, item in profile.resolved.items()
        if item.secret and item.value is not None and not (allowed_secrets and name in profile.allow_secrets)
    } & used
    found: dict[str, Placeholder] = {}
    for name in dict.fromkeys([*profile.inputs, "question", *sorted(used)]):
        if name not in used or name in given or name in FILLED or (name in PROFILE_FIELDS and name not in secret):
            continue
        spec = profile.inputs.get(name)
        if name in secret:
            found[name] = Placeholder(name, None, secret=profile.resolved[name])
        elif name in profile.bound:
            if keep_defaults or (optional_stay and spec is not None and not spec.required
                                 and profile.bound[name] in ("", None)):
                found[name] = Placeholder(name, spec, profile.bound[name])
        elif name not in profile.values:
            found[name] = Placeholder(name, spec)
    return found


def sources_of(profile: Any, kinds: Iterable[str]) -> list[str]:
    """The Jinja sources the prompts of `kinds` render: their templates and their templated fields."""
    sources: list[str] = []
    fields: set[str] = set()
    for kind in kinds:
        plan = profile._plan(kind)
        sources.append(plan.compiled.source)
        fields |= {name for name, _ in plan.fields}
    for name in sorted(fields):
        value = profile.values.get(name)
        sources += [value] if isinstance(value, str) else [item for item in value or () if isinstance(item, str)]
    return sources


def marked(profile: Any, placeholders: Mapping[str, Placeholder]) -> Any:
    """A copy of `profile` whose secrets in `placeholders` render as markers, inputs untyped."""
    values = dict(profile.values)
    resolved = dict(profile.resolved)
    for name, placeholder in placeholders.items():
        if placeholder.secret is not None:
            values[name] = marker(name)
            resolved[name] = Resolved(values[name], "placeholder")
    return replace(
        profile,
        inputs=MappingProxyType({name: untyped(spec) for name, spec in profile.inputs.items()}),
        values=MappingProxyType(values),
        resolved=MappingProxyType(resolved),
        bound=MappingProxyType({key: value for key, value in profile.bound.items() if key not in placeholders}),
        plans={},
    )


def cut(text: str, refuse: Callable[[str], Exception]) -> list[Piece]:
    """Rendered text as literal pieces and placeholders; `refuse(reason)` makes the error for a changed marker."""
    pieces: list[Piece] = []
    position = 0
    for match in _MARK.finditer(text):
        if match.start() > position:
            pieces.append(text[position : match.start()])
        pieces.append(Var(match.group(1)))
        position = match.end()
    if position < len(text):
        pieces.append(text[position:])
    if any(isinstance(piece, str) and (_OPEN in piece or _CLOSE in piece) for piece in pieces):
        raise refuse("a template changes a placeholder's value (a filter such as upper)")
    return pieces


def render_layout(
    profile: Any,
    placeholders: Mapping[str, Placeholder],
    given: Mapping[str, Any],
    refuse: Callable[[str], Exception],
    *,
    written: Mapping[str, str] | None = None,
) -> list[Message]:
    """The profile's layout as messages of pieces (the history as a message without kind)."""
    rendered = marked(profile, placeholders)
    values = {**given, **{name: marker(name) for name, item in placeholders.items() if item.secret is None}}
    messages = []
    for slot in profile.layout:
        if slot.history:
            messages.append(Message(None, "history"))
            continue
        made = render_kind(profile, rendered, slot.kind, role_of(slot, profile.roles), values, refuse, written)
        if made.pieces or made.written is not None:
            messages.append(made)
    return messages


def render_kind(profile: Any, rendered: Any, kind: str, role: str, values: Mapping[str, Any],
                refuse: Callable[[str], Exception], written: Mapping[str, str] | None = None) -> Message:
    source = profile.templates[kind].source if kind in profile.templates else None
    if written and kind in written:
        return Message(kind, role, [], source, written[kind])
    return Message(kind, role, cut(rendered.format_prompt(kind, **values), refuse), source)
