"""`profiles generate`: ask a model for personas and write them as JSON lines."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..generate import JsonlWriter, fingerprint, read_rules, write_generated
from .options import refuse_undecodable
from .progress import persona_progress

__all__ = ["generate"]

#: The library's option names as this command spells them, so errors advise flags that exist.
OPTION_NAMES = {
    "base_url": "--base-url",
    "model": "--model",
    "timeout": "--timeout",
    "max_retries": "--max-retries",
    "max_in_flight": "--max-in-flight",
    "max_batches": "--max-batches",
    "batch_size": "--batch-size",
    "count": "--count",
    "language": "--language",
    "api_key_env": "--api-key-env",
    "api_key": "--api-key-env",
}


def _out_path(value: str | None) -> Path | None:
    """--out as a path: `-` is standard output, as for `profiles batch`; an empty text names no file."""
    if value is None or value == "-":
        return None
    if not value.strip():
        raise click.BadParameter("is empty; name the JSONL file to write, or leave --out out for standard output")
    return Path(value)


@click.command()
@click.option("--base-url", required=True, help="The API root of an OpenAI-compatible server, e.g. http://localhost:8000/v1.")
@click.option("--model", required=True, help="The model that writes the personas.")
@click.option(
    "--count",
    type=click.IntRange(min=1),
    help="How many distinct personas to make (the plan's count: when left out).",
)
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
@click.option(
    "--plan",
    "plan_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    metavar="PLAN.yaml",
    help="A sampling plan: the attributes each persona is drawn with (exact quotas for categories).",
)
@click.option("--seed", type=int, help="Batch i is sent with seed + i, and the plan draws with it.")
@click.option(
    "--dedupe",
    type=click.FloatRange(min=0, max=1, min_open=True, max_open=True),
    metavar="THRESHOLD",
    help="Remove personas whose text fields are this alike (estimated Jaccard of character shingles), e.g. 0.85.",
)
@click.option(
    "--embeddings-url",
    metavar="URL",
    help="An OpenAI-compatible API root whose /embeddings also compares meaning, e.g. http://localhost:8000/v1.",
)
@click.option("--embeddings-model", metavar="MODEL", help="The embedding model at --embeddings-url.")
@click.option(
    "--embedding-threshold",
    default=0.9,
    show_default=True,
    type=click.FloatRange(min=-1, max=1, min_open=True, max_open=True),
    help="Cosine similarity of embeddings at which a persona is removed.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    callback=lambda ctx, param, value: _out_path(value),
    help="The JSONL file to write; standard output when left out or -.",
)
@click.option("--resume", is_flag=True, help="Continue a run that was stopped, from OUT.partial.")
@click.option("--force", is_flag=True, help="Overwrite --out, and start over from any OUT.partial.")
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
@click.option(
    "--max-retries",
    default=4,
    show_default=True,
    type=click.IntRange(min=0),
    help="Tries after the first for a request that failed (429, 5xx, timeout, dropped connection).",
)
@click.option("--language", "-l", help="The language the personas are written in, e.g. en, zh.")
@click.option(
    "--timeout",
    default=60.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds to wait for one reply.",
)
@click.option("--quiet", is_flag=True, help="No progress bar, summary or report.")
def generate(
    base_url: str,
    model: str,
    count: int | None,
    rules_file: Path,
    example_files: tuple[Path, ...],
    plan_file: Path | None,
    seed: int | None,
    dedupe: float | None,
    embeddings_url: str | None,
    embeddings_model: str | None,
    embedding_threshold: float,
    out: Path | None,
    resume: bool,
    force: bool,
    api_key_env: str,
    batch_size: int,
    max_in_flight: int,
    max_batches: int | None,
    max_retries: int,
    language: str | None,
    timeout: float,
    quiet: bool,
) -> None:
    """Ask a model for --count distinct personas and write them as JSONL, one per line.

    \b
    Example:
      profiles generate --base-url http://localhost:8000/v1 --model qwen2.5-7b-instruct \\
          --count 20 --rules rules.txt --examples profile_configs/summarizer.yaml \\
          --seed 1 --plan plan.yaml --dedupe 0.85 --out personas.jsonl

    Personas removed as near-duplicates are listed in personas.removed.jsonl. After a crash,
    a kill or Ctrl-C, run the same command with --resume: no persona is lost or repeated.
    """
    from ..factories.llm import LLMProfileFactory  # here: --help needs none of it
    from ..loader import load_profiles

    for option, text in (("--base-url", base_url), ("--model", model), ("--language", language),
                         ("--embeddings-url", embeddings_url), ("--embeddings-model", embeddings_model),
                         ("--api-key-env", api_key_env)):
        refuse_undecodable(text, option, option)  # it would go into every request and persona
    if resume and force:
        raise click.UsageError("--resume continues a run and --force starts over; pass one of them")
    if bool(embeddings_url) != bool(embeddings_model):
        raise click.UsageError("--embeddings-url and --embeddings-model go together; give both or neither")
    plan = None
    if plan_file is not None:
        from ..factories.plan import load_plan

        plan = load_plan(plan_file)
    if count is None and (plan is None or plan.count is None):
        raise click.UsageError("give --count, or a --plan with count:")
    rules = read_rules(rules_file)
    examples = [config for path in example_files for config in load_profiles(path).values()]
    embed = None
    if embeddings_url:
        from ..factories.embeddings import EmbeddingClient

        embed = EmbeddingClient(
            embeddings_url, embeddings_model or "", api_key_env=api_key_env, timeout=timeout,
            max_retries=max_retries,
            option_names={**OPTION_NAMES, "base_url": "--embeddings-url", "model": "--embeddings-model"},
        )
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
        max_retries=max_retries,
        language=language,
        timeout=timeout,
        plan=plan,
        dedupe=dedupe,
        embed=embed,
        embedding_threshold=embedding_threshold,
        option_names=OPTION_NAMES,
    )
    writer = JsonlWriter(out, state=fingerprint(factory), resume=resume, force=force)
    if writer.complete:
        if not quiet:
            click.echo(f"{out} is already complete; nothing to resume", err=True)
        return
    resumed = writer.lines
    try:
        with persona_progress(disable=quiet) as progress:
            task = progress.add_task("personas", total=factory.count, completed=resumed)
            write_generated(factory, writer, lambda: progress.advance(task))
    except KeyboardInterrupt:
        if out is not None:
            click.echo(f"\ninterrupted; run the same command with --resume to continue {out}", err=True)
        sys.exit(130)
    finally:
        if embed is not None:
            embed.close()
    if quiet:
        return
    stats = factory.stats
    where = f" to {out}" if out is not None else ""
    removed = f", {stats.near_duplicates} near-duplicate(s) removed" if dedupe or embed else ""
    again = f" (resumed after {resumed})" if resume and resumed else ""
    click.echo(
        f"wrote {writer.lines} persona(s){where}{again} in {stats.batches} batch request(s) and "
        f"{stats.fix_requests} fix request(s); {stats.invalid} invalid on first reply, "
        f"{stats.fixed} fixed, {stats.duplicates} duplicate(s) dropped{removed}"
        + (f", {stats.contradictions} contradicting the plan" if plan is not None else ""),
        err=True,
    )
    if writer.removals and writer.removed is not None:
        click.echo(f"removed personas are listed in {writer.removed}", err=True)
    from ..report import diversity_report, read_personas
    from .report import show_report

    personas = read_personas(out) if out is not None else (
        {key: value for key, value in record.items() if key != "_origin"} for record in writer.records
    )
    show_report(diversity_report(personas, plan), err=True, title=str(out) if out else "personas")
