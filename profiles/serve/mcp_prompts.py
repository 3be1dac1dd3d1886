"""MCP prompts: each persona of the served folder, and each of its prompt kinds, as an MCP prompt.

`prompts/list` names one prompt per persona (`summarizer`: its chat messages by its `messages:`
layout) and one per prompt kind (`summarizer.system`: that prompt alone). A prompt's arguments are
what its templates read that nothing else fills: the inputs the persona declares under `inputs:`,
with their `description` and `required` (required when the declaration says so and gives no
default), `question` wherever a kind takes one, and, for a persona without declarations, the
variables its templates read, required unless `variables:` gives a default. Argument values come
as text and are read by the declared type (`max_labels: "2"` is the integer 2).

`prompts/get` renders the messages as `profile.format_messages` does (a kind's prompt as
`profiles render --kind` does), secrets masked. MCP prompt messages have only the roles `user`
and `assistant`, so a system (or developer) prompt goes out as a `user` message whose content's
`_meta` says what it is: `{"agent-profiles/role": "system"}`. Every message carries that key, so
a client rebuilding the chat can send each as its own role.

Built on the official SDK's low-level `Server`: listing and rendering are plain functions of the
folder, read again at every request, so an edited persona shows at the next `prompts/list`. The
same server answers over stdio (`profiles mcp PATH`) and over streamable HTTP at `/mcp/` of
`profiles serve`, where it is read-only and needs no token.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..errors import ProfilesError, ServeError
from ..messages import MessageSlot, role_of
from .personas import PersonaFolder, RenderContext, mask_secrets

__all__ = ["ROLE_META", "McpPrompt", "PromptCatalog", "answerable", "build_server", "serve_stdio"]

log = logging.getLogger("profiles.serve.mcp")

#: The content `_meta` key naming the role a message stands for (`system`, `developer`, `user`, …).
ROLE_META = "agent-profiles/role"
#: Separates a persona's name from a prompt kind in a prompt's name: `summarizer.system`.
KIND_SEPARATOR = "."
#: Roles an MCP prompt message may have.
_MCP_ROLES = ("user", "assistant")


@dataclass(frozen=True)
class McpPrompt:
    """One prompt as `prompts/list` names it: a persona's messages, or one of its prompt kinds."""

    name: str
    persona: str
    kind: str | None
    description: str
    #: (name, description, required) of each argument.
    arguments: tuple[tuple[str, str, bool], ...]


