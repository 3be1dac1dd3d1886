"""Compile templates once, then render them with exactly the variables they declare.

Parsing a template costs far more than rendering it (DB-GPT re-parses on every call, about
6 ms), so every template, and every field value that holds template syntax, is compiled once
and kept in a bounded cache that many threads may share.
"""

from __future__ import annotations

import threading
import traceback
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import TemplateNotFound as _JinjaNotFound
from jinja2 import TemplateSyntaxError, meta, nodes
from jinja2.environment import Template

from ..errors import RenderError, TemplateNotFoundError
from .budget import RenderBudget, current_budget, output_limit, render_seconds
from .loader import ConfinedLoader
from .sandbox import make_environment
from .templates import DEFAULT_FAMILY, MACROS_FILE, bundled_root, candidate_names

if TYPE_CHECKING:
    from .families import FamilyRules

__all__ = ["CompiledTemplate", "Renderer", "get_renderer", "has_template_syntax", "referenced_templates"]

#: How many output chunks are produced between two checks of the output's length.
_CHUNK_BATCH = 64

#: How many compiled templates one renderer keeps; the least recently used goes first.
CACHE_SIZE = 2048

#: Names of the templates being compiled in this thread, so templates that include each other
#: do not send the compiler round in circles (rendering them is stopped by the budget).
_compiling: ContextVar[frozenset[str]] = ContextVar("profiles_compiling", default=frozenset())

def has_template_syntax(text: str) -> bool:
    """Whether a field value needs compiling; plain text skips the template engine entirely."""
    return "{" in text and ("{{" in text or "{%" in text or "{#" in text)


@dataclass(frozen=True)
class CompiledTemplate:
    """A template compiled once, with the variables it reads and the line each is first read on."""

    name: str
    source: str
    template: Template
    declared: frozenset[str]
    lines: Mapping[str, int]

    def line_of(self, variable: str) -> int | None:
        return self.lines.get(variable)

    @property
    def label(self) -> str:
        """How messages name it: `template 'default/en/system.j2'` or `field 'goal'`."""
        return self.name if self.name.startswith("field ") else f"template {self.name!r}"


