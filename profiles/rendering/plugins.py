"""Filters, tests, globals and Jinja extensions added to the sandbox, from Python only.

Templates written for another framework use its filters and tags: banks' `lemmatize` and
`{% chat %}`, transformers' `{% generation %}`, a team's own `|money`. They can be added

- to one renderer: `Renderer(roots, filters={...}, tests={...}, globals={...}, extensions=[...])`
  or `renderer.add_filter(name, function)` and its siblings;
- to every renderer of the process: `profiles.register_filter(name, function)`,
  `register_test`, `register_global`, `register_extension`;
- by an installed package, through the `agent_profiles.jinja` entry-point group: each entry point
  names an `Extension` subclass, or a function called with a `JinjaAdditions` to fill in:

  ```toml
  [project.entry-points."agent_profiles.jinja"]
  money = "my_package.prompts:register"     # def register(jinja): jinja.add_filter("money", ...)
  ```

Never from YAML: a persona file can use what is registered, not register anything. Later wins:
entry points, then the process-wide registrations, then a renderer's own. Every registered filter
and global function spends the render's budget and has its result measured like a built-in
filter's (`bounded.sized`); an extension's tags run inside the same sandbox and bounds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jinja2.ext import Extension

from ..errors import RenderError
from .bounded import sized, stepped, wraps_routine

__all__ = [
    "ENTRY_POINT_GROUP",
    "JinjaAdditions",
    "register_extension",
    "register_filter",
    "register_global",
    "register_test",
    "registered",
    "version",
]

#: The entry-point group installed packages add filters, tests, globals and extensions through.
ENTRY_POINT_GROUP = "agent_profiles.jinja"


@dataclass
class JinjaAdditions:
    """Filters, tests, globals and extensions to add to a sandbox; what an entry point fills in."""

    filters: dict[str, Callable[..., Any]] = field(default_factory=dict)
    tests: dict[str, Callable[..., Any]] = field(default_factory=dict)
    globals: dict[str, Any] = field(default_factory=dict)
    extensions: list[type[Extension]] = field(default_factory=list)

    def add_filter(self, name: str, function: Callable[..., Any]) -> None:
        """Add the filter `name` (`{{ value|name(args) }}`)."""
        self.filters[_name(name, "filter")] = _callable(function, f"filter {name!r}")

    def add_test(self, name: str, function: Callable[..., Any]) -> None:
        """Add the test `name` (`{% if value is name %}`)."""
        self.tests[_name(name, "test")] = _callable(function, f"test {name!r}")

    def add_global(self, name: str, value: Any) -> None:
        """Add the global `name`: a function templates call, or a value they read."""
        self.globals[_name(name, "global")] = value

    def add_extension(self, extension: type[Extension]) -> None:
        """Add a Jinja extension class (its tags, filters and globals), e.g. `jinja2.ext.do`."""
        if not (isinstance(extension, type) and issubclass(extension, Extension)):
            raise RenderError(
                f"an extension must be a subclass of jinja2.ext.Extension, got {extension!r}; pass the class itself"
            )
        if extension not in self.extensions:
            self.extensions.append(extension)

    def update(
        self,
        *,
        filters: Mapping[str, Callable[..., Any]] | None = None,
        tests: Mapping[str, Callable[..., Any]] | None = None,
        globals: Mapping[str, Any] | None = None,  # noqa: A002 - Jinja's own name
        extensions: Iterable[type[Extension]] = (),
    ) -> None:
        """Add several at once, as `Renderer(filters=..., ...)` does."""
        for name, function in (filters or {}).items():
            self.add_filter(name, function)
        for name, function in (tests or {}).items():
            self.add_test(name, function)
        for name, value in (globals or {}).items():
            self.add_global(name, value)
        for extension in extensions:
            self.add_extension(extension)

    def __bool__(self) -> bool:
        return bool(self.filters or self.tests or self.globals or self.extensions)

    def apply(self, env: Any) -> None:
        """Add these to a sandbox; filters and global functions are wrapped to spend the budget."""
        for extension in self.extensions:
            if extension.identifier not in env.extensions:
                env.add_extension(extension)
        for name, function in self.filters.items():
            env.filters[name] = sized(function)
        if self.filters:
            # a filter registered under a built-in's name may return more than text: print it with finalize
            env.text_filters = env.text_filters - set(self.filters)
        for name, function in self.tests.items():
            env.tests[name] = stepped(function)
        for name, value in self.globals.items():
            env.globals[name] = sized(value) if wraps_routine(value) else value


def _name(name: Any, what: str) -> str:
    if not isinstance(name, str) or not name or not all(part.isidentifier() for part in name.split(".")):
        raise RenderError(f"a {what} name must be a name templates can write, like 'money'; got {name!r}")
    return name


def _callable(function: Any, what: str) -> Callable[..., Any]:
    if not callable(function):
        raise RenderError(f"{what} must be a function, got {type(function).__name__}")
    return function  # type: ignore[no-any-return]


# process-wide registrations --------------------------------------------------------------------

_lock = threading.Lock()
_registered = JinjaAdditions()
_plugins: JinjaAdditions | None = None
#: Bumped at every registration, so renderers made earlier pick the change up before compiling.
_version = 0


def register_filter(name: str, function: Callable[..., Any]) -> None:
    """Add a filter to every renderer of this process, e.g. `register_filter("money", format_money)`."""
    _register(lambda: _registered.add_filter(name, function))


def register_test(name: str, function: Callable[..., Any]) -> None:
    """Add a test (`{% if x is name %}`) to every renderer of this process."""
    _register(lambda: _registered.add_test(name, function))


def register_global(name: str, value: Any) -> None:
    """Add a global function or value to every renderer of this process."""
    _register(lambda: _registered.add_global(name, value))


def register_extension(extension: type[Extension]) -> None:
    """Add a Jinja extension class to every renderer of this process."""
    _register(lambda: _registered.add_extension(extension))


def _register(change: Callable[[], None]) -> None:
    global _version
    with _lock:
        change()
        _version += 1


def version() -> int:
    """The registration version: it changes whenever something is registered (entry points loaded first)."""
    global _plugins
    if _plugins is None:
        with _lock:
            if _plugins is None:
                _plugins = _load_entry_points()
    return _version


def registered() -> tuple[int, list[JinjaAdditions]]:
    """The registration version and copies of what to add, in order: the entry points', then the process's.

    Entry points are loaded at the first call, once per process; the copies are taken under the
    registry's lock, so a registration in another thread cannot change them while they are applied.
    """
    version()
    with _lock:
        return _version, [_copy(_plugins), _copy(_registered)]  # type: ignore[arg-type]


def _copy(additions: JinjaAdditions) -> JinjaAdditions:
    return JinjaAdditions(
        dict(additions.filters), dict(additions.tests), dict(additions.globals), list(additions.extensions)
    )


def _group_entry_points() -> Any:
    """The installed entry points of `ENTRY_POINT_GROUP`, as `importlib.metadata.entry_points` finds them.

    Parsing every installed package's entry points costs more than a first render; most installs
    name the group nowhere, which one look at each package's raw `entry_points.txt` tells.
    """
    from importlib.metadata import distributions, entry_points

    if not any(ENTRY_POINT_GROUP in (dist.read_text("entry_points.txt") or "") for dist in distributions()):
        return ()
    return entry_points(group=ENTRY_POINT_GROUP)


def _load_entry_points() -> JinjaAdditions:
    additions = JinjaAdditions()
    for point in sorted(_group_entry_points(), key=lambda item: item.name):
        where = f"entry point {point.name!r} ({point.value}) of group {ENTRY_POINT_GROUP}"
        try:
            loaded = point.load()
            if isinstance(loaded, type) and issubclass(loaded, Extension):
                additions.add_extension(loaded)
            elif callable(loaded):
                loaded(additions)
            else:
                raise TypeError(f"it names a {type(loaded).__name__}, not a function or an Extension class")
        except RenderError as exc:
            raise RenderError(f"{where}: {exc.message}") from None
        except Exception as exc:
            raise RenderError(
                f"{where} failed: {type(exc).__name__}: {exc}; fix or uninstall the package that provides it"
            ) from exc
    return additions