class PromptCatalog:
    """The MCP prompts of a folder's personas (or of one persona file) for one context."""

    def __init__(self, folder: PersonaFolder, context: RenderContext, *, only: str | None = None) -> None:
        self.folder = folder
        self.context = context
        self.only = only
        self._reported: set[tuple[str, str]] = set()  # each problem is logged once, not at every listing

    def bases(self) -> dict[str, str]:
        """Each persona file's prompt name (its stem; its file name where two stems clash), in order."""
        names: dict[str, str] = {}
        for path in self.folder.files():
            relative = self.folder.relative(path)
            if self.only is not None and relative != self.only:
                continue
            names[relative if path.stem in names else path.stem] = relative
        return names

    def prompts(self) -> list[McpPrompt]:
        """Every prompt of every persona that loads; one that does not is left out (and logged once)."""
        found: list[McpPrompt] = []
        for base, relative in self.bases().items():
            try:
                found.extend(self._of(base, relative))
            except (ProfilesError, Warning) as exc:
                problem = (relative, self.folder.clean(str(exc)))
                if problem not in self._reported:
                    self._reported.add(problem)
                    log.warning("%s is left out of the MCP prompts: %s", *problem)
        return found

    def find(self, name: str) -> tuple[McpPrompt, Any]:
        """The prompt called `name` and its persona's profile, reading only that persona.

        Raises:
            ServeError: there is no such prompt (404).
        """
        bases = self.bases()
        for base in sorted(bases, key=len, reverse=True):  # `a.b` before `a` when both are personas
            if name != base and not name.startswith(base + KIND_SEPARATOR):
                continue
            relative = bases[base]
            try:
                config = self.folder.config(relative)
                profile = self.folder.profile(relative, self.context, config=config)
            except (ProfilesError, Warning):
                break
            kind = None if name == base else name[len(base) + 1 :]
            if kind is not None and kind not in self.folder.kinds(profile):
                continue
            return self._prompt(base, relative, config, profile, kind), profile
        known = ", ".join(sorted(bases)) or "none"
        raise ServeError(
            f"no prompt {name[:200]!r}; each persona ({known}) is a prompt, and so is each of its kinds "
            f"(<persona>{KIND_SEPARATOR}system, …); see prompts/list",
            status=404,
        )

    def _of(self, base: str, relative: str) -> list[McpPrompt]:
        config = self.folder.config(relative)
        profile = self.folder.profile(relative, self.context, config=config)
        kinds = (None, *self.folder.kinds(profile))
        return [self._prompt(base, relative, config, profile, kind) for kind in kinds]

    def _prompt(self, base: str, relative: str, config: Any, profile: Any, kind: str | None) -> McpPrompt:
        # a secret name or goal is masked here as everywhere: a listing is an answer too
        name, role, goal = (
            mask_secrets(profile, value) for value in (profile.get_name(), profile.get_role(), profile.get_goal())
        )
        about = ", ".join(str(part) for part in (name, role) if part) or base
        if kind is None:
            layout = tuple(slot.kind for slot in profile.layout if slot.kind)
            description = f"{about}: the chat messages ({', '.join(layout)})" + (f". {goal}" if goal else "")
            return McpPrompt(base, relative, None, description, self._arguments(relative, config, profile, layout))
        return McpPrompt(
            f"{base}{KIND_SEPARATOR}{kind}",
            relative,
            kind,
            f"{about}: the {kind} prompt",
            self._arguments(relative, config, profile, (kind,)),
        )

    def _arguments(
        self, relative: str, config: Any, profile: Any, kinds: tuple[str, ...]
    ) -> tuple[tuple[str, str, bool], ...]:
        fields = self.folder.inputs(relative, profile, kinds, config=config)
        return tuple((item.name, item.description, item.required) for item in fields)

    def render(self, name: str, arguments: dict[str, str] | None) -> tuple[McpPrompt, list[tuple[str, str]]]:
        """The prompt called `name` rendered with `arguments`: (its listing, [(role, text), …]).

        Raises:
            ServeError: no such prompt, or a required argument is missing (404 and 422).
            ProfilesError: the render fails or trips a bound.
        """
        prompt, profile = self.find(name)
        given = {str(key): str(value) for key, value in (arguments or {}).items()}
        missing = [arg for arg, _, required in prompt.arguments if required and not given.get(arg)]
        if missing:
            raise ServeError(f"prompt {name!r} needs the argument(s) {', '.join(missing)}", status=422)
        unknown = sorted(set(given) - {arg for arg, _, _ in prompt.arguments})
        if unknown:
            raise ServeError(f"prompt {name!r} takes no argument(s) {', '.join(unknown)}", status=422)
        question = given.pop("question", None) or None
        variables = self.folder.typed(profile, {key: value for key, value in given.items() if value != ""})
        if prompt.kind is None:
            messages = self.folder.messages(
                prompt.persona, self.context, question=question, variables=variables, profile=profile
            )
            return prompt, [(message["role"], _text(message.get("content"))) for message in messages]
        text = self.folder.render(
            prompt.persona, prompt.kind, self.context, question=question, variables=variables, profile=profile
        )
        role = role_of(MessageSlot(kind=prompt.kind), profile.roles)
        return prompt, [(role, text)]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    import json

    return json.dumps(content, ensure_ascii=False)


