"""Prompty (`.prompty`): YAML front matter and a Jinja or Mustache body split at role lines.

Both versions of the format are read: v1 (prompty 0.1, promptflow, the VS Code extension:
`model.configuration/parameters`, `inputs` as a mapping with `type`, `sample`) and v2 (prompty
2.x: `model.id/options/connection`, `inputs` with `kind`, `template.format`). Import: the body's
`system:` section becomes the persona's system template and its last `user:` section the user
template (other sections become prompt kinds placed by `messages:`); a chat-history loop or a
`thread` input becomes the history slot; inputs, samples, outputs (as the output schema), model
options (as model settings) and function tools carry over; the name is kept, the description
becomes the goal, and a role is derived from the name. `${env:…}` stays a reference;
`${file:…}` is read only for `sample:`, only inside the file's folder, and a v1 `base:` parent
(inside it too) gives its model and sample, as Prompty v1 hoists them. Connection settings are
kept as metadata, references only: a literal key is dropped.

Export writes v2: the persona's prompts, rendered with every input left as `{{name}}`, its inputs,
settings, tools and output schema, and what has no Prompty field under `metadata.agent_profiles`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ConfigIssue
from ._draft import Draft, ImportResult, is_reference, secret_name, slug, title_words
from ._files import (
    Source,
    confined,
    front_matter_start,
    parse_json,
    parse_yaml,
    read_source,
    split_front_matter,
    within,
)
from .placeholders import Unsupported, jinja_names, mustache, rename_jinja

__all__ = ["OPTION_NAMES", "read", "read_text", "write"]

#: Prompty v2 option names and the persona's model setting each is.
OPTION_NAMES = {
    "temperature": "temperature",
    "maxOutputTokens": "max_tokens",
    "topP": "top_p",
    "seed": "seed",
    "stopSequences": "stop",
    "frequencyPenalty": "frequency_penalty",
    "presencePenalty": "presence_penalty",
}

_ROLE_LINE = re.compile(
    r"(?im)^[ \t]*#?[ \t]*(system|user|assistant|developer|function|tool)[ \t]*(?:\[[^\]\n]*\])?[ \t]*:[ \t]*$"
)
_JINJA_HISTORY = re.compile(
    r"\{%-?\s*for\s+(\w+)\s+in\s+(\w+)\s*-?%\}\s*\{\{-?\s*\1\.role\s*-?\}\}\s*:\s*"
    r"\{\{-?\s*\1\.content\s*-?\}\}\s*\{%-?\s*endfor\s*-?%\}"
)
_MUSTACHE_HISTORY = re.compile(r"\{\{#(\w+)\}\}\s*\{\{role\}\}\s*:\s*\{\{content\}\}\s*\{\{/\1\}\}")
_TYPES = ("string", "integer", "number", "boolean", "array", "object")

#: Prompty kinds that are a JSON type under another name (Prompty sends `float` as `number`).
_KIND_TYPES = {"float": "number"}


def _kind_type(kind: Any) -> Any:
    """The JSON type a Prompty kind is, when it is one; else the kind as written."""
    return _KIND_TYPES.get(kind, kind) if isinstance(kind, str) else kind


def read(path: Path) -> ImportResult:
    """A `.prompty` file, or every `.prompty` file of a folder, as personas.

    Raises:
        ConfigError: a file is unreadable or malformed, naming the file and line.
    """
    files = sorted(file for file in path.glob("*.prompty") if within(path, file)) if path.is_dir() else [path]
    if not files:
        raise ConfigError(ConfigIssue("no .prompty files in this folder", file=str(path)))
    result = ImportResult("prompty", str(path))
    stems: set[str] = set()
    for file in files:
        persona = read_text(read_source(file), str(file), file)
        while persona.stem in stems:
            persona.stem += "_2"
        stems.add(persona.stem)
        result.personas.append(persona)
    return result


def read_text(text: str, label: str, path: Path) -> Any:
    """One Prompty file's text as an `ImportedPersona`."""
    start = front_matter_start(text)
    if start is None:
        # a file of only a body is a prompt Prompty 2 reads with no front matter (its "shorthand")
        front_text, body, body_line = "", text.replace("\r\n", "\n").replace("\r", "\n"), 1
    else:
        front_text, body, body_line = split_front_matter(text, label)
    front = parse_yaml(front_text, label, path, first_line=(start or 0) + 2)
    if front.data is None:
        front.data = {}
    if not isinstance(front.data, dict):
        raise ConfigError(front.issue("the front matter must be a mapping of fields"))
    data: dict[str, Any] = front.data
    name = data.get("displayName") or data.get("name") or path.stem
    draft = Draft("prompty", label, path, str(data.get("name") or path.stem))
    data = _schema_names(draft, front, data)
    version = 2 if start is None or _is_v2(data) else 1
    if start is None:
        draft.note("converted", "no front matter: the whole file is the prompt, as Prompty 2 reads such a file")
    if version == 1:
        draft.note("converted", "read as a Prompty v1 file; an export writes Prompty v2")
    inherited: dict[str, Any] = {}
    if version == 1 and "base" in data:
        data, inherited = _hoist_base(draft, front, data, (path.resolve(),))
    _names(draft, front, data)
    inputs, thread = _inputs(draft, front, data.get("inputs"), version)
    sample = {**inherited, **_sample(draft, front, data.get("sample"))}
    for key, value in data.items():
        line = front.line(key)
        if key in ("name", "displayName", "description", "inputs", "sample", "template", "outputs", "model"):
            continue
        if key == "tools":
            _tools(draft, front, value)
        elif key == "metadata" and isinstance(value, dict):
            _metadata(draft, front, value)
        elif key in ("authors", "tags", "version") and version == 1:
            # where Prompty v2 keeps them, so v1 and v2 files import alike
            draft.keep(f"metadata.{key}", value, line)
        elif key == "base" and version == 1:
            draft.note("converted", f"model and sample taken from the parent {value} as Prompty v1 does; "
                       "its template and inputs are not inherited", line)
        elif key == "base":
            draft.drop("base", "Prompty 2 no longer follows a parent .prompty; import the parent as well and "
                       "compare", line, kind="dropped")
        else:
            draft.keep(key, value, line)
    _model(draft, front, data.get("model"))
    _outputs(draft, front, data.get("outputs"))
    template_kind = _template_kind(front, data.get("template"))
    _body(draft, body, body_line, template_kind, inputs, thread, sample, name)
    return draft.finish(slug(str(data.get("name") or path.stem)))


