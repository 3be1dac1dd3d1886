"""The `store` provider: label chains per deployment, language and model preference, the TTL cache,
stale answers when the store goes away, and the registered default provider."""

from __future__ import annotations

import subprocess
import sys
import threading
import uuid
import warnings

import pytest

from profiles import Context, DynConfig, StaleStoreWarning, StoreProvider, parse_profiles
from profiles.cli import cli
from profiles.errors import ConfigError, ResolutionError
from profiles.providers import get_provider
from profiles.providers.store import DEFAULT_LABEL_CHAINS, label_chain, parse_label_chains
from profiles.store import PromptStore

KEY = "summarizer/name"


@pytest.fixture
def register(monkeypatch):
    """Register a provider for one test only."""
    from profiles import providers

    def _register(name, provider):
        monkeypatch.setitem(providers._providers, name, provider)

    return _register


@pytest.fixture
def store(store_url):
    opened = PromptStore(store_url)
    yield opened
    opened.close()


@pytest.fixture
def provider(store_url):
    made = StoreProvider(store_url, ttl=0)
    yield made
    made.close()


def labelled(store: PromptStore) -> None:
    """v1 production, v2 staging, v3 unlabelled: each chain lands somewhere else."""
    store.put(KEY, "Plato", label="production")
    store.put(KEY, "Zeno", label="staging")
    store.put(KEY, "Socrates")


@pytest.mark.parametrize(
    ("deployment", "value", "source"),
    [
        ("prod", "Plato", "store:summarizer/name v1 label=production"),
        ("production", "Plato", "store:summarizer/name v1 label=production"),
        ("staging", "Zeno", "store:summarizer/name v2 label=staging"),
        ("dev", "Socrates", "store:summarizer/name v3 latest"),
        (None, "Socrates", "store:summarizer/name v3 latest"),
    ],
)
def test_deployment_picks_the_label(store, provider, deployment, value, source):
    """Each deployment reads its label; provenance names the key, version and label."""
    labelled(store)
    found = provider.find(KEY, Context(deployment=deployment))
    assert (found.value, found.source) == (value, source)
    assert provider.lookup(KEY, deployment=deployment) == value


def test_chain_falls_back_staging_production_latest(store, provider):
    """Without a staging label staging reads production; without either, the newest version."""
    store.put(KEY, "v1 text")
    assert provider.find(KEY, Context(deployment="staging")).source == "store:summarizer/name v1 latest"
    store.put(KEY, "v2 text", label="production")
    store.put(KEY, "v3 text")
    assert provider.find(KEY, Context(deployment="staging")).value == "v2 text"
    store.set_label(KEY, "staging", 3)
    assert provider.find(KEY, Context(deployment="staging")).value == "v3 text"


def test_language_beats_label(store, provider):
    """A zh prompt labelled production beats an any-language one labelled staging for zh readers."""
    store.put(KEY, "Zeno", label="staging")
    store.put(KEY, "柏拉图", language="zh", label="production")
    found = provider.find(KEY, Context(language="zh-TW", deployment="staging"))
    assert (found.value, found.source) == ("柏拉图", "store:summarizer/name [zh] v1 label=production")
    assert provider.lookup(KEY, language="en", deployment="staging") == "Zeno"


def test_model_prompt_preferred(store, provider):
    store.put(KEY, "Generic", label="production")
    store.put(KEY, "Tuned", model="gpt-4o", label="production")
    assert provider.lookup(KEY, model="gpt-4o", deployment="prod") == "Tuned"
    assert provider.lookup(KEY, model="llama3", deployment="prod") == "Generic"


def test_missing_prompt_uses_the_default(store, provider, register):
    """A key the store lacks is no answer: the field's default is used, and said so."""
    store.put("other", "x")
    register("store_test", provider)
    resolved = DynConfig("Aristotle", key=KEY, provider="store_test").resolve(Context(deployment="prod"))
    assert (resolved.value, resolved.source) == ("Aristotle", "default")


def test_trailing_line_break_is_dropped(store, provider):
    """`put` from a file keeps its final newline; a name read back has none."""
    store.put(KEY, "Plato\n")
    assert provider.lookup(KEY) == "Plato"


