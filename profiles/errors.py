"""The errors agent-profiles raises, all under one base so callers can catch them at once.

```
ProfilesError
  ConfigError            a persona is invalid (file:line:col, field path; every problem at once)
  ResolutionError        a dynamic field could not be resolved
    UnknownProviderError   a field names a provider nobody registered
  RenderError            a template failed to compile or render (template name and line)
    TemplateNotFoundError  no template for that kind, language or path
    ResourceError          resources are malformed, or missing where the persona requires them
    HistoryError           chat history turns are malformed or do not fit the API (turn, key, fix)
    InputError             a declared input got a value of the wrong type, or none where one is required
  RequestError           a request body cannot be built for that API (no model, a name it refuses)
  SecretError            a secret would reach a prompt
  StoreError             the prompt store failed
    PromptNotFoundError    no prompt matches (also a LookupError)
    StoreNotFoundError     no store at that URL: reading never creates one (also a LookupError)
    LabelConflictError     a label moved since the caller read it (compare-and-set)
    ProtectedLabelError    a protected label would move without force
  FactoryError           a factory could not create a profile
    DatasetRowError        a dataset row is not a valid persona (row, file line, column; its RowIssues)
    BatchError             a batch cannot start or resume (output, checkpoint or options)
    ChatError              a chat endpoint failed (profiles.factories.chat; status, URL, attempts)
      EmptyReplyError        the model answered nothing
  ReplyError             a model's reply could not be read
    ReactParseError        a ReAct reply is neither a readable action nor an answer
    SchemaReplyError       a reply is not JSON that the persona's output_schema accepts
  OutputError            output could not be written (the file or standard output, and why)
  InteropError           a persona cannot cross to another tool's format or framework
    ExportError            a persona cannot be written in that format (which text, why, what to change)
    AdapterError           a framework is not installed, or refuses what the adapter was given
  ServeError             the server cannot start as asked, or refuses a request (its HTTP status)
```

Messages say what went wrong, where, and how to fix it. They never carry a secret's value.
"""

from __future__ import annotations

import errno as _errno
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field as _field
from typing import Any

__all__ = [
    "AdapterError",
    "BatchError",
    "ConfigError",
    "ConfigIssue",
    "DatasetRowError",
    "ExportError",
    "FactoryError",
    "HistoryError",
    "InputError",
    "InteropError",
    "LabelConflictError",
    "OutputError",
    "ProfilesError",
    "PromptNotFoundError",
    "ProtectedLabelError",
    "ReactParseError",
    "RenderError",
    "ReplyError",
    "RequestError",
    "ResolutionError",
    "ResourceError",
    "RowIssue",
    "SchemaReplyError",
    "SecretError",
    "ServeError",
    "StoreError",
    "StoreNotFoundError",
    "TemplateNotFoundError",
    "UnknownProviderError",
]

#: Longest message an error keeps; a longer one is cut so a huge value cannot flood a terminal or log.
MAX_MESSAGE_CHARS = 4000


def _bounded(message: str) -> str:
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return message[: MAX_MESSAGE_CHARS - 20] + " … (message cut)"


class ProfilesError(Exception):
    """Base of every error agent-profiles raises on purpose."""

    #: Exit status the CLI uses: 2 for a user's mistake, 1 for a fault of ours.
    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(_bounded(message))

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class ConfigIssue:
    """One problem in a persona: where it is and what is wrong."""

    message: str
    field: str = ""
    file: str | None = None
    line: int | None = None
    column: int | None = None
    #: The field's path inside the persona, e.g. `("constraints", 2)`, for locating it in a file.
    loc: tuple[Any, ...] = _field(default=(), compare=False, repr=False)
    #: A short code for the kind of problem, e.g. `extra_forbidden` or `duplicate_key`.
    code: str = _field(default="", compare=False, repr=False)
    #: For a problem in a parent persona: the files that extend it, each chain written
    #: `child.yaml → middle.yaml`, so the message says which personas it breaks.
    via: tuple[str, ...] = _field(default=(), compare=False, repr=False)

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        field = f"field '{self.field}': " if self.field else ""
        via = f" (extended by {' and '.join(self.via)})" if self.via else ""
        return f"{where}{field}{self.message}{via}"


class ConfigError(ProfilesError, ValueError):
    """Raised when a persona is invalid; carries every problem found, not just the first."""

    def __init__(self, issues: list[ConfigIssue] | ConfigIssue | str) -> None:
        if isinstance(issues, str):
            issues = [ConfigIssue(issues)]
        elif isinstance(issues, ConfigIssue):
            issues = [issues]
        self.issues: list[ConfigIssue] = list(issues)
        super().__init__(self.listing())

    def listing(self, most: int | None = None) -> str:
        """Every problem on a line of its own, each line bounded rather than the whole.

        `str(error)` is bounded like any error's message, so a folder with hundreds of problems
        would show only the first few; the command line prints this instead, up to `most` lines.
        """
        if len(self.issues) == 1:
            return str(self.issues[0])
        shown = self.issues if most is None else self.issues[:most]
        lines = [f"{len(self.issues)} problems:", *(f"  {_bounded(str(issue))}" for issue in shown)]
        if len(shown) < len(self.issues):
            lines.append(f"  … and {len(self.issues) - len(shown)} more")
        return "\n".join(lines)


