"""The bounds every render runs within, and the budget one render spends.

Each bound is a `#:`-documented constant. A render gets a `RenderBudget` (steps, characters built,
a deadline, macro depth); operators, filters and calls spend it, and a bound that trips raises
`LimitExceeded` (a `SecurityError`), which the renderer turns into a `RenderError` naming the
template, its line and the bound. The size checks here measure a value before anything is built
from it, so a huge text is refused before it exists.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from contextvars import ContextVar
from string import Formatter
from typing import Any

from jinja2 import Undefined
from jinja2.sandbox import SecurityError
from jinja2.utils import Namespace

__all__ = [
    "MAX_BUILT_CHARS",
    "MAX_EXPONENT",
    "MAX_INT_BITS",
    "MAX_MACRO_DEPTH",
    "MAX_NESTING",
    "MAX_NODES",
    "MAX_OUTPUT_CHARS",
    "MAX_RANGE",
    "MAX_RENDER_SECONDS",
    "MAX_SOURCE_CHARS",
    "MAX_STEPS",
    "MAX_VALUE_CHARS",
    "LimitExceeded",
    "RenderBudget",
    "active_budget",
    "check_format",
    "check_percent",
    "check_text_argument",
    "check_width",
    "checked",
    "current_budget",
    "deep_size",
    "finalize",
    "output_limit",
    "render_seconds",
]


def _env_number(name: str, default: float, kind: type = int) -> Any:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        return default
    return value if value > 0 else default


#: Longest prompt a render may produce, in characters; `PROFILES_MAX_OUTPUT_CHARS` changes it.
MAX_OUTPUT_CHARS = 200_000

#: Largest string or sequence a single operator or filter may build, in items or characters.
MAX_VALUE_CHARS = 1_000_000

#: Characters all operators and filters of one render may build together.
MAX_BUILT_CHARS = 20_000_000

#: Largest exponent `**` accepts; bigger ones cost unbounded time.
MAX_EXPONENT = 1_000

#: Largest integer an operator may build, in bits.
MAX_INT_BITS = 100_000

#: Loop iterations plus calls one render may make.
MAX_STEPS = 1_000_000

#: Wall-clock seconds one render may take; `PROFILES_MAX_RENDER_SECONDS` changes it.
MAX_RENDER_SECONDS = 2.0

#: How deep macros may call themselves or each other.
MAX_MACRO_DEPTH = 64

#: Most items `range` gives.
MAX_RANGE = 100_000

#: Longest template source compiled, in characters; Jinja lexes about 100,000 tokens a second.
MAX_SOURCE_CHARS = 100_000

#: Most syntax nodes a template may have.
MAX_NODES = 50_000

#: Deepest nesting of a template's syntax tree.
MAX_NESTING = 100


def output_limit() -> int:
    """The output cap in force: `PROFILES_MAX_OUTPUT_CHARS`, else `MAX_OUTPUT_CHARS`."""
    return _env_number("PROFILES_MAX_OUTPUT_CHARS", MAX_OUTPUT_CHARS)


def render_seconds() -> float:
    """The time limit in force: `PROFILES_MAX_RENDER_SECONDS`, else `MAX_RENDER_SECONDS`."""
    return _env_number("PROFILES_MAX_RENDER_SECONDS", MAX_RENDER_SECONDS, float)  # type: ignore[no-any-return]


class LimitExceeded(SecurityError):
    """Raised inside a render when a bound trips; its message names the bound and `bound` its setting."""

    def __init__(self, message: str, bound: str | None = None) -> None:
        super().__init__(f"{message} ({bound})" if bound else message)
        #: The setting that sets the bound: an environment variable or a constant of this module.
        self.bound = bound


class RenderBudget:
    """The work one render may still do: steps, characters built, a deadline, macro depth."""

    __slots__ = ("chars", "deadline", "depth", "steps")

    def __init__(self, seconds: float | None = None) -> None:
        seconds = render_seconds() if seconds is None else seconds
        self.steps = MAX_STEPS
        self.chars = MAX_BUILT_CHARS
        self.deadline = time.monotonic() + seconds
        self.depth = 0

    def step(self) -> None:
        self.steps -= 1
        if self.steps & 0xFF == 0 or self.steps <= 0:  # the clock costs more than a step: read it now and then
            if self.steps <= 0:
                raise LimitExceeded(f"the render made over {MAX_STEPS} loop iterations and calls", "MAX_STEPS")
            if time.monotonic() > self.deadline:
                raise LimitExceeded("the render took longer than its time limit", "PROFILES_MAX_RENDER_SECONDS")

    def build(self, size: int) -> None:
        if size > MAX_VALUE_CHARS:
            raise LimitExceeded(
                f"an operation would build over {MAX_VALUE_CHARS} characters or items", "MAX_VALUE_CHARS"
            )
        self.chars -= size
        if self.chars < 0:
            raise LimitExceeded(f"the render built over {MAX_BUILT_CHARS} characters in all", "MAX_BUILT_CHARS")
        self.step()


#: The budget of the render running in this thread (generators run in their caller's context).
current_budget: ContextVar[RenderBudget | None] = ContextVar("profiles_render_budget", default=None)

# used when a template is rendered outside `Renderer.render`, e.g. straight through Jinja
FALLBACK_SECONDS = 10.0


def active_budget() -> RenderBudget:
    """The budget of the render running now, or a fresh one for an operation outside any render."""
    budget = current_budget.get()
    # outside a render (a template rendered straight through Jinja) each operation gets its own
    return RenderBudget(FALLBACK_SECONDS) if budget is None else budget


def deep_size(value: Any, limit: int = MAX_VALUE_CHARS) -> int:
    """Characters and items in `value`, counting shared parts each time; stops past `limit`.

    Lists can share items (`[a] * 1000` holds `a` a thousand times), so printing a small-looking
    value can build a huge text; this walk stops as soon as the count passes the limit.
    """
    if isinstance(value, str):
        return len(value)
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            total += len(item) + 1
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            total += len(item) + 1
            stack.extend(item)
        elif isinstance(item, Namespace):
            attrs = item._Namespace__attrs  # type: ignore[attr-defined]
            total += len(attrs) + 1
            stack.extend(attrs.values())
        elif isinstance(item, int) and not isinstance(item, bool):
            total += item.bit_length() // 3 + 1
        elif (callable(item) or isinstance(item, type)) and not isinstance(item, Undefined):
            raise SecurityError("a function or class cannot be printed; call it, or print a value")
        else:
            total += 8
        if total > limit:
            return limit + 1
    return total


# only containers can print as more than they hold; text and numbers pass at the cost of one check
_CONTAINERS = (list, tuple, dict, set, frozenset)


def checked(value: Any) -> Any:
    """`value`, after making sure its text form stays within the value bound and shows no address."""
    return finalize(value)


def finalize(value: Any) -> Any:
    """What `{{ value }}` prints: text and numbers as is; never a function's address, never a huge text."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or isinstance(value, Undefined):
        return value  # an Undefined raises its own error (unsafe attribute, missing name) when printed
    if callable(value) or isinstance(value, type):
        raise SecurityError("a function or class cannot be printed; call it, or print a value")
    if isinstance(value, _CONTAINERS):
        if deep_size(value) > MAX_VALUE_CHARS:
            raise LimitExceeded(f"a value would print as over {MAX_VALUE_CHARS} characters", "MAX_VALUE_CHARS")
        _refuse_addresses_inside(value)  # a list prints its items' repr: `[<object object at 0x…>]`
        return value
    if isinstance(value, Iterator) or _shows_address(kind):
        _refuse_address(kind)
    return value


