"""Files replaced whole: written beside where they go, then moved into place.

A crash, a kill or a full disk midway leaves the old file or the new one, never a torn one:
checkpoints, batch outputs, exported personas and store exports are all written this way.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: Path, data: str | bytes, *, sync: bool = False) -> None:
    """Write `data` (text as UTF-8, `\\n` kept as it is) to `path` through `.NAME.PID.tmp` beside it.

    With `sync`, the data is fsynced before the move, so even a power cut leaves the old or the
    new file; without it a killed process still does (the move is atomic), and a caller writing
    many files can sync them at once. A temporary file a killed process left keeps that name, for
    the next run to find and remove.
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as file:
            file.write(data.encode("utf-8") if isinstance(data, str) else data)
            if sync:
                file.flush()
                os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
