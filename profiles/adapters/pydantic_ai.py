"""Pydantic AI: a persona as a `pydantic_ai.Agent` with its instructions, model settings and output type.

```python
from profiles.adapters.pydantic_ai import to_agent, user_prompt

agent = to_agent("profile_configs/triage.yaml", model=my_model)
result = agent.run_sync(user_prompt(agent, ticket="I was charged twice."))
result.output  # a dict the persona's output_schema accepts
```

The instructions are the persona's system prompt(s), rendered by the persona; the model settings
are the persona's (`stop` as `stop_sequences`); with an `output_schema`, the output type is that
schema (`StructuredDict`), sent as Pydantic AI's output tool (`output_mode="tool"`, the default),
as the API's structured output (`"native"`) or in the prompt (`"prompted"`), and every output is
also checked with `profile.parse_reply`: a refused one goes back to the model as a retry.
`message_history` gives the turns between the instructions and the user prompt (a persona's
few-shot turns, the chat history), which Pydantic AI takes as `message_history=`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import AdapterError, SchemaReplyError
from ._common import as_profile, framework, guarded, provenance_of, settings_of, system_text

__all__ = ["OUTPUT_MODES", "message_history", "to_agent", "user_prompt"]

_EXTRA = "pydantic-ai"

#: How the output schema reaches the model: Pydantic AI's output tool, the API's own format, the prompt.
OUTPUT_MODES = ("tool", "native", "prompted")

_SETTING_NAMES = {"stop": "stop_sequences"}


def _agent_class(pydantic_ai: Any) -> type:
    made = getattr(pydantic_ai, "_profiles_agent_class", None)
    if made is None:

        class ProfileAgent(pydantic_ai.Agent):  # type: ignore[misc, name-defined]
            """A `pydantic_ai.Agent` made from a persona; `provenance` says from which file and versions."""

            provenance: dict[str, Any]
            profile: Any

        made = ProfileAgent
        pydantic_ai._profiles_agent_class = made
    return made


def to_agent(
    persona: Any,
    model: Any = None,
    *,
    tools: Sequence[Any] = (),
    output_mode: str = "tool",
    deployment: str | None = None,
    language: str | None = None,
    **options: Any,
) -> Any:
    """A `pydantic_ai.Agent` from a persona.

    `model` is a Pydantic AI model or a `provider:name` string; by default `openai:<the persona's
    model>`. `options` go to `Agent` when it takes them (`deps_type`, `retries`, or `name`,
    `instructions`, `model_settings` in place of the persona's), else to the system prompt as its
    variables.

    Raises:
        AdapterError: pydantic-ai is missing, or `output_mode` is unknown.
        SecretError: the name, model or a setting is a secret the persona does not allow out.
    """
    import inspect

    pydantic_ai = framework("pydantic_ai", _EXTRA, "pydantic-ai-slim")
    if output_mode not in OUTPUT_MODES:
        raise AdapterError(f"output_mode {output_mode!r} is not one of {', '.join(OUTPUT_MODES)}")
    profile = as_profile(persona, deployment=deployment, language=language)
    accepted = set(inspect.signature(pydantic_ai.Agent.__init__).parameters)
    agent_options = {key: value for key, value in options.items() if key in accepted}
    variables = {key: value for key, value in options.items() if key not in accepted}
    if variables:
        profile = profile.partial(**variables)
    if model is None:
        name = guarded(profile, "model", "agent's model", "model")
        if not name:
            raise AdapterError("the persona names no model; pass model=… (a Pydantic AI model or 'provider:name')")
        model = f"openai:{name}"
    # an Agent argument given here (name, instructions, model_settings, …) wins over the persona's
    if "model_settings" not in agent_options:
        settings = {_SETTING_NAMES.get(key, key): value for key, value in settings_of(profile).items()}
        extra = {key: value for key, value in profile.settings_extra.items()
                 if key not in ("openai-chat", "openai-responses", "anthropic")}
        if extra:
            settings["extra_body"] = extra
        agent_options["model_settings"] = pydantic_ai.settings.ModelSettings(**settings)
    if "name" not in agent_options:
        agent_options["name"] = str(guarded(profile, "name", "agent's name", "name") or "agent")
    if "instructions" not in agent_options:
        agent_options["instructions"] = system_text(profile)
    schema = profile.output_schema
    if schema is not None:
        output = pydantic_ai.StructuredDict(dict(schema.as_dict()), name=schema.name, description=schema.description)
        if output_mode == "native":
            output = pydantic_ai.NativeOutput(output, name=schema.name, strict=bool(schema.strict))
        elif output_mode == "prompted":
            output = pydantic_ai.PromptedOutput(output, name=schema.name)
        agent_options.setdefault("output_type", output)
    agent = _agent_class(pydantic_ai)(model, tools=list(tools), **agent_options)
    agent.provenance = provenance_of(profile).to_dict()
    agent.profile = profile
    if schema is not None:

        @agent.output_validator
        def _check(output: Any) -> Any:
            try:
                return profile.parse_reply(json.dumps(output))
            except SchemaReplyError as exc:
                raise pydantic_ai.ModelRetry(str(exc)) from exc

    return agent


def user_prompt(agent_or_persona: Any, question: str | None = None, **variables: Any) -> str:
    """The persona's user prompt for one turn: what `agent.run(…)` takes."""
    profile = getattr(agent_or_persona, "profile", None) or as_profile(agent_or_persona)
    return str(profile.format_user_prompt(question, **variables))


def message_history(
    agent_or_persona: Any,
    question: str | None = None,
    *,
    history: Sequence[Mapping[str, Any]] | None = None,
    **variables: Any,
) -> list[Any]:
    """The turns of the persona's layout between its instructions and its user prompt, as Pydantic AI messages.

    What `agent.run(user_prompt(…), message_history=…)` takes: the persona's own turns (a few-shot
    question and answer) and the `history` (OpenAI Chat turns, tool calls included), in the
    layout's order. The system prompts are the agent's instructions and the user prompt is
    `user_prompt`'s, so neither is here.

    Raises:
        HistoryError: the history is malformed.
        AdapterError: a turn holds content parts other than text, which this adapter does not carry.
    """
    from ..messages import role_of

    framework("pydantic_ai", _EXTRA, "pydantic-ai-slim")
    from pydantic_ai import messages

    profile = getattr(agent_or_persona, "profile", None) or as_profile(agent_or_persona)
    # the instructions' prompts and the user prompt render empty, and an empty prompt leaves no turn
    sent = {slot.kind for slot in profile.layout
            if slot.kind and role_of(slot, profile.roles) in ("system", "developer")} | {"user"}
    turns = profile.with_templates(**dict.fromkeys(sent, "")).format_messages(question, history=history,
                                                                                 **variables)
    tool_names: dict[str, str] = {}
    made: list[Any] = []
    for index, turn in enumerate(turns):
        role, content = turn["role"], turn.get("content")
        if content is not None and not isinstance(content, str):
            raise AdapterError(f"turn {index} ({role}) holds content parts; this adapter carries text turns and tool "
                               "calls only: give its text as one string")
        if role in ("system", "developer"):
            made.append(messages.ModelRequest(parts=[messages.SystemPromptPart(content or "")]))
        elif role == "user":
            made.append(messages.ModelRequest(parts=[messages.UserPromptPart(content or "")]))
        elif role == "assistant":
            parts: list[Any] = [messages.TextPart(content)] if content else []
            for call in turn.get("tool_calls") or ():
                function = call.get("function") or {}
                tool_names[str(call.get("id"))] = str(function.get("name"))
                parts.append(messages.ToolCallPart(str(function.get("name")), function.get("arguments"),
                                                   tool_call_id=str(call.get("id"))))
            made.append(messages.ModelResponse(parts=parts))
        elif role == "tool":
            call_id = str(turn.get("tool_call_id"))
            made.append(messages.ModelRequest(parts=[messages.ToolReturnPart(tool_names.get(call_id, "tool"),
                                                                             content or "", tool_call_id=call_id)]))
    return made
