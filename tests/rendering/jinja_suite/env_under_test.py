"""pytest plugin: run Jinja's own tests (tests/, unmodified copies from the jinja2 3.1.6 sdist) against
another environment class.

Jinja's tests build environments three ways: the `env` fixture in conftest.py, module-level fixtures,
and direct `Environment(...)`, `SandboxedEnvironment(...)` or `ImmutableSandboxedEnvironment(...)`
calls (some subclass those names). For each test this plugin rebinds those three names, in every test
module and in conftest, to the class chosen with `--env-factory`:

  stock       no substitution: the suite as Jinja runs it
  immutable   every environment is jinja2's ImmutableSandboxedEnvironment, built with the test's options
  profiles    every environment is this package's sandbox as `make_environment` builds it (undefined,
              finalize, whitespace options, extensions, globals, bounded filters), the test's own
              options overriding those, its extensions added to ours

Because the names are rebound to classes, subclassing (`class CustomEnvironment(Environment)`) and class
attributes (`intercepted_binops`) keep working. `Template("...")` without an environment is not
redirected: it uses Jinja's shared environment.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.dont_write_bytecode = True

NAMES = ("Environment", "SandboxedEnvironment", "ImmutableSandboxedEnvironment")
TESTS_DIR = Path(__file__).resolve().parent / "tests"


def _profiles_class() -> type:
    from profiles.rendering.sandbox import make_environment

    reference = make_environment()
    base = type(reference)
    defaults = {
        "undefined": reference.undefined,
        "autoescape": reference.autoescape,
        "trim_blocks": reference.trim_blocks,
        "lstrip_blocks": reference.lstrip_blocks,
        "keep_trailing_newline": reference.keep_trailing_newline,
        "auto_reload": reference.auto_reload,
        "finalize": reference.finalize,
    }
    ours = list(reference.extensions.values())
    filters, globals_ = dict(reference.filters), dict(reference.globals)

    def __init__(self, *args, **kwargs):  # noqa: N807
        options = {**defaults, **kwargs}
        theirs = list(options.pop("extensions", ()))
        base.__init__(self, *args, **options)
        for extension in [*(type(item) for item in ours), *theirs]:
            self.add_extension(extension)
        self.globals = dict(globals_)
        self.filters.update(filters)

    return type("ProfilesEnvironmentUnderTest", (base,), {"__init__": __init__, "__module__": __name__})


def resolve(name: str) -> type | None:
    if name == "stock":
        return None
    if name == "immutable":
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        return ImmutableSandboxedEnvironment
    if name == "profiles":
        return _profiles_class()
    raise pytest.UsageError(f"unknown --env-factory {name!r}; use stock, immutable or profiles")


def pytest_addoption(parser):
    parser.addoption("--env-factory", default="stock", help="the environment class Jinja's tests run against")


def pytest_configure(config):
    config._env_under_test = resolve(config.getoption("--env-factory"))


@pytest.fixture(autouse=True)
def _environment_under_test(request, monkeypatch):
    cls = request.config._env_under_test
    if cls is not None:
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if path and Path(path).resolve().parent == TESTS_DIR:
                for name in NAMES:
                    if hasattr(module, name):
                        monkeypatch.setattr(module, name, cls)
    yield
