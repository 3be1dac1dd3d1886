"""The web studio at `/`: personas, previews, diffs, the store's history and label moves, as HTML.

Pages are rendered on the server from the package's `pages/` templates with autoescaping on, so
every name, prompt and diff line is text in the page, never markup. Everything works without
JavaScript: forms submit with their buttons, and `static/studio.js` only saves clicks (a select
that submits its form on change, the sign-in link's token). A label move shows what will change
and asks again before it is made, with the token (or a signed-in session), a CSRF token and a
same-origin check.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Form, Query, Request
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.responses import HTMLResponse, RedirectResponse, Response

from .. import __version__
from ..errors import ProfilesError, ServeError
from .diffs import side_by_side
from .personas import InputField, RenderContext
from .security import CSRF_COOKIE, SESSION_COOKIE, cookie_name, same_origin
from .state import ServeState, state_of

__all__ = ["error_page", "router"]

router = APIRouter(include_in_schema=False)

PAGES = Path(__file__).resolve().parent / "pages"

#: The preview of the chat messages (the persona's `messages:` layout) rather than one prompt.
MESSAGES_VIEW = "@messages"
#: The preview of a request body; the API follows the prefix.
REQUEST_VIEW = "@request:"
#: What the preview can show besides one prompt kind, as the select names them.
CHAT_VIEWS = (
    (MESSAGES_VIEW, "chat messages"),
    (REQUEST_VIEW + "openai-chat", "request: OpenAI Chat"),
    (REQUEST_VIEW + "openai-responses", "request: OpenAI Responses"),
    (REQUEST_VIEW + "anthropic", "request: Anthropic"),
)

#: Characters of a stored version shown in the history table before it is cut.
_PREVIEW_CHARS = 160
#: A line break as a stored name may hold one; a browser sends each of them in a form as CR LF.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@lru_cache(maxsize=1)
def _environment() -> Environment:
    # our own pages, not personas' templates: a plain environment with autoescaping everywhere
    environment = Environment(
        loader=FileSystemLoader(PAGES),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.globals["when"] = _when
    return environment


def _when(moment: datetime) -> str:
    """A stored time as people read it: the store writes UTC, so a time without a zone is UTC."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _port(request: Request) -> int | None:
    return request.url.port


def session_role(request: Request, state: ServeState) -> str | None:
    """The role of a browser signed in with a token ("admin" or "writer"); None when not signed in."""
    cookie = request.cookies.get(cookie_name(SESSION_COOKIE, _port(request)))
    if state.signer.session_matches(cookie, state.settings.admin_token):
        return "admin"
    if state.signer.session_matches(cookie, state.settings.token):
        return "writer"
    return None


def _csrf(request: Request, state: ServeState) -> tuple[str, bool]:
    """The page's CSRF token, and whether it is new (then the cookie must be set)."""
    token = request.cookies.get(cookie_name(CSRF_COOKIE, _port(request)))
    if token and state.signer.csrf_valid(token):
        return token, False
    return state.signer.new_csrf(), True


def _path(request: Request) -> str:
    """The path of this page as a link spells it: `request.url.path` leaves a `%` of the file's
    name as it is, so a persona called `50%41.yaml` linked to `50A.yaml`."""
    return quote(request.scope["path"], safe="/")


def page(request: Request, name: str, *, status: int = 200, **values: Any) -> HTMLResponse:
    """Render `pages/<name>` with what every page shows (the sign-in state, the store, the CSRF token)."""
    state = state_of(request)
    token, fresh = _csrf(request, state)
    context = {
        "version": __version__,
        "folder": state.folder.root.name,
        "store": state.store.display,
        "read_only": state.settings.read_only,
        "signed_in": session_role(request, state) is not None,
        "is_admin": session_role(request, state) == "admin",
        "csrf": token,
        "section": "",
        "notice": "",
        "path_here": _path(request) + (f"?{request.url.query}" if request.url.query else ""),
        **values,
    }
    html = _environment().get_template(name).render(**context)
    response = HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})
    if fresh:
        response.set_cookie(cookie_name(CSRF_COOKIE, _port(request)), token, httponly=True, samesite="strict", path="/")
    return response


def error_page(request: Request, status: int, title: str, message: str) -> HTMLResponse:
    """An error as a studio page, with the status the API would give."""
    return page(request, "error.html", status=status, title=title, message=message)


