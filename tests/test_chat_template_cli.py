"""`profiles chat-template`: a model's chat template rendered for a conversation file, in the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

from profiles import ChatTemplate
from profiles.cli import cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "chat"


def test_renders_the_example_as_the_library_does(runner):
    args = ["chat-template", str(EXAMPLES / "qwen2.5-instruct.jinja"), str(EXAMPLES / "conversation.json")]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    conversation = json.loads((EXAMPLES / "conversation.json").read_text(encoding="utf-8"))
    expected = ChatTemplate((EXAMPLES / "qwen2.5-instruct.jinja").read_text(encoding="utf-8")).render(
        conversation["messages"], tools=conversation["tools"], add_generation_prompt=True
    )
    assert result.output == expected + "\n"


def test_a_tokenizer_config_gives_the_template_and_its_special_tokens(runner, tmp_path):
    config = {
        "bos_token": "<s>",
        "eos_token": "</s>",
        "chat_template": [
            {"name": "tool_use", "template": "tools!"},
            {"name": "default", "template": "{{ bos_token }}{% for m in messages %}[{{ m.content }}]{% endfor %}"
             "{{ eos_token if not add_generation_prompt }}{% if think %}+{% endif %}"},
        ],
    }
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    (tmp_path / "chat.yaml").write_text("- {role: user, content: hi}\n- {role: assistant, content: yo}\n")
    args = ["chat-template", str(tmp_path / "tokenizer_config.json"), str(tmp_path / "chat.yaml")]
    args += ["--var", "think=true"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert result.output == "<s>[hi][yo]</s>+\n"


def test_spans_are_printed_as_json(runner, tmp_path):
    (tmp_path / "t.jinja").write_text(
        "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}"
        "{% else %}{{ m.content }}{% endif %}{% endfor %}"
    )
    messages = [{"role": "user", "content": "ab"}, {"role": "assistant", "content": "cde"}]
    (tmp_path / "c.json").write_text(json.dumps(messages))
    result = runner.invoke(cli, ["chat-template", str(tmp_path / "t.jinja"), str(tmp_path / "c.json"), "--spans"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"text": "abcde", "generation_spans": [[2, 5]]}


def test_errors_are_one_line_with_exit_2(runner, tmp_path):
    loops = "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"
    (tmp_path / "loop.jinja").write_text(loops)
    (tmp_path / "c.json").write_text("[]")
    (tmp_path / "bad.json").write_text('{"messages": "hi"}')
    result = runner.invoke(cli, ["chat-template", str(tmp_path / "loop.jinja"), str(tmp_path / "c.json")])
    assert result.exit_code == 2 and "loop iterations" in result.output and "MAX_STEPS" in result.output
    result = runner.invoke(cli, ["chat-template", str(tmp_path / "loop.jinja"), str(tmp_path / "bad.json")])
    assert result.exit_code == 2 and "expected a list of messages" in result.output
    assert "Traceback" not in result.output