def build_server(catalog: PromptCatalog) -> Any:
    """The SDK's low-level MCP server answering `prompts/list` and `prompts/get` from `catalog`."""
    import anyio
    import mcp_types as types
    from mcp import MCPError
    from mcp.server import Server

    def listed() -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=prompt.name,
                    description=prompt.description,
                    arguments=[
                        types.PromptArgument(name=arg, description=about or None, required=required)
                        for arg, about, required in prompt.arguments
                    ],
                )
                for prompt in catalog.prompts()
            ]
        )

    def got(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        try:
            prompt, messages = catalog.render(name, arguments)
        except ServeError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=exc.message) from None
        except (ProfilesError, Warning) as exc:
            message = exc.message if isinstance(exc, ProfilesError) else str(exc)
            raise MCPError(code=types.INVALID_PARAMS, message=catalog.folder.clean(message)) from None
        return types.GetPromptResult(
            description=prompt.description,
            messages=[
                types.PromptMessage(
                    role=role if role in _MCP_ROLES else "user",
                    content=types.TextContent(type="text", text=text, _meta={ROLE_META: role}),
                )
                for role, text in messages
            ],
        )

    async def on_list_prompts(_ctx: Any, _params: Any) -> types.ListPromptsResult:
        return await anyio.to_thread.run_sync(listed)

    async def on_get_prompt(_ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        try:
            return await anyio.to_thread.run_sync(got, params.name, params.arguments)
        except MCPError:
            raise
        except Exception as exc:  # a fault of ours: named, never detailed (it could quote a secret)
            log.error("internal error rendering MCP prompt %r: %s", params.name[:200], type(exc).__name__)
            raise MCPError(
                code=types.INTERNAL_ERROR, message=f"internal error: {type(exc).__name__}; please report it"
            ) from None

    async def explain_bad_params(ctx: Any, call_next: Any) -> Any:
        # the SDK refuses malformed params with a bare "Invalid request parameters"; say what and how
        if isinstance(ctx.params, dict) and isinstance(ctx.params.get(_UNREADABLE), str):
            raise MCPError(code=types.INVALID_PARAMS, message=f"{ctx.method}: {ctx.params[_UNREADABLE]}")
        if ctx.method == "prompts/list" and isinstance(ctx.params, dict):
            cursor = ctx.params.get("cursor")
            if cursor is not None and not isinstance(cursor, str):
                raise MCPError(
                    code=types.INVALID_PARAMS,
                    message=f"prompts/list: 'cursor' must be text (a nextCursor a listing gave), got "
                    f"{type(cursor).__name__}; this server lists every prompt at once, so send none",
                )
        if ctx.method == "prompts/get":
            problem = _params_problem(ctx.params)
            if problem:
                raise MCPError(code=types.INVALID_PARAMS, message=f"prompts/get: {problem}")
        return await call_next(ctx)

    server = Server(
        "agent-profiles",
        version=__version__,
        instructions="Prompts of agent-profiles personas: one per persona (its chat messages) and one per "
        f"prompt kind. A message's content _meta[{ROLE_META!r}] names its role (system, user, …).",
        on_list_prompts=on_list_prompts,
        on_get_prompt=on_get_prompt,
    )
    server.middleware.append(explain_bad_params)
    return server


def _params_problem(params: Any) -> str:
    """What is wrong with the params of a `prompts/get`, for its error; "" when the SDK may take them."""
    if params is None or not isinstance(params, dict):
        return 'params must be an object: {"name": "<prompt>", "arguments": {"<name>": "<text>"}}'
    name = params.get("name")
    if not isinstance(name, str):
        return f"'name' must be the prompt's name as text (see prompts/list), got {type(name).__name__}"
    arguments = params.get("arguments")
    if arguments is None:
        return ""
    if not isinstance(arguments, dict):
        return f"'arguments' must be an object of name to text, got {type(arguments).__name__}"
    for key, value in arguments.items():
        if not isinstance(value, str):
            spelled = json.dumps(value) if isinstance(value, (int, float, bool)) else "…"
            return (
                f"argument {str(key)[:100]!r} is {type(value).__name__}, but MCP arguments are text; "
                f'send it as a string, e.g. "{spelled[:100]}"'
            )
    return ""


#: The params key through which a request the SDK's reader would drop is answered instead.
_UNREADABLE = "agent-profiles/unreadable"


def answerable(line: str) -> str:
    """A line of standard input (or a body posted to `/mcp/`) as the SDK's reader should get it.

    That reader refuses JSON that spells half a surrogate pair (`"\\ud800"`), as a string may
    in JSON but not in Unicode, and answers nothing: the client waited for ever. Such a request
    is handed on with the same id and method and params that only say what was wrong, which the
    server answers as an error. Any other line is handed on as it is.
    """
    if "\\ud" not in line.lower():  # no escape of a surrogate: nothing for this to do
        return line
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return line
    if not isinstance(message, dict) or not isinstance(message.get("id"), (int, str)):
        return line
    method, found = message.get("method"), _surrogate_in(message)
    if not isinstance(method, str) or not found or _surrogate_in({"id": message["id"], "method": method}):
        return line
    where, text = found
    problem = (
        f"{where} holds {text!r}, half of a surrogate pair, which is not Unicode text; "
        "send the whole character or remove it"
    )
    return json.dumps({"jsonrpc": "2.0", "id": message["id"], "method": method, "params": {_UNREADABLE: problem}})


def _surrogate_in(value: Any, where: str = "the request") -> tuple[str, str] | None:
    """Where the first text holding half a surrogate pair is in `value`, and that half."""
    stack = [(where, value)]
    while stack:
        place, item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                return place, item[exc.start]
        elif isinstance(item, dict):
            for key, inner in item.items():
                stack.append((place, key))
                stack.append((f"{place}.{key}" if place != "the request" else str(key), inner))
        elif isinstance(item, list):
            stack.extend((f"{place}[{index}]", inner) for index, inner in enumerate(item))
    return None


#: The `id` of a request, found in a line that is not JSON: a number, or a string without escapes.
_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}(?![\d.eE])|"[^"\\]{0,200}")')