def _check_form(request: Request, state: ServeState, csrf: str) -> None:
    """Refuse a form post from another origin or without this browser's CSRF token.

    Raises:
        ServeError: 403 for either.
    """
    host = request.headers.get("host", "")
    if not same_origin(request.url.scheme, host, request.headers):
        raise ServeError("this form was posted from another site; use the studio's own page", status=403)
    cookie = request.cookies.get(cookie_name(CSRF_COOKIE, _port(request)), "")
    if not (csrf and state.signer.csrf_valid(csrf) and cookie == csrf):
        raise ServeError("the form's security token is missing or stale; reload the page and try again", status=403)


def _message(error: BaseException) -> str:
    return error.message if isinstance(error, ProfilesError) else str(error)


def _query(**values: Any) -> str:
    return urlencode({key: value for key, value in values.items() if value not in (None, "")})


# -- personas --------------------------------------------------------------------------------------


@router.get("/", response_class=HTMLResponse)
def index(request: Request) -> HTMLResponse:
    state = state_of(request)
    entries = state.folder.entries()
    return page(
        request, "personas.html", section="personas", entries=entries, broken=sum(not entry.ok for entry in entries)
    )


def _inputs_from(request: Request, fields: list[InputField]) -> tuple[list[InputField], str | None, dict[str, Any]]:
    """The preview's inputs as the form sent them (else as the persona fills them)."""
    params = request.query_params
    # a form sends every field, empty ones too; a link (or the first visit) sends none of them
    submitted = any(key == "question" or key.startswith("var.") for key in params)
    filled: list[InputField] = []
    question: str | None = None
    variables: dict[str, Any] = {}
    for item in fields:
        key = "question" if item.name == "question" else f"var.{item.name}"
        value = params.get(key, "") if submitted else item.value
        filled.append(InputField(item.name, value, item.origin, item.description, item.required))
        if not value:
            continue
        if item.name == "question":
            question = value
        else:
            variables[item.name] = value
    for key, value in params.multi_items():  # variables the form did not list, e.g. from a link
        name = key.removeprefix("var.")
        if key.startswith("var.") and value and name not in variables and all(f.name != name for f in fields):
            variables[name] = value
            filled.append(InputField(name, value, "link"))
    return filled, question, variables


@router.get("/personas/{path:path}/compare", response_class=HTMLResponse)
def compare(
    request: Request,
    path: str,
    kind: str = "system",
    left: str = "",
    right: str = "",
    language: str = "",
    model: str = "",
) -> HTMLResponse:
    """One prompt of a persona in two deployments, side by side."""
    state = state_of(request)
    folder = state.folder
    config = folder.config(path)
    deployments = list(config.deployments)
    if not left and not right and deployments:
        right = deployments[0]
    sides = []
    for deployment in (left, right):
        context = RenderContext.of(deployment, language, model)
        try:
            profile = folder.profile(path, context)
            fields, question, texts = _inputs_from(request, folder.inputs(path, profile, kind))
            variables = folder.typed(profile, texts)
            text = folder.render(path, kind, context, question=question, variables=variables, profile=profile)
            sides.append({"deployment": deployment, "text": text, "error": None, "inputs": fields})
        except (ProfilesError, Warning) as exc:
            sides.append({"deployment": deployment, "text": "", "error": folder.clean(_message(exc)), "inputs": []})
    rows = side_by_side(sides[0]["text"], sides[1]["text"]) if not (sides[0]["error"] or sides[1]["error"]) else []
    try:
        kinds = folder.kinds(folder.profile(path, RenderContext.of(None, language, model)))
    except ProfilesError:
        kinds = (kind,)
    return page(
        request,
        "compare.html",
        section="personas",
        path=path,
        entry=folder.entry(path),
        kind=kind,
        kinds=kinds,
        deployments=deployments,
        left=left,
        right=right,
        language=language,
        model=model,
        sides=sides,
        rows=rows,
    )


