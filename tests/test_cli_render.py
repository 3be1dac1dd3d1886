"""`profiles render` and `explain`: inputs as --var, personas picked from a file of several, empty prompts."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiles.cli import cli

ECHO = """\
name: Ada
role: Helper
tools:
  - {name: search, description: Search the web, parameters: {type: object}}
templates:
  system:
    inline: >-
      q={{ question }} m={{ most_recent_memories }} r={{ resource_prompt }} o={{ out_schema }}
      t={{ now_time }} retry={{ is_retry_chat }}
  user: {inline: "q={{ question }} m={{ most_recent_memories }}"}
  write_memory: {inline: "q={{ question }} t={{ thought }} a={{ action }} o={{ observation }}"}
"""

TEAM = "name: Ada\nrole: Helper\n---\nname: Grace\nrole: Night shift\n"


@pytest.fixture
def echo(write):
    return write("echo.yaml", ECHO)


@pytest.mark.parametrize(
    ("kind", "var", "shown"),
    [
        ("system", "question=Why?", "q=Why?"),
        ("system", "most_recent_memories=Paid", "m=Paid"),
        ("system", "resource_prompt=Doc one", "r=Doc one"),
        ("system", "out_schema={}", "o={}"),
        ("system", "now_time=noon", "t=noon"),
        ("system", "is_retry_chat=true", "retry=True"),
        ("system", 'resources=[{"content": "Paris is sunny.", "title": "Weather"}]', "Paris is sunny."),
        ("user", "question=Why?", "q=Why?"),
        ("user", "most_recent_memories=Paid", "m=Paid"),
        ("write_memory", "thought=Look it up", "t=Look it up"),
        ("write_memory", "action=search", "a=search"),
        ("write_memory", "observation=Found", "o=Found"),
        ("react", "question=Is it sunny?", "Is it sunny?"),
        ("react", 'tools=[{"name": "weather", "description": "Today\'s weather"}]', "weather"),
    ],
)
def test_every_documented_input_can_be_a_var(echo, runner, kind, var, shown):
    result = runner.invoke(cli, ["render", str(echo), "--kind", kind, "--var", var])
    assert result.exit_code == 0, result.output
    assert shown in result.output


def test_var_question_is_the_question(echo, runner):
    by_var = runner.invoke(cli, ["render", str(echo), "--var", "question=Why?", "--json"])
    by_flag = runner.invoke(cli, ["render", str(echo), "--question", "Why?", "--json"])
    assert by_var.exit_code == 0 and json.loads(by_var.stdout) == json.loads(by_flag.stdout)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-q", "a", "--var", "question=b"], "give the question once"),
        (["--var", "strict=1"], "'strict' names an option of rendering"),
        (["--var", "kind=x"], "'kind' names an option of rendering"),
        (["--var", "is_retry_chat=maybe"], "is_retry_chat must be true or false"),
        (["--var", "resources=[{"], "resources must be JSON"),
        (["--var", "tools=[1]", "--kind", "react"], "tools given to the render"),
    ],
)
def test_inputs_that_cannot_be_used_are_usage_errors(echo, runner, args, message):
    result = runner.invoke(cli, ["render", str(echo), *args])
    assert result.exit_code == 2 and message in result.output and "internal error" not in result.output


_NAMES = st.sampled_from(
    ["question", "most_recent_memories", "resource_prompt", "out_schema", "now_time", "is_retry_chat", "resources",
     "tools", "tool_names", "thought", "action", "observation", "agents", "strict", "kind", "a b", "__class__"]
)
_VALUES = st.sampled_from(["", "x", "true", "[]", '[{"content": "c"}]', "{", "null", "[1]", "{{ x }}"])
_OPTIONS = st.lists(
    st.one_of(
        st.tuples(st.just("--kind"), st.sampled_from(["all", "system", "user", "write_memory", "react", "nope", ""])),
        st.tuples(st.just("--language"), st.sampled_from(["en", "zh-TW", "", "../x"])),
        st.tuples(st.just("--model"), st.sampled_from(["gpt-4o", "granite-3.3-8b", ""])),
        st.tuples(st.just("--deployment"), st.sampled_from(["prod", "", "../x"])),
        st.tuples(st.just("--question"), st.sampled_from(["", "Q", "{{ x }}"])),
        st.tuples(st.just("--index"), st.sampled_from(["1", "2", "5", "0"])),
        st.tuples(st.just("--name"), st.sampled_from(["Ada", "Nobody"])),
        st.tuples(st.just("--var"), st.builds("{}={}".format, _NAMES, _VALUES)),
        st.tuples(st.sampled_from(["--strict", "--json"])),
    ),
    max_size=6,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(options=_OPTIONS, file=st.sampled_from(["echo", "team", "planner"]))
def test_no_combination_of_flags_is_an_internal_error(runner, echo, write, configs, options, file):
    """Any mix of render's options and --var names and values: a result or a clean error, never a fault."""
    paths = {"echo": echo, "team": write("team.yaml", TEAM), "planner": configs / "planner.yaml"}
    args = ["render", str(paths[file]), *(part for option in options for part in option)]
    result = runner.invoke(cli, args)
    assert result.exit_code in (0, 2), (args, result.output)
    assert "internal error" not in result.output and "Traceback" not in result.output


