"""The personas of one folder, as the API, the studio and the MCP prompts show them.

Every path a request names is confined to the served folder: no absolute path, no `..`, no
symlink that resolves outside, and only `*.yaml`/`*.yml` files. Files are read again at every
request, so an edited persona shows at the next reload. Paths of this machine never reach an
answer: file names and messages are given relative to the folder.

Rendering goes through the library as `profiles render` does, under the sandbox's bounds; a
secret's value is masked in what comes back, even where the persona lets it into its prompts,
because a page or an API answer is not a prompt.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from ..dynconfig import ConfigInfo
from ..errors import ConfigError, ConfigIssue, ProfilesError, ServeError
from ..loader import PERSONA_SUFFIXES, load_profile
from ..profile import DefaultProfile
from ..profile_config import ProfileConfig
from ..rendering.templates import PROMPT_INPUTS, PROMPT_KINDS
from ..secrets import MASK, redact
from .settings import MAX_VALUE_CHARS, MAX_VARIABLES

__all__ = ["InputField", "PersonaEntry", "PersonaFolder", "RenderContext", "render_kind"]

#: Variables a caller cannot name: they are the render functions' own parameters.
RESERVED_VARIABLES = frozenset({"self", "kind", "strict"})
#: Inputs a preview form does not ask for: the library fills them, or they are not text.
_NOT_ASKED = frozenset({"react", "tools", "tool_names", "resources", "is_retry_chat", "out_schema"})
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class RenderContext:
    """What a render is for: the deployment, language and model (each None for the default)."""

    deployment: str | None = None
    language: str | None = None
    model: str | None = None

    @classmethod
    def of(cls, deployment: str | None, language: str | None, model: str | None) -> RenderContext:
        """A context from request values: blanks mean none; overlong values are refused.

        Raises:
            ServeError: a value is over 200 characters or holds a control character (422).
        """
        parts = []
        for what, value in (("deployment", deployment), ("language", language), ("model", model)):
            value = (value or "").strip() or None
            if value is not None and (
                len(value) > 200 or any(ord(char) < 32 or 0xD800 <= ord(char) <= 0xDFFF for char in value)
            ):
                raise ServeError(f"{what} {value[:40]!r}… is not a {what} name; give a short name", status=422)
            parts.append(value)
        return cls(*parts)

    def to_dict(self) -> dict[str, str | None]:
        return {"deployment": self.deployment, "language": self.language, "model": self.model}


@dataclass(frozen=True)
class PersonaEntry:
    """A persona file as the list shows it: `ok` when `profiles validate` would pass it, else its
    problems; `loads` when it loads all the same (a likely typo in a template), so it can render."""

    path: str
    ok: bool
    name: str | None = None
    role: str | None = None
    deployments: tuple[str, ...] = ()
    issues: tuple[ConfigIssue, ...] = ()
    loads: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "ok": self.ok,
            "loads": self.loads,
            "name": self.name,
            "role": self.role,
            "deployments": list(self.deployments),
            "issues": [_issue_dict(issue) for issue in self.issues],
        }


@dataclass(frozen=True)
class InputField:
    """A value a preview asks for: its name, what is filled in, and where that came from."""

    name: str
    value: str = ""
    origin: str = ""
    description: str = ""
    required: bool = False


@dataclass
class PersonaFolder:
    """The persona files of `root` (not of its subfolders, as `profiles validate` reads a folder)."""

    root: Path
    max_value_chars: int = MAX_VALUE_CHARS
    max_variables: int = MAX_VARIABLES
    _prefix: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.root = Path(self.root).resolve()
        self._prefix = str(self.root) + os.sep

    # -- paths --------------------------------------------------------------------------------------

    def files(self) -> list[Path]:
        """The persona files directly in the folder, by name; a link that leads outside it is none."""
        with os.scandir(self.root) as entries:
            names = sorted(
                entry.name
                for entry in entries
                if entry.name.endswith(PERSONA_SUFFIXES)
                and entry.is_file()
                and (not entry.is_symlink() or Path(entry.path).resolve().is_relative_to(self.root))
            )
        return [self.root / name for name in names]

    def path_of(self, relative: str) -> Path:
        """The file a request's path names, confined to the folder.

        Raises:
            ServeError: the path is absolute, climbs out with `..`, leads outside through a
                symlink (400), or names no persona file (404).
        """
        text = relative.strip() if isinstance(relative, str) else ""
        if not text or "\x00" in text or len(text) > 1000:
            raise ServeError("give a persona file's path relative to the served folder, e.g. summarizer.yaml")
        posix = text.replace("\\", "/")
        if posix.startswith("/") or _WINDOWS_DRIVE.match(posix):
            raise ServeError(f"{text[:200]!r} is an absolute path; name the persona relative to the served folder")
        parts = PurePosixPath(posix).parts
        if any(part == ".." for part in parts):
            raise ServeError(f"{text[:200]!r} climbs out of the served folder with '..'; name a file inside it")
        if not posix.endswith(PERSONA_SUFFIXES):
            raise ServeError(f"{text[:200]!r} is not a persona file (*.yaml, *.yml)", status=404)
        if "\\" in text and "/" not in text and os.sep == "/" and (self.root / text).is_file():
            parts = (text,)  # a file name holding a backslash, as POSIX allows and `files()` lists it
        path = self.root.joinpath(*parts)
        try:
            resolved = path.resolve(strict=True)
        except (OSError, RuntimeError):
            raise _no_persona(text) from None
        if not resolved.is_relative_to(self.root):
            raise ServeError(f"{text[:200]!r} leads outside the served folder (a symlink); name a file inside it")
        if not resolved.is_file():
            raise _no_persona(text)
        return path

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def clean(self, text: str) -> str:
        """`text` with the folder's own path taken out, so answers never show this machine's paths."""
        return text.replace(self._prefix, "").replace(str(self.root), ".")

    def _clean_issue(self, issue: ConfigIssue) -> ConfigIssue:
        file = self.clean(issue.file) if issue.file else issue.file
        return replace(issue, file=file, message=self.clean(issue.message))

    # -- reading --------------------------------------------------------------------------------------

    def entries(self) -> list[PersonaEntry]:
        """Every persona file with its status; a file that does not load lists its problems."""
        return [self._entry(path) for path in self.files()]

    def entry(self, relative: str) -> PersonaEntry:
        return self._entry(self.path_of(relative))

    def _entry(self, path: Path) -> PersonaEntry:
        relative = self.relative(path)
        try:
            config = load_profile(path)
        except ConfigError as exc:
            issues = tuple(self._clean_issue(issue) for issue in exc.issues)
            return PersonaEntry(relative, False, issues=issues, loads=False)
        except ProfilesError as exc:
            return PersonaEntry(
                relative, False, issues=(ConfigIssue(self.clean(exc.message), file=relative),), loads=False
            )
        from ..validate import validate_config

        issues = tuple(self._clean_issue(issue) for issue in validate_config(config))
        return PersonaEntry(
            relative,
            not issues,
            _written(config.name),
            _written(config.role),
            tuple(config.deployments),
            issues,
        )

    def config(self, relative: str) -> ProfileConfig:
        """The persona at `relative`.

        Raises:
            ServeError: the path is refused or names no file.
            ConfigError: the persona is invalid; file names relative to the folder.
        """
        path = self.path_of(relative)
        try:
            return load_profile(path)
        except ConfigError as exc:
            raise ConfigError([self._clean_issue(issue) for issue in exc.issues]) from None

    def profile(self, relative: str, context: RenderContext, *, config: ProfileConfig | None = None) -> DefaultProfile:
        """The persona created for `context` (from `config` when the caller has read it already).

        Raises:
            ServeError: the persona's factory makes profiles the server cannot show.
        """
        config = self.config(relative) if config is None else config
        profile = config.create_profile(language=context.language, model=context.model, deployment=context.deployment)
        if not isinstance(profile, DefaultProfile):
            raise ServeError(
                f"{relative}'s factory made a {type(profile).__name__}; the server shows personas without factories",
                status=422,
            )
        return profile

    def explain(self, relative: str, context: RenderContext) -> list[dict[str, Any]]:
        """`explain`'s rows for the persona in `context`: values masked when secret, sources relative."""
        rows = []
        for row in self.profile(relative, context).explain():
            item = row.to_dict()
            item["source"] = self.clean(item["source"])
            rows.append(item)
        return rows

    def kinds(self, profile: DefaultProfile) -> tuple[str, ...]:
        """The prompt kinds worth offering: `react` only when the persona has tools."""
        kinds = [kind for kind in profile.known_kinds() if kind != "react" or profile.tools]
        ordered = [kind for kind in PROMPT_KINDS if kind in kinds]
        return tuple(ordered + [kind for kind in kinds if kind not in ordered])

    def inputs(
        self, relative: str, profile: DefaultProfile, kinds: str | tuple[str, ...], *, config: Any = None
    ) -> list[InputField]:
        """What a preview of `kinds` (one prompt kind, or the kinds of the message layout) asks for.

        Declared inputs (`inputs:`) bring their description and whether they are required;
        values are filled from the persona's `samples:`, then `variables:`, then the input's
        default, then its first example.
        """
        config = self.config(relative) if config is None else config
        kinds = (kinds,) if isinstance(kinds, str) else tuple(kinds)
        declared: set[str] = set()
        for kind in kinds:
            declared |= set(profile.template_for(kind).declared)
        for name, templates in profile.field_templates.items():
            if name in declared:
                for item in templates if isinstance(templates, tuple) else (templates,):
                    declared |= set(getattr(item, "declared", ()))
        samples = {key: value for key, value in config.samples.items() if not isinstance(value, Mapping)}
        for kind in kinds:
            kind_samples = config.samples.get(kind)
            if isinstance(kind_samples, Mapping):
                samples.update(kind_samples)
        documented = {name for kind in kinds for name in PROMPT_INPUTS.get(kind, {})}
        names = []
        if "question" in documented or "question" in declared:
            names.append("question")
        asked = sorted(
            name for name in declared if name not in profile.values and name not in _NOT_ASKED and name != "question"
        )
        names.extend(asked)
        specs = getattr(profile, "inputs", None) or {}
        fields = []
        for name in names:
            spec = specs.get(name)
            description = (spec.description or "") if spec is not None else ""
            if spec is not None:
                required = spec.needs_value
            else:
                required = name not in documented and name not in profile.bound
            if name in samples:
                value, origin = _text(samples[name]), "samples"
            elif name in profile.bound:
                value, origin = _text(profile.bound[name]), "variables"
            elif spec is not None and spec.has_default:
                value, origin = _text(spec.default), "default"
            elif spec is not None and spec.examples:
                value, origin = _text(spec.examples[0]), "examples"
            else:
                value, origin = "", ""
            fields.append(InputField(name, value, origin, description, required))
        return fields

    # -- rendering ------------------------------------------------------------------------------------

    def check_variables(self, question: Any, variables: Mapping[str, Any]) -> None:
        """Refuse a render's values before anything renders: too many, too long, or badly named.

        Raises:
            ServeError: with status 422 (413 for values over the limit).
        """
        if not isinstance(variables, Mapping):
            raise ServeError("variables must be a mapping of name to value", status=422)
        if len(variables) > self.max_variables:
            raise ServeError(f"{len(variables)} variables given; at most {self.max_variables} per render", status=422)
        for name, value in variables.items():
            if not isinstance(name, str) or not name.isidentifier() or name.startswith("__"):
                raise ServeError(
                    f"variable name {str(name)[:60]!r} is not a name; use letters, digits and _", status=422
                )
            if name in RESERVED_VARIABLES:
                raise ServeError(f"{name!r} cannot be a variable's name here; rename it", status=422)
            _check_size(f"variable {name!r}", value, self.max_value_chars)
        if question is not None:
            if not isinstance(question, str):
                raise ServeError("the question must be text", status=422)
            _check_size("the question", question, self.max_value_chars)

    def render(
        self,
        relative: str,
        kind: str,
        context: RenderContext,
        *,
        question: str | None = None,
        variables: Mapping[str, Any] | None = None,
        strict: bool = False,
        profile: DefaultProfile | None = None,
    ) -> str:
        """The prompt of `kind` for `context`, secrets masked.

        Raises:
            ServeError: the values are refused.
            ProfilesError: the persona is invalid, or the render fails or trips a bound.
        """
        variables = dict(variables or {})
        self.check_variables(question, variables)
        if profile is None:
            profile = self.profile(relative, context)
        if kind not in profile.known_kinds():
            raise ServeError(
                f"{kind[:60]!r} is not a prompt kind of {relative}; its kinds are {', '.join(self.kinds(profile))}",
                status=404,
            )
        text = render_kind(profile, kind, question, variables, strict)
        return mask_secrets(profile, text)

    def messages(
        self,
        relative: str,
        context: RenderContext,
        *,
        question: str | None = None,
        variables: Mapping[str, Any] | None = None,
        history: list[Any] | None = None,
        style: str = "openai",
        strict: bool = False,
        profile: DefaultProfile | None = None,
    ) -> Any:
        """The chat messages by the persona's `messages:` layout (`profile.format_messages`), secrets masked.

        Raises:
            ServeError: the values are refused.
            ProfilesError: the persona is invalid, the history malformed, or a render fails.
        """
        variables = dict(variables or {})
        self.check_variables(question, variables)
        _check_history(history, self.max_value_chars)
        if profile is None:
            profile = self.profile(relative, context)
        found = profile.format_messages(question, history=history, style=style, strict=strict, **variables)
        return mask_secrets(profile, found)

    def request(
        self,
        relative: str,
        context: RenderContext,
        *,
        api: str = "openai-chat",
        question: str | None = None,
        variables: Mapping[str, Any] | None = None,
        history: list[Any] | None = None,
        strict: bool = False,
        profile: DefaultProfile | None = None,
    ) -> dict[str, Any]:
        """The whole request body for `api` (`profile.to_request`), secrets masked.

        Raises:
            ServeError: the values are refused.
            ProfilesError: as for `messages`, or no model is known for the request.
        """
        variables = dict(variables or {})
        self.check_variables(question, variables)
        _check_history(history, self.max_value_chars)
        if profile is None:
            profile = self.profile(relative, context)
        body = profile.to_request(question, api=api, history=history, strict=strict, **variables)
        return mask_secrets(profile, body)

    def typed(self, profile: DefaultProfile, texts: Mapping[str, str]) -> dict[str, Any]:
        """Text values (a form's, an MCP client's) read by the type each declared input names.

        Raises:
            ServeError: a text is no value of its input's type (422).
        """
        from ..inputs import InputSpecError

        values: dict[str, Any] = {}
        for name, text in texts.items():
            spec = profile.inputs.get(name)
            if spec is None:
                values[name] = text
                continue
            try:
                values[name] = spec.from_text(text)
            except InputSpecError as exc:
                raise ServeError(f"input {name!r}: {exc.reason}", status=422) from None
        return values


