"""The ReAct prompt and its parser: what the template asks for is what `profiles.react.parse` reads."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profiles import ConfigError, ProfileConfig, ProfilesError, ReactParseError, RenderError, ReplyError
from profiles.loader import parse_profiles
from profiles.react import KEYWORDS, ReactAction, ReactAnswer, ReactKeywords, parse

SEARCH = {
    "name": "search",
    "description": "Search the web.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
}
CALC = {"name": "calculator", "description": "Evaluate arithmetic.", "parameters": {"type": "object"}}


def _profile(language: str | None = None, **fields):
    config = ProfileConfig(name="Ada", role="Researcher", goal="Answer questions.", **fields)
    return config.create_profile(language=language)


def _protocol(prompt: str) -> tuple[list[str], list[str]]:
    """The labels of the reply format as the rendered prompt shows it: `Label: <placeholder>` lines."""
    labels = re.findall(r"^([^:\n<]+): <", prompt, re.M)
    assert len(labels) == 5, prompt
    return labels[:3], labels[3:]


# -- strategies -----------------------------------------------------------------------------------

_plain = st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"))
_LABEL_START = re.compile(r"\s*\**\s*(thought|action|answer|observation)", re.I)


def _free_line(line: str) -> bool:
    return not _LABEL_START.match(line)


thoughts = st.lists(st.text(_plain, max_size=40).filter(_free_line), max_size=3).map("\n".join)
answers = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=200).filter(str.strip)
tool_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,20}", fullmatch=True)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
inputs = st.dictionaries(st.text(max_size=10), json_values, max_size=4)
languages = st.sampled_from(["en", "zh", "zh-TW", None])

_PROFILES = {language: _profile(language) for language in ("en", "zh", "zh-TW", None)}


@settings(max_examples=150, deadline=None)
@given(
    language=languages,
    names=st.lists(tool_names, min_size=1, max_size=4, unique=True),
    data=st.data(),
    thought=thoughts,
    arguments=inputs,
    indent=st.sampled_from([None, 2]),
)
def test_round_trip_action(language, names, data, thought, arguments, indent):
    """A tool call written the way the rendered react prompt describes parses back to the same call."""
    tools = [{"name": name, "description": f"Tool {name}."} for name in names]
    prompt = _PROFILES[language].format_prompt("react", tools=tools)
    (thought_label, action_label, input_label), _ = _protocol(prompt)
    tool = data.draw(st.sampled_from(names))
    reply = (
        f"{thought_label}: {thought}\n{action_label}: {tool}\n"
        f"{input_label}: {json.dumps(arguments, ensure_ascii=False, indent=indent)}"
    )
    step = parse(reply, tool_names=names)
    assert step == ReactAction(thought.strip(), tool, arguments)


@settings(max_examples=150, deadline=None)
@given(language=languages, thought=thoughts, answer=answers)
def test_round_trip_answer(language, thought, answer):
    """A final answer written the way the rendered react prompt describes parses back unchanged."""
    prompt = _PROFILES[language].format_prompt("react", tools=[SEARCH])
    _, (thought_label, answer_label) = _protocol(prompt)
    step = parse(f"{thought_label}: {thought}\n{answer_label}: {answer}")
    assert step == ReactAnswer(thought.strip(), answer.strip())


def test_template_labels_are_the_parser_keywords():
    """The rendered protocol uses exactly the parser's keyword constants, in protocol order."""
    call, final = _protocol(_profile().format_prompt("react", tools=[SEARCH]))
    assert call == [KEYWORDS.thought, KEYWORDS.action, KEYWORDS.action_input]
    assert final == [KEYWORDS.thought, KEYWORDS.answer]


def test_other_keywords_flow_into_template_and_parser():
    """Keywords passed as the `react` variable change the prompt; the parser reads replies to it."""
    custom = ReactKeywords(thought="Reasoning", action="Tool", action_input="Arguments", answer="Final")
    prompt = _profile().format_prompt("react", tools=[SEARCH], react=custom)
    call, final = _protocol(prompt)
    assert call == ["Reasoning", "Tool", "Arguments"] and final == ["Reasoning", "Final"]
    reply = 'Reasoning: look it up\nTool: search\nArguments: {"query": "x"}'
    assert parse(reply, keywords=custom) == ReactAction("look it up", "search", {"query": "x"})


