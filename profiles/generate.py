"""Write personas made by a model to a JSONL file, one persona per line (`profiles generate`).

Each line holds the persona's fields as plain values (with a plan, its draws under
``metadata.plan``) and an ``_origin`` object (model, request id, prompt hash, seed, batch, fix
round, and the plan's draw). Lines go to ``OUT.partial`` as they are made, each flushed at once,
so a crash, a kill or Ctrl-C loses nothing already written; at the end the file is fsynced and
renamed to ``OUT``, so ``OUT`` is either the whole result or untouched.

``OUT.partial.json`` records what the run was (model, URL, rules, examples, count, seed, plan
draws, dedupe settings); with ``resume=True`` a later run with the same options cuts a torn last
line, takes the personas written as already made (their names, texts and draws are taken), and
goes on with the batches after the last one written, so no persona is lost or repeated and the
draws and quotas stay those of the first run. Personas removed as repeats go to
``OUT-stem.removed.jsonl`` beside the output, one line each with the persona it was near.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .atomic import write_atomic
from .errors import ConfigError, ConfigIssue, FactoryError, OutputError
from .jsonlines import loads as load_json

if TYPE_CHECKING:
    from .factories.distinct import Removal
    from .factories.llm import LLMProfileFactory

__all__ = ["JsonlWriter", "fingerprint", "read_rules", "removed_path", "write_generated"]

#: Largest rules file read, in bytes: rules go into every request.
MAX_RULES_BYTES = 100_000

STATE_VERSION = 1


def removed_path(out: Path) -> Path:
    """Where removals are logged: ``personas.removed.jsonl`` beside ``personas.jsonl``."""
    return out.with_name(f"{out.stem if out.suffix == '.jsonl' else out.name}.removed.jsonl")


def fingerprint(factory: LLMProfileFactory) -> dict[str, Any]:
    """What a run must share with the run it resumes: the same options give the same personas."""
    from .factories.plan import draws_fingerprint

    def digest(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    return {
        "version": STATE_VERSION,
        "model": factory.model,
        "url": factory.client.url,
        "rules": digest(factory.rules),
        "examples": digest(json.dumps(list(factory.examples), ensure_ascii=False, sort_keys=True)),
        "count": factory.count,
        "seed": factory.seed,
        "language": factory.language,
        "draws": draws_fingerprint(factory.draws()) if factory.plan is not None else None,
        "dedupe": factory.dedupe,
        "embedding_threshold": factory.embedding_threshold if factory.embed is not None else None,
    }


class JsonlWriter:
    """Appends lines to ``OUT.partial`` (flushed each line) and renames it to ``OUT`` on commit.

    Without a path, lines go to standard output (and nothing can be resumed). With `resume`, an
    earlier run's partial file is continued: `previous` holds its personas and `first_batch` the
    batch to go on from. `force` starts over, replacing the output and any partial file.

    Raises:
        FactoryError: the output exists (without `force`), a partial file exists (without
            `resume` or `force`), there is nothing to resume, or the earlier run differs.
    """

    def __init__(
        self,
        out: Path | None,
        *,
        state: Mapping[str, Any] | None = None,
        resume: bool = False,
        force: bool = False,
        log_removed: bool = True,
    ) -> None:
        self.out = out
        self.partial = out.with_name(out.name + ".partial") if out is not None else None
        self.state_path = out.with_name(out.name + ".partial.json") if out is not None else None
        self.removed = removed_path(out) if out is not None and log_removed else None
        self.lines = 0
        #: Bytes of whole lines in the partial file, to cut a torn line off after a failed write.
        self._whole = 0
        self.removals = 0
        #: Without a path, the records written to standard output, for a report at the end.
        self.records: list[dict[str, Any]] = []
        self.previous: list[dict[str, Any]] = []
        self.first_batch = 0
        #: True when `resume` found the run already complete: nothing to do.
        self.complete = False
        self._file: IO[str] | None = None
        self._removed_file: IO[str] | None = None
        if out is None:
            if resume:
                raise FactoryError("--resume continues a run written to a file; give the same --out as before")
            return
        assert self.partial is not None and self.state_path is not None
        if resume and force:
            raise FactoryError("--resume continues a run and --force starts over; pass one of them")
        if resume:
            self._resume(dict(state or {}))
        else:
            self._start(dict(state or {}), force)

    def _start(self, state: dict[str, Any], force: bool) -> None:
        assert self.out is not None and self.partial is not None and self.state_path is not None
        if self.partial.exists() and not force:
            raise FactoryError(
                f"{self.partial} exists, left by an earlier run that did not finish; pass --resume to continue "
                "it, or --force to start over"
            )
        if self.out.exists() and not force:
            raise FactoryError(f"{self.out} already exists; pass --force to overwrite it, or another --out")
        try:
            for path in (self.partial, self.state_path, self.removed):
                if force and path is not None:
                    path.unlink(missing_ok=True)
            # "x": never write over a file another run has just created
            self._file = open(self.partial, "x", encoding="utf-8")  # noqa: SIM115 (closed in commit/close)
            write_atomic(self.state_path, json.dumps(state, indent=1, sort_keys=True), sync=True)
            if self.removed is not None:
                self._removed_file = open(self.removed, "w", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise FactoryError(
                f"cannot write {self.partial} ({exc.strerror or type(exc).__name__}); "
                "check that its folder exists and is writable."
            ) from None

    def _resume(self, state: dict[str, Any]) -> None:
        assert self.out is not None and self.partial is not None and self.state_path is not None
        if not self.partial.exists():
            if self.out.exists():
                self.complete = True
                self.state_path.unlink(missing_ok=True)
                return
            raise FactoryError(
                f"nothing to resume: {self.partial} does not exist; run without --resume to start"
            )
        try:
            saved = json.loads(self.state_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise FactoryError(
                f"{self.partial} has no {self.state_path.name} beside it, so it is not known how it was made; "
                "pass --force to start over"
            ) from None
        except (OSError, ValueError) as exc:
            raise FactoryError(f"{self.state_path}: unreadable ({exc}); pass --force to start over") from None
        if not isinstance(saved, dict):
            raise FactoryError(
                f"{self.state_path}: holds a JSON {type(saved).__name__}, not the object a run writes; pass --force "
                "to start over"
            )
        changed = sorted(key for key in {*state, *saved} if state.get(key) != saved.get(key))
        if changed:
            raise FactoryError(
                f"cannot resume {self.partial}: {', '.join(changed)} changed since it was written, so its "
                "personas may not fit this run; give the same options as before, or pass --force to start over"
            )
        self.previous, batches = _read_lines(self.partial)
        self.lines = len(self.previous)
        removed: list[dict[str, Any]] = []
        if self.removed is not None and self.removed.exists():
            removed, _ = _read_lines(self.removed)
            self.removals = len(removed)
        batches += [_removed_batch(item) for item in removed]
        self.first_batch = max(batches, default=-1) + 1
        try:
            self._file = open(self.partial, "a", encoding="utf-8")  # noqa: SIM115
            self._whole = self._file.tell()
            if self.removed is not None:
                self._removed_file = open(self.removed, "a", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise FactoryError(f"cannot write {self.partial} ({exc.strerror or type(exc).__name__})") from None

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False)
        if self._file is None:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
            self.records.append(record)
        else:
            try:
                self._file.write(line + "\n")
                self._file.flush()
            except OSError as exc:
                raise self._failed(exc) from None
            self._whole = self._file.tell()
        self.lines += 1

    def write_removed(self, removal: Removal) -> None:
        """Log one persona left out as a repeat, with the persona it was near."""
        self.removals += 1
        if self._removed_file is not None:
            self._removed_file.write(json.dumps(removal.as_dict(), ensure_ascii=False, default=str) + "\n")
            self._removed_file.flush()

    def commit(self) -> None:
        """Make the output whole: fsync the partial file and rename it over ``OUT``."""
        if self._removed_file is not None:
            self._removed_file.flush()
            os.fsync(self._removed_file.fileno())
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
        if self.state_path is not None:
            self.state_path.unlink(missing_ok=True)

    def _failed(self, exc: OSError) -> OutputError:
        """A write that failed (a full disk): what it was, and where the personas made so far are.

        The partial file is cut back to its last whole line, so it holds only whole personas (and
        `--resume` continues from them).
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
        if self._removed_file is not None:
            self._removed_file.close()
            self._removed_file = None
            if self.removed is not None and not self.removals and self.removed.exists():
                if self.removed.stat().st_size == 0:
                    self.removed.unlink()
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass  # the write that failed already said why
            self._file = None
            if not self.lines and self.partial is not None:
                self.partial.unlink(missing_ok=True)
                if self.state_path is not None:
                    self.state_path.unlink(missing_ok=True)


