"""The `profiles` command: a thin layer that wires the library's steps and prints their results.

Each command lives in a module of its own under `profiles.cli`; this one builds the group. Every
`ProfilesError` is printed as one `Error: …` message with no traceback; the exit status is 2 for
a mistake in the input and 1 for a fault of ours.
"""

from __future__ import annotations

import sys

import click

from ..errors import ProfilesError
from .batch import batch
from .chat import chat_template
from .generate import generate
from .group import ProfilesGroup
from .output import CLOSED_PIPE_STATUS, OutputClosed, guarded_stdout, labelled, silence_stdout
from .personas import check, explain, render, schema, validate
from .report import report
from .review import diff
from .serve import mcp, serve
from .store import store

__all__ = ["cli", "main"]


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
      profiles diff persona.yaml --deployment staging --deployment prod
      profiles schema > persona.schema.json
      profiles chat-template tokenizer_config.json conversation.json
      profiles store put summarizer/name --label production --file name.txt
      profiles report personas.jsonl --plan plan.yaml
      profiles serve profile_configs/
      profiles mcp profile_configs/
    """


for _command in (
    render, validate, check, explain, diff, schema, chat_template, batch, generate, report, store, serve, mcp
):
    cli.add_command(_command)


def main() -> None:
    """Entry point of the `profiles` console script."""
    try:
        with guarded_stdout():  # `profiles --help` prints before any subcommand runs
            cli.main(prog_name="profiles")
    except ProfilesError as error:  # raised outside a subcommand, e.g. while parsing
        click.echo(labelled("Error", str(error)), err=True)
        sys.exit(error.exit_code)
    except OutputClosed:
        silence_stdout()
        sys.exit(CLOSED_PIPE_STATUS)
