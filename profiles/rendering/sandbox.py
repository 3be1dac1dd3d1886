"""The Jinja environment every template runs in: immutable sandbox, few globals, bounded work.

Templates come from persona authors and shared stores, so they are treated as hostile: they may
not mutate what they are given, call what the sandbox forbids, or build huge values.
"""

from __future__ import annotations

import operator
from typing import Any

from jinja2 import BaseLoader, StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

__all__ = ["MAX_OUTPUT_CHARS", "MAX_VALUE_CHARS", "ProfilesSandbox", "make_environment"]

#: Longest prompt a render may produce, in characters; past it the render stops with an error.
MAX_OUTPUT_CHARS = 200_000

#: Largest string or sequence a single `*`, `**` or `+` may build, in items or characters.
MAX_VALUE_CHARS = 1_000_000

#: Largest exponent `**` accepts; bigger ones cost unbounded time at compile or render time.
MAX_EXPONENT = 1_000


def _sentence(value: Any, end: str = ".") -> str:
    """End a text with exactly one full stop, so "Summarize." never renders "Summarize..".

    Any of `.`, `。`, `!`, `?`, `！`, `？` already ending the text counts as an ending.
    """
    text = "" if value is None else str(value).rstrip()
    if not text:
        return ""
    if text[-1] in ".。!?！？":
        return text
    return text + end


def _size(value: Any) -> int:
    try:
        return len(value)
    except TypeError:
        return 1


class ProfilesSandbox(ImmutableSandboxedEnvironment):
    """An immutable sandbox whose arithmetic cannot build huge values.

    Jinja folds constant expressions while compiling; intercepting these operators stops that
    folding too, so `{{ 'a' * 10**9 }}` is refused at render time instead of stalling the compile.
    """

    intercepted_binops = frozenset({"*", "**", "+"})

    def call_binop(self, context: Any, operator_name: str, left: Any, right: Any) -> Any:
        if operator_name == "**":
            if isinstance(right, (int, float)) and abs(right) > MAX_EXPONENT:
                raise SecurityError(f"exponent {right} is over the limit of {MAX_EXPONENT}")
            return operator.pow(left, right)
        if operator_name == "*":
            for seq, count in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(count, int):
                    if _size(seq) * count > MAX_VALUE_CHARS:
                        raise SecurityError(f"repetition would build over {MAX_VALUE_CHARS} items")
            return operator.mul(left, right)
        result_size = _size(left) + _size(right) if isinstance(left, (str, list, tuple)) else 0
        if result_size > MAX_VALUE_CHARS:
            raise SecurityError(f"concatenation would build over {MAX_VALUE_CHARS} items")
        return operator.add(left, right)


def make_environment(loader: BaseLoader | None = None) -> ProfilesSandbox:
    """Build the sandbox with only the globals and filters prompts need."""
    env = ProfilesSandbox(
        loader=loader,
        undefined=StrictUndefined,  # a misspelt attribute fails loudly instead of rendering empty
        autoescape=False,  # prompts are plain text, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        auto_reload=False,  # compiled once; files are not watched
        cache_size=400,
    )
    # lipsum and cycler burn CPU or leak object addresses; prompts need none of them
    env.globals = {"range": env.globals["range"], "dict": dict, "namespace": env.globals["namespace"]}
    env.filters["sentence"] = _sentence
    return env
