"""The `profiles` command: a thin layer that wires the library's steps and prints their results.

Every `ProfilesError` is printed as one `Error: …` message with no traceback; the exit status is
2 for a mistake in the input and 1 for a fault of ours.
"""

from __future__ import annotations

import json
import sys
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


class ProfilesGroup(click.Group):
    """Turns every `ProfilesError` a subcommand raises into a clean message and exit status."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ProfilesError as error:
            raise ProfilesCommandError(error) from None


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
      profiles schema > persona.schema.json
    """


@cli.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--question", "-q", help="The question passed to the prompts.")
@click.option("--var", "variables", multiple=True, metavar="KEY=VALUE", help="A template variable; repeatable.")
@click.option("--language", "-l", help="Answer language and template locale, e.g. en, zh, zh-TW.")
@click.option("--model", "-m", help="The model the prompts are for.")
@click.option(
    "--kind",
    type=click.Choice([*KINDS, "all"]),
    default="all",
    show_default=True,
    help="Which prompt to render.",
)
@click.option("--strict", is_flag=True, help="Refuse variables the templates do not use.")
@click.option("--json", "as_json", is_flag=True, help="Print the prompts as a JSON object.")
def render(
    path: Path,
    question: str | None,
    variables: tuple[str, ...],
    language: str | None,
    model: str | None,
    kind: str,
    strict: bool,
    as_json: bool,
) -> None:
    """Render the prompts of the persona in PATH.

    \b
    Example:
      profiles render profile_configs/planner.yaml --var agents="Searcher, Coder" -q "Plan a trip"
    """
    from .loader import load_profile

    given = _parse_vars(variables)
    profile = load_profile(path).create_profile(language=language, model=model)
    kinds = KINDS if kind == "all" else (kind,)
    prompts = {}
    for name in kinds:
        if name == "system":
            prompts[name] = profile.format_system_prompt(question, strict=strict, **given)
        elif name == "user":
            prompts[name] = profile.format_user_prompt(question, strict=strict, **given)
        else:
            prompts[name] = profile.format_write_memory_prompt(question, strict=strict, **given)
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
def schema() -> None:
    """Print the JSON Schema of persona files, for editors and CI.

    \b
    Point an editor at it with a modeline at the top of a persona file:
      # yaml-language-server: $schema=../schema/persona.schema.json
    """
    from .schema import persona_schema

    click.echo(json.dumps(persona_schema(), indent=2, ensure_ascii=False))


from .generate import generate  # noqa: E402 (a command in its own module, registered here)

cli.add_command(generate)


def main() -> None:
    """Entry point of the `profiles` console script."""
    try:
        cli.main(prog_name="profiles")
    except ProfilesError as error:  # raised outside a subcommand, e.g. while parsing
        click.echo(f"Error: {error}", err=True)
        sys.exit(error.exit_code)