def render_kind(
    profile: DefaultProfile, kind: str, question: str | None, variables: dict[str, Any], strict: bool
) -> str:
    """Render `kind` the way `profiles render --kind` does: the three named kinds through their own
    methods (their documented inputs as keywords), any other through `format_prompt`."""
    if "question" in variables:
        given = variables.pop("question")
        if question is None:
            question = given
    if kind == "system":
        return profile.format_system_prompt(question, strict=strict, **variables)
    if kind == "user":
        return profile.format_user_prompt(question, strict=strict, **variables)
    if kind == "write_memory":
        return profile.format_write_memory_prompt(question, strict=strict, **variables)
    asked = {"question": question} if question is not None else {}
    return profile.format_prompt(kind, strict=strict, **asked, **variables)


def mask_secrets(profile: DefaultProfile, found: Any) -> Any:
    """`found` (a text, or messages and request bodies of them) with every secret value of
    `profile` masked, as `explain` masks it."""
    secrets = [item.value for item in profile.resolved.values() if item.secret and item.value is not None]
    if not secrets:
        return found
    return _masked(found, secrets)


def _masked(value: Any, secrets: list[Any]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {key: _masked(item, secrets) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_masked(item, secrets) for item in value]
    return value


#: Most chat turns a history may hold.
MAX_HISTORY_TURNS = 500


def _check_history(history: Any, max_value_chars: int) -> None:
    """A request's history: a list of at most `MAX_HISTORY_TURNS` turns, each text within the value bound."""
    if history is None:
        return
    if not isinstance(history, list):
        raise ServeError("history must be a list of chat turns ({role, content})", status=422)
    if len(history) > MAX_HISTORY_TURNS:
        raise ServeError(f"history holds {len(history)} turns; at most {MAX_HISTORY_TURNS}", status=422)
    _check_size("history", history, max_value_chars)


def _no_persona(text: str) -> ServeError:
    return ServeError(f"no persona {text[:200]!r} in the served folder; see the list of personas", status=404)


def _written(value: Any) -> str | None:
    """A field as the list shows it without resolving: the text, or a dynamic field's default."""
    if isinstance(value, ConfigInfo):
        if value.secret and value.default is not None:
            return MASK
        value = value.default
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _text(value: Any) -> str:
    """A value as a form field holds it: text as it is, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False)


def _check_size(what: str, value: Any, limit: int) -> None:
    """Refuse a value whose text, or any text inside it, is over `limit` characters."""
    stack = [value]
    seen = 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > 10_000:
            raise ServeError(f"{what} holds over 10,000 values; send less", status=413)
        if isinstance(item, str):
            if len(item) > limit:
                raise ServeError(f"{what} is {len(item):,} characters long; at most {limit:,}", status=413)
            try:  # JSON may spell a lone surrogate (\ud800), which no answer can carry back out
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ServeError(
                    f"{what} holds {item[exc.start]!r} at position {exc.start}, half of a surrogate pair, which is "
                    "not Unicode text; send the whole character or remove it",
                    status=422,
                ) from None
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def _issue_dict(issue: ConfigIssue) -> dict[str, Any]:
    return {
        "file": issue.file,
        "line": issue.line,
        "column": issue.column,
        "field": issue.field,
        "message": issue.message,
        "text": str(issue),
    }
