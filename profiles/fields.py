"""The value types of persona fields and their validation: text, lists, templates, tools, folders,
model settings, output schemas, typed inputs and the message layout.

Each validator turns what YAML (or Python) gives into the one form the persona model holds, or
raises a pydantic error whose message says what was expected and how to fix it; the persona
model (`config.py`) attaches file, line and field path. Template and output schema files are
read here, confined to the persona's folder, while the persona is validated.

An error about one entry of a mapping (an input, a layout entry) carries the entry's key in its
context as `entry_at`, so the persona model can point at that entry's own line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from stat import S_ISREG
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from .dynconfig import DYNAMIC_KEYS, ConfigInfo, DynConfig, type_name
from .errors import ProfilesError
from .inputs import InputSpec, InputSpecError, parse_inputs
from .jsonlines import SURROGATE_PROBLEM, lone_surrogate
from .messages import LayoutSpecError, MessageSlot, parse_layout, parse_roles
from .output_schema import (
    OutputSchema,
    OutputSchemaSpecError,
    build_output_schema,
    check_reference,
    is_reference,
    read_schema_text,
)
from .rendering.templates import language_problem
from .settings import SETTINGS, SettingError, check_extra, check_setting, setting_from_text
from .tools import ToolSpecError, parse_tools

__all__ = [
    "Inputs",
    "LIST_FIELDS",
    "Language",
    "Layout",
    "MAX_METADATA_CHARS",
    "MAX_METADATA_DEPTH",
    "MAX_TEMPLATE_BYTES",
    "Metadata",
    "ModelSettings",
    "NO_SETTINGS",
    "ModelSettingsField",
    "OutputSchemaField",
    "PROFILE_FIELDS",
    "REQUIRED_FIELDS",
    "Roles",
    "TEMPLATE_SPECS",
    "TEXT_FIELDS",
    "TemplateSource",
    "Text",
    "TextList",
    "TemplateRoots",
    "Tools",
    "base_dir_var",
    "confine_root_var",
    "merge_model_settings",
    "KIND_NAME",
    "template_sources",
    "type_name",
    "variable_values",
]

#: Fields holding one text each.
TEXT_FIELDS = (
    "name",
    "role",
    "goal",
    "desc",
    "expand_prompt",
    "examples",
    "retry_goal",
    "language",
    "model",
    "avatar",
)
#: Fields holding a list of texts.
LIST_FIELDS = ("constraints", "retry_constraints")
#: Every field a profile resolves, in the order `explain` lists them.
PROFILE_FIELDS = (
    "name",
    "role",
    "goal",
    "retry_goal",
    "desc",
    "constraints",
    "retry_constraints",
    "expand_prompt",
    "examples",
    "language",
    "model",
    "avatar",
)
#: Fields a persona needs unless a factory supplies them.
REQUIRED_FIELDS = ("name", "role")


def _dynamic(value: Mapping[str, Any], *, list_field: bool) -> ConfigInfo:
    unknown = sorted(str(key) for key in value if key not in DYNAMIC_KEYS)
    if unknown:
        raise PydanticCustomError(
            "dynamic_keys",
            "unknown key(s) {keys} in a dynamic field; allowed keys are {allowed}",
            {"keys": ", ".join(unknown), "allowed": ", ".join(DYNAMIC_KEYS)},
        )
    options = dict(value)
    if list_field:
        options.setdefault("is_list", True)
    try:
        info = DynConfig(**options)
    except ProfilesError as exc:
        raise PydanticCustomError("dynamic_field", "{reason}", {"reason": exc.message}) from None
    _text_default(info)  # a number default is a model setting's (which reads it as text first), no field's
    return info


def _text_default(info: ConfigInfo) -> None:
    """Refuse a dynamic text or list field whose default is a number: only a model setting takes one."""
    if info.default is not None and not isinstance(info.default, (str, list, tuple)):
        raise PydanticCustomError(
            "dynamic_field",
            "{reason}",
            {"reason": f"default must be text or a list of text, got {type(info.default).__name__}"},
        )
    defaults = [info.default] if isinstance(info.default, str) else info.default or ()
    for default in defaults:
        if isinstance(default, str) and not default.isascii():
            _refuse_surrogate(default)


def _refuse_surrogate(text: str) -> None:
    """Text holding half of a UTF-16 pair (from Python: YAML cannot spell one) prints, but no
    request holding it can be sent as UTF-8: said where it comes in."""
    found = lone_surrogate(text)
    if found is not None:
        raise PydanticCustomError(
            "text_surrogate", "holds {code}, {problem}", {"code": found[1], "problem": SURROGATE_PROBLEM}
        )


def _text(value: Any) -> Any:
    if value is None:
        return value
    if isinstance(value, str):
        if not value.isascii():
            _refuse_surrogate(value)
        return value
    if isinstance(value, Mapping):
        value = _dynamic(value, list_field=False)
    if isinstance(value, ConfigInfo):
        _text_default(value)
        if value.is_list:  # it would resolve to a list, printed into the prompt as Python writes one
            raise PydanticCustomError(
                "text_type",
                "expected text, got a dynamic field that gives a list (a list default, or is_list: true); "
                "give one text as its default and leave is_list out",
            )
        return value
    hint = "; join the items into one text" if isinstance(value, (list, tuple)) else "; quote it"
    if isinstance(value, bool):  # `language: no` (Norwegian) and `name: On` are YAML's false and true
        hint = " (YAML reads unquoted yes, no, on and off as true/false); quote it"
    raise PydanticCustomError("text_type", "expected text, got {kind}{hint}", {"kind": type_name(value), "hint": hint})


def _language(value: Any) -> Any:
    value = _text(value)
    written = value.default if isinstance(value, ConfigInfo) else value
    problem = language_problem(written) if isinstance(written, str) else None
    if problem is not None:
        raise PydanticCustomError("language", "{reason}", {"reason": problem})
    return value


def variable_values(value: Any) -> dict[str, Any]:
    """`variables:`: each name's literal value, or a dynamic entry resolved like a dynamic field.

    A mapping holding `key` is dynamic (`company: {key: COMPANY_NAME, default: Acme}`), with the
    keys a dynamic field takes; any other value, mappings included, is the variable's value as is.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise PydanticCustomError("variables_type", "expected a mapping of variable name to value")
    result: dict[str, Any] = {}
    for name, item in value.items():
        if (isinstance(item, Mapping) and "key" in item) or isinstance(item, ConfigInfo):
            try:
                result[name] = _dynamic(item, list_field=False) if isinstance(item, Mapping) else item
                _text_default(result[name])
            except PydanticCustomError as exc:
                raise PydanticCustomError(
                    "variable_dynamic", "variable {name}: {reason}", {"name": repr(name), "reason": str(exc)}
                ) from None
        else:
            result[name] = item
    return result


