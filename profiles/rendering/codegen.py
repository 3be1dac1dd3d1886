"""Compile-time bounds: Jinja's code generator made to evaluate nothing while compiling.

Jinja folds constant expressions at compile time, and calls filters there, swallowing their
errors: `{{ 'a'|center(10**9) }}` would allocate before any check could stop it. Here only
literal text and constants are folded; output into buffers is charged to the budget; `~` and
the lists, tuples and dicts a template builds go through size checks. `tree_size` measures a
parsed template so a huge or deeply nested one is refused before code is generated.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.optimizer import Optimizer
from jinja2.visitor import NodeTransformer

from .budget import MAX_NESTING, MAX_NODES

__all__ = ["BoundedCodeGenerator", "tree_size"]


_LITERALS = (nodes.Const, nodes.List, nodes.Tuple, nodes.Dict, nodes.Pair)


def _is_literal(node: nodes.Node) -> bool:
    return isinstance(node, _LITERALS) and all(_is_literal(child) for child in node.iter_child_nodes())


#: Filters whose result is always bounded text, so printing it skips `finalize`.
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


class BoundedCodeGenerator(CodeGenerator):
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


def tree_size(root: nodes.Node) -> tuple[int, int]:
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