class ResolutionError(ProfilesError):
    """Raised when a dynamic field cannot be resolved for a context."""


class UnknownProviderError(ResolutionError, LookupError):
    """Raised when a field names a provider that is not registered."""


class RenderError(ProfilesError):
    """Raised when a template fails to compile or render.

    `template` and `line` say where, when known (for an error inside an included or parent
    template, that file); `limit` names the setting of the bound that tripped, when one did:
    `PROFILES_MAX_OUTPUT_CHARS`, `PROFILES_MAX_RENDER_SECONDS`, or a constant of
    `profiles.rendering.budget` such as `MAX_VALUE_CHARS`.
    """

    def __init__(
        self, message: str, *, template: str | None = None, line: int | None = None, limit: str | None = None
    ) -> None:
        super().__init__(message)
        self.template = template
        self.line = line
        self.limit = limit


class TemplateNotFoundError(RenderError, LookupError):
    """Raised when no template exists for a prompt kind, language or path."""


class ResourceError(RenderError, ValueError):
    """Raised when resources given to a render are malformed, or absent where the persona requires them.

    A render-time error, not a `ConfigError`: the persona is valid; the call that renders it
    passed the wrong data, so the fix is in the caller, not in the YAML file.
    """


class HistoryError(RenderError, ValueError):
    """Raised when chat history given to `format_messages` or `to_request` is malformed.

    `problems` lists every problem, one line each, naming the turn (`history[3].tool_call_id`).
    Like `ResourceError`, the fix is in the caller's data, not in the persona.
    """

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        if len(self.problems) == 1:
            text = f"history: {self.problems[0]}"
        else:
            text = f"history has {len(self.problems)} problems:\n" + "\n".join(f"  {line}" for line in self.problems)
        super().__init__(text)


class InputError(RenderError, ValueError):
    """Raised when a declared input (the persona's `inputs:`) gets a value of the wrong type, or none.

    `input` names the input, so a server can point at the argument that was wrong.
    """

    def __init__(self, message: str, input: str | None = None) -> None:
        self.input = input
        super().__init__(message)


class RequestError(ProfilesError):
    """Raised when a request body cannot be built for the API asked for.

    For example: no model is known, a tool's name is one the API refuses, or a setting has no
    field in that API and the call asked for an error rather than leaving it out.
    """


class SecretError(ProfilesError):
    """Raised when a secret value would be rendered into a prompt without being allowed."""


class StoreError(ProfilesError):
    """Raised when the prompt store cannot be read or written."""


class PromptNotFoundError(StoreError, LookupError):
    """Raised when the prompt store has no prompt matching a request."""


class StoreNotFoundError(StoreError, LookupError):
    """Raised when a store is opened for reading where none exists: reading never creates a database."""


class LabelConflictError(StoreError):
    """Raised when a label move expected the label at one version and found it elsewhere.

    Two releasers moving `production` at once: the second one's `expect=` no longer holds, so its
    move is refused instead of silently overwriting the first. Read the label again and retry.
    """


class ProtectedLabelError(StoreError):
    """Raised when a protected label (`store protect`) would move without `force=True` (`--force`)."""


class FactoryError(ProfilesError):
    """Raised when a factory cannot create a profile."""


class ReplyError(ProfilesError):
    """Raised when a model's reply cannot be read into the structure its prompt asked for."""


class ReactParseError(ReplyError, ValueError):
    """Raised when a ReAct reply is neither a readable tool call nor a final answer.

    The message says what was wrong and shows the expected format, so an agent loop can send it
    back to the model as a correction.
    """


class SchemaReplyError(ReplyError, ValueError):
    """Raised by `parse_reply` when a reply holds no JSON, or JSON the output schema refuses.

    The message is written to be sent back to the model as a correction. `problems` lists each
    schema error (`/urgency: 7 is greater than the maximum of 5`); `value` is the JSON that was
    read, or None when none was found.
    """

    def __init__(self, message: str, problems: list[str] | None = None, value: Any = None) -> None:
        self.problems = list(problems or [])
        self.value = value
        super().__init__(message)


class InteropError(ProfilesError):
    """Raised when a persona cannot be carried to another tool's file format or framework."""


class ExportError(InteropError):
    """Raised when a persona cannot be written in another tool's format.

    For example: a literal `{name}` in a text for CrewAI or ADK, which have no way to escape it,
    or a placeholder used in a Jinja filter that the other format cannot evaluate.
    """


class AdapterError(InteropError):
    """Raised when an adapter's framework is not installed, or refuses what it was given.

    A missing framework names the extra to install, e.g. `pip install 'agent-profiles[langchain]'`.
    """