#: Longest chain of `base:` parents followed; a longer one is surely a mistake.
MAX_BASE_DEPTH = 8

#: The model keys Prompty v1 hoists from a parent: the child's own entries win, key by key.
_HOISTED_MODEL_KEYS = ("configuration", "parameters", "response")


def _hoist_base(draft: Draft, front: Source, data: dict[str, Any], chain: tuple[Path, ...]) -> tuple[dict, dict]:
    """The front matter with its `base:` parents' model folded in, and the sample they give.

    Prompty v1 loads the parent named by `base:` (beside the file) and fills the child's
    `model.api`, `model.configuration`, `model.parameters`, `model.response` and `sample` from
    it, key by key, the child's own values winning; the parent's template and inputs are not
    inherited. Parents stay inside the imported file's folder, like every file it names.

    Raises:
        ConfigError: the parent is outside the folder, missing or malformed, or the chain loops or is too long.
    """
    line = front.line("base")
    target = confined(draft.path.parent, data["base"], file=draft.file, line=line, what="base")
    if target in chain:
        names = " → ".join(item.name for item in (*chain, target))
        raise ConfigError(ConfigIssue(f"base files form a cycle: {names}; remove one of the base: lines",
                                      file=draft.file, line=line))
    if len(chain) > MAX_BASE_DEPTH:
        raise ConfigError(ConfigIssue(f"more than {MAX_BASE_DEPTH} base: parents in a chain; flatten some",
                                      file=draft.file, line=line))
    label = str(draft.path.parent / data["base"])
    _referenced(draft, target, data["base"], line, "base")
    front_text, _, _ = split_front_matter(read_source(target, label), label)
    parent_front = parse_yaml(front_text, label, target, first_line=2)
    parent = parent_front.data if parent_front.data is not None else {}
    if not isinstance(parent, dict):
        raise ConfigError(parent_front.issue("the front matter must be a mapping of fields"))
    parent_draft = Draft("prompty", label, target, target.stem)
    sample = _sample(parent_draft, parent_front, parent.get("sample"))
    if "base" in parent:
        parent, grand_sample = _hoist_base(parent_draft, parent_front, parent, (*chain, target))
        sample = {**grand_sample, **sample}
    return {**data, "model": _hoisted_model(data.get("model"), parent.get("model"))}, sample


def _hoisted_model(own: Any, parent: Any) -> Any:
    if not isinstance(parent, dict):
        return own
    if own is None:
        own = {}
    if not isinstance(own, dict):
        return own  # a malformed model is reported as the child's own
    model = dict(own)
    if not model.get("api") and parent.get("api"):
        model["api"] = parent["api"]
    for key in _HOISTED_MODEL_KEYS:
        mine, theirs = model.get(key), parent.get(key)
        if isinstance(theirs, dict):
            model[key] = {**theirs, **mine} if isinstance(mine, dict) else mine if key in model else dict(theirs)
    return model


def _schema_names(draft: Draft, front: Source, data: dict[str, Any]) -> dict[str, Any]:
    """The front matter with `inputSchema`/`outputSchema` read as `inputs`/`outputs`.

    Prompty's runtime has also named them after AgentSchema (`inputSchema: {properties: […]}`,
    as files in its own repository do); they hold the same list of properties.
    """
    for old, new in (("inputSchema", "inputs"), ("outputSchema", "outputs")):
        if old not in data or new in data:
            continue
        value = data[old]
        properties = value.get("properties") if isinstance(value, dict) and "properties" in value else value
        data = {(new if key == old else key): (properties if key == old else item) for key, item in data.items()}
        draft.note("converted", f"{old} (Prompty's AgentSchema name for {new}) read as {new}; an export writes "
                   f"{new}", front.line(old))
    return data


