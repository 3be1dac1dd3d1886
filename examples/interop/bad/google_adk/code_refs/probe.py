"""Harmless stand-in for a hostile import target: records that it was imported and called."""
import os

_MARK = os.environ.get("ADK_PROBE_FILE", "/tmp/adk_probe_calls.txt")
with open(_MARK, "a") as f:
    f.write("imported\n")


def record_call(*args, **kwargs):
    with open(_MARK, "a") as f:
        f.write(f"called {args!r} {kwargs!r}\n")
    return lambda *a, **k: "probe"
