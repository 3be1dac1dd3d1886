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
from markupsafe import escape

from .budget import MAX_NESTING, MAX_NODES

__all__ = ["BOUNDED_BINOPS", "TEXT_FILTERS", "BoundedCodeGenerator", "tree_size"]

#: Operators that can build huge values; each goes through `environment.call_binop` and its bounds.
BOUNDED_BINOPS = frozenset({"*", "**", "+", "%"})


_LITERALS = (nodes.Const, nodes.List, nodes.Tuple, nodes.Dict, nodes.Pair)


def _is_literal(node: nodes.Node) -> bool:
    return isinstance(node, _LITERALS) and all(_is_literal(child) for child in node.iter_child_nodes())


#: Filters whose result is always bounded text, so printing it skips `finalize`; an environment
#: lists those it still has in `text_filters` (a filter registered under one of these names may not).
TEXT_FILTERS = frozenset(
    {"center", "indent", "join", "replace", "sentence", "string", "tojson", "pprint", "truncate", "wordwrap", "format"}
    | {"trim", "upper", "lower", "title", "capitalize", "striptags", "urlencode", "escape", "e", "forceescape"}
)


class _LiteralOptimizer(Optimizer):
    """Folds literals only (`{"en": "English"}` built once); never operators, filters or calls."""

    def generic_visit(self, node: nodes.Node, *args: Any, **kwargs: Any) -> nodes.Node:
        if isinstance(node, (nodes.List, nodes.Tuple, nodes.Dict)) and _is_literal(node):
            return super().generic_visit(node, *args, **kwargs)  # type: ignore[no-any-return]
        return NodeTransformer.generic_visit(self, node, *args, **kwargs)


def _bounded_binop(op: str) -> Any:
    """A visitor writing `op` as a call of `environment.call_binop`, whatever `intercepted_binops` holds."""

    def visitor(self: CodeGenerator, node: nodes.BinExpr, frame: Frame) -> None:
        self.write(f"environment.call_binop(context, {op!r}, ")
        self.visit(node.left, frame)
        self.write(", ")
        self.visit(node.right, frame)
        self.write(")")

    return visitor


class BoundedCodeGenerator(CodeGenerator):
    """Jinja's code generator, with no evaluation at compile time and `~` through a size check."""

    def __init__(self, environment: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(environment, *args, **kwargs)
        if self.optimizer is not None:
            self.optimizer = _LiteralOptimizer(environment)

    def _output_child_to_const(self, node: nodes.Expr, frame: Frame, finalize: Any) -> str:
        # folding runs filters and operators while compiling, outside any budget, and swallows
        # their errors; only literal text and constants are folded
        if not isinstance(node, (nodes.TemplateData, nodes.Const)) or frame.eval_ctx.volatile:
            raise nodes.Impossible()
        const = node.data if isinstance(node, nodes.TemplateData) else node.value
        if not isinstance(const, (str, int, float)):
            raise nodes.Impossible()
        if frame.eval_ctx.autoescape:  # as Jinja does: a constant printed with autoescaping is escaped
            const = escape(const) if isinstance(node, nodes.Const) else const
        if isinstance(node, nodes.TemplateData):
            return str(const)  # template data does not go through finalize
        return finalize.const(const)  # type: ignore[no-any-return]

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
        if self._plain_text(node, frame):
            self.write("str(")
        else:
            super()._output_child_pre(node, frame, finalize)

    def _output_child_post(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        if self._plain_text(node, frame):
            self.write(")")
        else:
            super()._output_child_post(node, frame, finalize)
        if frame.buffer is not None:
            self.write(")")

    def _plain_text(self, node: nodes.Expr, frame: Frame) -> bool:
        """Whether `node` prints as text needing neither finalize nor escaping."""
        if frame.eval_ctx.volatile or frame.eval_ctx.autoescape:
            return False
        if isinstance(node, nodes.Filter):
            return node.name in getattr(self.environment, "text_filters", ())
        # `~` always gives text, and `+` text, a number or a container already measured (adding
        # functions or classes fails): neither can print a function or an unmeasured value
        return isinstance(node, nodes.Concat) or (
            isinstance(node, nodes.Add) and "+" not in self.environment.intercepted_binops
        )

    #: A join whose text result is shorter than this skips the budget: the loop steps around it
    #: bound how often it can happen. Anything longer, or not text, is charged once it exists.
    small_join = 1024

    def visit_Add(self, node: nodes.Add, frame: Frame) -> None:
        if "+" in self.environment.intercepted_binops:
            _bounded_binop("+")(self, node, frame)
            return
        # `'<|im_start|>' + message.role + '\n'`: chat templates join short texts all the time. A
        # join at most doubles what already exists, so it is built first, as Jinja builds it, and
        # then measured: short text and whole numbers (as big as their operands, which `*` and `**`
        # bound) pass inline, anything else through `environment.joined`.
        result = self.temporary_identifier()
        self.write(f"({result} if type({result} := (")
        self.visit(node.left, frame)
        self.write(") + (")
        self.visit(node.right, frame)
        self.write(
            f")) is str and len({result}) < {self.small_join} or type({result}) is int "
            f"else environment.joined({result}))"
        )

    visit_Mul = _bounded_binop("*")
    visit_Pow = _bounded_binop("**")
    visit_Mod = _bounded_binop("%")

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
        if frame.eval_ctx.volatile:
            self.write("), context.eval_ctx.autoescape)")
        else:
            self.write(f"), {bool(frame.eval_ctx.autoescape)})")


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
