"""The `store` provider over HTTP: a served store read with the same label chains, TTL and stale
fallback as a database, with no database credentials on the reading side."""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import threading
import warnings

import pytest

from profiles import Context, StaleStoreWarning, StoreProvider, parse_profiles
from profiles.cli import cli
from profiles.errors import PromptNotFoundError, StoreError
from profiles.providers.http_store import HttpStore, is_http_store
from profiles.store import PromptStore
from tests.serve.live import serving, settings_for

KEY = "summarizer/name"


@pytest.fixture
def filled(store_url):
    """A store with a name in three labels and two languages."""
    with PromptStore(store_url) as store:
        store.put(KEY, "Ada", label="production")
        store.put(KEY, "Grace", label="staging")
        store.put(KEY, "Hedy")
        store.put(KEY, "艾达", language="zh", label="production")
        store.put(KEY, "Ada for GPT", model="gpt-4o", label="production")
        store.put("summarizer/system", "You are {{ name }}, from the store.\n", label="production")
    return store_url


@pytest.fixture
def served(filled, tmp_path):
    """The filled store behind a `profiles serve` on 127.0.0.1 that keeps no reads, so a change made
    to the database directly shows at the next request."""
    with serving(settings_for(tmp_path, store_url=filled, store_cache=0)) as live:
        yield live


@pytest.fixture
def register(monkeypatch):
    from profiles import providers

    def _register(name, provider):
        monkeypatch.setitem(providers._providers, name, provider)

    return _register


def _find(provider, deployment=None, language=None, model=None, key=KEY):
    return provider.find(key, Context(deployment=deployment, language=language, model=model))


def test_label_chains_languages_and_models_read_through_the_api(served):
    provider = StoreProvider(served.base, ttl=0)
    assert _find(provider, "prod").value == "Ada"
    assert _find(provider, "prod").source == "store:summarizer/name v1 label=production"
    assert _find(provider, "staging").value == "Grace"
    assert _find(provider, "dev").value == "Hedy"  # no `dev` label: the newest version
    assert _find(provider, "dev").source == "store:summarizer/name v3 latest"
    assert _find(provider, "prod", language="zh-TW").value == "艾达"
    assert _find(provider, "prod", model="gpt-4o").value == "Ada for GPT"
    assert _find(provider, key="nobody/has/this") is None
    provider.close()


def test_a_persona_renders_from_a_served_store(served, register):
    register("store", StoreProvider(served.base + "/", ttl=0))
    persona = (
        "name: {key: summarizer/name, provider: store}\nrole: Summarizer\n"
        "templates:\n  system: {store: summarizer/system}\n"
    )
    (config,) = parse_profiles(persona)
    profile = config.create_profile(deployment="staging")
    assert profile.format_system_prompt() == "You are Grace, from the store."
    assert profile.provenance["name"] == "store:summarizer/name v2 label=staging"


