"""Progress bars on standard error for the long commands (`batch`, `generate`), drawn with rich.

The library reports progress through callbacks (`run_batch(options, progress)`) and iterators;
these bars turn those reports into something a person watches. They draw only on a terminal.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["batch_progress", "format_rate", "persona_progress"]


def format_rate(per_second: float) -> str:
    """A rate as every command shows it: three significant figures, thousands separated.

    2,181 rows/s, 123, 12.3, 1.23, 0.0519: one format, whether a batch makes thousands of rows a
    second or a model writes a persona every few seconds.
    """
    if per_second <= 0:
        return "0"
    decimals = max(0, 2 - math.floor(math.log10(per_second)))
    return f"{per_second:,.{decimals}f}"


def _columns(label: str, unit: str) -> list[Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, ProgressColumn, TextColumn, TimeRemainingColumn
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{format_rate(speed)} {unit}/s" if speed else f"- {unit}/s", style="progress.data.speed")

    return [TextColumn(label), BarColumn(), MofNCompleteColumn(), RateColumn(), TimeRemainingColumn()]


@contextmanager
def batch_progress() -> Iterator[Callable[[int, int | None], None]]:
    """A bar for `profiles batch`; yields the `progress(done, total)` callback `run_batch` takes."""
    from rich.console import Console
    from rich.progress import Progress

    with Progress(*_columns("[bold]batch", "rows"), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("batch", total=None)

        def progress(done: int, total: int | None) -> None:
            bar.update(task, completed=done, total=total)

        yield progress


def persona_progress(*, disable: bool = False) -> Any:
    """A bar for `profiles generate` with rate and time left; silent when stderr is not a terminal."""
    from rich.console import Console
    from rich.progress import Progress

    return Progress(
        *_columns("personas", "personas"),
        console=Console(file=sys.stderr),
        disable=disable or not sys.stderr.isatty(),
    )
