"""`profiles chat-template`: render a model's chat template for a conversation, in the sandbox."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import yaml

from ..errors import ConfigError, ConfigIssue
from ..safe_yaml import read_text, safe_load
from .options import parse_vars
from .tables import echo_json

__all__ = ["chat_template"]

#: What a conversation file may hold besides the messages; everything else is a template variable.
_KNOWN = ("messages", "tools", "documents", "add_generation_prompt")


def _read(path: Path, what: str) -> Any:
    text = read_text(path, kind=what.removeprefix("the "))
    try:
        return safe_load(text)  # JSON is YAML too; both bounded as persona files are
    except yaml.YAMLError as exc:
        raise ConfigError(ConfigIssue(f"{what} is not valid JSON or YAML: {exc}", file=str(path))) from None


def _template(path: Path, name: str | None) -> tuple[str, dict[str, Any]]:
    """The template text, and the special tokens when the file is a tokenizer's configuration."""
    if path.suffix.lower() != ".json":
        if name is not None:
            raise ConfigError(
                ConfigIssue("--name picks one of a tokenizer_config.json's named chat templates", file=str(path))
            )
        return read_text(path, kind="chat template"), {}
    config = _read(path, "the tokenizer configuration")
    found = config.get("chat_template") if isinstance(config, dict) else None
    if isinstance(found, list):  # several named templates: the default one, or the one asked for
        named = {item.get("name"): item.get("template") for item in found if isinstance(item, dict)}
        names = ", ".join(sorted(str(key) for key in named))
        if (name or "default") not in named:
            problem = f"no chat template named {name!r}" if name else "several named chat templates, none named default"
            raise ConfigError(ConfigIssue(f"{problem}; pick one with --name ({names})", file=str(path)))
        found = named[name or "default"]
    elif name is not None and isinstance(found, str):
        raise ConfigError(ConfigIssue("this file has one chat template; leave out --name", file=str(path)))
    if not isinstance(found, str):
        raise ConfigError(
            ConfigIssue(
                "no chat_template text in this file; name a .jinja file or a tokenizer_config.json", file=str(path)
            )
        )
    return found, _special_tokens(config)


def _special_tokens(config: dict[str, Any]) -> dict[str, str]:
    """`bos_token` and the like, as text: a token saved as an AddedToken (`{"content": "<s>", …}`), as
    older tokenizers write them, is its content, which is what transformers gives the template."""
    tokens = {}
    for key, value in config.items():
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(key, str) and key.endswith("_token") and isinstance(value, str):
            tokens[key] = value
    return tokens


@click.command("chat-template")
@click.argument("template", type=click.Path(path_type=Path))
@click.argument("conversation", type=click.Path(path_type=Path))
@click.option("--var", "variables", multiple=True, metavar="KEY=VALUE", help="A template variable; repeatable.")
@click.option("--strict", is_flag=True, help="A missing key or variable is an error instead of an empty text.")
@click.option("--spans", is_flag=True, help="Print JSON with the text and each {% generation %} span.")
@click.option(
    "--name",
    "template_name",
    default=None,
    metavar="NAME",
    help="Of a tokenizer_config.json with several named chat templates, the one to render (default: default).",
)
def chat_template(
    template: Path, conversation: Path, variables: tuple[str, ...], strict: bool, spans: bool, template_name: str | None
) -> None:
    """Render a model's chat template for a conversation, as transformers would, in the sandbox.

    TEMPLATE is a Jinja file or a tokenizer_config.json (its chat_template, the one named by --name
    when it has several, and its special tokens such as bos_token as variables). CONVERSATION is a
    JSON or YAML file: a list of messages, or a mapping of messages, tools, documents,
    add_generation_prompt and any other variable the template reads. The template runs under the
    same bounds as any template.

    \b
    Examples:
      profiles chat-template examples/chat/qwen2.5-instruct.jinja examples/chat/conversation.json
      profiles chat-template tokenizer_config.json chat.json --var enable_thinking=false --spans
      profiles chat-template tokenizer_config.json chat.json --name tool_use
    """
    from ..rendering.chat_template import ChatTemplate

    source, tokens = _template(template, template_name)
    data = _read(conversation, "the conversation")
    if isinstance(data, list):
        data = {"messages": data}
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise ConfigError(
            ConfigIssue("expected a list of messages, or a mapping with messages: [...]", file=str(conversation))
        )
    extra = {**tokens, **{key: value for key, value in data.items() if key not in _KNOWN}}
    extra.update({key: _value(value) for key, value in parse_vars(variables).items()})
    compiled = ChatTemplate(source, template.name, strict=strict)
    options = {
        "tools": data.get("tools"),
        "documents": data.get("documents"),
        "add_generation_prompt": bool(data.get("add_generation_prompt", False)),
    }
    if spans:
        text, found = compiled.generation_spans(data["messages"], **options, **extra)
        echo_json({"text": text, "generation_spans": [list(span) for span in found]})
        return
    click.echo(compiled.render(data["messages"], **options, **extra))


def _value(text: str) -> Any:
    """A `--var` value: true, false, null and numbers as JSON reads them (chat templates test them), else text."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, (bool, int, float)) or value is None else text
