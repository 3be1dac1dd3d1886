"""Published denial-of-service payloads, and every hostile template, end in a bound's RenderError.

- vLLM #52025, "a 116-byte request body costs 55 CPU-seconds": three nested loops of 999 in a chat
  template (the text its fix quotes);
- Haystack #9402: the nested-loop template of the issue's proof of concept, which prints, and the same
  loops printing nothing.

Each runs in a child process under a memory cap, through `render_chat_template` (the path chat
templates reach a server by) and through `Renderer`; the time limits here only catch a hang.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import CHILD_MEMORY_BYTES, CHILD_SECONDS
from .test_render_bounds import HOSTILE, PEAK_BYTES, SECONDS

VLLM_52025 = (
    "{% for x0 in range(999) %}{% for x1 in range(999) %}{% for x2 in range(999) %}"
    "{% endfor %}{% endfor %}{% endfor %}ok"
)
HAYSTACK_9402 = "{% for i in range(25000) %}{% for j in range(25000) %}x{% endfor %}{% endfor %}"
HAYSTACK_9402_SILENT = "{% for i in range(25000) %}{% for j in range(25000) %}{% endfor %}{% endfor %}"

_CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    from profiles import ProfilesError, render_chat_template
    from profiles.rendering.renderer import Renderer

    path, source = sys.argv[1], sys.stdin.read()
    start = time.monotonic()
    try:
        if path == "chat":
            text = render_chat_template(source, [{{"role": "user", "content": "hi"}}], add_generation_prompt=True)
        else:
            renderer = Renderer(())
            text = renderer.render(renderer.compile(source, "hostile"), {{}})
        result = {{"ok": True, "chars": len(text)}}
    except ProfilesError as exc:
        result = {{"ok": False, "type": type(exc).__name__, "message": exc.message}}
        result["limit"] = getattr(exc, "limit", None)
    result["seconds"] = time.monotonic() - start
    # VmHWM is this process's own peak: ru_maxrss also counts the parent's memory it was forked from
    with open("/proc/self/status") as status:
        hwm = [line for line in status if line.startswith("VmHWM:")]
    own = int(hwm[0].split()[1]) if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result["peak_bytes"] = own * 1024
    print(json.dumps(result))
    """
)


def run(path: str, source: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD.format(limit=CHILD_MEMORY_BYTES), path],
        input=source,
        capture_output=True,
        text=True,
        timeout=CHILD_SECONDS,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_payloads_are_as_published():
    assert len(VLLM_52025.encode()) == 116
    assert len(HAYSTACK_9402.encode()) == 79


@pytest.mark.parametrize("path", ["chat", "renderer"])
@pytest.mark.parametrize(
    ("source", "limit", "words"),
    [
        (VLLM_52025, "MAX_STEPS", "loop iterations"),
        (HAYSTACK_9402, "PROFILES_MAX_OUTPUT_CHARS", "output limit"),
        (HAYSTACK_9402_SILENT, "MAX_STEPS", "loop iterations"),
    ],
    ids=["vllm-52025", "haystack-9402", "haystack-9402-silent"],
)
def test_published_payload_ends_in_a_bound(path, source, limit, words):
    """The render stops at a bound, names it and its setting, and the process is unharmed."""
    result = run(path, source)
    assert not result["ok"], result
    assert result["type"] == "RenderError"
    assert result["limit"] == limit and limit in result["message"] and words in result["message"]
    assert result["seconds"] < SECONDS
    assert result["peak_bytes"] < PEAK_BYTES


@pytest.mark.parametrize("source", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_chat_template_is_bounded(source):
    """A chat template gets the same bounds as any template: an error or a bounded text."""
    result = run("chat", source)
    assert result["seconds"] < SECONDS, result
    assert result["peak_bytes"] < PEAK_BYTES, result
    if not result["ok"]:
        assert result["type"] == "RenderError" and len(result["message"]) < 1000