class ServeError(ProfilesError):
    """Raised when `profiles serve` cannot start as asked, or refuses a request.

    `status` is the HTTP status the server answers with (400 when not given): 401 for a missing
    token, 403 for a write to a read-only server, 404 for a persona that is not there, 413 for a
    body over the limit.
    """

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class RowIssue:
    """One problem in one dataset row: which row, where in the file, which column, and why."""

    row: int
    message: str
    source: str = "<rows>"
    line: int | None = None
    column: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        parts = [f"row {self.row}"]
        if self.column:
            parts.append(f"column {self.column!r}")
        if self.field and self.field != self.column:
            parts.append(f"field {self.field!r}")
        return f"{where}: {', '.join(parts)}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        """The issue as plain data, for a JSON report."""
        return {
            "row": self.row,
            "line": self.line,
            "column": self.column,
            "field": self.field,
            "message": self.message,
            "source": self.source,
        }


class DatasetRowError(FactoryError):
    """Raised (with `on_error="raise"`) for the first bad row; `issues` holds its problems."""

    def __init__(self, issues: list[RowIssue]) -> None:
        self.issues = list(issues)
        if len(self.issues) == 1:
            text = str(self.issues[0])
        else:
            text = f"{len(self.issues)} problems:\n" + "\n".join(f"  {issue}" for issue in self.issues)
        super().__init__(text + "\n(fix the row, or pass on_error='skip' / --on-error skip to leave bad rows out)")


class BatchError(FactoryError):
    """Raised when a batch cannot start or continue: a bad option, output or checkpoint."""


#: What to do about the usual reasons a write fails, by errno.
_WRITE_HINTS = {
    _errno.ENOSPC: "free some space, or write somewhere else",
    _errno.EDQUOT: "free some space, or write somewhere else",
    _errno.EFBIG: "the file is over a size limit; write somewhere else, or lift the limit",
    _errno.EACCES: "choose a place you may write to, or change its permissions",
    _errno.EPERM: "choose a place you may write to, or change its permissions",
    _errno.EROFS: "that file system is read-only; write somewhere else",
    _errno.ENOENT: "check the path: its folder must exist and take new files",
    _errno.ENOTDIR: "a part of the path is a file, not a folder; fix the path",
    _errno.EISDIR: "that is a folder; name a file",
    _errno.EPIPE: "the reader went away",
}


def os_reason(error: OSError) -> str:
    """The system's reason for an `OSError`, e.g. `no space left on device (ENOSPC)`."""
    text = error.strerror or str(error) or type(error).__name__
    text = text[:1].lower() + text[1:]
    code = _errno.errorcode.get(error.errno) if error.errno is not None else None
    return f"{text} ({code})" if code else text


class OutputError(ProfilesError):
    """Raised when output cannot be written: which file (or standard output), why, and what is kept.

    `target` names what was being written; `kept` says what earlier output survived, e.g. the rows
    a batch had already checkpointed.
    """

    def __init__(self, target: str, cause: OSError, kept: str = "") -> None:
        self.target = target
        self.cause = cause
        hint = _WRITE_HINTS.get(cause.errno or 0, "check the path and that it may be written")
        text = f"cannot write {target}: {os_reason(cause)}; {hint}"
        super().__init__(text + (f". {kept}" if kept else ""))


# -- for "did you mean" hints in messages (not part of the package's API) ---------------------------


def edit_distance(first: str, second: str, *, limit: int = 3) -> int:
    """Letters inserted, deleted, replaced or swapped with a neighbour to turn one name into the other.

    The optimal-string-alignment distance: `sytem` → `system` is 1 (one letter missing), `nmae` →
    `name` is 1 (two letters swapped). Counting stops past `limit`, which is returned then.
    """
    if abs(len(first) - len(second)) > limit:
        return limit + 1
    previous: list[int] | None = None
    row = list(range(len(second) + 1))
    for i, a in enumerate(first, start=1):
        current = [i] + [0] * len(second)
        for j, b in enumerate(second, start=1):
            cost = a != b
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if previous is not None and i > 1 and j > 1 and a == second[j - 2] and first[i - 2] == b:
                current[j] = min(current[j], previous[j - 2] + 1)
        previous, row = row, current
        if min(row) > limit:
            return limit + 1
    return min(row[-1], limit + 1)


def closest(name: str, known: Iterable[str], *, most: int | None = None) -> str | None:
    """The known name `name` is most likely a typo of, for a "did you mean" hint; None when none is close.

    Close is at most `most` edits (see `edit_distance`): by default one for names of up to four
    letters and two for longer ones, so `nmae` finds `name` and `agnets` finds `agents`, while
    `task` finds nothing in `name, role, goal`.
    """
    if most is None:
        most = 1 if len(name) <= 4 else 2
    best: tuple[int, str] | None = None
    for candidate in known:
        if candidate == name:
            continue
        distance = edit_distance(name, candidate, limit=most)
        if distance <= most and (best is None or distance < best[0]):
            best = (distance, candidate)
    return best[1] if best else None