class _LRU:
    """A small thread-safe LRU; compiling twice on a race is harmless, losing entries is not."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._data: OrderedDict[Any, CompiledTemplate] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> CompiledTemplate | None:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: Any, value: CompiledTemplate) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._size:
                self._data.popitem(last=False)


class Renderer:
    """One sandboxed environment over a tuple of template roots, searched in order.

    Selection is cached: once `(kind, language, family)` has been looked up, a render neither
    touches the filesystem nor matches model names again. `sources` are named template texts
    served before the roots (by `{% include "name" %}` and the like), for parts that are not files.
    """

    def __init__(
        self,
        roots: Iterable[Path] = (),
        *,
        sources: Mapping[str, str] | None = None,
        max_output_chars: int | None = None,
        max_render_seconds: float | None = None,
    ) -> None:
        self.roots = tuple(Path(root) for root in roots)
        self.sources: Mapping[str, str] = dict(sources or {})
        #: Longest output of one render: the argument, else `PROFILES_MAX_OUTPUT_CHARS`, else 200,000.
        self.max_output_chars = output_limit() if max_output_chars is None else max_output_chars
        #: Longest time one render may take: the argument, else `PROFILES_MAX_RENDER_SECONDS`, else 2.
        self.max_render_seconds = render_seconds() if max_render_seconds is None else max_render_seconds
        self.env = make_environment(ConfinedLoader(self.roots, self.sources))
        self._cache = _LRU(CACHE_SIZE)
        self._selected = _LRU(CACHE_SIZE)
        self._lock = threading.Lock()
        self._families: FamilyRules | None = None
        self._kinds: frozenset[str] | None = None

    @property
    def families(self) -> FamilyRules:
        """The model-family rules of these roots, read once."""
        if self._families is None:
            from .families import load_family_rules

            with self._lock:
                if self._families is None:
                    self._families = load_family_rules(self.roots)
        return self._families

    def family_for(self, model: str | None) -> str:
        """The template family for a model name; see `families.py` for the rules and warnings."""
        return self.families.family_for(model)

    @property
    def kinds(self) -> frozenset[str]:
        """Every prompt kind some root has a template for (`<family>/<locale>/<kind>.j2`), read once."""
        if self._kinds is None:
            found = set()
            for root in self.roots:
                if root.is_dir():
                    found.update(path.stem for path in root.glob("*/*/*.j2") if path.is_file())
            self._kinds = frozenset(found)
        return self._kinds

    def compile(self, source: str, name: str = "<inline>") -> CompiledTemplate:
        """Compile `source` (cached by name and text); syntax errors name the template and line."""
        key = ("source", name, source)
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self._compile(source, name)
            self._cache.put(key, compiled)
        return compiled

    def load(self, name: str) -> CompiledTemplate:
        """Compile the template `name` found under this renderer's roots."""
        key = ("file", name)
        compiled = self._cache.get(key)
        if compiled is None:
            try:
                source, _filename, _uptodate = self.env.loader.get_source(self.env, name)
            except _JinjaNotFound:
                raise TemplateNotFoundError(
                    f"template {name!r} not found in {', '.join(map(str, self.roots)) or 'no folders'}"
                ) from None
            compiled = self._compile(source, name)
            self._cache.put(key, compiled)
        return compiled

    def find(self, kind: str, language: str | None, family: str = DEFAULT_FAMILY) -> CompiledTemplate:
        """The template for a prompt kind, language and family, in `candidate_names` order; cached."""
        key = (kind, language, family)
        compiled = self._selected.get(key)
        if compiled is None:
            compiled = self._first(candidate_names(kind, language, family), f"{kind!r} template")
            self._selected.put(key, compiled)
        return compiled

    def resource_formatter(self, family: str = DEFAULT_FAMILY) -> CompiledTemplate:
        """A template rendering `resources` through the family's `format_resources` macro; cached.

        The macro lives in `<family>/macros.j2`, else `default/macros.j2`, in any root.
        """
        key = ("resources", family)
        compiled = self._selected.get(key)
        if compiled is None:
            names = tuple(dict.fromkeys((f"{family}/{MACROS_FILE}", f"{DEFAULT_FAMILY}/{MACROS_FILE}")))
            macros = self._first(names, "resource macros")
            source = (
                f"{{% from {macros.name!r} import format_resources %}}"
                "{{ format_resources(resources) }}"
            )
            compiled = self.compile(source, f"{macros.name} format_resources")
            self._selected.put(key, compiled)
        return compiled

    def _first(self, names: Iterable[str], what: str) -> CompiledTemplate:
        tried = []
        for name in names:
            tried.append(name)
            try:
                return self.load(name)
            except TemplateNotFoundError:
                continue
        raise TemplateNotFoundError(
            f"no {what}; tried {', '.join(tried)} in {', '.join(map(str, self.roots)) or 'no folders'}"
        )

    def render(self, compiled: CompiledTemplate, variables: Mapping[str, Any], *, max_chars: int | None = None) -> str:
        """Render with `variables`, stopping with an error once the output passes `max_chars`."""
        limit = self.max_output_chars if max_chars is None else max_chars
        template = compiled.template
        parts: list[str] = []
        total = 0
        token = current_budget.set(RenderBudget(self.max_render_seconds))
        try:
            chunks = template.root_render_func(template.new_context(variables))
            # counted a batch at a time: a per-chunk loop in Python costs more than the render itself
            while batch := list(islice(chunks, _CHUNK_BATCH)):
                total += sum(map(len, batch))
                if total > limit:
                    raise RenderError(
                        f"{compiled.label} produced over {limit} characters; shorten it or raise the output limit"
                    )
                parts += batch
        except RenderError:
            raise
        except Exception as exc:  # MemoryError and RecursionError included: the process stays unharmed
            line = _template_line(exc, compiled.name)
            where = compiled.label + (f" line {line}" if line else "")
            raise RenderError(f"{where}: {_describe(exc)}") from None
        finally:
            current_budget.reset(token)
        return "".join(parts)

    def _compile(self, source: str, name: str) -> CompiledTemplate:
        try:
            ast = self.env.parse(source, name, name)
            declared = frozenset(meta.find_undeclared_variables(ast)) | self._shared_variables(ast, name)
            code = self.env.compile(ast, name, name)
        except TemplateSyntaxError as exc:
            raise RenderError(
                f"template {name!r} line {exc.lineno}: {exc.message}; fix the syntax, or keep literal "
                "braces with {% raw %}…{% endraw %}"
            ) from None
        except (RecursionError, MemoryError, SyntaxError, ValueError) as exc:
            raise RenderError(
                f"template {name!r} is too complex to compile ({type(exc).__name__}); simplify it"
            ) from None
        template = self.env.template_class.from_code(self.env, code, self.env.make_globals(None), None)
        lines: dict[str, int] = {}
        for node in ast.find_all(nodes.Name):
            if node.name in declared and node.name not in lines:
                lines[node.name] = node.lineno
        return CompiledTemplate(name, source, template, declared, lines)


    def _shared_variables(self, ast: nodes.Template, name: str) -> frozenset[str]:
        """Variables read by the templates this one includes or extends (or imports with context):
        they see its context, so a render must pass them too. Names this template sets itself are
        not asked of the caller; a template that cannot be found is left to fail at render time."""
        found: set[str] = set()
        in_progress = _compiling.get() | {name}
        token = _compiling.set(in_progress)
        try:
            for node in ast.find_all((nodes.Include, nodes.Extends, nodes.Import, nodes.FromImport)):
                if isinstance(node, (nodes.Import, nodes.FromImport)) and not node.with_context:
                    continue  # an import without context sees only its own arguments
                if isinstance(node, nodes.Include) and not node.with_context:
                    continue
                for target in _constant_names(node.template):
                    if target in in_progress:
                        continue
                    try:
                        found |= self.load(target).declared
                    except TemplateNotFoundError:
                        continue
        finally:
            _compiling.reset(token)
        if found:
            found -= {node.name for node in ast.find_all(nodes.Name) if node.ctx in ("store", "param")}
        return frozenset(found)


