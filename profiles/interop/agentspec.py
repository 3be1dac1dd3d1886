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

__all__ = ["AGENTSPEC_VERSION", "GENERATION_SETTINGS", "read", "write"]

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
        if not isinstance(ref, str):
            raise ConfigError(source.issue("$component_ref must name a component id", *where))
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
        draft.set_text("name", name, source.line("name"))
    else:
        draft.derive("name", source.path.stem, "from the file name")
    description = data.get("description")
    if isinstance(description, str) and description.strip():
        draft.set_text("goal", description.strip(), source.line("description"))
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
        draft.set("output_schema", {"name": slug(str(draft.fields["name"])), "schema": _outputs_schema(outputs)},
                  source.line("outputs"))
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
        if key in ("toolboxes", "transforms"):
            if value:
                draft.drop(key, "toolboxes and transforms are MCP servers and runtime code; configure them in the "
                           "runtime", source.line(key), kind="code")
            continue
        draft.keep(key, value, source.line(key))
    return draft


def _outputs_schema(outputs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The JSON Schema an Agent's outputs (by title) make."""
    # an output's default (what the agent gives when the model leaves it out) is kept as JSON Schema's own
    properties = {title: {k: v for k, v in spec.items()
                          if k in ("type", "description", "default", "enum", "items", "properties")}
                  for title, spec in outputs.items()}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _tool_spec(name: Any, description: Any, properties: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The tool spec a tool component with these input properties makes."""
    return {"name": name, "description": description or "",
            "parameters": {"type": "object", "properties": properties, "required": list(properties)}}


def _properties(source: Source, value: Any, key: str) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    if not isinstance(value, list):
        raise ConfigError(source.issue(f"{key} must be a list of properties with a title", key))
    for index, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("title"), str):
            raise ConfigError(source.issue("each property needs a title", key, index))
    return _specs(value, key)


def _specs(value: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """Properties by title, as a persona takes them (`key` is inputs or outputs)."""
    found: dict[str, dict[str, Any]] = {}
    for item in value:
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
            draft.set_text("model", value, line)
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
        description = draft.tool_description(name, tool.get("description"), line)
        specs.append(_tool_spec(name, description, _properties(source, tool.get("inputs"), "inputs")))
        if kind == "ClientTool":
            draft.keep(f"tools.{name}.component_type", kind, line)
        if tool.get("outputs"):  # what the tool gives back: no part of the spec the model is sent
            draft.keep(f"tools.{name}.outputs", tool["outputs"], source.line("tools", index, "outputs"))
        if kind == "RemoteTool":
            draft.drop(f"tool {name!r} url", "a remote tool's endpoint is a network call this import does not carry; "
                       "the tool is kept as a spec", line)
    if specs:
        draft.set("tools", specs, source.line("tools"))


# export ----------------------------------------------------------------------------------------

#: One Agent component per file.
MANY = False

#: Agent Spec inputs have defaults.
INLINE_DEFAULTS = False

#: What an export to Agent Spec takes besides the deployment, language and model.
OPTIONS = ("base_url",)

#: `llm_config` keys an export writes back from what the import kept (never `api_key`).
SAFE_LLM_KEYS = ("component_type", "id", "name", "description", "metadata", "url", "api_type", "provider",
                 "api_provider")

#: Agent keys written back from `metadata.agentspec`.
SAFE_AGENT_KEYS = ("human_in_the_loop", "agentspec_version")


def _agentspec_text(item: Any, pieces: list[Any], where: str) -> str:
    from ..errors import ExportError
    from .placeholders import Var

    out = []
    for piece in pieces:
        if isinstance(piece, Var):
            out.append("{{" + item.source_name(piece.name) + "}}")
            continue
        found = double_brace(piece)
        if any(not isinstance(part, str) for part in found):
            raise ExportError(
                f"{where} of {item.label} holds literal text in double braces, which Agent Spec would take for a "
                "placeholder (it has no escape); reword it"
            )
        out.append(piece)
    return "".join(out).strip()


def write(prepared: list[Any], *, base_url: str | None = None, **options: Any) -> dict[str, str]:
    """One Agent Spec JSON file for the prepared persona (`base_url`: an OpenAI-compatible server)."""
    import json

    from ..errors import ExportError
    from .exporter import json_copy
    from .placeholders import Var

    (item,) = prepared
    name = str(item.value("name") or "agent")
    agent_id = item.identifier(slug(name, "-"))
    native = item.native
    texts = []
    for message in item.messages:
        if message.kind is None:
            continue
        if message.role in ("system", "developer"):
            texts.append(_agentspec_text(item, message.pieces, f"the {message.kind} prompt"))
        elif message.kind == "user" and message.pieces == [Var("question")]:
            continue
        else:
            item.note("dropped", f"the {message.kind} prompt is not written: an Agent Spec agent has a system prompt "
                      "only, and takes the user's messages as they are")
    system_prompt = "\n\n".join(text for text in texts if text)
    used = [key for key in item.placeholders if "{{" + item.source_name(key) + "}}" in system_prompt]
    inputs = []
    for key in used:
        placeholder = item.placeholders[key]
        spec = placeholder.spec
        prop: dict[str, Any] = {"title": item.source_name(key), "type": placeholder.kind}
        if spec is not None and spec.description:
            prop["description"] = spec.description
        if placeholder.secret is not None:
            raise ExportError(f"{key} of {item.label} is a secret ({placeholder.secret.source}); Agent Spec has no "
                              "reference syntax, so it cannot be written")
        if placeholder.has_default:
            prop["default"] = placeholder.default
        if spec is not None and spec.enum is not None:
            prop["enum"] = list(spec.enum)
        inputs.append(prop)
    agent: dict[str, Any] = {"component_type": "Agent", "id": agent_id, "name": item.plain("name") or name}
    goal = item.profile.resolved.get("goal")
    agent["description"] = item.plain("goal") if goal is not None and goal.value and not goal.secret else None
    metadata: dict[str, Any] = dict(native.get("metadata") or {})
    home = item.home(("goal",))
    agent["metadata"] = metadata  # agent_profiles added below, once outputs and tools are written
    agent["inputs"] = inputs
    outputs = []
    output = item.profile.output_schema
    if output is not None:
        schema = output.as_dict()
        properties = schema.get("properties") if schema.get("type") == "object" else None
        if isinstance(properties, dict) and properties:
            outputs = [{"title": key, **value} for key, value in properties.items() if isinstance(value, dict)]
        else:
            item.note("converted", "the output schema is not an object of properties, which Agent Spec outputs "
                      "cannot hold; it is kept under metadata.agent_profiles, which an import reads back")
    agent["outputs"] = outputs
    agent["llm_config"] = _llm_config(item, agent_id, base_url)
    agent["system_prompt"] = system_prompt
    kinds = native.get("tools") if isinstance(native.get("tools"), dict) else {}
    tools = []
    for tool in item.profile.tools:
        kept = kinds.get(tool.name) if isinstance(kinds.get(tool.name), dict) else {}
        kind = kept.get("component_type")
        outputs_kept = kept.get("outputs")
        properties = dict(tool.parameters).get("properties") or {}
        tools.append({
            "component_type": kind if kind in ("ServerTool", "ClientTool") else "ServerTool",
            "id": slug(tool.name, "-"),
            "name": tool.name,
            "description": tool.description,
            "metadata": {},
            "inputs": [{"title": key, **value} for key, value in properties.items() if isinstance(value, dict)],
            "outputs": json_copy(outputs_kept) if isinstance(outputs_kept, (list, tuple)) else [],
        })
    agent["tools"] = tools
    again = {"name": slug(agent["name"]), "schema": _outputs_schema(_specs(outputs, "outputs"))} if outputs else None
    item.keep_exact(home, output_schema=again,
                    tools=[_tool_spec(tool["name"], tool["description"], _specs(tool["inputs"], "inputs"))
                           for tool in tools])
    if home:
        metadata["agent_profiles"] = home
    for key in SAFE_AGENT_KEYS:
        if key in native:
            agent[key] = native[key]
    agent.setdefault("agentspec_version", AGENTSPEC_VERSION)
    if "human_in_the_loop" in agent and agent["agentspec_version"] < "25.4.2":
        agent["agentspec_version"] = "25.4.2"
    stem = slug(agent_id)
    return {f"{stem}.agentspec.json": json.dumps(agent, indent=2, ensure_ascii=False) + "\n"}


def _llm_config(item: Any, agent_id: str, base_url: str | None) -> dict[str, Any]:
    from ..errors import ExportError
    from .exporter import json_copy

    model = item.profile.resolved.get("model")
    if model is not None and model.secret:
        raise ExportError(f"the model of {item.label} is a secret ({model.source}); Agent Spec has no reference "
                          "syntax, so give the model as text")
    model_id = model.value if model is not None and model.value else None
    native = item.native.get("llm_config") if isinstance(item.native.get("llm_config"), dict) else {}
    config: dict[str, Any] = {key: native[key] for key in SAFE_LLM_KEYS if key in native}
    if base_url:
        config.update({"component_type": "OpenAiCompatibleConfig", "url": base_url, "api_type": "chat_completions"})
    config.setdefault("component_type", "OpenAiConfig")
    config.setdefault("id", f"{agent_id}-llm")
    config.setdefault("name", str(model_id or "model"))
    config.setdefault("description", None)
    config.setdefault("metadata", {})
    if model_id is None:
        raise ExportError(f"{item.label} names no model; Agent Spec needs one: set 'model:' or pass --model")
    config["model_id"] = model_id
    parameters: dict[str, Any] = {}
    for setting, resolved in item.profile.settings.items():
        if resolved.secret:
            raise ExportError(f"model_settings.{setting} of {item.label} is a secret ({resolved.source}); Agent Spec "
                              "has no reference syntax for it")
        parameters[setting] = list(resolved.value) if isinstance(resolved.value, tuple) else resolved.value
    # the persona's provider-specific options: Agent Spec's generation config takes keys of any name
    for key, value in item.profile.settings_extra.items():
        if key in ("openai-chat", "openai-responses", "anthropic"):  # options for one API's requests only
            item.note("dropped", f"model_settings.extra.{key} not written: its options are for {key} requests only")
        elif key not in parameters:
            parameters[key] = json_copy(value)
    kept = native.get("default_generation_parameters")
    if isinstance(kept, dict):
        parameters.update({key: value for key, value in kept.items() if key not in parameters})
    config["default_generation_parameters"] = parameters or None
    return config
