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
    for node in tree.find_all(nodes.Name):
        if node.ctx == "load" and node.name in undeclared:
            if node.name not in lines or node.lineno < lines[node.name]:
                lines[node.name] = node.lineno
    optional = set()
    for test in tree.find_all(nodes.Test):
        if test.name in _PRESENCE_TESTS and isinstance(test.node, nodes.Name):
            optional.add(test.node.name)
    for flt in tree.find_all(nodes.Filter):
        if flt.name in _DEFAULT_FILTERS and isinstance(flt.node, nodes.Name):
            optional.add(flt.node.name)
    stored = frozenset(_stored(tree))
    # Jinja reads a name from the context when the template sets it in only some places (an
    # `{% if %}` branch, a loop), and even when every branch sets it: such a name is the template's
    # own, and a caller's value is a default at most
    optional |= stored
    ordered = sorted(undeclared, key=lambda item: (lines.get(item, 1), item))
    variables = {item: Variable(item, name, lines.get(item, 1), item in optional) for item in ordered}
    return FileAnalysis(variables, stored, tuple(_references(tree)))


def _stored(tree: nodes.Template) -> Iterator[str]:
    for node in tree.find_all(nodes.Name):
        if node.ctx in ("store", "param"):
            yield node.name
    for macro in tree.find_all(nodes.Macro):
        yield macro.name
    for imported in tree.find_all(nodes.Import):
        yield imported.target
    for imported in tree.find_all(nodes.FromImport):
        for item in imported.names:
            yield item[1] if isinstance(item, tuple) else item


def _references(tree: nodes.Template) -> Iterator[Reference]:
    for node in tree.find_all((nodes.Extends, nodes.Include, nodes.Import, nodes.FromImport)):
        names = _constant_names(node.template)
        if isinstance(node, nodes.Extends):
            yield Reference("extends", names, node.lineno, True)
        elif isinstance(node, nodes.Include):
            yield Reference("include", names, node.lineno, node.with_context, node.ignore_missing)
        else:
            yield Reference("import", names, node.lineno, node.with_context)


def _constant_names(node: nodes.Expr) -> tuple[str, ...]:
    """The template names a reference names, when they are written out; empty when computed."""
    if isinstance(node, nodes.Const) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, (nodes.List, nodes.Tuple)) and all(
        isinstance(item, nodes.Const) and isinstance(item.value, str) for item in node.items
    ):
        return tuple(item.value for item in node.items)
    return ()
