"""The library called from Python with the wrong things: each mistake is a ProfilesError saying what to do."""

from __future__ import annotations

import pytest

from profiles import (
    ConfigError,
    DynConfig,
    EnvProvider,
    FactoryError,
    ProfileConfig,
    ProfilesError,
    UnknownProviderError,
    register_provider,
)
from profiles.providers import known_providers


@pytest.mark.parametrize("name", [3, None, "", "  ", ("env",)])
def test_a_provider_name_that_is_no_text_is_refused_and_breaks_nothing(name):
    with pytest.raises(ConfigError, match="a provider's name must be text"):
        register_provider(name, EnvProvider())
    assert all(isinstance(known, str) for known in known_providers())
    with pytest.raises(UnknownProviderError, match="known providers are: .*env"):
        ProfileConfig(name=DynConfig("Ada", key="LEAD", provider="nowhere"), role="Lead")


def test_a_provider_that_is_no_config_provider_is_a_profiles_error():
    with pytest.raises(ConfigError, match=r"must be a ConfigProvider, got dict; subclass profiles\.ConfigProvider"):
        register_provider("directory-of-dicts", {"lead": "Ada"})
    with pytest.raises(UnknownProviderError):
        ProfileConfig(name=DynConfig("Ada", key="lead", provider="directory-of-dicts"), role="Lead")


@pytest.mark.parametrize("made", ["Ada", 5, {"name": "Ada"}, ProfileConfig(name="Ada", role="Lead")])
def test_a_factory_that_returns_no_profile_is_a_factory_error(made):
    config = ProfileConfig(name="Own", role="Lead", factory=lambda profile_id, **fields: made)
    with pytest.raises(FactoryError, match=r"returned .* for profile 'p7', not a Profile; return a profile") as caught:
        config.create_profile("p7")
    assert isinstance(caught.value, ProfilesError)


@pytest.mark.parametrize("path", [None, 5, b"profile_configs/planner.yaml", ["planner.yaml"]])
def test_a_persona_path_of_another_type_is_a_config_error(path):
    from profiles import load_profile, load_profiles

    for load in (load_profile, load_profiles):
        with pytest.raises(ConfigError, match=f"path must be text or a pathlib.Path.*got {type(path).__name__}"):
            load(path)


@pytest.mark.parametrize("text", [None, 5, ["name: Ada"]])
def test_persona_text_of_another_type_is_a_config_error(text):
    from profiles import parse_profiles

    with pytest.raises(ConfigError, match=f"a persona must be given as text.*got {type(text).__name__}"):
        parse_profiles(text)


def test_persona_bytes_are_read_as_utf8_and_other_bytes_are_a_config_error():
    from profiles import parse_profiles

    (config,) = parse_profiles("\ufeffname: Ada\nrole: Guide\n".encode())
    assert (config.name, config.role) == ("Ada", "Guide")
    with pytest.raises(ConfigError, match=r"persona\.yaml: not UTF-8 text \(byte 17\)"):
        parse_profiles(b"name: Ada\nrole: G\xffuide\n", file="persona.yaml")


@pytest.mark.parametrize("pick", [{"index": "2"}, {"index": 2.0}, {"index": True}, {"name": 5}])
def test_a_pick_of_another_type_is_a_config_error(tmp_path, pick):
    from profiles import load_profile

    path = tmp_path / "two.yaml"
    path.write_text("name: Ada\nrole: Guide\n---\nname: Bo\nrole: Pilot\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="must be (a whole number|text)"):
        load_profile(path, **pick)
    assert load_profile(path, index=2).name == load_profile(path, name="Bo").name == "Bo"


@pytest.mark.parametrize("path", [None, 5, b"plan.yaml"])
def test_a_plan_or_mapping_path_of_another_type_is_a_config_error(path):
    from profiles import load_mapping, load_plan

    wrong = type(path).__name__
    with pytest.raises(ConfigError, match=f"a sampling plan path must be text or a pathlib.Path, got {wrong}"):
        load_plan(path)
    with pytest.raises(ConfigError, match=f"a dataset mapping path must be text or a pathlib.Path, got {wrong}"):
        load_mapping(path)


@pytest.mark.parametrize("personas", [None, 5, "personas.jsonl", {"name": "Ada"}, [{"name": "Ada"}, "Bo"]])
def test_a_diversity_report_of_something_other_than_persona_mappings_is_a_factory_error(personas):
    from profiles import diversity_report

    with pytest.raises(FactoryError, match="diversity_report.* mapping"):
        diversity_report(personas)
    assert diversity_report(iter([{"name": "Ada"}, {"name": "Bo"}])).distinct_names == 2


@pytest.mark.parametrize("key", [None, 5, b"API_KEY", ("API_KEY",)])
def test_a_key_that_is_no_text_looks_like_no_credential(key):
    from profiles import looks_like_credential

    assert looks_like_credential(key) is False
    assert looks_like_credential("API_KEY") is True


def test_a_provider_that_cannot_be_asked_as_documented_is_refused_when_registered():
    from profiles import ConfigProvider

    class KeyOnly(ConfigProvider):
        name = "key-only"

        def lookup(self, key):
            return "Ada"

    class NoContext(ConfigProvider):
        name = "no-context"

        def find(self, key):
            return None

    with pytest.raises(ConfigError, match=r"lookup\(key\) got an unexpected keyword argument 'language'; write it as "
                       r"lookup\(self, key, \*, language=None, model=None, deployment=None\)"):
        register_provider("key-only", KeyOnly())
    with pytest.raises(ConfigError, match=r"find\(key\) too many positional arguments; write it as find"):
        register_provider("no-context", NoContext())
    with pytest.raises(UnknownProviderError):  # neither was registered
        ProfileConfig(name=DynConfig("Ada", key="lead", provider="key-only"), role="Lead")


def test_a_base_dir_given_as_text_is_a_folder(tmp_path):
    """parse_profiles and ProfileConfig.from_data take base_dir as text too, as every path of the API does."""
    from profiles import parse_profiles

    (tmp_path / "base.yaml").write_text("role: Guide\n", encoding="utf-8")
    (tmp_path / "hello.j2").write_text("Hello from {{ name }}.", encoding="utf-8")
    text = "name: Ada\nextends: base.yaml\ntemplates:\n  system: {file: hello.j2}\ntemplate_roots: [.]\n"
    (config,) = parse_profiles(text, base_dir=str(tmp_path))
    assert config.role == "Guide" and config.create_profile().format_system_prompt() == "Hello from Ada."
    data = {"name": "Ada", "role": "Guide", "templates": {"system": {"file": "hello.j2"}}}
    made = ProfileConfig.from_data(data, base_dir=str(tmp_path))
    assert made.create_profile().format_system_prompt() == "Hello from Ada."


@pytest.mark.parametrize("base_dir", [5, b"folder", ["folder"]])
def test_a_base_dir_of_another_type_is_a_config_error(base_dir):
    from profiles import parse_profiles

    wrong = type(base_dir).__name__
    with pytest.raises(ConfigError, match=f"a base_dir path must be text or a pathlib.Path, got {wrong}"):
        parse_profiles("name: Ada\nrole: Guide\n", base_dir=base_dir)
    with pytest.raises(ConfigError, match=f"a base_dir path must be text or a pathlib.Path, got {wrong}"):
        ProfileConfig.from_data({"name": "Ada", "role": "Guide"}, base_dir=base_dir)
