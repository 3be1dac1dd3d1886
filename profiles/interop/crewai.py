"""CrewAI `config/agents.yaml` (with the `tasks.yaml` beside it): one persona per agent, and back.

Import: `role`, `goal` and `backstory` become `role`, `goal` and `desc`; the agent's id gives the
persona's name (CrewAI has none); `llm: provider/model` gives `model` (the provider is kept);
`max_tokens` becomes a model setting. Each `{placeholder}` of the agent and of the tasks it is
given becomes an input (CrewAI's kickoff inputs), and each task becomes a prompt kind named after
it, holding what CrewAI sends as that task's prompt. Tools, callbacks, knowledge sources, MCP
servers and other names of Python code or remote services are reported and dropped; behaviour
switches (`allow_delegation`, `max_iter`, …) are kept under `metadata.crewai`.

Export writes `agents.yaml` and `tasks.yaml` for a crew of the given personas: CrewAI has no
escape for a literal `{name}` and no default values, so a text that needs either is refused, and
a variable with a default is written in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ConfigError, ConfigIssue
from ._draft import Draft, ImportResult, Note, slug, title_words
from ._files import Source, parse_yaml, read_source
from .placeholders import CREWAI_PLACEHOLDER, Piece, Var, single_brace, to_jinja, variables

__all__ = ["EXPECTED_LEAD", "SAFE_AGENT_KEYS", "SAFE_TASK_KEYS", "read", "write"]

#: How CrewAI introduces a task's expected output in the task prompt (its `translations/en.json`).
EXPECTED_LEAD = "This is the expected criteria for your final answer: "

#: Agent keys that name Python code (crew methods), remote services or downloads: never imported.
CODE_AGENT_KEYS = frozenset({
    "tools", "step_callback", "callbacks", "cache_handler", "knowledge_sources", "knowledge_config", "embedder",
    "mcps", "apps", "from_repository", "a2a", "skills", "memory", "agent_executor", "tools_handler",
})

#: Task keys that name Python code: output classes, callbacks, tools. (A guardrail in YAML is text:
#: CrewAI hands the string to the task, which has an LLM check the output against it.)
CODE_TASK_KEYS = frozenset({
    "tools", "callback", "callbacks", "output_json", "output_pydantic", "converter_cls",
})

#: Task keys holding a guardrail: a text, or a list of texts, that an LLM checks the output against.
GUARDRAIL_KEYS = ("guardrail", "guardrails")

#: Agent switches an export writes back from `metadata.crewai`: plain settings that run no code.
SAFE_AGENT_KEYS = (
    "function_calling_llm", "allow_delegation", "verbose", "max_iter", "max_rpm", "max_execution_time",
    "max_retry_limit", "cache", "respect_context_window", "use_system_prompt", "system_template", "prompt_template",
    "response_template", "inject_date", "date_format", "multimodal", "reasoning", "max_reasoning_attempts",
)

#: Task keys an export writes back.
SAFE_TASK_KEYS = ("context", "output_file", "create_directory", "markdown", "async_execution", "human_input", "name",
                  "guardrail", "guardrails", "guardrail_max_retries")

_TEXT_KEYS = {"role": "role", "goal": "goal", "backstory": "desc"}


def _find(path: Path) -> Path:
    if path.is_dir():
        for candidate in (path / "agents.yaml", path / "config" / "agents.yaml", path / "agents.yml"):
            if candidate.is_file():
                return candidate
        raise ConfigError(
            ConfigIssue("no agents.yaml here or in its config/ folder; name the agents.yaml file", file=str(path))
        )
    return path


def _text(source: Source, value: Any, *where: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(source.issue(f"{'.'.join(map(str, where))} must be text", *where))
    return value.strip()


def read(path: Path) -> ImportResult:
    """Every agent of an `agents.yaml` (a file, or a crew folder) as a persona.

    Raises:
        ConfigError: a file is unreadable or malformed, naming the file and line.
    """
    agents_path = _find(path)
    label = str(agents_path)
    agents = parse_yaml(read_source(agents_path), label, agents_path)
    if not isinstance(agents.data, dict) or not agents.data:
        raise ConfigError(agents.issue("expected a mapping of agent id to its role, goal and backstory"))
    result = ImportResult("crewai", label)
    tasks = _read_tasks(agents_path, result)
    by_agent: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    if tasks is not None:
        for task_id, task in tasks.data.items():
            agent = task.get("agent")
            if not isinstance(agent, str) or agent not in agents.data:
                why = "names no agent" if agent is None else f"names agent {agent!r}, which agents.yaml lacks"
                result.notes.append(_file_note(tasks, f"task {task_id!r} {why}; it is not imported", task_id))
                continue
            by_agent.setdefault(agent, []).append((task_id, task))
    stems: set[str] = set()
    for agent_id, spec in agents.data.items():
        if not isinstance(spec, dict):
            raise ConfigError(agents.issue(f"agent {agent_id!r} must be a mapping with role, goal and backstory",
                                           agent_id))
        draft = _agent(agents, str(agent_id), spec, by_agent.get(agent_id, []), tasks)
        stem = slug(str(agent_id))
        while stem in stems:
            stem += "_2"
        stems.add(stem)
        result.personas.append(draft.finish(stem))
    return result


def _file_note(source: Source, message: str, *where: Any) -> Note:
    return Note("dropped", message, source.file, source.line(*where))


def _read_tasks(agents_path: Path, result: ImportResult) -> Source | None:
    for name in ("tasks.yaml", "tasks.yml"):
        tasks_path = agents_path.with_name(name)
        if tasks_path.is_file():
            tasks = parse_yaml(read_source(tasks_path), str(tasks_path), tasks_path)
            if tasks.data is None:
                return None
            if not isinstance(tasks.data, dict) or not all(isinstance(task, dict) for task in tasks.data.values()):
                raise ConfigError(tasks.issue("expected a mapping of task id to its description and expected_output"))
            return tasks
    return None


def _agent(
    source: Source, agent_id: str, spec: dict[str, Any], tasks: list[tuple[str, dict[str, Any]]],
    tasks_source: Source | None,
) -> Draft:
    draft = Draft("crewai", source.file, source.path, agent_id)
    texts: dict[str, list[Piece]] = {}
    for key in _TEXT_KEYS:
        if key in spec:
            texts[key] = single_brace(_text(source, spec[key], agent_id, key))
    task_texts: dict[str, tuple[list[Piece], list[Piece]]] = {}
    for task_id, task in tasks:
        assert tasks_source is not None
        description = single_brace(_text(tasks_source, task.get("description", ""), task_id, "description"))
        expected = single_brace(_text(tasks_source, task.get("expected_output", ""), task_id, "expected_output"))
        task_texts[task_id] = (description, expected)
    names = variables(
        [piece for pieces in texts.values() for piece in pieces]
        + [piece for description, expected in task_texts.values() for piece in (*description, *expected)]
    )
    mapping = draft.namer.all(names)
    for new, old in draft.namer.renamed.items():
        draft.note("renamed", f"placeholder {{{old}}} is now {{{{ {new} }}}}: {old!r} names a persona field or is "
                   "no usable variable name; an export writes it back as it was")
    for key, persona_field in _TEXT_KEYS.items():
        if key in texts:
            draft.set(persona_field, to_jinja(texts[key], mapping), source.line(agent_id, key))
    if "role" not in draft.fields:  # none, or an empty one (CrewAI takes role: ''; a persona needs a role)
        draft.derive("role", title_words(agent_id), f"from the agent id {agent_id!r}")
    draft.derive("name", title_words(agent_id), f"from the agent id {agent_id!r}")
    for name in names:
        draft.inputs[mapping[name]] = {"type": "string", "description": f"CrewAI kickoff input {{{name}}}"}
    templates: dict[str, Any] = {}
    task_meta: dict[str, Any] = {}
    for task_id, task in tasks:
        description, expected = task_texts[task_id]
        kind = _kind(task_id, templates)
        prompt = to_jinja(description, mapping)
        if expected:
            prompt += "\n\n" + EXPECTED_LEAD + to_jinja(expected, mapping)
        templates[kind] = {"inline": prompt}
        kept: dict[str, Any] = {}
        if kind != task_id:
            kept["kind"] = kind
        assert tasks_source is not None
        for key, value in task.items():
            if key in ("description", "expected_output", "agent"):
                continue
            line = tasks_source.line(task_id, key)
            if key in CODE_TASK_KEYS:
                draft.notes.append(Note("code", f"task {task_id!r} {key} dropped: it names Python code of the crew "
                                        "class", tasks_source.file, line))
            elif key in GUARDRAIL_KEYS and not (isinstance(value, str) or (
                    isinstance(value, list) and all(isinstance(entry, str) for entry in value))):
                draft.notes.append(Note("dropped", f"task {task_id!r} {key} dropped: a guardrail in tasks.yaml is a "
                                        "text (or a list of texts) the output is checked against",
                                        tasks_source.file, line))
            else:
                kept[key] = value
                draft.note("metadata", f"task {task_id!r} {key} kept as metadata.crewai.tasks.{task_id}.{key}", line,
                           file=tasks_source.file)
        task_meta[task_id] = kept
        draft.note("converted", f"task {task_id!r} became the prompt kind {kind!r} "
                   f"(profile.format_prompt({kind!r}, …))", tasks_source.line(task_id), file=tasks_source.file)
    if templates:
        draft.set("templates", templates)
        draft.extra["tasks"] = task_meta
    for key, value in spec.items():
        line = source.line(agent_id, key)
        if key in _TEXT_KEYS:
            continue
        if key == "llm" and isinstance(value, str):
            provider, _, model = value.partition("/")
            if model:
                draft.set_text("model", model, line)
                draft.extra["llm_provider"] = provider
            else:
                draft.set_text("model", value, line)
        elif key == "llm":
            draft.drop("llm", "a mapping here is not a model name (CrewAI refuses it too); set the model in the "
                       "persona", line)
        elif key == "max_tokens":
            draft.setting("max_tokens", value, line, "max_tokens")
        elif key in CODE_AGENT_KEYS:
            what = "names @tool methods of the crew class" if key == "tools" else "names Python code or a service"
            draft.drop(key, f"it {what}; give the persona tool specs under tools: or pass tools to the adapter",
                       line, kind="code")
        else:
            draft.keep(key, value, line)
    return draft


def _kind(task_id: str, taken: dict[str, Any]) -> str:
    # a kind names a template file, at most 64 characters: room is left for the suffixes below
    kind = slug(task_id)[:48].rstrip("_")
    if kind in ("system", "user", "write_memory", "react"):
        kind += "_task"
    while kind in taken:
        kind += "_2"
    return kind


# export ----------------------------------------------------------------------------------------

#: A crew holds several agents: `profiles export a.yaml b.yaml --to crewai` writes one crew.
MANY = True

#: CrewAI has no default values: a variable's default is written into the text.
INLINE_DEFAULTS = True

_LANGUAGES = {"en": "English", "zh": "Chinese", "fr": "French", "de": "German", "es": "Spanish", "ja": "Japanese",
              "ko": "Korean", "ru": "Russian", "pt": "Portuguese", "it": "Italian"}


def _crewai_text(item: Any, pieces: list[Piece], where: str) -> str:
    from ..errors import ExportError

    out = []
    for piece in pieces:
        if isinstance(piece, Var):
            name = item.source_name(piece.name)
            out.append("{" + name + "}")
            continue
        found = CREWAI_PLACEHOLDER.search(piece)
        if found:
            raise ExportError(
                f"{where} of {item.label} holds the literal text {found.group()!r}, which CrewAI would replace with an "
                "input (CrewAI has no escape for it); reword it, e.g. without the braces"
            )
        out.append(piece)
    return "".join(out).strip()


def write(prepared: list[Any]) -> dict[str, str]:
    """`agents.yaml` and `tasks.yaml` for a crew of the prepared personas."""
    from ..errors import ExportError
    from ._files import dump_yaml

    agents: dict[str, Any] = {}
    tasks: dict[str, Any] = {}
    for item in prepared:
        name = str(item.value("name") or "agent")
        agent_id = item.identifier(_agent_id(name))
        while agent_id in agents:
            agent_id += "_2"
        if item.value("name") and not item.same_format and title_words(agent_id) != name:
            # an import names the agent after its id: say what of the name that id cannot bring back
            item.note("dropped", f"the name {name!r} is not written: CrewAI has no name field, and the agent id "
                      f"{agent_id!r} reads back as {title_words(agent_id)!r}")
        role = _crewai_text(item, item.field_pieces("role", inline_defaults=True), "role")
        goal = _crewai_text(item, item.field_pieces("goal", inline_defaults=True), "goal")
        parts = [_crewai_text(item, item.field_pieces("desc", inline_defaults=True), "desc")]
        expand = _crewai_text(item, item.field_pieces("expand_prompt", inline_defaults=True), "expand_prompt")
        if expand:
            parts.append(expand)
        rules = [_crewai_text(item, pieces, "constraints") for pieces in item.list_pieces("constraints",
                                                                                         inline_defaults=True)]
        if rules:
            parts.append("Constraints:\n" + "\n".join(f"- {rule}" for rule in rules))
        examples = _crewai_text(item, item.field_pieces("examples", inline_defaults=True), "examples")
        if examples:
            parts.append("Examples:\n" + examples)
        language = item.value("language")
        if language and not item.profile.resolved["language"].secret:
            parts.append(f"Always answer in {_LANGUAGES.get(str(language)[:2], language)}.")
        folded = [field for field in ("expand_prompt", "constraints", "examples", "language") if item.value(field)]
        if folded:
            item.note("converted", f"{', '.join(folded)} written into the backstory (CrewAI has no such fields)")
        backstory = "\n\n".join(part for part in parts if part)
        if not goal:
            goal = f"Help the user as {role}."
            item.note("converted", "the persona has no goal; CrewAI needs one, so one was written from the role")
        if not backstory:
            backstory = f"You are {_crewai_text(item, item.field_pieces('name', inline_defaults=True), 'name')}."
            item.note("converted", "the persona has no desc; CrewAI needs a backstory, so one was written from the "
                      "name")
        spec: dict[str, Any] = {"role": role, "goal": goal, "backstory": backstory}
        model = item.profile.resolved.get("model")
        if model is not None and model.value:
            if model.secret:
                raise ExportError(f"the model of {item.label} is a secret ({model.source}); CrewAI's agents.yaml has "
                                  "no reference syntax, so give the model as text")
            provider = item.native.get("llm_provider") or "openai"
            spec["llm"] = f"{provider}/{model.value}"
        for setting, resolved in item.profile.settings.items():
            if resolved.secret:
                raise ExportError(f"model_settings.{setting} of {item.label} is a secret ({resolved.source}); CrewAI "
                                  "has no reference syntax for it")
            if setting == "max_tokens":
                spec["max_tokens"] = resolved.value
            else:
                item.note("dropped", f"model_settings.{setting} not written: CrewAI's agents.yaml sets only max_tokens "
                          "(set the others on an LLM in code)")
        for key in item.profile.settings_extra:
            item.note("dropped", f"model_settings.extra.{key} not written: CrewAI's agents.yaml sets only max_tokens "
                      "(set the others on an LLM in code)")
        for key in SAFE_AGENT_KEYS:
            if key in item.native:
                spec[key] = item.native[key]
        for key in item.native:
            if key not in SAFE_AGENT_KEYS and key not in ("tasks", "llm_provider"):
                item.note("dropped", f"metadata.crewai.{key} not written: it is not a plain agent setting")
        if item.profile.tools:
            item.note("dropped", "tools not written: CrewAI names @tool methods of the crew class; add them in code")
        native_tasks = item.native.get("tasks") if isinstance(item.native.get("tasks"), dict) else None
        if item.profile.output_schema is not None and native_tasks:
            item.note("dropped", "output_schema not written: CrewAI's tasks name a Python class for it")
        item.note_left_out(("retry_goal", "retry_constraints", "samples", "avatar", "metadata"),
                           "CrewAI's agents.yaml")
        own = [message.kind for message in item.messages
               if message.kind and message.role in ("system", "developer") and message.kind in item.profile.templates]
        if own:
            item.note("dropped", f"the {', '.join(own)} prompt's own template is not written: CrewAI builds the "
                      "agent's system prompt from role, goal and backstory; move its text into desc or "
                      "expand_prompt to keep it")
        agents[agent_id] = spec
        if native_tasks:
            for task_id, meta in native_tasks.items():
                meta = meta if isinstance(meta, dict) else {}
                kind = meta.get("kind", task_id)
                message = item.others.get(kind)
                if message is None:
                    item.note("dropped", f"task {task_id!r}: the persona has no prompt kind {kind!r}")
                    continue
                tasks[_task_id(item, task_id, tasks)] = _task(item, task_id, message.pieces, agent_id, meta)
        else:
            for kind in item.others:
                item.note("dropped", f"the {kind} prompt is not written: only a persona imported from CrewAI has "
                          "its prompt kinds written back as tasks")
            user = item.text("user") or [Var("question")]
            description = _crewai_text(item, user, "the user prompt")
            if item.profile.output_schema is not None:
                expected = "A JSON object that fits this JSON Schema: " + item.profile.output_schema.text
            else:
                expected = "A complete answer to the request that meets your goal."
            task_id = _task_id(item, f"{agent_id}_task", tasks)
            tasks[task_id] = {"description": description, "expected_output": expected, "agent": agent_id}
            item.note("converted", f"task {task_id} written from the user prompt ({{question}} is the request)")
    header = "# Written by `profiles export --to crewai`; {name} placeholders are crew.kickoff(inputs=…).\n"
    return {"agents.yaml": header + dump_yaml(agents), "tasks.yaml": header + dump_yaml(tasks)}


def _task_id(item: Any, task_id: str, tasks: dict[str, Any]) -> str:
    """`task_id`, or one no earlier agent's task of the crew has (two crews' research_task, say), said in a note."""
    made = task_id
    while made in tasks:
        made += "_2"
    if made != task_id:
        item.note("renamed", f"task {task_id!r} is written as {made!r}: another agent of the crew has a task "
                  "with that id")
    return made


def _agent_id(name: str) -> str:
    """The agent's key in agents.yaml: the name's slug, or the name itself where only it reads back as the name.

    An import names the agent after its id (`title_words`); a name that is an identifier the slug
    would lose (`墨子`, which has no letter a slug keeps) is the id as it is, as CrewAI's crew
    class names a method after it.
    """
    made = slug(name)
    if title_words(made) != name and name.isidentifier() and title_words(name) == name:
        return name
    return made


def _task(item: Any, task_id: str, pieces: list[Piece], agent_id: str, meta: dict[str, Any]) -> dict[str, Any]:
    description: list[Piece] = []
    expected: list[Piece] = []
    target = description
    for piece in pieces:
        if isinstance(piece, str) and EXPECTED_LEAD in piece and target is description:
            before, _, after = piece.partition(EXPECTED_LEAD)
            description.append(before)
            target = expected
            if after:
                expected.append(after)
        else:
            target.append(piece)
    task: dict[str, Any] = {
        "description": _crewai_text(item, description, "a task"),
        "expected_output": _crewai_text(item, expected, "a task's expected output") or "A complete answer.",
        "agent": agent_id,
    }
    for key in meta:
        if key not in SAFE_TASK_KEYS and key != "kind":
            item.note("dropped", f"metadata.crewai.tasks.{task_id}.{key} not written: it is not a plain task setting")
    for key in SAFE_TASK_KEYS:
        if key not in meta:
            continue
        value = meta[key]
        if key == "output_file" and not _inside(value):
            item.note("dropped", f"task output_file {value!r} not written: it leads outside the crew's folder")
            continue
        task[key] = value
    return task


def _inside(path: Any) -> bool:
    """Whether a path CrewAI would write to stays below the folder it runs in."""
    from pathlib import PurePosixPath

    if not isinstance(path, str) or not path.strip():
        return False
    pure = PurePosixPath(path.replace("\\", "/"))
    return not pure.is_absolute() and ".." not in pure.parts and path[1:3] not in (":/", ":\\")
