"""OpenAI Agents SDK: a persona as an `agents.Agent`, and a turn's input items.

```python
from agents import Runner, RunConfig
from profiles.adapters.openai_agents import to_agent, to_input

agent = to_agent("profile_configs/triage.yaml", model=my_model)
run = RunConfig(tracing_disabled=True)
result = Runner.run_sync(agent, to_input(agent, ticket="I was charged twice."), run_config=run)
result.final_output  # a dict checked against the persona's output_schema
```

The agent's `instructions` are the system prompt(s) that open the persona's layout, rendered by
the persona (`to_input` gives the rest of the layout, a system reminder after the history in its
place); its
model settings are the persona's (temperature, top_p, max_tokens, penalties; stop and seed go
through `extra_args`); its `output_type` checks the model's JSON against the persona's
`output_schema` with `profile.parse_reply`. Tools are the caller's (`tools=[function_tool…]`).
The SDK exports traces to api.openai.com unless told not to: set
`OPENAI_AGENTS_DISABLE_TRACING=1`, call `agents.set_tracing_disabled(True)`, or pass
`RunConfig(tracing_disabled=True)`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import SchemaReplyError
from ._common import as_profile, framework, guarded, leading_system_kinds, provenance_of, settings_of, system_text

__all__ = ["to_agent", "to_input"]

_EXTRA = "openai-agents"


def _agent_class(agents: Any) -> type:
    """`agents.Agent` with the profile and provenance it was made from, made once."""
    made = getattr(agents, "_profiles_agent_class", None)
    if made is None:
        from dataclasses import dataclass, field

        @dataclass
        class ProfileAgent(agents.Agent):  # type: ignore[misc, name-defined]
            """An `agents.Agent` made from a persona; `provenance` says from which file and versions."""

            provenance: dict[str, Any] = field(default_factory=dict)
            profile: Any = field(default=None, repr=False)

        made = ProfileAgent
        agents._profiles_agent_class = made
    return made


def _output_type(agents: Any, profile: Any) -> Any:
    """An SDK output schema that is the persona's `output_schema`, replies read by `parse_reply`."""
    schema = profile.output_schema
    exceptions = framework("agents.exceptions", _EXTRA, "openai-agents")
    strict = bool(schema.strict)  # the persona's choice, already on where it left it out and the schema fits

    class PersonaOutput(agents.AgentOutputSchemaBase):  # type: ignore[misc, name-defined]
        def is_plain_text(self) -> bool:
            return False

        def name(self) -> str:
            return str(schema.name)

        def json_schema(self) -> dict[str, Any]:
            return dict(schema.as_dict())

        def is_strict_json_schema(self) -> bool:
            return strict

        def validate_json(self, json_str: str) -> Any:
            try:
                return profile.parse_reply(json_str)
            except SchemaReplyError as exc:
                raise exceptions.ModelBehaviorError(str(exc)) from exc

    return PersonaOutput()


def to_agent(
    persona: Any,
    *,
    model: Any = None,
    tools: Sequence[Any] = (),
    deployment: str | None = None,
    language: str | None = None,
    **options: Any,
) -> Any:
    """An `agents.Agent` from a persona: name, instructions, model, model settings, output type.

    `model` is an SDK model object (`OpenAIChatCompletionsModel(…)`) or a name; by default the
    persona's model. `options` go to `Agent` when it has such a field (`handoffs`, `hooks`, or
    `name`, `instructions`, `model_settings` in place of the persona's), else to the system prompt
    as its variables. The agent's `profile` is what `to_input` renders
    the turn with; `provenance` names the persona file, deployment and store versions.

    Raises:
        AdapterError: openai-agents is missing.
        SecretError: the name, model or a setting is a secret the persona does not allow out.
    """
    agents = framework("agents", _EXTRA, "openai-agents")
    profile = as_profile(persona, deployment=deployment, language=language)
    fields = set(agents.Agent.__dataclass_fields__)
    agent_options = {key: value for key, value in options.items() if key in fields}
    variables = {key: value for key, value in options.items() if key not in fields}
    if variables:
        profile = profile.partial(**variables)
    # an Agent field given here (name, instructions, model_settings, …) wins over the persona's
    if "model_settings" not in agent_options:
        settings = settings_of(profile)
        extra_args = {key: settings.pop(key) for key in ("stop", "seed") if key in settings}
        extra_args.update({key: value for key, value in profile.settings_extra.items()
                           if key not in ("openai-chat", "openai-responses", "anthropic")})
        if extra_args:
            settings["extra_args"] = extra_args
        agent_options["model_settings"] = agents.ModelSettings(**settings)
    if "name" not in agent_options:
        agent_options["name"] = str(guarded(profile, "name", "agent's name", "name") or "Agent")
    if "instructions" not in agent_options:
        # the system prompts that open the layout; the rest of it (a reminder after the history) is the input's
        agent_options["instructions"] = system_text(profile, leading=True)
    chosen = model if model is not None else guarded(profile, "model", "agent's model", "model")
    if profile.output_schema is not None:
        agent_options.setdefault("output_type", _output_type(agents, profile))
    return _agent_class(agents)(
        model=chosen,
        tools=list(tools),
        provenance=provenance_of(profile).to_dict(),
        profile=profile,
        **agent_options,
    )


def to_input(
    agent_or_persona: Any,
    question: str | None = None,
    *,
    history: Sequence[Mapping[str, Any]] | None = None,
    **variables: Any,
) -> list[dict[str, Any]]:
    """The input items of one turn (Responses-style, what `Runner.run` takes): history, then the user prompt.

    The system prompts are the agent's instructions and are left out here.

    Raises:
        HistoryError: the history is malformed.
    """
    from ..history import to_responses_input

    profile = getattr(agent_or_persona, "profile", None) or as_profile(agent_or_persona)
    # the leading system prompts are the agent's instructions: not rendered here at all, so a turn never
    # fails on them (an agent given instructions of its own in place of a secret the persona keeps in)
    instructions = leading_system_kinds(profile)
    if instructions:
        profile = profile.with_templates(**dict.fromkeys(instructions, ""))
    turns = profile.format_messages(question, history=history, **variables)
    leading = 0
    while leading < len(turns) and turns[leading]["role"] in ("system", "developer"):
        leading += 1
    return to_responses_input(turns[leading:])
