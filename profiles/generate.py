"""`profiles generate`: write personas made by a model to a JSONL file, one persona per line.

Each line holds the persona's fields as plain values and an ``_origin`` object (model, request
id, prompt hash, seed, batch, fix round). Lines go to ``OUT.partial`` as they are made, each
flushed at once, so a crash or Ctrl-C loses nothing already written; at the end the file is
fsynced and renamed to ``OUT``, so ``OUT`` is either the whole result or untouched.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import IO, Any

import click

from .errors import ConfigError, ConfigIssue, FactoryError

__all__ = ["generate"]

#: Largest rules file read, in bytes: rules go into every request.
MAX_RULES_BYTES = 100_000


class _JsonlWriter:
    """Appends lines to ``OUT.partial`` (flushed each line) and renames it to ``OUT`` on commit.

    Without a path, lines go to standard output. Kept private and small: the batch command has a
    JSONL writer of its own, and the two are meant to become one.
    """

    def __init__(self, out: Path | None) -> None:
        self.out = out
        self.partial = out.with_name(out.name + ".partial") if out is not None else None
        self.lines = 0
        self._file: IO[str] | None = None
        if self.partial is not None:
            if self.partial.exists():
                raise FactoryError(
                    f"{self.partial} exists, left by an earlier run that did not finish; "
                    "keep its personas by moving it elsewhere, or delete it, then run again."
                )
            try:
                # "x": never write over a file another run has just created
                self._file = open(self.partial, "x", encoding="utf-8")  # noqa: SIM115 (closed in commit/close)
            except OSError as exc:
                raise FactoryError(
                    f"cannot write {self.partial} ({exc.strerror or type(exc).__name__}); "
                    "check that its folder exists and is writable."
                ) from None

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False)
        if self._file is None:
            click.echo(line)
        else:
            self._file.write(line + "\n")
            self._file.flush()
        self.lines += 1

    def commit(self) -> None:
        """Make the output whole: fsync the partial file and rename it over ``OUT``."""
        if self._file is None or self.partial is None or self.out is None:
            return
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self._file = None
        os.replace(self.partial, self.out)

    def close(self) -> None:
        """Close without committing: what was written stays in ``OUT.partial``; an empty one goes."""
        if self._file is not None:
            self._file.close()
            self._file = None
            if not self.lines and self.partial is not None:
                self.partial.unlink(missing_ok=True)


def _read_rules(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(ConfigIssue(f"cannot read the rules file ({exc.strerror or exc})", file=str(path))) from None
    if len(data) > MAX_RULES_BYTES:
        raise ConfigError(
            ConfigIssue(f"the rules file is over {MAX_RULES_BYTES} bytes; shorten it", file=str(path))
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            ConfigIssue(f"the rules file is not UTF-8 text (byte {exc.start}); save it as UTF-8", file=str(path))
        ) from None
    if not text.strip():
        raise ConfigError(ConfigIssue("the rules file is empty; say what the personas should be like", file=str(path)))
    return text


def _progress() -> Any:
    """A progress bar on stderr with rate and time left; silent when stderr is not a terminal."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class _Rate(ProgressColumn):
        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:.2f}/s" if speed else "-/s", style="progress.data.speed")

    console = Console(file=sys.stderr)
    return Progress(
        TextColumn("personas"),
        BarColumn(),
        MofNCompleteColumn(),
        _Rate(),
        TimeRemainingColumn(),
        console=console,
        disable=not sys.stderr.isatty(),
    )


@click.command()
@click.option("--base-url", required=True, help="The API root of an OpenAI-compatible server, e.g. http://localhost:8000/v1.")
@click.option("--model", required=True, help="The model that writes the personas.")
@click.option("--count", required=True, type=click.IntRange(min=1), help="How many distinct personas to make.")
@click.option(
    "--rules",
    "rules_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A text file saying what the personas should be like.",
)
@click.option(
    "--examples",
    "example_files",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    metavar="PERSONA.yaml",
    help="A persona file (or folder of them) to show the model; repeatable. Their names are taken.",
)
@click.option("--seed", type=int, help="Batch i is sent with seed + i, for reproducible runs.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The JSONL file to write; standard output when left out.",
)
@click.option(
    "--api-key-env",
    default="OPENAI_API_KEY",
    show_default=True,
    metavar="NAME",
    help="The environment variable holding the API key.",
)
@click.option("--batch-size", default=5, show_default=True, type=click.IntRange(min=1), help="Personas per request.")
@click.option("--max-in-flight", default=4, show_default=True, type=click.IntRange(min=1), help="Requests at once.")
@click.option(
    "--max-batches",
    type=click.IntRange(min=1),
    help="Batch requests to send at most before giving up; twice what --count needs, plus two, by default.",
)
@click.option("--language", "-l", help="The language the personas are written in, e.g. en, zh.")
@click.option(
    "--timeout",
    default=60.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds to wait for one reply.",
)
def generate(
    base_url: str,
    model: str,
    count: int,
    rules_file: Path,
    example_files: tuple[Path, ...],
    seed: int | None,
    out: Path | None,
    api_key_env: str,
    batch_size: int,
    max_in_flight: int,
    max_batches: int | None,
    language: str | None,
    timeout: float,
) -> None:
    """Ask a model for --count distinct personas and write them as JSONL, one per line.

    \b
    Example:
      profiles generate --base-url http://localhost:8000/v1 --model qwen2.5-7b-instruct \\
          --count 20 --rules rules.txt --examples profile_configs/summarizer.yaml \\
          --seed 1 --out personas.jsonl
    """
    from .factories.llm import LLMProfileFactory
    from .loader import load_profiles

    rules = _read_rules(rules_file)
    examples = [config for path in example_files for config in load_profiles(path).values()]
    factory = LLMProfileFactory(
        base_url,
        model,
        rules=rules,
        examples=examples,
        count=count,
        batch_size=batch_size,
        seed=seed,
        api_key_env=api_key_env,
        max_in_flight=max_in_flight,
        max_batches=max_batches,
        language=language,
        timeout=timeout,
    )
    writer = _JsonlWriter(out)
    try:
        with factory, _progress() as progress:
            task = progress.add_task("personas", total=count)
            for generated in factory.generate():
                writer.write({**generated.data, "_origin": generated.origin.as_dict()})
                progress.advance(task)
        writer.commit()
    except FactoryError as error:
        if writer.partial is not None and writer.lines:
            kept = f" The {writer.lines} persona(s) made are in {writer.partial}."
            raise FactoryError(error.message + kept) from error
        raise
    finally:
        writer.close()
    stats = factory.stats
    where = f" to {out}" if out is not None else ""
    click.echo(
        f"wrote {writer.lines} persona(s){where} in {stats.batches} batch request(s) and "
        f"{stats.fix_requests} fix request(s); {stats.invalid} invalid on first reply, "
        f"{stats.fixed} fixed, {stats.duplicates} duplicate(s) dropped",
        err=True,
    )
