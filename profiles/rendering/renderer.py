"""Compile templates once, then render them with exactly the variables they declare.

Parsing a template costs far more than rendering it (DB-GPT re-parses on every call, about
6 ms), so every template, and every field value that holds template syntax, is compiled once
and kept in a bounded cache that many threads may share.
"""

from __future__ import annotations

import threading
import traceback
from collections import ChainMap, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import TemplateNotFound as _JinjaNotFound
from jinja2 import TemplateSyntaxError, nodes
from jinja2.environment import Template
from jinja2.exceptions import SecurityError, UndefinedError
from jinja2.ext import Extension

from ..errors import RenderError, TemplateNotFoundError
from . import plugins
from .budget import LimitExceeded, RenderBudget, current_budget, output_limit, render_seconds
from .declared import FileAnalysis, Variable, analyse
from .loader import ConfinedLoader
from .sandbox import DEFAULT_EXTENSIONS, make_environment
from .templates import DEFAULT_FAMILY, MACROS_FILE, bundled_root, candidate_names

if TYPE_CHECKING:
    from .families import FamilyRules

__all__ = ["CompiledTemplate", "Renderer", "Variable", "get_renderer", "has_template_syntax", "referenced_templates"]

#: How many output chunks are produced between two checks of the output's length.
_CHUNK_BATCH = 64

#: How many compiled templates one renderer keeps; the least recently used goes first.
CACHE_SIZE = 2048


def has_template_syntax(text: str) -> bool:
    """Whether a field value needs compiling; plain text skips the template engine entirely."""
    return "{" in text and ("{{" in text or "{%" in text or "{#" in text)


@dataclass(frozen=True)
class CompiledTemplate:
    """A template compiled once, with every variable it reads, across the files it pulls in.

    `variables` holds each variable the template, or a template it extends, includes or imports
    with context, reads from outside, in the order of first use, with the file and line of that
    use (`Variable.where`) and whether the template lets it be missing (`Variable.optional`: it
    tests it with `is defined` or gives it a `|default`). `declared` is the set of their names and
    `required` of those that must be given. `closed` is false when a referenced name is computed
    at render time (`{% include kind ~ ".j2" %}`), so which variables it reads is not known.
    """

    name: str
    source: str
    template: Template
    variables: Mapping[str, Variable]
    closed: bool = True
    #: The other templates the variables come from, in the order they are referenced.
    files: tuple[str, ...] = ()
    declared: frozenset[str] = field(init=False)
    required: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        declared = frozenset(self.variables)
        required = frozenset(name for name, item in self.variables.items() if not item.optional)
        object.__setattr__(self, "declared", declared)
        # the same set when every variable is required, so a render can tell by identity
        object.__setattr__(self, "required", declared if len(required) == len(declared) else required)

    def line_of(self, variable: str) -> int | None:
        """The line of the first read of `variable`, in the file that reads it (see `where`)."""
        item = self.variables.get(variable)
        return item.line if item is not None else None

    def where(self, variable: str) -> str:
        """Where `variable` is first read: `template 'base.j2' line 3`, or this template's label."""
        item = self.variables.get(variable)
        return item.where if item is not None else self.label

    @property
    def label(self) -> str:
        """How messages name it: `template 'default/en/system.j2'` or `field 'goal'`."""
        return self.name if self.name.startswith("field ") else f"template {self.name!r}"


class _LRU:
    """A small thread-safe LRU; compiling twice on a race is harmless, losing entries is not."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._data: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


@dataclass(frozen=True)
class _Union:
    """A referenced file's variables, joined with those of every file it references in turn."""

    variables: dict[str, Variable]
    closed: bool
    files: tuple[str, ...]


#: A referenced file no loader has (Jinja says so when a render reaches it).
_ABSENT = _Union({}, True, ())


