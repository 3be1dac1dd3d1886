"""Typed inputs: declarations, templates checked against them at load, values checked at render."""

from __future__ import annotations

import json
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from profiles import (
    ConfigError,
    InputError,
    InputSpec,
    ProfileConfig,
    RenderError,
    ResolutionError,
    UnusedInputWarning,
    check_paths,
    inputs_schema,
    load_profile,
)
from profiles.cli import cli
from profiles.inputs import InputSpecError, parse_inputs
from profiles.loader import parse_profiles

PERSONA = """\
name: Ada
role: Planner
inputs:
  task: {type: string, description: What to plan.}
  max_steps: {type: integer, default: 5}
  style: {type: string, enum: [brief, detailed], required: false}
templates:
  user:
    inline: |-
      Plan {{ task }} in at most {{ max_steps }} steps.
      {% if style %}Style: {{ style }}{% endif %}
"""


@pytest.fixture
def planner():
    (config,) = parse_profiles(PERSONA, file="ada.yaml")
    return config.create_profile()


# declarations -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declaration", "expected"),
    [
        ({"type": "text"}, "type 'text' is not one of string, integer"),
        ({"type": "integer", "default": "five"}, "default 'five' does not fit: expected an integer, got text"),
        ({"type": "string", "enum": ["a", 1]}, "enum value 1 is not text"),
        ({"enum": []}, "enum must be a non-empty list"),
        ({"type": "string", "examples": [3]}, "example 3 does not fit"),
        ({"required": "yes"}, "required must be true or false"),
        ({"typ": "string"}, "unknown key(s) typ"),
        (3, "expected a type name"),
    ],
)
def test_bad_declarations_are_refused_at_their_line(declaration, expected):
    text = f"name: Ada\nrole: R\ninputs:\n  task: string\n  bad: {json.dumps(declaration)}\n"
    with pytest.raises(ConfigError) as caught:
        parse_profiles(text, file="ada.yaml")
    (issue,) = caught.value.issues
    assert expected in issue.message and issue.field == "inputs.bad" and issue.line == 5


@pytest.mark.parametrize("name", ["name", "goal", "tools", "resources"])
def test_an_input_cannot_take_a_name_the_persona_fills(name):
    with pytest.raises(ConfigError, match=f"'{name}' is "):
        ProfileConfig(name="Ada", role="R", inputs={name: "string"})


def test_variables_must_fit_their_declarations():
    with pytest.raises(ConfigError) as caught:
        parse_profiles("name: A\nrole: R\ninputs: {n: integer}\nvariables:\n  n: many\n", file="a.yaml")
    (issue,) = caught.value.issues
    assert issue.field == "variables.n" and issue.line == 5 and "expected an integer, got text" in issue.message


def test_shorthand_and_schema():
    inputs = parse_inputs({"ticket": "string", "tier": {"enum": ["free", "pro"], "default": "free"},
                           "n": {"type": "integer", "required": False, "description": "How many."}})
    assert inputs["ticket"] == InputSpec("ticket", ("string",))
    assert inputs_schema(inputs) == {
        "type": "object",
        "properties": {
            "ticket": {"type": "string"},
            "tier": {"enum": ["free", "pro"], "default": "free"},
            "n": {"type": "integer", "description": "How many."},
        },
        "required": ["ticket"],
        "additionalProperties": False,
    }


@given(st.integers())
def test_integer_text_reads_back(number):
    assert InputSpec("n", ("integer",)).from_text(str(number)) == number


@given(st.lists(st.integers() | st.text(max_size=5), max_size=5))
def test_array_text_is_json(items):
    assert InputSpec("xs", ("array",)).from_text(json.dumps(items)) == items


@pytest.mark.parametrize(
    ("types", "text", "value"),
    [
        (("boolean",), "yes", True),
        (("boolean",), "0", False),
        (("number",), "2.5", 2.5),
        (("number",), "3", 3),
        (("object",), '{"a": 1}', {"a": 1}),
        (("integer", "string"), "x", "x"),
        ((), "anything", "anything"),
    ],
)
def test_text_is_read_by_the_declared_type(types, text, value):
    assert InputSpec("v", types).from_text(text) == value


