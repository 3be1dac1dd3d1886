"""Templates from the prompt store: `templates: {system: {store: key}}` is fetched at every
create_profile for the profile's language, model and deployment, then compiled and sandboxed."""

from __future__ import annotations

import json

import pytest

from profiles import StoreProvider, explain
from profiles.cli import cli
from profiles.errors import ConfigError, RenderError, ResolutionError
from profiles.loader import load_profile
from profiles.store import PromptStore

PERSONA = """\
name: Aristotle
role: Summarizer
templates:
  system: {store: summarizer/system}
deployments:
  prod: {}
  staging: {}
"""


@pytest.fixture(autouse=True)
def _no_store_env(monkeypatch):
    monkeypatch.delenv("PROFILES_STORE_URL", raising=False)
    monkeypatch.delenv("PROFILES_STORE_LABELS", raising=False)


@pytest.fixture
def store(tmp_path):
    opened = PromptStore(f"sqlite:///{tmp_path / 'prompts.db'}")
    yield opened
    opened.close()


@pytest.fixture
def store_provider(store, monkeypatch):
    """The registered `store` provider, answering from `store` with no cache, for one test."""
    from profiles import providers

    provider = StoreProvider(f"sqlite:///{store.url.removeprefix('sqlite:///')}", ttl=0)
    monkeypatch.setitem(providers._providers, "store", provider)
    yield provider
    provider.close()


@pytest.fixture
def persona(write):
    return load_profile(write("summarizer.yaml", PERSONA))


def test_new_version_changes_the_next_profile(store, store_provider, persona):
    """Putting a new version shows in the next created profile; the earlier profile keeps its text."""
    store.put("summarizer/system", "You are {{ name }}. v1")
    first = persona.create_profile()
    assert first.format_system_prompt() == "You are Aristotle. v1"
    store.put("summarizer/system", "I am {{ name }}, the {{ role }}. v2")
    second = persona.create_profile()
    assert second.format_system_prompt() == "I am Aristotle, the Summarizer. v2"
    assert first.format_system_prompt() == "You are Aristotle. v1"


def test_deployment_language_and_model_pick_the_template(store, store_provider, persona):
    store.put("summarizer/system", "prod {{ name }}", label="production")
    store.put("summarizer/system", "staging {{ name }}", label="staging")
    store.put("summarizer/system", "中文 {{ name }}", language="zh", label="production")
    store.put("summarizer/system", "tuned {{ name }}", model="gpt-4o", label="production")
    assert persona.create_profile(deployment="prod").format_system_prompt() == "prod Aristotle"
    assert persona.create_profile(deployment="staging").format_system_prompt() == "staging Aristotle"
    assert persona.create_profile(deployment="prod", language="zh").format_system_prompt() == "中文 Aristotle"
    assert persona.create_profile(deployment="prod", model="gpt-4o").format_system_prompt() == "tuned Aristotle"


def test_explain_names_the_template_version_and_label(store, store_provider, persona):
    store.put("summarizer/system", "{{ name }} v1")
    store.put("summarizer/system", "{{ name }} v2", label="production")
    rows = {row.field: row for row in explain(persona, deployment="prod")}
    assert rows["templates.system"].source == "store:summarizer/system v2 label=production"
    assert rows["templates.system"].value == "{{ name }} v2"


def test_store_templates_are_sandboxed(store, store_provider, persona):
    store.put("summarizer/system", "{{ ''.__class__.__mro__ }}")
    with pytest.raises(RenderError, match=r"store:summarizer/system v1 latest.*unsafe"):
        persona.create_profile().format_system_prompt()


def test_missing_store_template_is_an_error(store, store_provider, persona):
    store.put("other", "x")
    with pytest.raises(ResolutionError) as caught:
        persona.create_profile(deployment="prod")
    message = str(caught.value)
    assert "summarizer.yaml:4" in message and "template 'system'" in message  # the line naming it
    assert "no prompt 'summarizer/system'" in message and "profiles store put summarizer/system" in message


def test_without_a_store_the_error_says_so(persona, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ResolutionError, match="no prompt store configured"):
        persona.create_profile()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("{store: ''}", "must name a prompt"),
        ("{store: 3}", "must be text"),
        ("{store: a, inline: b}", "must have one key"),
        ("{database: a}", r"one key: file \(a path\), inline \(text\) or store \(a prompt name\)"),
    ],
)
def test_bad_store_spec(write, spec, message):
    path = write("bad.yaml", f"name: A\nrole: B\ntemplates:\n  system: {spec}\n")
    with pytest.raises(ConfigError, match=message):
        load_profile(path)


