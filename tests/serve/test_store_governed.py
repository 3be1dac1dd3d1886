"""Governed labels over HTTP: compare-and-set moves, the move log, protected labels and the admin
token, rollouts and undo, through the API, the `store` provider and the studio."""

from __future__ import annotations

import re

import httpx
import pytest

from profiles import Context, StoreProvider
from profiles.store import PromptStore

from .live import ADMIN_TOKEN, TOKEN

WRITER = {"Authorization": f"Bearer {TOKEN}"}
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
KEY = "greeter/name"


@pytest.fixture
def store_with_versions(store_url):
    with PromptStore(store_url) as store:
        for content in ("Ada", "Grace", "Hedy", "Joan"):
            store.put(KEY, content)
        store.set_label(KEY, "production", 1, author="ann", note="first release")
    return store_url


@pytest.fixture
def served(start, store_with_versions):
    with (
        start(store_url=store_with_versions, admin_token=ADMIN_TOKEN) as live,
        httpx.Client(base_url=live.base, timeout=30) as http,
    ):
        http.live = live  # type: ignore[attr-defined]
        yield http


def _label(http, headers=WRITER, **body):
    return http.post("/api/store/label", json={"name": KEY, "label": "production", **body}, headers=headers)


def _production(http) -> int:
    return http.get("/api/store/prompt", params={"name": KEY, "label": "production"}).json()["version"]


def test_expect_makes_a_move_compare_and_set(served):
    assert _label(served, version=2, expect=1).status_code == 200
    stale = _label(served, version=3, expect=1)
    assert stale.status_code == 409 and stale.json()["error"] == "LabelConflictError"
    assert "moved since you looked" in stale.json()["message"]
    assert _production(served) == 2
    fresh = served.post(
        "/api/store/label", json={"name": KEY, "label": "canary", "version": 4, "expect": 0}, headers=WRITER
    )
    assert fresh.status_code == 200
    again = served.post(
        "/api/store/label", json={"name": KEY, "label": "canary", "version": 3, "expect": 0}, headers=WRITER
    )
    assert again.status_code == 409


def test_the_move_log_records_who_and_why(served):
    _label(served, version=3, author="bob", note="hotfix")
    moves = served.get("/api/store/moves", params={"name": KEY}).json()["moves"]
    assert [(move["seq"], move["before"], move["after"], move["author"], move["note"]) for move in moves] == [
        (1, "-", "v1", "ann", "first release"),
        (2, "v1", "v3", "bob", "hotfix"),
    ]
    tag = served.get("/api/store/moves", params={"name": KEY}).headers["etag"]
    assert served.get("/api/store/moves", params={"name": KEY}, headers={"If-None-Match": tag}).status_code == 304
    undone = served.post("/api/store/undo", json={"name": KEY, "label": "production"}, headers=WRITER)
    assert undone.status_code == 200 and undone.json()["undoes"] == 2 and undone.json()["after"] == "v1"
    assert _production(served) == 1


def test_protected_labels_need_the_admin_token(served):
    refused = served.post("/api/store/protect", json={"label": "production"}, headers=WRITER)
    assert refused.status_code == 403 and "admin token" in refused.json()["message"]
    done = served.post("/api/store/protect", json={"label": "production", "author": "root"}, headers=ADMIN)
    assert done.status_code == 200 and [item["label"] for item in done.json()] == ["production"]
    assert served.get("/api/store/prompts").json()["protected"][0]["author"] == "root"

    plain = _label(served, version=2)
    assert plain.status_code == 403 and plain.json()["error"] == "ProtectedLabelError"
    forced_by_writer = _label(served, version=2, force=True)
    assert forced_by_writer.status_code == 403 and "admin token" in forced_by_writer.json()["message"]
    admin_without_force = _label(served, headers=ADMIN, version=2)
    assert admin_without_force.status_code == 403
    assert _production(served) == 1
    assert _label(served, headers=ADMIN, version=2, force=True).status_code == 200
    assert _production(served) == 2
    put = served.post("/api/store/put", json={"name": KEY, "content": "Lin", "label": "production"}, headers=WRITER)
    assert put.status_code == 403
    assert served.get("/api/store/history", params={"name": KEY}).json()["versions"][-1]["content"] == "Joan"
    assert served.post("/api/store/unprotect", json={"label": "production"}, headers=WRITER).status_code == 403
    assert served.post("/api/store/unprotect", json={"label": "production"}, headers=ADMIN).json() == []


