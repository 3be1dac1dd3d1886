"""The persona JSON Schema agrees with the loader on the examples and on bad input."""

from __future__ import annotations

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

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
        {"name": "", "role": "r"},
        {"name": "n", "role": "r", "goal": {"key": "GOAL", "default": ["a", "b"]}},
        {"name": "n", "role": "r", "goal": {"key": "GOAL", "is_list": True}},
        {"name": "n", "role": "r", "goal": {"key": None}},
        {"name": "n", "role": "r", "variables": {"goal": "x"}},
        {"name": "n", "role": "r", "variables": {"company": {"key": "COMPANY", "colour": "blue"}}},
        {"name": "n", "role": "r", "inputs": {"name": "string"}},
        {"name": "n", "role": "r", "messages": [{"history": True}, {"kind": "user"}, {"history": True}]},
        {"name": "n", "role": "r", "tools": [{"name": "search", "description": "  "}]},
        {"name": "n", "role": "r", "tools": [{"name": "search", "description": "d", "parameters": {"properties": 5}}]},
        {"name": "n", "role": "r", "output_schema": {"schema": True}},
        {"name": "n", "role": "r", "roles": {"": "system"}},
        {"name": "n", "role": "r", "language": " zh"},
        {"name": "n", "role": "r", "language": {"key": "LANGUAGE", "default": "zh/../en"}},
    ],
)
def test_schema_refuses_what_the_loader_refuses(document):
    from profiles import ConfigError
    from profiles.loader import parse_profiles

    assert list(jsonschema.Draft202012Validator(persona_schema()).iter_errors(document))
    with pytest.raises(ConfigError):
        parse_profiles(yaml.safe_dump(document))


@pytest.mark.parametrize(
    "extra",
    [
        # a key written with no value (`goal:`) is left out by the loader; an editor must not flag it
        {"goal": None, "constraints": None, "language": None, "templates": None, "variables": None},
        {"tools": None, "kinds": None, "allow_secrets": None, "model_settings": None, "output_schema": None},
        {"inputs": None, "roles": None, "messages": None, "metadata": None, "deployments": None, "samples": None},
        {"model_settings": {"temperature": None, "stop": None, "extra": None}},
        {"model_settings": {"temperature": {"key": "TEMPERATURE", "default": None}}},
        {"goal": {"key": "GOAL", "default": None, "provider": None, "description": None, "category": None}},
        {"goal": {"key": None, "default": "Help."}},
        {"tools": [{"name": "search", "description": "Search.", "parameters": None, "strict": None}]},
        {"inputs": {"ticket": None, "tier": {"type": None, "enum": None, "description": None}}},
        {"output_schema": {"schema": {"type": "object"}, "name": None, "strict": None, "description": None}},
        {"deployments": {"prod": {"name": None, "role": None, "variables": None, "templates": None}}},
        {"kinds": ["handoff", "handoff"], "allow_secrets": ["goal", "goal"]},
    ],
)
def test_schema_takes_what_the_loader_takes(extra):
    import warnings

    from profiles.loader import parse_profiles

    document = {"name": "n", "role": "r", **extra}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # inputs no template reads
        parse_profiles(yaml.safe_dump(document))
    assert not list(jsonschema.Draft202012Validator(persona_schema()).iter_errors(document))


# -- generated personas: the schema and the loader give the same verdict --------------------------
# Each persona is a valid name and role with up to three other fields, each drawn right, wrong or
# empty. Left out are the checks only the loader can make (files, template syntax, registered
# providers, env key spelling, an output schema's meta-schema, a default against its input's type).

_WORDS = st.text(  # printable text, as a language must be (beyond what a JSON Schema pattern can say)
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Cf", "Co", "Cn", "Zl", "Zp", "Zs"),
                  exclude_characters="{}%#", include_characters=" "),
    max_size=12,
)
_WRONG = st.sampled_from([None, 5, 1.5, True, [], {}, "", "x"])


def _dynamic() -> st.SearchStrategy:
    return st.fixed_dictionaries({}, optional={
        "key": st.sampled_from([None, "SCHEMA_PROPERTY_KEY", "", 5]),
        "default": st.none() | _WORDS | st.lists(_WORDS, max_size=2) | st.sampled_from([5, True]),
        "provider": st.sampled_from([None, "env"]),
        "is_list": st.sampled_from([True, False, "yes"]),
        "separator": st.sampled_from([",", "", None]),
        "secret": st.sampled_from([False, None]),
        "description": st.sampled_from([None, "d", 5]),
        "colour": st.just("blue"),
    })


