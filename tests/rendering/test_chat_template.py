"""Chat templates render as transformers renders them, byte for byte, inside the sandbox and its bounds."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from pydantic import BaseModel
from transformers.utils.chat_template_utils import render_jinja_template

from profiles import ChatTemplate, RenderError, Tool, render_chat_template

CORPUS = Path(__file__).resolve().parent / "corpus"
CHAT = sorted(
    path.stem
    for path in CORPUS.glob("*.j2")
    if json.loads(path.with_suffix(".json").read_text())["kind"] == "chat_template"
)
GENERATION = re.compile(r"\{%-?\s*generation\s*-?%\}")


def load(name: str) -> tuple[str, dict]:
    source = (CORPUS / f"{name}.j2").read_bytes().decode("utf-8")
    return source, json.loads((CORPUS / f"{name}.json").read_text(encoding="utf-8"))["inputs"]


def transformers_render(source: str, inputs: dict, **options) -> tuple[str, list]:
    inputs = dict(inputs)
    messages = inputs.pop("messages")
    rendered, spans = render_jinja_template(
        conversations=[messages],
        tools=inputs.pop("tools", None),
        documents=inputs.pop("documents", None),
        chat_template=source,
        add_generation_prompt=inputs.pop("add_generation_prompt", False),
        **options,
        **inputs,
    )
    return rendered[0], [tuple(span) for span in spans[0]] if spans else []


def ours(source: str, inputs: dict, name: str = "chat template", **options) -> str:
    inputs = dict(inputs)
    messages = inputs.pop("messages")
    return ChatTemplate(source, name).render(messages, **options, **inputs)


def test_the_corpus_has_chat_templates():
    assert len(CHAT) >= 25


@pytest.mark.parametrize("name", CHAT)
def test_same_text_as_transformers(name):
    source, inputs = load(name)
    assert ours(source, inputs, name) == transformers_render(source, inputs)[0]


@pytest.mark.parametrize("name", [name for name in CHAT if GENERATION.search(load(name)[0])])
def test_same_generation_spans_as_transformers(name):
    source, inputs = load(name)
    inputs = dict(inputs)
    messages = inputs.pop("messages")
    text, spans = ChatTemplate(source, name).generation_spans(messages, **inputs)
    theirs = transformers_render(source, {"messages": messages, **inputs}, return_assistant_tokens_mask=True)
    assert (text, spans) == theirs
    assert spans and all(text[start:end] for start, end in spans)


def test_render_chat_template_is_the_short_form():
    source, inputs = load("hf__qwen2.5-7b-instruct")
    inputs = dict(inputs)
    assert render_chat_template(source, **inputs) == ours(source, inputs)


def test_continue_final_message_as_transformers():
    source, inputs = load("vllm__template_chatml")
    messages = [*inputs["messages"], {"role": "assistant", "content": "The answer is "}]
    expected = transformers_render(source, {"messages": messages}, continue_final_message=True)[0]
    assert render_chat_template(source, messages, continue_final_message=True) == expected
    assert expected.endswith("<|im_start|>assistant\nThe answer is ")  # no end-of-turn token after it


def test_objects_become_plain_data_as_in_transformers():
    """Dataclasses and pydantic models become mappings; other objects an inert "<Type>" text."""

    @dataclasses.dataclass
    class Message:
        role: str
        content: str

    class Call(BaseModel):
        name: str

    class Secretive:
        def delete_everything(self):
            raise AssertionError("a template must not reach this")

    source = "{% for m in messages %}{{ m.role }}={{ m.content }};{% endfor %}{{ call.name }}{{ thing }}"
    messages = [Message("user", "hi"), {"role": "assistant", "content": "yo"}]
    expected = transformers_render(source, {"messages": messages, "call": Call(name="f"), "thing": Secretive()})[0]
    assert render_chat_template(source, messages, call=Call(name="f"), thing=Secretive()) == expected
    assert expected == "user=hi;assistant=yo;f<Secretive>"


def test_profiles_tools_are_given_as_json_schemas():
    source, inputs = load("hf__qwen2.5-7b-instruct")
    schema = inputs["tools"][0]["function"]
    tool = Tool(schema["name"], schema["description"], schema["parameters"])
    with_tool = dict(inputs, tools=[tool])
    with_schema = dict(inputs, tools=[{"type": "function", "function": schema}])
    assert ours(source, with_tool) == transformers_render(source, with_schema)[0]


def test_tojson_is_transformers_own():
    source = "{{ tools|tojson }}|{{ tools|tojson(indent=2, sort_keys=true) }}|{{ '<a>'|tojson }}"
    tools = [{"type": "function", "function": {"name": "é", "b": 1, "a": "<&>"}}]
    expected = transformers_render(source, {"messages": [], "tools": tools})[0]
    assert render_chat_template(source, [], tools=tools) == expected


def test_raise_exception_is_a_render_error_with_the_templates_line():
    source, _ = load("hf__mixtral-8x7b-instruct-v0.1")
    with pytest.raises(RenderError) as caught:
        render_chat_template(source, [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    assert "TemplateError" in caught.value.message and "alternate" in caught.value.message
    assert caught.value.line is not None


def test_namespace_refuses_underscore_names():
    with pytest.raises(RenderError, match="underscore-prefixed"):
        render_chat_template("{% set ns = namespace(_x=1) %}", [])
    with pytest.raises(RenderError, match="underscore-prefixed"):
        render_chat_template("{% set ns = namespace() %}{% set ns._y = 1 %}", [])


def test_strict_mode_names_what_is_missing():
    """By default a missing variable prints as "" (as in transformers); strict makes it an error."""
    source = "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}"
    assert render_chat_template(source, [{"role": "user", "content": "x"}]) == "x"
    with pytest.raises(RenderError, match=r"line 1 reads 'bos_token', which was not given; pass bos_token="):
        render_chat_template(source, [{"role": "user", "content": "x"}], strict=True)
    with pytest.raises(RenderError, match="'dict object' has no attribute 'content'"):
        render_chat_template(source, [{"role": "user"}], strict=True, bos_token="<s>")


@pytest.mark.parametrize(
    ("messages", "options", "match"),
    [
        ("hello", {}, "messages must be a list"),
        ([{"role": "user", "content": "hi"}, 1], {}, r"messages\[1\] is int; chat messages must be mappings"),
        ([], {"tools": [len]}, r"tools\[0\] is builtin_function_or_method"),
        ([], {"documents": ["text"]}, r"documents\[0\] is str"),
        ([], {"continue_final_message": True}, "conversation is empty"),
    ],
)
def test_malformed_inputs_are_render_errors(messages, options, match):
    with pytest.raises(RenderError, match=match):
        render_chat_template("{{ messages }}", messages, **options)


def test_compiled_once():
    source, _ = load("vllm__template_chatml")
    assert ChatTemplate(source).compiled is ChatTemplate(source).compiled
