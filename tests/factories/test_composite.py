"""CompositeProfileFactory (first and merge) and the ProfileFactory contract."""

from __future__ import annotations

import pytest

from profiles import (
    CompositeProfileFactory,
    ConfigError,
    DatasetProfileFactory,
    DynConfig,
    FactoryError,
    Profile,
    ProfileConfig,
    ProfileFactory,
    SecretError,
)


class Fixed(ProfileFactory):
    """Answers the ids it knows with a persona of the given fields, others with None."""

    def __init__(self, known: dict, **shared):
        self.known = known
        self.shared = shared
        self.calls = []

    def create_profile(self, profile_id=None, *, name=None, role=None, goal=None, language=None, model=None, **options):
        self.calls.append((profile_id, name))
        fields = self.known.get(profile_id)
        if fields is None:
            return None
        return ProfileConfig(**{"name": "n", "role": "r", **self.shared, **fields}).create_profile(profile_id)


class Plain(Profile):
    """A profile that is not a DefaultProfile: only getters."""

    def get_name(self):
        return None

    def get_role(self):
        return "Plain role"

    def get_examples(self):
        return "Q: a\nA: b"

    def format_prompt(self, kind, *, strict=False, **variables):
        return ""


def test_first_returns_the_first_answer_as_made():
    """first: the earliest factory that answers wins; later ones are not asked."""
    one, two = Fixed({"a": {"name": "One"}}), Fixed({"a": {"name": "Two"}, "b": {"name": "Two-b"}})
    composite = CompositeProfileFactory([one, two])
    assert composite.create_profile("a").get_name() == "One" and two.calls == []
    assert composite.create_profile("b").get_name() == "Two-b"
    assert composite.create_profile("c") is None


def test_merge_fills_only_empty_fields_in_order():
    """merge: each field comes from the first profile that sets it; lists are taken whole."""
    early = Fixed({"a": {"name": "Early", "goal": "", "constraints": ["c1"]}})
    late = Fixed(
        {
            "a": {
                "name": "Late",
                "role": "Late role",
                "goal": "Late goal",
                "constraints": ["x", "y"],
                "examples": "E",
            }
        }
    )
    profile = CompositeProfileFactory([early, late], mode="merge").create_profile("a")
    assert profile.get_name() == "Early"
    assert profile.get_role() == "r"  # early's role was set, so late's is not used
    assert profile.get_goal() == "Late goal"  # empty text counts as empty
    assert profile.get_constraints() == ["c1"]
    assert profile.get_examples() == "E"
    assert profile.profile_id == "a"


def test_merge_keeps_templates_variables_and_provenance():
    """merge: own templates per kind and variables per name follow the same first-wins rule."""
    early = Fixed({"a": {"variables": {"tone": "warm"}, "templates": {"user": {"inline": "Early {{ tone }}"}}}})
    late = Fixed(
        {
            "a": {
                "variables": {"tone": "cold", "extra": 1},
                "goal": "G",
                "templates": {"user": {"inline": "Late"}, "summary": {"inline": "S {{ extra }}"}},
            }
        }
    )
    profile = CompositeProfileFactory([early, late], mode="merge").create_profile("a")
    assert profile.format_user_prompt() == "Early warm"
    assert profile.format_prompt("summary") == "S 1"
    assert profile.provenance["goal"] == "literal"


def test_merge_keeps_secrets_secret(monkeypatch):
    """merge: a secret field from one factory stays masked in the merged profile."""
    monkeypatch.setenv("AGENT_NAME_SECRET", "Hidden")
    early = Fixed({"a": {"name": DynConfig("x", key="AGENT_NAME_SECRET", secret=True)}})
    late = Fixed({"a": {"goal": "G"}})
    profile = CompositeProfileFactory([early, late], mode="merge").create_profile("a")
    assert profile.resolved["name"].secret and "Hidden" not in repr(profile)


def test_merge_keeps_a_secret_variable_secret(monkeypatch):
    """A dynamic `variables:` entry read from a credential-like key came out of a merge as a plain value:
    the merged profile rendered it into the prompt and let it through in messages."""
    monkeypatch.setenv("CRM_API_KEY", "crm-key-987654")
    early = Fixed({"a": {"variables": {"crm": {"key": "CRM_API_KEY", "default": "x"}},
                         "templates": {"user": {"inline": "Ask {{ crm }}"}}}})
    late = Fixed({"a": {"goal": "G", "variables": {"crm": "public", "tone": "warm"}}})
    profile = CompositeProfileFactory([early, late], mode="merge").create_profile("a")
    with pytest.raises(SecretError, match="variable 'crm' holds a secret"):
        profile.format_user_prompt()
    with pytest.raises(SecretError, match="the value of 'variables.crm'"):
        profile.format_messages("q", history=[{"role": "user", "content": "crm-key-987654"}], crm="mine")
    assert profile.format_user_prompt(crm="mine") == "Ask mine"
    assert profile.resolved_variables["crm"].secret and profile.bound["tone"] == "warm"
    assert [row.value for row in profile.explain() if row.field == "variables.crm"] == ["***"]