@router.get("/personas/{path:path}", response_class=HTMLResponse)
def persona(
    request: Request,
    path: str,
    deployment: str = "",
    language: str = "",
    model: str = "",
    kind: str = "system",
) -> HTMLResponse:
    """A persona: where each field comes from, and a preview of one prompt for a context."""
    state = state_of(request)
    folder = state.folder
    entry = folder.entry(path)
    values: dict[str, Any] = {
        "section": "personas",
        "path": path,
        "entry": entry,
        "deployment": deployment,
        "language": language,
        "model": model,
        "kind": kind,
        "kinds": (),
        "deployments": entry.deployments,
        "inputs": [],
        "text": None,
        "render_error": None,
        "rows": [],
        "explain_error": None,
        "compare_link": "",
        "views": {},
        "messages": None,
    }
    if not entry.loads:
        return page(request, "persona.html", **values)
    context = RenderContext.of(deployment, language, model)
    try:
        profile = folder.profile(path, context)
    except (ProfilesError, Warning) as exc:
        values["explain_error"] = folder.clean(_message(exc))
        return page(request, "persona.html", **values)
    kinds = folder.kinds(profile)
    values["kinds"] = kinds
    try:
        values["rows"] = folder.explain(path, context)
    except (ProfilesError, Warning) as exc:
        values["explain_error"] = folder.clean(_message(exc))
    views = dict(CHAT_VIEWS)
    if kind not in kinds and kind not in views:
        values["render_error"] = f"{kind!r} is not a prompt kind of this persona; its kinds are {', '.join(kinds)}"
        return page(request, "persona.html", **values)
    values["views"] = views
    try:
        layout_kinds = tuple(slot.kind for slot in profile.layout if slot.kind)
        asked = folder.inputs(path, profile, layout_kinds if kind in views else kind)
        fields, question, texts = _inputs_from(request, asked)
        values["inputs"] = fields
        variables = folder.typed(profile, texts)
        if kind == MESSAGES_VIEW:
            values["messages"] = folder.messages(path, context, question=question, variables=variables, profile=profile)
        elif kind in views:
            api = kind.removeprefix(REQUEST_VIEW)
            body = folder.request(path, context, api=api, question=question, variables=variables, profile=profile)
            values["text"] = json.dumps(body, ensure_ascii=False, indent=2)
        else:
            values["text"] = folder.render(path, kind, context, question=question, variables=variables, profile=profile)
    except (ProfilesError, Warning) as exc:
        values["render_error"] = folder.clean(_message(exc))
    others = [name for name in entry.deployments if name != deployment]
    values["compare_link"] = f"{_path(request)}/compare?" + _query(
        kind=kind, left=deployment, right=others[0] if others else "", language=language, model=model
    )
    return page(request, "persona.html", **values)


# -- the store -------------------------------------------------------------------------------------


@router.get("/store", response_class=HTMLResponse)
def store_index(request: Request) -> HTMLResponse:
    state = state_of(request)
    prompts = state.store.list()
    protected = {item.label for item in state.store.protected()}
    return page(request, "store.html", section="store", prompts=prompts, protected=protected, link=_prompt_link)


def _prompt_link(name: str, language: str = "", model: str = "", **extra: Any) -> str:
    return "/store/prompt?" + _query(name=name, language=language, model=model, **extra)


@router.get("/store/prompt", response_class=HTMLResponse)
def store_prompt(
    request: Request,
    name: Annotated[str, Query(max_length=1000)],
    language: str = "",
    model: str = "",
    show: int | None = None,
    moved: str = "",
) -> HTMLResponse:
    """One prompt key: every version with its labels, a comparison and a label move."""
    state = state_of(request)
    store = state.store.reads()
    versions = store.history(name, language=language, model=model)
    moves = store.moves(name, language=language, model=model)
    summary = next(
        (
            item
            for item in store.list(name=versions[0].name)
            if (item.language, item.model) == (versions[0].language, versions[0].model)
        ),
        None,
    )
    rollouts = dict(summary.rollouts) if summary is not None else {}
    protected = {item.label for item in store.protected_labels()}
    labels = sorted({label for record in versions for label in record.labels})
    shown = next((record for record in versions if record.version == show), versions[-1])
    notice = ""
    if moved:
        where = next((record.version for record in versions if moved in record.labels), None)
        notice = f"Moved label {moved} to v{where}." if where else ""
    return page(
        request,
        "prompt.html",
        section="store",
        key={"name": versions[0].name, "language": versions[0].language, "model": versions[0].model},
        versions=list(reversed(versions)),
        labels=labels,
        shown=shown,
        preview=lambda text: text if len(text) <= _PREVIEW_CHARS else text[: _PREVIEW_CHARS - 1] + "…",
        link=_prompt_link,
        notice=notice,
        moves=list(reversed(moves)),
        rollouts=rollouts,
        protected=protected,
        newest=versions[-1].version,
        previous=versions[-2].version if len(versions) > 1 else versions[-1].version,
    )


