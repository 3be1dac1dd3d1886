"""Model chat templates (a tokenizer's `chat_template`), rendered as transformers renders them, in the sandbox.

A chat template turns a list of messages into the exact text a model was trained on. It comes
with the model, from a hub or a colleague, so it is untrusted code: SGLang (CVE-2026-5760) and
vLLM were exploited through it, and a 116-byte template can cost a minute of CPU. Here it runs
in this package's sandbox, under the same bounds as any prompt, with what transformers gives a
chat template (`transformers/utils/chat_template_utils.py`, 5.x):

- the `{% generation %}…{% endgeneration %}` tag, which marks what the assistant wrote;
- `{% break %}` and `{% continue %}`;
- `tojson` as `json.dumps` (no key sorting, no HTML escaping, `indent`, `separators`, `sort_keys`);
- the globals `raise_exception(message)`, `strftime_now(format)`, `dict` (with `fromkeys`) and
  `namespace` (refusing names that start with `_`);
- inputs rebuilt from plain JSON types (dataclasses and pydantic models become dicts, anything
  else a `"<TypeName>"` placeholder), `reasoning_content` copied to `thinking` and back, and
  `tools=None`, `documents=None` passed when not given, so `tools is defined` holds as there.

Given the same inputs, `render_chat_template` returns what transformers'
`render_jinja_template` returns, byte for byte. Messages are passed as given: a key whose value
is None stays (`apply_chat_template` drops those first). A missing key prints as an empty text,
as there, because model templates are written for that (`strict=True` makes it an error, as for
persona templates). `lipsum`, `cycler` and `joiner`, which no chat template needs, are absent.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from datetime import datetime
from typing import Any

from jinja2 import Undefined, nodes
from jinja2.exceptions import SecurityError, TemplateError
from jinja2.ext import Extension
from jinja2.utils import Namespace

from ..errors import RenderError
from ..tools import Tool
from .bounded import json_size
from .budget import active_budget, check_width, deep_size
from .renderer import CompiledTemplate, Renderer

__all__ = ["ChatTemplate", "GenerationTracker", "render_chat_template"]

#: How messages name the template when the caller gives it no name.
DEFAULT_NAME = "chat template"

#: Names a message's reasoning is passed under; the first is the one chat templates read.
_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")

#: Appended to the final message by `continue_final_message`, then cut off again, as transformers does.
_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


class _Written:
    """How many characters a render has written so far, counted as its output chunks are consumed."""

    __slots__ = ("chars", "spans")

    def __init__(self) -> None:
        self.chars = 0
        self.spans: list[tuple[int, int]] = []

    def count(self, chunks: Iterator[str]) -> Iterator[str]:
        for chunk in chunks:
            self.chars += len(chunk)
            yield chunk


_tracking: ContextVar[_Written | None] = ContextVar("profiles_generation_spans", default=None)


class GenerationTracker(Extension):
    """`{% generation %}…{% endgeneration %}`: prints its body and, when asked, records where it went.

    transformers' `AssistantTracker`: a span starts at the number of characters written before
    the tag and ends after its body, which is how `return_assistant_tokens_mask` finds the
    assistant's tokens for training.
    """

    tags = {"generation"}

    def parse(self, parser: Any) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

    def _generation_support(self, caller: Any) -> str:
        text = str(caller())
        written = _tracking.get()
        if written is not None:
            written.spans.append((written.chars, written.chars + len(text)))
        return text


def _raise_exception(message: Any) -> None:
    raise TemplateError(str(message)[:1000])


def _strftime_now(format: str) -> str:
    check_width(len(str(format)), "strftime format")
    text = datetime.now().strftime(format)
    active_budget().build(len(text))
    return text


def _tojson(
    x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False
) -> str:
    if indent:
        # each item on a line of its own, indented by its depth: measured before it is built
        check_width(indent, "tojson indent")
        active_budget().build(json_size(x, indent))
    # without an indent the text is about as big as the value, which the budget has seen built
    # (or the caller gave); its length is charged once it exists
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


class _ChatNamespace(Namespace):
    """transformers' `namespace`: no attribute whose name starts with `_`; measured like ours."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # noqa: N805 - Jinja's signature, so `namespace(self=…)` works
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            _ChatNamespace._check_name(name)
        Namespace.__init__(self, attrs)
        active_budget().build(deep_size(self))

    def __setitem__(self, name: str, value: Any) -> None:
        _ChatNamespace._check_name(name)
        Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check_name(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise SecurityError(
                f"chat templates cannot store underscore-prefixed attributes on a namespace, got {name!r}; "
                "rename the attribute"
            )


_renderers: dict[bool, Renderer] = {}
_lock = threading.Lock()


def chat_renderer(strict: bool = False) -> Renderer:
    """The shared renderer of chat templates: the sandbox with transformers' tag, filter and globals."""
    renderer = _renderers.get(strict)
    if renderer is None:
        with _lock:
            renderer = _renderers.get(strict)
            if renderer is None:
                renderer = Renderer(
                    (),
                    filters={"tojson": _tojson},
                    globals={
                        "raise_exception": _raise_exception,
                        "strftime_now": _strftime_now,
                        "namespace": _ChatNamespace,
                    },
                    extensions=[GenerationTracker],
                )
                if not strict:
                    renderer.env.undefined = Undefined  # prints as "", as transformers' environment does
                renderer._refresh()
                renderer.env.text_filters |= {"tojson"}  # json.dumps gives text: printed without finalize
                _renderers[strict] = renderer
    return renderer


class ChatTemplate:
    """A chat template compiled once; render it as often as needed, from any thread.

    `strict=True` makes a missing key or variable an error wherever it would print, as in persona
    templates, and checks when compiling that every variable the template reads unconditionally is
    passed; by default both print as an empty text, as in transformers.

    Raises:
        RenderError: the template does not parse.
    """

    def __init__(
        self,
        source: str,
        name: str = DEFAULT_NAME,
        *,
        strict: bool = False,
        max_output_chars: int | None = None,
        max_render_seconds: float | None = None,
    ) -> None:
        if not isinstance(source, str):
            raise RenderError(f"a chat template is text, got {type(source).__name__}")
        self.strict = strict
        self._renderer = chat_renderer(strict)
        self.compiled: CompiledTemplate = self._renderer.compile(source, name)
        self.max_output_chars = max_output_chars
        self.max_render_seconds = max_render_seconds

    @property
    def source(self) -> str:
        return self.compiled.source

    def render(
        self,
        messages: Sequence[Any],
        *,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Mapping[str, Any]] | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool | str = False,
        **extra: Any,
    ) -> str:
        """The text for `messages`: what transformers' `render_jinja_template` returns for one conversation.

        `tools` are JSON schemas (`{"type": "function", "function": {...}}`) or `profiles.Tool`s;
        `extra` holds whatever else the template reads (`bos_token`, `enable_thinking`, …).

        Raises:
            RenderError: the inputs are malformed, the template raised an exception
                (`raise_exception`), a bound tripped, or (strict) a variable is missing.
        """
        return self._render(messages, tools, documents, add_generation_prompt, continue_final_message, extra, None)

    def generation_spans(
        self,
        messages: Sequence[Any],
        *,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Mapping[str, Any]] | None = None,
        add_generation_prompt: bool = False,
        **extra: Any,
    ) -> tuple[str, list[tuple[int, int]]]:
        """The text and the `(start, end)` character spans of each `{% generation %}` block in it.

        What `render_jinja_template(..., return_assistant_tokens_mask=True)` returns for one
        conversation: the spans mark what the assistant wrote, for training on those tokens only.
        """
        written = _Written()
        text = self._render(messages, tools, documents, add_generation_prompt, False, extra, written)
        return text, written.spans

    def _render(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None,
        documents: Sequence[Mapping[str, Any]] | None,
        add_generation_prompt: bool,
        continue_final_message: bool | str,
        extra: Mapping[str, Any],
        written: _Written | None,
    ) -> str:
        chat = _alias_reasoning_fields(_plain(_messages(messages)))
        final = None
        if continue_final_message:
            final = _continue(chat, continue_final_message, self.source)
        variables = {
            "messages": chat,
            "tools": _plain(_tool_schemas(tools)) if tools is not None else None,
            "documents": _plain(_documents(documents)) if documents is not None else None,
            "add_generation_prompt": add_generation_prompt,
        }
        if extra:
            variables.update(_plain(dict(extra)))
        if self.strict:
            missing = [name for name in self.compiled.required if name not in variables]
            if missing:
                name = missing[0]
                raise RenderError(
                    f"{self.compiled.where(name)} reads {name!r}, which was not given; pass {name}=… (chat "
                    "templates also read the tokenizer's special tokens, such as bos_token, and options of "
                    "their own), or render without strict",
                    template=self.compiled.variables[name].template,
                    line=self.compiled.line_of(name),
                )
        if written is None:
            if self.max_output_chars is None and self.max_render_seconds is None:
                text = self._renderer.render(self.compiled, variables)
            else:
                text = self._renderer.render(
                    self.compiled, variables, max_chars=self.max_output_chars, max_seconds=self.max_render_seconds
                )
        else:
            token = _tracking.set(written)
            try:
                text = self._renderer.render(
                    self.compiled,
                    variables,
                    max_chars=self.max_output_chars,
                    max_seconds=self.max_render_seconds,
                    observe=written.count,
                )
            finally:
                _tracking.reset(token)
        if final is not None:
            text = _cut_continuation(text, final)
        return text


