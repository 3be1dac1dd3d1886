"""The persona JSON Schema agrees with the loader on the examples and on bad input."""

from __future__ import annotations

import jsonschema
import pytest
import yaml

from profiles import persona_schema
from profiles.loader import iter_persona_files


def test_schema_is_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(persona_schema())


def test_examples_follow_the_schema_and_carry_the_modeline(configs):
    validator = jsonschema.Draft202012Validator(persona_schema())
    files = list(iter_persona_files([configs]))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        modeline = text.splitlines()[0]
        assert modeline.startswith("# yaml-language-server: $schema=")
        schema = (path.parent / modeline.split("$schema=", 1)[1]).resolve()
        assert schema == (configs.parent / "schema" / "persona.schema.json").resolve(), path
        for document in yaml.safe_load_all(text):
            errors = list(validator.iter_errors(document))
            assert not errors, (path, errors)


@pytest.mark.parametrize(
    "document",
    [
        {"name": "n"},
        {"name": "n", "role": "r", "colour": "blue"},
        {"name": ["n"], "role": "r"},
        {"name": {"provider": "env"}, "role": "r"},
        {"name": "n", "role": "r", "templates": {"system": {"path": "x"}}},
        {"name": "n", "role": "r", "templates": {"../plan": {"inline": "x"}}},
    ],
)
def test_schema_refuses_what_the_loader_refuses(document):
    from profiles import ConfigError
    from profiles.loader import parse_profiles

    assert list(jsonschema.Draft202012Validator(persona_schema()).iter_errors(document))
    with pytest.raises(ConfigError):
        parse_profiles(yaml.safe_dump(document))