@pytest.mark.parametrize(("types", "text"), [(("integer",), "8.5"), (("boolean",), "maybe"), (("array",), "{}")])
def test_text_of_another_type_is_refused(types, text):
    with pytest.raises(InputSpecError, match="is not"):
        InputSpec("v", types).from_text(text)


# templates against declarations, at load ----------------------------------------------------------


def test_an_inline_template_reading_an_undeclared_variable_fails_to_load():
    text = PERSONA.replace("Plan {{ task }}", "Plan {{ taks }}")
    with pytest.raises(ConfigError) as caught:
        parse_profiles(text, file="ada.yaml")
    (issue,) = caught.value.issues
    assert issue.file == "ada.yaml" and issue.line == 8 and issue.field == "templates.user"
    assert "template 'user (inline)' line 1 reads 'taks'" in issue.message and "inputs: {taks: string}" in issue.message


def test_a_template_file_names_its_own_file_and_line(write, tmp_path):
    write("prompts/user.j2", "Hello.\n\nPlan {{ task }} for {{ custmer }}.\n")
    persona = "name: Ada\nrole: R\ninputs: {task: string}\ntemplates:\n  user: {file: prompts/user.j2}\n"
    path = write("ada.yaml", persona)
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    (issue,) = caught.value.issues
    assert (issue.file, issue.line) == (str(tmp_path / "prompts" / "user.j2"), 3)
    assert "reads 'custmer'" in str(caught.value)
    assert f"{tmp_path / 'prompts' / 'user.j2'}:3:" in str(caught.value)