class Renderer:
    """One sandboxed environment over a tuple of template roots, searched in order.

    Selection is cached: once `(kind, language, family)` has been looked up, a render neither
    touches the filesystem nor matches model names again. `sources` are named template texts
    served before the roots (by `{% include "name" %}` and the like), for parts that are not files.

    `filters`, `tests`, `globals` and `extensions` add to the sandbox (see `plugins.py`), as do
    `add_filter` and its siblings later; what the process registered (`profiles.register_filter`
    and the `agent_profiles.jinja` entry points) is added too.
    """

    def __init__(
        self,
        roots: Iterable[Path] = (),
        *,
        sources: Mapping[str, str] | None = None,
        max_output_chars: int | None = None,
        max_render_seconds: float | None = None,
        filters: Mapping[str, Callable[..., Any]] | None = None,
        tests: Mapping[str, Callable[..., Any]] | None = None,
        globals: Mapping[str, Any] | None = None,
        extensions: Iterable[type[Extension]] = (),
    ) -> None:
        self.roots = tuple(Path(root) for root in roots)
        self.sources: Mapping[str, str] = dict(sources or {})
        #: Longest output of one render: the argument, else `PROFILES_MAX_OUTPUT_CHARS`, else 200,000.
        self.max_output_chars = output_limit() if max_output_chars is None else max_output_chars
        #: Longest time one render may take: the argument, else `PROFILES_MAX_RENDER_SECONDS`, else 2.
        self.max_render_seconds = render_seconds() if max_render_seconds is None else max_render_seconds
        self.env = make_environment(ConfinedLoader(self.roots, self.sources), DEFAULT_EXTENSIONS)
        #: What this renderer adds to its sandbox itself, applied after the process-wide additions.
        self.additions = plugins.JinjaAdditions()
        self.additions.update(filters=filters, tests=tests, globals=globals, extensions=extensions)
        self._applied = -1
        self._cache = _LRU(CACHE_SIZE)
        self._selected = _LRU(CACHE_SIZE)
        self._files = _LRU(CACHE_SIZE)
        self._lock = threading.Lock()
        self._families: FamilyRules | None = None
        self._kinds: frozenset[str] | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        # a renderer sent to another process (with a profile) is made anew there from what it is
        # made of; its compiled templates and caches stay here
        return (
            _restore_renderer,
            (self.roots, dict(self.sources), self.max_output_chars, self.max_render_seconds, self.additions),
        )

    # additions -----------------------------------------------------------------------------

    def add_filter(self, name: str, function: Callable[..., Any]) -> None:
        """Add a filter to this renderer; templates compiled from now on can use it."""
        self._add(lambda: self.additions.add_filter(name, function))

    def add_test(self, name: str, function: Callable[..., Any]) -> None:
        """Add a test (`{% if x is name %}`) to this renderer."""
        self._add(lambda: self.additions.add_test(name, function))

    def add_global(self, name: str, value: Any) -> None:
        """Add a global function or value to this renderer."""
        self._add(lambda: self.additions.add_global(name, value))

    def add_extension(self, extension: type[Extension]) -> None:
        """Add a Jinja extension class (tags, filters, globals) to this renderer."""
        self._add(lambda: self.additions.add_extension(extension))

    def _add(self, change: Callable[[], None]) -> None:
        with self._lock:
            change()
            self._applied = -1  # applied again, in order, before the next compile

    def _refresh(self) -> None:
        """Bring the sandbox up to date with what the process and this renderer registered."""
        if plugins.version() == self._applied:
            return
        with self._lock:
            version, layers = plugins.registered()
            for layer in (*layers, self.additions):
                layer.apply(self.env)
            self._applied = version

    # selection -----------------------------------------------------------------------------

    @property
    def families(self) -> FamilyRules:
        """The model-family rules of these roots, read once."""
        if self._families is None:
            from .families import load_family_rules

            with self._lock:
                if self._families is None:
                    self._families = load_family_rules(self.roots)
        return self._families

    def family_for(self, model: str | None, *, secret: bool = False) -> str:
        """The template family for a model name; see `families.py` for the rules and warnings."""
        return self.families.family_for(model, secret=secret)

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
        return compiled  # type: ignore[no-any-return]

    def load(self, name: str) -> CompiledTemplate:
        """Compile the template `name` found under this renderer's roots (or its loaders)."""
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
        return compiled  # type: ignore[no-any-return]

    def find(self, kind: str, language: str | None, family: str = DEFAULT_FAMILY) -> CompiledTemplate:
        """The template for a prompt kind, language and family, in `candidate_names` order; cached."""
        key = (kind, language, family)
        compiled = self._selected.get(key)
        if compiled is None:
            compiled = self._first(candidate_names(kind, language, family), f"{kind!r} template")
            self._selected.put(key, compiled)
        return compiled  # type: ignore[no-any-return]

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
        return compiled  # type: ignore[no-any-return]

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

    # rendering -----------------------------------------------------------------------------

    def render(
        self,
        compiled: CompiledTemplate,
        variables: Mapping[str, Any],
        *,
        max_chars: int | None = None,
        max_seconds: float | None = None,
        observe: Callable[[Iterator[str]], Iterator[str]] | None = None,
    ) -> str:
        """Render with `variables`, stopping with an error once the output passes `max_chars`.

        `max_seconds` replaces the renderer's time limit for this render; `observe` wraps the
        stream of output chunks (e.g. to count what was written before a tag runs).
        """
        limit = self.max_output_chars if max_chars is None else max_chars
        template = compiled.template
        parts: list[str] = []
        total = 0
        token = current_budget.set(RenderBudget(self.max_render_seconds if max_seconds is None else max_seconds))
        try:
            chunks = template.root_render_func(_context(template, variables))
            if observe is not None:
                chunks = observe(chunks)
            # counted a batch at a time: a per-chunk loop in Python costs more than the render itself
            while batch := list(islice(chunks, _CHUNK_BATCH)):
                total += sum(map(len, batch))
                if total > limit:
                    raise RenderError(
                        f"{compiled.label} produced over {limit} characters, the output limit; shorten it, or "
                        "raise the limit (PROFILES_MAX_OUTPUT_CHARS, or Renderer(max_output_chars=…))",
                        template=compiled.name,
                        limit="PROFILES_MAX_OUTPUT_CHARS",
                    )
                parts += batch
        except RenderError as exc:
            if type(exc) is not RenderError or exc.template is not None or exc.line is not None:
                raise
            # the loader refused a name an include or extends gives ('..', a hidden file): say which line did
            raise _located(exc, compiled) from None
        except Exception as exc:  # MemoryError and RecursionError included: the process stays unharmed
            raise _render_error(exc, compiled) from None
        finally:
            current_budget.reset(token)
        return "".join(parts)

    # compiling -----------------------------------------------------------------------------

    def _compile(self, source: str, name: str) -> CompiledTemplate:
        self._refresh()
        try:
            ast = self.env.parse(source, name, name)
            own = analyse(self.env, ast, name)
            code = self.env.compile(ast, name, name)
        except TemplateSyntaxError as exc:
            raise RenderError(
                f"template {name!r} line {exc.lineno}: {exc.message}; {_syntax_hint(exc)}", template=name,
                line=exc.lineno,
            ) from None
        except (RecursionError, MemoryError, SyntaxError, ValueError) as exc:
            raise RenderError(
                f"template {name!r} is too complex to compile ({type(exc).__name__}); simplify it", template=name
            ) from None
        template = self.env.template_class.from_code(self.env, code, self.env.make_globals(None), None)
        joined = self._join(own, frozenset({name}))
        return CompiledTemplate(name, source, template, joined.variables, joined.closed, joined.files)

    def _join(self, own: FileAnalysis, visiting: frozenset[str]) -> _Union:
        """`own`'s variables with those of each file it extends, includes or imports with context."""
        variables = dict(own.variables)
        closed = True
        files: list[str] = []
        for reference in own.references:
            if not reference.with_context:
                continue  # an import without context sees none of this template's variables
            if not reference.names:
                closed = False
                continue
            for target in reference.names:  # the first that exists, as Jinja's select_template picks
                other = self._file(target, visiting)
                if other is not _ABSENT:
                    break
            else:
                continue
            closed = closed and other.closed
            files.extend(item for item in (target, *other.files) if item not in files)
            for item in other.variables.values():
                if item.name in own.stored:
                    continue  # set by this template before it includes the other, or passed in a loop
                mine = variables.get(item.name)
                if mine is None:
                    variables[item.name] = item
                elif item.optional and not mine.optional:
                    variables[item.name] = replace(mine, optional=True)
        return _Union(variables, closed, tuple(files))

    def _file(self, name: str, visiting: frozenset[str]) -> _Union:
        """A referenced file's joined variables, worked out once per renderer."""
        known = self._files.get(name)
        if known is not None:
            return known  # type: ignore[no-any-return]
        if name in visiting:
            return _Union({}, True, ())  # a template that includes itself adds nothing new
        try:
            source, _filename, _uptodate = self.env.loader.get_source(self.env, name)
            tree = self.env.parse(source, name, name)
        except (_JinjaNotFound, TemplateSyntaxError, RenderError):
            return _ABSENT  # Jinja reports it, with file and line, when a render reaches it
        joined = self._join(analyse(self.env, tree, name), visiting | {name})
        self._files.put(name, joined)
        return joined