def test_profiles_store_url_points_the_default_provider_at_a_server(served, monkeypatch, runner, tmp_path):
    persona = tmp_path / "p.yaml"
    persona.write_text("name: {key: summarizer/name, provider: store, default: Nobody}\nrole: Summarizer\n")
    monkeypatch.setenv("PROFILES_STORE_URL", served.base)
    result = runner.invoke(cli, ["render", str(persona), "--kind", "system", "--deployment", "prod"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("You are Ada.")
    staging = runner.invoke(cli, ["render", str(persona), "--kind", "system", "--deployment", "staging"])
    assert staging.output.startswith("You are Grace.")


def test_the_ttl_keeps_answers_and_clear_cache_forgets_them(served, filled):
    provider = StoreProvider(served.base, ttl=3600)
    assert _find(provider, "prod").value == "Ada"
    with PromptStore(filled) as store:
        store.set_label(KEY, "production", 3)
    assert _find(provider, "prod").value == "Ada"  # kept for the TTL
    provider.clear_cache()
    assert _find(provider, "prod").value == "Hedy"
    fresh = StoreProvider(served.base, ttl=0)
    with PromptStore(filled) as store:
        store.set_label(KEY, "production", 2)
    assert _find(fresh, "prod").value == "Grace"


def test_an_unchanged_prompt_is_revalidated_with_a_304(served, filled):
    store = HttpStore(served.base)
    statuses = []
    store._client.event_hooks["response"].append(lambda response: statuses.append(response.status_code))
    first = store.find(KEY, labels=["production", None])
    again = store.find(KEY, labels=["production", None])
    assert statuses == [200, 304] and first == again
    with PromptStore(filled) as database:
        database.set_label(KEY, "production", 3)
    moved, label = store.find(KEY, labels=["production", None])
    assert statuses == [200, 304, 200] and (moved.content, label) == ("Hedy", "production")
    store.close()


def test_reads_that_the_store_cannot_answer(served):
    store = HttpStore(served.base)
    with pytest.raises(PromptNotFoundError, match="no prompt 'nope'"):
        store.get("nope")
    assert [record.version for record in store.history(KEY)] == [1, 2, 3]
    assert {(item.name, item.language, item.model) for item in store.list()} >= {(KEY, "", ""), (KEY, "zh", "")}
    assert store.get(KEY, version=2).content == "Grace"
    store.close()


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/", "http://", "http://user:pw@127.0.0.1:1/"])
def test_only_a_plain_server_url_is_a_store(url):
    assert is_http_store(url) == url.startswith("http")
    with pytest.raises(StoreError):
        HttpStore(url)


def test_a_server_that_is_not_the_api_is_unreachable_not_empty(served):
    """Something that does not speak the API (here: the server's static files) is no store at all."""
    store = HttpStore(served.base + "/static")
    with pytest.raises(StoreError, match="not the prompt store API") as raised:
        store.find(KEY)
    assert not isinstance(raised.value, PromptNotFoundError)
    store.close()


def _arm(version, weight, **values):
    return {
        "name": KEY, "language": "", "model": "", "version": version, "ref": f"{KEY} v{version}",
        "content": f"text {version}", "created_at": "2026-01-01T00:00:00+00:00", "author": "", "note": "",
        "labels": [], "weight": weight, **values,
    }  # fmt: skip


@contextlib.contextmanager
def _serving(handler):
    """`handler` served on 127.0.0.1 from a thread, for as long as the block runs; its URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def _answering(answer):
    """A server on 127.0.0.1 that answers every GET with `answer` as JSON, as a broken or hostile
    store server might."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *_args):
            pass

        def do_GET(self):  # noqa: N802 - the name http.server calls
            body = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with _serving(Handler) as url:
        yield url


@pytest.mark.parametrize(
    ("arms", "says"),
    [
        ([_arm(1, 0), _arm(2, 1)], "an arm without a weight of 1 or more"),
        ([_arm(1, -5), _arm(2, 1)], "an arm without a weight of 1 or more"),
        ([_arm(1, True), _arm(2, 1)], "an arm without a weight of 1 or more"),
        ([_arm(0, 1)], "a version with 'version' 0, not a whole number from 1"),
        ([_arm(1, 1, content={"a": 1})], "a version with 'content' of type dict, not text"),
    ],
)
def test_an_answer_the_api_never_gives_falls_back_like_an_unreachable_store(register, arms, says):
    """Weights a rollout cannot pick by, or a version that is not one, are not the API: the field gets its
    default with a StaleStoreWarning, never a lookup failure or another value's spelling as the prompt."""
    with _answering({**arms[0], "matched": "production", "arms": arms}) as url:
        with pytest.raises(StoreError, match=re.escape(says)):
            HttpStore(url).match(KEY, labels=["production"])
        register("hostile_server", StoreProvider(url, ttl=0))
        (config,) = parse_profiles(f"name: {{key: {KEY}, provider: hostile_server, default: Nobody}}\nrole: R\n")
        with pytest.warns(StaleStoreWarning, match=re.escape(says)):
            profile = config.create_profile(deployment="prod", rollout_key="user-1")
    assert profile.get_name() == "Nobody"
    assert profile.provenance["name"] == f"default (store:{KEY} unreachable)"


@contextlib.contextmanager
def _sending(head: bytes, chunk: bytes, count: int):
    """A server on 127.0.0.1 that answers with `head` (status line and headers), then `chunk` `count`
    times, as a download or a misconfigured proxy might."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *_args):
            pass

        def do_GET(self):  # noqa: N802 - the name http.server calls
            self.wfile.write(head)
            try:
                for _ in range(count):
                    self.wfile.write(chunk)
            except OSError:  # the reader stopped reading: what it should do
                pass

    with _serving(Handler) as url:
        yield url


@pytest.mark.parametrize(
    ("head", "says"),
    [
        (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 9000000000\r\n\r\n", "9,000,000,000"),
        (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n", "over 20,000,000"),
    ],
)
def test_an_answer_too_big_for_a_prompt_is_not_read_to_its_end(head, says):
    """A body past the limit, declared or streamed, is refused once the limit is passed: not read whole first."""
    with _sending(head, b"x" * 65536, 400) as url:  # 26 MB on offer
        with pytest.raises(StoreError, match="not the prompt store API") as raised:
            HttpStore(url).match(KEY)
    assert f"answered a body of {says} bytes" in str(raised.value)


def test_a_server_without_a_store_of_its_own_is_not_a_store(tmp_path):
    with serving(settings_for(tmp_path, store_url="http://127.0.0.1:9/")) as live:
        store = HttpStore(live.base)
        with pytest.raises(StoreError, match="another server") as raised:
            store.find(KEY)
        assert not isinstance(raised.value, PromptNotFoundError)
        store.close()


def test_the_server_stopping_mid_run_serves_the_last_good_value(postgres_url, tmp_path, register):
    """Against a served PostgreSQL store: once the server stops, the value read before is served,
    marked stale, with a warning; a key never read falls back to its default, and says why."""
    with PromptStore(postgres_url) as store:
        store.put(KEY, "Ada", label="production")
    with serving(settings_for(tmp_path, store_url=postgres_url)) as live:
        provider = StoreProvider(live.base, ttl=0)
        register("remote", provider)
        (config,) = parse_profiles("name: {key: summarizer/name, provider: remote, default: Nobody}\nrole: R\n")
        (goal,) = parse_profiles(
            "name: N\nrole: R\ngoal: {key: summarizer/goal, provider: remote, default: Be brief.}\n"
        )
        before = config.create_profile(deployment="prod")
        assert before.get_name() == "Ada"
        assert before.provenance["name"] == "store:summarizer/name v1 label=production"
        live.stop()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            stale = config.create_profile(deployment="prod")
            fallback = goal.create_profile(deployment="prod")
        provider.close()
    assert stale.get_name() == "Ada"
    assert stale.provenance["name"] == "store:summarizer/name v1 label=production (stale: store unreachable)"
    assert fallback.get_goal() == "Be brief."
    assert fallback.provenance["goal"] == "default (store:summarizer/goal unreachable)"
    messages = [str(item.message) for item in caught if issubclass(item.category, StaleStoreWarning)]
    assert len(messages) == 2, messages
    assert all("cannot reach the prompt store at http://127.0.0.1:" in message for message in messages)
    assert "serving summarizer/name v1 label=production from before" in messages[0]


def test_store_option_of_render_reads_a_server(served, runner, tmp_path):
    persona = tmp_path / "p.yaml"
    persona.write_text("name: {key: summarizer/name, provider: store, default: Nobody}\nrole: Summarizer\n")
    result = runner.invoke(cli, ["render", str(persona), "--kind", "system", "--store", served.base])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("You are Hedy.")  # no deployment: the newest version


def test_the_store_commands_say_a_server_is_not_a_database(runner, served):
    result = runner.invoke(cli, ["store", "--store", served.base, "list"])
    assert result.exit_code == 2 and "names a server (`profiles serve`), not a database" in result.output
