"""DB-GPT: a ConversableAgent runs a turn with a persona file as its profile, against the local server.

DB-GPT pins aiohttp==3.8.4, which no llama-index-core accepts, so it cannot share the test extra:
these tests run in a venv of their own (`.ci/dbgpt.sh`: `pip install -e ".[dbgpt]" pytest`,
`pytest -m dbgpt`) and are left out of the main run.
"""

from __future__ import annotations

import asyncio

import pytest

pytestmark = pytest.mark.dbgpt


def test_conversable_agent_turn_renders_through_the_persona(chat_server, configs):
    from dbgpt.agent import AgentContext, AgentMemory, ConversableAgent, LLMConfig, UserProxyAgent
    from dbgpt.agent.core.action.blank_action import BlankAction
    from dbgpt.model.proxy import OpenAILLMClient

    from profiles import load_profile
    from profiles.adapters.dbgpt import to_profile_config

    config = to_profile_config(configs / "summarizer.yaml", deployment="staging")
    chat_server.script("The budget passed on 12 March.")

    class Summarizer(ConversableAgent):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self._init_actions([BlankAction])

    async def turn() -> list:
        client = OpenAILLMClient(api_base=chat_server.url, api_key="sk-local", model="gpt-4o", model_alias="gpt-4o")
        context = AgentContext(conv_id="c1", language="en", temperature=0.2, max_new_tokens=256)
        memory = AgentMemory()
        memory.gpts_memory.init(conv_id="c1")
        agent = await Summarizer(profile=config).bind(context).bind(LLMConfig(llm_client=client)).bind(memory).build()
        user = await UserProxyAgent().bind(context).bind(memory).build()
        assert agent.name == "Socrates"
        await user.initiate_chat(recipient=agent, reviewer=user, message="What did the board decide?")
        return await memory.gpts_memory.get_messages("c1")

    messages = asyncio.run(turn())
    assert any("The budget passed on 12 March." in (message.content or "") for message in messages)
    (body,) = chat_server.requests
    system, *rest = body["messages"]
    profile = load_profile(configs / "summarizer.yaml").create_profile(deployment="staging")
    assert system["role"] == "system"
    assert system["content"].startswith(profile.format_system_prompt().split("\n\n")[0])
    assert "You are Socrates." in system["content"] and "ToolExpert" not in system["content"]
    assert "Current time: " in system["content"]  # DB-GPT's now_time, through the persona's template
    assert rest[-1]["content"] == profile.format_user_prompt("What did the board decide?")
    assert config.factory.provenance.deployment == "staging"
    assert config.factory.provenance.sources["name"].startswith("overlay staging:")


def test_profile_values_follow_the_persona_at_each_call(monkeypatch, configs):
    """DB-GPT caches profiles for ten seconds; ours resolve the persona again, so a changed env shows."""
    from profiles.adapters.dbgpt import to_profile_config

    config = to_profile_config(configs / "summarizer.yaml")
    profile = config.create_profile(prefer_prompt_language="en")
    assert profile.get_name() == "Aristotle"
    monkeypatch.setenv("SUMMARY_PROFILE_NAME", "Plato")
    assert profile.get_name() == "Plato" and "You are Plato." in profile.format_system_prompt()
    zh = to_profile_config(configs / "analyst_zh.yaml").create_profile(prefer_prompt_language="en")
    assert zh.format_system_prompt().startswith("你是墨子。")  # the persona's own language wins


def test_a_profile_made_already_is_used_as_it_is(configs):
    """A profile (not a ProfileConfig) gives DB-GPT profiles that render it as made, whatever language the
    agent asks for, instead of failing when DB-GPT first asks for one."""
    from profiles import load_profile
    from profiles.adapters.dbgpt import to_profile_config

    made = load_profile(configs / "summarizer.yaml").create_profile(language="zh")
    config = to_profile_config(made)
    profile = config.factory.create_profile(0, prefer_prompt_language="en", prefer_model="gpt-4o")
    assert profile.get_name() == made.get_name()
    assert profile.format_system_prompt(question="Q") == made.format_system_prompt("Q")
