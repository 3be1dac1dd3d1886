"""ProfileConfig: validation at construction and create_profile's resolution."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from profiles import ConfigError, DynConfig, ProfileConfig, ProfilesError, ResolutionError
from profiles.factories import ProfileFactory


def test_minimal_persona():
    profile = ProfileConfig(name="Aristotle", role="Summarizer").create_profile()
    assert (profile.get_name(), profile.get_role(), profile.get_goal()) == ("Aristotle", "Summarizer", None)


@pytest.mark.parametrize("missing", ["name", "role"])
def test_identity_required_without_factory(missing):
    """Without a factory, a missing name or role is named in the error."""
    fields = {"name": "A", "role": "B"}
    del fields[missing]
    with pytest.raises(ConfigError) as caught:
        ProfileConfig(**fields)
    assert f"field '{missing}': is required" in str(caught.value)


def test_all_problems_at_once():
    """A wrong type, a wrong list and an unknown field come in one error, with a suggestion."""
    with pytest.raises(ConfigError) as caught:
        ProfileConfig(name=3, role="r", constraints="one", gaol="x")
    fields = {issue.field for issue in caught.value.issues}
    assert fields == {"name", "constraints", "gaol"}
    assert "did you mean 'goal'?" in str(caught.value)
    assert isinstance(caught.value, ProfilesError) and isinstance(caught.value, ValueError)


def test_list_fields_take_lists_or_dynamic(monkeypatch):
    monkeypatch.setenv("CFG_RULES", "a[LIST_SEP]b")
    config = ProfileConfig(name="n", role="r", constraints={"key": "CFG_RULES", "default": ["z"]})
    assert config.create_profile().get_constraints() == ["a", "b"]


def test_mapping_field_with_unknown_key_is_refused():
    with pytest.raises(ConfigError, match="unknown key\\(s\\) keyy"):
        ProfileConfig(name={"keyy": "X", "default": "a"}, role="r")


def test_config_is_immutable():
    config = ProfileConfig(name="n", role="r")
    with pytest.raises(ValidationError, match="frozen"):
        config.name = "other"  # type: ignore[misc]


def test_overrides_win_over_provider_and_default(monkeypatch):
    """Precedence: overrides > the field's provider > the default."""
    monkeypatch.setenv("CFG_NAME", "FromEnv")
    config = ProfileConfig(name=DynConfig("Default", key="CFG_NAME"), role="r")
    assert config.create_profile(overrides={"name": "Override"}).get_name() == "Override"
    assert config.create_profile().get_name() == "FromEnv"
    monkeypatch.delenv("CFG_NAME")
    assert config.create_profile().get_name() == "Default"


def test_unknown_override_is_refused():
    with pytest.raises(ConfigError, match="cannot override unknown field"):
        ProfileConfig(name="n", role="r").create_profile(overrides={"nmae": "x"})


def test_language_and_model_arguments_win():
    config = ProfileConfig(name="n", role="r", language="zh", model="gpt-4o")
    profile = config.create_profile(language="en", model="qwen2.5-7b")
    assert (profile.get_language(), profile.get_model()) == ("en", "qwen2.5-7b")
    assert profile.provenance["language"] == "argument"


class _Factory(ProfileFactory):
    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    def create_profile(self, profile_id=None, *, name=None, role=None, goal=None, language=None, model=None, **options):
        self.calls.append((profile_id, name, role, goal, language, model))
        return self.answer


def test_factory_result_wins():
    made = ProfileConfig(name="Made", role="r").create_profile()
    factory = _Factory(made)
    config = ProfileConfig(name="Own", role="r", goal="g", factory=factory)
    assert config.create_profile(7, language="fr").get_name() == "Made"
    assert factory.calls == [(7, "Own", "r", "g", "fr", None)]


def test_factory_none_falls_back_to_fields():
    config = ProfileConfig(name="Own", role="r", factory=_Factory(None))
    assert config.create_profile().get_name() == "Own"


