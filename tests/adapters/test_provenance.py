"""Every adapter's object names where its persona came from: file, deployment, store versions, metadata."""

from __future__ import annotations

import pytest

from profiles import StoreProvider
from profiles.loader import load_profile
from profiles.store import PromptStore

PERSONA = """\
name: {key: desk/name, provider: store, default: Ada}
role: Support
templates:
  system: {store: desk/system}
metadata: {team: billing}
deployments:
  prod: {}
"""


@pytest.fixture
def store_persona(tmp_path, monkeypatch, write):
    from profiles import providers

    monkeypatch.delenv("PROFILES_STORE_URL", raising=False)
    url = f"sqlite:///{tmp_path / 'prompts.db'}"
    with PromptStore(url) as store:
        store.put("desk/name", "Grace", label="production")
        store.put("desk/system", "You are {{ name }}, draft one.")
        store.put("desk/system", "You are {{ name }}, on the {{ role }} desk.", label="production")
    provider = StoreProvider(url, ttl=0)
    monkeypatch.setitem(providers._providers, "store", provider)
    yield load_profile(write("desk.yaml", PERSONA))
    provider.close()


def _check(provenance: dict, file_end: str = "desk.yaml") -> None:
    assert provenance["persona_file"].endswith(file_end)
    assert provenance["deployment"] == "prod"
    assert provenance["store_versions"] == {"desk/name": "v1 label=production", "desk/system": "v2 label=production"}
    assert provenance["metadata"] == {"team": "billing"}


def test_langchain_and_llamaindex_carry_the_store_versions(store_persona):
    from profiles.adapters.langchain import to_chat_prompt, to_messages
    from profiles.adapters.llamaindex import to_chat_messages

    prompt = to_chat_prompt(store_persona, deployment="prod")
    assert prompt.messages[0].content == "You are Grace, on the Support desk."
    _check(prompt.metadata["agent_profiles"])
    _check(to_messages(store_persona, "Hi", deployment="prod").provenance.to_dict())
    _check(to_chat_messages(store_persona, "Hi", deployment="prod").provenance.to_dict())


def test_agents_carry_the_store_versions(store_persona):
    from profiles.adapters.openai_agents import to_agent as openai_agent
    from profiles.adapters.pydantic_ai import to_agent as pydantic_agent

    agent = openai_agent(store_persona, model="gpt-4o", deployment="prod")
    assert agent.instructions == "You are Grace, on the Support desk." and agent.name == "Grace"
    _check(agent.provenance)
    _check(pydantic_agent(store_persona, "test", deployment="prod").provenance)