def _context(template: Template, variables: Mapping[str, Any]) -> Any:
    """The context `template.new_context(variables)` makes, made with less work.

    Jinja copies the template's globals (a `ChainMap` over the environment's) into every render's
    context, and then copies their names into a set, both in Python, which costs more than a
    short prompt's render. A template compiled here has no globals of its own (the `ChainMap`'s
    first map is empty), so its context is the environment's globals and the variables in one
    dict, made in C; the set of global names only tells an imported template which globals the
    importer has that it lacks, and it lacks none, since both have the environment's.
    """
    scope = template.globals
    env = template.environment
    if type(scope) is not ChainMap or len(scope.maps) != 2 or scope.maps[0] or scope.maps[1] is not env.globals:
        return template.new_context(dict(variables))  # globals of its own: as Jinja does it
    return env.context_class(env, {**env.globals, **variables}, template.name, template.blocks)


def _syntax_hint(exc: TemplateSyntaxError) -> str:
    """How to fix a syntax error: an unknown tag or filter is missing code; anything else, braces."""
    message = exc.message or ""
    if "unknown tag" in message:
        return (
            "a tag of another framework needs its Jinja extension: add it with Renderer.add_extension, "
            "profiles.register_extension or the agent_profiles.jinja entry point"
        )
    if "No filter named" in message or "No test named" in message:
        return (
            "register it in Python (Renderer.add_filter / add_test, profiles.register_filter / register_test, "
            "or the agent_profiles.jinja entry point)"
        )
    return "fix the syntax, or keep literal braces with {% raw %}…{% endraw %}"


