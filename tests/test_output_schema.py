"""output_schema: inline, from a file or the store; checked by its meta-schema; templates, requests, replies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from profiles import ConfigError, ProfileConfig, ResolutionError, SchemaReplyError, StoreProvider, register_provider
from profiles.loader import load_profile, parse_profiles
from profiles.output_schema import openai_strict_problems
from profiles.providers import get_provider

ANSWER = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "score": {"type": "integer", "minimum": 1, "maximum": 5}},
    "required": ["answer", "score"],
    "additionalProperties": False,
}


def _persona(schema_yaml: str) -> str:
    return f"name: Ada\nrole: R\nmodel: gpt-4o\noutput_schema: {schema_yaml}\n"


def test_inline_schema_reaches_templates_and_requests():
    profile = ProfileConfig(name="Ada", role="R", model="gpt-4o", output_schema=ANSWER).create_profile()
    assert profile.output_schema.schema == ANSWER and profile.output_schema.strict is True
    system = profile.format_system_prompt()
    assert "## Output format" in system and json.dumps(ANSWER, ensure_ascii=False) in system
    assert "my own format" in profile.format_system_prompt(out_schema="my own format")
    assert profile.to_request("q")["response_format"]["json_schema"]["schema"] == ANSWER


def test_out_schema_reaches_every_kind_that_reads_it():
    config = ProfileConfig(
        name="Ada", role="R", output_schema=ANSWER, templates={"user": {"inline": "{{ question }}\n{{ out_schema }}"}}
    )
    assert config.create_profile().format_user_prompt("q").endswith('"additionalProperties": false}')


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_schema_from_a_file_next_to_the_persona(write, suffix):
    text = json.dumps(ANSWER) if suffix == ".json" else "type: object\nproperties: {answer: {type: string}}\n"
    write(f"schemas/answer{suffix}", text)
    path = write("ada.yaml", _persona(f"{{file: schemas/answer{suffix}, name: answer}}"))
    profile = load_profile(path).create_profile()
    assert profile.output_schema.origin == f"file:schemas/answer{suffix}"
    assert profile.output_schema.name == "answer"
    assert profile.output_schema.schema["properties"]["answer"] == {"type": "string"}


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("../outside.json", "output schema path '../outside.json' leads outside .*, the folder of the persona"),
        ("/etc/passwd", "must be relative to the persona's folder"),
        ("missing.json", "output schema file 'missing.json' not found next to the persona"),
        (".env", "output schema path '.env' names a hidden file"),  # where secrets live
    ],
)
def test_a_schema_file_is_confined_to_the_personas_folder(write, tmp_path, ref, expected):
    (tmp_path.parent / "outside.json").write_text(json.dumps(ANSWER))
    path = write("ada.yaml", _persona(f"{{file: '{ref}'}}"))
    with pytest.raises(ConfigError, match=expected) as caught:
        load_profile(path)
    assert f"{path}:4" in str(caught.value)


def test_a_symlink_out_of_the_folder_is_refused(write, tmp_path):
    outside = tmp_path.parent / "secret.json"
    outside.write_text(json.dumps(ANSWER))
    (tmp_path / "link.json").symlink_to(outside)
    path = write("ada.yaml", _persona("{file: link.json}"))
    expected = "output schema path 'link.json' leads outside .*, the folder of the persona being loaded"
    with pytest.raises(ConfigError, match=expected):
        load_profile(path)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "objekt"}, "/type: 'objekt' is not valid"),
        ({"type": "object", "required": "answer"}, "/required: 'answer' is not of type 'array'"),
        ({"$schema": "https://example.org/my-draft", "type": "object"}, "unknown meta-schema"),
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}, "points at nothing in the schema"),
        ({"type": "object", "properties": {"a": {"$ref": "#nowhere"}}}, "'#nowhere' points at nothing"),
        ({"properties": {"a": {"$ref": "http://127.0.0.1:9/x.json"}}}, "'http://127.0.0.1:9/x.json' points outside"),
        ({"properties": {"a": {"$ref": "common.json#/$defs/id"}}}, "copy the referenced schema in under $defs"),
        ({"type": "string", "pattern": "(unclosed"}, "is not a 'regex'"),
        ({"minimum": 0, "exclusiveMinimum": True}, "True is not of type 'number'"),
        ("a string", "a JSON Schema is a mapping"),
    ],
)
def test_a_schema_is_checked_against_its_meta_schema(schema, expected):
    with pytest.raises(ConfigError) as caught:
        ProfileConfig(name="Ada", role="R", output_schema=schema)
    assert expected in str(caught.value) and "output_schema" in str(caught.value)


def test_the_draft_comes_from_dollar_schema():
    """Draft-04's boolean exclusiveMinimum is valid when the schema says it is draft-04."""
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "number", "minimum": 0,
              "exclusiveMinimum": True}
    profile = ProfileConfig(name="Ada", role="R", output_schema=schema).create_profile()
    assert profile.parse_reply("1") == 1
    with pytest.raises(SchemaReplyError, match="less than or equal to the minimum"):
        profile.parse_reply("0")


