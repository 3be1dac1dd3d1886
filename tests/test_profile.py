"""DefaultProfile: getters, variables, strict mode, field templates, immutability, threads."""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor

import pytest

from profiles import ProfileConfig, RenderError, load_profile


@pytest.fixture
def planner(configs):
    return load_profile(configs / "planner.yaml").create_profile()


def test_getters(configs):
    profile = load_profile(configs / "summarizer.yaml").create_profile()
    assert profile.get_name() == "Aristotle"
    assert len(profile.get_constraints()) == 6
    assert profile.get_retry_constraints()[0].startswith("Address")
    assert profile.get_examples().startswith("Question:")
    assert profile.get_description() is None and profile.get_avatar() is None
    assert "{{ name }}" in profile.get_system_prompt_template()
    assert "question" in profile.get_user_prompt_template()
    assert "observation" in profile.get_write_memory_template()


@pytest.mark.parametrize(("name", "language", "first"), [
    ("Acme Inc.", None, "You are Acme Inc. Your role: Helper."),
    ("Yahoo!", None, "You are Yahoo! Your role: Helper."),
    ("Ada", None, "You are Ada. Your role: Helper."),
    ("小明。", "zh", "你是小明。你的角色：Helper。"),
    ("小明", "zh", "你是小明。你的角色：Helper。"),
])
def test_a_name_that_ends_its_sentence_gets_no_second_stop(name, language, first):
    """A name ending in "." rendered "You are Acme Inc.." in the system and react prompts."""
    tools = [{"name": "search", "description": "Search.", "parameters": {"type": "object"}}]
    profile = ProfileConfig(name=name, role="Helper", language=language, tools=tools).create_profile()
    assert profile.format_system_prompt().splitlines()[0] == first
    assert profile.format_prompt("react").splitlines()[0] == first


def test_environment_name_changes_at_next_call(configs, monkeypatch):
    config = load_profile(configs / "summarizer.yaml")
    assert "You are Aristotle." in config.create_profile().format_system_prompt()
    monkeypatch.setenv("SUMMARY_PROFILE_NAME", "Plato")
    assert "You are Plato." in config.create_profile().format_system_prompt()


def test_field_template_uses_render_variables(planner):
    prompt = planner.format_system_prompt("Plan", agents="Searcher, Coder")
    assert "The agents you can assign steps to are: Searcher, Coder." in prompt
    assert "at most 8 steps" in prompt  # from the persona's variables


def test_caller_overrides_persona_variables(planner):
    assert "at most 3 steps" in planner.format_system_prompt(agents="A", max_steps=3)


def test_missing_variable_names_field_line_and_variable(planner):
    with pytest.raises(RenderError) as caught:
        planner.format_system_prompt("Plan")
    message = str(caught.value)
    assert "field 'expand_prompt' line 1 uses 'agents'" in message and "--var agents=" in message


def test_missing_variable_in_template_names_its_line():
    config = ProfileConfig(name="n", role="r", templates={"user": {"inline": "Hi\n\n{{ topic }}"}})
    with pytest.raises(RenderError, match=r"template 'user \(inline\)' line 3 uses 'topic'"):
        config.create_profile().format_user_prompt()


def test_second_render_with_other_variables_is_right(planner):
    first = planner.format_system_prompt(agents="A")
    second = planner.format_system_prompt(agents="B")
    assert "are: A." in first and "are: B." in second and "are: A." not in second


def test_partial_binds_without_changing_the_original(planner):
    bound = planner.partial(agents="Searcher")
    assert "are: Searcher." in bound.format_system_prompt()
    with pytest.raises(RenderError):
        planner.format_system_prompt()
    assert "are: Other." in bound.format_system_prompt(agents="Other")


def test_profile_is_immutable(planner):
    with pytest.raises(dataclasses.FrozenInstanceError):
        planner.values = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        planner.values["name"] = "x"  # type: ignore[index]


def test_strict_mode_refuses_unused_variables(planner):
    with pytest.raises(RenderError, match="does not use variable\\(s\\) colour"):
        planner.format_system_prompt(agents="A", colour="red", strict=True)
    assert "are: A." in planner.format_system_prompt(agents="A", strict=True)
    assert planner.format_system_prompt(agents="A", colour="red")  # ignored when not strict


