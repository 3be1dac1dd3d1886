"""`profiles generate`: ask a model for personas and write them as JSON lines."""

from __future__ import annotations

from pathlib import Path

import click

from ..generate import JsonlWriter, read_rules, write_generated
from .progress import persona_progress

__all__ = ["generate"]


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
    from ..factories.llm import LLMProfileFactory  # here: --help needs none of it
    from ..loader import load_profiles

    rules = read_rules(rules_file)
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
    writer = JsonlWriter(out)
    with persona_progress() as progress:
        task = progress.add_task("personas", total=count)
        write_generated(factory, writer, lambda: progress.advance(task))
    stats = factory.stats
    where = f" to {out}" if out is not None else ""
    click.echo(
        f"wrote {writer.lines} persona(s){where} in {stats.batches} batch request(s) and "
        f"{stats.fix_requests} fix request(s); {stats.invalid} invalid on first reply, "
        f"{stats.fixed} fixed, {stats.duplicates} duplicate(s) dropped",
        err=True,
    )
