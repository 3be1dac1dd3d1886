"""Precedence, first wins: overrides > the field's provider > default; in `env`, os.environ >
`.env.<deployment>` > `.env`, each file in the persona's folder before the working directory's."""

from __future__ import annotations

import os
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiles import Context, DynConfig, EnvProvider, ProfileConfig
from profiles.loader import load_profile
from profiles.providers.env import ENV_LAYERS

KEY = "PRECEDENCE_TEST_NAME"

#: Where a value may sit, highest first, and how provenance names it.
LAYERS = ("process", "persona/.env.prod", "work/.env.prod", "persona/.env", "work/.env")

layer_values = st.fixed_dictionaries(
    {layer: st.one_of(st.none(), st.just(""), st.sampled_from(["alpha", "beta gamma", "δ"])) for layer in LAYERS}
)


@contextmanager
def layered(values: dict[str, str | None], deployment: str | None = "prod"):
    """Lay the values out as real files and a real variable; yield the context to resolve in."""
    old_cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "persona").mkdir()
        (root / "work").mkdir()
        for layer, value in values.items():
            if layer != "process" and value is not None:
                (root / layer).write_text(f"{KEY}={value}\n", encoding="utf-8")
        os.chdir(root / "work")
        if values["process"] is not None:
            os.environ[KEY] = values["process"]
        try:
            yield root, Context(deployment=deployment, base_dir=root / "persona")
        finally:
            os.environ.pop(KEY, None)
            os.chdir(old_cwd)


def expected_winner(values: dict[str, str | None], deployment: str | None) -> str | None:
    for layer in LAYERS:
        if deployment is None and ".env.prod" in layer:
            continue
        if values[layer]:  # None and "" both count as unset
            return layer
    return None


def test_documented_order():
    assert ENV_LAYERS == ("process environment", ".env.<deployment>", ".env")


@settings(max_examples=120, deadline=None)
@given(values=layer_values, deployment=st.sampled_from(["prod", None]))
def test_env_layers_first_non_empty_wins(values, deployment):
    """Over every combination of set, empty and absent layers, the highest non-empty one answers."""
    winner = expected_winner(values, deployment)
    with layered(values, deployment) as (root, context):
        found = EnvProvider().find(KEY, context)
    if winner is None:
        assert found is None or found.value == ""
        return
    assert found.value == values[winner]
    if winner == "process":
        assert found.source == f"env:{KEY}"
    else:
        folder, name = winner.split("/")
        shown = str(root / folder / name) if folder == "persona" else name  # cwd files show relative
        assert found.source == f"env:{KEY} from {shown}"


@settings(max_examples=60, deadline=None)
@given(
    values=layer_values,
    override=st.one_of(st.none(), st.sampled_from(["forced", "Ω"])),
    default=st.sampled_from(["Aristotle", "Default"]),
)
def test_override_beats_provider_beats_default(values, override, default):
    """A field with a key: an override wins, then the env layers, then the field's default."""
    winner = expected_winner(values, "prod")
    with layered(values) as (root, _context):
        path = root / "persona" / "p.yaml"
        path.write_text(f"name: {{key: {KEY}, default: {default}}}\nrole: r\n", encoding="utf-8")
        overrides = {"name": override} if override is not None else None
        profile = load_profile(path).create_profile(deployment="prod", overrides=overrides)
    if override is not None:
        assert (profile.get_name(), profile.provenance["name"]) == (override, "override")
    elif winner is not None:
        assert profile.get_name() == values[winner]
        assert profile.provenance["name"].startswith(f"env:{KEY}")
    else:
        assert (profile.get_name(), profile.provenance["name"]) == (default, "default")