def _is_v2(data: dict[str, Any]) -> bool:
    model = data.get("model")
    template = data.get("template")
    inputs = data.get("inputs")
    if isinstance(model, str) or (isinstance(model, dict) and {"id", "provider", "apiType", "connection", "options"}
                                  & set(model)):
        return True
    if isinstance(template, dict) and "format" in template:
        return True
    if isinstance(inputs, list) or (isinstance(inputs, dict) and any(
            isinstance(spec, dict) and "kind" in spec for spec in inputs.values())):
        return True
    return "displayName" in data or "metadata" in data


def _names(draft: Draft, front: Source, data: dict[str, Any]) -> None:
    name_key = "displayName" if data.get("displayName") else "name"
    name = data.get(name_key)
    if name is not None:
        if not isinstance(name, str):
            raise ConfigError(front.issue(f"{name_key} must be text", name_key))
        draft.set_text("name", draft.text_reference("name", name, front.line(name_key)), front.line(name_key))
        if name_key == "displayName" and data.get("name"):
            draft.extra["name"] = data["name"]
    description = data.get("description")
    if description is not None:
        if not isinstance(description, str):
            raise ConfigError(front.issue("description must be text", "description"))
        draft.set_text("goal", draft.text_reference("goal", description.strip(), front.line("description")),
                  front.line("description"))
    if "name" not in draft.fields:
        draft.derive("name", draft.path.stem, "from the file name")


def _inputs(
    draft: Draft, front: Source, value: Any, version: int
) -> tuple[dict[str, dict[str, Any]], str | None]:
    """Declared inputs by their Prompty name, as persona input specs; and the thread input's name."""
    if value is None:
        return {}, None
    entries: list[tuple[str, Any, tuple[Any, ...]]] = []
    if isinstance(value, list):
        for index, item in enumerate(value):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise ConfigError(front.issue("each input must be a mapping with a name", "inputs", index))
            entries.append((item["name"], item, ("inputs", index)))
    elif isinstance(value, dict):
        entries = [(str(key), item, ("inputs", key)) for key, item in value.items()]
    else:
        raise ConfigError(front.issue("inputs must be a list or a mapping", "inputs"))
    specs: dict[str, dict[str, Any]] = {}
    thread = None
    for name, item, where in entries:
        line = front.line(*where)
        if not isinstance(item, dict):
            specs[name] = {"examples": [item]} if item is not None else {}
            continue
        kind = _kind_type(item.get("kind", item.get("type")))
        if kind == "thread":
            thread = name
            continue
        spec: dict[str, Any] = {}
        if kind in _TYPES:
            spec["type"] = kind
        elif kind is not None:
            draft.note("converted", f"input {name!r} is of kind {kind!r}, which persona inputs lack; it takes any "
                       "value",
                       line)
        for source_key, target in (("description", "description"), ("default", "default"), ("enumValues", "enum"),
                                   ("enum", "enum"), ("required", "required")):
            if source_key in item:
                spec[target] = item[source_key]
        if "example" in item:
            spec["examples"] = [item["example"]]
        if "sample" in item:
            spec["examples"] = [item["sample"]]
        if "items" in item or "properties" in item:
            draft.note("converted", f"input {name!r}: the kinds of its items or properties are not kept", line)
        for key in item:
            if key not in ("name", "kind", "type", "description", "default", "enumValues", "enum", "required",
                           "example", "sample", "items", "properties"):
                draft.keep(f"inputs.{name}.{key}", item[key], line)
        specs[name] = spec
    return specs, thread


def _referenced(draft: Draft, target: Path, relative: str, line: int | None, what: str) -> None:
    """Refuse a missing `base:` or `${file:…}` target at the line naming it, not at the missing file."""
    if not target.is_file():
        state = "a folder" if target.is_dir() else "not found"
        raise ConfigError(
            ConfigIssue(
                f"{what} {relative!r} is {state} beside {draft.path.name}; name a file in this file's folder",
                file=draft.file,
                line=line,
            )
        )