def _render_error(exc: BaseException, compiled: CompiledTemplate) -> RenderError:
    """A `RenderError` naming the file and line the error happened in, and the bound if one tripped."""
    name, line = _template_line(exc)
    if isinstance(exc, TemplateSyntaxError):  # an included file that does not parse
        name, line = exc.name or name, exc.lineno
    at = f" line {line}" if line else ""
    if name is None or name == compiled.name:
        name, where = compiled.name, compiled.label + at
    else:
        where = f"template {name!r}{at} (from {compiled.label})"
    limit = getattr(exc, "bound", None)
    remedy = _remedy(exc, limit)
    message = f"{where}: {_describe(exc)}" + (f"; {remedy}" if remedy else "")
    return RenderError(message, template=name, line=line, limit=limit)


def _located(exc: RenderError, compiled: CompiledTemplate) -> RenderError:
    """`exc`, raised where no template was known, with the file and line of the render it stopped."""
    name, line = _template_line(exc)
    at = f" line {line}" if line else ""
    if name is None or name == compiled.name:
        name, where = compiled.name, compiled.label + at
    else:
        where = f"template {name!r}{at} (from {compiled.label})"
    return RenderError(f"{where}: {exc.message}", template=name, line=line, limit=exc.limit)


def _remedy(exc: BaseException, limit: str | None) -> str:
    """How to fix a render that failed: each kind of failure has its own way out ("" when the
    error's own message already says it, as a refused construct's does)."""
    if limit is not None:
        return "make the template do less work: the bound keeps one render from taking the machine"
    if isinstance(exc, LimitExceeded):
        return ""
    if isinstance(exc, SecurityError):
        return "the sandbox refuses this; use the value itself rather than its Python internals"
    if isinstance(exc, TemplateSyntaxError):
        return "fix the syntax at that line"
    if isinstance(exc, UndefinedError):
        return "pass the missing value, or test it with `is defined` in the template"
    return "fix the expression at that line, or the values it is given"


def _template_line(exc: BaseException) -> tuple[str | None, int | None]:
    """The template and line an exception was raised in: the innermost frame of Jinja's code."""
    found: tuple[str | None, int | None] = (None, None)
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        template = frame.f_globals.get("__jinja_template__")
        if template is not None:
            found = (template.name, template.get_corresponding_lineno(lineno))
    return found


def _literal_names(template: nodes.Expr) -> list[str]:
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
        names.extend(_literal_names(node.template))
    return tuple(dict.fromkeys(names))


@lru_cache(maxsize=1)
def _parser() -> Any:
    return make_environment(None)


def _describe(exc: BaseException) -> str:
    text = str(exc).rstrip(". ") or type(exc).__name__
    if len(text) > 300:
        text = text[:300] + "…"
    return f"{type(exc).__name__}: {text}"


_renderers: dict[Any, Renderer] = {}
_renderers_lock = threading.Lock()
_MAX_RENDERERS = 64


def get_renderer(user_roots: Iterable[Path] = (), sources: Mapping[str, str] | None = None) -> Renderer:
    """The shared renderer for these user roots (searched before the bundled templates) and these
    named `sources`; profiles whose parts are the same texts share one, and its compiled templates."""
    return _shared_renderer((*(Path(root) for root in user_roots), bundled_root()), sources)


def _restore_renderer(
    roots: tuple[Path, ...],
    sources: Mapping[str, str],
    max_output_chars: int,
    max_render_seconds: float,
    additions: plugins.JinjaAdditions,
) -> Renderer:
    """A renderer unpickled: the shared one of its roots and sources when it adds nothing of its own."""
    if not (additions.filters or additions.tests or additions.globals or additions.extensions):
        shared = _shared_renderer(roots, sources or None)
        if (shared.max_output_chars, shared.max_render_seconds) == (max_output_chars, max_render_seconds):
            return shared
    return Renderer(
        roots,
        sources=sources,
        max_output_chars=max_output_chars,
        max_render_seconds=max_render_seconds,
        filters=additions.filters,
        tests=additions.tests,
        globals=additions.globals,
        extensions=additions.extensions,
    )


def _shared_renderer(roots: tuple[Path, ...], sources: Mapping[str, str] | None) -> Renderer:
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
