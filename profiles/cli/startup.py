"""Start-up of the `profiles` process: imports run without the cyclic garbage collector.

A command's start-up is mostly imports (click, pydantic, Jinja and the library's own modules),
and everything they allocate lives as long as the process. Python's collector still walks those
objects again and again while they are created, and at every later collection. So the console
script pauses the collector while the command and the library modules it uses are imported, then
freezes what exists (`gc.freeze`: kept, never walked again) and turns the collector back on before
the command does its work, so a long `batch` or `serve` collects its own garbage as usual.

Only `main()` pauses: the command group used from Python (click's test runner, an application
embedding it) never touches the collector.
"""

from __future__ import annotations

import gc

__all__ = ["pause", "resume"]

_paused = False


def pause() -> None:
    """Turn the collector off for start-up, unless something else already did."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """End start-up: freeze what the imports made and turn the collector back on. Idempotent."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
