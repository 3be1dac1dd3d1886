"""The Jinja environment every template runs in: immutable sandbox, few globals, bounded work.

Templates come from persona authors and shared stores, so they are treated as hostile: they may
not mutate what they are given, call what the sandbox forbids, or build huge values. The bounds
(each a `#:`-documented constant in `budget.py`):

- nothing runs while compiling: Jinja folds constant expressions (and calls filters) at compile
  time and swallows their errors there, so `{{ 'a'|center(10**9) }}` would allocate before any
  check could stop it. Folding is switched off; every expression runs at render time, in budget.
- a template's source size, node count and nesting depth are capped before code is generated.
- every loop iteration and every call spends one step of a per-render budget, which also holds
  a deadline and a cap on the characters operators and filters may build.
- operators (`*`, `**`, `%`, `~`), `str.format` and the filters that take a width or count
  check the size of what they would build before building it (`bounded.py`; compile-time
  guards in `codegen.py`); `+`, which at most doubles what exists, is measured once built.
- macros may recurse only so deep; `range` is capped; the globals are `range`, `dict` and
  `namespace` only.

A bound that trips raises `LimitExceeded` (a `SecurityError`); the renderer turns it into a
`RenderError` naming the template, its line and the bound.

Otherwise templates behave as in stock Jinja, with `trim_blocks`, `lstrip_blocks` and loop
controls on: a missing value is falsy and empty wherever it is tested (`undefined.py`) and an
error only where it would be printed, called or read from; filters give Jinja's results,
autoescaping included; `binop_table` and `intercepted_binops` work as Jinja documents them.
README's "Differences from stock Jinja" lists every difference.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from types import BuiltinMethodType, MethodType
from typing import Any

from jinja2 import BaseLoader, TemplateSyntaxError, nodes
from jinja2.runtime import Macro, markup_join
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from .bounded import SIZED_METHODS, bounded_filters, budgeted, check_method, prompt_globals, sentence
from .budget import (
    FALLBACK_SECONDS,
    MAX_BUILT_CHARS,
    MAX_EXPONENT,
    MAX_INT_BITS,
    MAX_MACRO_DEPTH,
    MAX_NESTING,
    MAX_NODES,
    MAX_OUTPUT_CHARS,
    MAX_SOURCE_CHARS,
    LimitExceeded,
    RenderBudget,
    active_budget,
    check_format,
    check_percent,
    check_text_argument,
    checked,
    current_budget,
    deep_size,
    finalize,
)
from .codegen import BOUNDED_BINOPS, TEXT_FILTERS, BoundedCodeGenerator, tree_size
from .undefined import PromptUndefined

__all__ = ["DEFAULT_EXTENSIONS", "MAX_OUTPUT_CHARS", "ProfilesSandbox", "make_environment"]

#: Extensions every environment has: `{% break %}` and `{% continue %}` are common in real templates.
DEFAULT_EXTENSIONS = ("jinja2.ext.loopcontrols",)

_OPERATORS = {"*": operator.mul, "**": operator.pow, "%": operator.mod, "+": operator.add}

_METHODS = (MethodType, BuiltinMethodType)


class ProfilesSandbox(ImmutableSandboxedEnvironment):
    """An immutable sandbox whose templates cannot build huge values or run without end.

    The compile step is guarded too: sources, trees and nesting are capped after parsing and
    before code is generated, and nothing is evaluated while compiling.
    """

    code_generator_class = BoundedCodeGenerator
    # `*`, `**`, `+` and `%` always reach `call_binop`, for their bounds (see codegen.py); this set
    # stays Jinja's own hook: an operator listed here runs `binop_table`'s function after the bounds
    intercepted_binops: frozenset[str] = frozenset()
    #: Filters whose result is always text, so printing it needs no `finalize` (see codegen.py).
    text_filters: frozenset[str] = TEXT_FILTERS

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
        count, depth = tree_size(tree)
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
        budget = current_budget.get() or RenderBudget(FALLBACK_SECONDS)
        budget.steps -= 1
        if not budget.steps & 0xFF or budget.steps <= 0:
            budget.steps += 1
            budget.step()
        if not __self.is_safe_callable(__obj):
            raise SecurityError(f"{__obj!r} is not safely callable")
        if __obj.__class__ is BuiltinMethodType and __obj.__name__ in SIZED_METHODS:
            args = check_method(__obj, args, kwargs)
        if __obj.__class__ is not Macro:
            return __context.call(__obj, *args, **kwargs)
        if budget.depth >= MAX_MACRO_DEPTH:
            raise LimitExceeded(f"macros call each other over {MAX_MACRO_DEPTH} levels deep", "MAX_MACRO_DEPTH")
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
            check_format(fmt, args, kwargs)
            for argument in (*args, *kwargs.values()):  # `'{}'.format(obj)` would print its address
                check_text_argument(argument)
            return wrapped(*args, **kwargs)  # type: ignore[no-any-return]

        return checked

    def charge(self, text: str) -> str:
        """Text written into a buffer (macro, block), charged to the characters a render may build."""
        budget = current_budget.get() or RenderBudget(FALLBACK_SECONDS)
        budget.chars -= len(text)
        if budget.chars < 0:
            raise LimitExceeded(f"the render built over {MAX_BUILT_CHARS} characters in all", "MAX_BUILT_CHARS")
        return text

    def container(self, value: Any) -> Any:
        """A list, tuple or dict a template built, refused if it would print too big."""
        active_budget().build(deep_size(value))
        return value

    def concat(self, items: Iterable[Any], markup: bool = False) -> str:
        """The `~` operator: every part as text, refused before joining if the result is too big.

        With autoescaping on (`markup`), parts are joined as Jinja joins them: escaped unless safe.
        """
        parts = [item if type(item) is str else str(checked(item)) for item in items]
        active_budget().build(sum(map(len, parts)))
        if markup:
            return markup_join(items)
        return "".join(parts)

    def joined(self, value: Any) -> Any:
        """The result of a `+` that is not short text, charged to the render's budget (see codegen.py)."""
        budget = active_budget()
        if isinstance(value, (str, list, tuple)):
            budget.build(deep_size(value))
        elif isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
            raise LimitExceeded(f"a sum would build a number over {MAX_INT_BITS} bits", "MAX_INT_BITS")
        elif callable(value) or isinstance(value, type):  # printed without finalize (codegen.py)
            raise SecurityError("`+` gave a function or class, which cannot be printed; add values instead")
        else:
            budget.step()
        return value

    def call_binop(self, context: Any, operator_name: str, left: Any, right: Any) -> Any:
        if operator_name not in BOUNDED_BINOPS:  # an operator the caller intercepts, through Jinja's hook
            return self.binop_table[operator_name](left, right)
        budget = active_budget()
        if operator_name == "**":
            if isinstance(right, (int, float)) and abs(right) > MAX_EXPONENT:
                raise LimitExceeded(f"exponent {right} is over the limit of {MAX_EXPONENT}", "MAX_EXPONENT")
            if isinstance(left, int) and isinstance(right, int) and left.bit_length() * max(right, 0) > MAX_INT_BITS:
                raise LimitExceeded(f"a power would build a number over {MAX_INT_BITS} bits", "MAX_INT_BITS")
            budget.step()
        elif operator_name == "%":
            if isinstance(left, str):
                check_percent(left, right)
            budget.step()
        elif operator_name == "*":
            for seq, count in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(count, int):
                    budget.build(deep_size(seq) * max(count, 0))
            if isinstance(left, int) and isinstance(right, int):
                if left.bit_length() + right.bit_length() > MAX_INT_BITS:
                    raise LimitExceeded(f"a product would build a number over {MAX_INT_BITS} bits", "MAX_INT_BITS")
            budget.step()
        elif isinstance(left, (str, list, tuple)):
            budget.build(deep_size(left) + deep_size(right))
        else:
            budget.step()
        if self.intercepted_binops and operator_name in self.intercepted_binops:
            return self.binop_table[operator_name](left, right)
        return _OPERATORS[operator_name](left, right)


def make_environment(
    loader: BaseLoader | None = None, extensions: Iterable[Any] = DEFAULT_EXTENSIONS
) -> ProfilesSandbox:
    """Build the sandbox with only the globals and filters prompts need, and `loopcontrols`."""
    env = ProfilesSandbox(
        loader=loader,
        # falsy and empty where a template tests or loops; an error where it would print nothing
        undefined=PromptUndefined,
        autoescape=False,  # prompts are plain text, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        auto_reload=False,  # compiled once; files are not watched
        cache_size=400,
        finalize=finalize,
        extensions=list(extensions),
    )
    # lipsum and cycler burn CPU or leak object addresses; joiner is never needed in a prompt
    env.globals = prompt_globals()
    env.filters.update(bounded_filters(env.filters))
    env.filters["sentence"] = sentence
    env.filters["_budgeted"] = budgeted
    return env
