"""The package's import graph has no circles, and only `profiles.cli` draws on a terminal.

Every module under `profiles/` is parsed with `ast`; every import counts, at module level and
inside functions, relative and absolute, except those under `if TYPE_CHECKING:` (they never run).
An import of `pkg.name` where `name` is a submodule is an edge to that submodule; otherwise an
edge to the module that defines the name.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "profiles"

#: Libraries that draw on a terminal; only the command line may import them.
TERMINAL_LIBRARIES = ("click", "rich")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: all of them but those under `if TYPE_CHECKING:`."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _targets(name: str, node: ast.Import | ast.ImportFrom, modules: dict[str, Path]) -> list[str]:
    """The modules of the package one import statement in module `name` runs."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in modules]
    if node.level:
        is_package = modules[name].name == "__init__.py"
        base = name.split(".")
        base = base if is_package else base[:-1]
        base = base[: len(base) - (node.level - 1)]
        origin = ".".join([*base, *([node.module] if node.module else [])])
    else:
        origin = node.module or ""
    targets = []
    for alias in node.names:
        submodule = f"{origin}.{alias.name}"
        if submodule in modules:
            targets.append(submodule)
        elif origin in modules:
            targets.append(origin)
    return targets


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _imports(tree):
            graph[name].update(target for target in _targets(name, node, modules) if target != name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def _path_within(graph: dict[str, set[str]], members: list[str]) -> list[str]:
    """One loop through a component, for the failure message: a → b → … → a."""
    inside = set(members)
    start = members[0]
    previous: dict[str, str] = {}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & inside):
            if child == start:
                loop = [start]
                while node != start:
                    loop.append(node)
                    node = previous[node]
                return [start, *reversed(loop[1:]), start]
            if child not in previous:
                previous[child] = node
                queue.append(child)
    return members


def test_scanner_sees_function_level_and_relative_imports() -> None:
    """Imports inside functions and relative ones count; those under TYPE_CHECKING do not."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "from .errors import ConfigError\n"
        "if TYPE_CHECKING:\n"
        "    from .profile import Profile\n"
        "def make():\n"
        "    from .rendering import renderer\n"
        "    import profiles.loader\n"
    )
    modules = _modules()
    found = set()
    for node in _imports(ast.parse(source)):
        found.update(_targets("profiles.context", node, modules))
    assert found == {"profiles.errors", "profiles.rendering.renderer", "profiles.loader"}


def test_cycle_finder_names_a_planted_cycle() -> None:
    """The cycle finder reports a loop through three modules, in order."""
    planted = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    (component,) = _cycles(planted)
    assert component == ["a", "b", "c"]
    assert _path_within(planted, component) == ["a", "b", "c", "a"]


def test_no_import_cycles() -> None:
    """No module imports, directly or through others, a module that imports it."""
    graph = _graph()
    loops = [
        f"{len(component)} modules ({', '.join(component)}), e.g. {' → '.join(_path_within(graph, component))}"
        for component in _cycles(graph)
    ]
    assert not loops, "import cycles:\n" + "\n".join(loops)


@pytest.mark.parametrize("library", TERMINAL_LIBRARIES)
def test_terminal_libraries_only_in_cli(library: str) -> None:
    """click and rich are imported only under profiles/cli/: library code reports through callbacks."""
    offenders = []
    for name, path in _modules().items():
        if name == "profiles.cli" or name.startswith("profiles.cli."):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _imports(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                continue  # relative: inside the package
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(item == library or item.startswith(library + ".") for item in names):
                offenders.append(f"{name}:{node.lineno}")
    assert not offenders, f"{library} imported outside profiles.cli: {', '.join(offenders)}"


_LAYER_LINE = re.compile(r"^\s*(\d+)?\s+((?:[a-z_]+/?\s)+)\s+(\S.*)$")


def _layers() -> dict[str, int]:
    """The layer each top-level module or package has in the picture in `profiles/__init__.py`."""
    doc = ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))) or ""
    block = doc.split("Layers, top to bottom", 1)[1].split("```")[1]
    layers: dict[str, int] = {}
    current = None
    for line in block.splitlines():
        match = _LAYER_LINE.match(line)
        if not match:
            continue
        if match.group(1) is not None:
            current = int(match.group(1))
        for name in match.group(2).split():
            layers[name.rstrip("/")] = current
    return layers


def _top(module: str) -> str | None:
    """The name the picture uses for a module: `profiles.rendering.sandbox` is `rendering`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_picture_names_every_module() -> None:
    """Every module and package of profiles/ has a layer in the package docstring's picture."""
    layers = _layers()
    tops = {_top(name) for name in _modules()} - {None, "__main__"}
    assert tops - set(layers) == set(), "modules missing from the layer picture"
    assert set(layers) - tops == set(), "the layer picture names modules that do not exist"


def test_imports_run_downwards() -> None:
    """No module imports from a layer above its own, as the picture in profiles/__init__.py draws."""
    layers = _layers()
    upward = []
    for name, targets in _graph().items():
        own = layers.get(_top(name) or "")
        if own is None:
            continue  # the package's face (profiles/__init__.py) and __main__
        for target in targets:
            theirs = layers.get(_top(target) or "")
            if theirs is not None and theirs > own:
                upward.append(f"{name} (layer {own}) imports {target} (layer {theirs})")
    assert not upward, "imports that run upwards:\n" + "\n".join(sorted(upward))
