"""Filters, globals and methods that check the size of what they would build before building it.

Jinja's `center`, `indent`, `replace`, `join`, `format`, … and Python's `str.center`, `str.join`,
… can turn a small input into a huge text; each wrapper here measures first and spends the
render's budget. The globals are `range` (capped), `dict` and `namespace` only: `lipsum` and
`cycler` burn CPU or leak object addresses.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from functools import update_wrapper
from typing import Any

from jinja2 import Undefined
from jinja2.utils import Namespace, _PassArg

from .budget import (
    FALLBACK_SECONDS,
    MAX_RANGE,
    MAX_VALUE_CHARS,
    LimitExceeded,
    RenderBudget,
    active_budget,
    check_percent,
    check_text_argument,
    check_width,
    checked,
    current_budget,
    deep_size,
)

__all__ = [
    "SIZED_METHODS",
    "bounded_filters",
    "budgeted",
    "check_method",
    "json_size",
    "prompt_globals",
    "sentence",
    "sized",
    "stepped",
    "wraps_routine",
]


def sentence(value: Any, end: str = ".") -> str:
    """End a text with exactly one full stop, so "Summarize." never renders "Summarize..".

    Any of `.`, `。`, `!`, `?`, `！`, `？`, `…` already ending the text counts as an ending, also
    when closing quotes or brackets follow it (`Say "hi."`, `说“你好。”`, `(see above.)`).
    """
    text = "" if value is None else str(checked(value)).rstrip()
    if not text:
        return ""
    stripped = text.rstrip(_CLOSERS)
    if stripped and stripped[-1] in _ENDINGS:
        return text
    return text + end


#: What ends a sentence, and what may close after its ending.
_ENDINGS = frozenset(".。!?！？…")
_CLOSERS = "\"'”’»)）]】」』"


def bounded_filters(filters: dict[str, Any]) -> dict[str, Any]:
    """Versions of the built-in filters that check the size of what they build before building it.

    Each wrapper takes the arguments Jinja's filter takes, in the same order and with the same
    defaults, passes Jinja's first argument (environment, eval context) through when the filter
    asks for one, and hands the original values on untouched, so text marked safe stays safe and
    a filter's own errors stay its own. Only the measuring is added.
    """
    center, indent, wordwrap = filters["center"], filters["indent"], filters["wordwrap"]
    replace, join, batch, slice_ = filters["replace"], filters["join"], filters["batch"], filters["slice"]
    string, tojson, pprint, total = filters["string"], filters["tojson"], filters["pprint"], filters["sum"]
    truncate, format_, trim = filters["truncate"], filters["format"], filters["trim"]

    def bounded_trim(value: Any, chars: str | None = None) -> str:
        # Jinja's trim is `str(value).strip(chars)`; the bundled templates trim every rule and
        # section they print, so text takes no extra call (the other text filters are wrapped)
        if type(value) is str:
            return value.strip(chars)
        check_text_argument(value)
        return trim(value, chars)  # type: ignore[no-any-return]

    def bounded_center(value: Any, width: int = 80) -> str:
        check_width(width, "center width")
        active_budget().build(max(deep_size(value), width if isinstance(width, int) else 0))
        return center(value, width)  # type: ignore[no-any-return]

    def bounded_indent(s: Any, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
        text = s if isinstance(s, str) else str(checked(s))
        if isinstance(width, str):
            prefix = len(width)
        else:
            prefix = check_width(width, "indent width") if isinstance(width, int) else 0
        active_budget().build(len(text) + (text.count("\n") + 1) * max(prefix, 0))
        return indent(s, width, first, blank)  # type: ignore[no-any-return]

    def bounded_wordwrap(
        environment: Any,
        s: Any,
        width: int = 79,
        break_long_words: bool = True,
        wrapstring: str | None = None,
        break_on_hyphens: bool = True,
    ) -> str:
        text = s if isinstance(s, str) else str(checked(s))
        check_width(width, "wordwrap width")
        joint = environment.newline_sequence if wrapstring is None else wrapstring
        if isinstance(width, int) and width > 0:
            active_budget().build(len(text) + (len(text) // width + 1) * len(str(joint)))
        return wordwrap(environment, s, width, break_long_words, wrapstring, break_on_hyphens)  # type: ignore[no-any-return]

    def bounded_replace(eval_ctx: Any, s: Any, old: Any, new: Any, count: int | None = None) -> str:
        text, old_text, new_text = str(checked(s)), str(checked(old)), str(checked(new))
        hits = (len(text) + 1) if not old_text else text.count(old_text)
        if isinstance(count, int) and count >= 0:
            hits = min(hits, count)
        active_budget().build(len(text) + hits * max(0, len(new_text) - len(old_text)))
        return replace(eval_ctx, s, old, new, count)  # type: ignore[no-any-return]

    def bounded_join(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> str:
        items = list(value)  # a generator is fine to join (`items|map('upper')|join`); its items are checked
        active_budget().build(deep_size(items) + len(items) * len(str(d)))
        if attribute is None:
            check_text_argument(items)
        check_text_argument(d)
        return join(eval_ctx, items, d, attribute)  # type: ignore[no-any-return]

    def bounded_batch(value: Any, linecount: int, fill_with: Any = None) -> Iterator[list[Any]]:
        check_width(linecount, "batch size")
        return batch(value, linecount, fill_with)  # type: ignore[no-any-return]

    def bounded_slice(eval_ctx: Any, value: Any, slices: int, fill_with: Any = None) -> Iterator[list[Any]]:
        check_width(slices, "slice count")
        if isinstance(slices, int):
            active_budget().build(slices)
        return slice_(eval_ctx, value, slices, fill_with)  # type: ignore[no-any-return]

    def bounded_string(s: Any) -> str:
        return string(checked(s))  # type: ignore[no-any-return]

    def bounded_tojson(eval_ctx: Any, value: Any, indent: int | None = None) -> Any:
        check_width(indent, "tojson indent")
        active_budget().build(json_size(value, indent))
        return tojson(eval_ctx, value, indent)

    def bounded_pprint(value: Any) -> str:
        return pprint(checked(value))  # type: ignore[no-any-return]

    def bounded_sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
        items = list(iterable)
        if not isinstance(start, (int, float)):
            active_budget().build(deep_size(items) * 2 + deep_size(start))
        return total(environment, items, attribute, start)

    def bounded_truncate(
        env: Any, s: Any, length: int = 255, killwords: bool = False, end: str = "...", leeway: int | None = None
    ) -> str:
        checked(s)
        return truncate(env, s, length, killwords, end, leeway)  # type: ignore[no-any-return]

    def bounded_format(value: Any, *args: Any, **kwargs: Any) -> str:
        if not (args and kwargs):  # both at once: Jinja's own error
            check_percent(str(value), kwargs or args)
        return format_(value, *args, **kwargs)  # type: ignore[no-any-return]

    # Jinja passes the environment or eval context to a filter that asks for it, as the originals do
    for wrapper, original in (
        (bounded_wordwrap, wordwrap),
        (bounded_replace, replace),
        (bounded_join, join),
        (bounded_slice, slice_),
        (bounded_tojson, tojson),
        (bounded_sum, total),
        (bounded_truncate, truncate),
    ):
        wrapper.jinja_pass_arg = original.jinja_pass_arg  # type: ignore[attr-defined]
    bounded = {
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
        "trim": bounded_trim,
    }
    for name in _TEXT_FILTERS:
        if name in filters:
            bounded[name] = _text_checked(bounded.get(name, filters[name]))
    return bounded


#: Filters that turn their value (or, for format, its arguments) into text with `str()`, where
#: `{{ … }}`'s own check never sees an object whose text is a memory address (join checks its
#: items, and trim its value, themselves).
_TEXT_FILTERS = (
    "capitalize", "center", "e", "escape", "forceescape", "format", "indent", "lower", "replace",
    "safe", "striptags", "title", "truncate", "upper", "urlencode", "wordcount", "wordwrap",
)  # fmt: skip


def _text_checked(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` (a filter) refusing, before it runs, a value or argument that would print an address.

    Text, the usual value, passes with one type test: bundled templates trim every rule they print.
    """
    if _PassArg.from_obj(function) is not None:

        def passing(first: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
            if type(value) is not str:
                check_text_argument(value)
            if args or kwargs:
                _check_arguments(args, kwargs)
            return function(first, value, *args, **kwargs)

        return _like(passing, function)

    def wrapper(value: Any, *args: Any, **kwargs: Any) -> Any:
        if type(value) is not str:
            check_text_argument(value)
        if args or kwargs:
            _check_arguments(args, kwargs)
        return function(value, *args, **kwargs)

    return _like(wrapper, function)


def _check_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for value in args:
        check_text_argument(value)
    for value in kwargs.values():
        check_text_argument(value)


def sized(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` (a registered filter or global) spending a step per call, its result measured.

    The result is checked after the function returns, against the same bounds as a built-in
    filter's (one value, all values built in the render); a function that can build a huge value
    from small arguments should check its arguments itself. Jinja's context, eval context or
    environment argument is passed through when the function asks for one.
    """

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        budget = current_budget.get() or RenderBudget(FALLBACK_SECONDS)
        if type(result) is str:  # the usual case, with `build`'s checks inlined
            size = len(result)
            if size > MAX_VALUE_CHARS:
                budget.build(size)  # raises, naming the bound
            budget.chars -= size
            budget.steps -= 1
            if budget.chars < 0 or budget.steps <= 0 or not budget.steps & 0xFF:
                budget.steps += 1
                budget.build(0)
        elif isinstance(result, (str, *_MEASURED)):
            budget.build(_result_size(result))
        else:
            budget.step()
        return result

    return _like(wrapper, function)


def stepped(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` (a registered test) spending a step of the render's budget per call."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        active_budget().step()
        return function(*args, **kwargs)

    return _like(wrapper, function)


def wraps_routine(value: Any) -> bool:
    """Whether a registered global is a function to wrap (`sized`), not a value, a class or an object.

    Objects with methods (a `dict` with `fromkeys`, say) keep their attributes by staying unwrapped.
    """
    return inspect.isroutine(value)


_MEASURED = (list, tuple, dict, set, frozenset, bytes)


def _result_size(value: Any) -> int:
    try:
        return deep_size(value)
    except Exception:  # a function inside a result: it cannot be printed, and finalize says so
        return 0


def _like(wrapper: Callable[..., Any], function: Callable[..., Any]) -> Callable[..., Any]:
    try:
        update_wrapper(wrapper, function)
    except (AttributeError, TypeError):  # a callable object without a name
        pass
    pass_arg = _PassArg.from_obj(function)
    if pass_arg is not None:
        wrapper.jinja_pass_arg = pass_arg  # type: ignore[attr-defined]
    return wrapper


def json_size(value: Any, indent: Any = None) -> int:
    """About how many characters `value` takes as JSON, indentation included; stops past the value bound.

    With an indent, every item sits on a line of its own, indented once per level it is nested in,
    so a deep value with a wide indent is far bigger than its items.
    """
    step = len(indent) if isinstance(indent, str) else indent if isinstance(indent, int) and indent > 0 else 0
    if not step:
        return deep_size(value)
    total = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            total += 2 + depth * step
            for key, child in item.items():
                total += deep_size(key) + 4 + (depth + 1) * step
                stack.append((child, depth + 1))
        elif isinstance(item, (list, tuple)):
            total += 2 + depth * step
            for child in item:
                total += 2 + (depth + 1) * step
                stack.append((child, depth + 1))
        else:
            total += deep_size(item)
        if total > MAX_VALUE_CHARS:
            return MAX_VALUE_CHARS + 1
    return total


def budgeted(iterable: Any) -> Any:
    """A loop's items, each spending a step of the render's budget.

    A sized sequence is charged at once and looped over as is (a generator per loop would cost
    more than the loops of a prompt); anything else is counted item by item.
    """
    budget = current_budget.get() or RenderBudget(FALLBACK_SECONDS)
    if isinstance(iterable, Undefined):
        return iterable  # iterates as empty, or fails as Jinja's own would
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
        raise LimitExceeded(f"range() would give over {MAX_RANGE} items", "MAX_RANGE")
    return rng


class _Dict:
    """The `dict` global: `dict(...)` and `dict.fromkeys(...)` as in Jinja, each measured against the budget.

    An object rather than the type itself, so a template cannot reach `dict`'s other class attributes.
    """

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        value = dict(*args, **kwargs)
        active_budget().build(deep_size(value))
        return value

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        value = dict.fromkeys(*args, **kwargs)
        active_budget().build(deep_size(value))
        return value


_dict = _Dict()


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
