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

from pathlib import Path
from typing import Any

from ..errors import ConfigError, ConfigIssue
from ._draft import Draft, ImportResult, Note, slug, title_words
from ._files import Source, confined, parse_yaml, read_source
from .placeholders import Var, adk_state, to_jinja, variables

__all__ = ["CONFIG_SETTINGS", "LLM_CLASSES", "read"]

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
        draft.set("name", name, source.line("name"))
    else:
        draft.derive("name", source.path.stem, "from the file name")
    description = data.get("description")
    if isinstance(description, str) and description.strip():
        draft.set("goal", description.strip(), source.line("description"))
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
        draft.inputs[mapping[source_name]] = spec
    if optional:
        draft.extra["optional"] = sorted(optional)
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
            draft.set("model", value, line)
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
        draft.keep("sub_agents", [_sub_name(item) for item in data["sub_agents"]], source.line("sub_agents"),
                   why=" (as the names of their config files; each is imported as its own persona)")
    return draft


def _sub_name(item: Any) -> Any:
    if isinstance(item, dict) and isinstance(item.get("config_path"), str):
        return item["config_path"]
    return None


def _state_description(name: str) -> str:
    if name.startswith("artifact."):
        return f"the text of ADK artifact {name[len('artifact.'):]!r} ({{{name}}})"
    return f"ADK session state {{{name}}}"