def test_a_template_from_a_root_names_its_file(write, tmp_path):
    write("prompts/default/en/planner.j2", "Split {{ task }} into {{ stepz }} steps.\n")
    path = write("ada.yaml", "name: Ada\nrole: R\ntemplate_roots: [prompts]\ninputs: {task: string}\n"
                             "messages: [{kind: system}, {kind: planner}]\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    (issue,) = caught.value.issues
    assert issue.file == str(tmp_path / "prompts" / "default" / "en" / "planner.j2") and issue.line == 1


def test_a_field_template_names_the_field():
    text = "name: Ada\nrole: R\ninputs: {task: string}\nexpand_prompt: 'Use {{ agents }} for {{ task }}.'\n"
    with pytest.raises(ConfigError) as caught:
        parse_profiles(text, file="ada.yaml")
    (issue,) = caught.value.issues
    assert issue.field == "expand_prompt" and issue.line == 4 and "reads 'agents'" in issue.message


def test_an_overlay_template_is_checked_too():
    text = PERSONA + "deployments:\n  prod:\n    templates: {user: {inline: '{{ taks }}'}}\n"
    with pytest.raises(ConfigError, match="deployment 'prod': template 'user \\(inline\\)' line 1 reads 'taks'"):
        parse_profiles(text, file="ada.yaml")


def test_without_inputs_nothing_changes():
    (config,) = parse_profiles("name: A\nrole: R\ntemplates: {user: {inline: '{{ anything }}'}}\n")
    assert config.create_profile().format_user_prompt(anything="goes") == "goes"


def test_an_input_no_template_reads_warns_at_its_line():
    text = PERSONA.replace("  style:", "  unused_one: string\n  style:")
    with pytest.warns(UnusedInputWarning, match=r"ada.yaml:6: input 'unused_one' is declared"):
        parse_profiles(text, file="ada.yaml")


def test_the_bundled_personas_load_without_warnings(configs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedInputWarning)
        load_profile(configs / "triage.yaml")


# values at render ---------------------------------------------------------------------------------


def test_defaults_and_optional_inputs(planner):
    assert planner.format_user_prompt(task="a trip") == "Plan a trip in at most 5 steps."
    assert planner.format_user_prompt(task="a trip", max_steps=3, style="brief").endswith("Style: brief")


def test_a_wrong_type_names_the_input_and_the_type(planner):
    with pytest.raises(InputError) as caught:
        planner.format_user_prompt(task="a trip", max_steps="three")
    assert caught.value.input == "max_steps"
    assert "input 'max_steps'" in str(caught.value) and "expected an integer, got text" in str(caught.value)
    assert isinstance(caught.value, RenderError)
    with pytest.raises(InputError, match="expected one of 'brief', 'detailed', got 'long'"):
        planner.format_user_prompt(task="x", style="long")


def test_a_required_input_not_given_says_so(planner):
    with pytest.raises(InputError) as caught:
        planner.format_user_prompt()
    assert "input 'task' (What to plan.) is required by template 'user (inline)' line 1" in str(caught.value)
    assert "expecting text" in str(caught.value)


def test_messages_and_requests_check_inputs_too(planner):
    with pytest.raises(InputError):
        planner.format_messages(task="x", max_steps=2.5)
    with pytest.raises(InputError):
        planner.to_request(model="gpt-4o", task=["x"])
    assert planner.format_messages(task="x")[-1]["content"] == "Plan x in at most 5 steps."


def test_partial_checks_what_it_binds(planner):
    assert planner.partial(max_steps=2).format_user_prompt(task="x") == "Plan x in at most 2 steps."
    with pytest.raises(InputError):
        planner.partial(max_steps="2")


def test_a_store_template_reading_an_undeclared_variable_fails_when_it_renders(planner):
    other = planner.with_templates(user="{{ task }} and {{ extra_thing }}")
    with pytest.raises(RenderError, match="reads 'extra_thing', which profile 'Ada' does not declare"):
        other.format_user_prompt(task="x", extra_thing="y")


# the command line and check -----------------------------------------------------------------------


def test_var_values_are_read_by_type(runner, write):
    path = write("ada.yaml", PERSONA)
    result = runner.invoke(cli, ["render", str(path), "--kind", "user", "--var", "task=a trip", "--var", "max_steps=8"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "Plan a trip in at most 8 steps."
    result = runner.invoke(cli, ["render", str(path), "--kind", "user", "--var", "task=x", "--var", "max_steps=8.5"])
    assert result.exit_code == 2 and "max_steps: '8.5' is not an integer" in result.output


def test_check_validates_samples_against_declarations(write):
    path = write("ada.yaml", PERSONA + "samples:\n  task: a trip\n  max_steps: many\n")
    report = check_paths([path])
    (issue,) = report.issues
    assert "sample 'max_steps' does not fit inputs.max_steps: expected an integer, got text" in issue.message
    assert (issue.field, issue.line) == ("samples.max_steps", 14)


def test_check_asks_for_a_sample_of_a_required_input(write):
    path = write("ada.yaml", PERSONA)
    (issue,) = check_paths([path]).issues
    assert "reads input 'task' (text), which is required and has no sample" in issue.message
    assert (issue.field, issue.line) == ("inputs.task", 4)
    with_example = PERSONA.replace("description: What to plan.", "description: What to plan., examples: [a trip]")
    assert check_paths([write("ok.yaml", with_example)]).ok


def test_a_documented_input_declared_required_must_be_given():
    """Declaring `question` makes the prompts that read it refuse to render without one."""
    config = ProfileConfig(name="Ada", role="R", inputs={"question": {"type": "string", "description": "The ask."}})
    profile = config.create_profile()
    assert profile.format_user_prompt("Why?") == "Question: Why?"
    expected = "input 'question' \\(The ask.\\) is required by template 'default/en/user.j2'"
    with pytest.raises(InputError, match=expected):
        profile.format_user_prompt()
    with pytest.raises(InputError, match="expected text, got an integer"):
        profile.format_user_prompt(3)


# inputs across template files ---------------------------------------------------------------------

ROOTED = "name: Ada\nrole: R\ntemplate_roots: [prompts]\ninputs:\n  task: string\n"


def test_an_included_file_reading_an_undeclared_variable_fails_at_its_own_line(write, tmp_path):
    """The variable is read in the file the user template includes: the issue points there."""
    write("prompts/default/en/user.j2", "Plan {{ task }}.\n{% include 'parts/ask.j2' %}\n")
    write("prompts/parts/ask.j2", "Be brief.\nAsk {{ custmer }} first.\n")
    path = write("ada.yaml", ROOTED)
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    (issue,) = caught.value.issues
    assert (issue.file, issue.line) == (str(tmp_path / "prompts" / "parts" / "ask.j2"), 2)
    assert "template 'parts/ask.j2' line 2 (from template 'default/en/user.j2') reads 'custmer'" in issue.message
    assert f"{tmp_path / 'prompts' / 'parts' / 'ask.j2'}:2:" in str(caught.value)


def test_an_inline_template_including_a_file_is_checked_through_it(write, tmp_path):
    write("prompts/parts/ask.j2", "{{ task }} for {{ custmer }}\n")
    path = write("ada.yaml", ROOTED + "templates:\n  user: {inline: \"{% include 'parts/ask.j2' %}\"}\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    (issue,) = caught.value.issues
    assert (issue.file, issue.line) == (str(tmp_path / "prompts" / "parts" / "ask.j2"), 1)
    assert issue.field == "templates.user"
    assert "(from template 'user (inline)') reads 'custmer'" in issue.message


def test_an_input_read_only_in_a_parent_template_counts_as_read(write):
    write("prompts/base/system.j2", "You are {{ name }}.\n{% block rules %}{% endblock %}\nTier: {{ tier }}\n")
    write("prompts/default/en/system.j2", "{% extends 'base/system.j2' %}{% block rules %}Be kind.{% endblock %}")
    path = write("ada.yaml", ROOTED.replace("task: string", "tier: {type: string, default: free}"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedInputWarning)
        profile = load_profile(path).create_profile()
    assert profile.format_system_prompt().endswith("Tier: free")


def test_a_parent_templates_undeclared_variable_is_refused_at_its_line(write, tmp_path):
    write("prompts/base/system.j2", "You are {{ name }}.\n{% block rules %}{% endblock %}\n{{ tier }} {{ teir }}\n")
    write("prompts/default/en/system.j2", "{% extends 'base/system.j2' %}{% block rules %}Be kind.{% endblock %}")
    with pytest.raises(ConfigError) as caught:
        load_profile(write("ada.yaml", ROOTED.replace("task: string", "tier: string")))
    (issue,) = caught.value.issues
    assert (issue.file, issue.line) == (str(tmp_path / "prompts" / "base" / "system.j2"), 3)
    assert "template 'base/system.j2' line 3 (from template 'default/en/system.j2') reads 'teir'" in issue.message


def test_a_computed_include_gives_no_false_errors_or_warnings(write):
    """Which file `{% include kind ~ '.j2' %}` reads is known only at render time: nothing is guessed."""
    write("prompts/parts/short.j2", "Briefly: {{ task }}")
    write("prompts/default/en/user.j2", "{% include 'parts/' ~ style ~ '.j2' %}\n")
    path = write("ada.yaml", ROOTED + "  style: {type: string, default: short}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedInputWarning)  # `task` is read only by the computed include
        profile = load_profile(path).create_profile()
    assert profile.format_user_prompt(task="a trip") == "Briefly: a trip"


def test_a_template_given_later_is_checked_across_its_files(write, tmp_path):
    """A template that arrives after loading (the store, with_templates) is checked when it renders."""
    write("prompts/parts/ask.j2", "Ask {{ extra_thing }}.")
    with pytest.warns(UnusedInputWarning, match="input 'task'"):  # no template reads it until then
        profile = load_profile(write("ada.yaml", ROOTED)).create_profile()
    other = profile.with_templates(user="{{ task }} {% include 'parts/ask.j2' %}")
    with pytest.raises(RenderError) as caught:
        other.format_user_prompt(task="x", extra_thing="y")
    assert "template 'parts/ask.j2' line 1 (from template 'user (with_templates)') reads 'extra_thing'" in str(
        caught.value
    )


def test_an_optional_input_a_template_tests_stays_undefined():
    """`is defined` sees an optional input nobody gave as missing, as stock Jinja would."""
    config = ProfileConfig(
        name="Ada",
        role="R",
        inputs={"notes": {"type": "string", "required": False}, "style": {"type": "string", "required": False}},
        templates={"user": {"inline": "{% if notes is defined %}Notes: {{ notes }}{% else %}none{% endif %}"
                            "{% if style %} ({{ style }}){% endif %}"}},
    )
    profile = config.create_profile()
    assert profile.format_user_prompt() == "none"
    assert profile.format_user_prompt(notes="n", style="brief") == "Notes: n (brief)"


def test_a_required_input_is_required_even_where_a_template_tests_it():
    config = ProfileConfig(
        name="Ada", role="R", inputs={"task": "string"},
        templates={"user": {"inline": "{% if task is defined %}{{ task }}{% endif %}"}},
    )
    with pytest.raises(InputError, match="input 'task' is required by template 'user \\(inline\\)' line 1"):
        config.create_profile().format_user_prompt()


def test_a_dynamic_variable_is_read_by_its_inputs_type(monkeypatch):
    config = ProfileConfig(
        name="Ada",
        role="R",
        inputs={"max_steps": "integer"},
        variables={"max_steps": {"key": "PLAN_MAX_STEPS", "default": "3"}},
        templates={"user": {"inline": "{{ max_steps + 1 }}"}},
    )
    assert config.create_profile().format_user_prompt() == "4"
    monkeypatch.setenv("PLAN_MAX_STEPS", "9")
    assert config.create_profile().format_user_prompt() == "10"
    monkeypatch.setenv("PLAN_MAX_STEPS", "nine")
    with pytest.raises(ResolutionError, match="variable 'max_steps' from env:PLAN_MAX_STEPS: 'nine' is not an integer"):
        config.create_profile()
    with pytest.raises(ConfigError, match="does not fit inputs.max_steps: its default 'many' is not an integer"):
        ProfileConfig(
            name="Ada", role="R", inputs={"max_steps": "integer"},
            variables={"max_steps": {"key": "PLAN_MAX_STEPS", "default": "many"}},
        )


def test_a_number_json_has_not_is_named_as_such():
    """`default: .inf` for a number said "expected a number, got float", which reads as a contradiction."""
    with pytest.raises(ConfigError, match=r"default inf does not fit: expected a number, got inf, which is no JSON"):
        parse_profiles("name: A\nrole: R\ninputs: {n: {type: number, default: .inf}}\n")


def test_an_overlays_template_reading_an_undeclared_input_is_placed_in_the_overlay():
    """It pointed at the base persona's template (line 4), which reads only what it declares."""
    text = (
        "name: Ada\nrole: R\ninputs: {ticket: string}\ntemplates: {user: {inline: '{{ ticket }}'}}\n"
        "goal: 'About {{ ticket }}'\ndeployments:\n  prod:\n    templates: {user: {inline: '{{ tikcet }}'}}\n"
        "    goal: 'On {{ tikcet }}'\n"
    )
    with pytest.raises(ConfigError) as caught:
        parse_profiles(text)
    placed = sorted((issue.line, issue.field) for issue in caught.value.issues)
    assert placed == [(8, "deployments.prod.templates.user"), (9, "deployments.prod.goal")], caught.value.issues


def test_a_dynamic_variable_that_does_not_fit_its_input_is_named_at_its_line(monkeypatch):
    monkeypatch.setenv("PLAN_MAX_STEPS", "many")
    text = "name: A\nrole: R\ninputs: {max_steps: integer}\nvariables:\n"
    text += "  max_steps: {key: PLAN_MAX_STEPS, default: '3'}\n"
    text += "templates: {user: {inline: '{{ max_steps }}'}}\n"
    (config,) = parse_profiles(text, file="plan.yaml")
    with pytest.raises(ResolutionError, match=r"^plan\.yaml:5: variable 'max_steps' from env:PLAN_MAX_STEPS: 'many'"):
        config.create_profile()
