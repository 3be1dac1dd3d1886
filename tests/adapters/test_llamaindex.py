"""LlamaIndex: ChatMessage lists, and a ReActAgent whose header is the persona's react prompt, run for real.

The agent's LLM is a small LlamaIndex `CustomLLM` that posts to the scripted chat server with
httpx: llama-index-core's own OpenAI LLM packages pin openai below 3, which the other frameworks
here need, and this keeps the whole ReAct loop (formatter, parser, tool calls) LlamaIndex's own.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from llama_index.core.agent.workflow import ReActAgent
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from llama_index.core.tools import FunctionTool

from profiles import ProfileConfig, load_profile
from profiles.adapters.llamaindex import react_header, to_chat_messages, to_react_agent


class LocalChat(CustomLLM):
    """A chat model on the scripted server (OpenAI Chat Completions over httpx)."""

    base_url: str
    model: str = "gpt-4o"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name=self.model, is_chat_model=True, context_window=32768, num_output=512)

    def _post(self, messages: list[dict[str, Any]]) -> str:
        reply = httpx.post(f"{self.base_url}/chat/completions", timeout=10,
                           json={"model": self.model, "messages": messages})
        reply.raise_for_status()
        return reply.json()["choices"][0]["message"]["content"]

    @llm_chat_callback()
    def chat(self, messages: list[ChatMessage], **kwargs: Any) -> ChatResponse:
        text = self._post([{"role": message.role.value, "content": message.content} for message in messages])
        return ChatResponse(message=ChatMessage(role="assistant", content=text))

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._post([{"role": "user", "content": prompt}]))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        yield self.complete(prompt)


def search(query: str) -> str:
    """Search the quarterly reports for a query."""
    return f"Q3 revenue rose 4% ({query})."


def test_react_agent_runs_a_tool_step_and_answers(chat_server, configs):
    """One ReAct loop: the model calls search, sees the observation, answers; the header is the persona's."""
    persona = ProfileConfig(name="Ada", role="Analyst", goal="Answer from the reports.",
                            constraints=['Quote figures as {"value": …}.'])
    agent = to_react_agent(persona, llm=LocalChat(base_url=chat_server.url), tools=[FunctionTool.from_defaults(search)])
    assert isinstance(agent, ReActAgent)
    header = agent.get_prompts()["react_header"].get_template()
    assert "{tool_desc}" in header and "{tool_names}" in header and "{{" in header
    chat_server.script(
        'Thought: I need the reports.\nAction: search\nAction Input: {"query": "Q3 revenue"}',
        "Thought: I can answer now.\nAnswer: Revenue rose 4% in Q3.",
    )
    async def turn() -> Any:
        return await agent.run(user_msg="What happened to revenue in Q3?")

    answer = asyncio.run(turn())
    assert str(answer) == "Revenue rose 4% in Q3."
    first, second = chat_server.requests
    system = first["messages"][0]["content"]
    assert system.startswith("You are Ada. Your role: Analyst.")
    assert "> Tool Name: search" in system and "Search the quarterly reports" in system  # LlamaIndex's tool_desc
    assert "one of: search>" in system  # {tool_names}, filled by LlamaIndex
    assert 'Quote figures as {"value": …}.' in system  # the persona's braces, unharmed by str.format
    assert first["messages"][-1] == {"role": "user", "content": "What happened to revenue in Q3?"}
    assert "Observation: Q3 revenue rose 4% (Q3 revenue)." in second["messages"][-1]["content"]
    assert agent.provenance["sources"]["name"] == "literal" and agent.name == "Ada"


def test_react_header_of_a_persona_file(configs):
    header = react_header(configs / "planner.yaml", agents="Searcher, Coder")
    assert header.format(tool_desc="TOOLS HERE", tool_names="a, b").count("TOOLS HERE") == 1
    assert "Action: <the tool name, one of: a, b>" in header.format(tool_desc="", tool_names="a, b")