def _text_list(value: Any) -> Any:
    if value is None:
        return value
    if isinstance(value, Mapping):
        value = _dynamic(value, list_field=True)
    if isinstance(value, ConfigInfo):
        _text_default(value)
        # a list field's answer is always split into items: a text is never a list of its letters
        return value if value.is_list else replace(value, is_list=True)
    if isinstance(value, str):
        raise PydanticCustomError(
            "list_type", "expected a list of texts, got one text; write it as a YAML list (- item)"
        )
    if not isinstance(value, (list, tuple)):
        raise PydanticCustomError("list_type", "expected a list of texts, got {kind}", {"kind": type_name(value)})
    bad = [index for index, item in enumerate(value) if not isinstance(item, str)]
    if not bad:
        for item in value:
            if not item.isascii():
                _refuse_surrogate(item)
    if bad:
        more = len(bad) - 1
        raise PydanticCustomError(
            "list_item_type",
            "is {kind}, expected text; quote it" + (f" (and {more} more item(s) of this list)" if more else ""),
            {"index": bad[0], "kind": type_name(value[bad[0]])},
        )
    return tuple(value)




@dataclass(frozen=True)
class TemplateSource:
    """A persona's own template for one prompt kind: its text and where it came from.

    A template named `{store: key}` has no text yet (`store_key` is set): it is fetched from the
    `store` provider at every `create_profile`, for that profile's language, model and deployment.
    A fetched one keeps the provider's `details` (version, label, rollout arm) for traces.
    """

    source: str
    origin: str
    store_key: str | None = None
    details: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)


