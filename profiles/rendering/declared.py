"""What a template reads from outside: its variables, where each is read, and the files it pulls in.

A prompt is rendered with exactly the variables its template reads, so those must be known at
compile time, across every file the template extends, includes or imports with context: a base
template's `{{ name }}` is a variable of each child. `analyse` looks at one parsed file;
`Renderer` (renderer.py) joins the files, once per template.

Which names a template reads comes from Jinja's own scoping rules, run through this package's
code generator, which evaluates nothing while compiling (Jinja's `meta.find_undeclared_variables`
folds constant expressions, so `{{ 7 ** 2000000000 }}` would stall it). A variable the template
tests with `is defined` or `is undefined`, or gives a `|default`, is optional: the template is
written for it to be missing; so is one the template sets itself somewhere (`{% set %}` in an
`{% if %}` branch), which Jinja still looks up first. Every other variable must be given.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from jinja2 import nodes

from .codegen import BoundedCodeGenerator

__all__ = ["FileAnalysis", "Reference", "Variable", "analyse"]

#: Tests that ask whether a value is there, and filters that give a missing value a default.
_PRESENCE_TESTS = frozenset({"defined", "undefined"})
_DEFAULT_FILTERS = frozenset({"default", "d"})


@dataclass(frozen=True)
class Variable:
    """A variable a template reads: the file and line of its first read, and whether it may be missing."""

    name: str
    #: The template (file, or field) that reads it first.
    template: str
    line: int
    #: The template tests it (`is defined`), defaults it (`|default`) or sets it itself, so it may be missing.
    optional: bool = False

    @property
    def where(self) -> str:
        """How messages name the place: `template 'base.j2' line 3`, or `field 'goal' line 1`."""
        label = self.template if self.template.startswith("field ") else f"template {self.template!r}"
        return f"{label} line {self.line}"


@dataclass(frozen=True)
class Reference:
    """An `{% extends %}`, `{% include %}` or `{% import %}` of another template."""

    kind: str
    #: The template names tried, in order; empty when the name is computed at render time.
    names: tuple[str, ...]
    line: int
    #: Whether the other template sees this one's variables (extends and include do; import only
    #: `with context`).
    with_context: bool
    ignore_missing: bool = False


@dataclass(frozen=True)
class FileAnalysis:
    """One parsed file: the variables it reads, the names it sets, the templates it references."""

    variables: dict[str, Variable]
    #: Names the file assigns anywhere (set, for, macro and call arguments, imports): an included
    #: or parent template reading one of them gets it from this file, not from the caller.
    stored: frozenset[str]
    references: tuple[Reference, ...]


class _Tracker(BoundedCodeGenerator):
    """Runs Jinja's scoping without writing code, collecting the names resolved from the context."""

    def __init__(self, environment: Any) -> None:
        super().__init__(environment, "<introspection>", "<introspection>")
        self.undeclared: set[str] = set()

    def write(self, x: str) -> None:
        pass

    def enter_frame(self, frame: Any) -> None:
        super().enter_frame(frame)
        for action, param in frame.symbols.loads.values():
            if action == "resolve" and param not in self.environment.globals:
                self.undeclared.add(param)


def analyse(environment: Any, tree: nodes.Template, name: str) -> FileAnalysis:
    """The variables `tree` (the parsed file `name`) reads, the names it sets and what it references."""
    tracker = _Tracker(environment)
    tracker.visit(tree)
    undeclared = tracker.undeclared
    lines: dict[str, int] = {}
    optional = set()
    stored = set()
    references = []
    # one walk over the tree, in the order `find_all` visits it, however many kinds of node are wanted
    for node in _walk(tree):
        if isinstance(node, nodes.Name):
            if node.ctx == "load":
                if node.name in undeclared and (node.name not in lines or node.lineno < lines[node.name]):
                    lines[node.name] = node.lineno
            elif node.ctx in ("store", "param"):
                stored.add(node.name)
        elif isinstance(node, nodes.Test):
            if node.name in _PRESENCE_TESTS and isinstance(node.node, nodes.Name):
                optional.add(node.node.name)
        elif isinstance(node, nodes.Filter):
            if node.name in _DEFAULT_FILTERS and isinstance(node.node, nodes.Name):
                optional.add(node.node.name)
        elif isinstance(node, nodes.Macro):
            stored.add(node.name)
        elif isinstance(node, (nodes.Extends, nodes.Include, nodes.Import, nodes.FromImport)):
            references.append(_reference(node))
            if isinstance(node, nodes.Import):
                stored.add(node.target)
            elif isinstance(node, nodes.FromImport):
                stored.update(item[1] if isinstance(item, tuple) else item for item in node.names)
    # Jinja reads a name from the context when the template sets it in only some places (an
    # `{% if %}` branch, a loop), and even when every branch sets it: such a name is the template's
    # own, and a caller's value is a default at most
    optional |= stored
    ordered = sorted(undeclared, key=lambda item: (lines.get(item, 1), item))
    variables = {item: Variable(item, name, lines.get(item, 1), item in optional) for item in ordered}
    return FileAnalysis(variables, frozenset(stored), tuple(references))


def _walk(tree: nodes.Node) -> Iterator[nodes.Node]:
    """Every node under `tree`, parents before children, in the order `Node.find_all` yields them."""
    stack = [tree.iter_child_nodes()]
    while stack:
        for child in stack[-1]:
            yield child
            stack.append(child.iter_child_nodes())
            break
        else:
            stack.pop()


def _reference(node: nodes.Node) -> Reference:
    names = _constant_names(node.template)
    if isinstance(node, nodes.Extends):
        return Reference("extends", names, node.lineno, True)
    if isinstance(node, nodes.Include):
        return Reference("include", names, node.lineno, node.with_context, node.ignore_missing)
    return Reference("import", names, node.lineno, node.with_context)


def _constant_names(node: nodes.Expr) -> tuple[str, ...]:
    """The template names a reference names, when they are written out; empty when computed."""
    if isinstance(node, nodes.Const) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, (nodes.List, nodes.Tuple)) and all(
        isinstance(item, nodes.Const) and isinstance(item.value, str) for item in node.items
    ):
        return tuple(item.value for item in node.items)
    return ()