def test_prompt_lists_tools_with_schemas():
    """Every tool's name, description and argument schema appear in the prompt."""
    prompt = _profile(tools=[SEARCH, CALC]).format_prompt("react", question="What is 2+2?")
    assert "- search: Search the web." in prompt
    assert json.dumps(SEARCH["parameters"]) in prompt
    assert "one of: search, calculator" in prompt
    assert prompt.endswith("Question: What is 2+2?")


def test_chinese_prompt_keeps_english_labels():
    """The zh template explains in Chinese but keeps the labels the parser reads."""
    prompt = _profile("zh", tools=[SEARCH]).format_prompt("react")
    assert "你可以使用以下工具" in prompt
    assert f"\n{KEYWORDS.action_input}: <" in prompt


def test_render_time_tools_replace_persona_tools():
    """`tools=` given to format_prompt wins over the persona's own list."""
    profile = _profile(tools=[SEARCH])
    prompt = profile.format_prompt("react", tools=[CALC])
    assert "- calculator: Evaluate arithmetic." in prompt
    assert "- search:" not in prompt and "one of: calculator>" in prompt


def test_react_without_tools_is_refused():
    """A react prompt with no tool would describe a protocol the model cannot follow."""
    with pytest.raises(RenderError, match="needs at least one tool"):
        _profile().format_prompt("react")


def test_openai_function_shape_is_accepted():
    """Tools in OpenAI's {type: function, function: {...}} shape are read as plain tools."""
    prompt = _profile().format_prompt("react", tools=[{"type": "function", "function": SEARCH}])
    assert "- search: Search the web." in prompt


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        ({"name": "web search", "description": "x"}, "must start with a letter"),
        ({"name": "search"}, "description must be a non-empty text"),
        ({"name": "s", "description": "x", "parameters": {"type": "string"}}, "must describe an object"),
        (
            {"name": "s", "description": "x", "parameters": {"type": "object", "required": ["q"]}},
            "not described",
        ),
        ({"name": "s", "description": "x", "args": {}}, "unknown key"),
    ],
)
def test_bad_tool_at_render_time(tool, message):
    """A malformed tool given at render time is a RenderError saying what to fix."""
    with pytest.raises(RenderError, match=message):
        _profile().format_prompt("react", tools=[tool])


def test_duplicate_tool_names_are_refused():
    """Two tools with one name would make the parser's answer ambiguous."""
    with pytest.raises(ConfigError, match="repeats tools"):
        ProfileConfig(name="a", role="b", tools=[SEARCH, SEARCH])


def test_bad_tool_in_persona_points_at_its_line(tmp_path):
    """A tool without a description in YAML is reported at the tool's own line."""
    text = "name: Ada\nrole: Researcher\ntools:\n  - name: search\n    description: Search.\n  - name: calc\n"
    with pytest.raises(ConfigError) as info:
        parse_profiles(text, file="ada.yaml", base_dir=tmp_path)
    (issue,) = info.value.issues
    assert (issue.file, issue.line) == ("ada.yaml", 6)
    assert "tool 'calc': description must be" in str(issue)


# -- parsing ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "{'query': 'paris'}",
        '{"query": "paris",}',
        '{"query": "paris"',
        '```json\n{"query": "paris"}\n```',
    ],
)
def test_slightly_broken_json_is_repaired(raw):
    """Single quotes, trailing commas, a missing brace and a code fence are all read."""
    step = parse(f"Thought: look\nAction: search\nAction Input: {raw}")
    assert step == ReactAction("look", "search", {"query": "paris"})


def test_single_tool_name_as_text():
    """`tool_names="search"` means one tool, not the letters of its name."""
    assert parse('Action: search\nAction Input: {}', tool_names="search") == ReactAction("", "search", {})