def test_chat_messages_for_llm_chat(chat_server, configs):
    messages = to_chat_messages(configs / "analyst_zh.yaml", "销售额增长了多少？", history=[
        {"role": "user", "content": "你好"}, {"role": "assistant", "content": "你好！"}])
    assert [message.role.value for message in messages] == ["system", "user", "assistant", "user"]
    assert messages[0].content == load_profile(configs / "analyst_zh.yaml").create_profile().format_system_prompt()
    chat_server.script("增长了 12%。")
    reply = LocalChat(base_url=chat_server.url).chat(messages)
    assert reply.message.content == "增长了 12%。"
    assert chat_server.requests[0]["messages"][-1]["content"].endswith("销售额增长了多少？")
    assert messages.provenance.language == "zh"


def test_react_agent_fields_given_win_and_a_secret_role_is_no_description(monkeypatch):
    """name and description given are the agent's, not a TypeError; without a goal the description is the
    role, refused when it is a secret (never copied) with the argument that gives one instead."""
    monkeypatch.setenv("ROLE_TOKEN", "tok-role-55")
    persona = ProfileConfig(name="Ada", role="Analyst")
    agent = to_react_agent(persona, llm=LocalChat(base_url="http://127.0.0.1:9"), name="Bot", description="Helps")
    assert (agent.name, agent.description) == ("Bot", "Helps")
    assert to_react_agent(persona, llm=LocalChat(base_url="http://127.0.0.1:9")).description == "Analyst"
    from profiles import parse_profiles
    from profiles.errors import SecretError

    (hidden,) = parse_profiles("name: Ada\nrole: {key: ROLE_TOKEN}\n"
                               "templates: {react: {inline: 'Use {{ tools }}, one of {{ tool_names }}'}}\n")
    with pytest.raises(SecretError) as caught:
        to_react_agent(hidden, llm=LocalChat(base_url="http://127.0.0.1:9"))
    assert "pass description=…" in str(caught.value) and "tok-role-55" not in str(caught.value)
    agent = to_react_agent(hidden, llm=LocalChat(base_url="http://127.0.0.1:9"), description="Helps")
    assert "tok-role-55" not in repr(agent)


def test_history_content_parts_become_llamaindex_blocks(configs):
    """A history turn of OpenAI content parts (which the persona's history takes) raised pydantic's
    ValidationError from ChatMessage: each part is LlamaIndex's own block, its data as given."""
    import base64

    from llama_index.core.base.llms.types import AudioBlock, DocumentBlock, ImageBlock, TextBlock

    from profiles.errors import AdapterError

    png, wav, pdf = b"\x89PNG\r\n\x1a\n", b"RIFF\x00\x00WAVE", b"%PDF-1.4"

    def data_url(mime, data):
        return f"data:{mime};base64,{base64.b64encode(data).decode()}"

    parts = [
        {"type": "text", "text": "Look at these"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "image_url", "image_url": {"url": data_url("image/png", png), "detail": "low"}},
        {"type": "input_audio", "input_audio": {"data": base64.b64encode(wav).decode(), "format": "wav"}},
        {"type": "file", "file": {"file_data": data_url("application/pdf", pdf), "filename": "a.pdf"}},
    ]
    history = [{"role": "user", "content": parts}, {"role": "assistant", "content": "Seen."}]
    messages = to_chat_messages(configs / "summarizer.yaml", "What?", history=history)
    text, url, inline, audio, document = messages[1].blocks
    assert isinstance(text, TextBlock) and text.text == "Look at these"
    assert isinstance(url, ImageBlock) and str(url.url) == "https://example.com/a.png"
    assert isinstance(inline, ImageBlock) and base64.b64decode(inline.image) == png and inline.detail == "low"
    assert inline.image_mimetype == "image/png"
    assert isinstance(audio, AudioBlock) and base64.b64decode(audio.audio) == wav and audio.format == "wav"
    assert isinstance(document, DocumentBlock) and base64.b64decode(document.data) == pdf
    assert (document.title, document.document_mimetype) == ("a.pdf", "application/pdf")
    assert [message.content for message in messages[2:]] == ["Seen.", "Question: What?"]
    by_id = [{"role": "user", "content": [{"type": "file", "file": {"file_id": "file-123"}}]}]
    with pytest.raises(AdapterError) as caught:
        to_chat_messages(configs / "summarizer.yaml", "What?", history=by_id)
    assert "file_id" in str(caught.value) and "file_data" in str(caught.value)