def test_factory_makes_identity_optional():
    made = ProfileConfig(name="Made", role="r").create_profile()
    assert ProfileConfig(factory=_Factory(made), goal="g").create_profile().get_name() == "Made"


def test_a_declining_factory_leaves_a_persona_without_a_name_refused():
    """The profile is then made from the fields, and rendered "You are None."."""
    config = ProfileConfig(factory=_Factory(None), goal="g")
    with pytest.raises(ResolutionError) as caught:
        config.create_profile()
    assert str(caught.value) == (
        "field 'name' is required when the factory declines (answers None), and the persona has none; "
        "give the field a value, or have factory _Factory answer a profile"
    )
    assert ProfileConfig(factory=_Factory(None), name="Own", role="r").create_profile().get_name() == "Own"


def test_plain_callable_factory_gets_keywords():
    seen = {}

    def factory(profile_id, **options):
        seen.update(options, profile_id=profile_id)
        return None

    ProfileConfig(name="n", role="r", factory=factory).create_profile("id1", model="gpt-4o")
    assert seen == {"profile_id": "id1", "name": "n", "role": "r", "goal": None, "language": None, "model": "gpt-4o"}


def test_failing_factory_becomes_factory_error():
    from profiles import FactoryError

    def factory(profile_id, **options):
        raise KeyError("row 4")

    with pytest.raises(FactoryError, match="failed for profile 'p'"):
        ProfileConfig(name="n", role="r", factory=factory).create_profile("p")


def test_bad_factory_type():
    with pytest.raises(ConfigError, match="expected a ProfileFactory or a callable"):
        ProfileConfig(name="n", role="r", factory=42)


def test_template_file_outside_folder_is_refused(tmp_path):
    from profiles.loader import parse_profiles

    with pytest.raises(ConfigError, match="leads outside .*, the folder of the persona being loaded"):
        parse_profiles("name: n\nrole: r\ntemplates: {system: {file: ../x.j2}}\n", base_dir=tmp_path)
    with pytest.raises(ConfigError, match="must be relative"):
        parse_profiles("name: n\nrole: r\ntemplates: {system: {file: /etc/passwd}}\n", base_dir=tmp_path)


def test_template_symlink_out_is_refused(tmp_path):
    from profiles.loader import parse_profiles

    outside = tmp_path / "outside.j2"
    outside.write_text("secret {{ name }}")
    folder = tmp_path / "persona"
    folder.mkdir()
    (folder / "link.j2").symlink_to(outside)
    with pytest.raises(ConfigError, match="leads outside"):
        parse_profiles("name: n\nrole: r\ntemplates: {system: {file: link.j2}}\n", base_dir=folder)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"constraints": "Be brief."}, "override 'constraints': expected a list of texts, got one text"),
        ({"retry_constraints": ["ok", 3]}, "override 'retry_constraints': item 1 is int, not text"),
        ({"model": 5}, "override 'model': expected text, got int"),
        ({"language": ["en"]}, "override 'language': expected text, got list"),
    ],
)
def test_an_override_of_the_wrong_shape_is_refused(overrides, message):
    """A text given for a list would render letter by letter; a number as the model failed deep inside."""
    with pytest.raises(ConfigError, match=re.escape(message)):
        ProfileConfig(name="n", role="r").create_profile(overrides=overrides)
    kept = ProfileConfig(name="n", role="r").create_profile(overrides={"constraints": ("Be brief.",), "goal": None})
    assert list(kept.get_constraints()) == ["Be brief."]