@pytest.mark.parametrize("draft", [5, None, ["https://json-schema.org/draft/2020-12/schema"]])
def test_a_dollar_schema_that_is_not_text_is_a_config_error(draft):
    """jsonschema parses $schema as a URL: a number failed with an AttributeError from urllib."""
    with pytest.raises(ConfigError, match=r"\$schema: unknown meta-schema"):
        ProfileConfig(name="Ada", role="R", output_schema={"$schema": draft, "type": "object"})


def test_every_problem_is_listed():
    with pytest.raises(ConfigError) as caught:
        ProfileConfig(name="Ada", role="R", output_schema={"type": "objekt", "required": "x"})
    assert "/type" in str(caught.value) and "/required" in str(caught.value)


def test_yaml_values_that_are_not_json_are_refused():
    with pytest.raises(ConfigError, match="plain JSON data"):
        parse_profiles(_persona("{type: string, default: 2024-01-01}"))


def test_strict_is_asked_for_only_when_the_schema_fits():
    lenient = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert ProfileConfig(name="A", role="R", output_schema=lenient).output_schema.strict is False
    with pytest.raises(ConfigError) as caught:
        ProfileConfig(name="A", role="R", output_schema={"schema": lenient, "strict": True})
    assert "strict: true, but OpenAI's strict mode would refuse" in str(caught.value)
    assert "additionalProperties: false" in str(caught.value)
    off = ProfileConfig(name="A", role="R", output_schema={"schema": ANSWER, "strict": False}).output_schema
    assert off.strict is False


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "array"}, "object schema"),
        ({**ANSWER, "additionalProperties": True}, "additionalProperties: false"),
        ({**ANSWER, "required": ["answer"]}, "every property must be required"),
        ({**ANSWER, "properties": {**ANSWER["properties"], "x": {"type": "string", "minLength": 1}}}, "minLength"),
        ({**ANSWER, "allOf": [{}]}, "'allOf'"),
        ({**ANSWER, "properties": {"d": {"type": "string", "format": "uri"}}, "required": ["d"]}, "format 'uri'"),
    ],
)
def test_the_strict_lint_names_what_strict_mode_refuses(schema, problem):
    assert any(problem in line for line in openai_strict_problems(schema))
    assert openai_strict_problems(ANSWER) == []


def test_the_format_name_comes_from_the_title_or_the_persona():
    titled = ProfileConfig(name="A", role="R", output_schema={**ANSWER, "title": "Triage result"})
    assert titled.output_schema.name == "Triage_result"
    assert ProfileConfig(name="A", role="R", output_schema=ANSWER).output_schema.name == "response"
    with pytest.raises(ConfigError, match="name must be 1 to 64 letters"):
        ProfileConfig(name="A", role="R", output_schema={"schema": ANSWER, "name": "has space"})


