"""Standard output, guarded once for every command: a failed write is an error, a closed pipe is not.

Commands print through `sys.stdout` (click.echo, and the library's JSONL writers when no file is
named). While a command runs, the group puts `guarded_stdout` in front of it, so that:

* a write that fails (`> /dev/full`, a full disk) becomes `OutputError("standard output", …)`:
  one `Error: …` line naming the cause, exit status 2; what was printed before stays printed;
* a closed pipe (`profiles render … | head -1`) becomes `OutputClosed`: the command stops without
  a message and exits with status 141, as a command stopped by SIGPIPE does.

Files named by `--out` are the library's to guard (it knows what it has already made durable);
it raises `OutputError` naming the file.

`Error:` and `Warning:` are shown in colour on a terminal, and never when standard error is a
pipe or a file, or when `NO_COLOR` is set (https://no-color.org).
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import OutputError

__all__ = [
    "CLOSED_PIPE_STATUS",
    "OutputClosed",
    "colour_on",
    "guarded_stdout",
    "labelled",
    "silence_stdout",
]

#: Exit status after the reader of standard output went away: 128 + SIGPIPE, what a shell
#: reports for `cat` or `git log` stopped by `| head -1`.
CLOSED_PIPE_STATUS = 141

#: How messages name standard output.
STDOUT = "standard output"


class OutputClosed(Exception):
    """The reader of standard output went away (a closed pipe); the command stops quietly."""


class _Guarded:
    """A stream whose write errors say which stream failed; everything else goes to the stream."""

    def __init__(self, stream: Any, label: str) -> None:
        self._stream = stream
        self._label = label

    def write(self, data: Any) -> Any:
        try:
            try:
                return self._stream.write(data)
            except UnicodeEncodeError:
                if not isinstance(data, str):
                    raise
                # a file name's byte that is not UTF-8 reaches Python as a lone surrogate ('\udcff'), which a
                # strict stream cannot encode: it is written escaped, as the error messages show it
                encoding = getattr(self._stream, "encoding", None) or "utf-8"
                return self._stream.write(data.encode(encoding, "backslashreplace").decode(encoding))
        except OSError as exc:
            raise _converted(exc, self._label) from None

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise _converted(exc, self._label) from None

    @property
    def buffer(self) -> _Guarded:
        # click writes bytes, and re-wraps a misconfigured text stream, through `buffer`
        return _Guarded(self._stream.buffer, self._label)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _converted(exc: OSError, label: str) -> Exception:
    if isinstance(exc, BrokenPipeError) or exc.errno in (errno.EPIPE, errno.ECONNRESET):
        return OutputClosed(label)
    return OutputError(label, exc)


@contextmanager
def guarded_stdout() -> Iterator[None]:
    """Put the guard in front of `sys.stdout` while a command runs; nested use is harmless."""
    original = sys.stdout
    if original is None or isinstance(original, _Guarded):
        yield
        return
    sys.stdout = _Guarded(original, STDOUT)  # type: ignore[assignment]
    try:
        yield
    finally:
        if isinstance(sys.stdout, _Guarded):
            sys.stdout = original


def silence_stdout() -> None:
    """Point standard output at the null device, so the flush at exit cannot fail on a closed pipe."""
    stream = sys.stdout
    try:
        descriptor = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        os.dup2(descriptor, stream.fileno())
    except (AttributeError, OSError, ValueError):
        pass  # not a real file (a test's capture): there is nothing to flush at exit
    finally:
        os.close(descriptor)


#: The colour of each label, as click.style takes it.
_LABEL_STYLES = {"Error": {"fg": "red", "bold": True}, "Warning": {"fg": "yellow", "bold": True}}


def colour_on(stream: Any = None) -> bool:
    """Whether to colour what goes to `stream` (standard error by default): a terminal, and no `NO_COLOR`."""
    if os.environ.get("NO_COLOR"):
        return False
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed, or no file at all
        return False


def labelled(label: str, message: str) -> str:
    """`Error: message` or `Warning: message`, the label in colour when standard error shows colour."""
    if colour_on():
        import click

        return f"{click.style(label + ':', **_LABEL_STYLES[label])} {message}"
    return f"{label}: {message}"