def _removed_batch(item: Mapping[str, Any]) -> int:
    """The batch a logged removal came from, or -1 when the line does not say."""
    persona = item.get("persona")
    origin = persona.get("_origin") if isinstance(persona, Mapping) else None
    batch = origin.get("batch") if isinstance(origin, Mapping) else None
    return batch if isinstance(batch, int) and not isinstance(batch, bool) else -1


def _read_lines(path: Path) -> tuple[list[dict[str, Any]], list[int]]:
    """The whole JSON lines of a file a killed run wrote, cutting a torn last line off the file.

    Only the last line can be torn by a kill or a full disk; a line that is not a JSON object with
    whole lines after it was changed by someone, and cutting the file there would throw away every
    persona after it, so it is an error naming the line instead.

    Raises:
        FactoryError: a line before the last is not a JSON object.
    """
    records: list[dict[str, Any]] = []
    batches: list[int] = []
    good = 0
    with open(path, "rb") as file:
        lines = iter(file)
        for number, raw in enumerate(lines, start=1):
            if not raw.endswith(b"\n"):
                break  # the line a kill cut short: made again
            try:
                record = load_json(raw)
            except ValueError:
                record = None
            if not isinstance(record, dict):
                if next(lines, None) is None:
                    break  # the last line: torn, made again
                raise FactoryError(
                    f"{path}:{number}: this line is not a JSON object, and lines after it are; only a torn last "
                    "line is cut off on --resume. Fix or remove the line, then run with --resume again (or pass "
                    "--force to start over)"
                )
            records.append(record)
            origin = record.get("_origin")
            if isinstance(origin, Mapping) and isinstance(origin.get("batch"), int):
                batches.append(origin["batch"])
            good += len(raw)
    if good != path.stat().st_size:
        with open(path, "r+b") as file:
            file.truncate(good)
    return records, batches


def read_rules(path: Path) -> str:
    """The rules file's text: what the personas should be like, sent with every request."""
    from .safe_yaml import read_at_most

    try:
        data = read_at_most(path, MAX_RULES_BYTES)  # a pipe or device has no size to check first
    except OSError as exc:
        raise ConfigError(ConfigIssue(f"cannot read the rules file ({exc.strerror or exc})", file=str(path))) from None
    if data is None:
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

    A resumed writer's personas count as made; the factory goes on after them.

    Raises:
        FactoryError: generation failed; the message says where the personas made so far are.
    """
    try:
        with factory:
            for generated in factory.generate(
                previous=writer.previous, first_batch=writer.first_batch, on_removed=writer.write_removed
            ):
                writer.write(generated.record())
                if advance is not None:
                    advance()
        writer.commit()
    except FactoryError as error:
        if writer.partial is not None and writer.lines:
            kept = (
                f" The {writer.lines} persona(s) made are in {writer.partial}; run the same command with "
                "--resume to go on."
            )
            raise FactoryError(error.message + kept) from error
        raise
    finally:
        writer.close()
