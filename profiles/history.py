"""Chat history: the turns a caller hands over, checked, and converted to each API's shape.

History is written in the OpenAI Chat Completions shape, the one most code already holds and
the one `format_messages` returns:

    {"role": "system" | "developer", "content": str | [text parts], "name"?: str}
    {"role": "user", "content": str | [text | image_url | input_audio | file parts], "name"?: str}
    {"role": "assistant", "content"?: str | [text | refusal parts] | None, "tool_calls"?: [...],
     "refusal"?: str, "name"?: str}
    {"role": "tool", "tool_call_id": str, "content": str | [text parts]}

    a tool call: {"id": str, "type": "function", "function": {"name": str, "arguments": "<JSON object>"}}

`check_history` lists every problem at once: shapes the clients' request types refuse, and the
rules the APIs enforce but the types do not (tool calls answered right after the turn that made
them, arguments that are a JSON object, ids unique), plus each API's own limits (Anthropic takes
no audio and no empty text; Responses no audio). `to_responses_input` and `to_anthropic` convert
a checked list; they do not check again.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from .jsonlines import MAX_JSON_DEPTH, NestingError, nested_over
from .jsonlines import loads as load_json

__all__ = [
    "APIS",
    "Api",
    "check_history",
    "to_anthropic",
    "to_responses_input",
]

Api = Literal["openai-chat", "openai-responses", "anthropic"]

#: The APIs a history can be checked for and converted to.
APIS: tuple[str, ...] = ("openai-chat", "openai-responses", "anthropic")

#: Per role, (required keys, optional keys) of a turn.
ROLE_KEYS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "system": (frozenset({"role", "content"}), frozenset({"name"})),
    "developer": (frozenset({"role", "content"}), frozenset({"name"})),
    "user": (frozenset({"role", "content"}), frozenset({"name"})),
    "assistant": (frozenset({"role"}), frozenset({"content", "tool_calls", "name", "refusal"})),
    "tool": (frozenset({"role", "content", "tool_call_id"}), frozenset()),
}

#: Content parts each role may hold.
PART_TYPES: dict[str, frozenset[str]] = {
    "system": frozenset({"text"}),
    "developer": frozenset({"text"}),
    "tool": frozenset({"text"}),
    "user": frozenset({"text", "image_url", "input_audio", "file"}),
    "assistant": frozenset({"text", "refusal"}),
}

_PART_KEYS = {kind: frozenset({"type", kind}) for kind in ("text", "refusal", "image_url", "input_audio", "file")}

#: Function names OpenAI and Anthropic both accept.
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
#: Anthropic's rule for tool_use ids.
ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
_DATA_URL = re.compile(r"^data:(?P<mime>[\w.+-]+/[\w.+-]+);base64,(?P<data>.*)$", re.S)
_ANTHROPIC_IMAGES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})

#: What OpenAI Chat takes as a turn's `name`: one word, none of the characters its role markup uses.
_CHAT_NAME = re.compile(r"[^\s<|\\/>]+")


def _one_word(name: str) -> str:
    return re.sub(r"[\s<|\\/>]+", "_", name.strip()) or "user"


#: Most turns a history may hold; more is surely a mistake (and would be slow to check).
MAX_TURNS = 10_000


def _check_part(part: Any, role: str, where: str, api: str, out: list[str]) -> None:
    if not isinstance(part, Mapping):
        out.append(f"{where}: a content part is a mapping with a 'type', got {type(part).__name__}")
        return
    kind = part.get("type")
    if kind not in PART_TYPES[role]:
        out.append(
            f"{where}.type: {kind!r} is not a part a {role} turn takes; "
            f"use one of {', '.join(sorted(PART_TYPES[role]))}"
        )
        return
    if set(part) != _PART_KEYS[kind]:
        out.append(f"{where}: a {kind} part has exactly the keys {', '.join(sorted(_PART_KEYS[kind]))}")
        return
    if kind in ("text", "refusal"):
        if not isinstance(part[kind], str):
            out.append(f"{where}.{kind}: must be text")
        elif api == "anthropic" and kind == "text" and not part[kind].strip():
            out.append(f"{where}.text: Anthropic refuses empty text; leave the part out")
    elif kind == "image_url":
        image = part["image_url"]
        if not isinstance(image, Mapping) or not isinstance(image.get("url"), str) or set(image) - {"url", "detail"}:
            out.append(f"{where}.image_url: must be {{url: text, detail?: auto | low | high | original}}")
        elif image.get("detail", "auto") not in ("auto", "low", "high", "original"):
            out.append(f"{where}.image_url.detail: must be auto, low, high or original")
        elif api == "anthropic":
            match = _DATA_URL.match(image["url"])
            if match and match["mime"] not in _ANTHROPIC_IMAGES:
                out.append(f"{where}: Anthropic takes jpeg, png, gif and webp images, not {match['mime']}")
            elif not match and not image["url"].startswith(("https://", "http://")):
                out.append(f"{where}.image_url.url: Anthropic needs a base64 data URL or an http(s) URL")
    elif kind == "input_audio":
        audio = part["input_audio"]
        if (
            not isinstance(audio, Mapping)
            or set(audio) != {"data", "format"}
            or audio.get("format") not in ("wav", "mp3")
        ):
            out.append(f"{where}.input_audio: must be {{data: base64 text, format: wav | mp3}}")
        elif api != "openai-chat":
            out.append(f"{where}: {api} takes no audio in message content; send it as text or use openai-chat")
    else:  # file
        file = part["file"]
        if (
            not isinstance(file, Mapping)
            or set(file) - {"file_data", "file_id", "filename"}
            or not (file.get("file_data") or file.get("file_id"))
        ):
            out.append(f"{where}.file: must have file_data (a data URL) or file_id, and may have filename")
        elif api == "anthropic" and file.get("file_data"):
            match = _DATA_URL.match(str(file["file_data"]))
            if not match or match["mime"] != "application/pdf":
                out.append(f"{where}.file.file_data: Anthropic takes documents as a base64 PDF data URL")


def _check_content(turn: Mapping[str, Any], role: str, where: str, api: str, out: list[str]) -> None:
    content = turn.get("content")
    if content is None:
        if role != "assistant":
            out.append(f"{where}.content: a {role} turn needs content")
        return
    # an assistant turn that calls tools often comes back with "" as its text; the tool_use blocks
    # carry it to Anthropic and the empty text is left out, so it is no reason to refuse the turn
    calls_tools = role == "assistant" and bool(turn.get("tool_calls"))
    if isinstance(content, str):
        if api == "anthropic" and role != "tool" and not calls_tools and not content.strip():
            out.append(f"{where}.content: Anthropic refuses empty text; leave the turn out")
        return
    if not isinstance(content, list):
        out.append(f"{where}.content: must be text or a list of parts, got {type(content).__name__}")
        return
    if not content and role != "assistant":
        out.append(f"{where}.content: an empty list; give the text or leave the turn out")
    for index, part in enumerate(content):
        _check_part(part, role, f"{where}.content[{index}]", api, out)


def _check_call(call: Any, where: str, api: str, out: list[str]) -> str | None:
    """Check one tool call; return its id when it has a usable one."""
    if not isinstance(call, Mapping) or set(call) != {"id", "type", "function"}:
        out.append(f"{where}: a tool call is exactly {{id, type: function, function: {{name, arguments}}}}")
        return None
    if call["type"] != "function":
        out.append(f"{where}.type: only function tool calls are supported, got {call['type']!r}")
    call_id = call["id"]
    if not isinstance(call_id, str) or not call_id:
        out.append(f"{where}.id: must be non-empty text")
        call_id = None
    elif api == "anthropic" and not ANTHROPIC_ID.match(call_id):
        out.append(f"{where}.id: Anthropic takes ids of letters, digits, '_' and '-' only, got {call_id!r}")
    function = call["function"]
    if not isinstance(function, Mapping) or set(function) != {"name", "arguments"}:
        out.append(f"{where}.function: must be exactly {{name, arguments}}")
        return call_id
    if not isinstance(function["name"], str) or not TOOL_NAME.match(function["name"]):
        out.append(f"{where}.function.name: letters, digits, '_' and '-', at most 64, got {function['name']!r}")
    arguments = function["arguments"]
    if not isinstance(arguments, str):
        out.append(
            f"{where}.function.arguments: must be JSON text (json.dumps the arguments), got {type(arguments).__name__}"
        )
        return call_id
    try:
        parsed = load_json(arguments)
    except NestingError as exc:
        out.append(f"{where}.function.arguments: is not valid JSON: {exc}")
    except ValueError:
        out.append(f"{where}.function.arguments: is not valid JSON")
    else:
        if not isinstance(parsed, dict):
            out.append(f"{where}.function.arguments: must encode one JSON object")
        elif nested_over(parsed):
            out.append(f"{where}.function.arguments: nested over {MAX_JSON_DEPTH} levels deep; flatten the arguments")
    return call_id


def check_history(history: Any, api: str = "openai-chat", *, label: str = "history") -> list[str]:
    """Every problem with `history` for `api`; an empty list means it converts and sends cleanly.

    Problems name the turn as `history[2].content` (`label` replaces `history`), so a caller can
    find it. Unknown keys are problems, not silently dropped: a body the client would change is
    not the body that was checked.
    """
    out: list[str] = []
    if isinstance(history, (str, bytes, Mapping)) or not isinstance(history, Sequence):
        return [f"{label} must be a list of turns ({{role, content}} mappings), got {type(history).__name__}"]
    if len(history) > MAX_TURNS:
        return [f"{label} holds {len(history)} turns; at most {MAX_TURNS}"]
    pending: dict[str, int] = {}  # tool call id -> index of the assistant turn that made it
    seen: set[str] = set()
    for index, turn in enumerate(history):
        where = f"{label}[{index}]"
        if not isinstance(turn, Mapping):
            out.append(f"{where}: a turn is a mapping with role and content, got {type(turn).__name__}")
            continue
        role = turn.get("role")
        if role not in ROLE_KEYS:
            hint = "; the legacy 'function' role is 'tool' with tool_call_id" if role == "function" else ""
            out.append(f"{where}.role: must be one of {', '.join(sorted(ROLE_KEYS))}, got {role!r}{hint}")
            continue
        required, optional = ROLE_KEYS[role]
        missing = sorted(required - set(turn))
        extra = sorted(str(key) for key in set(turn) - required - optional)
        if missing:
            out.append(f"{where}: a {role} turn needs {', '.join(missing)}")
        if extra:
            out.append(f"{where}: {', '.join(extra)} not part of a {role} turn; remove them")
        if "name" in turn and not isinstance(turn["name"], str):
            out.append(f"{where}.name: must be text")
        elif "name" in turn and api == "openai-chat" and not _CHAT_NAME.fullmatch(turn["name"]):
            # the API answers 400 to such a name; the other APIs have no name, and it is left out for them
            out.append(
                f"{where}.name: OpenAI Chat takes a name of one word, without spaces or any of < | \\ / >, "
                f"got {turn['name']!r}; write it as {_one_word(turn['name'])!r}, or leave the name out"
            )
        if role != "tool" and pending:
            ids = ", ".join(sorted(pending))
            out.append(
                f"{where}: tool call(s) {ids} of {label}[{min(pending.values())}] need their tool turns right "
                "after that assistant turn, one per call, before any other turn"
            )
            pending.clear()
        if "content" in turn or role != "assistant":
            _check_content(turn, role, where, api, out)
        if role == "assistant":
            calls = turn.get("tool_calls")
            content = turn.get("content")
            has_text = bool(content.strip()) if isinstance(content, str) else bool(content)
            if not calls:
                if not has_text and not turn.get("refusal"):
                    out.append(f"{where}: an assistant turn needs content or tool_calls")
                if calls is not None:
                    out.append(f"{where}.tool_calls: an empty list; leave the key out")
                continue
            if not isinstance(calls, list):
                out.append(f"{where}.tool_calls: must be a list")
                continue
            for position, call in enumerate(calls):
                call_id = _check_call(call, f"{where}.tool_calls[{position}]", api, out)
                if call_id is None:
                    continue
                if call_id in seen:
                    out.append(f"{where}.tool_calls[{position}].id: {call_id!r} repeats an earlier tool call's id")
                seen.add(call_id)
                pending[call_id] = index
        elif role == "tool":
            answered = turn.get("tool_call_id")
            if not isinstance(answered, str) or not answered:
                out.append(f"{where}.tool_call_id: must be non-empty text")
            elif answered not in pending:
                out.append(
                    f"{where}.tool_call_id: {answered!r} answers no tool call of the assistant turn just before "
                    "(or answers it twice)"
                )
            else:
                del pending[answered]
    if pending:
        out.append(f"{label} ends with unanswered tool call(s) {', '.join(sorted(pending))}; add their tool turns")
    return out


# conversion ------------------------------------------------------------------------------------


def text_of(content: Any) -> str:
    """The text of string content, or of text and refusal parts joined by blank lines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n\n".join(part.get("text", part.get("refusal", "")) for part in content)