def rescued(line: str, readable: Any) -> str:
    """A request line the SDK's stdio reader would drop, as one the server answers with what is wrong.

    That reader gives up on a line that is not JSON, or not JSON-RPC 2.0 (no `"jsonrpc": "2.0"`, a
    method that is no text, params that are no object), without a word, and the client waits for
    its answer for ever; over HTTP the same request is a 400. A line that names its request's `id`
    is handed on as a request of that id whose params say what was wrong; any other line (a
    notification, a line with no id to answer) as it is. `readable(line)` raises where the SDK's
    reader would.
    """
    if not line.strip():
        return line
    try:
        readable(line)
    except Exception:  # noqa: BLE001 - whatever the reader refuses; why is found below
        pass
    else:
        return line
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested past what Python reads
        found = _ID.findall(line)
        if len(found) != 1:
            return line
        ident, method = json.loads(found[0]), "request"
        if isinstance(exc, RecursionError):
            problem = "the line nests arrays or objects too deeply to be read; send a flatter request"
        else:
            where = f" ({exc.msg} at column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
            problem = f"the line is not JSON{where}; send one JSON-RPC 2.0 object per line"
    else:
        if not isinstance(message, dict) or isinstance(message.get("id"), bool):
            return line
        ident, method = message.get("id"), message.get("method")
        if not isinstance(ident, (int, str)):
            return line
        method = method if isinstance(method, str) and method else "request"
        if message.get("jsonrpc") != "2.0":
            problem = f'"jsonrpc" must be "2.0", got {json.dumps(message.get("jsonrpc"))[:40]}'
        elif not isinstance(message.get("method"), str):
            problem = f"'method' must be the method's name as text, got {type(message.get('method')).__name__}"
        elif "params" in message and not isinstance(message["params"], dict):
            problem = f"'params' must be an object, got {type(message['params']).__name__}"
        else:
            return line
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": {_UNREADABLE: problem}})


class _AnswerableLines:
    """Standard input, line by line, each through `answerable` and `rescued`."""

    def __init__(self, lines: Any) -> None:
        self._lines = lines

    async def __aiter__(self) -> Any:
        import mcp_types as types

        def readable(line: str) -> None:
            types.jsonrpc_message_adapter.validate_json(line, by_name=False)

        async for line in self._lines:
            yield rescued(answerable(line), readable)


def serve_stdio(catalog: PromptCatalog) -> None:
    """Answer MCP over standard input and output until the client closes them.

    Nothing else may write to standard output: it is the protocol's channel.
    """
    import io
    import sys

    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(catalog)

    async def run() -> None:
        # read as the SDK reads it (UTF-8, a bad byte replaced), with the requests it drops answered
        text = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        lines = _AnswerableLines(anyio.wrap_file(text))
        async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)
