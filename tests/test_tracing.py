"""OpenTelemetry span attributes, read back through the SDK's in-memory exporter: create_profile and
every rendering call describe the persona, context, store versions and template on the current
span, never a value; without OpenTelemetry in use nothing of it is imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from profiles import StoreProvider, load_profile, parse_profiles
from profiles.store import PromptStore

REPO = Path(__file__).resolve().parent.parent
PERSONA = """\
name: {key: reviewer/name, provider: store, default: Ada}
role: Reviewer
goal: {key: REVIEW_API_TOKEN, provider: env, default: none}
templates:
  system: {store: reviewer/system}
deployments:
  prod: {}
"""


@pytest.fixture
def spans():
    """A tracer whose finished spans are kept in memory, and the exporter that holds them."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("tests"), exporter
    provider.shutdown()


@pytest.fixture
def store(store_url, monkeypatch):
    from profiles import providers

    opened = PromptStore(store_url)
    provider = StoreProvider(store_url, ttl=0)
    monkeypatch.setitem(providers._providers, "store", provider)
    yield opened
    provider.close()
    opened.close()


def _attributes(exporter, name):
    (span,) = [span for span in exporter.get_finished_spans() if span.name == name]
    return dict(span.attributes)


def test_create_profile_and_render_describe_the_prompt(spans, store, tmp_path, monkeypatch):
    tracer, exporter = spans
    monkeypatch.setenv("REVIEW_API_TOKEN", "sk-very-secret")
    store.put("reviewer/name", "Grace", label="production")
    store.put("reviewer/system", 'You are {{ name }}.\n{% include "store:shared/safety" %}', label="production")
    store.put("shared/safety", "Be kind.")
    store.put("shared/safety", "Be kind and brief.", label="prod")
    path = tmp_path / "reviewer.yaml"
    path.write_text(PERSONA)
    config = load_profile(path)
    with tracer.start_as_current_span("create"):
        profile = config.create_profile(deployment="prod", language="en", model="gpt-4o")
    with tracer.start_as_current_span("render"):
        text = profile.format_system_prompt("Review this")
    created = _attributes(exporter, "create")
    assert created["profiles.persona.file"] == str(path)
    assert (created["profiles.deployment"], created["profiles.language"], created["profiles.model"]) == (
        "prod",
        "en",
        "gpt-4o",
    )
    assert list(created["profiles.store.keys"]) == ["reviewer/name", "reviewer/system", "shared/safety"]
    assert list(created["profiles.store.versions"]) == [1, 1, 2]
    assert list(created["profiles.store.labels"]) == ["production", "production", "prod"]
    assert created["profiles.stale"] is False
    rendered = _attributes(exporter, "render")
    assert rendered["profiles.prompt.kind"] == "system"
    assert rendered["profiles.template.name"] == "system (store:reviewer/system v1 label=production)"
    import hashlib

    source = profile.template_for("system").source
    assert rendered["profiles.template.hash"] == hashlib.sha256(source.encode()).hexdigest()[:16]
    assert list(rendered["profiles.store.keys"]) == list(created["profiles.store.keys"])
    every_value = " ".join(str(value) for span in exporter.get_finished_spans() for value in span.attributes.values())
    assert "sk-very-secret" not in every_value and "Grace" not in every_value and "Be kind" not in every_value
    assert text.endswith("Be kind and brief.")


def test_a_rollout_arm_and_a_stale_answer_are_recorded(spans, store, monkeypatch):
    tracer, exporter = spans
    store.put("reviewer/name", "Grace")
    store.put("reviewer/name", "Hopper")
    store.rollout("reviewer/name", "production", {1: 50, 2: 50})
    # a default to serve while the store is down: a name that resolves to nothing is an error
    (config,) = parse_profiles("name: {key: reviewer/name, provider: store, default: Nobody}\nrole: Reviewer\n")
    with tracer.start_as_current_span("rollout"):
        config.create_profile(deployment="prod", rollout_key="user-1")
    attributes = _attributes(exporter, "rollout")
    assert list(attributes["profiles.store.arms"]) in (["1/2"], ["2/2"])
    assert "user-1" not in str(attributes)

    from profiles import StaleStoreWarning, providers

    down = StoreProvider("postgresql+psycopg://nobody@127.0.0.1:1/none", ttl=0)
    monkeypatch.setitem(providers._providers, "store", down)
    with tracer.start_as_current_span("stale"), pytest.warns(StaleStoreWarning):
        config.create_profile()
    assert _attributes(exporter, "stale")["profiles.stale"] is True


def test_every_format_call_and_a_literal_persona_annotate(spans):
    tracer, exporter = spans
    (config,) = parse_profiles("name: Ada\nrole: Reviewer\n")
    with tracer.start_as_current_span("literal"):
        profile = config.create_profile(deployment="dev")
    assert _attributes(exporter, "literal")["profiles.deployment"] == "dev"
    for name, call in (
        ("user", lambda: profile.format_user_prompt("q")),
        ("write_memory", lambda: profile.format_write_memory_prompt("q", "t", "a", "o")),
        ("custom", lambda: profile.format_prompt("user", question="q")),
    ):
        with tracer.start_as_current_span(name):
            call()
        assert _attributes(exporter, name)["profiles.prompt.kind"] == ("user" if name == "custom" else name)


def test_no_span_no_attributes(spans):
    """Outside any span (or with a span that is not recording) nothing is set and nothing fails."""
    tracer, exporter = spans
    (config,) = parse_profiles("name: Ada\nrole: Reviewer\n")
    config.create_profile().format_system_prompt()
    assert exporter.get_finished_spans() == ()


def test_without_opentelemetry_nothing_of_it_is_imported():
    code = (
        "import sys, profiles\n"
        "(c,) = profiles.parse_profiles('name: Ada\\nrole: R\\n')\n"
        "c.create_profile(deployment='x').format_system_prompt()\n"
        "print(any(name.startswith('opentelemetry') for name in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert result.stdout.strip() == "False"


def test_to_request_names_the_api_and_its_prompts(spans, tmp_path):
    """A request's span holds the API asked for and the template of each prompt it holds; no value."""
    tracer, exporter = spans
    profile = load_profile(REPO / "profile_configs" / "triage.yaml").create_profile(deployment="prod")
    with tracer.start_as_current_span("request"):
        body = profile.to_request(api="anthropic", ticket="I was charged twice.")
    attributes = _attributes(exporter, "request")
    assert attributes["profiles.request.api"] == "anthropic"
    assert attributes["profiles.deployment"] == "prod" and attributes["profiles.model"] == "gpt-4o-mini"
    assert attributes["profiles.prompt.kind"] in ("system", "user")
    assert "charged twice" not in repr(attributes) and "charged twice" in body["messages"][0]["content"]
