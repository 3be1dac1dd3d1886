"""Run hostile inputs in a child process under a memory cap, so a failure cannot take the runner down."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

#: Address space a child may use; a bound that fails shows as a MemoryError, not a dead runner.
CHILD_MEMORY_BYTES = 1_500_000_000

#: Wall-clock seconds a child may take; every case must end well within it.
CHILD_SECONDS = 30

_CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    from profiles.errors import ProfilesError
    from profiles.rendering.renderer import Renderer

    source = sys.stdin.read()
    renderer = Renderer(())
    start = time.monotonic()
    try:
        text = renderer.render(renderer.compile(source, "hostile"), {{}})
        result = {{"ok": True, "chars": len(text), "text": text[:200]}}
    except ProfilesError as exc:
        result = {{"ok": False, "type": type(exc).__name__, "message": exc.message}}
    result["seconds"] = time.monotonic() - start
    # VmHWM is this process's own peak: ru_maxrss also counts the parent's memory it was forked from
    with open("/proc/self/status") as status:
        hwm = [line for line in status if line.startswith("VmHWM:")]
    own = int(hwm[0].split()[1]) if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result["peak_bytes"] = own * 1024
    print(json.dumps(result))
    """
)


def render_in_child(source: str) -> dict:
    """Compile and render `source` in a capped child; the child's outcome as a dict.

    A child that dies, or lets anything but a `ProfilesError` escape, fails the test with its stderr.
    """
    code = _CHILD.format(limit=CHILD_MEMORY_BYTES)
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=source,
        capture_output=True,
        text=True,
        timeout=CHILD_SECONDS,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def child_render():
    return render_in_child