def test_a_file_of_several_personas_needs_a_pick(write, runner):
    team = write("team.yaml", TEAM)
    result = runner.invoke(cli, ["render", str(team)])
    assert result.exit_code == 2
    assert "holds 2 personas (1: Ada, 2: Grace); pick one by name or number (--name NAME or --index N" in (
        result.output
    )
    assert "use load_profiles()" not in result.output
    by_name = runner.invoke(cli, ["render", str(team), "--name", "Grace", "--kind", "system"])
    by_index = runner.invoke(cli, ["render", str(team), "--index", "2", "--kind", "system"])
    assert by_name.exit_code == by_index.exit_code == 0
    assert by_name.output == by_index.output and by_name.output.startswith("You are Grace.")
    explained = runner.invoke(cli, ["explain", str(team), "--index", "2", "--json"])
    assert explained.exit_code == 0 and json.loads(explained.output)[0]["value"] == "Grace"
    missing = runner.invoke(cli, ["render", str(team), "--name", "Linus"])
    assert missing.exit_code == 2 and "holds no persona named 'Linus'; its personas are 1: Ada, 2: Grace" in (
        missing.output
    )


def test_validate_prints_one_line_per_persona(write, runner):
    team = write("team.yaml", TEAM)
    result = runner.invoke(cli, ["validate", str(team)])
    assert result.exit_code == 0
    assert result.output == f"ok {team}#1 (Ada)\nok {team}#2 (Grace)\n"


def test_render_says_which_empty_prompts_it_skipped(configs, runner):
    result = runner.invoke(cli, ["render", str(configs / "summarizer.yaml")])
    assert result.exit_code == 0
    assert result.stdout.startswith("You are Aristotle.") and "=====" not in result.stdout
    assert result.stderr == (
        "skipped the empty prompts user (give question, most_recent_memories) and write_memory (give question, "
        "thought, action, observation): pass the question with --question, the rest with --var NAME=…\n"
    )
    asked = runner.invoke(cli, ["render", str(configs / "summarizer.yaml"), "-q", "Why?"])
    assert "===== user prompt =====" in asked.stdout and "write_memory (give question" not in asked.stderr
    assert "skipped the empty prompt write_memory" not in asked.stderr  # the question fills it


def test_a_kind_asked_for_is_rendered_even_when_empty(configs, runner):
    result = runner.invoke(cli, ["render", str(configs / "summarizer.yaml"), "--kind", "user"])
    assert result.exit_code == 0 and result.stdout == "\n" and result.stderr == ""
