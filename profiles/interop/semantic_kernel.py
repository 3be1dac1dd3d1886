"""Semantic Kernel prompt YAML, prompt folders (`skprompt.txt` + `config.json`) and agent YAML.

A prompt function (`template`, `template_format`, `input_variables`, `execution_settings`)
becomes a persona whose prompts are the template's `<message role="…">` blocks (a template
without them is one user message, as SK sends it); `input_variables` become inputs, with their
defaults; the `default` execution settings (else the first service's) become model settings and
the model, the other services' are kept as metadata. The three template syntaxes are read:
`semantic-kernel` (`{{$name}}`; a `{{plugin.function}}` call runs code in SK and is dropped),
`handlebars` (variables, `#if`, `#unless`, `#each`) and `jinja2`. A declarative agent
(`type: chat_completion_agent`) gives the system prompt from `instructions` (or its `template:`
block, read in the format it names), inputs from `inputs`, settings from `model.options`; its
`tools` name kernel plugin functions, which are code, and are dropped. The name is kept, the
description is the goal, and a role is derived from the name.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ConfigIssue
from ._draft import Draft, ImportResult, slug, title_words
from ._files import Source, parse_json, parse_yaml, read_source, within
from .placeholders import Unsupported, handlebars, jinja_names, rename_jinja, semantic_kernel, to_jinja, variables

__all__ = ["read"]

_MESSAGE = re.compile(r"<message\s+role\s*=\s*[\"']([A-Za-z]+)[\"']\s*>(.*?)</message>", re.S)
_JINJA_HISTORY = re.compile(
    r"\{%-?\s*for\s+(\w+)\s+in\s+(\w+)\s*-?%\}\s*<message\s+role\s*=\s*[\"']\{\{\s*\1\.role\s*\}\}[\"']\s*>\s*"
    r"\{\{\s*\1\.content\s*\}\}\s*</message>\s*\{%-?\s*endfor\s*-?%\}"
)
_HANDLEBARS_HISTORY = re.compile(
    r"\{\{#each\s+(\w+)\s*\}\}\s*<message\s+role\s*=\s*[\"']\{\{\s*(?:this\.)?role\s*\}\}[\"']\s*>\s*"
    r"\{\{\s*(?:this\.)?content\s*\}\}\s*</message>\s*\{\{/each\}\}"
)
_FORMATS = ("semantic-kernel", "handlebars", "jinja2")

#: Execution-setting names SK uses for a persona's model setting: .NET's OpenAI settings write the
#: stop strings as `stop_sequences`, and Python's model as `ai_model_id` (.NET's `model_id`).
_SETTING_ALIASES = {"stop_sequences": "stop"}
_MODEL_KEYS = ("model_id", "ai_model_id")
_ROLES = ("system", "developer", "user", "assistant")


def read(path: Path) -> ImportResult:
    """A prompt YAML, an agent YAML, a prompt folder, or a plugin folder of prompt folders.

    Raises:
        ConfigError: a file is unreadable or malformed, naming the file and line.
    """
    result = ImportResult("semantic-kernel", str(path))
    if path.is_dir():
        # a linked prompt folder (or skprompt.txt) that leads outside the folder named is not read
        folders = [path] if (path / "skprompt.txt").is_file() else sorted(
            child
            for child in path.iterdir()
            if (child / "skprompt.txt").is_file() and within(path, child / "skprompt.txt")
        )
        if not folders:
            raise ConfigError(ConfigIssue("no skprompt.txt here or in the folders inside; name a prompt YAML, an "
                                          "agent YAML or a prompt folder", file=str(path)))
        for folder in folders:
            result.personas.append(_folder(folder, path.name if folder != path else folder.parent.name))
        return result
    source = parse_yaml(read_source(path), str(path), path)
    if not isinstance(source.data, dict):
        raise ConfigError(source.issue("expected a mapping: a prompt (template, input_variables, …) or an agent "
                                       "(type, instructions, …)"))
    if "type" in source.data:
        result.personas.append(_agent(source))
    else:
        result.personas.append(_prompt(source, source.data, "template"))
    return result


def _folder(folder: Path, plugin: str) -> Any:
    prompt_path = folder / "skprompt.txt"
    template = read_source(prompt_path)
    config_path = folder / "config.json"
    if config_path.is_file():
        config = parse_json(read_source(config_path), str(config_path), config_path)
        if not isinstance(config.data, dict):
            raise ConfigError(config.issue("config.json must be an object"))
    else:
        config = Source({}, str(config_path), config_path, lambda where: None)
    data = {"name": folder.name, **config.data, "template": template}
    draft_source = _FolderSource(data, str(prompt_path), prompt_path, config.locate, config.file)
    persona = _prompt(draft_source, data, "template", plugin=plugin, config_file=config.file)
    return persona


@dataclass
class _FolderSource(Source):
    """A prompt folder as one source: the template is skprompt.txt, every other key config.json's."""

    config_file: str = ""

    def issue(self, message: str, *where: Any) -> ConfigIssue:
        if where and where[0] != "template":
            return ConfigIssue(message, file=self.config_file, line=self.line(*where))
        return super().issue(message, *where)