def _fail(code: str, message: str) -> PydanticCustomError:
    """A validation error whose message is final text, not a template to fill in."""
    return PydanticCustomError(code, message)


def _confined(base_dir: Path, relative: str, what: str = "template") -> Path:
    """Resolve a path relative to `base_dir`, refusing anything that leads outside the confinement root.

    The root is `confine_root_var` (the folder of the persona being loaded, set by the loader), else
    `base_dir` itself. A parent persona in `bases/` may so name `../prompts` when that stays inside
    the loaded persona's folder; a persona loaded on its own may not leave its folder. Checked after
    resolving, so a symlink cannot lead out either. `what` names the file in messages and codes
    (`template`, `output_schema`).
    """
    code = what.replace(" ", "_")
    if "\x00" in relative:  # no file name holds one: the system refuses the path outright
        raise _fail(f"{code}_path", f"{what} path {relative!r} holds a NUL character; name a file without it")
    pure = PurePosixPath(relative.replace("\\", "/"))
    if pure.is_absolute() or relative[1:3] in (":\\", ":/"):
        raise _fail(f"{code}_path", f"{what} path {relative!r} must be relative to the persona's folder")
    root = (confine_root_var.get() or base_dir).resolve()
    target = (base_dir.resolve() / pure).resolve()
    if target != root and root not in target.parents:
        raise _fail(
            f"{code}_path",
            f"{what} path {relative!r} leads outside {root}, the folder of the persona being loaded",
        )
    return target


def _tool_list(value: Any) -> Any:
    try:
        return parse_tools(value)
    except ToolSpecError as exc:
        if exc.index is None:
            raise PydanticCustomError("tools_type", "{reason}", {"reason": exc.reason}) from None
        # list_item_type carries the index, so the issue points at the tool's own line
        reason = f"tool {exc.name!r}: {exc.reason}" if exc.name else exc.reason
        context = {"index": exc.index, "reason": reason}
        raise PydanticCustomError("list_item_type", "{reason}", context) from None


def _template_roots(value: Any) -> Any:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise PydanticCustomError(
            "template_roots_type", "expected a list of folders relative to the persona, e.g. [templates]"
        )
    base_dir = base_dir_var.get() or Path.cwd()
    roots = []
    for index, item in enumerate(value):
        if isinstance(item, Path) and item.is_absolute() and item.is_dir():
            roots.append(item)  # already resolved, e.g. a config copied with model_copy
            continue
        if not isinstance(item, str) or not item.strip():
            raise PydanticCustomError(
                "list_item_type",
                "is {kind}, expected a folder path",
                {"index": index, "kind": type_name(item)},
            )
        root = _confined(Path(base_dir), item)
        if not root.is_dir():
            raise PydanticCustomError(
                "list_item_type",
                "template root '{path}' is not a folder next to the persona; create it or fix the path",
                {"index": index, "path": item},
            )
        roots.append(root)
    return tuple(roots)


#: How a persona names its own template for a kind: a file next to it, inline text, or a store prompt.
TEMPLATE_SPECS = ("file", "inline", "store")

#: The folder a persona's template files are read from while it is being validated.
base_dir_var: ContextVar[Path | None] = ContextVar("profiles_base_dir", default=None)

#: The folder no template path may lead out of: the loaded persona's, also while its parents load.
confine_root_var: ContextVar[Path | None] = ContextVar("profiles_confine_root", default=None)

#: Longest template file read from disk, in bytes.
MAX_TEMPLATE_BYTES = 1_000_000


def _hidden(relative: str) -> bool:
    """Whether a relative path names a hidden file or folder (`.env`, `.git/config`)."""
    parts = PurePosixPath(relative.replace("\\", "/")).parts
    return any(part.startswith(".") and part not in (".", "..") for part in parts)


