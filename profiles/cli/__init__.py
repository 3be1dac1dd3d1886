"""The `profiles` command line: every click command, and everything that draws on a terminal.

The library never prints: it reports progress through callbacks and returns what the commands
print. click and rich are imported here and nowhere else in the package.
"""

from __future__ import annotations

from .main import cli, main

__all__ = ["cli", "main"]
