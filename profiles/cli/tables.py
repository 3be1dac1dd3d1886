"""Tables and JSON for read commands: one look for every listing, and `--json` for scripts.

A table is drawn with rich, without colour or box lines so it reads the same in a terminal, a
pipe or a log; off a terminal it is as wide as its content (up to 200 columns) instead of the
terminal's width, so nothing is cut. `--json` output is the same data, whole.

A cell's control characters are shown as escapes (`\x1b`): names, labels and notes come from
whoever wrote to the store, and an escape sequence printed as it is would drive the reader's
terminal (set its title, hide text, …).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import Any

import click

__all__ = ["echo_json", "echo_table"]

#: Widest table printed off a terminal, where there is no width to fit.
PIPE_WIDTH = 200

#: Characters a terminal may act on rather than show: C0 but tab and newline, DEL, and C1.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def echo_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], *, title: str | None = None) -> None:
    """Print rows under a header; `None` shows as `-`."""
    from rich.console import Console  # imported here: only read commands draw tables
    from rich.table import Table

    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False, title=title, title_justify="left")
    for index, column in enumerate(columns):
        # the first column (a name or a version) never wraps; the others fold if they must
        table.add_column(column, no_wrap=index == 0, overflow="fold")
    for row in rows:
        table.add_row(*("-" if cell is None or cell == "" else _shown(str(cell)) for cell in row))
    console = Console(width=None if sys.stdout.isatty() else PIPE_WIDTH, highlight=False, markup=False)
    with console.capture() as captured:
        console.print(table)
    click.echo("\n".join(line.rstrip() for line in captured.get().splitlines()))


def _shown(text: str) -> str:
    return _CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


def echo_json(data: Any) -> None:
    """Print `data` as indented JSON, non-ASCII text as it is."""
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