def _read_file(base_dir: Path, relative: str, what: str) -> str:
    """The text of a file next to the persona, confined to its folder and bounded in size.

    A hidden file is refused: a `.env` beside the persona holds secrets, and neither a template
    nor an output schema ever comes from one.
    """
    code = what.replace(" ", "_")
    if _hidden(relative):
        raise _fail(f"{code}_path", f"{what} path {relative!r} names a hidden file; use a name without a leading '.'")
    path = _confined(base_dir, relative, what)
    try:
        status = path.stat()
        if not S_ISREG(status.st_mode):  # reading a named pipe waits for a writer for ever
            raise _fail(
                f"{code}_unreadable",
                f"{what} file {relative!r} is not a regular file (a pipe, device or folder); name a file that holds it",
            )
        if status.st_size > MAX_TEMPLATE_BYTES:
            raise _fail(f"{code}_size", f"{what} file {relative!r} is over {MAX_TEMPLATE_BYTES} bytes")
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _fail(f"{code}_missing", f"{what} file {relative!r} not found next to the persona") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(f"{code}_unreadable", f"{what} file {relative!r} cannot be read ({type(exc).__name__})") from None


def _read_template(base_dir: Path, relative: str) -> TemplateSource:
    return TemplateSource(_read_file(base_dir, relative, "template"), f"file:{relative}")


#: What a prompt kind's name may look like: it names a template file, `<kind>.j2`, and is what
#: `kinds:` lists, so `templates:` keys follow the same rule.
KIND_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")


def template_sources(value: Any) -> Any:
    """Each prompt kind's `{file: path}`, `{inline: text}` or `{store: name}` as a `TemplateSource`."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise PydanticCustomError(
            "templates_type",
            "expected a mapping of prompt kind to {file: path}, {inline: text} or {store: prompt name}",
        )
    base_dir = base_dir_var.get() or Path.cwd()
    result: dict[str, TemplateSource] = {}
    for kind, spec in value.items():
        if not isinstance(kind, str) or not KIND_NAME.fullmatch(kind):
            raise _at(
                "template_kind",
                f"prompt kind {kind!r} is not a name a template file can have; use letters, digits, '_' and '-' "
                "(at most 64, not starting with a digit or '-'), e.g. handoff",
                kind,
            )
        if isinstance(spec, TemplateSource):
            result[str(kind)] = spec
            continue
        if not isinstance(spec, Mapping) or len(spec) != 1 or next(iter(spec)) not in TEMPLATE_SPECS:
            raise _fail(
                "template_spec",
                f"template for {str(kind)!r} must have one key: file (a path), inline (text) "
                "or store (a prompt name)",
            )
        ((how, text),) = spec.items()
        if not isinstance(text, str):
            raise _fail("template_spec", f"template {how} for {str(kind)!r} must be text")
        if how == "file":
            result[str(kind)] = _read_template(Path(base_dir), text)
        elif how == "store":
            if not text.strip():
                raise _fail("template_spec", f"template store for {str(kind)!r} must name a prompt")
            result[str(kind)] = TemplateSource("", f"store:{text.strip()}", store_key=text.strip())
        else:
            result[str(kind)] = TemplateSource(text, "inline")
    return result


def _at(code: str, message: str, *at: Any) -> PydanticCustomError:
    """An error about one entry of a mapping; `at` is the entry's path below the field."""
    return PydanticCustomError(code, "{reason}", {"reason": message, "entry_at": tuple(at)})


# model settings --------------------------------------------------------------------------------


def _setting(name: str, value: Any) -> Any:
    """One setting: a checked literal, or a dynamic field whose default is checked now."""
    if value is None:
        return value
    if isinstance(value, ConfigInfo):  # a DynConfig from Python: its default is held to the setting as a file's is
        if value.default is not None:
            checked = _setting_default(name, value.default)
            if not isinstance(value.default, (str, list)):  # kept as text and read like an answer, as a file's
                return replace(value, default=checked if isinstance(checked, (str, list)) else repr(checked))
        return value
    if isinstance(value, Mapping):
        options = dict(value)
        default = options.get("default")
        if default is not None:
            checked = _setting_default(name, default)
            # a provider answers text; the default is kept as text too and read like the answer
            options["default"] = checked if isinstance(checked, (str, list)) else repr(checked)
        return _dynamic(options, list_field=False)
    try:
        return check_setting(name, value)
    except SettingError as exc:
        raise PydanticCustomError("setting_value", "{reason}", {"reason": exc.reason}) from None


def _setting_default(name: str, default: Any) -> Any:
    try:
        return setting_from_text(name, default)
    except SettingError as exc:
        raise PydanticCustomError("setting_value", "default {reason}", {"reason": exc.reason}) from None


