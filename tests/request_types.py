"""Check a request body against the official clients' own request types, strictly; send it through them.

`pydantic.TypeAdapter(TypedDict).validate_python(body)` alone lets bad bodies through:

1. fields typed ``Iterable[...]`` (``messages``, ``tools``, content parts, ``tool_calls``) are
   validated lazily: pydantic returns an iterator and checks items only when it is consumed, so
   ``_drain`` consumes every iterator, recursively;
2. unknown keys are dropped silently; ``extra="forbid"`` (pydantic 2.12 and later) refuses them,
   and top-level keys the client does not type (sent through ``extra_body``) are split off first
   and must be named;
3. lax mode coerces (``"0.5"`` becomes 0.5); ``strict=True`` refuses that, after a JSON round trip
   (``validate_json`` is avoided: in JSON mode ``Union[str, Iterable[...]]`` matches a string
   against the iterable and fails on its characters);
4. as a last guard, the validated value must equal the JSON the body becomes.

Union failures are reported for the best-fitting member only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import TypeAdapter, ValidationError

__all__ = ["REQUEST_TYPES", "BodyError", "send", "split_body", "validate_as", "validate_request"]

REQUEST_TYPES: dict[str, type] = {
    "openai-chat": CompletionCreateParamsNonStreaming,
    "openai-responses": ResponseCreateParamsNonStreaming,
    "anthropic": MessageCreateParamsNonStreaming,
}

#: The key tests give the clients; it must never show up in a body.
API_KEY = "sk-test-0123456789abcdef-not-a-real-key"


class BodyError(ValueError):
    """The body does not match the request type; `problems` lists one line per error."""

    def __init__(self, label: str, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(f"{label} request body is invalid:\n  " + "\n  ".join(problems))


@cache
def _adapter(tp: Any) -> TypeAdapter[Any]:
    return TypeAdapter(tp)


def split_body(api: str, body: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(keys the client's create() takes as keywords, the rest: to send as extra_body)."""
    tp = REQUEST_TYPES[api]
    known = tp.__required_keys__ | tp.__optional_keys__
    return {k: v for k, v in body.items() if k in known}, {k: v for k, v in body.items() if k not in known}


class _LazyError(Exception):
    def __init__(self, path: tuple[Any, ...], error: ValidationError) -> None:
        self.path = path
        self.error = error


def _drain(value: Any, path: tuple[Any, ...] = ()) -> Any:
    if type(value).__name__ == "ValidatorIterator" or (
        isinstance(value, Iterable) and not isinstance(value, (str, bytes, bytearray, Mapping, list, tuple))
    ):
        out: list[Any] = []
        try:
            for item in value:
                out.append(_drain(item, (*path, len(out))))
        except ValidationError as exc:
            raise _LazyError(path, exc) from None
        return out
    if isinstance(value, Mapping):
        return {k: _drain(v, (*path, k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_drain(v, (*path, i)) for i, v in enumerate(value)]
    return value


def _is_member(part: Any) -> bool:
    """pydantic names a union member in `loc` by its class name or a type expression."""
    return isinstance(part, str) and (part[:1].isupper() or "[" in part or part in ("str", "int", "float", "bool"))


def _score(errors: list[dict[str, Any]], depth: int) -> int:
    score = 0
    for err in errors:
        rest = err["loc"][depth:]
        if not rest and (err["type"].endswith("_type") or err["type"] in ("is_instance_of", "literal_error")):
            score += 50
        elif rest in (("type",), ("role",)) and err["type"] in ("literal_error", "extra_forbidden", "missing"):
            score += 100
        else:
            score += 1
    return score


def _collapse(errors: list[dict[str, Any]], depth: int = 0) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    groups: dict[Any, list[dict[str, Any]]] = {}
    for err in errors:
        if len(err["loc"]) <= depth:
            out.append(err)
        else:
            groups.setdefault(err["loc"][depth], []).append(err)
    members = {k: _collapse(v, depth + 1) for k, v in groups.items() if _is_member(k)}
    if members:
        best = min(members, key=lambda k: _score(members[k], depth + 1))
        out.extend(members[best])
    for key, errs in groups.items():
        if key not in members:
            out.extend(_collapse(errs, depth + 1))
    return out


def _summarize(errors: list[dict[str, Any]], prefix: tuple[Any, ...] = ()) -> list[str]:
    lines = []
    for err in _collapse(errors):
        loc = ".".join(str(p) for p in (*prefix, *err["loc"]))
        lines.append(f"{loc or '<body>'}: {err['msg']} [{err['type']}]")
    return lines


def validate_as(tp: Any, value: Any, *, label: str = "value") -> Any:
    """Validate a JSON-able value against a client type strictly; return the drained value."""
    raw = json.dumps(value, allow_nan=False)
    try:
        out = _drain(_adapter(tp).validate_python(json.loads(raw), strict=True, extra="forbid"))
    except ValidationError as exc:
        raise BodyError(label, _summarize(exc.errors())) from None
    except _LazyError as exc:
        raise BodyError(label, _summarize(exc.error.errors(), exc.path)) from None
    if out != json.loads(raw):
        raise BodyError(label, ["dropped or changed by validation (an unknown key, or a coercion)"])
    return out


def validate_request(api: str, body: Mapping[str, Any], *, allow_extra: Iterable[str] = ()) -> dict[str, Any]:
    """Validate `body` against the client's request type for `api`; extras must be named in `allow_extra`."""
    typed, extra = split_body(api, body)
    problems = [f"{k}: not a field of {REQUEST_TYPES[api].__name__}" for k in extra if k not in set(allow_extra)]
    try:
        validated = validate_as(REQUEST_TYPES[api], typed, label=api)
    except BodyError as exc:
        problems.extend(exc.problems)
        validated = None
    if problems:
        raise BodyError(api, problems)
    return validated  # type: ignore[return-value]


def send(base_url: str, api: str, body: dict[str, Any], **headers: str) -> Any:
    """Send `body` through the official client: typed keys as keywords, the rest as extra_body.

    `base_url` is the server's root (`http://127.0.0.1:PORT`). No retries, a short timeout, and
    the clients validate the server's replies against their own response models.
    """
    import anthropic
    import openai

    typed, extra = split_body(api, body)
    options = {"extra_body": extra or None, "extra_headers": headers or None}
    common = {"api_key": API_KEY, "max_retries": 0, "timeout": 10.0, "_strict_response_validation": True}
    if api == "anthropic":
        with anthropic.Anthropic(base_url=base_url, **common) as client:
            return client.messages.create(**typed, **options)
    with openai.OpenAI(base_url=f"{base_url}/v1", **common) as client:
        create = client.chat.completions.create if api == "openai-chat" else client.responses.create
        return create(**typed, **options)
