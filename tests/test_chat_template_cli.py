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


def test_special_tokens_saved_as_added_tokens_are_their_content(runner, tmp_path):
    """Older tokenizers save `bos_token` as an AddedToken mapping; the template gets its text, as in transformers."""
    config = {
        "chat_template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}",
        "bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": False, "normalized": True},
        "eos_token": "</s>",
        "unk_token": None,
    }
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    (tmp_path / "chat.json").write_text('[{"role": "user", "content": "hi"}]')
    result = runner.invoke(cli, ["chat-template", str(tmp_path / "tokenizer_config.json"), str(tmp_path / "chat.json")])
    assert result.exit_code == 0, result.output
    assert result.output == "<s>hi</s>\n"


def test_name_picks_one_of_several_named_templates(runner, tmp_path):
    named = [{"name": "default", "template": "plain"}, {"name": "tool_use", "template": "tools"}]
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": named}))
    (tmp_path / "without.json").write_text(json.dumps({"chat_template": named[1:]}))
    (tmp_path / "one.json").write_text(json.dumps({"chat_template": "one"}))
    (tmp_path / "chat.json").write_text("[]")
    chat = str(tmp_path / "chat.json")

    def run(file, *extra):
        return runner.invoke(cli, ["chat-template", str(tmp_path / file), chat, *extra])

    assert run("tokenizer_config.json").output == "plain\n"
    assert run("tokenizer_config.json", "--name", "tool_use").output == "tools\n"
    assert run("without.json", "--name", "tool_use").output == "tools\n"
    missing = run("tokenizer_config.json", "--name", "rag")
    assert missing.exit_code == 2 and "no chat template named 'rag'; pick one with --name (default, tool_use)" in (
        missing.output
    )
    no_default = run("without.json")
    assert no_default.exit_code == 2 and "none named default; pick one with --name (tool_use)" in no_default.output
    single = run("one.json", "--name", "tool_use")
    assert single.exit_code == 2 and "one chat template; leave out --name" in single.output
    (tmp_path / "t.jinja").write_text("x")
    jinja = runner.invoke(cli, ["chat-template", str(tmp_path / "t.jinja"), chat, "--name", "default"])
    assert jinja.exit_code == 2 and "tokenizer_config.json" in jinja.output
