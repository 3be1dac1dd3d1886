"""`profiles report`: a population's coverage and distinctness, as a small chart or as JSON.

The figures come from `profiles.report`; this module only draws them, with rich, which prints
plain text when the output is not a terminal. `generate` and `batch` print the same chart at
their end.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..report import DiversityReport

__all__ = ["report", "show_report"]

#: Width of the longest bar, in characters.
BAR = 24


def _bar(share: float) -> str:
    cells = max(0.0, min(1.0, share)) * BAR
    whole = int(cells)
    return "█" * whole + ("▌" if cells - whole >= 0.5 else "")


def _percent(share: float) -> str:
    return f"{share * 100:.1f}%"


def show_report(result: DiversityReport, *, err: bool = False, title: str | None = None) -> None:
    """Draw a report: counts, each attribute against its target, the similarity histogram."""
    from rich.console import Console
    from rich.table import Table

    # soft wrap: a long path in a line is printed whole, never broken into two lines
    console = Console(file=sys.stderr if err else sys.stdout, highlight=False, soft_wrap=True)
    count = result.count
    heading = title or "personas"
    console.print(
        f"[bold]{heading}[/bold]: {count:,} persona(s), {result.distinct_names:,} distinct name(s)"
    )
    for attribute in result.attributes:
        table = Table(title=None, box=None, show_header=True, pad_edge=False, header_style="bold")
        table.add_column(f"{attribute.name} ({attribute.kind})", no_wrap=True)
        if attribute.kind in ("categorical", "list") and attribute.counts:
            table.add_column("count", justify="right")
            table.add_column("share", justify="right")
            if attribute.target is not None:
                table.add_column("target", justify="right")
            table.add_column("", no_wrap=True)
            for value, seen in attribute.counts.items():
                share = seen / count if count else 0.0
                row = [value, f"{seen:,}", _percent(share)]
                if attribute.target is not None:
                    row.append(_percent(attribute.target.get(value, 0.0) / count) if count else "-")
                row.append(f"[cyan]{_bar(share)}[/cyan]")
                table.add_row(*row)
            console.print(table)
            if attribute.largest_deviation is not None and abs(attribute.largest_deviation["points"]) < 0.05:
                console.print("  every value on its target")
            elif attribute.largest_deviation is not None:
                deviation = attribute.largest_deviation
                console.print(
                    f"  largest deviation: {deviation['value']} {deviation['points']:+.1f} points "
                    f"({_percent(deviation['observed'])} against {_percent(deviation['target'])})"
                )
        elif attribute.kind == "number" and attribute.numbers:
            numbers = attribute.numbers
            console.print(
                f"{attribute.name} (number): min {numbers['min']:g}, mean {numbers['mean']:.2f}, max {numbers['max']:g}"
            )
        elif attribute.kind == "row":
            console.print(f"{attribute.name} (rows): {attribute.distinct or 0:,} distinct row(s)")
    if result.histogram is None:
        if result.note:
            console.print(f"similarity: not measured ({result.note})")
        return
    if not result.histogram:
        return
    table = Table(box=None, show_header=True, pad_edge=False, header_style="bold")
    table.add_column(f"nearest neighbour ({result.neighbours})", no_wrap=True)
    table.add_column("personas", justify="right")
    table.add_column("", no_wrap=True)
    most = max(item["count"] for item in result.histogram) or 1
    for item in result.histogram:
        share = item["count"] / most
        colour = "red" if item["from"] >= 0.8 else "yellow" if item["from"] >= 0.6 else "green"
        bar = f"[{colour}]{_bar(share)}[/{colour}]"
        table.add_row(f"{item['from']:.1f}–{item['to']:.1f}", f"{item['count']:,}", bar)
    console.print(table)
    if result.near_duplicates is not None:
        shares = ", ".join(f"≥ {level}: {_percent(share)}" for level, share in result.near_duplicates.items())
        console.print(f"near-duplicates (nearest neighbour {shares})")


def report_of(path: Path, plan_path: Path | None) -> DiversityReport:
    """The report of a JSONL file, against a plan file when one is named."""
    from ..factories.plan import load_plan
    from ..report import diversity_report, read_personas

    plan = load_plan(plan_path) if plan_path is not None else None
    return diversity_report(read_personas(path), plan)


@click.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--plan",
    "plan_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The sampling plan the personas were drawn with, to compare each attribute with its target.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def report(path: Path, plan_path: Path | None, as_json: bool) -> None:
    """Show how distinct a JSONL file of personas is and what it covers.

    Count, distinct names, each planned attribute against its target (with the largest
    deviation), the histogram of nearest-neighbour similarity and the share of near-duplicates.

    \b
    Example:
      profiles report personas.jsonl --plan plan.yaml
      profiles report personas.jsonl --json
    """
    result = report_of(path, plan_path)
    if as_json:
        click.echo(json.dumps(result.as_dict(), ensure_ascii=False, indent=2))
    else:
        show_report(result, title=str(path))