@pytest.mark.parametrize(
    ("extra", "field", "message"),
    [
        ("requires_resources: maybe", "requires_resources", "expected true or false, got 'maybe'"),
        ("requires_resources: [1]", "requires_resources", "expected true or false, got a list"),
        ("deployments: {prod: [name]}", "deployments.prod", "expected a mapping of the fields this deployment changes"),
        ("deployments: {prod: 3}", "deployments.prod", "leave it empty to keep the base persona"),
        ("deployments: {prod: {deployments: {}}}", "deployments.prod.deployments", "overlays do not nest"),
        ("deployments: {prod: {extends: a.yaml}}", "deployments.prod.extends", "a deployment cannot extend"),
    ],
)
def test_problems_pydantic_words_are_said_in_the_persona_format(extra, field, message):
    """Pydantic's "Input should be a valid dictionary or instance of DeploymentOverlay", and an
    overlay's `deployments:` answered with "did you mean 'deployments'?", said nothing useful."""
    from profiles import parse_profiles

    with pytest.raises(ConfigError) as caught:
        parse_profiles(f"name: Ada\nrole: Reviewer\n{extra}\n")
    (issue,) = caught.value.issues
    assert (issue.field, issue.line) == (field, 3) and message in issue.message
    assert "Input should" not in issue.message and "did you mean" not in issue.message


def test_an_overlay_is_not_offered_the_fields_it_cannot_hold():
    from profiles import parse_profiles

    with pytest.raises(ConfigError) as caught:
        parse_profiles("name: Ada\nrole: Reviewer\ndeployments: {prod: {colour: blue}}\n")
    message = caught.value.issues[0].message
    assert "known fields are name, role" in message and "deployments" not in message and "extends" not in message


def test_yaml_booleans_and_every_bad_list_item_are_explained():
    """`language: no` (Norwegian) read as false said only "got true/false"; a list's later bad items went unsaid."""
    from profiles import parse_profiles

    with pytest.raises(ConfigError) as caught:
        parse_profiles("name: Ada\nrole: R\nlanguage: no\nconstraints: [yes, 1.5, ok]\n")
    messages = {issue.field: issue.message for issue in caught.value.issues}
    assert "YAML reads unquoted yes, no, on and off as true/false" in messages["language"]
    assert messages["constraints.0"].endswith("(and 1 more item(s) of this list)")


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ("  name: Bob\n", "'variables.name': 'name' is a persona field; set name: itself rather than a variable"),
        ("  goal: {key: TEAM_GOAL, default: Sell}\n", "'variables.goal': 'goal' is a persona field"),
        ("  resources: [{content: doc}]\n", "'resources' is filled in by the library at each render"),
    ],
)
def test_a_variable_named_like_a_field_or_a_filled_input_is_refused(tmp_path, variables, message):
    """`variables: {name: Bob}` rendered 'You are Bob.' while explain, get_name() and every request said Ada;
    `variables: {resources: …}` was never formatted into the prompt."""
    from profiles.loader import parse_profiles

    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_profiles(f"name: Ada\nrole: Seller\nvariables:\n{variables}")
    with pytest.raises(ConfigError, match="'deployments.prod.variables.name'"):
        parse_profiles("name: Ada\nrole: Seller\ndeployments:\n  prod:\n    variables: {name: Bob}\n")


def test_model_copy_checks_each_updated_value_as_the_constructor_does():
    config = ProfileConfig(name="Ada", role="Guide", goal="Explain {{ topic }}", variables={"topic": "tides"})
    config.create_profile()
    moved = config.model_copy(update={"name": "Bo", "variables": {"topic": "waves"}})
    prompt = moved.create_profile().format_system_prompt()
    assert prompt.startswith("You are Bo. Your role: Guide.\nYour goal: Explain waves")
    assert config.create_profile().get_name() == "Ada"  # the original and what it worked out are untouched
    with pytest.raises(ConfigError, match="field 'constraints': expected a list of texts, got one text"):
        config.model_copy(update={"constraints": "Be brief."})  # unchecked, it became nine constraints, one a letter
    with pytest.raises(ConfigError, match="field 'name': expected text, got a number"):
        config.model_copy(update={"name": 5})
    with pytest.raises(ConfigError, match="cannot update unknown field"):
        config.model_copy(update={"nmae": "Bo"})