def _responses_part(part: Mapping[str, Any]) -> dict[str, Any]:
    kind = part["type"]
    if kind == "text":
        return {"type": "input_text", "text": part["text"]}
    if kind == "image_url":
        # Responses requires `detail`; Chat leaves it optional, meaning auto
        return {
            "type": "input_image",
            "image_url": part["image_url"]["url"],
            "detail": part["image_url"].get("detail", "auto"),
        }
    return {"type": "input_file", **{key: value for key, value in part["file"].items() if value is not None}}


def to_responses_input(turns: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Responses input items for checked Chat turns.

    Messages stay messages; an assistant's tool calls become `function_call` items after its text,
    and tool turns `function_call_output` items. Assistant text is sent as a plain string: the
    typed `output_text` part needs the whole output-message shape (id, status, annotations).
    """
    items: list[dict[str, Any]] = []
    for turn in turns:
        role = turn["role"]
        if role in ("system", "developer", "user"):
            content = turn["content"]
            items.append(
                {
                    "role": role,
                    "content": content if isinstance(content, str) else [_responses_part(p) for p in content],
                }
            )
        elif role == "assistant":
            text = text_of(turn.get("content")) or turn.get("refusal") or ""
            if text:
                items.append({"role": "assistant", "content": text})
            for call in turn.get("tool_calls") or ():
                function = call["function"]
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call["id"],
                        "name": function["name"],
                        "arguments": function["arguments"],
                    }
                )
        else:
            items.append(
                {"type": "function_call_output", "call_id": turn["tool_call_id"], "output": text_of(turn["content"])}
            )
    return items


def _anthropic_part(part: Mapping[str, Any]) -> dict[str, Any]:
    kind = part["type"]
    if kind in ("text", "refusal"):
        return {"type": "text", "text": part[kind]}
    if kind == "image_url":
        url = part["image_url"]["url"]
        match = _DATA_URL.match(url)
        if match:
            return {"type": "image", "source": {"type": "base64", "media_type": match["mime"], "data": match["data"]}}
        return {"type": "image", "source": {"type": "url", "url": url}}
    file = part["file"]
    if file.get("file_data"):
        match = _DATA_URL.match(file["file_data"])
        data = match["data"] if match else ""
        block: dict[str, Any] = {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": data},
        }
    else:
        block = {"type": "document", "source": {"type": "file", "file_id": file["file_id"]}}
    if file.get("filename"):
        block["title"] = file["filename"]
    return block


def _blocks(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    return [_anthropic_part(part) for part in content if not (part["type"] == "text" and not part["text"].strip())]


def to_anthropic(turns: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """`{"system": text or None, "messages": [...]}` for checked Chat turns.

    - system and developer turns before the first other turn become the top-level `system`,
      joined by blank lines; a later one is folded into the user side as a `<system>…</system>`
      text block, which every Claude model takes (only the newest take system turns mid-way);
    - an assistant's tool calls become `tool_use` blocks whose `input` is the parsed arguments;
    - tool turns become `tool_result` blocks, first in the next user message;
    - turns of the same role in a row are merged, so roles alternate and the body is the same
      whatever the API would merge by itself; `name` has no counterpart and is dropped;
    - a message whose only block is plain text carries that text as its string content.
    """
    system: list[str] = []
    messages: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": list(blocks)})

    for turn in turns:
        role = turn["role"]
        if role in ("system", "developer"):
            text = text_of(turn["content"])
            if not messages:
                system.append(text)
            elif text.strip():
                add("user", [{"type": "text", "text": f"<system>\n{text}\n</system>"}])
        elif role == "user":
            add("user", _blocks(turn["content"]))
        elif role == "assistant":
            blocks = _blocks(turn.get("content"))
            if not blocks and turn.get("refusal"):
                blocks = [{"type": "text", "text": turn["refusal"]}]
            for call in turn.get("tool_calls") or ():
                function = call["function"]
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call["id"],
                        "name": function["name"],
                        "input": load_json(function["arguments"]),
                    }
                )
            add("assistant", blocks)
        else:
            content = turn["content"]
            result = {
                "type": "tool_result",
                "tool_use_id": turn["tool_call_id"],
                "content": content if isinstance(content, str) else _blocks(content),
            }
            add("user", [result])
    for message in messages:
        blocks = message["content"]
        if len(blocks) == 1 and blocks[0]["type"] == "text" and set(blocks[0]) == {"type", "text"}:
            message["content"] = blocks[0]["text"]
    joined = "\n\n".join(text for text in system if text.strip())
    return {"system": joined or None, "messages": messages}


def copied(turns: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Plain-dict deep copies of checked turns, so a caller changing its list later changes nothing here."""
    return [copy.deepcopy(dict(turn)) for turn in turns]
