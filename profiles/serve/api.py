"""The persona half of the JSON API under `/api`: list, read, explain and render a folder's personas.

Reads answer with an `ETag`, and `If-None-Match` gives an empty 304, so an agent can poll a
rendered prompt every second for the cost of a hash. Rendering changes nothing, so it needs no
token. Every error is `{"error": <class>, "message": <what, where, how to fix>, "status": …}`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from .. import __version__
from ..errors import ServeError
from .deps import ERRORS, NOT_MODIFIED, Deployment, IfNoneMatch, Language, Model, State, UniqueKeysRoute
from .etag import json_with_etag
from .personas import RenderContext

__all__ = ["router"]

router = APIRouter(prefix="/api", route_class=UniqueKeysRoute)

# -- models: what the API page documents ----------------------------------------------------------


class Issue(BaseModel):
    file: str | None
    line: int | None
    column: int | None
    field: str
    message: str
    text: str = Field(description="The problem as `profiles validate` prints it: file:line:column: …")


class PersonaSummary(BaseModel):
    path: str = Field(description="The file, relative to the served folder")
    ok: bool = Field(description="Whether `profiles validate` passes it")
    loads: bool = Field(description="Whether it loads (and so renders), problems or not")
    name: str | None
    role: str | None
    deployments: list[str]
    issues: list[Issue]


class PersonaList(BaseModel):
    folder: str
    personas: list[PersonaSummary]


class PersonaDetail(PersonaSummary):
    kinds: list[str] = Field(description="The prompt kinds it renders")
    variables: dict[str, Any] = Field(description="Defaults of its template variables")
    samples: dict[str, Any]
    inputs: dict[str, Any] = Field(description="Its declared inputs (`inputs:`), as the persona file writes them")
    inputs_schema: dict[str, Any] = Field(description="The JSON Schema of an object holding every input")
    layout: list[dict[str, Any]] = Field(description="Its message layout (`messages:`)")


class ExplainRow(BaseModel):
    field: str
    value: Any = Field(description="The value, `***` when secret")
    source: str
    secret: bool


class Explained(BaseModel):
    persona: str
    context: dict[str, str | None]
    rows: list[ExplainRow]


class RenderRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str = Field(
        "system", description="system, user, write_memory, react, or a kind of the persona", max_length=200
    )
    question: str | None = None
    deployment: str | None = None
    language: str | None = None
    model: str | None = None
    variables: dict[str, Any] = Field(default_factory=dict, description="Template variables")
    strict: bool = Field(False, description="Refuse variables no template uses")


class Rendered(BaseModel):
    persona: str
    kind: str
    context: dict[str, str | None]
    text: str = Field(description="The prompt, secrets masked")


class _Chat(BaseModel):
    """What the messages and the request of a persona take."""

    model_config = ConfigDict(extra="forbid")

    question: str | None = None
    deployment: str | None = None
    language: str | None = None
    model: str | None = Field(None, description="The model: picks the templates, and is the request's model")
    variables: dict[str, Any] = Field(default_factory=dict, description="Template variables and declared inputs")
    history: list[dict[str, Any]] | None = Field(
        None, description="Earlier chat turns ({role, content}, OpenAI Chat shape), placed by the layout"
    )
    strict: bool = Field(False, description="Refuse variables no prompt of the layout uses")


class MessagesRequest(_Chat):
    style: Literal["openai", "anthropic"] = Field(
        "openai", description="OpenAI's message list, or Anthropic's {system, messages}"
    )


class RequestRequest(_Chat):
    api: Literal["openai-chat", "openai-responses", "anthropic"] = "openai-chat"


class Messages(BaseModel):
    persona: str
    context: dict[str, str | None]
    style: str
    messages: Any = Field(description="The chat messages (secrets masked), in the style asked for")


class RequestBody(BaseModel):
    persona: str
    context: dict[str, str | None]
    api: str
    request: dict[str, Any] = Field(description="The request body for the API (secrets masked, never an API key)")


class Health(BaseModel):
    status: str
    version: str
    read_only: bool
    store: str


# -- personas ---------------------------------------------------------------------------------------


@router.get("/health", response_model=Health, tags=["server"])
def health(state: State) -> dict[str, Any]:
    """Whether the server answers, and how it is set up."""
    return {
        "status": "ok",
        "version": __version__,
        "read_only": state.settings.read_only,
        "store": state.store.display,
    }


@router.get("/personas", response_model=PersonaList, responses=NOT_MODIFIED, tags=["personas"])
def list_personas(state: State, if_none_match: IfNoneMatch = None) -> Response:
    """Every persona file of the served folder, with its problems when it does not load."""
    entries = [entry.to_dict() for entry in state.folder.entries()]
    return json_with_etag({"folder": state.folder.root.name, "personas": entries}, if_none_match)


@router.get(
    "/personas/{path:path}/explain",
    response_model=Explained,
    responses={**NOT_MODIFIED, **ERRORS},
    tags=["personas"],
)
def explain_persona(
    path: str,
    state: State,
    deployment: Deployment = None,
    language: Language = None,
    model: Model = None,
    if_none_match: IfNoneMatch = None,
) -> Response:
    """Each field's value and where it came from, as `profiles explain` shows them; secrets masked."""
    context = RenderContext.of(deployment, language, model)
    rows = state.folder.explain(path, context)
    return json_with_etag({"persona": path, "context": context.to_dict(), "rows": rows}, if_none_match)


