"""The `profiles` command: a thin layer that wires the library's steps and prints their results.

Each command lives in a module of its own under `profiles.cli`; this one builds the group, which
imports a command's module only when that command runs (or `--help` lists them all): `profiles
render` never pays for the store, batch or generation commands. Every `ProfilesError` is printed
as one `Error: …` message with no traceback; the exit status is 2 for a mistake in the input and 1
for a fault of ours.

The console script imports with the garbage collector paused (see `startup.py`): the command's
module and the library modules it is known to use (`PRELOAD`) are imported once the command is
known, then the collector comes back before the command runs.
"""

from __future__ import annotations

import sys
from importlib import import_module

import click

from ..errors import ProfilesError
from . import startup
from .group import ProfilesGroup
from .output import CLOSED_PIPE_STATUS, OutputClosed, guarded_stdout, labelled, silence_stdout

__all__ = ["COMMANDS", "PRELOAD", "cli", "main"]

#: Every command: its name, and the module under `profiles.cli` and the name it is defined as there.
COMMANDS: dict[str, tuple[str, str]] = {
    "render": ("personas", "render"),
    "validate": ("personas", "validate"),
    "check": ("personas", "check"),
    "explain": ("personas", "explain"),
    "diff": ("review", "diff"),
    "schema": ("personas", "schema"),
    "chat-template": ("chat", "chat_template"),
    "batch": ("batch", "batch"),
    "generate": ("generate", "generate"),
    "report": ("report", "report"),
    "store": ("store", "store"),
    "import": ("interop", "import_"),
    "export": ("interop", "export"),
    "serve": ("serve", "serve"),
    "mcp": ("serve", "mcp"),
}


#: Library modules (under `profiles`) a command imports as it starts, imported with its own module
#: while the console script's start-up has the collector paused; `--help` of a command skips them.
PRELOAD: dict[str, tuple[str, ...]] = {
    "render": ("loader",),
    "validate": ("loader", "validate"),
    "check": ("check",),
    "explain": ("loader", "explanation"),
}


class LazyGroup(ProfilesGroup):
    """The `profiles` group: commands are imported when asked for, not when the group is built."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in COMMANDS:
            module, name = COMMANDS[cmd_name]
            command = getattr(import_module(f"{__package__}.{module}"), name)
            self.add_command(command)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if name in PRELOAD and not ctx.resilient_parsing and not any(arg in ("--help", "-h") for arg in rest):
            for library in PRELOAD[name]:
                import_module(f"{__package__.rpartition('.')[0]}.{library}")
        startup.resume()  # the command runs with the collector on
        return name, command, rest


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
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
      profiles import crewai crew/config/agents.yaml --out personas/
      profiles export profile_configs/summarizer.yaml --to prompty
      profiles serve profile_configs/
      profiles mcp profile_configs/
    """


def main() -> None:
    """Entry point of the `profiles` console script."""
    startup.pause()
    try:
        with guarded_stdout():  # `profiles --help` prints before any subcommand runs
            cli.main(prog_name="profiles")
    except ProfilesError as error:  # raised outside a subcommand, e.g. while parsing
        click.echo(labelled("Error", str(error)), err=True)
        sys.exit(error.exit_code)
    except OutputClosed:
        silence_stdout()
        sys.exit(CLOSED_PIPE_STATUS)
    finally:
        startup.resume()