def render_chat_template(
    template: str,
    messages: Sequence[Any],
    *,
    tools: Sequence[Any] | None = None,
    documents: Sequence[Mapping[str, Any]] | None = None,
    add_generation_prompt: bool = False,
    continue_final_message: bool | str = False,
    strict: bool = False,
    **extra: Any,
) -> str:
    """Render a Hugging Face chat template for `messages`, as transformers does, inside the sandbox.

    The template is compiled once per process (cached by its text); see `ChatTemplate` for the
    arguments and for generation spans.

    Raises:
        RenderError: the template does not parse, its inputs are malformed, it raised an exception
            (`raise_exception`), or a bound tripped (time, output size, loop steps, value size).
    """
    compiled = ChatTemplate(template, strict=strict)
    return compiled.render(
        messages,
        tools=tools,
        documents=documents,
        add_generation_prompt=add_generation_prompt,
        continue_final_message=continue_final_message,
        **extra,
    )


# inputs, prepared as transformers prepares them ------------------------------------------------


def _messages(messages: Any) -> Any:
    if type(messages) is list:
        return messages
    messages = getattr(messages, "messages", messages)  # a Conversation object
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        raise RenderError("messages must be a list of messages, each a mapping with role and content")
    return list(messages)


def _tool_schemas(tools: Any) -> list[Any] | None:
    if tools is None:
        return None
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise RenderError('tools must be a list of JSON schemas like {"type": "function", "function": {…}}')
    for tool in tools:
        if type(tool) is not dict:
            break
    else:
        return tools  # JSON schemas already, the usual case
    schemas = []
    for index, tool in enumerate(tools):
        if isinstance(tool, Tool):
            tool = {
                "type": "function",
                "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
            }
        elif not isinstance(tool, Mapping):
            raise RenderError(
                f"tools[{index}] is {type(tool).__name__}; give a JSON schema "
                '({"type": "function", "function": {"name": …, "description": …, "parameters": {…}}}) '
                "or a profiles.Tool"
            )
        schemas.append(tool)
    return schemas


