"""The JSON API under `/api`: a folder's personas and the prompt store, described at `/openapi.json`.

Reads answer with an `ETag`, and `If-None-Match` gives an empty 304, so an agent can poll a
prompt or a label every second for the cost of a hash. Writes (`put`, `label`) need the bearer
token. Every error is `{"error": <class>, "message": <what, where, how to fix>, "status": …}`.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from .. import __version__
from ..errors import ServeError
from ..store.models import PromptVersion
from .etag import json_with_etag
from .personas import RenderContext
from .state import ServeState, state_of
from .store_access import summary_dict, version_dict

__all__ = ["router"]

router = APIRouter(prefix="/api")

_bearer = HTTPBearer(
    auto_error=False,
    description="The token `profiles serve` prints at start, or PROFILES_SERVE_TOKEN. Only writes need it.",
)

#: Declared on every read, for the API page.
_NOT_MODIFIED = {304: {"description": "Not modified: the `If-None-Match` tag is still current"}}
_ERRORS = {
    400: {"description": "The request is malformed"},
    404: {"description": "No such persona, prompt kind or prompt"},
    422: {"description": "The persona is invalid, or the render failed or tripped a bound"},
}


def _state(request: Request) -> ServeState:
    return state_of(request)


State = Annotated[ServeState, Depends(_state)]
IfNoneMatch = Annotated[str | None, Header(include_in_schema=False)]
Deployment = Annotated[str | None, Query(description="Deployment: picks the overlay, .env file and label chain")]
Language = Annotated[str | None, Query(description="Answer language and template locale, e.g. zh-TW")]
Model = Annotated[str | None, Query(description="The model the prompts are for")]


def _writer(request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> str:
    """Let a write through with the bearer token, or refuse it (401, or 403 on a read-only server)."""
    return state_of(request).check_write(credentials.credentials if credentials else None)


Writer = Annotated[str, Depends(_writer)]


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
    ok: bool = Field(description="Whether the persona loads")
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


class StoredVersion(BaseModel):
    name: str
    language: str
    model: str
    version: int
    ref: str
    content: str
    created_at: str
    author: str
    note: str
    labels: list[str]


class Found(StoredVersion):
    matched: str | None = Field(description="The entry of `chain` that picked it (`latest`: the newest version)")


class StoredPrompt(BaseModel):
    name: str
    language: str
    model: str
    latest_version: int
    updated_at: str
    labels: dict[str, int]


class StoreList(BaseModel):
    store: str
    prompts: list[StoredPrompt]


class History(BaseModel):
    name: str
    language: str
    model: str
    versions: list[StoredVersion]


class Diff(BaseModel):
    name: str
    from_ref: str
    to_ref: str
    diff: str = Field(description="A unified diff; empty when the versions are equal")


class PutRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=1000)
    content: str
    language: str | None = Field(None, max_length=100)
    model: str | None = Field(None, max_length=200)
    author: str = Field("", max_length=1000)
    note: str = Field("", max_length=10_000)
    label: str | None = Field(None, max_length=200, description="Point this label at the new version")


class LabelRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=1000)
    label: str = Field(max_length=200)
    version: int = Field(ge=1)
    language: str | None = Field(None, max_length=100)
    model: str | None = Field(None, max_length=200)


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


@router.get("/personas", response_model=PersonaList, responses=_NOT_MODIFIED, tags=["personas"])
def list_personas(state: State, if_none_match: IfNoneMatch = None) -> Response:
    """Every persona file of the served folder, with its problems when it does not load."""
    entries = [entry.to_dict() for entry in state.folder.entries()]
    return json_with_etag({"folder": state.folder.root.name, "personas": entries}, if_none_match)


@router.get(
    "/personas/{path:path}/explain",
    response_model=Explained,
    responses={**_NOT_MODIFIED, **_ERRORS},
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


@router.post("/personas/{path:path}/render", response_model=Rendered, responses=_ERRORS, tags=["personas"])
def render_persona(path: str, body: RenderRequest, state: State) -> dict[str, Any]:
    """Render one prompt kind for a context, with variables; secrets are masked in the answer."""
    context = RenderContext.of(body.deployment, body.language, body.model)
    text = state.folder.render(
        path, body.kind, context, question=body.question, variables=body.variables, strict=body.strict
    )
    return {"persona": path, "kind": body.kind, "context": context.to_dict(), "text": text}


@router.get(
    "/personas/{path:path}/prompts/{kind}",
    response_model=Rendered,
    responses={**_NOT_MODIFIED, **_ERRORS},
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
    variables = {
        key.removeprefix("var."): value for key, value in request.query_params.multi_items() if key.startswith("var.")
    }
    text = state.folder.render(path, kind, context, question=question, variables=variables)
    payload = {"persona": path, "kind": kind, "context": context.to_dict(), "text": text}
    return json_with_etag(payload, if_none_match)


@router.get(
    "/personas/{path:path}", response_model=PersonaDetail, responses={**_NOT_MODIFIED, **_ERRORS}, tags=["personas"]
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
    payload.update(kinds=[], variables={}, samples={})
    if entry.ok:
        config = state.folder.config(path)
        profile = state.folder.profile(path, RenderContext.of(deployment, language, model))
        payload.update(
            kinds=list(state.folder.kinds(profile)),
            variables=dict(config.variables),
            samples=dict(config.samples),
        )
    return json_with_etag(payload, if_none_match)


# -- the store -------------------------------------------------------------------------------------

Name = Annotated[str, Query(description="The prompt's name, e.g. summarizer/name", max_length=1000)]


@router.get("/store/prompts", response_model=StoreList, responses=_NOT_MODIFIED, tags=["store"])
def list_prompts(state: State, if_none_match: IfNoneMatch = None) -> Response:
    """Every prompt key with its newest version and where each label points."""
    prompts = [summary_dict(summary) for summary in state.store.list()]
    return json_with_etag({"store": state.store.display, "prompts": prompts}, if_none_match)


@router.get("/store/prompt", response_model=Found, responses={**_NOT_MODIFIED, **_ERRORS}, tags=["store"])
def get_prompt_version(
    state: State,
    name: Name,
    language: Language = None,
    model: Model = None,
    label: Annotated[str | None, Query(description="Read the version this label points at", max_length=200)] = None,
    version: Annotated[int | None, Query(ge=1, description="Read this version")] = None,
    chain: Annotated[
        str | None,
        Query(
            description="Labels to try in order, comma-separated; `latest` is the newest version "
            "(what the `store` provider asks for a deployment)",
            max_length=2000,
        ),
    ] = None,
    if_none_match: IfNoneMatch = None,
) -> Response:
    """The best matching version: the language, then its fallbacks; the model, then none."""
    store = state.store.require()
    matched: str | None = None
    if chain is not None:
        if label is not None or version is not None:
            raise ServeError("give chain, label or version, not several", status=422)
        labels = [item.strip() for item in chain.split(",") if item.strip()]
        if not labels or len(labels) > 20:
            raise ServeError("chain names 1 to 20 labels, e.g. staging,production,latest", status=422)
        record, picked = store.find(
            name, language=language, model=model, labels=[None if item == "latest" else item for item in labels]
        )
        matched = "latest" if picked is None else picked
    else:
        record = store.get(name, language=language, model=model, label=label, version=version)
        matched = label
    return json_with_etag({**version_dict(record), "matched": matched}, if_none_match)


@router.get("/store/history", response_model=History, responses={**_NOT_MODIFIED, **_ERRORS}, tags=["store"])
def prompt_history(
    state: State, name: Name, language: Language = None, model: Model = None, if_none_match: IfNoneMatch = None
) -> Response:
    """Every version of one exact prompt key, oldest first, with its labels."""
    versions = state.store.require().history(name, language=language, model=model)
    first = versions[0]
    payload = {
        "name": first.name,
        "language": first.language,
        "model": first.model,
        "versions": [version_dict(record) for record in versions],
    }
    return json_with_etag(payload, if_none_match)


@router.get("/store/diff", response_model=Diff, responses={**_NOT_MODIFIED, **_ERRORS}, tags=["store"])
def prompt_diff(
    state: State,
    name: Name,
    from_version: Annotated[int, Query(alias="from", ge=1)],
    to_version: Annotated[int, Query(alias="to", ge=1)],
    language: Language = None,
    model: Model = None,
    if_none_match: IfNoneMatch = None,
) -> Response:
    """A unified diff of one prompt from one version to another."""
    store = state.store.require()
    old = store.get(name, language=language, model=model, version=from_version)
    new = store.get(name, language=language, model=model, version=to_version)
    text = store.diff(name, from_version, to_version, language=language, model=model)
    payload = {"name": old.name, "from_ref": old.ref, "to_ref": new.ref, "diff": text}
    return json_with_etag(payload, if_none_match)


@router.post(
    "/store/put",
    response_model=StoredVersion,
    status_code=201,
    responses={401: {"description": "No token, or a wrong one"}, 403: {"description": "The server is read-only"}},
    tags=["store"],
)
def put_prompt(body: PutRequest, state: State, _writer: Writer) -> dict[str, Any]:
    """Add a new version of a prompt (its newest number plus one), optionally pointing a label at it."""
    record = state.store.writer().put(
        body.name,
        body.content,
        language=body.language,
        model=body.model,
        author=body.author,
        note=body.note,
        label=body.label,
    )
    return version_dict(record)


@router.post(
    "/store/label",
    response_model=StoredVersion,
    responses={
        401: {"description": "No token, or a wrong one"},
        403: {"description": "The server is read-only"},
        404: {"description": "No such version"},
    },
    tags=["store"],
)
def move_label(body: LabelRequest, state: State, _writer: Writer) -> dict[str, Any]:
    """Point a label of one prompt key at a version, moving it if it pointed elsewhere."""
    store = state.store.require()
    record: PromptVersion = store.set_label(
        body.name, body.label, body.version, language=body.language, model=body.model
    )
    return version_dict(record)
