"""Request bodies: a conversation, tools, an output schema and settings, shaped for one API.

`build_request` returns the body for OpenAI Chat Completions (`openai-chat`), OpenAI Responses
(`openai-responses`) or Anthropic Messages (`anthropic`) as plain data, so any client, or none,
can send it; this module imports neither vendor's library. Each body is what that API's own
Python client types as its request (`tests/` checks them against those types and sends them
through the clients):

| | openai-chat | openai-responses | anthropic |
|---|---|---|---|
| system prompt | a `system` message | `instructions` | `system` |
| conversation | `messages` | `input` items | `messages` (roles alternate) |
| tools | `{type: function, function: {…}}` | `{type: function, name, …, strict}` | `{name, input_schema}` |
| output schema | `response_format` | `text.format` | `output_config.format` |

Tools and the output schema go to OpenAI with `strict` set: the persona's choice, else on exactly
when the schema fits strict mode (Responses would otherwise make a lenient schema strict by
itself). Responses bodies carry `store: false` unless `extra` says otherwise, so a conversation is
not kept on the provider's side by default. The API key is never part of a body: it belongs to
the client that sends it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import RequestError
from .history import APIS, TOOL_NAME, text_of, to_anthropic, to_responses_input
from .output_schema import OutputSchema, openai_strict_problems
from .settings import SettingError, api_settings
from .tools import Tool

__all__ = ["APIS", "build_request", "check_api"]


def check_api(api: Any) -> str:
    """`api` if it is one a body can be built for.

    Raises:
        RequestError: naming the APIs there are.
    """
    if api not in APIS:
        raise RequestError(f"unknown api {api!r}; use one of {', '.join(APIS)}")
    return str(api)


def _strict(tool: Tool, parameters: dict[str, Any]) -> bool:
    strict = getattr(tool, "strict", None)
    return (not openai_strict_problems(parameters)) if strict is None else bool(strict)


def _tool(api: str, tool: Tool) -> dict[str, Any]:
    if not TOOL_NAME.match(tool.name):
        raise RequestError(
            f"tool {tool.name!r}: {api} takes function names of letters, digits, '_' and '-' only (at most 64); "
            "rename the tool under 'tools:'"
        )
    parameters = copy.deepcopy(dict(tool.parameters))
    if "type" not in parameters:  # a tool's arguments are an object; both APIs refuse a schema that does not say so
        parameters = {"type": "object", **parameters}
    if api == "openai-chat":
        function = {
            "name": tool.name,
            "description": tool.description,
            "parameters": parameters,
            "strict": _strict(tool, parameters),
        }
        return {"type": "function", "function": function}
    if api == "openai-responses":
        return {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": parameters,
            "strict": _strict(tool, parameters),
        }
    made: dict[str, Any] = {"name": tool.name, "description": tool.description, "input_schema": parameters}
    if getattr(tool, "strict", None) is not None:
        made["strict"] = bool(tool.strict)
    return made


def _output(api: str, output: OutputSchema) -> dict[str, Any]:
    schema = output.as_dict()
    if api == "anthropic":
        return {"output_config": {"format": {"type": "json_schema", "schema": schema}}}
    spec: dict[str, Any] = {"name": output.name, "schema": schema, "strict": output.strict}
    if output.description:
        spec["description"] = output.description
    if api == "openai-chat":
        return {"response_format": {"type": "json_schema", "json_schema": spec}}
    return {"text": {"format": {"type": "json_schema", **spec}}}


def build_request(
    api: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    model: str,
    tools: Sequence[Tool] = (),
    output: OutputSchema | None = None,
    settings: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    unsupported: str = "drop",
) -> dict[str, Any]:
    """The request body for `api`: `messages` (Chat-shaped and checked) and the rest in its schema.

    `settings` maps setting names to checked values; a setting `api` has no field for is left
    out, or refused with `unsupported="error"`. `extra` is merged last (`settings.api_settings`).

    Raises:
        RequestError: `api` is unknown, a tool's name is one the API refuses, a setting it lacks
            was asked to be an error, or Anthropic would get no user message.
    """
    check_api(api)
    if unsupported not in ("drop", "error"):
        raise RequestError(f"unsupported must be 'drop' or 'error', got {unsupported!r}")
    body: dict[str, Any] = {"model": model}
    turns = [dict(message) for message in messages]
    if api == "openai-chat":
        body["messages"] = turns
    elif api == "openai-responses":
        leading = 0
        while leading < len(turns) and turns[leading]["role"] == "system":
            leading += 1
        # a system turn of text parts is as much an instruction as one of plain text
        instructions = "\n\n".join(text for turn in turns[:leading] if (text := text_of(turn["content"])).strip())
        if instructions:
            body["instructions"] = instructions
        body["input"] = to_responses_input(turns[leading:])
        body["store"] = False
    else:
        converted = to_anthropic(turns)
        if not converted["messages"]:
            raise RequestError("anthropic needs at least one user message; give a question, or history ending with one")
        if converted["messages"][0]["role"] != "user":
            raise RequestError(
                "Anthropic's first message must be the user's; start the history with a user turn, or put a user "
                "prompt before it in the persona's 'messages:' layout"
            )
        if converted["system"]:
            body["system"] = converted["system"]
        body["messages"] = converted["messages"]
    if tools:
        body["tools"] = [_tool(api, tool) for tool in tools]
    if output is not None:
        body.update(_output(api, output))
    try:
        body.update(api_settings(api, settings or {}, extra, unsupported=unsupported))
    except SettingError as exc:
        raise RequestError(str(exc)) from None
    return copy.deepcopy(body)