def _sample(draft: Draft, front: Source, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    line = front.line("sample")
    if isinstance(value, str) and value.startswith("${file:") and value.endswith("}"):
        relative = value[len("${file:") : -1]
        target = confined(draft.path.parent, relative, file=draft.file, line=line, what="sample file")
        label = str(draft.path.parent / relative)
        _referenced(draft, target, relative, line, "sample file")
        text = read_source(target, label)
        # as Prompty reads a referenced file: YAML by either suffix, JSON otherwise
        yaml_file = target.suffix.lower() in (".yaml", ".yml")
        loaded = parse_yaml(text, label, target) if yaml_file else parse_json(text, label, target)
        value = loaded.data
        draft.note("converted", f"sample read from {relative} (inside this file's folder)", line)
    elif is_reference(value):
        draft.drop("sample", f"{value!r} is a reference this import does not follow", line)
        return {}
    if not isinstance(value, dict):
        raise ConfigError(front.issue("sample must be a mapping of input name to value", "sample"))
    return dict(value)


def _model(draft: Draft, front: Source, model: Any) -> None:
    if model is None:
        return
    if isinstance(model, str):
        draft.set_text("model", draft.text_reference("model", model, front.line("model")), front.line("model"))
        return
    if not isinstance(model, dict):
        raise ConfigError(front.issue("model must be a name or a mapping", "model"))
    for key, value in model.items():
        line = front.line("model", key)
        if key == "id":
            draft.set_text("model", draft.text_reference("model", value, line), line)
        elif key == "options" and isinstance(value, dict):
            for option, setting in value.items():
                option_line = front.line("model", "options", option)
                if option == "additionalProperties" and isinstance(setting, dict):
                    extra = {k: v for k, v in setting.items() if not secret_name(k)}
                    if extra:
                        draft.fields.setdefault("model_settings", {})["extra"] = extra
                    for dropped in set(setting) - set(extra):
                        draft.drop(f"model.options.additionalProperties.{dropped}", "it holds a secret value",
                                   option_line, kind="secret")
                elif option in OPTION_NAMES:
                    draft.setting(OPTION_NAMES[option], setting, option_line, f"model.options.{option}")
                else:
                    draft.keep(f"model.options.{option}", setting, option_line)
        elif key == "parameters" and isinstance(value, dict):
            for parameter, setting in value.items():
                parameter_line = front.line("model", "parameters", parameter)
                if parameter == "tools":
                    _openai_tools(draft, front, setting, ("model", "parameters", "tools"))
                else:
                    draft.setting(parameter, setting, parameter_line, f"model.parameters.{parameter}")
        elif key == "configuration" and isinstance(value, dict):
            _configuration(draft, front, value)
        elif key == "api":
            draft.keep("model.apiType", value, line)
        else:
            draft.keep(f"model.{key}", value, line)


_PROVIDERS = {"openai": "openai", "azure_openai": "azure", "azure": "azure"}


def _configuration(draft: Draft, front: Source, value: dict[str, Any]) -> None:
    """A v1 `model.configuration` as v2 has it: the model, a provider, and a connection of references."""
    where = ("model", "configuration")
    model_key = next((key for key in ("azure_deployment", "name", "model") if value.get(key) is not None), None)
    if model_key is not None:
        line = front.line(*where, model_key)
        draft.set_text("model", draft.text_reference("model", value[model_key], line), line)
    connection: dict[str, Any] = {}
    for option, setting in value.items():
        line = front.line(*where, option)
        if option == model_key:
            continue
        if option == "type" and isinstance(setting, str) and setting in _PROVIDERS:
            draft.keep("model.provider", _PROVIDERS[setting], line)
        elif option in ("azure_endpoint", "base_url", "endpoint"):
            connection["endpoint"] = setting
        elif option in ("api_key", "key"):
            connection["apiKey"] = setting
        else:
            draft.keep(f"model.configuration.{option}", setting, line,
                       why=" (Prompty v2 has no such connection setting, so an export leaves it out)")
    if connection:
        connection = {"kind": "key" if "apiKey" in connection else "anonymous", **connection}
        draft.keep("model.connection", connection, front.line(*where))


def _outputs(draft: Draft, front: Source, outputs: Any) -> None:
    schema = _outputs_schema(outputs)
    if schema is not None:
        draft.set("output_schema", {"name": slug(draft.id), "schema": schema}, front.line("outputs"))


def _outputs_schema(outputs: Any) -> dict[str, Any] | None:
    """The JSON Schema Prompty `outputs` make; None for none."""
    if outputs is None:
        return None
    entries: list[tuple[str, Any]] = []
    if isinstance(outputs, list):
        entries = [(str(item.get("name")), item) for item in outputs if isinstance(item, dict)]
    elif isinstance(outputs, dict):
        entries = [(str(key), item) for key, item in outputs.items()]
    if not entries:
        return None
    properties: dict[str, Any] = {}
    for name, item in entries:
        prop: dict[str, Any] = {}
        kind = _kind_type(item.get("kind", item.get("type"))) if isinstance(item, dict) else None
        if kind in _TYPES:
            prop["type"] = kind
        if isinstance(item, dict) and item.get("description"):
            prop["description"] = item["description"]
        if isinstance(item, dict) and item.get("enumValues"):
            prop["enum"] = item["enumValues"]
        properties[name] = prop
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _json_type(kind: Any) -> dict[str, Any]:
    kind = _kind_type(kind)
    return {"type": kind} if kind in _TYPES else {}


def _tools(draft: Draft, front: Source, value: Any, where: tuple[Any, ...] = ("tools",)) -> None:
    if not isinstance(value, list):
        draft.keep(".".join(where), value, front.line(*where))
        return
    tools = []
    for index, item in enumerate(value):
        line = front.line(*where, index)
        if not isinstance(item, dict):
            draft.drop(f"tools[{index}]", "not a mapping", line)
            continue
        if item.get("kind", "function") != "function":
            draft.drop(f"tool {item.get('name')!r}", f"a {item.get('kind')} tool is a service or code, not a "
                       "function the model calls; configure it in the agent's framework", line, kind="code")
            continue
        parameters = item.get("parameters")
        if isinstance(parameters, dict) and isinstance(parameters.get("properties"), list):
            parameters = parameters["properties"]
        if not (parameters is None or isinstance(parameters, dict) or (
                isinstance(parameters, list) and all(isinstance(entry, dict) for entry in parameters))):
            raise ConfigError(front.issue(
                f"tool {item.get('name')!r}: parameters must be a list of properties (each a mapping with a name "
                "and a kind), a mapping of name to property, or a JSON Schema object", *where, index, "parameters"))
        if item.get("bindings"):
            draft.keep(f"tools.{item.get('name')}.bindings", item["bindings"], line)
        tools.append({**_function_tool(item),
                      "description": draft.tool_description(item.get("name"), item.get("description"), line)})
    if tools:
        draft.set("tools", tools, front.line(*where))


def _function_tool(item: dict[str, Any]) -> dict[str, Any]:
    """The tool spec a Prompty function tool makes."""
    properties: dict[str, Any] = {}
    required = []
    parameters = item.get("parameters") or []
    if isinstance(parameters, dict) and isinstance(parameters.get("properties"), list):
        parameters = parameters["properties"]  # the properties as a list, as early Prompty 2 files write them
    if isinstance(parameters, dict) and "properties" in parameters:
        schema = dict(parameters)
    else:
        items = parameters if isinstance(parameters, list) else [
            {"name": key, **(spec if isinstance(spec, dict) else {})} for key, spec in dict(parameters).items()
        ]
        for parameter in items:
            prop = _json_type(parameter.get("kind", parameter.get("type")))
            if parameter.get("description"):
                prop["description"] = parameter["description"]
            if parameter.get("enumValues"):
                prop["enum"] = parameter["enumValues"]
            properties[str(parameter.get("name"))] = prop
            # as Prompty sends the tool: a parameter is required when it says so, or every one is in strict mode
            if parameter.get("required") is True or item.get("strict") is True:
                required.append(str(parameter.get("name")))
        schema = {"type": "object", "properties": properties, "required": required}
        if item.get("strict") is True:  # what strict mode needs of every object, as Prompty sends it
            schema["additionalProperties"] = False
    tool: dict[str, Any] = {"name": item.get("name"), "description": item.get("description") or "",
                            "parameters": schema}
    if "strict" in item:
        tool["strict"] = item["strict"]
    return tool


def _openai_tools(draft: Draft, front: Source, value: Any, where: tuple[Any, ...]) -> None:
    if not isinstance(value, list):
        draft.keep("model.parameters.tools", value, front.line(*where))
        return
    if any(isinstance(entry, dict) and "function" not in entry for entry in value):
        _tools(draft, front, value, where)  # Prompty's own tool shape (name, kind, parameters), not OpenAI's
        return
    draft.set("tools", value, front.line(*where))


def _metadata(draft: Draft, front: Source, value: dict[str, Any]) -> None:
    for key, item in value.items():
        line = front.line("metadata", key)
        if key == "agent_profiles" and isinstance(item, dict):
            draft.restore(item, line)
        else:
            draft.keep(f"metadata.{key}", item, line)


def _template_kind(front: Source, template: Any) -> str:
    kind: Any = "jinja2"
    if isinstance(template, str):
        kind = template
    elif isinstance(template, dict):
        fmt = template.get("format", template.get("type", "jinja2"))
        kind = fmt.get("kind", "jinja2") if isinstance(fmt, dict) else fmt
    if kind not in ("jinja2", "mustache"):
        raise ConfigError(front.issue(f"template format {kind!r} is not one this import reads (jinja2, mustache)",
                                      "template"))
    return str(kind)


def _body(
    draft: Draft,
    body: str,
    body_line: int,
    template_kind: str,
    inputs: dict[str, dict[str, Any]],
    thread: str | None,
    sample: dict[str, Any],
    name: Any,
) -> None:
    history_after: int | None = None
    history_names: set[str] = set()
    sections = _sections(body, body_line)
    converted: list[tuple[str, str, int]] = []
    names_seen: list[str] = []
    for index, (role, text, line) in enumerate(sections):
        pattern = _JINJA_HISTORY if template_kind == "jinja2" else _MUSTACHE_HISTORY
        match = pattern.search(text)
        if match:
            history_names.add(match.group(2) if template_kind == "jinja2" else match.group(1))
            text = text[: match.start()] + text[match.end() :]
            history_after = index
        if thread:
            marker = re.search(r"\{\{-?\s*" + re.escape(thread) + r"\s*-?\}\}", text)
            if marker:
                text = text[: marker.start()] + text[marker.end() :]
                history_after = index
                history_names.add(thread)
        converted.append((role, text.strip(), line))
    for history in sorted(history_names):
        draft.note("converted", f"{history!r} held the chat history: it is now the history slot of the messages "
                   "(pass history=[…] to format_messages)")
        inputs.pop(history, None)
        sample.pop(history, None)
    # placeholder names: declared inputs first, then whatever the body reads
    jinja_texts: list[tuple[str, str, int]] = []
    namer = draft.namer
    if template_kind == "mustache":
        found = set(re.findall(r"\{\{\{?\s*[#^/&]?\s*([A-Za-z_][A-Za-z0-9_]*)", body))
        namer.all([*inputs, *sorted(found)])
        for role, text, line in converted:
            notes: list[tuple[str, int]] = []
            try:
                jinja = mustache(text, namer, notes)
            except Unsupported as exc:
                raise ConfigError(ConfigIssue(exc.reason, file=draft.file,
                                              line=line + (exc.line or 1) - 1)) from None
            for message, at in notes:
                draft.note("converted", message, line + at - 1)
            jinja_texts.append((role, jinja, line))
    else:
        for role, text, line in converted:
            try:
                names_seen += jinja_names(text)
            except Unsupported as exc:
                raise ConfigError(ConfigIssue(f"the {role} section: {exc.reason}", file=draft.file,
                                              line=line + (exc.line or 1) - 1)) from None
        mapping = namer.all(list(dict.fromkeys([*inputs, *names_seen])))
        renames = {old: new for old, new in mapping.items() if old != new}
        for role, text, line in converted:
            jinja_texts.append((role, _sandbox_whitespace(rename_jinja(text, renames)), line))
    for new, old in namer.renamed.items():
        draft.note("renamed", f"the variable {old!r} is now {new!r}: {old!r} names a persona field or is no usable "
                   "variable name; an export writes it back as it was")
    read_names = set(names_seen) if template_kind == "jinja2" else {
        name for name in namer.names if name not in history_names}
    if template_kind == "jinja2":
        read_names = {name for name in read_names}
    for input_name, spec in inputs.items():
        draft.inputs[namer.name(input_name)] = spec
    for variable in sorted(read_names - set(inputs) - history_names):
        if variable in ("question",):
            continue
        draft.inputs[namer.name(variable)] = {}
        draft.note("converted", f"the template reads {variable!r}, which inputs does not declare; declared as an "
                   "input of any type")
    for key, value in sample.items():
        if key in inputs or key in read_names:
            draft.samples[namer.name(key)] = value
        else:
            draft.drop(f"sample.{key}", "no template reads it")
    draft.layout(jinja_texts, history_after)
    if "role" not in draft.fields:
        role_from = str(name) if isinstance(name, str) else draft.path.stem
        draft.derive("role", title_words(role_from), "from the name")


def _sections(body: str, body_line: int) -> list[tuple[str, str, int]]:
    """The body's (role, text, first line) sections; text before any role line is the system's."""
    sections: list[tuple[str, str, int]] = []
    matches = list(_ROLE_LINE.finditer(body))
    start = 0
    role = "system"
    line = body_line
    for match in matches:
        text = body[start : match.start()]
        if text.strip():
            sections.append((role, text, line))
        role = match.group(1).lower()
        start = match.end()
        line = body_line + body.count("\n", 0, match.end()) + 1
    text = body[start:]
    if text.strip() or not sections:
        sections.append((role, text, line))
    return sections


# export ----------------------------------------------------------------------------------------

#: One persona per `.prompty` file.
MANY = False

#: Prompty inputs have defaults: a variable's default becomes its input's.
INLINE_DEFAULTS = False

_ALLOWED_FILTERS: frozenset[str] | None = None


def verbatim(item: Any, kind: str, source: str) -> str | None:
    """The persona's own template for a message, as Prompty can run it, or None when it cannot.

    Prompty renders Jinja itself, so a template that reads only inputs and uses only Jinja's own
    filters is written as it is (loops and conditions kept); one that reads persona fields or
    this project's filters is written as rendered.
    """
    import jinja2
    from jinja2 import nodes

    global _ALLOWED_FILTERS
    if _ALLOWED_FILTERS is None:
        _ALLOWED_FILTERS = frozenset(jinja2.Environment().filters)
    try:
        tree = jinja2.Environment().parse(source)
        names = set(jinja_names(source))
    except (jinja2.TemplateSyntaxError, Unsupported):
        return None
    if any(node.name not in _ALLOWED_FILTERS for node in tree.find_all(nodes.Filter)):
        return None
    if any(True for _ in tree.find_all((nodes.Include, nodes.Extends, nodes.Import, nodes.FromImport))):
        return None
    if not names <= set(item.placeholders) or any(item.placeholders[name].secret for name in names):
        return None
    renames = {name: item.source_name(name) for name in names if item.source_name(name) != name}
    try:
        return rename_jinja(_stock_whitespace(source), renames)
    except jinja2.TemplateSyntaxError:
        return None


def _sandbox_whitespace(source: str) -> str:
    """A Prompty template (stock Jinja, whose blocks keep the whitespace around them) written so this
    project's sandbox, which has `trim_blocks` and `lstrip_blocks` on, renders the same text.

    A block or comment tag on a line of its own gets Jinja's `+` where either setting would act: `{%+`
    keeps the indentation before it, `+%}` the newline after it. A tag with `-` or `+` already is left.
    """
    import jinja2

    out: list[str] = []
    indented = False  # the current line so far is spaces or tabs, at least one
    blank = True  # the current line so far holds nothing but spaces or tabs
    tokens = list(jinja2.Environment().lex(source))
    for index, (_, kind, value) in enumerate(tokens):
        if kind in ("block_begin", "comment_begin") and value in ("{%", "{#") and indented:
            value += "+"
        elif kind in ("block_end", "comment_end") and value in ("%}", "#}") and index + 1 < len(tokens) and (
                tokens[index + 1][2].startswith(("\n", "\r\n"))):
            value = "+" + value
        out.append(value)
        if "\n" in value:
            tail = value.rsplit("\n", 1)[-1]
            blank, indented = not tail.strip(), bool(tail) and not tail.strip()
        else:
            blank = blank and not value.strip()
            indented = blank and (indented or bool(value))
    return "".join(out)


def _stock_whitespace(source: str) -> str:
    """`source` written out so stock Jinja (Prompty's, which keeps a trailing newline) renders the same
    text as this project's sandbox, which has `trim_blocks` and `lstrip_blocks` on.

    Jinja's own lexer, set as the sandbox is, already leaves out the indentation before a block tag
    on a line of its own; the newline after a tag it keeps in the tag's end, and that is dropped here,
    as is the last newline, which the sandbox does not keep either.
    """
    import jinja2

    lexer = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    text = "".join(
        re.sub(r"\r?\n$", "", value, count=1) if kind in ("block_end", "comment_end", "raw_end") else value
        for _, kind, value in lexer.lex(source)
    )
    return re.sub(r"\r?\n$", "", text, count=1)


def _jinja_text(item: Any, pieces: list[Any]) -> str:
    from .placeholders import Var, escape_jinja

    return "".join(
        "{{" + item.source_name(piece.name) + "}}" if isinstance(piece, Var) else escape_jinja(piece)
        for piece in pieces
    )


def _reference(item: Any, name: str) -> Any:
    """A dynamic `env` field as Prompty's `${env:KEY:default}`, else the value; None for a secret elsewhere."""
    from ..dynconfig import ConfigInfo

    declared = getattr(item.config, name, None)
    resolved = item.profile.resolved.get(name)
    if isinstance(declared, ConfigInfo) and declared.provider in (None, "env") and declared.key:
        default = declared.default
        if isinstance(default, str) and default and not (resolved is not None and resolved.secret):
            return f"${{env:{declared.key}:{default}}}"
        return f"${{env:{declared.key}}}"
    if resolved is None or resolved.value is None:
        return None
    if resolved.secret:
        item.note("secret", f"{name} holds a secret ({resolved.source}) that is not an env reference; not written")
        return None
    return item.plain(name)


#: A line Prompty's parser takes for the start of a message, as its own rule reads it (any case,
#: an optional '#' before and [attributes] after the role), after the template is rendered.
_BOUNDARY = re.compile(r"(?im)^[ \t]*#?[ \t]*(system|user|assistant|developer)(\[[^\]\n]*\])?[ \t]*:[ \t]*$")


def _keep_kinds(item: Any, home: dict[str, Any]) -> None:
    """Keep in `home` what Prompty's role sections cannot say about the persona's prompt kinds.

    A section has a role, not a kind: an import names messages by their place (`turn_2`), so the
    kinds' own names are kept where they differ, and the kinds sent as no message, which have
    no section, are kept whole; `format_prompt("plan")` then works after a round trip.
    """
    from ._draft import message_kinds

    sent = [message for message in item.messages if message.kind is not None]
    kinds = [str(message.kind) for message in sent]
    if kinds != message_kinds([message.role for message in sent]):
        home["message_kinds"] = kinds
    others = {kind: {"inline": message.written if message.written is not None else _jinja_text(item, message.pieces)}
              for kind, message in item.others.items() if kind not in kinds}
    if others:
        home["templates"] = others


def _property(name: str, schema: Any) -> dict[str, Any]:
    prop: dict[str, Any] = {"name": name}
    if isinstance(schema, dict):
        kind = schema.get("type")
        if isinstance(kind, str):
            prop["kind"] = kind
        if schema.get("description"):
            prop["description"] = schema["description"]
        if schema.get("enum"):
            prop["enumValues"] = schema["enum"]
        if kind == "array":
            items = schema.get("items")
            prop["items"] = {"kind": items.get("type") if isinstance(items, dict) and isinstance(
                items.get("type"), str) else "string"}
    prop.setdefault("kind", "string")
    return prop


def write(prepared: list[Any], **options: Any) -> dict[str, str]:
    """One Prompty v2 file for the prepared persona."""
    from ..errors import ExportError
    from ._files import dump_yaml
    from .placeholders import Var

    (item,) = prepared
    name = str(item.value("name") or "persona")
    native = item.native
    front: dict[str, Any] = {"name": str(native.get("name") or item.identifier(slug(name, "-")))}
    display = _reference(item, "name")
    if display is not None and display != front["name"]:
        front["displayName"] = display
    description = _reference(item, "goal")
    if description is not None:
        front["description"] = description
    metadata: dict[str, Any] = dict(native.get("metadata") or {})
    home = item.home(("goal",))
    front["metadata"] = metadata  # filled below, and left out if it stays empty
    model: dict[str, Any] = {}
    model_value = _reference(item, "model")
    if model_value is not None:
        model["id"] = model_value
    native_model = native.get("model") if isinstance(native.get("model"), dict) else {}
    model["provider"] = native_model.get("provider", "openai")
    model["apiType"] = native_model.get("apiType", "chat")
    if isinstance(native_model.get("connection"), dict):
        model["connection"] = native_model["connection"]
    else:
        model["connection"] = {"kind": "key", "endpoint": "${env:OPENAI_BASE_URL:https://api.openai.com/v1}",
                               "apiKey": "${env:OPENAI_API_KEY}"}
    options_block: dict[str, Any] = {}
    by_setting = {setting: option for option, setting in OPTION_NAMES.items()}
    for setting, resolved in item.profile.settings.items():
        if resolved.secret:
            declared = item.config.model_settings.settings().get(setting)
            key = getattr(declared, "key", None)
            if not key:
                raise ExportError(f"model_settings.{setting} of {item.label} is a secret ({resolved.source}); "
                                  "Prompty can only refer to one read from the environment")
            options_block[by_setting[setting]] = f"${{env:{key}}}"
        else:
            value = resolved.value
            options_block[by_setting[setting]] = list(value) if isinstance(value, tuple) else value
    extra = {key: value for key, value in item.profile.settings_extra.items()
             if key not in ("openai-chat", "openai-responses", "anthropic")}
    for key in set(item.profile.settings_extra) - set(extra):
        item.note("dropped", f"model_settings.extra.{key} not written: its options are for {key} requests only, "
                  "which Prompty cannot single out")
    if extra:
        options_block["additionalProperties"] = extra
    if options_block:
        model["options"] = options_block
    front["model"] = model
    inputs = []
    for placeholder in item.placeholders.values():
        entry: dict[str, Any] = {"name": item.source_name(placeholder.name), "kind": placeholder.kind}
        spec = placeholder.spec
        if spec is not None and spec.description:
            entry["description"] = spec.description
        if placeholder.secret is not None:
            key = placeholder.env_key
            if key is None:
                raise ExportError(f"{placeholder.name} of {item.label} is a secret ({placeholder.secret.source}) "
                                  "that is not read from the environment; Prompty cannot refer to it")
            entry["default"] = f"${{env:{key}}}"
        elif placeholder.has_default:
            entry["default"] = placeholder.default
        if spec is not None and not spec.required:
            entry["required"] = False
        if spec is not None and spec.enum is not None:
            entry["enumValues"] = list(spec.enum)
        if spec is not None and spec.examples:
            entry["example"] = spec.examples[0]
        if entry["kind"] == "array":  # Prompty needs the items' kind: the first sample item's, else text
            sample = item.config.samples.get(placeholder.name, entry.get("default", entry.get("example")))
            first = sample[0] if isinstance(sample, list) and sample else None
            entry["items"] = {"kind": "object" if isinstance(first, dict) else "number" if isinstance(
                first, (int, float)) and not isinstance(first, bool) else "string"}
        inputs.append(entry)
    history_name = None
    if any(message.kind is None for message in item.messages):
        taken = {entry["name"] for entry in inputs}
        history_name = next(name for name in ("history", "conversation", "chat_thread") if name not in taken)
        inputs.append({"name": history_name, "kind": "thread", "description": "Earlier turns of the conversation"})
    if inputs:
        front["inputs"] = inputs
    output = item.profile.output_schema
    if output is not None:
        schema = output.as_dict()
        properties = schema.get("properties") if schema.get("type") == "object" else None
        if isinstance(properties, dict) and properties:
            front["outputs"] = [_property(key, value) for key, value in properties.items()]
        else:
            item.note("converted", "the output schema is not an object of properties, which Prompty outputs "
                      "cannot hold; it is kept under metadata.agent_profiles, which an import reads back")
    if item.profile.tools:
        bindings = native.get("tools") if isinstance(native.get("tools"), dict) else {}
        tools = []
        for tool in item.profile.tools:
            parameters = dict(tool.parameters)
            required = set(parameters.get("required") or ())
            listed = []
            for key, value in (parameters.get("properties") or {}).items():
                # written either way: Prompty takes a parameter that does not say so as optional
                listed.append({**_property(key, value), "required": key in required})
            entry = {"name": tool.name, "kind": "function", "description": tool.description, "parameters": listed}
            if tool.strict is not None:
                entry["strict"] = tool.strict
            binding = bindings.get(tool.name, {}).get("bindings") if isinstance(bindings.get(tool.name), dict) else None
            if binding:
                entry["bindings"] = binding
            tools.append(entry)
        front["tools"] = tools
    again = _outputs_schema(front.get("outputs"))
    item.keep_exact(home, output_schema=None if again is None else {"name": slug(front["name"]), "schema": again},
                    tools=[_function_tool(tool) for tool in front.get("tools", ())])
    _keep_kinds(item, home)
    if home:
        metadata["agent_profiles"] = home
    if not metadata:
        del front["metadata"]
    front["template"] = {"format": {"kind": "jinja2"}, "parser": {"kind": "prompty"}}
    sections: list[list[str]] = []
    pending_history = False
    for message in item.messages:
        if message.kind is None:
            if sections:
                sections[-1].append("{{" + str(history_name) + "}}")
            else:
                pending_history = True
            continue
        text = message.written if message.written is not None else _jinja_text(item, message.pieces)
        boundary = _BOUNDARY.search(text)
        if boundary:
            raise ExportError(
                f"the {message.kind} prompt of {item.label} has the line {boundary.group().strip()!r}, which Prompty "
                f"reads as the start of a new {boundary.group(1).lower()} message (it has no escape for it); reword "
                "that line, e.g. with the text on the same line after the colon"
            )
        lines = [f"{message.role}:"]
        if pending_history:
            lines.append("{{" + str(history_name) + "}}")
            pending_history = False
        lines.append(text)
        sections.append(lines)
    if not any(isinstance(piece, Var) and piece.name == "question" for message in item.messages
               for piece in message.pieces) and "question" in item.placeholders:
        item.note("converted", "the question is an input of the file")
    body = "\n\n".join("\n".join(lines) for lines in sections)
    stem = slug(str(front["name"]), "_")
    return {f"{stem}.prompty": "---\n" + dump_yaml(front) + "---\n" + body + "\n"}