def _documents(documents: Any) -> list[Any] | None:
    if documents is None:
        return None
    if isinstance(documents, (str, bytes, Mapping)) or not isinstance(documents, Sequence):
        raise RenderError("documents must be a list of mappings with 'title' and 'text'")
    for index, document in enumerate(documents):
        if not isinstance(document, Mapping):
            raise RenderError(f"documents[{index}] is {type(document).__name__}; give a mapping with title and text")
    return list(documents)


#: Types passed as they are: exact JSON scalars carry no methods a template could misuse.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    """`value` rebuilt from plain JSON types, as transformers' `_plain_template_data` does.

    Objects a template could call methods on (arrays, images, anything else) become an inert
    `"<TypeName>"` text; templates only test whether such keys are there. Plain dicts and lists,
    the usual case, are copied without a call per item.
    """
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        return {
            key if type(key) in _SCALARS else _plain(key): item if type(item) in _SCALARS else _plain(item)
            for key, item in value.items()
        }
    if kind is list:
        return [item if type(item) in _SCALARS else _plain(item) for item in value]
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {_plain(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    if type(value).__module__ == "numpy" and callable(getattr(value, "item", None)):
        return _plain(value.item())  # a numpy scalar: np.bool_(False) must stay false
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if callable(getattr(value, "model_dump", None)):
        return _plain(value.model_dump())
    return f"<{type(value).__name__}>"


def _alias_reasoning_fields(chat: list[Any]) -> list[Any]:
    """A message's reasoning under `reasoning_content` and `thinking` both, whichever it came as."""
    aliased = []
    for index, message in enumerate(chat):
        if not isinstance(message, dict):
            raise RenderError(
                f"messages[{index}] is {type(message).__name__}; chat messages must be mappings, dataclasses or "
                'pydantic models, e.g. {"role": "user", "content": "…"}'
            )
        if "reasoning_content" in message or "thinking" in message or "reasoning" in message:
            reasoning = next((message[key] for key in _REASONING_FIELDS if message.get(key) is not None), None)
            if reasoning is not None:
                message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        aliased.append(message)
    return aliased