@router.post("/personas/{path:path}/render", response_model=Rendered, responses=ERRORS, tags=["personas"])
def render_persona(path: str, body: RenderRequest, state: State) -> dict[str, Any]:
    """Render one prompt kind for a context, with variables; secrets are masked in the answer."""
    context = RenderContext.of(body.deployment, body.language, body.model)
    text = state.folder.render(
        path, body.kind, context, question=body.question, variables=body.variables, strict=body.strict
    )
    return {"persona": path, "kind": body.kind, "context": context.to_dict(), "text": text}


@router.post("/personas/{path:path}/messages", response_model=Messages, responses=ERRORS, tags=["personas"])
def persona_messages(path: str, body: MessagesRequest, state: State) -> dict[str, Any]:
    """The persona's prompts as chat messages, by its `messages:` layout, with the history in its slot."""
    context = RenderContext.of(body.deployment, body.language, body.model)
    messages = state.folder.messages(
        path,
        context,
        question=body.question,
        variables=body.variables,
        history=body.history,
        style=body.style,
        strict=body.strict,
    )
    return {"persona": path, "context": context.to_dict(), "style": body.style, "messages": messages}


@router.post("/personas/{path:path}/request", response_model=RequestBody, responses=ERRORS, tags=["personas"])
def persona_request(path: str, body: RequestRequest, state: State) -> dict[str, Any]:
    """A whole request body for one API: messages, tools, output schema and model settings."""
    context = RenderContext.of(body.deployment, body.language, body.model)
    request = state.folder.request(
        path,
        context,
        api=body.api,
        question=body.question,
        variables=body.variables,
        history=body.history,
        strict=body.strict,
    )
    return {"persona": path, "context": context.to_dict(), "api": body.api, "request": request}


@router.get(
    "/personas/{path:path}/prompts/{kind}",
    response_model=Rendered,
    responses={**NOT_MODIFIED, **ERRORS},
    tags=["personas"],
)
def get_prompt(
    path: str,
    kind: str,
    request: Request,
    state: State,
    deployment: Deployment = None,
    language: Language = None,
    model: Model = None,
    question: Annotated[str | None, Query(description="The question passed to the prompt")] = None,
    if_none_match: IfNoneMatch = None,
) -> Response:
    """Render one prompt kind, cheap to poll: variables as `var.NAME=value` query parameters."""
    context = RenderContext.of(deployment, language, model)
    variables: dict[str, str] = {}
    for key, value in request.query_params.multi_items():
        if not key.startswith("var."):
            continue
        if key.removeprefix("var.") in variables:
            # as for a JSON body's key named twice: the last would win without a word
            raise ServeError(f"{key[:100]!r} is given twice; give each variable once", status=422)
        variables[key.removeprefix("var.")] = value
    text = state.folder.render(path, kind, context, question=question, variables=variables)
    payload = {"persona": path, "kind": kind, "context": context.to_dict(), "text": text}
    return json_with_etag(payload, if_none_match)


@router.get(
    "/personas/{path:path}", response_model=PersonaDetail, responses={**NOT_MODIFIED, **ERRORS}, tags=["personas"]
)
def read_persona(
    path: str,
    state: State,
    deployment: Deployment = None,
    language: Language = None,
    model: Model = None,
    if_none_match: IfNoneMatch = None,
) -> Response:
    """One persona: its status, deployments, prompt kinds, variables and samples."""
    entry = state.folder.entry(path)
    payload = entry.to_dict()
    payload.update(kinds=[], variables={}, samples={}, inputs={}, inputs_schema={}, layout=[])
    if entry.loads:
        from ..inputs import inputs_schema

        config = state.folder.config(path)
        profile = state.folder.profile(path, RenderContext.of(deployment, language, model))
        payload.update(
            kinds=list(state.folder.kinds(profile)),
            variables=dict(config.variables),
            samples=dict(config.samples),
            inputs={name: spec.to_dict() for name, spec in profile.inputs.items()},
            inputs_schema=inputs_schema(profile.inputs),
            layout=[slot.to_dict() for slot in profile.layout],
        )
    return json_with_etag(payload, if_none_match)
