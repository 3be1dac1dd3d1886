"""LlamaIndex: a persona as `ChatMessage` lists, and as a `ReActAgent` whose header is its `react` prompt.

```python
from profiles.adapters.llamaindex import to_react_agent

agent = to_react_agent("profile_configs/planner.yaml", llm=my_llm, tools=[search], agents="Searcher")
answer = await agent.run(user_msg="Plan a trip to Lisbon")
```

The ReAct header is the persona's `react` prompt, rendered by the persona, kept as LlamaIndex
wants it: `{tool_desc}` where the persona lists its tools and `{tool_names}` where it names them
(LlamaIndex fills both with the agent's tools at every step), every other brace doubled for
LlamaIndex's `str.format`. The persona's reply protocol (`Thought:`, `Action:`, `Action Input:`,
`Answer:`) is the one LlamaIndex's ReAct parser reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import AdapterError
from ..tools import Tool
from ._common import Provenance, as_profile, framework, guarded, provenance_of

__all__ = ["ProfileMessages", "react_header", "to_chat_messages", "to_react_agent"]

_EXTRA = "llamaindex"

# a stand-in tool: its lines in the rendered prompt show where the persona lists its tools
_NAME = "profiles_tool_marker"
_DESCRIPTION = "\ue010"
_PARAMETER = "\ue011"


class ProfileMessages(list):  # type: ignore[type-arg]
    """A list of LlamaIndex `ChatMessage`s that also carries its persona's provenance."""

    provenance: Provenance


def react_header(persona: Any, **variables: Any) -> str:
    """The persona's `react` prompt as a LlamaIndex ReAct system header (a `str.format` template).

    Raises:
        RenderError: the persona's react prompt does not render.
    """
    profile = as_profile(persona)
    marker = Tool(_NAME, _DESCRIPTION, {"type": "object", "properties": {_PARAMETER: {"type": "string"}}})
    text = profile.format_prompt("react", tools=[marker], **variables)
    lines = text.split("\n")
    listed = [index for index, line in enumerate(lines) if _DESCRIPTION in line or _PARAMETER in line]
    escaped = [line.replace("{", "{{").replace("}", "}}") for line in lines]
    if listed:
        start, end = min(listed), max(listed)
        while start > 0 and _NAME in lines[start - 1] and _DESCRIPTION not in lines[start - 1]:
            start -= 1
        indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
        escaped[start : end + 1] = [indent + "{tool_desc}"]
    header = "\n".join(escaped).replace(_NAME, "{tool_names}")
    if _DESCRIPTION in header or _PARAMETER in header:
        raise AdapterError("the react prompt changes the tools' descriptions; LlamaIndex needs them as they are")
    return header


def to_react_agent(
    persona: Any,
    *,
    llm: Any,
    tools: Sequence[Any] = (),
    deployment: str | None = None,
    language: str | None = None,
    model: str | None = None,
    **options: Any,
) -> Any:
    """A LlamaIndex `ReActAgent` (the workflow agent) whose system header is the persona's react prompt.

    `tools` are LlamaIndex tools or plain functions; `options` go to `ReActAgent` when it takes
    them (`streaming`, `output_cls`, …), else to the react prompt as its variables. The agent's
    `provenance` names the persona file, deployment and store versions.

    Raises:
        AdapterError: llama-index-core is missing.
        SecretError: the persona's name is a secret it does not allow out.
    """
    workflow = framework("llama_index.core.agent.workflow", _EXTRA, "llama-index-core")
    formatter_module = framework("llama_index.core.agent.react.formatter", _EXTRA, "llama-index-core")
    profile = as_profile(persona, deployment=deployment, language=language, model=model)
    known = set(workflow.ReActAgent.model_fields)
    agent_options = {key: value for key, value in options.items() if key in known}
    variables = {key: value for key, value in options.items() if key not in known}
    header = react_header(profile, **variables)
    formatter = formatter_module.ReActChatFormatter.from_defaults(system_header=header)
    agent_options.setdefault("streaming", False)
    agent_class = _agent_class(workflow.ReActAgent)
    # a ReActAgent field given here (name, description, formatter) wins over the persona's
    if "name" not in agent_options:
        agent_options["name"] = str(guarded(profile, "name", "agent's name", "name") or "Agent")
    if "description" not in agent_options:
        goal = guarded(profile, "goal", "agent's description", "description")
        agent_options["description"] = str(goal or guarded(profile, "role", "agent's description", "description")
                                           or "An agent")
    agent_options.setdefault("formatter", formatter)
    return agent_class(
        tools=list(tools),
        llm=llm,
        provenance=provenance_of(profile).to_dict(),
        **agent_options,
    )


