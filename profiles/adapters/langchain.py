"""LangChain: a persona as a `ChatPromptTemplate`, or as a list of `BaseMessage`s.

```python
from langchain_openai import ChatOpenAI
from profiles.adapters.langchain import chat_model_kwargs, to_chat_prompt

persona = "profile_configs/triage.yaml"
chain = to_chat_prompt(persona) | ChatOpenAI(**chat_model_kwargs(persona), base_url=…)
chain.invoke({"ticket": "I was charged twice.", "history": []})
```

The template holds the persona's layout: each prompt the persona renders becomes a message,
with a `MessagesPlaceholder("history")` where its history goes. Text the persona renders in full
is a message object, used as it is (braces in it stay braces); a prompt that reads a value given
only at `invoke` (the question, an input not passed here) becomes an f-string template whose
only variables are those values. Provenance is in `prompt.metadata["agent_profiles"]`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import AdapterError
from ..interop.holes import holes_of, render_layout, sources_of, usages
from ..interop.placeholders import Var
from ._common import Provenance, as_profile, framework, guarded, provenance_of, settings_of

__all__ = ["ProfileMessages", "chat_model_kwargs", "to_chat_prompt", "to_messages"]

_EXTRA = "langchain"


class ProfileMessages(list):  # type: ignore[type-arg]
    """A list of LangChain `BaseMessage`s that also carries its persona's provenance."""

    provenance: Provenance


def _f_string(pieces: Sequence[Any]) -> str:
    """Pieces as a LangChain f-string template: braces doubled, placeholders `{name}`."""
    return "".join(
        "{" + piece.name + "}" if isinstance(piece, Var) else piece.replace("{", "{{").replace("}", "}}")
        for piece in pieces
    )


def to_chat_prompt(
    persona: Any,
    *,
    deployment: str | None = None,
    language: str | None = None,
    model: str | None = None,
    **variables: Any,
) -> Any:
    """A `ChatPromptTemplate` of the persona's messages; its input variables are what `invoke` must give.

    `variables` are rendered in now; the question and any input not given here stay template
    variables. The history slot is `MessagesPlaceholder("history", optional=True)`.

    Raises:
        AdapterError: langchain-core is missing, or a template uses an `invoke` value in a filter
            or loop (pass it here instead).
        InputError: a value given here does not fit its declared input.
    """
    prompts = framework("langchain_core.prompts", _EXTRA, "langchain-core")
    messages_module = framework("langchain_core.messages", _EXTRA, "langchain-core")
    profile = as_profile(persona, deployment=deployment, language=language, model=model)
    if variables:
        profile = profile.partial(**variables)  # checked against the declared inputs now
    kinds = [slot.kind for slot in profile.layout if slot.kind]
    # a value given here is rendered in, a secret field's own value given instead of it included
    holes = holes_of(profile, kinds, variables, keep_defaults=False, allowed_secrets=True)
    for name, how in usages(sources_of(profile, kinds), set(holes)).items():
        if how not in ("plain", "condition"):
            raise AdapterError(
                f"a template of this persona uses {name!r} through {how}; a LangChain template can only put the "
                f"value in as it is, so pass {name}=… to to_chat_prompt"
            )
    parts: list[Any] = []
    for message in render_layout(profile, holes, {}, lambda reason: AdapterError(reason)):
        if message.kind is None:
            parts.append(prompts.MessagesPlaceholder("history", optional=True))
        elif any(isinstance(piece, Var) for piece in message.pieces):
            template = _f_string(message.pieces)
            if message.role == "system":
                parts.append(prompts.SystemMessagePromptTemplate.from_template(template))
            elif message.role == "user":
                parts.append(prompts.HumanMessagePromptTemplate.from_template(template))
            elif message.role == "assistant":
                parts.append(prompts.AIMessagePromptTemplate.from_template(template))
            else:
                parts.append(prompts.ChatMessagePromptTemplate.from_template(template, role=message.role))
        else:
            parts.append(_message(messages_module, {"role": message.role, "content": "".join(message.pieces)}))
    prompt = prompts.ChatPromptTemplate.from_messages(parts)
    prompt.metadata = {"agent_profiles": provenance_of(profile).to_dict()}
    return prompt


def _message(module: Any, turn: Mapping[str, Any]) -> Any:
    role = turn["role"]
    content = turn.get("content") or ""
    if role == "system":
        return module.SystemMessage(content=content)
    if role == "developer":
        return module.ChatMessage(role="developer", content=content)
    if role == "user":
        return module.HumanMessage(content=content)
    if role == "assistant":
        calls = [
            {"name": call["function"]["name"], "args": _arguments(call["function"].get("arguments")),
             "id": call.get("id"), "type": "tool_call"}
            for call in turn.get("tool_calls") or ()
        ]
        return module.AIMessage(content=content, tool_calls=calls)
    if role == "tool":
        return module.ToolMessage(content=content, tool_call_id=turn.get("tool_call_id", ""))
    raise AdapterError(f"a message of role {role!r} has no LangChain message class")


def _arguments(text: Any) -> Any:
    import json

    if isinstance(text, dict):
        return text
    try:
        return json.loads(text or "{}")
    except ValueError:
        return {"arguments": text}


def to_messages(
    persona: Any,
    question: str | None = None,
    *,
    history: Sequence[Any] | None = None,
    deployment: str | None = None,
    language: str | None = None,
    model: str | None = None,
    **variables: Any,
) -> ProfileMessages:
    """The persona's messages for one turn as LangChain `BaseMessage`s, ready for `chat_model.invoke`.

    `history` is OpenAI-style turns or LangChain messages; it goes where the persona's layout puts it.

    Raises:
        AdapterError: langchain-core is missing.
        HistoryError: the history is malformed.
    """
    module = framework("langchain_core.messages", _EXTRA, "langchain-core")
    profile = as_profile(persona, deployment=deployment, language=language, model=model)
    turns = None
    if history is not None:
        turns = [
            item if isinstance(item, Mapping) else module.convert_to_openai_messages(item) for item in history
        ]
    made = ProfileMessages(_message(module, turn) for turn in profile.format_messages(question, history=turns,
                                                                                       **variables))
    made.provenance = provenance_of(profile)
    return made


def chat_model_kwargs(persona: Any, **context: Any) -> dict[str, Any]:
    """Keyword arguments for `ChatOpenAI` (or another chat model) from the persona's model and settings.

    Raises:
        SecretError: the model or a setting is a secret the persona does not allow out.
    """
    profile = as_profile(persona, **context)
    kwargs: dict[str, Any] = {}
    model = guarded(profile, "model", "chat model's name")
    if model:
        kwargs["model"] = model
    kwargs.update(settings_of(profile))
    extra = {key: value for key, value in profile.settings_extra.items()
             if key not in ("openai-responses", "anthropic", "openai-chat")}
    extra.update(profile.settings_extra.get("openai-chat") or {})
    if extra:
        kwargs["model_kwargs"] = extra
    return kwargs