def _constant_names(template: nodes.Expr) -> list[str]:
    """The template names an include or extends names literally: `"a"`, or each of `["a", "b"]`."""
    if isinstance(template, nodes.Const) and isinstance(template.value, str):
        return [template.value]
    if isinstance(template, (nodes.List, nodes.Tuple)):
        return [item.value for item in template.items if isinstance(item, nodes.Const) and isinstance(item.value, str)]
    return []


def referenced_templates(source: str, name: str = "<inline>") -> tuple[str, ...]:
    """The names a template includes, extends or imports literally, in the order written; () when it
    does not parse (compiling it says why). Parsed in the sandbox, with its bounds, and cached."""
    return _referenced(source, name)


@lru_cache(maxsize=CACHE_SIZE)
def _referenced(source: str, name: str) -> tuple[str, ...]:
    try:
        ast = _parser().parse(source, name, name)
    except (TemplateSyntaxError, RecursionError, MemoryError, ValueError, SyntaxError):
        return ()
    names: list[str] = []
    for node in ast.find_all((nodes.Include, nodes.Extends, nodes.Import, nodes.FromImport)):
        names.extend(_constant_names(node.template))
    return tuple(dict.fromkeys(names))


@lru_cache(maxsize=1)
def _parser() -> Any:
    return make_environment(None)


def _template_line(exc: BaseException, name: str) -> int | None:
    """The template line an exception was raised on, read from the frames Jinja's code runs in."""
    line = None
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        debug_info = frame.f_globals.get("__jinja_template__")
        if frame.f_code.co_filename == name and debug_info is not None:
            line = debug_info.get_corresponding_lineno(frame.f_lineno)
    return line


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if len(text) > 300:
        text = text[:300] + "…"
    return f"{type(exc).__name__}: {text}"


_renderers: dict[Any, Renderer] = {}
_renderers_lock = threading.Lock()
_MAX_RENDERERS = 64


def get_renderer(user_roots: Iterable[Path] = (), sources: Mapping[str, str] | None = None) -> Renderer:
    """The shared renderer for these user roots (searched before the bundled templates) and these
    named `sources`; profiles whose parts are the same texts share one, and its compiled templates."""
    roots = (*(Path(root) for root in user_roots), bundled_root())
    key: Any = (roots, tuple(sorted(sources.items()))) if sources else roots
    renderer = _renderers.get(key)
    if renderer is None:
        with _renderers_lock:
            renderer = _renderers.get(key)
            if renderer is None:
                if len(_renderers) >= _MAX_RENDERERS:
                    _renderers.pop(next(iter(_renderers)))
                renderer = _renderers[key] = Renderer(roots, sources=sources)
    return renderer
