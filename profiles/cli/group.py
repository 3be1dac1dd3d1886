"""How every command reports errors: one `Error: …` line, no traceback, the right exit status.

A `ProfilesError` is the user's to fix (its own status, 2 for a mistake in the input); anything
else is a fault of ours: one line and status 1, with the traceback only when `PROFILES_DEBUG=1`.
Standard output is guarded here, once for every command (see `output.py`): a write that fails is
an `Error:` naming standard output and the cause, and a closed pipe ends the command quietly. An
`OSError` that names a file (one the library did not wrap) is the user's to fix too: the message
names the file and the system's reason.
"""

from __future__ import annotations

import io
import os
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from ..errors import ConfigError, ProfilesError, os_reason
from .output import CLOSED_PIPE_STATUS, OutputClosed, guarded_stdout, labelled, silence_stdout

__all__ = ["InternalError", "ProfilesCommandError", "ProfilesGroup"]

#: Most problems one `Error:` lists; a folder with more says how many were left out.
MAX_LISTED_PROBLEMS = 1000


class ProfilesCommandError(click.ClickException):
    """A library error shown as `Error: message`, exiting with the error's own status."""

    def __init__(self, error: ProfilesError) -> None:
        super().__init__(error.listing(MAX_LISTED_PROBLEMS) if isinstance(error, ConfigError) else str(error))
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
    one line and status 1, with the traceback only when `PROFILES_DEBUG=1`. Every error, click's
    usage errors included, is shown here, with `Error:` in colour on a terminal.
    """

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            status = super().main(*args, standalone_mode=False, **kwargs)
        except click.ClickException as error:
            _show(error)
            sys.exit(error.exit_code)
        except click.Abort:
            click.echo(labelled("Error", "aborted"), err=True)
            sys.exit(1)
        sys.exit(status if isinstance(status, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with guarded_stdout(), _warnings_as_messages():
                return super().invoke(ctx)
        except ProfilesError as error:
            raise ProfilesCommandError(error) from None
        except (click.exceptions.Exit, click.ClickException, click.Abort, KeyboardInterrupt):
            raise
        except OutputClosed:
            silence_stdout()
            raise click.exceptions.Exit(CLOSED_PIPE_STATUS) from None
        except OSError as error:
            if error.filename is not None:
                raise ProfilesCommandError(
                    ProfilesError(f"{error.filename}: {os_reason(error)}; check the path and its permissions")
                ) from None
            if os.environ.get("PROFILES_DEBUG") == "1":
                raise
            raise InternalError(error) from None
        except Exception as error:  # MemoryError and RecursionError included
            if os.environ.get("PROFILES_DEBUG") == "1":
                raise
            raise InternalError(error) from None


@contextmanager
def _warnings_as_messages() -> Iterator[None]:
    """Show a warning that reaches Python's display as `Warning: …` on stderr, as the commands that
    collect theirs do, not with the file and source line of whatever code was running (click's, or
    the process pool's in a batch worker forked while this is in place)."""
    shown = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None,
             line: str | None = None) -> None:
        click.echo(labelled("Warning", str(message)), err=True)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = shown


def _show(error: click.ClickException) -> None:
    """Print an error as click would (usage and hint first, for a usage error), `Error:` in colour."""
    buffer = io.StringIO()
    error.show(file=buffer)
    text = buffer.getvalue()
    found = re.search(r"^Error: ", text, re.M)
    if found is not None:
        text = text[: found.start()] + labelled("Error", text[found.end() :])
    click.echo(text, err=True, nl=False, color=True if "\x1b[" in text else None)
