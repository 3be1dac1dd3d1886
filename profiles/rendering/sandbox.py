"""The Jinja environment every template runs in: immutable sandbox, few globals, bounded work.

Templates come from persona authors and shared stores, so they are treated as hostile: they may
not mutate what they are given, call what the sandbox forbids, or build huge values. The bounds,
each a `#:`-documented constant below:

- nothing runs while compiling: Jinja folds constant expressions (and calls filters) at compile
  time and swallows their errors there, so `{{ 'a'|center(10**9) }}` would allocate before any
  check could stop it. Folding is switched off; every expression runs at render time, in budget.
- a template's source size, node count and nesting depth are capped before code is generated.
- every loop iteration and every call spends one step of a per-render budget, which also holds
  a deadline and a cap on the characters operators and filters may build.
- operators (`*`, `**`, `+`, `%`, `~`), `str.format` and the filters that take a width or count
  check the size of what they would build before building it.
- macros may recurse only so deep; `range` is capped; the globals are `range`, `dict` and
  `namespace` only.

A bound that trips raises `LimitExceeded` (a `SecurityError`); the renderer turns it into a
`RenderError` naming the template, its line and the bound.
"""

from __future__ import annotations

import operator
import os
import re
import time
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from string import Formatter
from types import BuiltinMethodType, MethodType
from typing import Any

from jinja2 import BaseLoader, StrictUndefined, TemplateSyntaxError, Undefined, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.optimizer import Optimizer
from jinja2.runtime import Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from jinja2.utils import Namespace
from jinja2.visitor import NodeTransformer

