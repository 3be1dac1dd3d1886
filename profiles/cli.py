"""The `profiles` command: a thin layer that wires the library's steps and prints their results.

Every `ProfilesError` is printed as one `Error: …` message with no traceback; the exit status is
2 for a mistake in the input and 1 for a fault of ours.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from .errors import ConfigError, ProfilesError

__all__ = ["cli", "main"]

KINDS = ("system", "user", "write_memory")


class ProfilesCommandError(click.ClickException):
    """A library error shown as `Error: message`, exiting with the error's own status."""

    def __init__(self, error: ProfilesError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code


class InternalError(click.ClickException):
    """A fault of ours shown as one line with a hint to report it; exit status 1."""

    exit_code = 1

    def __init__(self, error: BaseException) -> None:
        text = " ".join(str(error).split())
        if len(text) > 200:
            text = text[:199] + "…"
        super().__init__(
            f"internal error: {type(error).__name__}: {text or 'no message'}. Please report it; "
            "set PROFILES_DEBUG=1 to see the traceback."
        )


class ProfilesGroup(click.Group):
    """Turns every error a subcommand raises into a clean message and exit status.

    A `ProfilesError` is the user's to fix (its own status, 2); anything else is a fault of ours:
    one line and status 1, with the traceback only when `PROFILES_DEBUG=1`.
    """

    def invoke(self, ctx: click.Context) -> Any:
        import os

        try:
            return super().invoke(ctx)
        except ProfilesError as error:
            raise ProfilesCommandError(error) from None
        except (click.exceptions.Exit, click.ClickException, click.Abort, KeyboardInterrupt):
            raise
        except Exception as error:  # MemoryError and RecursionError included
            if os.environ.get("PROFILES_DEBUG") == "1":
                raise
            raise InternalError(error) from None


def _parse_vars(pairs: tuple[str, ...]) -> dict[str, str]:
    variables = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--var")
        variables[name.strip()] = value
    return variables


@click.group(cls=ProfilesGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agent-profiles", prog_name="profiles")
def cli() -> None:
    """Validate, render and explain LLM agent personas written in YAML.

    \b
    Examples:
      profiles render profile_configs/summarizer.yaml --question "Summarize this"
      profiles validate profile_configs/
      profiles check profile_configs/
      profiles explain profile_configs/summarizer.yaml --deployment prod
      profiles schema > persona.schema.json
      profiles store put summarizer/name --label production --file name.txt
    """


def _store_option(command: Any) -> Any:
    return click.option(
        "--store",
        "store_url",
        metavar="URL",
        default=None,
        help="Prompt store for `provider: store` fields and `{store: …}` templates. PROFILES_STORE_URL, "
        "when set, wins over this; without either, .profiles/store.db in the working directory.",
    )(command)


@contextmanager
def _using_store(url: str | None) -> Iterator[None]:
    """Answer `store` lookups from `url` for one command, then put the registered provider back."""
    if url is None:
        yield
        return
    from .providers import get_provider, register_provider
    from .providers.store import StoreProvider
    from .store.location import resolve_store_url

    previous = get_provider("store")
    provider = StoreProvider(resolve_store_url(url))
    register_provider("store", provider)
    try:
        yield
    finally:
        register_provider("store", previous)
        provider.close()


@cli.command()
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
@_store_option
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
) -> None:
    """Render the prompts of the persona in PATH.

    \b
    Examples:
      profiles render profile_configs/planner.yaml --var agents="Searcher, Coder" -q "Plan a trip"
      profiles render profile_configs/summarizer.yaml --deployment prod --kind system
    """
    import warnings

    from .loader import load_profile

    given = _parse_vars(variables)
    with warnings.catch_warnings(record=True) as caught, _using_store(store_url):
        warnings.simplefilter("always")
        profile = load_profile(path).create_profile(language=language, model=model, deployment=deployment)
    for warning in caught:  # e.g. an unknown model: shown once, without Python's file and line
        click.echo(f"Warning: {warning.message}", err=True)
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


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
def validate(paths: tuple[Path, ...]) -> None:
    """Check persona files (or folders of them); list every problem, exit 2 if any."""
    from .loader import iter_persona_files, load_profiles

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


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
def check(paths: tuple[Path, ...]) -> None:
    """Load and render every persona in PATHS with its samples; list every problem, exit 2 if any.

    \b
    Example:
      profiles check profile_configs/
    """
    from .check import check_paths

    report = check_paths(paths)
    for file in report.checked:
        click.echo(f"ok {file}")
    if not report.ok:
        raise ConfigError(report.issues)


@cli.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--deployment",
    "-d",
    help="The deployment to explain the persona for. Default: $PROFILES_DEPLOYMENT.",
)
@click.option("--language", "-l", help="Answer language and template locale, e.g. en, zh, zh-TW.")
@click.option("--model", "-m", help="The model the prompts are for.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as a JSON array.")
@_store_option
def explain(
    path: Path, deployment: str | None, language: str | None, model: str | None, as_json: bool, store_url: str | None
) -> None:
    """Show each field of the persona in PATH, its value and where it came from.

    Sources read like `yaml:profile_configs/summarizer.yaml:12`, `overlay staging: …:31`,
    `env:SUMMARY_PROFILE_NAME from profile_configs/.env.prod`, `store:summarizer/name v3
    label=production` or `default`. Secrets show as ***.

    \b
    Example:
      profiles explain profile_configs/summarizer.yaml --deployment prod
    """
    import warnings

    from .provenance import explain as explain_persona

    with warnings.catch_warnings(record=True) as caught, _using_store(store_url):
        warnings.simplefilter("always")
        rows = explain_persona(path, deployment=deployment, language=language, model=model)
    for warning in caught:  # e.g. an unknown deployment: shown once, without Python's file and line
        click.echo(f"Warning: {warning.message}", err=True)
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


@cli.command()
def schema() -> None:
    """Print the JSON Schema of persona files, for editors and CI.

    \b
    Point an editor at it with a modeline at the top of a persona file:
      # yaml-language-server: $schema=../schema/persona.schema.json
    """
    from .schema import persona_schema

    click.echo(json.dumps(persona_schema(), indent=2, ensure_ascii=False))


# commands that live in modules of their own, registered once the group exists
from .batch_cli import batch  # noqa: E402
from .generate import generate  # noqa: E402
from .store.cli import store  # noqa: E402 - click only: SQLAlchemy loads when a command opens the store

cli.add_command(batch)
cli.add_command(generate)
cli.add_command(store)


def main() -> None:
    """Entry point of the `profiles` console script."""
    try:
        cli.main(prog_name="profiles")
    except ProfilesError as error:  # raised outside a subcommand, e.g. while parsing
        click.echo(f"Error: {error}", err=True)
        sys.exit(error.exit_code)
