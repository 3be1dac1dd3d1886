"""Write personas made by a model to a JSONL file, one persona per line (`profiles generate`).

Each line holds the persona's fields as plain values and an ``_origin`` object (model, request
id, prompt hash, seed, batch, fix round). Lines go to ``OUT.partial`` as they are made, each
flushed at once, so a crash or Ctrl-C loses nothing already written; at the end the file is
fsynced and renamed to ``OUT``, so ``OUT`` is either the whole result or untouched.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .errors import ConfigError, ConfigIssue, FactoryError, OutputError

if TYPE_CHECKING:
    from .factories.llm import LLMProfileFactory

__all__ = ["JsonlWriter", "read_rules", "write_generated"]

#: Largest rules file read, in bytes: rules go into every request.
MAX_RULES_BYTES = 100_000


class JsonlWriter:
    """Appends lines to ``OUT.partial`` (flushed each line) and renames it to ``OUT`` on commit.

    Without a path, lines go to standard output. Kept private and small: the batch command has a
    JSONL writer of its own, and the two are meant to become one.
    """

    def __init__(self, out: Path | None) -> None:
        self.out = out
        self.partial = out.with_name(out.name + ".partial") if out is not None else None
        self.lines = 0
        #: Bytes of whole lines in the partial file, to cut a torn line off after a failed write.
        self._whole = 0
        self._file: IO[str] | None = None
        if self.partial is not None:
            if self.partial.exists():
                raise FactoryError(
                    f"{self.partial} exists, left by an earlier run that did not finish; "
                    "keep its personas by moving it elsewhere, or delete it, then run again."
                )
            try:
                # "x": never write over a file another run has just created
                self._file = open(self.partial, "x", encoding="utf-8")  # noqa: SIM115 (closed in commit/close)
            except OSError as exc:
                raise FactoryError(
                    f"cannot write {self.partial} ({exc.strerror or type(exc).__name__}); "
                    "check that its folder exists and is writable."
                ) from None

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False)
        if self._file is None:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        else:
            try:
                self._file.write(line + "\n")
                self._file.flush()
            except OSError as exc:
                raise self._failed(exc) from None
            self._whole = self._file.tell()
        self.lines += 1

    def commit(self) -> None:
        """Make the output whole: fsync the partial file and rename it over ``OUT``."""
        if self._file is None or self.partial is None or self.out is None:
            return
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
            os.replace(self.partial, self.out)
        except OSError as exc:
            raise self._failed(exc) from None

    def _failed(self, exc: OSError) -> OutputError:
        """A write that failed (a full disk): what it was, and where the personas made so far are.

        The partial file is cut back to its last whole line, so it holds only whole personas.
        """
        if self._file is not None and self.partial is not None:
            try:
                self._file.close()  # its flush may write part of a line once more
            except OSError:
                pass
            self._file = None
            try:
                if self.lines:
                    os.truncate(self.partial, self._whole)
                else:
                    self.partial.unlink()
            except OSError:
                pass
        kept = f"The {self.lines} persona(s) written before it are in {self.partial}" if self.lines else ""
        return OutputError(str(self.partial), exc, kept=kept)

    def close(self) -> None:
        """Close without committing: what was written stays in ``OUT.partial``; an empty one goes."""
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass  # the write that failed already said why
            self._file = None
            if not self.lines and self.partial is not None:
                self.partial.unlink(missing_ok=True)


def read_rules(path: Path) -> str:
    """The rules file's text: what the personas should be like, sent with every request."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(ConfigIssue(f"cannot read the rules file ({exc.strerror or exc})", file=str(path))) from None
    if len(data) > MAX_RULES_BYTES:
        raise ConfigError(
            ConfigIssue(f"the rules file is over {MAX_RULES_BYTES} bytes; shorten it", file=str(path))
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            ConfigIssue(f"the rules file is not UTF-8 text (byte {exc.start}); save it as UTF-8", file=str(path))
        ) from None
    if not text.strip():
        raise ConfigError(ConfigIssue("the rules file is empty; say what the personas should be like", file=str(path)))
    return text


def write_generated(
    factory: LLMProfileFactory, writer: JsonlWriter, advance: Callable[[], None] | None = None
) -> None:
    """Write every persona the factory makes, then make the output whole; `advance()` after each.

    Raises:
        FactoryError: generation failed; the message says where the personas made so far are.
    """
    try:
        with factory:
            for generated in factory.generate():
                writer.write({**generated.data, "_origin": generated.origin.as_dict()})
                if advance is not None:
                    advance()
        writer.commit()
    except FactoryError as error:
        if writer.partial is not None and writer.lines:
            kept = f" The {writer.lines} persona(s) made are in {writer.partial}."
            raise FactoryError(error.message + kept) from error
        raise
    finally:
        writer.close()
