"""Warnings that point at the caller's line, however deep inside the library they are raised.

A fixed `stacklevel` is right for one call path only: `UnknownModelWarning` is raised from
`create_profile`, `format_system_prompt`, `profiles render` and the batch code at different
depths, and a wrong level names a line of the library, which tells the user nothing. The level
is counted instead, up to the first frame outside this package.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

__all__ = ["warn_at_caller"]

#: The package's folder; frames of files under it are the library's own.
_PACKAGE = str(Path(__file__).resolve().parent) + "/"


def _outside_level() -> int:
    """The stacklevel `warnings.warn`, called by our caller, needs to name the first outside frame."""
    frame = sys._getframe(2)  # the frame that called warn_at_caller
    level = 2
    while frame is not None and _inside(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level


def _inside(filename: str) -> bool:
    if filename.startswith(_PACKAGE):
        return True
    try:
        return str(Path(filename).resolve()).startswith(_PACKAGE)
    except (OSError, ValueError):  # "<string>", a frozen module: not ours
        return False


def warn_at_caller(message: str, category: type[Warning]) -> None:
    """`warnings.warn(message, category)` naming the line of the code that called the library.

    With no such frame (the library calling itself from a thread it started), the outermost
    frame is named, as `warnings` does for a level past the stack.
    """
    warnings.warn(message, category, stacklevel=_outside_level())