def _continue(chat: list[dict[str, Any]], field: bool | str, source: str) -> str:
    """Mark the final message so the text can end where it ends, for the model to continue it."""
    if not chat:
        raise RenderError("continue_final_message is set but the conversation is empty")
    key = field if isinstance(field, str) else "content"
    final = chat[-1].get(key)
    if final is None:
        raise RenderError(f"continue_final_message is set but the final message has no {key!r} to continue")
    keys = [key]
    if key in _REASONING_FIELDS:
        keys = [name for name in _REASONING_FIELDS if chat[-1].get(name) == final]
    if not any(name in source for name in keys):
        raise RenderError(f"continue_final_message is set to {key!r} but the chat template does not read it")
    last = dict(chat[-1])
    chat[-1] = last
    if isinstance(final, (list, tuple)):
        blocks = [dict(block) if isinstance(block, Mapping) else block for block in final]
        for block in reversed(blocks):
            if isinstance(block, dict) and "text" in block:
                final = block["text"]
                block["text"] = block["text"] + _CONTINUE_TAG
                break
        else:
            raise RenderError("continue_final_message is set but the final message has no text to continue")
        last[key] = blocks
    else:
        for name in keys:
            last[name] = last[name] + _CONTINUE_TAG
    return str(final)


def _cut_continuation(text: str, final: str) -> str:
    tag = _CONTINUE_TAG.strip()
    if final.strip() not in text or tag not in text:
        raise RenderError(
            "continue_final_message is set but the final message does not appear in the rendered chat; the "
            "chat template changes or drops part of it"
        )
    at = text.rindex(tag)
    if text[at : at + len(_CONTINUE_TAG)] == _CONTINUE_TAG:
        return text[:at]
    return text[:at].rstrip()  # the template trimmed the message's trailing space
