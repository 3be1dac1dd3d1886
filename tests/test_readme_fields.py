"""The README's field table is the persona model's, and the signatures it quotes are the real ones."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from profiles import ConfigError, ConfigProvider, DefaultProfile, ProfileConfig, parse_profiles
from profiles.config import PYTHON_ONLY_FIELDS, PersonaModel, known_field_names
from profiles.schema import field_table, persona_schema

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def test_the_field_table_is_made_from_the_model():
    """Regenerate with `profiles.schema.field_table()` when a field or its description changes."""
    table = field_table()
    assert table in README, "README's field table differs from the model's; paste this:\n" + table


def test_every_file_field_has_a_row_and_a_description():
    rows = re.findall(r"^\| `(\w+)` \|", field_table(), re.M)
    fields = [name for name in PersonaModel.model_fields if name not in PYTHON_ONLY_FIELDS]
    assert rows == [*fields, "extends"]
    assert all(PersonaModel.model_fields[name].description for name in fields)
    assert set(persona_schema()["properties"]) == set(rows)


def test_a_field_is_documented_by_its_description_alone(monkeypatch):
    """A field added to the model shows in the table and the schema with no other change."""
    from pydantic import Field, create_model

    import profiles.config as config

    grown = create_model("Grown", __base__=PersonaModel, mood=(str, Field("calm", description="How it feels.")))
    monkeypatch.setattr(config, "PersonaModel", grown)
    assert "| `mood` | How it feels. |" in field_table()
    assert persona_schema()["properties"]["mood"] == {"description": "How it feels."}


def test_factory_is_python_only():
    assert "factory" not in known_field_names()
    with pytest.raises(ConfigError) as caught:
        parse_profiles("name: Ada\nrole: Helper\nfactory: my.module.Factory\n", file="p.yaml")
    assert str(caught.value) == (
        "p.yaml:3:1: field 'factory': factory can be set only from Python (ProfileConfig(factory=…)); remove it"
    )
    with pytest.raises(ConfigError) as unknown:
        parse_profiles("name: Ada\nrole: Helper\ncolour: red\n")
    assert "factory" not in str(unknown.value) and "kinds" in str(unknown.value)


def _plain(function) -> str:
    """A signature as the README writes it: no annotations, no `self`."""
    signature = inspect.signature(function)
    parameters = [
        parameter.replace(annotation=inspect.Parameter.empty)
        for name, parameter in signature.parameters.items()
        if name != "self"
    ]
    return str(signature.replace(parameters=parameters, return_annotation=inspect.Signature.empty))


@pytest.mark.parametrize(
    ("quoted", "function"),
    [
        ("format_system_prompt", DefaultProfile.format_system_prompt),
        ("format_user_prompt", DefaultProfile.format_user_prompt),
        ("format_write_memory_prompt", DefaultProfile.format_write_memory_prompt),
        ("format_prompt", DefaultProfile.format_prompt),
        ("format_messages", DefaultProfile.format_messages),
        ("config.create_profile", ProfileConfig.create_profile),
        ("lookup", ConfigProvider.lookup),
    ],
)
def test_quoted_signatures_are_true(quoted, function):
    """Each `name(params)` the README quotes with its parameters is the function's real signature."""
    found = re.findall(r"`" + re.escape(quoted) + r"(\([^`]*\))`", README)
    assert found, f"README quotes no signature of {quoted}"
    for text in found:
        assert " ".join(text.split()) == _plain(function), text
