"""Google ADK agent configs (`root_agent.yaml`): each `LlmAgent` as a persona, and back.

Import: the `instruction` becomes the system template (a `static_instruction` becomes the system
template and the `instruction` a second system message, as ADK sends them apart); ADK's state
placeholders (`{topic}`, `{plan?}`, `{app:company}`, `{artifact.notes.md}`) become inputs, an
optional one not required, a prefixed or dotted one renamed; `generate_content_config` gives the
model settings. `sub_agents` given by `config_path` are followed, inside the root file's folder
only; a workflow agent (`SequentialAgent`, …) has no prompt and gives no persona. Every name of
Python code (`tools`, callbacks, `model_code`, schemas, `code:` sub-agents, a dotted
`agent_class`) is reported and dropped: ADK imports such modules when it loads the file, and this
import never does.

Export writes one `LlmAgent` config. ADK has no escape for a literal `{name}`, no defaults and no
place for other fields (unknown keys are refused), so such texts are refused and defaults are
written in.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ConfigIssue
from ._draft import Draft, ImportResult, Note, slug, title_words
from ._files import Source, confined, parse_yaml, read_source
from .placeholders import Var, adk_state, to_jinja, variables

__all__ = ["CONFIG_SETTINGS", "LLM_CLASSES", "read", "write"]

#: `generate_content_config` keys and the persona's model setting each is.
CONFIG_SETTINGS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_output_tokens": "max_tokens",
    "stop_sequences": "stop",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}

#: Agent classes that hold a prompt.
LLM_CLASSES = ("LlmAgent", "Agent", "google.adk.agents.LlmAgent", "google.adk.agents.llm_agent.LlmAgent")

_WORKFLOW_CLASSES = ("SequentialAgent", "ParallelAgent", "LoopAgent")

_CODE_KEYS = {
    "tools": "tools are ADK built-ins or Python functions named by module",
    "model_code": "it names a model object built in Python",
    "input_schema": "it names a Python class",
    "output_schema": "it names a Python class; give the persona an output_schema",
    "before_agent_callbacks": "it names Python callbacks",
    "after_agent_callbacks": "it names Python callbacks",
    "before_model_callbacks": "it names Python callbacks",
    "after_model_callbacks": "it names Python callbacks",
    "before_tool_callbacks": "it names Python callbacks",
    "after_tool_callbacks": "it names Python callbacks",
    "planner": "it names a Python planner",
    "code_executor": "it names a Python code executor",
}

#: Most agent files one import follows through `sub_agents`.
MAX_AGENTS = 100


def read(path: Path) -> ImportResult:
    """An ADK agent config (or the `root_agent.yaml` of an agent folder), with its sub-agents.

    Raises:
        ConfigError: a file is unreadable or malformed, or a `config_path` leads outside the folder.
    """
    if path.is_dir():
        path = path / "root_agent.yaml"
    root = path.parent
    result = ImportResult("adk", str(path))
    seen: set[Path] = set()
    stems: set[str] = set()
    queue: list[tuple[Path, str]] = [(path, str(path))]
    while queue:
        current, label = queue.pop(0)
        resolved = current.resolve()
        if resolved in seen:
            continue
        seen.add(resolved)
        if len(seen) > MAX_AGENTS:
            raise ConfigError(ConfigIssue(f"more than {MAX_AGENTS} agent files through sub_agents", file=label))
        source = parse_yaml(read_source(current, label), label, current)
        if not isinstance(source.data, dict):
            raise ConfigError(source.issue("expected a mapping: an agent config with agent_class, name, instruction"))
        for sub_path, sub_label in _sub_agents(source, root, result):
            queue.append((sub_path, sub_label))
        agent_class = source.data.get("agent_class", "LlmAgent")
        if agent_class in _WORKFLOW_CLASSES:
            result.notes.append(Note("converted", f"{agent_class} {source.data.get('name')!r} has no prompt of its "
                                     "own; "
                                     "its sub-agents are imported", label, source.line("agent_class")))
            continue
        if agent_class not in LLM_CLASSES:
            result.notes.append(Note("code", f"agent_class {agent_class!r} names Python code; this agent is not "
                                     "imported", label, source.line("agent_class")))
            continue
        persona = _agent(source).finish(slug(str(source.data.get("name") or current.stem)))
        while persona.stem in stems:
            persona.stem += "_2"
        stems.add(persona.stem)
        result.personas.append(persona)
    return result


def _sub_agents(source: Source, root: Path, result: ImportResult) -> list[tuple[Path, str]]:
    found = []
    value = source.data.get("sub_agents") or []
    if not isinstance(value, list):
        raise ConfigError(source.issue("sub_agents must be a list of {config_path: …}", "sub_agents"))
    for index, item in enumerate(value):
        line = source.line("sub_agents", index)
        if isinstance(item, dict) and "config_path" in item:
            target = confined(source.path.parent, item["config_path"], file=source.file, line=line,
                              what="config_path")
            if root.resolve() not in (target, *target.parents):
                raise ConfigError(ConfigIssue(f"config_path {item['config_path']!r} leads outside the folder of the "
                                              "root agent", file=source.file, line=line))
            found.append((target, str(source.path.parent / item["config_path"])))
        else:
            shown = item.get("code") if isinstance(item, dict) else item
            result.notes.append(Note("code", f"sub-agent {shown!r} is Python code; not imported", source.file, line))
    return found


def _agent(source: Source) -> Draft:
    data = source.data
    name = data.get("name")
    draft = Draft("adk", source.file, source.path, str(name or source.path.stem))
    if isinstance(name, str) and name:
        draft.set_text("name", name, source.line("name"))
    else:
        draft.derive("name", source.path.stem, "from the file name")
    description = data.get("description")
    if isinstance(description, str) and description.strip():
        draft.set_text("goal", description.strip(), source.line("description"))
    draft.derive("role", title_words(str(draft.fields["name"])), "from the name")
    texts = {}
    for key in ("static_instruction", "instruction"):
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            draft.drop(key, "only text instructions are read", source.line(key))
            continue
        texts[key] = adk_state(value.strip()) if key == "instruction" else [value.strip()]
    names = variables(piece for pieces in texts.values() for piece in pieces)
    optional = {
        piece.name for pieces in texts.values() for piece in pieces if isinstance(piece, Var) and piece.optional
    }
    mapping = draft.namer.all(names)
    for new, old in draft.namer.renamed.items():
        draft.note("renamed", f"the state placeholder {{{old}}} is now the input {new!r}; an export writes it back as "
                   "it was")
    for source_name in names:
        spec: dict[str, Any] = {"description": _state_description(source_name)}
        if source_name in optional:
            spec["required"] = False
            spec["default"] = ""  # ADK puts nothing where an optional value is missing
        draft.inputs[mapping[source_name]] = spec
    templates: dict[str, Any] = {}
    slots: list[dict[str, Any]] = []
    if "static_instruction" in texts:
        templates["system"] = {"inline": to_jinja(texts["static_instruction"], mapping)}
        slots.append({"kind": "system"})
        if "instruction" in texts:
            templates["instruction"] = {"inline": to_jinja(texts["instruction"], mapping)}
            slots.append({"kind": "instruction", "role": "system"})
    elif "instruction" in texts:
        templates["system"] = {"inline": to_jinja(texts["instruction"], mapping)}
    templates["user"] = {"inline": "{{ question }}"}
    draft.set("templates", templates, source.line("instruction") or source.line("static_instruction"))
    if slots:
        draft.set("messages", [*slots, {"history": True}, {"kind": "user"}])
    for key, value in data.items():
        line = source.line(key)
        if key in ("name", "description", "instruction", "static_instruction", "agent_class", "sub_agents"):
            continue
        if key == "model":
            draft.set_text("model", value, line)
        elif key in _CODE_KEYS:
            draft.drop(key, _CODE_KEYS[key], line, kind="code")
        elif key == "generate_content_config" and isinstance(value, dict):
            for option, setting in value.items():
                option_line = source.line(key, option)
                if option in CONFIG_SETTINGS:
                    draft.setting(CONFIG_SETTINGS[option], setting, option_line, f"{key}.{option}")
                else:
                    draft.keep(f"{key}.{option}", setting, option_line)
        else:
            draft.keep(key, value, line)
    if data.get("sub_agents"):
        draft.note("converted", "sub_agents: each one found by config_path is imported as a persona of its own",
                   source.line("sub_agents"))
        paths = [item["config_path"] for item in data["sub_agents"]
                 if isinstance(item, dict) and isinstance(item.get("config_path"), str)]
        if paths:  # which agents this one hands over to, so an export can say they are not written
            draft.keep("sub_agents", [{"config_path": path} for path in paths], source.line("sub_agents"))
    return draft


def _state_description(name: str) -> str:
    if name.startswith("artifact."):
        return f"the text of ADK artifact {name[len('artifact.'):]!r} ({{{name}}})"
    return f"ADK session state {{{name}}}"


# export ----------------------------------------------------------------------------------------

#: One agent per config file.
MANY = False

#: ADK has no default values: a variable's default is written into the instruction.
INLINE_DEFAULTS = True

#: ADK's `{name?}` is empty where the state lacks the key: an optional input with an empty default.
OPTIONAL_PLACEHOLDERS = True

#: Agent keys written back from `metadata.adk`: plain settings, no code.
SAFE_KEYS = ("include_contents", "disallow_transfer_to_parent", "disallow_transfer_to_peers", "output_key")

#: `generate_content_config` keys written back from `metadata.adk`.
SAFE_CONFIG_KEYS = ("top_k", "safety_settings", "thinking_config", "response_mime_type", "candidate_count")


def _adk_text(item: Any, pieces: list[Any], where: str) -> str:
    from ..errors import ExportError

    out = []
    for piece in pieces:
        if isinstance(piece, Var):
            name = item.source_name(piece.name)
            spec = item.placeholders.get(piece.name).spec if piece.name in item.placeholders else None
            optional = spec is not None and not spec.required
            out.append("{" + name + ("?" if optional and not name.endswith("?") else "") + "}")
            continue
        if any(isinstance(part, Var) for part in adk_state(piece)):
            found = next(part for part in adk_state(piece) if isinstance(part, Var))
            raise ExportError(
                f"{where} of {item.label} holds the literal text {{{found.name}}}, which ADK would fill from session "
                "state (ADK has no escape for it); reword it, e.g. without the braces"
            )
        out.append(piece)
    return "".join(out).strip()


def write(prepared: list[Any], **options: Any) -> dict[str, str]:
    """One `root_agent.yaml` (an `LlmAgent` config) for the prepared persona."""

    from ..errors import ExportError
    from ._files import dump_yaml

    (item,) = prepared
    native = item.native
    persona_name = item.plain("name")
    own = persona_name if isinstance(persona_name, str) and persona_name.isidentifier() else None
    name = item.identifier(own or slug(str(persona_name or "agent")))
    if not name.isidentifier() or name == "user":  # what ADK's agent name takes
        name = slug(name)
    if item.secret("name"):
        item.note("converted", f"the name is a secret, so the agent is named {name!r}; the instruction reads the name "
                  "from session state")
    elif persona_name and name != persona_name and not item.same_format:
        item.note("converted", f"the name {persona_name!r} is written as the agent name {name!r}: ADK takes an "
                  "identifier (letters, digits, _) there; the instruction keeps the name")
    agent: dict[str, Any] = {"agent_class": "LlmAgent", "name": name}
    model = item.profile.resolved.get("model")
    if model is not None and model.value:
        if model.secret:
            raise ExportError(f"the model of {item.label} is a secret ({model.source}); ADK has no reference syntax")
        agent["model"] = model.value
    goal = item.profile.resolved.get("goal")
    if goal is not None and goal.value and not goal.secret:
        # ADK fills session state into instructions only: the description is sent as written, braces and all
        agent["description"] = "".join(
            "{" + item.source_name(piece.name) + "}" if isinstance(piece, Var) else piece
            for piece in item.field_pieces("goal", inline_defaults=True)
        ).strip()
    system = [message for message in item.messages if message.kind and message.role in ("system", "developer")]
    kinds = [message.kind for message in system]
    if "instruction" in kinds and kinds[0] == "system" and len(kinds) == 2:
        static = system[0]
        if any(isinstance(piece, Var) for piece in static.pieces):
            raise ExportError(f"the system prompt of {item.label} has placeholders; ADK sends static_instruction as it "
                              "is, so move them into the instruction prompt")
        agent["static_instruction"] = _adk_text(item, static.pieces, "the system prompt")
        agent["instruction"] = _adk_text(item, system[1].pieces, "the instruction prompt")
    else:
        agent["instruction"] = "\n\n".join(
            _adk_text(item, message.pieces, f"the {message.kind} prompt") for message in system
        )
    for message in item.messages:
        if message.kind and message.role not in ("system", "developer") and not (
                message.kind == "user" and message.pieces == [Var("question")]):
            item.note("dropped", f"the {message.kind} prompt is not written: an ADK agent has an instruction only, and "
                      "takes the user's messages as they are")
    config: dict[str, Any] = {}
    by_setting = {setting: key for key, setting in CONFIG_SETTINGS.items()}
    for setting, resolved in item.profile.settings.items():
        if resolved.secret:
            raise ExportError(f"model_settings.{setting} of {item.label} is a secret ({resolved.source}); ADK has no "
                              "reference syntax for it")
        config[by_setting[setting]] = list(resolved.value) if isinstance(resolved.value, tuple) else resolved.value
    for key in item.profile.settings_extra:
        item.note("dropped", f"model_settings.extra.{key} not written: ADK's generate_content_config takes only its "
                  "own settings")
    kept = native.get("generate_content_config") if isinstance(native.get("generate_content_config"), dict) else {}
    for key in SAFE_CONFIG_KEYS:
        if key in kept:
            config[key] = kept[key]
    if config:
        agent["generate_content_config"] = config
    for key in SAFE_KEYS:
        if key in native:
            agent[key] = native[key]
    sub_agents = native.get("sub_agents")
    if isinstance(sub_agents, (list, tuple)) and sub_agents:
        listed = ", ".join(str(entry.get("config_path")) for entry in sub_agents if isinstance(entry, Mapping))
        item.note("dropped", f"sub_agents ({listed}) not written: export each sub-agent's persona as a file of its "
                  "own and list it under sub_agents by config_path")
    if item.profile.tools:
        item.note("dropped", "tools not written: ADK names tools by Python module; add them to the config by hand")
    if item.profile.output_schema is not None:
        item.note("dropped", "output_schema not written: ADK names a Python class for it")
    item.note_left_out(("retry_goal", "retry_constraints", "samples", "avatar", "metadata"), "an ADK agent config")
    for kind in item.others:
        item.note("dropped", f"the {kind} prompt is not written: an ADK agent has an instruction only")
    header = (
        "# yaml-language-server: $schema=https://raw.githubusercontent.com/google/adk-python/refs/heads/main/"
        "src/google/adk/agents/config_schemas/AgentConfig.json\n"
        "# Written by `profiles export --to adk`; {name} placeholders are read from session state.\n"
    )
    return {"root_agent.yaml": header + dump_yaml(agent)}