def test_only_declared_variables_reach_a_template():
    """A template that lists its context sees only what it declares, nothing else."""
    config = ProfileConfig(name="n", role="r", templates={"user": {"inline": "{{ question }}"}})
    assert config.create_profile().format_user_prompt("Q", extra="ignored") == "Q"


def test_broken_field_syntax_names_the_field():
    config = ProfileConfig(name="n", role="r", goal="Reply like {{ this")
    with pytest.raises(RenderError, match="field 'goal' holds template syntax that does not parse.*raw"):
        config.create_profile()


def test_raw_keeps_braces():
    config = ProfileConfig(name="n", role="r", constraints=['Reply as {% raw %}{"a": 1}{% endraw %}.'])
    assert '1. Reply as {"a": 1}.' in config.create_profile().format_system_prompt()


def test_field_referring_to_another_field():
    profile = ProfileConfig(name="Ada", role="r", goal="Help as {{ name }} would.").create_profile()
    assert "Your goal: Help as Ada would." in profile.format_system_prompt()


def test_format_prompt_for_own_kind_and_unknown_kind():
    config = ProfileConfig(name="n", role="r", templates={"planner": {"inline": "Plan for {{ name }}: {{ task }}"}})
    profile = config.create_profile()
    assert profile.format_prompt("planner", task="T") == "Plan for n: T"
    known = "planner, react, system, user, write_memory"
    with pytest.raises(RenderError, match=f"unknown prompt kind 'nope'; known kinds are {known}"):
        profile.format_prompt("nope")


def test_renders_from_many_threads(planner):
    """Compiled templates are shared safely: concurrent renders each get their own variables."""

    def render(index):
        return index, planner.format_system_prompt(agents=f"agent{index}")

    with ThreadPoolExecutor(8) as pool:
        for index, prompt in pool.map(render, range(400)):
            assert f"are: agent{index}." in prompt


def test_templates_compiled_once(planner):
    first = planner.template_for("system")
    planner.format_system_prompt(agents="x")
    assert planner.template_for("system") is first
    again = ProfileConfig(name="m", role="r").create_profile()
    assert again.template_for("system") is first


@pytest.mark.parametrize("given", [{"model": 5}, {"language": b"en"}, {"model": ["gpt-4o"]}, {"language": 1.5}])
def test_a_language_or_model_that_is_not_text_is_refused(configs, given):
    """Not an AttributeError from deep inside model-family matching: an error naming the argument."""
    from profiles import ResolutionError

    name, value = next(iter(given.items()))
    for config in (ProfileConfig(name="Ada", role="Guide"), load_profile(configs / "summarizer.yaml")):
        with pytest.raises(ResolutionError, match=rf"^{name} must be text such as .* got {type(value).__name__}$"):
            config.create_profile(**given)


@pytest.mark.parametrize(
    ("language", "line"),
    [
        ("EN", "Always answer in English."),
        ("pt-BR", "Always answer in Portuguese."),
        ("zh", "请始终使用简体中文回答。"),
        ("zh-TW", "请始终使用繁体中文回答。"),
        ("zh_tw", "请始终使用繁体中文回答。"),
        ("zh-Hant", "请始终使用繁体中文回答。"),  # the script tag: these asked for Simplified Chinese
        ("zh_Hant_TW", "请始终使用繁体中文回答。"),
        ("zh-HK", "请始终使用繁体中文回答。"),
        ("zh-MO", "请始终使用繁体中文回答。"),
        ("zh-Hans", "请始终使用简体中文回答。"),
        ("tlh", "Always answer in tlh."),
    ],
)
def test_the_answer_language_is_named_however_the_tag_is_spelt(language, line):
    """Case and `_` do not change which language the system prompt asks for; an unknown tag is kept as written."""
    prompt = ProfileConfig(name="Ada", role="Guide", language=language).create_profile().format_system_prompt("q")
    assert prompt.splitlines()[-1] == line
