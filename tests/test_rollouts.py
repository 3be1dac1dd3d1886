"""Rollouts seen from a persona: `create_profile(rollout_key=...)` and `PROFILES_ROLLOUT_KEY` pick one
version of a rolled-out label, the same one for the same key; no key means the first version; the
arm shows in provenance and explain. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from profiles import StoreProvider, explain, parse_profiles
from profiles.cli import cli
from profiles.store import PromptStore

PERSONA = """\
name: {key: summarizer/name, provider: store, default: Aristotle}
role: Summarizer
templates:
  system: {store: summarizer/system}
"""


@pytest.fixture
def store(store_url, monkeypatch):
    from profiles import providers

    opened = PromptStore(store_url)
    provider = StoreProvider(store_url, ttl=60)  # a long TTL: arms are picked from the kept answer
    monkeypatch.setitem(providers._providers, "store", provider)
    monkeypatch.delenv("PROFILES_ROLLOUT_KEY", raising=False)
    opened.put("summarizer/name", "Plato")
    opened.put("summarizer/name", "Zeno")
    opened.rollout("summarizer/name", "production", {1: 90, 2: 10})
    opened.put("summarizer/system", "Old {{ name }}.")
    opened.put("summarizer/system", "New {{ name }}.")
    opened.rollout("summarizer/system", "production", {1: 90, 2: 10})
    yield opened
    provider.close()
    opened.close()


def _persona():
    (config,) = parse_profiles(PERSONA)
    return config


def _key_in_the_new_arm() -> str:
    persona = _persona()
    for n in range(1000):
        if persona.create_profile(rollout_key=f"u{n}", deployment="prod").get_name() == "Zeno":
            return f"u{n}"
    raise AssertionError("no key among 1,000 fell in the 10% arm")


def test_the_same_key_gets_the_same_version(store):
    persona = _persona()
    keys = [f"user-{n}" for n in range(200)]
    names = {key: persona.create_profile(deployment="prod", rollout_key=key).get_name() for key in keys}
    again = {key: persona.create_profile(deployment="prod", rollout_key=key).get_name() for key in names}
    assert names == again and set(names.values()) == {"Plato", "Zeno"}


def test_weights_hold_over_ten_thousand_keys(store):
    """10,000 users through create_profile: the new version reaches 10% of them, within 2 points."""
    persona = _persona()
    new = sum(
        persona.create_profile(deployment="prod", rollout_key=f"user-{n}").get_name() == "Zeno" for n in range(10_000)
    )
    assert abs(new / 10_000 - 0.10) <= 0.02


def test_a_key_sees_one_release_across_prompts(store):
    """The bucket is the key's, not the prompt's: a user in the 10% gets every new version at 10%."""
    persona = _persona()
    for n in range(300):
        profile = persona.create_profile(deployment="prod", rollout_key=str(n))
        assert (profile.get_name() == "Zeno") == profile.format_system_prompt().startswith("New")


def test_without_a_key_the_first_version_and_provenance_says_so(store):
    profile = _persona().create_profile(deployment="prod")
    assert profile.get_name() == "Plato"
    assert profile.provenance["name"] == "store:summarizer/name v1 label=production arm 1/2 (90%, no rollout key)"


def test_the_arm_shows_in_provenance_and_explain(store):
    key = _key_in_the_new_arm()
    profile = _persona().create_profile(deployment="prod", rollout_key=key)
    assert profile.provenance["name"] == "store:summarizer/name v2 label=production arm 2/2 (10%)"
    assert profile.provenance["templates.system"] == "store:summarizer/system v2 label=production arm 2/2 (10%)"
    rows = {row.field: row.source for row in explain(profile)}
    assert rows["templates.system"].endswith("arm 2/2 (10%)")
    assert key not in str(profile.provenance)  # the key itself (a user id) is never recorded


def test_the_environment_gives_the_key(store, monkeypatch):
    key = _key_in_the_new_arm()
    monkeypatch.setenv("PROFILES_ROLLOUT_KEY", key)
    assert _persona().create_profile(deployment="prod").get_name() == "Zeno"
    assert _persona().create_profile(deployment="prod", rollout_key="someone else").get_name() in ("Plato", "Zeno")


def test_render_and_explain_take_a_rollout_key(store, store_url, runner, tmp_path):
    path = tmp_path / "summarizer.yaml"
    path.write_text(PERSONA)
    key = _key_in_the_new_arm()
    rendered = runner.invoke(
        cli, ["render", str(path), "-d", "prod", "--kind", "system", "--rollout-key", key, "--store", store_url]
    )
    assert rendered.exit_code == 0, rendered.output
    assert rendered.output == "New Zeno.\n"
    explained = runner.invoke(cli, ["explain", str(path), "-d", "prod", "--rollout-key", key, "--store", store_url])
    assert "arm 2/2 (10%)" in explained.output
