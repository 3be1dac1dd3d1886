"""The provider registry: built-ins, aliases and users' own providers."""

from __future__ import annotations

import subprocess
import sys

import pytest

from profiles import ConfigProvider, DynConfig, register_provider
from profiles.providers import get_provider, known_providers


class Capital(ConfigProvider):
    name = "capital"

    def __init__(self):
        self.calls = []

    def lookup(self, key, *, language=None, model=None, deployment=None):
        self.calls.append((key, language, model, deployment))
        return key.upper()


def test_builtins_and_alias_are_known():
    assert {"env", "store", "prompt_manager"} <= set(known_providers())
    assert get_provider("prompt_manager") is get_provider("store")


def test_the_store_provider_is_made_at_its_first_lookup():
    """Importing the registry loads no store code; asking for `store` makes one provider, kept."""
    code = (
        "import sys\n"
        "from profiles.providers import get_provider, known_providers\n"
        "assert 'store' in known_providers() and 'prompt_manager' in known_providers()\n"
        "print('profiles.providers.store' in sys.modules)\n"
        "first = get_provider('prompt_manager')\n"
        "from profiles.providers import StoreProvider\n"
        "print(type(first) is StoreProvider, first is get_provider('store'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True"]


def test_registered_provider_gets_the_context():
    """A user's provider receives the key and the context's language, model and deployment."""
    provider = Capital()
    register_provider("capital", provider)
    from profiles import ProfileConfig

    config = ProfileConfig(name=DynConfig("x", key="ada", provider="capital"), role="r", language="fr", model="gpt-4o")
    profile = config.create_profile(deployment="prod")
    assert profile.get_name() == "ADA"
    assert profile.provenance["name"] == "capital:ada"
    assert provider.calls[-1] == ("ada", "fr", "gpt-4o", "prod")


def test_register_requires_a_provider():
    from profiles import ConfigError

    with pytest.raises(ConfigError, match="must be a ConfigProvider"):
        register_provider("nope", object())


def test_a_provider_must_implement_lookup_or_find():
    with pytest.raises(TypeError, match="must implement lookup\\(\\) or find\\(\\)"):

        class Empty(ConfigProvider):
            name = "empty"


def test_a_provider_may_implement_find_only():
    """`lookup` answers through `find`, so a provider that names its sources needs only `find`."""
    from profiles.context import Context, Resolved

    class Sourced(ConfigProvider):
        name = "sourced"

        def find(self, key, context: Context):
            return Resolved(f"{key}@{context.deployment}", f"sourced:{key} row 7")

    provider = Sourced()
    assert provider.lookup("k", deployment="prod") == "k@prod"
    assert provider.find("k", Context()).source == "sourced:k row 7"