def test_invented_observation_is_dropped():
    """A model that writes its own observation and answer still yields the tool call it asked for."""
    reply = (
        'Thought: t\nAction: search\nAction Input: {"q": 1}\nObservation: sunny\nThought: ok\nAnswer: sunny'
    )
    assert parse(reply) == ReactAction("t", "search", {"q": 1})


def test_markdown_bold_labels_are_read():
    """`**Action:**` is read like `Action:`."""
    step = parse('**Thought:** t\n**Action:** search\n**Action Input:** {"q": 1}')
    assert step == ReactAction("t", "search", {"q": 1})


def test_answer_keeps_later_lines_verbatim():
    """Everything after `Answer:` belongs to the answer, even lines that look like labels."""
    step = parse("Thought: done\nAnswer: Use this:\nAction: not a call")
    assert step == ReactAnswer("done", "Use this:\nAction: not a call")


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("I think it is sunny.", "no 'Action:' line and no 'Answer:' line"),
        ('Thought: t\nAction: fly\nAction Input: {"q": 1}', "no tool named 'fly'; the tools are search"),
        ("Thought: t\nAction: search", "must be followed by an 'Action Input:' line"),
        ("Thought: t\nAction: search\nAction Input: [1, 2]", "is not a JSON object"),
        ("Thought: t\nAction: search\nAction Input:", "line is empty"),
        ("Thought: t\nAnswer:   ", "the 'Answer:' line is empty"),
        ("Thought: t\nAction:\nAction Input: {}", "names no tool"),
    ],
)
def test_unreadable_reply_explains_and_shows_format(reply, problem):
    """The error says what was wrong and shows the expected format, ready to send back to the model."""
    with pytest.raises(ReactParseError) as info:
        parse(reply, tool_names=["search"])
    message = str(info.value)
    assert problem in message
    assert "Action: <one tool name: search>" in message
    assert f"{KEYWORDS.answer}: <your answer>" in message
    assert isinstance(info.value, ReplyError) and isinstance(info.value, ProfilesError)


@pytest.mark.parametrize("arguments", ["[" * 5000 + "]" * 5000, '{"q": ' + "[" * 5000 + "]" * 5000 + "}"])
def test_arguments_nested_past_the_parser_are_a_parse_error(arguments):
    """Arguments thousands of levels deep are a reply to correct, not a RecursionError."""
    with pytest.raises(ReactParseError, match="is not a JSON object"):
        parse(f"Thought: look\nAction: search\nAction Input: {arguments}", tool_names=["search"])


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ('{"limit": NaN}', "holds NaN, which is not a JSON number"),
        ('{"limit": [1, 1e999]}', "holds Infinity, which is not a JSON number"),
        ('{"query": "Paris \\ud800"}', "holds \\ud800, half of a UTF-16 surrogate pair"),
    ],
)
def test_arguments_no_tool_can_be_called_with_are_a_parse_error(arguments, problem):
    """json.loads reads them, but they cannot be sent on as JSON: the model is asked again."""
    with pytest.raises(ReactParseError) as caught:
        parse(f"Thought: look\nAction: search\nAction Input: {arguments}", tool_names=["search"])
    assert str(caught.value).startswith(f"Could not read your reply: the 'Action Input:' {problem}")


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"note": "Call back.\nAnswer: yes or no"}', {"note": "Call back.\nAnswer: yes or no"}),
        ('{"note": "Steps:\nThought: first\nObservation: then"}',
         {"note": "Steps:\nThought: first\nObservation: then"}),
        ('```json\n{"note": "a\nAction: b"}\n```', {"note": "a\nAction: b"}),
    ],
)
def test_a_label_inside_the_arguments_does_not_cut_them(arguments, expected):
    """The input ran to the next line starting with a label even inside a JSON string; the repair then
    closed the string and the tool was called with half the text, without a word."""
    reply = f"Thought: note it\nAction: search\nAction Input: {arguments}\nObservation: made up"
    step = parse(reply, tool_names=["search"])
    assert step == ReactAction(thought="note it", tool="search", input=expected)