_AGENT_CLASSES: dict[type, type] = {}


def _agent_class(base: type) -> type:
    """`ReActAgent` with a `provenance` field, made once."""
    made = _AGENT_CLASSES.get(base)
    if made is None:
        from pydantic import Field

        made = type(
            "ProfileReActAgent",
            (base,),
            {
                "__annotations__": {"provenance": dict},
                "provenance": Field(default_factory=dict, description="Where the persona came from."),
                "__doc__": "A ReActAgent made from a persona; `provenance` says from which file and versions.",
                "__module__": __name__,
            },
        )
        _AGENT_CLASSES[base] = made
    return made


def to_chat_messages(
    persona: Any,
    question: str | None = None,
    *,
    history: Sequence[Mapping[str, Any]] | None = None,
    deployment: str | None = None,
    language: str | None = None,
    model: str | None = None,
    **variables: Any,
) -> ProfileMessages:
    """The persona's messages for one turn as LlamaIndex `ChatMessage`s, for `llm.chat(...)`.

    Raises:
        AdapterError: llama-index-core is missing.
        HistoryError: the history is malformed.
    """
    types = framework("llama_index.core.base.llms.types", _EXTRA, "llama-index-core")
    profile = as_profile(persona, deployment=deployment, language=language, model=model)
    made = ProfileMessages()
    for turn in profile.format_messages(question, history=history, **variables):
        role = turn["role"]
        extra: dict[str, Any] = {}
        if turn.get("tool_calls"):
            extra["tool_calls"] = turn["tool_calls"]
        if turn.get("tool_call_id"):
            extra["tool_call_id"] = turn["tool_call_id"]
        content = turn.get("content") or ""
        if isinstance(content, str):
            made.append(types.ChatMessage(role=role, content=content, additional_kwargs=extra))
        else:  # OpenAI content parts (text, an image, audio, a file) as LlamaIndex's blocks
            made.append(types.ChatMessage(role=role, blocks=[_block(types, part) for part in content],
                                          additional_kwargs=extra))
    made.provenance = provenance_of(profile)
    return made


def _block(types: Any, part: Mapping[str, Any]) -> Any:
    """One OpenAI content part (as the history check let through) as a LlamaIndex content block."""
    import base64
    import re

    kind = part["type"]
    if kind in ("text", "refusal"):
        return types.TextBlock(text=part[kind])
    if kind == "image_url":
        url = part["image_url"]["url"]
        detail = part["image_url"].get("detail")
        found = re.match(r"data:(?P<mime>[\w.+-]+/[\w.+-]+);base64,(?P<data>.*)", url, re.S)
        if found:
            return types.ImageBlock(image=base64.b64decode(found["data"]), image_mimetype=found["mime"], detail=detail)
        return types.ImageBlock(url=url, detail=detail)
    if kind == "input_audio":
        audio = part["input_audio"]
        return types.AudioBlock(audio=base64.b64decode(audio["data"]), format=audio["format"])
    file = part["file"]
    found = re.match(r"data:(?P<mime>[\w.+-]+/[\w.+-]+);base64,(?P<data>.*)", str(file.get("file_data") or ""), re.S)
    if not found:
        raise AdapterError("a file part given by file_id has no LlamaIndex block (it takes a document's data); "
                           "give the file as file_data, a base64 data URL")
    return types.DocumentBlock(data=base64.b64decode(found["data"]), document_mimetype=found["mime"],
                               title=file.get("filename"))
