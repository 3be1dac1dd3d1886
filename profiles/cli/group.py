"""How every command reports errors: one `Error: …` line, no traceback, the right exit status.

A `ProfilesError` is the user's to fix (its own status, 2 for a mistake in the input); anything
else is a fault of ours: one line and status 1, with the traceback only when `PROFILES_DEBUG=1`.
"""

from __future__ import annotations

import os
from typing import Any

import click

from ..errors import ProfilesError

__all__ = ["InternalError", "ProfilesCommandError", "ProfilesGroup"]


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
