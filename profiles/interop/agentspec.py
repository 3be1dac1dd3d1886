"""Open Agent Spec `Agent` components (JSON or YAML): a persona each, and back.

Import: `name` and `description` (as the goal) carry over, a role is derived from the name; the
`system_prompt` becomes the system template with its `{{placeholders}}` as inputs, declared by the
component's `inputs` (JSON Schema properties with `title`, `type`, `default`); `outputs` become
the output schema; the `llm_config` gives the model and, from `default_generation_parameters`,
the model settings (the rest of it is metadata); server and client tools become tool specs, with
a remote tool's URL dropped. `$component_ref`s are resolved from `$referenced_components`, cycles
refused; an inline `api_key` is dropped, never copied. Persona fields an export kept under
`metadata.agent_profiles` are put back.

Export writes an `Agent` with an `OpenAiCompatibleConfig` (or the `llm_config` the persona was
imported with), one input per placeholder and stable ids, never an `api_key`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ._draft import Draft, ImportResult, slug, title_words
from ._files import Source, parse_json, parse_yaml, read_source
from .placeholders import double_brace, to_jinja, variables

__all__ = ["AGENTSPEC_VERSION", "GENERATION_SETTINGS", "read"]

#: The Agent Spec version an export writes: the oldest with every feature it uses.
AGENTSPEC_VERSION = "25.4.1"

#: `default_generation_parameters` keys and the persona's model setting each is.
GENERATION_SETTINGS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_tokens",
    "stop": "stop",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}

_TYPES = ("string", "integer", "number", "boolean", "array", "object")
_TOOL_TYPES = ("ServerTool", "ClientTool", "RemoteTool")


def read(path: Path) -> ImportResult:
    """An Agent Spec file (`.json`, else YAML) holding an `Agent` component.

    Raises:
        ConfigError: unreadable or malformed, not an Agent, or a reference that is missing or circular.
    """
    text = read_source(path)
    source = parse_json(text, str(path), path) if path.suffix.lower() == ".json" else parse_yaml(text, str(path), path)
    if not isinstance(source.data, dict):
        raise ConfigError(source.issue("expected a component: a mapping with component_type"))
    if source.data.get("component_type") != "Agent":
        raise ConfigError(source.issue(f"component_type {source.data.get('component_type')!r}: only an Agent "
                                       "component becomes a persona", "component_type"))
    referenced = source.data.get("$referenced_components") or {}
    if not isinstance(referenced, dict):
        raise ConfigError(source.issue("$referenced_components must map ids to components", "$referenced_components"))
    result = ImportResult("agentspec", str(path))
    draft = _agent(source, referenced)
    result.personas.append(draft.finish(slug(str(source.data.get("name") or path.stem))))
    return result


def _resolve(source: Source, value: Any, referenced: dict[str, Any], where: tuple[Any, ...],
             seen: tuple[str, ...] = ()) -> Any:
    """`value` with a `{$component_ref: id}` replaced by its component."""
    if isinstance(value, dict) and set(value) == {"$component_ref"}:
        ref = value["$component_ref"]
        if ref in seen:
            raise ConfigError(source.issue(f"$component_ref {ref!r} refers to itself through "
                                           f"{' → '.join(seen)}; break the cycle", *where))
        if ref not in referenced:
            raise ConfigError(source.issue(f"$component_ref {ref!r} is not under $referenced_components", *where))
        return _resolve(source, referenced[ref], referenced, ("$referenced_components", ref), (*seen, ref))
    return value


def _agent(source: Source, referenced: dict[str, Any]) -> Draft:
    data = source.data
    draft = Draft("agentspec", source.file, source.path, str(data.get("id") or data.get("name") or source.path.stem))
    name = data.get("name")
    if isinstance(name, str) and name:
        draft.set("name", name, source.line("name"))
    else:
        draft.derive("name", source.path.stem, "from the file name")
    description = data.get("description")
    if isinstance(description, str) and description.strip():
        draft.set("goal", description.strip(), source.line("description"))
    metadata = data.get("metadata")
    if isinstance(metadata, dict):
        for key, value in metadata.items():
            if key == "agent_profiles":
                draft.restore(value, source.line("metadata", key))
            else:
                draft.keep(f"metadata.{key}", value, source.line("metadata", key))
    if "role" not in draft.fields:
        draft.derive("role", title_words(str(draft.fields["name"])), "from the name")
    prompt = data.get("system_prompt", "")
    if not isinstance(prompt, str):
        raise ConfigError(source.issue("system_prompt must be text", "system_prompt"))
    pieces = double_brace(prompt.strip())
    declared = _properties(source, data.get("inputs"), "inputs")
    mapping = draft.namer.all(list(dict.fromkeys([*declared, *variables(pieces)])))
    for new, old in draft.namer.renamed.items():
        draft.note("renamed", f"the placeholder {{{{{old}}}}} is now {new!r}; an export writes it back as it was")
    for title, spec in declared.items():
        draft.inputs[mapping[title]] = spec
    for title in variables(pieces):
        if title not in declared:
            draft.inputs[mapping[title]] = {"type": "string"}
            draft.note("converted", f"the placeholder {{{{{title}}}}} has no input; declared as text (Agent Spec "
                       "refuses it at load)", source.line("system_prompt"))
    draft.set("templates", {"system": {"inline": to_jinja(pieces, mapping)}, "user": {"inline": "{{ question }}"}},
              source.line("system_prompt"))
    outputs = _properties(source, data.get("outputs"), "outputs")
    if outputs:
        properties = {title: {k: v for k, v in spec.items() if k in ("type", "description", "enum", "items",
                                                                       "properties")}
                      for title, spec in outputs.items()}
        schema = {"type": "object", "properties": properties, "required": list(properties),
                  "additionalProperties": False}
        draft.set("output_schema", {"name": slug(str(draft.fields["name"])), "schema": schema}, source.line("outputs"))
    llm = _resolve(source, data.get("llm_config"), referenced, ("llm_config",))
    if llm is not None:
        _llm(draft, source, llm)
    tools = data.get("tools") or []
    if tools:
        _tools(draft, source, tools, referenced)
    for key, value in data.items():
        if key in ("component_type", "id", "name", "description", "metadata", "system_prompt", "inputs", "outputs",
                   "llm_config", "tools", "$referenced_components"):
            continue
        draft.keep(key, value, source.line(key))
    return draft


def _properties(source: Source, value: Any, key: str) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    if not isinstance(value, list):
        raise ConfigError(source.issue(f"{key} must be a list of properties with a title", key))
    found: dict[str, dict[str, Any]] = {}
    for index, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("title"), str):
            raise ConfigError(source.issue("each property needs a title", key, index))
        spec: dict[str, Any] = {}
        if item.get("type") in _TYPES:
            spec["type"] = item["type"]
        for name in ("description", "default", "enum", "items", "properties"):
            if name in item:
                spec[name] = item[name]
        found[item["title"]] = spec
    if key == "inputs":
        return {title: {k: v for k, v in spec.items() if k in ("type", "description", "default", "enum")}
                for title, spec in found.items()}
    return found


def _llm(draft: Draft, source: Source, llm: Any) -> None:
    if not isinstance(llm, dict):
        raise ConfigError(source.issue("llm_config must be a component", "llm_config"))
    where = ("llm_config",)
    for key, value in llm.items():
        line = source.line(*where, key)
        if key == "model_id":
            draft.set("model", value, line)
        elif key == "default_generation_parameters" and isinstance(value, dict):
            for option, setting in value.items():
                option_line = source.line(*where, key, option)
                if option in GENERATION_SETTINGS:
                    draft.setting(GENERATION_SETTINGS[option], setting, option_line, f"llm_config.{key}.{option}")
                else:
                    draft.keep(f"llm_config.{key}.{option}", setting, option_line)
        else:
            draft.keep(f"llm_config.{key}", value, line)


def _tools(draft: Draft, source: Source, tools: Any, referenced: dict[str, Any]) -> None:
    if not isinstance(tools, list):
        raise ConfigError(source.issue("tools must be a list of tool components", "tools"))
    specs = []
    for index, item in enumerate(tools):
        tool = _resolve(source, item, referenced, ("tools", index))
        line = source.line("tools", index)
        if not isinstance(tool, dict):
            raise ConfigError(source.issue("each tool must be a component", "tools", index))
        kind = tool.get("component_type")
        name = tool.get("name")
        if kind not in _TOOL_TYPES:
            draft.drop(f"tool {name!r}", f"a {kind} is not a function the model calls (a toolbox, MCP server or "
                       "built-in); configure it in the runtime", line, kind="code")
            continue
        properties = _properties(source, tool.get("inputs"), "inputs")
        schema = {"type": "object", "properties": properties, "required": list(properties)}
        specs.append({"name": name, "description": tool.get("description") or "", "parameters": schema})
        if kind != "ServerTool":
            draft.keep(f"tools.{name}.component_type", kind, line)
        if kind == "RemoteTool":
            draft.drop(f"tool {name!r} url", "a remote tool's endpoint is a network call this import does not carry; "
                       "the tool is kept as a spec", line)
    if specs:
        draft.set("tools", specs, source.line("tools"))