def test_ttl_caches_per_instance(store, store_url):
    """Within the TTL an answer is reused; another instance or a cleared cache asks again."""
    store.put(KEY, "Plato")
    slow = StoreProvider(store_url, ttl=60)
    try:
        assert slow.lookup(KEY) == "Plato"
        store.put(KEY, "Zeno")
        assert slow.lookup(KEY) == "Plato"
        fresh = StoreProvider(store_url, ttl=60)
        assert fresh.lookup(KEY) == "Zeno"
        fresh.close()
        assert slow.lookup(KEY, deployment="dev") == "Zeno"  # the deployment is part of the cache key
        slow.clear_cache()
        assert slow.lookup(KEY) == "Zeno"
    finally:
        slow.close()


def test_label_chains_argument(store, store_url):
    labelled(store)
    provider = StoreProvider(store_url, ttl=0, label_chains={"prod": ["staging", "latest"]})
    assert provider.lookup(KEY, deployment="prod") == "Zeno"
    assert provider.chain_for("staging") == ("staging", "latest")  # the defaults are replaced, not merged
    provider.close()


def test_label_chains_from_env(store, provider, monkeypatch):
    """PROFILES_STORE_LABELS replaces chains per deployment, read at each lookup."""
    labelled(store)
    monkeypatch.setenv("PROFILES_STORE_LABELS", "dev=staging,latest; prod=latest")
    assert provider.lookup(KEY, deployment="dev") == "Zeno"
    assert provider.lookup(KEY, deployment="prod") == "Socrates"
    assert provider.lookup(KEY, deployment="staging") == "Zeno"  # untouched entry keeps its default
    monkeypatch.setenv("PROFILES_STORE_LABELS", "dev")
    with pytest.raises(ResolutionError, match=r"PROFILES_STORE_LABELS: 'dev' is not 'deployment=label"):
        provider.lookup(KEY, deployment="dev")


def test_label_chain_rules():
    assert label_chain(None) == ("latest",)
    assert label_chain("customer-42") == ("customer-42", "latest")
    assert label_chain("staging") == DEFAULT_LABEL_CHAINS["staging"] == ("staging", "production", "latest")
    assert parse_label_chains("a=x, y\nb=z") == {"a": ("x", "y"), "b": ("z",)}
    for bad in ("=x", "a=", "a= , "):
        with pytest.raises(ResolutionError):
            parse_label_chains(bad)


def test_bad_language_is_an_error_not_an_outage(store, provider):
    store.put(KEY, "Plato")
    with pytest.raises(ResolutionError, match="not a BCP 47 tag"):
        provider.lookup(KEY, language="english!")


def test_many_threads_share_one_provider(store, store_url):
    labelled(store)
    shared = StoreProvider(store_url, ttl=0.05)
    seen, errors = [], []

    def read():
        try:
            for deployment in ("prod", "staging", None) * 5:
                seen.append(shared.lookup(KEY, deployment=deployment))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    shared.close()
    assert not errors and sorted(set(seen)) == ["Plato", "Socrates", "Zeno"] and len(seen) == 120


# -- the store going away --------------------------------------------------------------------------


def test_sqlite_outage_serves_the_last_good_value(tmp_path, register):
    """A corrupt store file mid-run: the last good answer, marked stale, with a warning; then recovery."""
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    with PromptStore(url) as store:
        store.put(KEY, "Plato", label="production")
    provider = StoreProvider(url, ttl=0)
    register("store_outage", provider)
    info = DynConfig("Aristotle", key=KEY, provider="store_outage")
    other = DynConfig("Default goal", key="summarizer/goal", provider="store_outage")
    assert info.resolve(Context(deployment="prod")).source == "store:summarizer/name v1 label=production"

    good = path.read_bytes()
    provider.close()  # pooled connections would keep reading the old file's pages
    path.write_bytes(b"this is no longer a database" * 200)
    with pytest.warns(StaleStoreWarning, match="prompt store unreachable while reading 'summarizer/name'"):
        stale = info.resolve(Context(deployment="prod"))
    assert stale.value == "Plato"
    assert stale.source == "store:summarizer/name v1 label=production (stale: store unreachable)"
    with pytest.warns(StaleStoreWarning, match=r"with no earlier answer to serve \(a field then uses its default\)"):
        fallback = other.resolve(Context(deployment="prod"))
    assert (fallback.value, fallback.source) == ("Default goal", "default (store:summarizer/goal unreachable)")

    path.write_bytes(good)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert info.resolve(Context(deployment="prod")).source == "store:summarizer/name v1 label=production"
    provider.close()