# from the prompt store ---------------------------------------------------------------------------


@pytest.fixture
def store(store_url):
    from profiles.store import PromptStore

    previous = get_provider("store")
    with PromptStore(store_url) as opened:
        register_provider("store", StoreProvider(store_url, ttl=0))
        yield opened
    register_provider("store", previous)


def test_a_schema_from_the_store_is_fetched_per_profile(store, write):
    store.put("ada/schema", json.dumps(ANSWER), label="production")
    path = write("ada.yaml", _persona("{store: ada/schema, name: answer}"))
    config = load_profile(path)
    profile = config.create_profile(deployment="prod")
    assert profile.output_schema.schema == ANSWER and profile.output_schema.name == "answer"
    assert profile.output_schema.origin == "store:ada/schema v1 label=production"
    rows = {row.field: row for row in profile.explain()}
    assert rows["output_schema"].source == "store:ada/schema v1 label=production"
    store.put("ada/schema", "type: object\nproperties: {other: {type: string}}\n", label="production")
    assert "other" in config.create_profile(deployment="prod").output_schema.schema["properties"]


def test_a_bad_schema_in_the_store_names_its_version(store, write):
    store.put("ada/schema", '{"type": "objekt"}', label="production")
    path = write("ada.yaml", _persona("{store: ada/schema}"))
    with pytest.raises(ResolutionError) as caught:
        load_profile(path).create_profile(deployment="prod")
    assert f"{path}:4: output_schema: store:ada/schema v1" in str(caught.value) and "/type" in str(caught.value)


def test_a_schema_missing_from_the_store_says_how_to_add_it(store, write):
    path = write("ada.yaml", _persona("{store: ada/schema}"))
    with pytest.raises(ResolutionError, match="profiles store put ada/schema"):
        load_profile(path).create_profile()


# reading replies ----------------------------------------------------------------------------------


@pytest.fixture
def profile():
    return ProfileConfig(name="Ada", role="R", output_schema=ANSWER).create_profile()