def test_merge_keeps_the_metadata_of_the_first_profile_with_any():
    early = Fixed({"a": {"goal": "G"}})
    late = Fixed({"a": {"metadata": {"team": "billing"}}})
    later = Fixed({"a": {"metadata": {"team": "ops"}}})
    profile = CompositeProfileFactory([early, late, later], mode="merge").create_profile("a")
    assert dict(profile.metadata) == {"team": "billing"}


def test_merge_reads_plain_profiles_through_getters():
    """merge works with any Profile, reading its fields with the getters."""

    class PlainFactory(ProfileFactory):
        def create_profile(self, profile_id=None, **options):
            return Plain()

    profile = CompositeProfileFactory([PlainFactory(), Fixed({"a": {"name": "From fixed"}})], mode="merge")
    merged = profile.create_profile("a")
    assert (merged.get_name(), merged.get_role(), merged.get_examples()) == (
        "From fixed",
        "Plain role",
        "Q: a\nA: b",
    )


def test_merge_without_a_name_is_a_config_error():
    """A merged persona is validated: no factory gave a name, so it is refused."""

    class PlainFactory(ProfileFactory):
        def create_profile(self, profile_id=None, **options):
            return Plain()

    with pytest.raises(ConfigError, match="name"):
        CompositeProfileFactory([PlainFactory(), PlainFactory()], mode="merge").create_profile("a")


def test_merge_keeps_dataset_cells_literal():
    """A dataset cell with braces stays data after merging; it is not turned into a template."""
    dataset = DatasetProfileFactory([{"name": "{{ question }}", "role": "R"}])
    merged = CompositeProfileFactory([dataset, Fixed({1: {"goal": "G"}})], mode="merge").create_profile(1)
    assert "You are {{ question }}." in merged.format_system_prompt("asked")


def test_create_profiles_lists_the_first_factory_and_completes_it(write):
    """Without ids the first factory decides which profiles exist; merge fills each by id."""
    dataset = DatasetProfileFactory(write("p.csv", "id,name,role\na,Ada,Analyst\nb,Bob,Builder\n"), id_column="id")
    goals = Fixed({"a": {"goal": "Count"}, "z": {"goal": "Never listed"}})
    merged = list(CompositeProfileFactory([dataset, goals], mode="merge").create_profiles())
    assert [(p.profile_id, p.get_name(), p.get_goal()) for p in merged] == [
        ("a", "Ada", "Count"),
        ("b", "Bob", None),
    ]
    first = list(CompositeProfileFactory([dataset, goals]).create_profiles())
    assert [(p.profile_id, p.get_goal()) for p in first] == [("a", None), ("b", None)]


def test_create_profiles_with_ids_skips_unanswered():
    """With ids, ids nobody answers are left out."""
    composite = CompositeProfileFactory([Fixed({"a": {}}), Fixed({"b": {}})])
    assert [profile.profile_id for profile in composite.create_profiles(["a", "x", "b"])] == ["a", "b"]


def test_a_failing_factory_is_named():
    """An unexpected exception from a factory becomes a FactoryError naming it and the id."""

    class Broken(ProfileFactory):
        def create_profile(self, profile_id=None, **options):
            raise KeyError("boom")

    with pytest.raises(FactoryError, match=r"factory #2 \(Broken\) failed for profile 'a': KeyError"):
        CompositeProfileFactory([Fixed({}), Broken()]).create_profile("a")


def test_bad_arguments_are_refused():
    """An unknown mode, no factories, or a non-factory are refused at construction."""
    with pytest.raises(FactoryError, match="mode"):
        CompositeProfileFactory([Fixed({})], mode="vote")
    with pytest.raises(FactoryError, match="at least one"):
        CompositeProfileFactory([])
    with pytest.raises(FactoryError, match="#1"):
        CompositeProfileFactory([object()])


def test_base_factory_is_abstract_and_needs_ids_to_list():
    """ProfileFactory cannot be instantiated; its create_profiles needs ids unless overridden."""
    with pytest.raises(TypeError):
        ProfileFactory()
    with pytest.raises(FactoryError, match="pass the profile ids"):
        Fixed({}).create_profiles()


def test_options_are_passed_by_keyword():
    """create_profiles passes options to create_profile as keywords."""
    factory = Fixed({"a": {}})
    list(factory.create_profiles(["a"], name="Given"))
    assert factory.calls == [("a", "Given")]


def test_new_names_are_exported_lazily():
    """The factories are importable from `profiles` and `profiles.factories`, listed in `__all__`."""
    import profiles
    import profiles.factories

    for module in (profiles, profiles.factories):
        assert module.__all__ == sorted(module.__all__)
        for name in ("CompositeProfileFactory", "DatasetProfileFactory", "DatasetRowError", "RowIssue"):
            assert name in module.__all__ and getattr(module, name).__name__ == name


def test_merge_takes_tools_from_the_first_profile_with_any():
    """Tools come whole from the first profile that has tools."""
    tool = {"name": "search", "description": "Search the web", "parameters": {"type": "object", "properties": {}}}
    early, late = Fixed({"a": {}}), Fixed({"a": {"tools": [tool]}})
    merged = CompositeProfileFactory([early, late], mode="merge").create_profile("a")
    assert [item.name for item in merged.tools] == ["search"]