_TEXT = _WORDS | _WRONG | _dynamic()
_TEXTS = st.lists(_WORDS | _WRONG, max_size=3) | _WRONG | _dynamic()
_SETTING = st.sampled_from([None, 0, 0.5, 2, 3, -3, True, "0.5"])
_KIND = st.sampled_from(["system", "user", "handoff", "a.b", "../x", ""])
_SCHEMA = st.sampled_from([{"type": "object", "properties": {"a": {"type": "string"}}}, {}, True])
_FIELDS = {
    **{field: _TEXT for field in ("goal", "desc", "expand_prompt", "examples", "retry_goal", "language", "model")},
    "constraints": _TEXTS,
    "retry_constraints": _TEXTS,
    "variables": _WRONG | st.dictionaries(
        st.sampled_from(["plan", "tier", "goal", "resources", "a b"]), st.none() | _WORDS | st.integers() | _dynamic(),
        max_size=2,
    ),
    "samples": _WRONG | st.dictionaries(st.sampled_from(["plan", "user"]), _WORDS | st.integers(), max_size=2),
    "templates": _WRONG | st.dictionaries(_KIND, st.none() | _WORDS | st.fixed_dictionaries({}, optional={
        "inline": _WORDS | st.none(), "store": st.sampled_from(["x/y", "", None]), "path": st.just("x")
    }), max_size=2),
    "tools": _WRONG | st.lists(st.fixed_dictionaries({"name": st.sampled_from(["search", "a.b", "", 5])}, optional={
        "description": st.sampled_from(["Search.", "", " ", None, 5]),
        "parameters": st.sampled_from([None, {}, {"type": "object"}, {"type": "string"}, {"properties": 5}]),
        "strict": st.sampled_from([None, True, False, "yes"]),
    }), max_size=2),
    "requires_resources": st.sampled_from([True, False, None, "yes", 1]),
    "kinds": _WRONG | st.lists(st.sampled_from(["handoff", "a.b", "system", 5]), max_size=3),
    "allow_secrets": _WRONG | st.lists(st.sampled_from(["goal", "model_settings.seed", "colour"]), max_size=2),
    "model_settings": _WRONG | st.fixed_dictionaries({}, optional={
        "temperature": _SETTING | st.fixed_dictionaries({"key": st.just("T")}, optional={"default": _SETTING}),
        "top_p": _SETTING,
        "max_tokens": st.sampled_from([None, 1, 0, 1.5, "10", True]),
        "stop": st.sampled_from([None, "x", "", [], ["a"], ["a", ""], [5]]),
        "extra": st.sampled_from([None, {}, {"user": "x"}, 5]),
        "colour": st.just("blue"),
    }),
    "output_schema": _SCHEMA | _WRONG | st.fixed_dictionaries({"schema": _SCHEMA}, optional={
        "name": st.sampled_from(["triage", "a b", None]), "strict": st.sampled_from([None, False, "no"]),
        "description": st.sampled_from(["d", None]), "title": st.just("t"),
    }),
    "inputs": _WRONG | st.dictionaries(
        st.sampled_from(["ticket", "tier", "name", "tools", "9bad"]),
        st.sampled_from(["string", "integer", "colour", None, 5]) | st.fixed_dictionaries({}, optional={
            "type": st.sampled_from(["string", None, [], ["string", "integer"], "colour"]),
            "description": st.sampled_from(["d", None, 5]),
            "required": st.sampled_from([True, False, None, "yes"]),
            "colour": st.just("blue"),
        }),
        max_size=2,
    ),
    "roles": _WRONG | st.dictionaries(_KIND, st.sampled_from(["system", "assistant", "tool", None]), max_size=2),
    "messages": _WRONG | st.lists(
        st.fixed_dictionaries({}, optional={"kind": _KIND, "role": st.sampled_from(["user", "tool", None])})
        | st.sampled_from([{"history": True}, {"history": False}, {"history": True, "kind": "user"}]),
        max_size=3,
    ),
    "metadata": _WRONG | st.dictionaries(st.sampled_from(["team"]), _WORDS | st.integers() | st.none(), max_size=2),
    "template_roots": st.sampled_from([None, [], 5, "x"]),
    "colour": st.just("blue"),
}


@st.composite
def _some_fields(draw, pool: dict, *, persona: bool) -> dict:
    document = {}
    if persona:
        document = {field: draw(_TEXT) if draw(st.integers(0, 5)) == 0 else "Ada" for field in ("name", "role")}
    for field in draw(st.lists(st.sampled_from(sorted(pool)), max_size=3, unique=True)):
        document[field] = draw(pool[field])
    return document


_OVERLAY = _some_fields({"name": _TEXT, "role": _TEXT, **_FIELDS}, persona=False) | st.sampled_from([None, 5, []])
_PERSONAS = _some_fields(
    {**_FIELDS, "deployments": _WRONG | st.dictionaries(st.sampled_from(["prod", "a b", ""]), _OVERLAY, max_size=2)},
    persona=True,
)


@settings(max_examples=300, deadline=None)
@given(document=_PERSONAS)
def test_schema_and_loader_agree_on_generated_personas(document, tmp_path_factory):
    import json
    import warnings

    from profiles import ConfigError
    from profiles.loader import parse_profiles

    schema_errors = [error.message for error in _VALIDATOR.iter_errors(document)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an input no template reads, a deployment's model, …
            parse_profiles(json.dumps(document, ensure_ascii=False), base_dir=tmp_path_factory.getbasetemp())
        loader_problem = None
    except ConfigError as error:
        loader_problem = str(error)
    assert (not schema_errors) == (loader_problem is None), (schema_errors, loader_problem)


_VALIDATOR = jsonschema.Draft202012Validator(persona_schema())