def test_postgres_outage_serves_the_last_good_value(postgres_base):
    """A real PostgreSQL database refusing connections mid-run, then accepting them again."""
    base = postgres_base
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"outage_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(base).set(database=name).render_as_string(hide_password=False)
    provider = StoreProvider(url, ttl=0)
    try:
        with PromptStore(url) as store:
            store.put(KEY, "Plato", label="production")
        assert provider.lookup(KEY, deployment="prod") == "Plato"

        with admin.connect() as conn:  # stop the database: no new sessions, existing ones killed
            conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'))
            conn.execute(text(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"))
        with pytest.warns(StaleStoreWarning, match="serving summarizer/name v1 label=production from before"):
            stale = provider.find(KEY, Context(deployment="prod"))
        assert stale.value == "Plato" and stale.source.endswith("(stale: store unreachable)")
        with pytest.warns(StaleStoreWarning):
            assert provider.find(KEY, Context(deployment="staging")).value is None  # never read: no last good

        with admin.connect() as conn:
            conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))
        with PromptStore(url) as store:
            store.put(KEY, "Zeno", label="production")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert provider.lookup(KEY, deployment="prod") == "Zeno"
    finally:
        provider.close()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def test_unreachable_at_first_lookup_uses_the_default(register):
    """A server that is not there at all: the default, with a warning and a provenance that says so."""
    provider = StoreProvider("postgresql+psycopg://nobody@127.0.0.1:1/none", ttl=0)
    pytest.importorskip("psycopg")
    register("store_down", provider)
    with pytest.warns(StaleStoreWarning, match="cannot use the PostgreSQL prompt store"):
        resolved = DynConfig("Aristotle", key=KEY, provider="store_down").resolve(Context())
    assert (resolved.value, resolved.source) == ("Aristotle", "default (store:summarizer/name unreachable)")


# -- the registered provider -----------------------------------------------------------------------


def test_registered_store_is_a_store_provider():
    assert isinstance(get_provider("store"), StoreProvider)
    assert get_provider("prompt_manager") is get_provider("store")


def test_default_store_missing_is_a_clear_error_and_creates_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    info = DynConfig("x", key=KEY, category="agent")
    with pytest.raises(ResolutionError, match=r"no prompt store configured to look up 'summarizer/name'"):
        info.resolve(Context())
    assert not (tmp_path / ".profiles").exists()


def test_explicit_missing_file_is_an_error(tmp_path):
    with pytest.raises(ResolutionError, match=r"the prompt store .*nope\.db does not exist"):
        StoreProvider(f"sqlite:///{tmp_path / 'nope.db'}").lookup(KEY)
    assert not (tmp_path / "nope.db").exists()


def test_default_provider_follows_the_environment(tmp_path, monkeypatch):
    """Without a URL the provider reads PROFILES_STORE_URL at each lookup, else .profiles/store.db."""
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    for path, value in ((first, "Plato"), (second, "Zeno")):
        with PromptStore(f"sqlite:///{path}") as store:
            store.put(KEY, value)
    provider = StoreProvider(ttl=0)
    monkeypatch.setenv("PROFILES_STORE_URL", f"sqlite:///{first}")
    assert provider.lookup(KEY) == "Plato"
    monkeypatch.setenv("PROFILES_STORE_URL", f"sqlite:///{second}")
    assert provider.lookup(KEY) == "Zeno"
    monkeypatch.delenv("PROFILES_STORE_URL")
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".profiles").mkdir()
    second.rename(tmp_path / ".profiles" / "store.db")
    assert provider.lookup(KEY) == "Zeno"
    provider.close()


def test_repr_hides_the_password():
    shown = repr(StoreProvider("postgresql+psycopg://app:hunter2@db/prompts"))
    assert "hunter2" not in shown and "app:***@db/prompts" in shown
    query = repr(StoreProvider("postgresql+psycopg://app@db/prompts?sslmode=require&password=hunter2&x=a@b"))
    assert "hunter2" not in query and "app@db/prompts?sslmode=require&password=***&x=a@b" in query


