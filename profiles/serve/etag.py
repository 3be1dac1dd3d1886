"""JSON answers with an `ETag`, and 304 for a client that already holds them.

Agents poll the store and their personas; a strong ETag over the canonical JSON lets them send
`If-None-Match` and get an empty 304 when nothing changed. `Cache-Control: no-cache` lets a
cache keep the answer but makes it ask again every time, so a moved label is seen at once.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from starlette.responses import Response

__all__ = ["etag_matches", "json_body", "json_with_etag"]


def json_body(payload: Any) -> bytes:
    """The canonical JSON of `payload`: sorted keys, no spaces, UTF-8 as it is."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode()


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """RFC 9110's weak comparison for `If-None-Match`: a list of tags, `W/` tags, or `*`."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    want = etag.removeprefix("W/")
    return any(tag.strip().removeprefix("W/") == want for tag in if_none_match.split(","))


def json_with_etag(payload: Any, if_none_match: str | None, *, status: int = 200) -> Response:
    """`payload` as JSON with its ETag, or an empty 304 when `if_none_match` already names it."""
    body = json_body(payload)
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if status == 200 and etag_matches(if_none_match, etag):
        return Response(status_code=304, headers=headers)
    return Response(body, status_code=status, media_type="application/json", headers=headers)
