"""The commands over persona files: `render`, `validate`, `check`, `explain` and `schema`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import ConfigError
from .options import parse_vars, rollout_key_option, showing_warnings, store_option, using_store

__all__ = ["check", "explain", "render", "schema", "validate"]

KINDS = ("system", "user", "write_memory")


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--question", "-q", help="The question passed to the prompts.")
@click.option("--var", "variables", multiple=True, metavar="KEY=VALUE", help="A template variable; repeatable.")
@click.option("--language", "-l", help="Answer language and template locale, e.g. en, zh, zh-TW.")
@click.option("--model", "-m", help="The model the prompts are for.")
@click.option(
    "--deployment",
    "-d",
    help="The deployment (dev, prod, a customer, …): picks the persona's overlay and .env.<deployment>. "
    "Default: $PROFILES_DEPLOYMENT.",
)
@click.option(
    "--kind",
    default="all",
    show_default=True,
    help="Which prompt to render: system, user, write_memory, react, a kind from a template root, or all.",
)
@click.option("--strict", is_flag=True, help="Refuse variables the templates do not use.")
@click.option("--json", "as_json", is_flag=True, help="Print the prompts as a JSON object.")
@store_option
@rollout_key_option
def render(
    path: Path,
    question: str | None,
    variables: tuple[str, ...],
    language: str | None,
    model: str | None,
    deployment: str | None,
    kind: str,
    strict: bool,
    as_json: bool,
    store_url: str | None,
    rollout_key: str | None,
) -> None:
    """Render the prompts of the persona in PATH.

    \b
    Examples:
      profiles render profile_configs/planner.yaml --var agents="Searcher, Coder" -q "Plan a trip"
      profiles render profile_configs/summarizer.yaml --deployment prod --kind system
    """
    from ..loader import load_profile

    given = parse_vars(variables)
    with showing_warnings(), using_store(store_url):  # e.g. an unknown model, shown once
        profile = load_profile(path).create_profile(
            language=language, model=model, deployment=deployment, rollout_key=rollout_key
        )
    known = profile.known_kinds() if hasattr(profile, "known_kinds") else KINDS
    if kind != "all" and kind not in known:
        raise click.BadParameter(
            f"{kind!r} is not a prompt kind; known kinds are {', '.join(known)}, all", param_hint="--kind"
        )
    kinds = KINDS if kind == "all" else (kind,)
    prompts = {}
    for name in kinds:
        if name == "system":
            prompts[name] = profile.format_system_prompt(question, strict=strict, **given)
        elif name == "user":
            prompts[name] = profile.format_user_prompt(question, strict=strict, **given)
        elif name == "write_memory":
            prompts[name] = profile.format_write_memory_prompt(question, strict=strict, **given)
        else:
            asked = {"question": question} if question is not None else {}
            prompts[name] = profile.format_prompt(name, strict=strict, **asked, **given)
    if as_json:
        click.echo(json.dumps(prompts, ensure_ascii=False, indent=2))
        return
    for index, (name, text) in enumerate(prompts.items()):
        if len(prompts) > 1:
            click.echo(("\n" if index else "") + f"===== {name} prompt =====")
        click.echo(text)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
def validate(paths: tuple[Path, ...]) -> None:
    """Check persona files (or folders of them); list every problem, exit 2 if any."""
    from ..loader import iter_persona_files, load_profiles

    problems = []
    checked = 0
    for file in iter_persona_files(list(paths)):
        try:
            load_profiles(file)
            checked += 1
            click.echo(f"ok {file}")
        except ConfigError as error:
            problems.extend(error.issues)
    if problems:
        raise ConfigError(problems)
    if not checked:
        raise ConfigError("no persona files (*.yaml, *.yml) found; name a file or a folder that holds some")


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--snapshot",
    "snapshot_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write every rendered prompt (each persona × deployment × kind) to files in DIR.",
)
@click.option(
    "--snapshot-check",
    "snapshot_check_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Compare every rendered prompt with the snapshot in DIR; list and diff what changed, exit 2 if any.",
)
@store_option
def check(
    paths: tuple[Path, ...], snapshot_dir: Path | None, snapshot_check_dir: Path | None, store_url: str | None
) -> None:
    """Load and render every persona in PATHS with its samples; list every problem, exit 2 if any.

    \b
    Examples:
      profiles check profile_configs/
      profiles check profile_configs/ --snapshot prompts.snapshot/
      profiles check profile_configs/ --snapshot-check prompts.snapshot/
    """
    from ..check import check_paths
    from .review import run_snapshot

    with showing_warnings(), using_store(store_url):
        report = check_paths(paths)
        for file in report.checked:
            click.echo(f"ok {file}")
        if not report.ok:
            raise ConfigError(report.issues)
        if snapshot_dir is not None or snapshot_check_dir is not None:
            run_snapshot(paths, snapshot_dir, snapshot_check_dir)


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--deployment",
    "-d",
    help="The deployment to explain the persona for. Default: $PROFILES_DEPLOYMENT.",
)
@click.option("--language", "-l", help="Answer language and template locale, e.g. en, zh, zh-TW.")
@click.option("--model", "-m", help="The model the prompts are for.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as a JSON array.")
@store_option
@rollout_key_option
def explain(
    path: Path,
    deployment: str | None,
    language: str | None,
    model: str | None,
    as_json: bool,
    store_url: str | None,
    rollout_key: str | None,
) -> None:
    """Show each field of the persona in PATH, its value and where it came from.

    Sources read like `yaml:profile_configs/summarizer.yaml:12`, `overlay staging: …:31`,
    `env:SUMMARY_PROFILE_NAME from profile_configs/.env.prod`, `store:summarizer/name v3
    label=production` (the label of the deployment's chain that matched, and the rollout arm when
    the label is rolled out) or `default`. Templates from the store and the stored prompts they
    include follow as `templates.<kind>` and `include store:<name>`. Secrets show as ***.

    \b
    Example:
      profiles explain profile_configs/summarizer.yaml --deployment prod
    """
    from ..explain import explain as explain_persona

    with showing_warnings(), using_store(store_url):  # e.g. an unknown deployment, shown once
        rows = explain_persona(path, deployment=deployment, language=language, model=model, rollout_key=rollout_key)
    if as_json:
        click.echo(json.dumps([row.to_dict() for row in rows], ensure_ascii=False, indent=2))
        return
    _print_table(rows)


#: Longest value shown in a table cell; `--json` shows values whole.
TABLE_VALUE_CHARS = 70


def _print_table(rows: list[Any]) -> None:
    from rich.console import Console  # imported here: only `explain` draws tables
    from rich.table import Table

    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("field", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_column("source", no_wrap=True)
    for row in rows:
        value = row.value
        if value is None:
            shown = "-"
        elif isinstance(value, (list, tuple)):
            shown = "; ".join(str(item) for item in value)
        else:
            shown = str(value)
        shown = " ".join(shown.split())
        if len(shown) > TABLE_VALUE_CHARS:
            shown = shown[: TABLE_VALUE_CHARS - 1] + "…"
        table.add_row(row.field, shown, row.source, style="dim" if row.value is None else None)
    # a pipe or a test has no width of its own; wide enough that sources are never cut
    console = Console(width=None if sys.stdout.isatty() else 200, highlight=False, markup=False)
    with console.capture() as captured:
        console.print(table)
    click.echo("\n".join(line.rstrip() for line in captured.get().splitlines()))


@click.command()
def schema() -> None:
    """Print the JSON Schema of persona files, for editors and CI.

    \b
    Point an editor at it with a modeline at the top of a persona file:
      # yaml-language-server: $schema=../schema/persona.schema.json
    """
    from ..schema import persona_schema

    click.echo(json.dumps(persona_schema(), indent=2, ensure_ascii=False))