def _refuse_address(kind: type) -> None:
    # `{{ items|map('upper') }}` is a generator; its text form is `<generator object … at 0x…>`
    raise SecurityError(
        f"a {kind.__name__} cannot be printed (its text form is a memory address); "
        "print its items, e.g. with |list or |join"
    )


def _refuse_addresses_inside(value: Any) -> None:
    """Refuse a container holding, at any depth, something whose text form is a memory address.

    Called once the container's size is known to be within the value bound, so the walk is too.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is int or kind is float or kind is bool or item is None:
            continue
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        elif isinstance(item, Iterator) or _shows_address(kind):
            _refuse_address(kind)


def check_text_argument(value: Any) -> Any:
    """`value`, refused when a filter that turns it into text would show a memory address or a function.

    Filters such as `trim`, `upper`, `title` or `escape` call `str()` on what they get, so the
    check `{{ … }}` makes on what it prints never sees the object; this is that check, made first.
    """
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None or isinstance(value, Undefined):
        return value
    return finalize(value)


def _shows_address(kind: type) -> bool:
    """Whether values of `kind` print as Python's default `<… object at 0x…>`."""
    return kind.__str__ is object.__str__ and kind.__repr__ is object.__repr__


# %-format specs: flags, width, precision; a width or precision can be `*`
_PERCENT_SPEC = re.compile(r"%[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_DIGITS = re.compile(r"\d+")


def check_percent(fmt: str, args: Any) -> None:
    """Refuse a %-format whose widths or result would pass the value bound."""
    for width, precision in _PERCENT_SPEC.findall(fmt):
        for number in (width, precision):
            if number == "*":
                raise LimitExceeded("a '*' width in a %-format is not allowed; write the width out")
            if number and (len(number) > 7 or int(number) > MAX_VALUE_CHARS):
                raise LimitExceeded(f"a %-format width is over {MAX_VALUE_CHARS}", "MAX_VALUE_CHARS")
    active_budget().build(len(fmt) + deep_size(args))


def check_format(fmt: str, args: Any, kwargs: Any) -> None:
    """Refuse a `str.format` whose widths or result would pass the value bound."""
    try:
        fields = list(Formatter().parse(fmt))
    except ValueError:
        return  # str.format raises the same error itself
    for _text, _field, spec, _conversion in fields:
        if not spec:
            continue
        if "{" in spec:
            raise LimitExceeded("a nested field in a format spec is not allowed; write the width out")
        for number in _DIGITS.findall(spec):
            if len(number) > 7 or int(number) > MAX_VALUE_CHARS:
                raise LimitExceeded(f"a format width is over {MAX_VALUE_CHARS}", "MAX_VALUE_CHARS")
    active_budget().build(len(fmt) + deep_size((args, kwargs)))


def check_width(value: Any, what: str) -> Any:
    """`value` when it is no width or count over `MAX_VALUE_CHARS`; `what` names it in the error."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_VALUE_CHARS:
        raise LimitExceeded(f"{what} {value} is over the limit of {MAX_VALUE_CHARS}", "MAX_VALUE_CHARS")
    return value