@router.get("/store/diff", response_class=HTMLResponse)
def store_diff(
    request: Request,
    name: Annotated[str, Query(max_length=1000)],
    from_version: Annotated[int, Query(alias="from", ge=1)],
    to_version: Annotated[int, Query(alias="to", ge=1)],
    language: str = "",
    model: str = "",
) -> HTMLResponse:
    """Two versions of one prompt, side by side."""
    state = state_of(request)
    name, model = _form_key(state, name, language, model)
    store = state.store.reads()
    old = store.get(name, language=language, model=model, version=from_version)
    new = store.get(name, language=language, model=model, version=to_version)
    if (old.language, old.model) != (new.language, new.model):
        raise ServeError(f"{old.ref} and {new.ref} are different prompts; pick versions of one", status=404)
    return page(
        request,
        "store_diff.html",
        section="store",
        old=old,
        new=new,
        rows=side_by_side(old.content, new.content),
        back=_prompt_link(old.name, old.language, old.model),
    )


def _form_key(state: ServeState, name: str, language: str, model: str) -> tuple[str, str]:
    """The stored name and model a studio form meant.

    A browser sends every line break of a form's value as CR LF, so a prompt whose name (or model)
    holds a line feed came back as a name the store lacks ("no prompt …"): it is matched back to
    the one stored key it stands for. A key stored as sent, or two keys it could stand for, are
    taken as sent.
    """
    if "\r" not in name and "\r" not in model:
        return name, model
    meant = {
        (item.name, item.model)
        for item in state.store.list()
        if item.language == language
        and (_LINE_BREAK.sub("\r\n", item.name), _LINE_BREAK.sub("\r\n", item.model)) == (name, model)
    }
    return meant.pop() if len(meant) == 1 and (name, model) not in meant else (name, model)


def _move_plan(state: ServeState, name: str, language: str, model: str, label: str, version: int) -> dict[str, Any]:
    """What moving `label` to `version` changes: where it points now, where it will, and the diff."""
    if not label.strip() or label != label.strip():
        raise ServeError("give the label's name, e.g. production", status=422)
    store = state.store.reads()
    versions = store.history(name, language=language, model=model)
    target = next((record for record in versions if record.version == version), None)
    if target is None:
        raise ServeError(
            f"{versions[-1].name} has no v{version}; its versions are 1 to {versions[-1].version}", status=404
        )
    summary = next(
        (
            item
            for item in store.list(name=target.name)
            if (item.language, item.model) == (target.language, target.model)
        ),
        None,
    )
    # where the label points now: the version it serves without a rollout key (the first arm of a
    # rollout, which is what the compare-and-set compares), and every arm when it is rolled out
    now = dict(summary.labels).get(label) if summary is not None else None
    arms = dict(summary.rollouts).get(label, ()) if summary is not None else ()
    current = next((record for record in versions if record.version == now), None)
    rows = side_by_side(current.content, target.content) if current is not None else []
    protected = label in {item.label for item in state.store.protected()}
    return {
        "versions": versions,
        "target": target,
        "current": current,
        "arms": arms if len(arms) > 1 else (),
        "unchanged": current is not None and current.version == target.version and len(arms) <= 1,
        "rows": rows,
        "label": label,
        "protected": protected,
        "expect": current.version if current is not None else 0,
    }


@router.get("/store/label", response_class=HTMLResponse)
def review_label(
    request: Request,
    name: Annotated[str, Query(max_length=1000)],
    label: Annotated[str, Query(max_length=200)],
    version: Annotated[int, Query(ge=1)],
    language: str = "",
    model: str = "",
) -> HTMLResponse:
    """The confirmation before a label moves: from which version to which, and what changes."""
    state = state_of(request)
    name, model = _form_key(state, name, language, model)
    plan = _move_plan(state, name, language, model, label, version)
    target = plan["target"]
    return page(
        request,
        "label_review.html",
        section="store",
        key={"name": target.name, "language": target.language, "model": target.model},
        back=_prompt_link(target.name, target.language, target.model),
        **plan,
    )


