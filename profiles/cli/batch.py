"""The `profiles batch` command: options, a progress bar on stderr, and a summary."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from ..batch import STDOUT, BatchError, BatchOptions, BatchReport, default_workers, parse_shard, run_batch
from .options import refuse_undecodable
from .progress import batch_progress

__all__ = ["batch"]


def _shard(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    try:
        return parse_shard(value)
    except BatchError as exc:
        raise click.BadParameter(exc.message) from None


@click.command()
@click.option(
    "--from",
    "source",
    required=True,
    type=click.Path(path_type=Path),
    help="The dataset: .csv, .tsv, .jsonl, .yaml or .parquet.",
)
@click.option(
    "--map",
    "mapping",
    type=click.Path(path_type=Path),
    help="Mapping file: {fields: {persona_field: column_or_template}, id: column}.",
)
@click.option("--base", type=click.Path(path_type=Path), help="Persona YAML holding what every row shares.")
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="A .jsonl file, a folder for one YAML file per persona, or - for JSON lines on standard output.",
)
@click.option("--render", is_flag=True, help="Also render each persona's system and user prompts.")
@click.option("--question", "-q", help="The question the rendered prompts answer.")
@click.option(
    "--shard",
    callback=_shard,
    metavar="I/N",
    help="Make only shard I of N (0-based, e.g. 0/3): rows whose id's CRC-32 modulo N is I, or row number "
    "minus one without an id column.",
)
@click.option("--resume", is_flag=True, help="Continue an interrupted batch from its checkpoint.")
@click.option("--force", is_flag=True, help="Start over, replacing an earlier batch's output.")
@click.option(
    "--on-error",
    type=click.Choice(["raise", "skip", "collect"]),
    default="raise",
    show_default=True,
    help="A bad row stops the batch, is left out, or is left out and listed.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "tsv", "jsonl", "yaml", "parquet"]),
    help="Dataset format, when the suffix does not tell.",
)
@click.option(
    "--deployment",
    "-d",
    help="The deployment every persona is made for: picks the base's overlay and .env.<deployment>. "
    "Default: $PROFILES_DEPLOYMENT.",
)
@click.option("--language", "-l", help="Answer language and template locale of every persona, e.g. zh; wins over rows.")
@click.option("--model", "-m", help="The model the prompts are for, for every persona; wins over rows.")
@click.option(
    "--workers",
    "-w",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Processes that make the rows (default: the machine's cores). The input is read once; the output "
    "is written in input order, the same bytes whatever N.",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="local: this machine's processes (--workers). ray: a Ray cluster (the ray extra), writing shards into "
    "the --out folder.",
)
@click.option("--address", metavar="ADDR", help="With --engine ray: the cluster to join, e.g. ray://head:10001.")
@click.option("--quiet", is_flag=True, help="No progress bar, summary or diversity report.")
def batch(
    source: Path,
    mapping: Path | None,
    base: Path | None,
    out: Path,
    render: bool,
    question: str | None,
    shard: tuple[int, int] | None,
    resume: bool,
    force: bool,
    on_error: str,
    fmt: str | None,
    deployment: str | None,
    language: str | None,
    model: str | None,
    workers: int | None,
    engine: str,
    address: str | None,
    quiet: bool,
) -> None:
    """Make one validated persona per row of a dataset.

    \b
    Example:
      profiles batch --from profile_configs/datasets/customers.csv \\
        --map profile_configs/datasets/customers.map.yaml \\
        --base profile_configs/datasets/support_agent.yaml --out personas.jsonl --render

    After a crash or Ctrl-C, run the same command with --resume: it continues where the last
    checkpoint left off, without losing or repeating a persona.
    """
    for option, text in (("--question", question), ("--deployment", deployment), ("--language", language),
                         ("--model", model), ("--address", address)):
        refuse_undecodable(text, option, option)  # it would reach every persona and prompt written
    if question is not None and not render:
        raise click.UsageError("--question is only used to render prompts; add --render")
    if resume and force:
        raise click.UsageError("--resume continues a batch and --force starts over; pass one of them")
    if address is not None and engine != "ray":
        raise click.UsageError("--address names a Ray cluster; add --engine ray")
    options = BatchOptions(
        source=source,
        out=out,
        mapping=mapping,
        base=base,
        render=render,
        question=question,
        shard=shard,
        resume=resume,
        force=force,
        on_error=on_error,
        format=fmt,
        deployment=deployment,
        language=language,
        model=model,
        workers=workers or (default_workers() if engine == "local" else 1),
    )
    show = not quiet and sys.stderr.isatty()
    try:
        with _stopping_on_sigterm() as stopped:
            run = _engine(engine, address)
            if show:
                with batch_progress() as progress:
                    report = run(options, progress)
            else:
                report = run(options, None)
    except KeyboardInterrupt:
        # Ctrl-C and SIGTERM alike: the rows up to the last checkpoint are kept
        hint = "" if str(out) == STDOUT else f"; run the same command with --resume to continue {out}"
        click.echo(f"\n{'terminated' if stopped else 'interrupted'}{hint}", err=True)
        sys.exit(128 + (signal.SIGTERM if stopped else signal.SIGINT))
    if not quiet:
        click.echo(_summary(report), err=True)
        if _is_jsonl_out(out) and out.exists() and not report.already_complete:
            from ..report import diversity_report, read_personas
            from .report import show_report

            show_report(diversity_report(read_personas(out)), err=True, title=str(out))
    if report.failed and on_error == "collect":
        for issue in report.issues:
            click.echo(f"  {issue}", err=True)
        more = f" (first {len(report.issues)} shown)" if report.failed > len(report.issues) else ""
        if report.listed < report.failed:  # resumed after a run that skipped bad rows without listing them
            raise BatchError(
                f"{report.failed} bad row(s) were left out{more}; {report.listed} of them are listed in "
                f"{report.errors_file}, the other {report.failed - report.listed} were left out by a run without "
                "--on-error collect (run again with --force to list all)"
            )
        raise BatchError(
            f"{report.failed} bad row(s) were left out{more}; all are listed in {report.errors_file}"
        )


def _is_jsonl_out(out: Path) -> bool:
    return out.suffix == ".jsonl"


def _summary(report: BatchReport) -> str:
    if report.already_complete:
        return f"{report.out} is already complete: {report.written} persona(s); nothing to do"
    where = "standard output" if str(report.out) == STDOUT else report.out
    text = f"wrote {report.written} persona(s) to {where}"
    if report.resumed_from:
        text += f" (resumed after row {report.resumed_from})"
    if report.failed:
        text += f"; left out {report.failed} bad row(s)"
    return text


@contextmanager
def _stopping_on_sigterm() -> Iterator[list[int]]:
    """Let SIGTERM (what `kill`, systemd and container runtimes send) stop a batch the way Ctrl-C does.

    Yields a list that holds the signal once one arrived. The handler raises `KeyboardInterrupt`,
    which nothing in the library catches, so the batch stops where Ctrl-C would, its checkpoint
    intact. Outside the main thread signals cannot be handled, and SIGTERM keeps its default.
    """
    stopped: list[int] = []

    def stop(signum: int, frame: Any) -> None:
        stopped.append(signum)
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread
        yield stopped
        return
    try:
        yield stopped
    finally:
        signal.signal(signal.SIGTERM, previous)


def _engine(engine: str, address: str | None) -> Any:
    """The function that runs the batch: here, or on Ray (imported only then)."""
    if engine == "ray":
        from ..batch_ray import run_batch_ray

        return lambda options, progress: run_batch_ray(options, address=address, progress=progress)
    return run_batch