def test_schema_accepts_store_templates(runner):
    result = runner.invoke(cli, ["schema"])
    templates = json.loads(result.output)["properties"]["templates"]
    assert {"type": "null"} in templates["anyOf"]  # `templates:` left empty is no templates, as the loader reads it
    (mapping,) = [shape for shape in templates["anyOf"] if shape.get("type") == "object"]
    choices = mapping["additionalProperties"]["oneOf"]
    assert {"type": "object", "properties": {"store": {"type": "string", "minLength": 1}},
            "required": ["store"], "additionalProperties": False} in choices


def test_cli_renders_a_store_template(runner, write, tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("PROFILES_STORE_URL", url)
    path = write("summarizer.yaml", PERSONA)
    put = runner.invoke(cli, ["store", "put", "summarizer/system", "--label", "staging"], input="Hi {{ name }}\n")
    assert put.exit_code == 0, put.output
    result = runner.invoke(cli, ["render", str(path), "-d", "staging", "--kind", "system"])
    assert result.exit_code == 0, result.output
    assert result.output == "Hi Aristotle\n"


def test_an_unreachable_store_is_said_to_be_unreachable(persona, monkeypatch):
    """A store template on a PostgreSQL server that refuses connections: the error says the store is
    unreachable and where it was looked for, not that the prompt is missing."""
    pytest.importorskip("psycopg")
    from profiles import StaleStoreWarning, providers

    url = "postgresql+psycopg://nobody@127.0.0.1:1/prompts"
    provider = StoreProvider(url, ttl=0)
    monkeypatch.setitem(providers._providers, "store", provider)
    with pytest.warns(StaleStoreWarning), pytest.raises(ResolutionError) as caught:
        persona.create_profile(deployment="prod")
    message = str(caught.value)
    assert "the prompt store is unreachable" in message and "127.0.0.1:1/prompts" in message
    assert "has no prompt" not in message and "profiles store put" not in message


def test_cli_render_on_an_unreachable_store(runner, write):
    pytest.importorskip("psycopg")
    path = write("summarizer.yaml", PERSONA)
    url = "postgresql+psycopg://nobody@127.0.0.1:1/prompts"
    result = runner.invoke(cli, ["render", str(path), "--kind", "system", "--store", url])
    assert result.exit_code == 2
    assert "unreachable" in result.stderr and "127.0.0.1:1/prompts" in result.stderr
    assert "Traceback" not in result.output


def test_store_option_beats_the_environment_for_render_and_explain(runner, write, tmp_path, monkeypatch):
    """An explicit --store wins over PROFILES_STORE_URL for render and explain too."""
    chosen, other = tmp_path / "chosen.db", tmp_path / "other.db"
    for path, text in ((chosen, "Chosen {{ name }}"), (other, "Other {{ name }}")):
        with PromptStore(f"sqlite:///{path}") as opened:
            opened.put("summarizer/system", text)
    monkeypatch.setenv("PROFILES_STORE_URL", f"sqlite:///{other}")
    persona = write("summarizer.yaml", PERSONA)
    rendered = runner.invoke(cli, ["render", str(persona), "--kind", "system", "--store", f"sqlite:///{chosen}"])
    assert rendered.output == "Chosen Aristotle\n"
    assert runner.invoke(cli, ["render", str(persona), "--kind", "system"]).output == "Other Aristotle\n"
    explained = runner.invoke(cli, ["explain", str(persona), "--store", str(chosen), "--json"])
    rows = {row["field"]: row for row in json.loads(explained.output)}
    assert rows["templates.system"]["value"] == "Chosen {{ name }}"
    refused = runner.invoke(cli, ["render", str(persona), "--store", "garbage"])
    assert refused.exit_code == 2 and "neither a store URL nor the path of an existing store file" in refused.stderr


def test_pinned_store_versions(store, store_provider, persona):
    store.put("summarizer/system", "v1 {{ name }}")
    store.put("summarizer/system", "v2 {{ name }}", label="production")
    pinned = persona.create_profile(deployment="prod", store_versions={"summarizer/system": 1})
    assert pinned.format_system_prompt() == "v1 Aristotle"
    assert pinned.provenance["templates.system"] == "store:summarizer/system v1 pinned"


def test_a_pinned_template_version_the_store_lacks_names_the_version(store, store_provider, persona):
    store.put("summarizer/system", "v1 {{ name }}", label="production")
    with pytest.raises(ResolutionError, match=r"no version 7 of 'summarizer/system' .*profiles store history"):
        persona.create_profile(deployment="prod", store_versions={"summarizer/system": 7})