def test_negative_ttl_refused():
    with pytest.raises(ValueError, match="ttl"):
        StoreProvider(ttl=-1)


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"ttl": "5"}, "ttl must be 0 or more seconds, got '5'"),
        ({"ttl": float("nan")}, "ttl must be 0 or more seconds, got nan"),
        ({"ttl": True}, "ttl must be 0 or more seconds"),
        ({"url": 5}, "url must be text"),
        ({"label_chains": {"prod": "production"}}, "label_chains['prod'] must be a non-empty list of label names"),
        ({"label_chains": {"prod": [5]}}, "label_chains['prod'] must be a non-empty list"),
        ({"label_chains": {"prod": []}}, "label_chains['prod'] must be a non-empty list"),
        ({"label_chains": ["production"]}, "label_chains maps a deployment to the labels it tries"),
    ],
)
def test_a_provider_built_wrong_says_so(arguments, says):
    """A chain given as one string would be read letter by letter; wrong types are a ConfigError, not a
    TypeError or AttributeError at the first lookup."""
    with pytest.raises(ConfigError) as raised:
        StoreProvider(**arguments)
    assert says in str(raised.value)


def test_label_chains_as_tuples_and_an_endless_ttl_are_fine(store, store_url):
    store.put("n", "Ada", label="production")
    provider = StoreProvider(store_url, label_chains={"prod": ("production", "latest")}, ttl=float("inf"))
    assert provider.find("n", Context(deployment="prod")).value == "Ada"


def test_a_rollout_key_holding_half_a_surrogate_pair_still_picks_an_arm(store, store_url, register):
    store.put("n", "Ada")
    store.put("n", "Grace")
    store.rollout("n", "production", {1: 50, 2: 50})
    register("store", StoreProvider(store_url))
    (config,) = parse_profiles("name: {key: n, provider: store}\nrole: R\n")
    first = config.create_profile(deployment="prod", rollout_key="user-\ud800").get_name()
    assert first in ("Ada", "Grace")
    assert config.create_profile(deployment="prod", rollout_key="user-\ud800").get_name() == first


def test_import_profiles_does_not_load_sqlalchemy():
    code = "import sys, profiles; profiles.StoreProvider(); print('sqlalchemy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# -- the command line ------------------------------------------------------------------------------


PERSONA = """\
name: {key: summarizer/name, provider: store, default: Aristotle}
role: Summarizer
"""


def test_cli_put_then_render_and_explain(runner, tmp_path, monkeypatch, store_url):
    """`profiles store put --label production` shows in `render -d prod` and `explain` names v and label."""
    monkeypatch.setenv("PROFILES_STORE_URL", store_url)
    persona = tmp_path / "summarizer.yaml"
    persona.write_text(PERSONA)
    put = runner.invoke(cli, ["store", "put", KEY, "--label", "production"], input="Plato\n")
    assert put.exit_code == 0 and "stored summarizer/name v1 (production)" in put.output
    rendered = runner.invoke(cli, ["render", str(persona), "--deployment", "prod", "--kind", "system"])
    assert rendered.exit_code == 0, rendered.output
    assert "Plato" in rendered.output and "Aristotle" not in rendered.output
    explained = runner.invoke(cli, ["explain", str(persona), "--deployment", "prod", "--json"])
    assert explained.exit_code == 0, explained.output
    assert '"source": "store:summarizer/name v1 label=production"' in explained.output
    got = runner.invoke(cli, ["store", "get", KEY, "--deployment", "staging"])
    assert got.exit_code == 0 and got.output == "Plato\n"


def test_cli_store_option_on_render(runner, tmp_path, sqlite_url):
    with PromptStore(sqlite_url) as store:
        store.put(KEY, "Zeno", label="staging")
    persona = tmp_path / "summarizer.yaml"
    persona.write_text(PERSONA)
    before = get_provider("store")
    result = runner.invoke(cli, ["render", str(persona), "-d", "staging", "--kind", "system", "--store", sqlite_url])
    assert result.exit_code == 0 and "Zeno" in result.output
    assert get_provider("store") is before  # the option does not outlive the command
    missing = runner.invoke(cli, ["explain", str(persona), "--store", f"sqlite:///{tmp_path / 'nope.db'}"])
    assert missing.exit_code == 2 and "does not exist" in missing.output and "Traceback" not in missing.output
    typo = runner.invoke(cli, ["explain", str(persona), "--store", str(tmp_path / "nope.db")])
    assert typo.exit_code == 2 and "nor the path of an existing store file" in typo.output
    assert not (tmp_path / "nope.db").exists()