@router.post("/store/label", response_class=HTMLResponse)
def apply_label(
    request: Request,
    name: Annotated[str, Form(max_length=1000)],
    label: Annotated[str, Form(max_length=200)],
    version: Annotated[int, Form(ge=1)],
    language: Annotated[str, Form(max_length=100)] = "",
    model: Annotated[str, Form(max_length=200)] = "",
    expect: Annotated[int | None, Form(ge=0)] = None,
    note: Annotated[str, Form(max_length=10_000)] = "",
    csrf: Annotated[str, Form(max_length=200)] = "",
    token: Annotated[str, Form(max_length=1000)] = "",
) -> Response:
    """Move the label, after the review page; then back to the prompt's history.

    The move is a compare-and-set against what the review showed (`expect`), so a label that
    moved meanwhile is refused (409) rather than overwritten. A protected label moves only for
    the admin token, and is then forced: the review page said it was protected.
    """
    state = state_of(request)
    if state.settings.read_only:
        raise ServeError("this server is read-only (--read-only): it changes nothing", status=403)
    _check_form(request, state, csrf)
    role = session_role(request, state) or _form_writer(state, token.strip())
    name, model = _form_key(state, name, language, model)
    store = state.store.writes()
    protected = label in {item.label for item in state.store.protected()}
    if protected and role != "admin":
        raise ServeError(
            f"label {label!r} is protected: moving it needs the admin token (PROFILES_SERVE_ADMIN_TOKEN)", status=403
        )
    store.set_label(
        name,
        label,
        version,
        language=language,
        model=model,
        expect=expect,
        force=protected,
        author="studio",
        note=note,
    )
    target = _prompt_link(name, language, model, moved=label)
    return RedirectResponse(target, status_code=303)


def _form_writer(state: ServeState, token: str) -> str:
    """`check_write` for the token a studio form sent, refused in the words of the page: a browser
    sends no `Authorization` header, which the API's own refusal tells to send.

    Raises:
        ServeError: 401 for a missing or wrong token, 403 on a read-only server.
    """
    try:
        return state.check_write(token or None)
    except ServeError as exc:
        if exc.status != 401:
            raise
    said = "that is not the token" if token else "moving a label needs the token"
    raise ServeError(
        f"{said}: go back and type the one `profiles serve` printed (or PROFILES_SERVE_TOKEN) into the Token "
        "field, or sign in first (a sign-in lasts until the server restarts)",
        status=401,
    )


# -- signing in ------------------------------------------------------------------------------------


def _safe_next(target: str) -> str:
    """Only a path of this server: never `//elsewhere` or `https://elsewhere`."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next: str = "/") -> HTMLResponse:  # noqa: A002 - the usual name
    return page(request, "login.html", next=_safe_next(next), failed=False)


@router.post("/login", response_class=HTMLResponse)
def login(
    request: Request,
    token: Annotated[str, Form(max_length=1000)] = "",
    csrf: Annotated[str, Form(max_length=200)] = "",
    next: Annotated[str, Form(max_length=2000)] = "/",  # noqa: A002
) -> Response:
    """Sign this browser in with the token: a session cookie that proves it without holding it."""
    state = state_of(request)
    _check_form(request, state, csrf)
    try:
        state.check_write(token.strip() or None)
    except ServeError as exc:
        if exc.status != 401:
            raise
        return page(request, "login.html", status=401, next=_safe_next(next), failed=True)
    response = RedirectResponse(_safe_next(next), status_code=303)
    response.set_cookie(
        cookie_name(SESSION_COOKIE, _port(request)),
        state.signer.session(token.strip()),
        httponly=True,
        samesite="strict",
        path="/",
    )
    return response


@router.post("/logout")
def logout(request: Request, csrf: Annotated[str, Form(max_length=200)] = "") -> Response:
    state = state_of(request)
    _check_form(request, state, csrf)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(cookie_name(SESSION_COOKIE, _port(request)), path="/")
    return response


# -- the API page ----------------------------------------------------------------------------------


@router.get("/docs", response_class=HTMLResponse)
def docs(request: Request) -> HTMLResponse:
    """Swagger UI from the installed `fastapi-offline` files, started by an external script (the CSP
    allows no inline one)."""
    return page(request, "docs.html", section="docs")


@router.get("/favicon.ico")
def favicon() -> Response:
    return Response(
        (Path(__file__).parent / "static" / "favicon.svg").read_bytes(),
        media_type="image/svg+xml",
        headers={"Cache-Control": "max-age=86400"},
    )