def test_overlay_sits_in_the_field_not_above_overrides(write, monkeypatch):
    """An overlay changes the field itself: overrides still win, and its dynamic field reads env."""
    path = write(
        "p.yaml",
        f"name: Base\nrole: r\ndeployments:\n  prod: {{name: {{key: {KEY}, default: Overlay}}}}\n",
    )
    config = load_profile(path)
    assert config.create_profile(deployment="prod").get_name() == "Overlay"
    monkeypatch.setenv(KEY, "FromEnv")
    assert config.create_profile(deployment="prod").get_name() == "FromEnv"
    assert config.create_profile(deployment="prod", overrides={"name": "Forced"}).get_name() == "Forced"
    assert config.create_profile().get_name() == "Base"


def test_language_argument_beats_field():
    profile = ProfileConfig(name="N", role="R", language="zh").create_profile(language="en")
    assert (profile.get_language(), profile.provenance["language"]) == ("en", "argument")


# -- the store provider: override > store (label chain) > default ------------------------------------

STORE_KEY = "precedence/name"


@pytest.fixture(scope="module")
def label_store(tmp_path_factory):
    """One SQLite store reused across examples; each example writes its own prompt name."""
    from profiles.store import PromptStore

    store = PromptStore(f"sqlite:///{tmp_path_factory.mktemp('precedence') / 'store.db'}")
    yield store
    store.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    labels=st.sets(st.sampled_from(["staging", "production"])),
    deployment=st.sampled_from(["staging", "prod", "dev", None]),
    override=st.one_of(st.none(), st.just("forced")),
    stored=st.booleans(),
)
def test_store_chain_then_default(label_store, labels, deployment, override, stored):
    """An override wins; else the first label of the deployment's chain the prompt has, else its
    newest version; a prompt the store lacks leaves the default."""
    from profiles import StoreProvider
    from profiles.providers import _providers, get_provider
    from profiles.providers.store import label_chain

    name = f"{STORE_KEY}/{uuid.uuid4().hex[:8]}"
    versions = {}
    if stored:
        for index, label in enumerate(["staging", "production", "newest"], start=1):
            label_store.put(name, f"v{index}", label=label if label in labels else None)
            versions[label] = index
    provider = StoreProvider(label_store.url, ttl=0)
    previous = get_provider("store")  # made at its first lookup: not there when this test runs alone
    _providers["store"] = provider
    try:
        config = ProfileConfig(name=DynConfig("Default", key=name, category="agent"), role="r")
        profile = config.create_profile(deployment=deployment, overrides={"name": override} if override else None)
    finally:
        _providers["store"] = previous
        provider.close()
    if override:
        assert profile.provenance["name"] == "override"
        return
    if not stored:
        assert (profile.get_name(), profile.provenance["name"]) == ("Default", "default")
        return
    chain = label_chain(deployment)
    picked = next((label for label in chain if label in labels), "latest")
    version = versions["newest"] if picked == "latest" else versions[picked]
    which = "latest" if picked == "latest" else f"label={picked}"
    assert (profile.get_name(), profile.provenance["name"]) == (f"v{version}", f"store:{name} v{version} {which}")


@pytest.mark.parametrize(
    ("arguments", "error", "said"),
    [
        ({"overrides": "name"}, "ConfigError", "overrides must be a mapping of field name to value"),
        ({"overrides": [("name", "Bo")]}, "ConfigError", "got a list"),
        ({"overrides": {5: "Bo"}}, "ConfigError", "a key that is not text"),
        ({"store_versions": 4}, "ResolutionError", "store_versions must map a store key to a version number"),
        ({"store_versions": {"summarizer/system": "4"}}, "ResolutionError", "another kind of key or version"),
        ({"store_versions": {"summarizer/system": True}}, "ResolutionError", "another kind of key or version"),
    ],
)
def test_overrides_and_pins_of_another_shape_are_refused(arguments, error, said):
    """These failed inside `dict()` or a lookup (an internal error), or were taken silently."""
    import profiles

    config = ProfileConfig(name="Ada", role="Reviewer")
    with pytest.raises(getattr(profiles, error), match=said):
        config.create_profile(**arguments)
    assert config.create_profile(overrides={"name": "Bo"}, store_versions={"summarizer/system": 4}).get_name() == "Bo"
