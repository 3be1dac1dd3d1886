"""Profiles and personas copied, pickled and sent to worker processes render what the original renders."""

from __future__ import annotations

import copy
import pickle
from concurrent.futures import ProcessPoolExecutor

from profiles import DynConfig, ProfileConfig, load_profile


def _rendered(profile):
    return (
        profile.format_system_prompt("Plan a trip", agents="Searcher"),
        profile.format_user_prompt("Plan a trip"),
        profile.get_name(),
        profile.profile_id,
        profile.provenance,
    )


def _personas(configs):
    return [
        load_profile(configs / "planner.yaml"),
        ProfileConfig(
            name=DynConfig("Ada", key="COPIES_PROFILE_NAME"),
            role="Reviewer",
            goal="Review {{ topic }}",
            constraints=["Cite {{ topic }} sources.", "Be brief."],
            variables={"topic": "tides"},
        ),
    ]


def test_a_profile_pickles_and_copies_into_one_that_renders_the_same(configs, monkeypatch):
    monkeypatch.setenv("COPIES_PROFILE_NAME", "Plato")
    for config in _personas(configs):
        profile = config.create_profile("first")
        want = _rendered(profile)
        assert _rendered(pickle.loads(pickle.dumps(profile))) == want
        assert _rendered(copy.deepcopy(profile)) == want
        bound = profile.partial(agents="Booker")
        assert pickle.loads(pickle.dumps(bound)).format_system_prompt("Plan") == bound.format_system_prompt("Plan")


def test_a_persona_pickles_after_it_made_profiles(configs):
    for config in _personas(configs):
        want = _rendered(config.create_profile("first"))
        assert _rendered(pickle.loads(pickle.dumps(config)).create_profile("first")) == want
        assert _rendered(copy.deepcopy(config).create_profile("first")) == want


def test_a_profile_sent_to_a_worker_process_renders_there(configs):
    profile = load_profile(configs / "planner.yaml").create_profile("sent")
    with ProcessPoolExecutor(1) as pool:
        assert list(pool.map(_rendered, [profile, profile])) == [_rendered(profile)] * 2


def test_a_persona_equals_its_twin_whether_or_not_it_made_profiles(configs):
    first = ProfileConfig(name="Ada", role="Guide", variables={"topics": ["tides"]})
    second = ProfileConfig(name="Ada", role="Guide", variables={"topics": ["tides"]})
    first.create_profile()  # its plan is kept with it: no part of what it is
    assert first == second and hash(first) == hash(second) and len({first, second}) == 1
    assert first != ProfileConfig(name="Ada", role="Pilot") and first != ProfileConfig(name="Bo", role="Guide")
    loaded = load_profile(configs / "planner.yaml")
    loaded.create_profile()
    assert loaded == load_profile(configs / "planner.yaml") == pickle.loads(pickle.dumps(loaded))
    assert {loaded: "planner"}[load_profile(configs / "planner.yaml")] == "planner"


def test_a_profiles_context_hashes_so_it_can_key_a_cache():
    from profiles import Context

    made = ProfileConfig(name="Ada", role="Guide").create_profile(language="fr", deployment="prod")
    cache = {made.context: "fr/prod"}
    assert cache[Context(language="fr", deployment="prod")] == "fr/prod"
    pinned = Context(language="fr", store_versions={"a/b": 2}, overrides={"name": "Bo"})
    assert hash(pinned) == hash(Context(language="fr", store_versions={"a/b": 2}, overrides={"name": "Bo"}))
    assert pinned != Context(language="fr") and len({pinned, Context(language="fr")}) == 2