@pytest.mark.parametrize(
    "reply",
    [
        '{"answer": "yes", "score": 4}',
        '```json\n{"answer": "yes", "score": 4}\n```',
        'Sure! {"answer": "yes", "score": 4,} Hope that helps.',
        "{'answer': 'yes', 'score': 4}",
    ],
)
def test_replies_are_repaired_then_checked(profile, reply):
    assert profile.parse_reply(reply) == {"answer": "yes", "score": 4}


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"answer": "yes", "score": 4}\n```\nNote [one]: it is {"final"}.',
        '{"answer": "yes", "score": 4}\nThat follows {the schema} [as asked].',
    ],
)
def test_prose_with_brackets_around_one_value_leaves_the_value(profile, reply):
    """json-repair reads the bracketed prose after the value as a second value, making a list of both."""
    assert profile.parse_reply(reply) == {"answer": "yes", "score": 4}


def test_an_array_inside_broken_json_is_not_taken_for_the_reply():
    profile = ProfileConfig(name="Ada", role="R").create_profile()
    assert profile.parse_reply('Here: {"labels": ["a"], "n": 1,}') == {"labels": ["a"], "n": 1}


@pytest.mark.parametrize(
    "reply",
    [
        '{"answer": "no", "score": 1} {"answer": "yes", "score": 4}',
        'First: {"answer": "no", "score": 1}\nBetter: {"answer": "yes", "score": 4}',
        '```json\n{"answer": "no", "score": 1}\n```\n```json\n{"answer": "yes", "score": 4}\n```',
        "[1] [2]",
    ],
)
def test_a_reply_of_two_json_values_goes_back_to_the_model(reply):
    """json-repair answers the list of both (which an array schema would take) or the last one."""
    for schema in (ANSWER, {"type": "array"}, None):
        profile = ProfileConfig(name="Ada", role="R", output_schema=schema).create_profile()
        with pytest.raises(SchemaReplyError) as caught:
            profile.parse_reply(reply)
        assert str(caught.value) == (
            "Your reply holds more than one JSON value. Reply again with only one JSON value, the answer."
        )


def test_a_reply_the_schema_refuses_says_why_for_the_model(profile):
    with pytest.raises(SchemaReplyError) as caught:
        profile.parse_reply('{"answer": 3, "score": 9}')
    error = caught.value
    assert error.value == {"answer": 3, "score": 9}
    assert error.problems == ["/answer: 3 is not of type 'string'", "/score: 9 is greater than the maximum of 5"]
    assert str(error).startswith("Your reply does not follow the JSON Schema you were given:")
    assert str(error).endswith("Reply again with only the corrected JSON value.")


def test_a_reply_without_json_is_refused(profile):
    with pytest.raises(SchemaReplyError, match="Your reply holds no JSON") as caught:
        profile.parse_reply("I think the answer is yes.")
    assert caught.value.value is None


def test_a_reply_nested_past_the_parser_is_refused_for_the_model(profile):
    """`[[[[…` thousands deep exhausts json.loads' recursion: a reply error to send back, not a crash."""
    with pytest.raises(SchemaReplyError, match="nested too deeply to read") as caught:
        profile.parse_reply('{"answer": ' + "[" * 5000 + "]" * 5000 + "}")
    assert str(caught.value).startswith("Your reply's JSON is nested too deeply to read. Reply again")


def test_without_a_schema_any_json_is_returned():
    profile = ProfileConfig(name="Ada", role="R").create_profile()
    assert profile.parse_reply("[1, 2,]") == [1, 2]
    with pytest.raises(SchemaReplyError):
        profile.parse_reply("no json here")


@given(st.text(max_size=200))
def test_any_text_gives_a_value_or_a_reply_error(text):
    profile = ProfileConfig(name="Ada", role="R", output_schema=ANSWER).create_profile()
    try:
        value = profile.parse_reply(text)
    except SchemaReplyError as exc:
        assert str(exc)
    else:
        assert isinstance(value["answer"], str) and 1 <= value["score"] <= 5


def test_without_jsonschema_the_error_says_what_to_install(tmp_path):
    """The schema support is an extra: without it, a persona with output_schema names the extra."""
    code = (
        "import sys; sys.modules['jsonschema'] = None\n"
        "from profiles import ProfileConfig, ConfigError\n"
        "assert ProfileConfig(name='A', role='R').create_profile().format_system_prompt()\n"
        "try:\n"
        "    ProfileConfig(name='A', role='R', output_schema={'type': 'object'})\n"
        "except ConfigError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            cwd=Path(__file__).resolve().parent.parent)
    assert result.returncode == 0, result.stderr
    assert "pip install 'agent-profiles[schema]'" in result.stdout


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"file": "a.json", "store": "a"}, "give one of file, store or schema, not file and store"),
        ({"store": "a", "type": "object"}, "takes only name, strict and description beside it, not type"),
        ({"store": " "}, "must name a prompt"),
    ],
)
def test_the_reference_form_is_checked(spec, expected):
    with pytest.raises(ConfigError, match=expected):
        ProfileConfig(name="Ada", role="R", output_schema=spec)


def test_explain_names_where_the_schema_was_written():
    persona = (
        "name: A\nrole: R\noutput_schema: {type: object}\ndeployments:\n  prod:\n    output_schema: {type: array}\n"
    )
    (config,) = parse_profiles(persona, file="a.yaml")
    rows = {row.field: row.source for row in config.create_profile().explain()}
    assert rows["output_schema"] == "yaml:a.yaml:3"
    rows = {row.field: row.source for row in config.create_profile(deployment="prod").explain()}
    assert rows["output_schema"] == "overlay prod: a.yaml:6"
    assert ProfileConfig(name="A", role="R", output_schema=ANSWER).create_profile().output_schema.origin == "literal"


def test_references_inside_the_schema_by_anchor_or_id_are_followed():
    """A remote `$ref` was taken at load and failed inside jsonschema at the first reply (no ProfilesError)."""
    anchored = {"$defs": {"p": {"$anchor": "point", "type": "string"}}, "properties": {"a": {"$ref": "#point"}}}
    named = {"$id": "urn:example:reply", "type": "object", "properties": {"a": {"$ref": "urn:example:reply"}}}
    for schema in (anchored, named):
        profile = ProfileConfig(name="Ada", role="R", output_schema=schema).create_profile()
        with pytest.raises(SchemaReplyError):
            profile.parse_reply('{"a": 1}')
    assert ProfileConfig(name="Ada", role="R", output_schema=anchored).create_profile().parse_reply('{"a": "x"}')


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "^(a|a)+$"},
        {"type": "object", "patternProperties": {"^(a|a)+$": {"type": "string"}}},
        {"type": "object", "patternProperties": {"^(a|a)+$": {}}, "additionalProperties": False},
    ],
)
def test_a_pattern_that_backtracks_is_stopped_at_its_bound(schema, monkeypatch):
    """A persona's `^(a|a)+$` took Python's `re` minutes on a reply of forty characters: a hang."""
    from profiles import output_schema

    monkeypatch.setattr(output_schema, "PATTERN_SECONDS", 0.05)  # the reply below takes `re` about a second
    profile = ProfileConfig(name="Ada", role="R", output_schema=schema).create_profile()
    text = "a" * 24 + "!"
    reply = json.dumps(text if schema["type"] == "string" else {text: 1})
    with pytest.raises(SchemaReplyError, match=r"the schema's pattern '\^\(a\|a\)\+\$' took over 0.05 s") as caught:
        profile.parse_reply(reply)
    assert "does not backtrack" in str(caught.value)
    assert profile.parse_reply(json.dumps("a" * 3 if schema["type"] == "string" else {"aaa": "x"}))


@pytest.mark.parametrize(
    ("reply", "written", "where"),
    [
        ('{"answer": "yes", "score": NaN}', "NaN", "/score"),
        ('Here: {"answer": "yes", "score": Infinity}', "Infinity", "/score"),
        ('{"answer": "yes", "score": 4, "more": [1, -Infinity]}', "-Infinity", "/more/1"),
        ('{"answer": "yes", "score": 1e999}', "Infinity", "/score"),
    ],
)
def test_nan_and_infinity_are_no_json_numbers(profile, reply, written, where):
    """json.loads reads NaN, which passes every minimum and maximum: the reply goes back to the model."""
    with pytest.raises(SchemaReplyError) as caught:
        profile.parse_reply(reply)
    assert str(caught.value).startswith(f"Your reply holds {written} at {where}, which is not a JSON number.")
    assert caught.value.problems == [f"{where}: {written} is not a JSON number"]
    plain = ProfileConfig(name="Ada", role="R").create_profile()
    with pytest.raises(SchemaReplyError, match=f"holds {written} at {where}"):
        plain.parse_reply(reply)


@pytest.mark.parametrize(
    "reply", ['{"answer": "yes \\ud800", "score": 4}', '{"answer": "yes", "score": 4, "\\udc00": 1}']
)
def test_a_lone_surrogate_in_a_reply_goes_back_to_the_model(profile, reply):
    """A bare \\ud800 escape is valid JSON but no text: returned, it failed wherever the value was sent on."""
    with pytest.raises(SchemaReplyError) as caught:
        ProfileConfig(name="Ada", role="R").create_profile().parse_reply(reply)
    assert "half of a UTF-16 surrogate pair without its other half" in str(caught.value)
    assert str(caught.value).endswith("Reply again with only the JSON value.")
    str(caught.value).encode("utf-8")  # the correction itself can be sent
    with pytest.raises(SchemaReplyError, match="that follows the JSON Schema you were given"):
        profile.parse_reply(reply)