def test_cli_outage_prints_a_warning(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("PROFILES_STORE_URL", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    pytest.importorskip("psycopg")
    persona = tmp_path / "summarizer.yaml"
    persona.write_text(PERSONA)
    result = runner.invoke(cli, ["explain", str(persona)])
    assert result.exit_code == 0, result.output
    assert "Warning: prompt store unreachable" in result.output
    assert "default (store:summarizer/name unreachable)" in result.output


def test_one_failure_per_ttl_not_one_per_field(tmp_path):
    """After a failure the store is left alone until the TTL passes, for every key: a dead server
    costs one connection timeout per TTL, not one per field."""
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    with PromptStore(url) as store:
        store.put(KEY, "Plato")
        store.put("summarizer/goal", "Summarize")
    provider = StoreProvider(url, ttl=60)
    assert provider.lookup(KEY) == "Plato"
    provider.close()
    good = path.read_bytes()
    path.write_bytes(b"not a database" * 300)
    provider.clear_cache()
    with pytest.warns(StaleStoreWarning, match="file is not a database"):
        assert provider.lookup(KEY) is None
    path.write_bytes(good)  # back, but within the TTL the provider does not ask yet
    with pytest.warns(StaleStoreWarning, match=r"with no earlier answer to serve \(a field then uses its default\)"):
        assert provider.lookup("summarizer/goal") is None
    provider.clear_cache()
    assert provider.lookup("summarizer/goal") == "Summarize"
    provider.close()


# -- every deployment reads a label named like itself first -----------------------------------------


@pytest.mark.parametrize(
    ("deployment", "chain"),
    [
        ("prod", ("prod", "production", "latest")),
        ("production", ("production", "latest")),
        ("staging", ("staging", "production", "latest")),
        ("dev", ("dev", "latest")),
        ("customer-42", ("customer-42", "latest")),
        (None, ("latest",)),
    ],
)
def test_label_chains(deployment, chain):
    assert label_chain(deployment) == chain


def test_label_prod_is_read_for_deployment_prod(store, provider, register):
    """v1 labelled `prod`, v2 unlabelled: deployment prod gets v1, and explain says which label matched."""
    store.put(KEY, "Plato", label="prod")
    store.put(KEY, "Zeno")
    found = provider.find(KEY, Context(deployment="prod"))
    assert (found.value, found.source) == ("Plato", "store:summarizer/name v1 label=prod")
    store.set_label(KEY, "production", 2)
    assert provider.find(KEY, Context(deployment="prod")).value == "Plato"  # its own label beats production
    register("store", provider)
    from profiles import explain, parse_profiles

    (config,) = parse_profiles(f"name: {{key: {KEY}, provider: store}}\nrole: Summarizer\n")
    rows = {row.field: row.source for row in explain(config, deployment="prod")}
    assert rows["name"] == "store:summarizer/name v1 label=prod"


def test_a_pinned_version_bypasses_the_labels(store, provider):
    store.put(KEY, "Plato", label="production")
    store.put(KEY, "Zeno")
    found = provider.find(KEY, Context(deployment="prod", store_versions={KEY: 2}))
    assert (found.value, found.source) == ("Zeno", "store:summarizer/name v2 pinned")
    assert provider.find(KEY, Context(deployment="prod", store_versions={"other": 2})).value == "Plato"
    assert provider.find(KEY, Context(store_versions={KEY: 9})) is None  # no such version: the default


def test_a_store_file_without_tables_is_no_store_and_gets_none(tmp_path):
    """A lookup never creates the store's tables in a file that happens to exist."""
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    with pytest.raises(ResolutionError, match="holds none yet"):
        StoreProvider(f"sqlite:///{path}", ttl=0).lookup(KEY)
    assert path.read_bytes() == b""