__all__ = [
    "MAX_BUILT_CHARS",
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
    "ProfilesSandbox",
    "RenderBudget",
    "make_environment",
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


_METHODS = (MethodType, BuiltinMethodType)


def render_seconds() -> float:
    """The time limit in force: `PROFILES_MAX_RENDER_SECONDS`, else `MAX_RENDER_SECONDS`."""
    return _env_number("PROFILES_MAX_RENDER_SECONDS", MAX_RENDER_SECONDS, float)  # type: ignore[no-any-return]


class LimitExceeded(SecurityError):
    """Raised inside a render when a bound trips; its message names the bound."""


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
                raise LimitExceeded(f"the render made over {MAX_STEPS} loop iterations and calls")
            if time.monotonic() > self.deadline:
                raise LimitExceeded("the render took longer than its time limit (PROFILES_MAX_RENDER_SECONDS)")

    def build(self, size: int) -> None:
        if size > MAX_VALUE_CHARS:
            raise LimitExceeded(f"an operation would build over {MAX_VALUE_CHARS} characters or items")
        self.chars -= size
        if self.chars < 0:
            raise LimitExceeded(f"the render built over {MAX_BUILT_CHARS} characters in all")
        self.step()


#: The budget of the render running in this thread (generators run in their caller's context).
current_budget: ContextVar[RenderBudget | None] = ContextVar("profiles_render_budget", default=None)

# used when a template is rendered outside `Renderer.render`, e.g. straight through Jinja
_FALLBACK_SECONDS = 10.0


def _budget() -> RenderBudget:
    budget = current_budget.get()
    # outside a render (a template rendered straight through Jinja) each operation gets its own
    return RenderBudget(_FALLBACK_SECONDS) if budget is None else budget


def _deep_size(value: Any, limit: int = MAX_VALUE_CHARS) -> int:
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


def _checked(value: Any) -> Any:
    """`value`, after making sure its text form stays within the value bound and shows no address."""
    return _finalize(value)


def _finalize(value: Any) -> Any:
    """What `{{ value }}` prints: text and numbers as is; never a function's address, never a huge text."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or isinstance(value, Undefined):
        return value  # an Undefined raises its own error (unsafe attribute, missing name) when printed
    if callable(value) or isinstance(value, type):
        raise SecurityError("a function or class cannot be printed; call it, or print a value")
    if isinstance(value, _CONTAINERS) and _deep_size(value) > MAX_VALUE_CHARS:
        raise LimitExceeded(f"a value would print as over {MAX_VALUE_CHARS} characters")
    return value


def _sentence(value: Any, end: str = ".") -> str:
    """End a text with exactly one full stop, so "Summarize." never renders "Summarize..".

    Any of `.`, `。`, `!`, `?`, `！`, `？` already ending the text counts as an ending.
    """
    text = "" if value is None else str(_checked(value)).rstrip()
    if not text:
        return ""
    if text[-1] in ".。!?！？":
        return text
    return text + end


# %-format specs: flags, width, precision; a width or precision can be `*`
_PERCENT_SPEC = re.compile(r"%[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_DIGITS = re.compile(r"\d+")


def _check_percent(fmt: str, args: Any) -> None:
    for width, precision in _PERCENT_SPEC.findall(fmt):
        for number in (width, precision):
            if number == "*":
                raise LimitExceeded("a '*' width in a %-format is not allowed; write the width out")
            if number and (len(number) > 7 or int(number) > MAX_VALUE_CHARS):
                raise LimitExceeded(f"a %-format width is over {MAX_VALUE_CHARS}")
    _budget().build(len(fmt) + _deep_size(args))


def _check_format(fmt: str, args: Any, kwargs: Any) -> None:
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
                raise LimitExceeded(f"a format width is over {MAX_VALUE_CHARS}")
    _budget().build(len(fmt) + _deep_size((args, kwargs)))


def _width(value: Any, what: str) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_VALUE_CHARS:
        raise LimitExceeded(f"{what} {value} is over the limit of {MAX_VALUE_CHARS}")
    return value


def _bounded_filters(filters: dict[str, Any]) -> dict[str, Any]:
    """Versions of the built-in filters that check the size of what they build before building it."""
    center, indent, wordwrap = filters["center"], filters["indent"], filters["wordwrap"]
    replace, join, batch, slice_ = filters["replace"], filters["join"], filters["batch"], filters["slice"]
    string, tojson, pprint, total = filters["string"], filters["tojson"], filters["pprint"], filters["sum"]
    truncate = filters["truncate"]

    def bounded_center(value: Any, width: int = 80) -> str:
        _width(width, "center width")
        _budget().build(max(_deep_size(value), width if isinstance(width, int) else 0))
        return center(value, width)

    def bounded_indent(value: Any, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
        text = str(_checked(value))
        prefix = width if isinstance(width, str) else " " * _width(width, "indent width")
        _budget().build(len(text) + (text.count("\n") + 1) * len(prefix))
        return indent(text, width, first, blank)

    def bounded_wordwrap(environment: Any, value: Any, width: int = 79, *args: Any, **kwargs: Any) -> str:
        text = str(_checked(value))
        _width(width, "wordwrap width")
        if not isinstance(width, int) or width < 1:
            raise LimitExceeded("wordwrap width must be a positive number")
        wrapstring = kwargs.get("wrapstring") or (args[1] if len(args) > 1 else None) or "\n"
        _budget().build(len(text) + (len(text) // width + 1) * len(str(wrapstring)))
        return wordwrap(environment, text, width, *args, **kwargs)

    def bounded_replace(eval_ctx: Any, value: Any, old: Any, new: Any, count: int | None = None) -> str:
        text, old_text, new_text = str(_checked(value)), str(_checked(old)), str(_checked(new))
        hits = (len(text) + 1) if not old_text else text.count(old_text)
        if count is not None and count >= 0:
            hits = min(hits, count)
        _budget().build(len(text) + hits * max(0, len(new_text) - len(old_text)))
        return replace(eval_ctx, text, old_text, new_text, count)

    def bounded_join(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> str:
        items = list(value)
        _budget().build(_deep_size(items) + len(items) * len(str(d)))
        return join(eval_ctx, items, d, attribute)

    def bounded_batch(value: Any, linecount: int, fill_with: Any = None) -> Iterator[list[Any]]:
        _width(linecount, "batch size")
        return batch(value, linecount, fill_with)

    def bounded_slice(value: Any, slices: int, fill_with: Any = None) -> Iterator[list[Any]]:
        _width(slices, "slice count")
        return slice_(value, slices, fill_with)

    def bounded_string(value: Any) -> str:
        return string(_checked(value))

    def bounded_tojson(eval_ctx: Any, value: Any, indent: int | None = None) -> Any:
        _checked(value)
        _width(indent, "tojson indent")
        return tojson(eval_ctx, value, indent)

    def bounded_pprint(value: Any) -> str:
        return pprint(_checked(value))

    def bounded_sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
        items = list(iterable)
        if not isinstance(start, (int, float)):
            _budget().build(_deep_size(items) * 2 + _deep_size(start))
        return total(environment, items, attribute, start)

    def bounded_truncate(env: Any, s: str, length: int = 255, *args: Any, **kwargs: Any) -> str:
        return truncate(env, str(_checked(s)), length, *args, **kwargs)

    def bounded_format(value: str, *args: Any, **kwargs: Any) -> str:
        if args and kwargs:
            raise LimitExceeded("format takes positional or keyword arguments, not both")
        _check_percent(str(value), kwargs or args)
        return str(value) % (kwargs or args)

    # keep Jinja's argument passing (environment / eval context) on the wrappers
    for wrapper, original in (
        (bounded_wordwrap, wordwrap),
        (bounded_replace, replace),
        (bounded_join, join),
        (bounded_tojson, tojson),
        (bounded_sum, total),
        (bounded_truncate, truncate),
    ):
        wrapper.jinja_pass_arg = original.jinja_pass_arg  # type: ignore[attr-defined]
    return {
        "center": bounded_center,
        "indent": bounded_indent,
        "wordwrap": bounded_wordwrap,
        "replace": bounded_replace,
        "join": bounded_join,
        "batch": bounded_batch,
        "slice": bounded_slice,
        "string": bounded_string,
        "tojson": bounded_tojson,
        "pprint": bounded_pprint,
        "sum": bounded_sum,
        "truncate": bounded_truncate,
        "format": bounded_format,
    }


def _budgeted(iterable: Any) -> Any:
    """A loop's items, each spending a step of the render's budget.

    A sized sequence is charged at once and looped over as is (a generator per loop would cost
    more than the loops of a prompt); anything else is counted item by item.
    """
    budget = current_budget.get() or RenderBudget(_FALLBACK_SECONDS)
    if iterable.__class__ in _SIZED:
        budget.steps -= len(iterable)
        if budget.steps <= 0:
            budget.step()
        return iterable
    return _counted(iterable, budget)


_SIZED = (list, tuple, str, dict, range)


def _counted(iterable: Any, budget: RenderBudget) -> Iterator[Any]:
    for item in iterable:
        budget.step()
        yield item


def _range(*args: int) -> range:
    for arg in args:
        if not isinstance(arg, int) or isinstance(arg, bool):
            raise LimitExceeded("range() takes whole numbers")
    rng = range(*args)
    if len(rng) > MAX_RANGE:
        raise LimitExceeded(f"range() would give over {MAX_RANGE} items")
    return rng


_LITERALS = (nodes.Const, nodes.List, nodes.Tuple, nodes.Dict, nodes.Pair)


def _is_literal(node: nodes.Node) -> bool:
    return isinstance(node, _LITERALS) and all(_is_literal(child) for child in node.iter_child_nodes())


#: Filters whose result is always bounded text, so printing it skips `_finalize`.
_TEXT_FILTERS = frozenset(
    {"center", "indent", "join", "replace", "sentence", "string", "tojson", "pprint", "truncate", "wordwrap", "format"}
    | {"trim", "upper", "lower", "title", "capitalize", "striptags", "urlencode", "escape", "e", "forceescape"}
)


class _LiteralOptimizer(Optimizer):
    """Folds literals only (`{"en": "English"}` built once); never operators, filters or calls."""

    def generic_visit(self, node: nodes.Node, *args: Any, **kwargs: Any) -> nodes.Node:
        if isinstance(node, (nodes.List, nodes.Tuple, nodes.Dict)) and _is_literal(node):
            return super().generic_visit(node, *args, **kwargs)  # type: ignore[no-any-return]
        return NodeTransformer.generic_visit(self, node, *args, **kwargs)


def _dict(*args: Any, **kwargs: Any) -> dict[Any, Any]:
    value = dict(*args, **kwargs)
    _budget().build(_deep_size(value))
    return value


def _namespace(*args: Any, **kwargs: Any) -> Namespace:
    value = Namespace(*args, **kwargs)
    _budget().build(_deep_size(value))
    return value


#: Methods of str, bytes and int whose result can be far bigger than their inputs.
_SIZED_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs", "replace", "join", "translate"}) | {
    "to_bytes"
}


def _check_method(method: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Refuse a call of a sized method whose result would pass the value bound; returns the args to use."""
    owner, name = method.__self__, method.__name__
    if not isinstance(owner, (str, bytes, int)):
        return args
    budget = _budget()
    first = args[0] if args else next(iter(kwargs.values()), None)
    if name in ("center", "ljust", "rjust", "zfill", "to_bytes"):
        budget.build(_width(first, f"{name} width") if isinstance(first, int) else 0)
    elif name == "expandtabs" and isinstance(owner, (str, bytes)):
        size = first if isinstance(first, int) else 8
        budget.build(len(owner) + owner.count("\t" if isinstance(owner, str) else b"\t") * abs(size))
    elif name == "replace" and len(args) >= 2 and isinstance(owner, (str, bytes)):
        old, new = args[0], args[1]
        hits = len(owner) + 1 if not old else owner.count(old)
        budget.build(len(owner) + hits * max(0, _size(new) - _size(old)))
    elif name == "join" and args and isinstance(owner, (str, bytes)):
        items = list(args[0])
        budget.build(_deep_size(items) + len(items) * len(owner))
        return (items, *args[1:])
    elif name == "translate" and isinstance(owner, str) and isinstance(first, dict):
        longest = max((len(value) for value in first.values() if isinstance(value, str)), default=1)
        budget.build(len(owner) * max(1, longest))
    return args


def _size(value: Any) -> int:
    try:
        return len(value)
    except TypeError:
        return 0


class _BoundedCodeGenerator(CodeGenerator):
    """Jinja's code generator, with no evaluation at compile time and `~` through a size check."""

    def __init__(self, environment: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(environment, *args, **kwargs)
        if self.optimizer is not None:
            self.optimizer = _LiteralOptimizer(environment)

    def _output_child_to_const(self, node: nodes.Expr, frame: Frame, finalize: Any) -> str:
        # folding runs filters and operators while compiling, outside any budget, and swallows
        # their errors; only literal text and constants are folded
        if isinstance(node, nodes.TemplateData):
            return str(node.data)
        if isinstance(node, nodes.Const) and isinstance(node.value, (str, int, float)):
            return finalize.const(node.value)  # type: ignore[no-any-return]
        raise nodes.Impossible()

    # Output into a buffer (a macro, a `{% set %}` or `{% filter %}` block, a call block) never
    # reaches the render's output cap, so it is charged to the characters a render may build.
    _buffered = False

    def visit_Output(self, node: nodes.Output, frame: Frame) -> None:
        self._buffered = frame.buffer is not None
        try:
            super().visit_Output(node, frame)
        finally:
            self._buffered = False

    def _output_const_repr(self, group: Iterable[Any]) -> str:
        text = super()._output_const_repr(group)
        return f"environment.charge({text})" if self._buffered else text

    def _output_child_pre(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        if frame.buffer is not None:
            self.write("environment.charge(")
        # a filter that returns text needs no finalize: it cannot print a container or a function
        if isinstance(node, nodes.Filter) and node.name in _TEXT_FILTERS and not frame.eval_ctx.volatile:
            self.write("str(")
        else:
            super()._output_child_pre(node, frame, finalize)

    def _output_child_post(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        if isinstance(node, nodes.Filter) and node.name in _TEXT_FILTERS and not frame.eval_ctx.volatile:
            self.write(")")
        else:
            super()._output_child_post(node, frame, finalize)
        if frame.buffer is not None:
            self.write(")")

    def visit_List(self, node: nodes.List, frame: Frame) -> None:
        self._checked_container(node, frame, super().visit_List)

    def visit_Tuple(self, node: nodes.Tuple, frame: Frame) -> None:
        self._checked_container(node, frame, super().visit_Tuple)

    def visit_Dict(self, node: nodes.Dict, frame: Frame) -> None:
        self._checked_container(node, frame, super().visit_Dict)

    def _checked_container(self, node: Any, frame: Frame, visit: Any) -> None:
        # `[a, a, a]` of a big `a`, nested a few times, prints as a huge text: measured when built
        if getattr(node, "ctx", "load") != "load" or _is_literal(node):
            visit(node, frame)
            return
        self.write("environment.container(")
        visit(node, frame)
        self.write(")")

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


def _tree_size(root: nodes.Node) -> tuple[int, int]:
    """Node count and nesting depth of a syntax tree, walked without recursion."""
    count = 0
    deepest = 0
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_NESTING:
                break
        if count > MAX_NODES:
            break
        stack.extend((child, depth + 1) for child in node.iter_child_nodes())
    return count, deepest


class ProfilesSandbox(ImmutableSandboxedEnvironment):
    """An immutable sandbox whose templates cannot build huge values or run without end.

    The compile step is guarded too: sources, trees and nesting are capped after parsing and
    before code is generated, and nothing is evaluated while compiling.
    """

    code_generator_class = _BoundedCodeGenerator
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        label = name or "<inline>"
        if len(source) > MAX_SOURCE_CHARS:
            raise TemplateSyntaxError(
                f"template is {len(source)} characters, over the limit of {MAX_SOURCE_CHARS}", 1, name, filename
            )
        try:
            tree = super()._parse(source, name, filename)
        except RecursionError:
            raise TemplateSyntaxError(f"template {label!r} is nested too deeply to parse", 1, name, filename) from None
        count, depth = _tree_size(tree)
        if count > MAX_NODES:
            raise TemplateSyntaxError(f"template has over {MAX_NODES} syntax nodes; split it", 1, name, filename)
        if depth > MAX_NESTING:
            raise TemplateSyntaxError(
                f"template is nested over {MAX_NESTING} levels deep; flatten it", 1, name, filename
            )
        for loop in tree.find_all(nodes.For):
            loop.iter = nodes.Filter(loop.iter, "_budgeted", [], [], None, None, lineno=loop.lineno)
        return tree

    def _compile(self, source: str, filename: str) -> Any:
        try:
            return super()._compile(source, filename)
        except (SyntaxError, RecursionError, MemoryError, ValueError) as exc:
            raise TemplateSyntaxError(
                f"template is too complex to compile ({type(exc).__name__}); simplify it", 1, filename, filename
            ) from None

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        # runs at every call a template makes: the budget's step is inlined
        budget = current_budget.get() or RenderBudget(_FALLBACK_SECONDS)
        budget.steps -= 1
        if not budget.steps & 0xFF or budget.steps <= 0:
            budget.steps += 1
            budget.step()
        if not __self.is_safe_callable(__obj):
            raise SecurityError(f"{__obj!r} is not safely callable")
        if __obj.__class__ is BuiltinMethodType and __obj.__name__ in _SIZED_METHODS:
            args = _check_method(__obj, args, kwargs)
        if __obj.__class__ is not Macro:
            return __context.call(__obj, *args, **kwargs)
        if budget.depth >= MAX_MACRO_DEPTH:
            raise LimitExceeded(f"macros call each other over {MAX_MACRO_DEPTH} levels deep")
        budget.depth += 1
        try:
            return __context.call(__obj, *args, **kwargs)
        finally:
            budget.depth -= 1

    def wrap_str_format(self, value: Any) -> Any:
        # runs at every attribute access: the cheap test first, as Jinja's own does
        if not isinstance(value, _METHODS) or value.__name__ not in ("format", "format_map"):
            return None
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        fmt = value.__self__

        def checked(*args: Any, **kwargs: Any) -> str:
            _check_format(fmt, args, kwargs)
            return wrapped(*args, **kwargs)  # type: ignore[no-any-return]

        return checked

    def charge(self, text: str) -> str:
        """Text written into a buffer (macro, block), charged to the characters a render may build."""
        budget = current_budget.get() or RenderBudget(_FALLBACK_SECONDS)
        budget.chars -= len(text)
        if budget.chars < 0:
            raise LimitExceeded(f"the render built over {MAX_BUILT_CHARS} characters in all")
        return text

    def container(self, value: Any) -> Any:
        """A list, tuple or dict a template built, refused if it would print too big."""
        _budget().build(_deep_size(value))
        return value

    def concat(self, items: Iterable[Any]) -> str:
        """The `~` operator: every part as text, refused before joining if the result is too big."""
        parts = [item if type(item) is str else str(_checked(item)) for item in items]
        _budget().build(sum(map(len, parts)))
        return "".join(parts)

    def call_binop(self, context: Any, operator_name: str, left: Any, right: Any) -> Any:
        budget = _budget()
        if operator_name == "**":
            if isinstance(right, (int, float)) and abs(right) > MAX_EXPONENT:
                raise LimitExceeded(f"exponent {right} is over the limit of {MAX_EXPONENT}")
            if isinstance(left, int) and isinstance(right, int) and left.bit_length() * max(right, 0) > MAX_INT_BITS:
                raise LimitExceeded(f"a power would build a number over {MAX_INT_BITS} bits")
            budget.step()
            return operator.pow(left, right)
        if operator_name == "%":
            if isinstance(left, str):
                _check_percent(left, right)
            budget.step()
            return operator.mod(left, right)
        if operator_name == "*":
            for seq, count in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(count, int):
                    budget.build(_deep_size(seq) * max(count, 0))
            if isinstance(left, int) and isinstance(right, int):
                if left.bit_length() + right.bit_length() > MAX_INT_BITS:
                    raise LimitExceeded(f"a product would build a number over {MAX_INT_BITS} bits")
            budget.step()
            return operator.mul(left, right)
        if isinstance(left, (str, list, tuple)):
            budget.build(_deep_size(left) + _deep_size(right))
        else:
            budget.step()
        return operator.add(left, right)


def make_environment(loader: BaseLoader | None = None) -> ProfilesSandbox:
    """Build the sandbox with only the globals and filters prompts need."""
    env = ProfilesSandbox(
        loader=loader,
        undefined=StrictUndefined,  # a misspelt or unsafe attribute fails loudly instead of rendering empty
        autoescape=False,  # prompts are plain text, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        auto_reload=False,  # compiled once; files are not watched
        cache_size=400,
        finalize=_finalize,
    )
    # lipsum and cycler burn CPU or leak object addresses; joiner is never needed in a prompt
    env.globals = {"range": _range, "dict": _dict, "namespace": _namespace}
    env.filters.update(_bounded_filters(env.filters))
    env.filters["sentence"] = _sentence
    env.filters["_budgeted"] = _budgeted
    return env
