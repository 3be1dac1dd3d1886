"""Start-up of the `profiles` console script: a command imports only what it uses.

Each case runs the real entry point in a fresh interpreter and records, as the process exits,
which modules were loaded and whether the garbage collector is on again.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from profiles.cli import cli

REPO = Path(__file__).resolve().parent.parent
SUMMARIZER = REPO / "profile_configs" / "summarizer.yaml"

#: Run `profiles ARGS…` through `main()`; at exit, write the loaded modules and the collector's state.
_RUN = """
import atexit, gc, json, sys
report = sys.argv[1]

def record():
    with open(report, "w", encoding="utf-8") as out:
        json.dump({"modules": sorted(sys.modules), "gc_enabled": gc.isenabled()}, out)

atexit.register(record)
sys.argv = ["profiles", *sys.argv[2:]]
from profiles.cli import main
main()
"""

#: What `profiles render` of a persona with no store fields never needs.
NOT_FOR_RENDER = (
    "sqlalchemy",
    "rich",
    "profiles.store",
    "profiles.providers.store",
    "profiles.providers.http_store",
    "profiles.batch",
    "profiles.serve",
    "profiles.interop",
    "profiles.adapters",
    "profiles.factories",
    "profiles.generate",
    "profiles.check",
    "profiles.explanation",
    "profiles.provenance",
    "profiles.requests",
    "profiles.inheritance",
    "profiles.review",
    "profiles.cli.batch",
    "profiles.cli.store",
    "profiles.cli.serve",
    "profiles.cli.interop",
    "profiles.cli.generate",
)


def _run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    report = tmp_path / "startup.json"
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(report), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    return done, json.loads(report.read_text(encoding="utf-8"))


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [module for module in modules if any(module == name or module.startswith(name + ".") for name in names)]


def test_render_imports_only_what_it_uses(tmp_path):
    done, seen = _run(tmp_path, "render", str(SUMMARIZER), "-q", "Summarize this")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("===== system prompt =====\nYou are Aristotle.")
    assert "===== write_memory prompt =====" in done.stdout
    assert _loaded(seen["modules"], NOT_FOR_RENDER) == []
    assert seen["gc_enabled"] is True


def test_the_check_sees_what_a_command_does_import(tmp_path):
    """The same check names the modules a render of a request body and `explain` do load."""
    done, seen = _run(tmp_path, "render", str(SUMMARIZER), "--request", "openai-chat", "-m", "gpt-4o")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["model"] == "gpt-4o"
    assert _loaded(seen["modules"], NOT_FOR_RENDER) == ["profiles.requests"]
    done, seen = _run(tmp_path, "explain", str(SUMMARIZER))
    assert done.returncode == 0, done.stderr
    assert "profiles.provenance" in seen["modules"] and "rich" in seen["modules"]
    assert seen["gc_enabled"] is True


def test_the_collector_is_on_again_after_help_and_errors(tmp_path):
    for args in (("--help",), ("render", "--help"), ("render", str(tmp_path / "missing.yaml")), ("nosuch",)):
        done, seen = _run(tmp_path, *args)
        assert done.returncode == (0 if "--help" in args else 2), (args, done.stderr)
        assert seen["gc_enabled"] is True, args


def test_the_group_used_from_python_leaves_the_collector_alone():
    frozen = gc.get_freeze_count()
    result = CliRunner().invoke(cli, ["render", str(SUMMARIZER), "-q", "Summarize this", "--kind", "system"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("You are Aristotle.")
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen


def test_every_preloaded_module_exists():
    """A module renamed in the library must be renamed here too, or its command would fail to start."""
    import importlib.util

    from profiles.cli.main import COMMANDS, PRELOAD

    for command, modules in PRELOAD.items():
        assert command in COMMANDS
        for module in modules:
            assert importlib.util.find_spec(f"profiles.{module}") is not None, (command, module)