def test_without_an_admin_token_no_one_forces(start, store_with_versions):
    with start(store_url=store_with_versions) as live, httpx.Client(base_url=live.base) as http:
        assert http.post("/api/store/protect", json={"label": "production"}, headers=WRITER).status_code == 403
        assert _label(http, version=2, force=True).status_code == 403
        assert http.post("/api/store/protect", json={"label": "x"}, headers=ADMIN).status_code == 401


def test_put_returns_200_when_nothing_changed(served):
    same = served.post("/api/store/put", json={"name": KEY, "content": "Joan"}, headers=WRITER)
    assert same.status_code == 200 and same.json()["unchanged"] is True and same.json()["version"] == 4
    new = served.post(
        "/api/store/put", json={"name": KEY, "content": "Lin", "label": "production", "expect": 1}, headers=WRITER
    )
    assert new.status_code == 201 and new.json()["version"] == 5 and new.json()["labels"] == ["production"]


def test_a_rollout_is_served_with_its_arms_and_the_provider_splits_by_rollout_key(served, store_with_versions):
    answer = served.post(
        "/api/store/rollout", json={"name": KEY, "label": "production", "arms": {"3": 90, "4": 10}}, headers=WRITER
    )
    assert answer.status_code == 200 and [(arm["version"], arm["weight"]) for arm in answer.json()] == [
        (3, 90),
        (4, 10),
    ]
    found = served.get("/api/store/prompt", params={"name": KEY, "chain": "production,latest"}).json()
    assert found["version"] == 3 and [(arm["version"], arm["weight"]) for arm in found["arms"]] == [(3, 90), (4, 10)]
    assert served.get("/api/store/prompts").json()["prompts"][0]["rollouts"] == {"production": [[3, 90], [4, 10]]}

    over_http = StoreProvider(served.live.base, ttl=60)
    direct = StoreProvider(store_with_versions, ttl=60)
    picks = []
    for user in range(200):
        context = Context(deployment="prod", rollout_key=f"user-{user}")
        remote, local = over_http.find(KEY, context), direct.find(KEY, context)
        assert (remote.value, remote.source) == (local.value, local.source)
        picks.append(remote.value)
    assert set(picks) == {"Hedy", "Joan"}  # both arms are served, the same as from the database
    assert over_http.find(KEY, Context(deployment="prod")).value == "Hedy"  # no key: the first arm
    over_http.close()
    direct.close()


def test_pinned_versions_are_read_over_http(served):
    provider = StoreProvider(served.live.base, ttl=0)
    pinned = provider.find(KEY, Context(deployment="prod", store_versions={KEY: 2}))
    assert pinned.value == "Grace" and "pinned" in pinned.source
    provider.close()


# -- the studio ------------------------------------------------------------------------------------


def _csrf(page: httpx.Response) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)


def _confirm(http, review, **extra):
    form = {
        "csrf": _csrf(review),
        "name": KEY,
        "language": "",
        "model": "",
        "label": "production",
        "version": "3",
        "expect": re.search(r'name="expect" value="(\d+)"', review.text).group(1),
        **extra,
    }
    return http.post("/store/label", data=form, headers={"Origin": http.live.base})


def test_the_studio_refuses_a_move_when_the_label_moved_since_the_review(served):
    review = served.get("/store/label", params={"name": KEY, "label": "production", "version": 3})
    assert 'name="expect" value="1"' in review.text
    assert _label(served, version=2).status_code == 200  # someone else, meanwhile
    late = _confirm(served, review, token=TOKEN)
    assert late.status_code == 409 and "moved since you looked" in late.text
    assert _production(served) == 2


def test_the_studio_moves_protected_labels_for_the_admin_only(served):
    served.post("/api/store/protect", json={"label": "production"}, headers=ADMIN)
    review = served.get("/store/label", params={"name": KEY, "label": "production", "version": 3})
    assert 'id="protected"' in review.text and "the admin token" in review.text
    writer = _confirm(served, review, token=TOKEN)
    assert writer.status_code == 403 and "protected" in writer.text
    admin = _confirm(served, review, token=ADMIN_TOKEN, note="ship v3")
    assert admin.status_code == 303
    assert _production(served) == 3
    page = served.get(admin.headers["location"])
    assert 'id="moves"' in page.text and "ship v3" in page.text and "studio" in page.text
    assert 'class="label protected"' in page.text