def _extra(value: Any) -> Any:
    if value is None:
        return {}
    try:
        return check_extra(value)
    except SettingError as exc:
        raise PydanticCustomError("setting_extra", "{reason}", {"reason": exc.reason}) from None


def _setting_type(name: str) -> Any:
    return Annotated[Any, BeforeValidator(lambda value: _setting(name, value))]


class ModelSettings(BaseModel):
    """A persona's `model_settings:`: each a literal or a dynamic field, plus `extra` body keys.

    Ranges are checked here; `settings.py` says which API gets which setting under which name.
    A dynamic setting's value is read from its provider's text when the profile is created.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    temperature: _setting_type("temperature") = Field(None, description=SETTINGS["temperature"].description)
    top_p: _setting_type("top_p") = Field(None, description=SETTINGS["top_p"].description)
    max_tokens: _setting_type("max_tokens") = Field(None, description=SETTINGS["max_tokens"].description)
    stop: _setting_type("stop") = Field(None, description=SETTINGS["stop"].description)
    seed: _setting_type("seed") = Field(None, description=SETTINGS["seed"].description)
    presence_penalty: _setting_type("presence_penalty") = Field(
        None, description=SETTINGS["presence_penalty"].description
    )
    frequency_penalty: _setting_type("frequency_penalty") = Field(
        None, description=SETTINGS["frequency_penalty"].description
    )
    extra: Annotated[dict[str, Any], BeforeValidator(_extra)] = Field(
        default_factory=dict,
        description="Request body keys passed through untouched; a key naming an API "
        "(openai-chat, openai-responses, anthropic) holds keys for that API only.",
    )

    def settings(self) -> dict[str, Any]:
        """The settings that are set, name to literal value or `ConfigInfo`, in table order."""
        return {name: getattr(self, name) for name in SETTINGS if getattr(self, name) is not None}

    def __bool__(self) -> bool:
        return bool(self.settings() or self.extra)


#: The settings of a persona that sets none; shared, since settings never change once made.
NO_SETTINGS = ModelSettings()


def _model_settings(value: Any) -> Any:
    if value is None:
        return NO_SETTINGS
    if isinstance(value, ModelSettings):
        return value
    if not isinstance(value, Mapping):
        raise PydanticCustomError(
            "model_settings_type",
            "expected a mapping of setting to value, e.g. {temperature: 0.2, max_tokens: 512}; got {kind}",
            {"kind": type_name(value)},
        )
    return value


def merge_model_settings(base: ModelSettings, overlay: ModelSettings) -> ModelSettings:
    """`overlay`'s settings over `base`'s, per setting; `extra` merges per key."""
    merged = {**base.settings(), **overlay.settings()}
    return ModelSettings.model_construct(
        **{name: merged.get(name) for name in SETTINGS}, extra={**base.extra, **overlay.extra}
    )


# output schema ---------------------------------------------------------------------------------


def _output_schema(value: Any) -> Any:
    if value is None or isinstance(value, OutputSchema):
        return value
    base_dir = Path(base_dir_var.get() or Path.cwd())
    try:
        if is_reference(value):
            check_reference(value)
            options = {key: value.get(key) for key in ("name", "strict", "description")}
            if "file" in value:
                relative = value["file"]
                if not isinstance(relative, str) or not relative.strip():
                    raise _fail("output_schema_spec", "output_schema file must be a path next to the persona")
                data = read_schema_text(_read_file(base_dir, relative, "output schema"), f"file {relative!r}")
                return build_output_schema(data, origin=f"file:{relative}", **options)
            if "store" in value:
                key = value["store"]
                if not isinstance(key, str) or not key.strip():
                    raise _fail("output_schema_spec", "output_schema store must name a prompt")
                return build_output_schema(None, origin=f"store:{key.strip()}", store_key=key.strip(), **options)
            return build_output_schema(value["schema"], **options)
        return build_output_schema(value)
    except OutputSchemaSpecError as exc:
        raise PydanticCustomError(
            "output_schema", "not a usable JSON Schema: {reason}", {"reason": "; ".join(exc.problems[:10])}
        ) from None
    except ProfilesError as exc:  # the jsonschema package is missing
        raise PydanticCustomError("output_schema_support", "{reason}", {"reason": exc.message}) from None


# inputs, roles and the message layout ----------------------------------------------------------


def _inputs(value: Any) -> Any:
    try:
        return parse_inputs(value)
    except InputSpecError as exc:
        if exc.name is None:
            raise PydanticCustomError("inputs_type", "{reason}", {"reason": exc.reason}) from None
        raise _at("input_spec", exc.reason, exc.name) from None


def _layout(value: Any) -> Any:
    if value is None:
        return None
    try:
        return parse_layout(value)
    except LayoutSpecError as exc:
        if exc.index is None:
            raise PydanticCustomError("messages_type", "{reason}", {"reason": exc.reason}) from None
        raise _at("message_spec", exc.reason, exc.index) from None


def _roles(value: Any) -> Any:
    try:
        return parse_roles(value)
    except LayoutSpecError as exc:
        raise PydanticCustomError("roles_type", "{reason}", {"reason": exc.reason}) from None


#: Largest `metadata:` a persona may carry, measured as compact JSON text.
MAX_METADATA_CHARS = 64_000

#: Deepest nesting of lists and mappings inside `metadata:`.
MAX_METADATA_DEPTH = 8


def _metadata(value: Any) -> Any:
    """Free-form data kept with a persona: text keys, JSON values, bounded in size and depth.

    Checked here so that whatever writes a persona out (JSONL, YAML) can write it unchanged.
    """
    import json
    import math

    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise PydanticCustomError(
            "metadata_type", "expected a mapping of text keys to values, got {kind}", {"kind": type_name(value)}
        )
    stack: list[tuple[Any, str, int]] = [(value, "metadata", 1)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, Mapping) or isinstance(item, (list, tuple)):
            if depth > MAX_METADATA_DEPTH:
                raise PydanticCustomError(
                    "metadata_depth", "{where} nests over {limit} levels; flatten it",
                    {"where": where, "limit": MAX_METADATA_DEPTH},
                )
            if isinstance(item, Mapping):
                for key, child in item.items():
                    if not isinstance(key, str):
                        raise PydanticCustomError(
                            "metadata_key", "{where} has the key {key}, which is not text; quote it",
                            {"where": where, "key": repr(key)},
                        )
                    stack.append((child, f"{where}.{key}", depth + 1))
            else:
                stack.extend((child, f"{where}[{index}]", depth + 1) for index, child in enumerate(item))
        elif isinstance(item, float) and not math.isfinite(item):
            raise PydanticCustomError("metadata_value", "{where} is {value}; JSON has no such number",
                                      {"where": where, "value": repr(item)})
        elif item is not None and not isinstance(item, (str, int, float, bool)):
            raise PydanticCustomError(
                "metadata_value", "{where} is {kind}; use text, numbers, true/false, null, lists and mappings",
                {"where": where, "kind": type(item).__name__},
            )
    size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    if size > MAX_METADATA_CHARS:
        raise PydanticCustomError(
            "metadata_size", "is {size} characters as JSON, over the limit of {limit}; keep bulky data elsewhere",
            {"size": size, "limit": MAX_METADATA_CHARS},
        )
    # lists and tuples alike come back as lists: what JSON and YAML write
    return json.loads(json.dumps(value, ensure_ascii=False))


Text = Annotated[str | ConfigInfo | None, BeforeValidator(_text)]
#: Text that picks a template locale: see `language_problem`.
Language = Annotated[str | ConfigInfo | None, BeforeValidator(_language)]
TextList = Annotated[tuple[str, ...] | ConfigInfo | None, BeforeValidator(_text_list)]
Tools = Annotated[tuple[Any, ...], BeforeValidator(_tool_list)]
TemplateRoots = Annotated[tuple[Path, ...], BeforeValidator(_template_roots)]
ModelSettingsField = Annotated[ModelSettings, BeforeValidator(_model_settings)]
OutputSchemaField = Annotated[OutputSchema | None, BeforeValidator(_output_schema)]
Inputs = Annotated[dict[str, InputSpec], BeforeValidator(_inputs)]
Layout = Annotated[tuple[MessageSlot, ...] | None, BeforeValidator(_layout)]
Roles = Annotated[dict[str, str], BeforeValidator(_roles)]
Metadata = Annotated[dict[str, Any], BeforeValidator(_metadata)]