def _text(source: Source, value: Any, *where: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(source.issue(f"{'.'.join(map(str, where))} must be text", *where))
    return value


def _identity(draft: Draft, source: Source, data: dict[str, Any]) -> None:
    name = data.get("name")
    if isinstance(name, str) and name:
        draft.set_text("name", name, source.line("name"))
    else:
        draft.derive("name", draft.path.stem, "from the file name")
    description = data.get("description")
    if isinstance(description, str) and description.strip():
        draft.set_text("goal", description.strip(), source.line("description"))
    draft.derive("role", title_words(str(draft.fields["name"])), "from the name")


def _prompt(source: Source, data: dict[str, Any], key: str, *, plugin: str | None = None,
            config_file: str | None = None) -> Any:
    draft = Draft("semantic-kernel", source.file, source.path, str(data.get("name") or source.path.stem))
    if plugin:
        draft.extra["plugin"] = plugin
    _identity(draft, source, data)
    fmt = data.get("template_format", "semantic-kernel")
    if fmt not in _FORMATS:
        raise ConfigError(source.issue(f"template_format {fmt!r} is not one this import reads ({', '.join(_FORMATS)})",
                                       "template_format"))
    template = _text(source, data.get(key, ""), key)
    inputs = _input_variables(draft, source, data.get("input_variables"))
    _execution_settings(draft, source, data.get("execution_settings"))
    for name, value in data.items():
        if name in ("name", "description", "template_format", key, "input_variables", "execution_settings", "schema"):
            continue
        line = source.line(name)
        if name == "output_variable" and isinstance(value, dict) and value.get("json_schema"):
            _output(draft, source, value["json_schema"], line)
        else:
            draft.keep(name, value, line, why="" if config_file is None else f" (from {config_file})")
    sections, history_after, history = _messages(template, str(fmt))
    line = source.text_line(key) or 1
    converted = _convert(draft, sections, str(fmt), inputs, line)
    if history:
        draft.note("converted", f"{history!r} held the chat history: it is now the history slot of the messages")
        inputs.pop(history, None)
    _finish_inputs(draft, inputs, converted)
    draft.layout([(role, text, line) for role, text in converted], history_after)
    if isinstance(source, _FolderSource):  # what the persona took from config.json is named there
        draft.files.update({name: source.config_file for name in ("goal", "model", "model_settings", "inputs",
                                                                   "output_schema", "samples", "metadata")})
    return draft.finish(slug(str(data.get("name") or source.path.stem)))


def _agent(source: Source) -> Any:
    data = source.data
    kind = data.get("type")
    draft = Draft("semantic-kernel", source.file, source.path, str(data.get("name") or source.path.stem))
    if kind != "chat_completion_agent":
        draft.note("converted", f"type {kind!r}: only the prompt and settings are read; the service it runs on is "
                   "kept as metadata", source.line("type"))
    draft.extra["type"] = kind
    _identity(draft, source, data)
    inputs: dict[str, dict[str, Any]] = {}
    raw_inputs = data.get("inputs") or {}
    if not isinstance(raw_inputs, dict):
        raise ConfigError(source.issue("inputs must be a mapping of name to its description and default", "inputs"))
    for name, spec in raw_inputs.items():
        made: dict[str, Any] = {}
        if isinstance(spec, dict):
            for source_key, target in (("description", "description"), ("required", "required"),
                                       ("default", "default")):
                if source_key in spec:
                    made[target] = spec[source_key]
            if "sample" in spec:
                made["examples"] = [spec["sample"]]
        inputs[str(name)] = made
    fmt = "semantic-kernel"
    if "instructions" in data:
        template = _text(source, data["instructions"], "instructions")
        key = "instructions"
    else:
        block = data.get("template") or data.get("prompt_template") or {}
        block_key = "template" if "template" in data else "prompt_template"
        if not isinstance(block, dict):
            raise ConfigError(source.issue(f"{block_key} must be a mapping with template and template_format",
                                           block_key))
        fmt = block.get("template_format", "semantic-kernel")
        if fmt not in _FORMATS:
            raise ConfigError(source.issue(f"template_format {fmt!r} is not one this import reads", block_key))
        template = _text(source, block.get("template", ""), block_key, "template")
        key = block_key
    for name, value in data.items():
        line = source.line(name)
        if name in ("type", "name", "description", "instructions", "template", "prompt_template", "inputs"):
            continue
        if name == "model" and isinstance(value, dict):
            for option, setting in value.items():
                option_line = source.line("model", option)
                if option == "id" and isinstance(setting, str) and not setting.startswith("${"):
                    draft.set_text("model", setting, option_line)
                elif option == "options" and isinstance(setting, dict):
                    for setting_name, setting_value in setting.items():
                        draft.setting(_SETTING_ALIASES.get(setting_name, setting_name), setting_value,
                                      source.line("model", "options", setting_name),
                                      f"model.options.{setting_name}")
                else:
                    draft.keep(f"model.{option}", setting, option_line,
                               why=" (a configuration reference, not resolved)" if option == "id" else "")
        elif name == "tools":
            ids = [item.get("id") for item in value if isinstance(item, dict)] if isinstance(value, list) else []
            draft.drop("tools", f"{', '.join(map(str, ids)) or 'they'} name kernel plugin functions (code); register "
                       "them on the kernel, or give the persona tool specs", line, kind="code")
        elif name == "metadata" and isinstance(value, dict) and "agent_profiles" in value:
            draft.restore(value["agent_profiles"], line)
            rest = {k: v for k, v in value.items() if k != "agent_profiles"}
            if rest:
                draft.keep("metadata", rest, line)
        else:
            draft.keep(name, value, line)
    sections, history_after, history = _messages(template, str(fmt))
    if len(sections) == 1 and sections[0][0] == "user" and not _MESSAGE.search(template):
        sections = [("system", sections[0][1])]  # an agent's instructions are its system prompt
    converted = _convert(draft, sections, str(fmt), inputs, source.line(key) or 1)
    if history:
        inputs.pop(history, None)
    _finish_inputs(draft, inputs, converted)
    if not any(role == "user" for role, _ in converted):
        converted.append(("user", "{{ question }}"))
    draft.layout([(role, text, source.line(key)) for role, text in converted], history_after)
    return draft.finish(slug(str(data.get("name") or source.path.stem)))


def _input_variables(draft: Draft, source: Source, value: Any) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    if not isinstance(value, list):
        raise ConfigError(source.issue("input_variables must be a list of {name, description, default, …}",
                                       "input_variables"))
    inputs: dict[str, dict[str, Any]] = {}
    for index, item in enumerate(value):
        line = source.line("input_variables", index)
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ConfigError(source.issue("each input variable needs a name", "input_variables", index))
        name = item["name"]
        spec: dict[str, Any] = {}
        if item.get("description"):
            spec["description"] = item["description"]
        if "default" in item:
            spec["default"] = item["default"]
        if "is_required" in item:
            spec["required"] = bool(item["is_required"])
        schema = item.get("json_schema")
        if isinstance(schema, str) and schema.strip():
            try:
                parsed = json.loads(schema)
            except ValueError:
                parsed = None
            kind = parsed.get("type") if isinstance(parsed, dict) else None
            if kind in ("string", "integer", "number", "boolean", "array", "object") and (
                    "default" not in spec or kind == "string"):
                spec["type"] = kind
        for key in item:
            if key not in ("name", "description", "default", "is_required", "json_schema"):
                draft.keep(f"input_variables.{name}.{key}", item[key], line)
        inputs[name] = spec
    return inputs


def _execution_settings(draft: Draft, source: Source, value: Any) -> None:
    if not value:
        return
    if not isinstance(value, dict):
        raise ConfigError(source.issue("execution_settings must map a service id to its settings",
                                       "execution_settings"))
    chosen = "default" if "default" in value else next(iter(value))
    for service, settings in value.items():
        line = source.line("execution_settings", service)
        if service != chosen:
            draft.keep(f"execution_settings.{service}", settings, line)
            continue
        if not isinstance(settings, dict):
            continue
        for name, setting in settings.items():
            setting_line = source.line("execution_settings", service, name)
            if name in _MODEL_KEYS:
                draft.set_text("model", setting, setting_line)
            elif name == "response_format" and _json_schema_format(setting) is not None:
                # OpenAI's structured output, as SK passes it on: the persona's output schema
                draft.set("output_schema", _json_schema_format(setting), setting_line)
                draft.note("converted", f"execution_settings.{service}.response_format is the output schema",
                           setting_line)
            else:
                draft.setting(_SETTING_ALIASES.get(name, name), setting, setting_line,
                              f"execution_settings.{service}.{name}")


def _json_schema_format(value: Any) -> dict[str, Any] | None:
    """The output schema an OpenAI `response_format` of type json_schema gives; None for any other."""
    if not isinstance(value, dict) or value.get("type") != "json_schema":
        return None
    spec = value.get("json_schema")
    if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
        return None
    output: dict[str, Any] = {"schema": spec["schema"]}
    for key in ("name", "description", "strict"):
        if spec.get(key) is not None:
            output[key] = spec[key]
    return output


def _output(draft: Draft, source: Source, schema: Any, line: int | None) -> None:
    try:
        parsed = json.loads(schema) if isinstance(schema, str) else schema
    except ValueError:
        draft.keep("output_variable.json_schema", schema, line, why=" (not JSON)")
        return
    if isinstance(parsed, dict):
        draft.set("output_schema", {"name": slug(draft.id), "schema": parsed}, line)


def _messages(template: str, fmt: str) -> tuple[list[tuple[str, str]], int | None, str | None]:
    """The template's (role, text) messages; after which one the history goes; the history's name."""
    history_after = None
    history = None
    pattern = _JINJA_HISTORY if fmt == "jinja2" else _HANDLEBARS_HISTORY if fmt == "handlebars" else None
    marker = "\x00history\x00"
    if pattern is not None:
        match = pattern.search(template)
        if match:
            history = match.group(2) if fmt == "jinja2" else match.group(1)
            template = template[: match.start()] + marker + template[match.end() :]
    sections: list[tuple[str, str]] = []
    position = 0
    for match in _MESSAGE.finditer(template):
        between = template[position : match.start()]
        if marker in between:
            history_after = len(sections) - 1
            between = between.replace(marker, "")
        if between.strip():
            sections.append(("user", between.strip()))
        sections.append((match.group(1).lower(), match.group(2).strip()))
        position = match.end()
    rest = template[position:]
    if marker in rest:
        history_after = len(sections) - 1
        rest = rest.replace(marker, "")
    if rest.strip() or not sections:
        sections.append(("user", rest.strip()))
    return sections, history_after, history


def _convert(
    draft: Draft, sections: list[tuple[str, str]], fmt: str, inputs: dict[str, dict[str, Any]], line: int
) -> list[tuple[str, str]]:
    """Each message's text as Jinja, placeholders under their persona names."""
    namer = draft.namer
    converted: list[tuple[str, str]] = []
    try:
        if fmt == "semantic-kernel":
            calls: list[tuple[str, int]] = []
            pieces = [semantic_kernel(text, calls) for _, text in sections]
            namer.all([*inputs, *variables(piece for text in pieces for piece in text)])
            for block, at in calls:
                draft.drop(block, "it calls a kernel function (code) while rendering; give its result as an input",
                           line + at - 1, kind="code")
            converted = [(role, to_jinja(text, namer.names)) for (role, _), text in zip(sections, pieces, strict=True)]
        elif fmt == "handlebars":
            found = re.findall(r"\{\{~?\s*(?:#if|#unless|#each)?\s*([A-Za-z_][A-Za-z0-9_]*)", "\n".join(
                text for _, text in sections))
            namer.all([*inputs, *(name for name in found if name not in ("this", "else"))])
            converted = [(role, handlebars(text, namer)) for role, text in sections]
        else:
            names: list[str] = []
            for _, text in sections:
                names += jinja_names(text)
            mapping = namer.all(list(dict.fromkeys([*inputs, *names])))
            renames = {old: new for old, new in mapping.items() if old != new}
            converted = [(role, rename_jinja(text, renames)) for role, text in sections]
    except Unsupported as exc:
        raise ConfigError(ConfigIssue(exc.reason, file=draft.file, line=line + (exc.line or 1) - 1)) from None
    for new, old in namer.renamed.items():
        draft.note("renamed", f"the variable {old!r} is now {new!r}: {old!r} names a persona field or is no usable "
                   "variable name; an export writes it back as it was")
    bad = [role for role, _ in converted if role not in _ROLES]
    if bad:
        raise ConfigError(ConfigIssue(f"message role {bad[0]!r} is not one a persona sends ({', '.join(_ROLES)})",
                                      file=draft.file, line=line))
    return converted


def _finish_inputs(draft: Draft, inputs: dict[str, dict[str, Any]], converted: list[tuple[str, str]]) -> None:
    read_names: set[str] = set()
    for _, text in converted:
        try:
            read_names |= set(jinja_names(text))
        except Unsupported:
            pass
    for name, spec in inputs.items():
        new = draft.namer.name(name)
        draft.inputs[new] = spec
    for name in sorted(read_names - set(draft.inputs) - {"question", "this", "loop"}):
        draft.inputs[name] = {}
        draft.note("converted", f"the template reads {name!r}, which no input declares; declared as an input of any "
                   "type")
