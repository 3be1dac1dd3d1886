"""Filters, globals and methods that check the size of what they would build before building it.

Jinja's `center`, `indent`, `replace`, `join`, `format`, … and Python's `str.center`, `str.join`,
… can turn a small input into a huge text; each wrapper here measures first and spends the
render's budget. The globals are `range` (capped), `dict` and `namespace` only: `lipsum` and
`cycler` burn CPU or leak object addresses.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jinja2.utils import Namespace

from .budget import (
    FALLBACK_SECONDS,
    MAX_RANGE,
    LimitExceeded,
    RenderBudget,
    active_budget,
    check_percent,
    check_width,
    checked,
    current_budget,
    deep_size,
)

__all__ = ["SIZED_METHODS", "bounded_filters", "budgeted", "check_method", "prompt_globals", "sentence"]


def sentence(value: Any, end: str = ".") -> str:
    """End a text with exactly one full stop, so "Summarize." never renders "Summarize..".

    Any of `.`, `。`, `!`, `?`, `！`, `？` already ending the text counts as an ending.
    """
    text = "" if value is None else str(checked(value)).rstrip()
    if not text:
        return ""
    if text[-1] in ".。!?！？":
        return text
    return text + end


def bounded_filters(filters: dict[str, Any]) -> dict[str, Any]:
    """Versions of the built-in filters that check the size of what they build before building it."""
    center, indent, wordwrap = filters["center"], filters["indent"], filters["wordwrap"]
    replace, join, batch, slice_ = filters["replace"], filters["join"], filters["batch"], filters["slice"]
    string, tojson, pprint, total = filters["string"], filters["tojson"], filters["pprint"], filters["sum"]
    truncate = filters["truncate"]

    def bounded_center(value: Any, width: int = 80) -> str:
        check_width(width, "center width")
        active_budget().build(max(deep_size(value), width if isinstance(width, int) else 0))
        return center(value, width)

    def bounded_indent(value: Any, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
        text = str(checked(value))
        prefix = width if isinstance(width, str) else " " * check_width(width, "indent width")
        active_budget().build(len(text) + (text.count("\n") + 1) * len(prefix))
        return indent(text, width, first, blank)

    def bounded_wordwrap(environment: Any, value: Any, width: int = 79, *args: Any, **kwargs: Any) -> str:
        text = str(checked(value))
        check_width(width, "wordwrap width")
        if not isinstance(width, int) or width < 1:
            raise LimitExceeded("wordwrap width must be a positive number")
        wrapstring = kwargs.get("wrapstring") or (args[1] if len(args) > 1 else None) or "\n"
        active_budget().build(len(text) + (len(text) // width + 1) * len(str(wrapstring)))
        return wordwrap(environment, text, width, *args, **kwargs)

    def bounded_replace(eval_ctx: Any, value: Any, old: Any, new: Any, count: int | None = None) -> str:
        text, old_text, new_text = str(checked(value)), str(checked(old)), str(checked(new))
        hits = (len(text) + 1) if not old_text else text.count(old_text)
        if count is not None and count >= 0:
            hits = min(hits, count)
        active_budget().build(len(text) + hits * max(0, len(new_text) - len(old_text)))
        return replace(eval_ctx, text, old_text, new_text, count)

    def bounded_join(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> str:
        items = list(value)
        active_budget().build(deep_size(items) + len(items) * len(str(d)))
        return join(eval_ctx, items, d, attribute)

    def bounded_batch(value: Any, linecount: int, fill_with: Any = None) -> Iterator[list[Any]]:
        check_width(linecount, "batch size")
        return batch(value, linecount, fill_with)

    def bounded_slice(value: Any, slices: int, fill_with: Any = None) -> Iterator[list[Any]]:
        check_width(slices, "slice count")
        return slice_(value, slices, fill_with)

    def bounded_string(value: Any) -> str:
        return string(checked(value))

    def bounded_tojson(eval_ctx: Any, value: Any, indent: int | None = None) -> Any:
        checked(value)
        check_width(indent, "tojson indent")
        return tojson(eval_ctx, value, indent)

    def bounded_pprint(value: Any) -> str:
        return pprint(checked(value))

    def bounded_sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
        items = list(iterable)
        if not isinstance(start, (int, float)):
            active_budget().build(deep_size(items) * 2 + deep_size(start))
        return total(environment, items, attribute, start)

    def bounded_truncate(env: Any, s: str, length: int = 255, *args: Any, **kwargs: Any) -> str:
        return truncate(env, str(checked(s)), length, *args, **kwargs)

    def bounded_format(value: str, *args: Any, **kwargs: Any) -> str:
        if args and kwargs:
            raise LimitExceeded("format takes positional or keyword arguments, not both")
        check_percent(str(value), kwargs or args)
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


def budgeted(iterable: Any) -> Any:
    """A loop's items, each spending a step of the render's budget.

    A sized sequence is charged at once and looped over as is (a generator per loop would cost
    more than the loops of a prompt); anything else is counted item by item.
    """
    budget = current_budget.get() or RenderBudget(FALLBACK_SECONDS)
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


def _dict(*args: Any, **kwargs: Any) -> dict[Any, Any]:
    value = dict(*args, **kwargs)
    active_budget().build(deep_size(value))
    return value


def _namespace(*args: Any, **kwargs: Any) -> Namespace:
    value = Namespace(*args, **kwargs)
    active_budget().build(deep_size(value))
    return value


def prompt_globals() -> dict[str, Any]:
    """The only globals templates get: a capped `range`, and `dict` and `namespace` that spend the budget."""
    return {"range": _range, "dict": _dict, "namespace": _namespace}


#: Methods of str, bytes and int whose result can be far bigger than their inputs.
SIZED_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs", "replace", "join", "translate"}) | {
    "to_bytes"
}


def check_method(method: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Refuse a call of a sized method whose result would pass the value bound; returns the args to use."""
    owner, name = method.__self__, method.__name__
    if not isinstance(owner, (str, bytes, int)):
        return args
    budget = active_budget()
    first = args[0] if args else next(iter(kwargs.values()), None)
    if name in ("center", "ljust", "rjust", "zfill", "to_bytes"):
        budget.build(check_width(first, f"{name} width") if isinstance(first, int) else 0)
    elif name == "expandtabs" and isinstance(owner, (str, bytes)):
        size = first if isinstance(first, int) else 8
        budget.build(len(owner) + owner.count("\t" if isinstance(owner, str) else b"\t") * abs(size))
    elif name == "replace" and len(args) >= 2 and isinstance(owner, (str, bytes)):
        old, new = args[0], args[1]
        hits = len(owner) + 1 if not old else owner.count(old)
        budget.build(len(owner) + hits * max(0, _size(new) - _size(old)))
    elif name == "join" and args and isinstance(owner, (str, bytes)):
        items = list(args[0])
        budget.build(deep_size(items) + len(items) * len(owner))
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
