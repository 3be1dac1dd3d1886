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
