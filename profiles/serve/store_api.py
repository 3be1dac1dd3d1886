"""The store half of the JSON API under `/api/store`: read prompts, their history and label moves;
put versions and move labels with the token.

Reads answer with an `ETag` (a 304 for `If-None-Match`), so agents and the `store` provider over
HTTP poll a label cheaply. A label move may be a compare-and-set (`expect`: the version the label
must still point at, 0 for "not set yet"), refused with 409 when someone moved it meanwhile. A
protected label moves only with `force`, and `force` (like protecting a label) needs the admin
token (`PROFILES_SERVE_ADMIN_TOKEN`); the ordinary token gets 403.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import JSONResponse, Response

from ..errors import ServeError
from .deps import ERRORS, NOT_MODIFIED, IfNoneMatch, Language, Model, State, UniqueKeysRoute, Writer
from .etag import json_with_etag
from .store_access import match_dict, move_dict, protected_dict, summary_dict, version_dict

__all__ = ["router"]

router = APIRouter(prefix="/api/store", tags=["store"], route_class=UniqueKeysRoute)

Name = Annotated[str, Query(description="The prompt's name, e.g. summarizer/name", max_length=1000)]
_WRITE = {
    401: {"description": "No token, or a wrong one"},
    403: {"description": "The server is read-only, the label is protected, or `force` needs the admin token"},
    404: {"description": "No such prompt or version"},
    409: {"description": "`expect` no longer holds: the label moved since it was read"},
}
#: Most labels a chain may name.
MAX_CHAIN = 20


# -- models: what the API page documents ----------------------------------------------------------


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


class Put(StoredVersion):
    unchanged: bool = Field(description="The content was the newest version's already: no version was added")


class Arm(StoredVersion):
    weight: int


class Found(StoredVersion):
    matched: str | None = Field(description="The label that picked it; `latest`: the newest version")
    arms: list[Arm] = Field(description="Every version the label serves, with its weight (one unless rolled out)")


class StoredPrompt(BaseModel):
    name: str
    language: str
    model: str
    latest_version: int
    updated_at: str
    labels: dict[str, int]
    rollouts: dict[str, list[list[int]]] = Field(description="label → [[version, weight], …] when rolled out")


class Protected(BaseModel):
    label: str
    protected_at: str
    author: str


class StoreList(BaseModel):
    store: str
    prompts: list[StoredPrompt]
    protected: list[Protected]


class History(BaseModel):
    name: str
    language: str
    model: str
    versions: list[StoredVersion]


class Move(BaseModel):
    name: str
    language: str
    model: str
    label: str
    seq: int
    from_version: int | None
    to_version: int | None
    from_arms: list[list[int]]
    to_arms: list[list[int]]
    before: str
    after: str
    moved_at: str
    author: str
    note: str
    undoes: int | None


class Moves(BaseModel):
    moves: list[Move]


class Diff(BaseModel):
    name: str
    from_ref: str
    to_ref: str
    diff: str = Field(description="A unified diff; empty when the versions are equal")


class _Governed(BaseModel):
    """What every label write takes: who, why, the compare-and-set and the force."""

    model_config = ConfigDict(extra="forbid")

    language: str | None = Field(None, max_length=100)
    model: str | None = Field(None, max_length=200)
    author: str = Field("", max_length=1000)
    note: str = Field("", max_length=10_000)
    # strict: JSON's true is no version 1, and "yes" no force (pydantic would read them so)
    expect: int | None = Field(
        None,
        ge=0,
        strict=True,
        description="Move only if the label still points at this version (0: only if it is not set)",
    )
    force: bool = Field(False, strict=True, description="Move a protected label; needs the admin token")


class PutRequest(_Governed):
    name: str = Field(max_length=1000)
    content: str
    label: str | None = Field(None, max_length=200, description="Point this label at the new version")


class LabelRequest(_Governed):
    name: str = Field(max_length=1000)
    label: str = Field(max_length=200)
    version: int = Field(ge=1, strict=True)


class RolloutRequest(_Governed):
    name: str = Field(max_length=1000)
    label: str = Field(max_length=200)
    arms: dict[int, Annotated[int, Field(strict=True)]] = Field(
        description="version → weight, e.g. {3: 90, 4: 10}", max_length=100
    )


class UndoRequest(_Governed):
    name: str = Field(max_length=1000)
    label: str = Field(max_length=200)


class ProtectRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field(max_length=200)
    author: str = Field("", max_length=1000)


def _check_force(force: bool, role: str) -> None:
    if force and role != "admin":
        raise ServeError(
            "force moves a protected label, and needs the admin token (PROFILES_SERVE_ADMIN_TOKEN); "
            "this token may move unprotected labels only",
            status=403,
        )


def _admin(role: str, what: str) -> None:
    if role != "admin":
        raise ServeError(f"{what} needs the admin token (PROFILES_SERVE_ADMIN_TOKEN)", status=403)


# -- reading ---------------------------------------------------------------------------------------


@router.get("/prompts", response_model=StoreList, responses=NOT_MODIFIED)
def list_prompts(state: State, if_none_match: IfNoneMatch = None) -> Response:
    """Every prompt key with its newest version, where each label points, and the protected labels."""
    prompts = [summary_dict(summary) for summary in state.store.list()]
    protected = [protected_dict(item) for item in state.store.protected()]
    return json_with_etag({"store": state.store.display, "prompts": prompts, "protected": protected}, if_none_match)


@router.get("/prompt", response_model=Found, responses={**NOT_MODIFIED, **ERRORS})
def get_prompt(
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
    """The best matching version: the language, then its fallbacks; the exact model, then none.

    With a rolled-out label, `arms` holds every version it serves and its weight; a reader with a
    rollout key picks among them as the `store` provider does.
    """
    if sum(item is not None for item in (label, version, chain)) > 1:
        raise ServeError("give chain, label or version, not several", status=422)
    store = state.store.reads()
    if version is not None:
        match = store.match(name, language=language, model=model, version=version)
        payload = {**match_dict(match), "matched": None}
        return json_with_etag(payload, if_none_match)
    if chain is not None:
        labels = [item.strip() for item in chain.split(",") if item.strip()]
        if not labels or len(labels) > MAX_CHAIN:
            raise ServeError(f"chain names 1 to {MAX_CHAIN} labels, e.g. staging,production,latest", status=422)
        wanted: list[str | None] = [None if item == "latest" else item for item in labels]
    else:
        wanted = [label]
    match = store.match(name, language=language, model=model, labels=wanted)
    return json_with_etag(match_dict(match), if_none_match)


@router.get("/history", response_model=History, responses={**NOT_MODIFIED, **ERRORS})
def history(
    state: State, name: Name, language: Language = None, model: Model = None, if_none_match: IfNoneMatch = None
) -> Response:
    """Every version of one exact prompt key, oldest first, with its labels."""
    versions = state.store.reads().history(name, language=language, model=model)
    first = versions[0]
    payload = {
        "name": first.name,
        "language": first.language,
        "model": first.model,
        "versions": [version_dict(record) for record in versions],
    }
    return json_with_etag(payload, if_none_match)


@router.get("/moves", response_model=Moves, responses={**NOT_MODIFIED, **ERRORS})
def moves(
    state: State,
    name: Name,
    language: Language = None,
    model: Model = None,
    label: Annotated[str | None, Query(description="Only this label's moves", max_length=200)] = None,
    if_none_match: IfNoneMatch = None,
) -> Response:
    """The recorded label moves of one prompt key, oldest first: before, after, when, who and why."""
    found = state.store.reads().moves(name, language=language, model=model, label=label)
    return json_with_etag({"moves": [move_dict(move) for move in found]}, if_none_match)


@router.get("/diff", response_model=Diff, responses={**NOT_MODIFIED, **ERRORS})
def diff(
    state: State,
    name: Name,
    from_version: Annotated[int, Query(alias="from", ge=1)],
    to_version: Annotated[int, Query(alias="to", ge=1)],
    language: Language = None,
    model: Model = None,
    if_none_match: IfNoneMatch = None,
) -> Response:
    """A unified diff of one prompt from one version to another."""
    store = state.store.reads()
    old = store.get(name, language=language, model=model, version=from_version)
    new = store.get(name, language=language, model=model, version=to_version)
    text = store.diff(name, from_version, to_version, language=language, model=model)
    return json_with_etag({"name": old.name, "from_ref": old.ref, "to_ref": new.ref, "diff": text}, if_none_match)


@router.get("/protected", response_model=list[Protected], responses=NOT_MODIFIED)
def protected(state: State, if_none_match: IfNoneMatch = None) -> Response:
    """The labels that move only with `force` (and the admin token)."""
    return json_with_etag([protected_dict(item) for item in state.store.protected()], if_none_match)


# -- writing ---------------------------------------------------------------------------------------


@router.post("/put", response_model=Put, status_code=201, responses=_WRITE)
def put(body: PutRequest, state: State, role: Writer) -> Response:
    """Add a version (the newest number plus one), optionally pointing a label at it.

    Content equal to the newest version's adds nothing: the answer is 200 with `unchanged`.
    """
    _check_force(body.force, role)
    record = state.store.writes(create=True).put(
        body.name,
        body.content,
        language=body.language,
        model=body.model,
        author=body.author,
        note=body.note,
        label=body.label,
        expect=body.expect,
        force=body.force,
    )
    return JSONResponse({**version_dict(record), "unchanged": record.unchanged}, 200 if record.unchanged else 201)


@router.post("/label", response_model=StoredVersion, responses=_WRITE)
def move_label(body: LabelRequest, state: State, role: Writer) -> dict[str, Any]:
    """Point a label of one prompt key at a version, recorded in its move log."""
    _check_force(body.force, role)
    record = state.store.writes().set_label(
        body.name,
        body.label,
        body.version,
        language=body.language,
        model=body.model,
        expect=body.expect,
        force=body.force,
        author=body.author,
        note=body.note,
    )
    return version_dict(record)


@router.post("/rollout", response_model=list[Arm], responses=_WRITE)
def rollout(body: RolloutRequest, state: State, role: Writer) -> list[dict[str, Any]]:
    """Point a label at several versions with weights; readers with a rollout key split between them."""
    _check_force(body.force, role)
    arms = state.store.writes().rollout(
        body.name,
        body.label,
        body.arms,
        language=body.language,
        model=body.model,
        expect=body.expect,
        force=body.force,
        author=body.author,
        note=body.note,
    )
    return [{**version_dict(arm.record), "weight": arm.weight} for arm in arms]


@router.post("/undo", response_model=Move, responses=_WRITE)
def undo(body: UndoRequest, state: State, role: Writer) -> dict[str, Any]:
    """Move a label back to where it pointed before its last recorded move."""
    _check_force(body.force, role)
    move = state.store.writes().undo_label(
        body.name,
        body.label,
        language=body.language,
        model=body.model,
        expect=body.expect,
        force=body.force,
        author=body.author,
        note=body.note,
    )
    return move_dict(move)


@router.post("/protect", response_model=list[Protected], responses=_WRITE)
def protect(body: ProtectRequest, state: State, role: Writer) -> list[dict[str, Any]]:
    """Protect a label in the whole store (admin token): from then on it moves only with `force`."""
    _admin(role, "protecting a label")
    state.store.writes(create=True).protect(body.label, author=body.author)
    return [protected_dict(item) for item in state.store.protected()]


@router.post("/unprotect", response_model=list[Protected], responses=_WRITE)
def unprotect(body: ProtectRequest, state: State, role: Writer) -> list[dict[str, Any]]:
    """Lift a label's protection (admin token)."""
    _admin(role, "unprotecting a label")
    state.store.writes().unprotect(body.label)
    return [protected_dict(item) for item in state.store.protected()]
