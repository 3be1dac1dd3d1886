"""The store API on both backends: reads with ETags, writes with the token, and what it refuses."""

from __future__ import annotations

import uuid

import httpx
import pytest

from profiles.store import PromptStore

from .live import TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def served(start, store_url):
    """A server of its own over an empty store, once per backend."""
    with start(store_url=store_url) as live, httpx.Client(base_url=live.base, timeout=30) as http:
        yield http


def _put(http, name, content, **values):
    answer = http.post("/api/store/put", json={"name": name, "content": content, **values}, headers=AUTH)
    assert answer.status_code == 201, answer.text
    return answer.json()


def test_writes_need_the_token(served):
    body = {"name": "a/name", "content": "Ada"}
    missing = served.post("/api/store/put", json=body)
    assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer")
    assert "Authorization: Bearer" in missing.json()["message"]
    wrong = served.post("/api/store/put", json=body, headers={"Authorization": "Bearer not-the-token"})
    assert wrong.status_code == 401 and wrong.json()["message"].startswith("wrong token")
    scheme = served.post("/api/store/put", json=body, headers={"Authorization": f"Basic {TOKEN}"})
    assert scheme.status_code == 401
    assert served.get("/api/store/prompts").json()["prompts"] == []  # nothing was written
    assert served.post("/api/store/label", json={"name": "a/name", "label": "x", "version": 1}).status_code == 401


def test_put_get_history_diff_and_label(served):
    first = _put(served, "summarizer/name", "Ada\n", label="production", note="first", author="ann")
    assert (first["version"], first["labels"], first["author"]) == (1, ["production"], "ann")
    _put(served, "summarizer/name", "Grace\n", label="staging")
    _put(served, "summarizer/name", "艾达\n", language="zh", label="production")

    listed = served.get("/api/store/prompts").json()["prompts"]
    assert [(item["name"], item["language"], item["latest_version"], item["labels"]) for item in listed] == [
        ("summarizer/name", "", 2, {"production": 1, "staging": 2}),
        ("summarizer/name", "zh", 1, {"production": 1}),
    ]
    by_label = served.get("/api/store/prompt", params={"name": "summarizer/name", "label": "staging"}).json()
    assert (by_label["content"], by_label["version"], by_label["matched"]) == ("Grace\n", 2, "staging")
    by_version = served.get("/api/store/prompt", params={"name": "summarizer/name", "version": 1}).json()
    assert by_version["content"] == "Ada\n" and by_version["note"] == "first"
    fallback = served.get("/api/store/prompt", params={"name": "summarizer/name", "language": "zh-TW"}).json()
    assert fallback["content"] == "艾达\n"

    history = served.get("/api/store/history", params={"name": "summarizer/name"}).json()
    assert [(item["version"], item["labels"]) for item in history["versions"]] == [
        (1, ["production"]),
        (2, ["staging"]),
    ]
    diff = served.get("/api/store/diff", params={"name": "summarizer/name", "from": 1, "to": 2}).json()
    assert "-Ada" in diff["diff"] and "+Grace" in diff["diff"] and diff["from_ref"] == "summarizer/name v1"

    moved = served.post(
        "/api/store/label", json={"name": "summarizer/name", "label": "production", "version": 2}, headers=AUTH
    )
    assert moved.status_code == 200 and moved.json()["labels"] == ["production", "staging"]
    now = served.get("/api/store/prompt", params={"name": "summarizer/name", "label": "production"}).json()
    assert now["version"] == 2


def test_chain_picks_the_first_label_a_prompt_has(served):
    """`chain` is what the `store` provider asks: labels in order, `latest` for the newest version."""
    _put(served, "p/goal", "one", label="production")
    _put(served, "p/goal", "two")
    staging = served.get("/api/store/prompt", params={"name": "p/goal", "chain": "staging,production,latest"}).json()
    assert (staging["content"], staging["matched"]) == ("one", "production")
    latest = served.get("/api/store/prompt", params={"name": "p/goal", "chain": "dev,latest"}).json()
    assert (latest["content"], latest["matched"]) == ("two", "latest")
    both = served.get("/api/store/prompt", params={"name": "p/goal", "chain": "latest", "label": "x"})
    assert both.status_code == 422
    label = served.get("/api/store/prompt", params={"name": "p/goal", "label": "latest"})
    assert label.status_code == 200 and (label.json()["content"], label.json()["matched"]) == ("two", "latest")


def test_reads_revalidate_with_etags(served):
    """An unchanged prompt is a 304; once its label moves, the same tag gets the new version."""
    _put(served, "e/name", "Ada", label="production")
    _put(served, "e/name", "Grace")
    params = {"name": "e/name", "chain": "production,latest"}
    first = served.get("/api/store/prompt", params=params)
    etag = first.headers["etag"]
    assert served.get("/api/store/prompt", params=params, headers={"If-None-Match": etag}).status_code == 304
    list_tag = served.get("/api/store/prompts").headers["etag"]
    served.post("/api/store/label", json={"name": "e/name", "label": "production", "version": 2}, headers=AUTH)
    after = served.get("/api/store/prompt", params=params, headers={"If-None-Match": etag})
    assert after.status_code == 200 and after.json()["content"] == "Grace"
    assert served.get("/api/store/prompts", headers={"If-None-Match": list_tag}).status_code == 200


def test_missing_prompts_and_versions_are_404(served):
    _put(served, "m/name", "Ada")
    for params in ({"name": "nope"}, {"name": "m/name", "version": 9}, {"name": "m/name", "label": "nope"}):
        answer = served.get("/api/store/prompt", params=params)
        assert answer.status_code == 404 and answer.json()["error"] == "PromptNotFoundError", params
    assert served.get("/api/store/history", params={"name": "nope"}).status_code == 404
    missing = served.post("/api/store/label", json={"name": "m/name", "label": "x", "version": 9}, headers=AUTH)
    assert missing.status_code == 404 and "no such version" in missing.json()["message"]


def test_invalid_writes_are_422_and_write_nothing(served):
    for body in (
        {"name": "", "content": "x"},
        {"name": "n", "content": "nul\x00"},
        {"name": "n", "content": "x", "label": " padded "},
        {"name": "n", "content": "x", "language": "not a tag!"},
        {"name": "n", "content": "x", "colour": "blue"},
    ):
        answer = served.post("/api/store/put", json=body, headers=AUTH)
        assert answer.status_code == 422, (body, answer.text)
    assert served.get("/api/store/prompts").json()["prompts"] == []


@pytest.mark.parametrize("field", ["name", "label", "author", "note", "language", "model"])
def test_half_a_surrogate_pair_in_a_put_is_named_with_its_field(served, field):
    """JSON may spell "\\udc00", which no text holds; pydantic said only "unable to parse raw data
    as a unicode string"."""
    body = {"name": "n", "content": "x", field: "a\\udc00"}
    raw = ", ".join(f'"{key}": "{value}"' for key, value in body.items())
    headers = {**AUTH, "content-type": "application/json"}
    answer = served.post("/api/store/put", content=f"{{{raw}}}".encode(), headers=headers)
    assert answer.status_code == 422, answer.text
    problem = answer.json()["problems"][0]
    assert problem["where"] == field and problem["message"].startswith("holds \\udc00, half of a UTF-16 surrogate pair")
    assert "write the character itself" in answer.json()["message"]
    assert served.get("/api/store/prompts").json()["prompts"] == []


@pytest.mark.parametrize(
    ("route", "body", "where"),
    [
        ("label", {"label": "production", "version": True}, "version"),
        ("label", {"label": "production", "version": "2"}, "version"),
        ("label", {"label": "production", "version": 2, "expect": True}, "expect"),
        ("label", {"label": "production", "version": 2, "force": "yes"}, "force"),
        ("label", {"label": "production", "version": 2, "force": 1}, "force"),
        ("rollout", {"label": "production", "arms": {"1": True, "2": 1}}, "arms.1"),
        ("rollout", {"label": "production", "arms": {"1": "90", "2": "10"}}, "arms.1"),
    ],
)
def test_a_label_write_of_the_wrong_type_is_refused_not_read_as_another_value(served, route, body, where):
    """JSON's true is no version 1 and "yes" is no force: read leniently, {"version": true} moved
    the label to v1 and {"force": "yes"} forced a protected label."""
    _put(served, "t/name", "Ada", label="production")
    _put(served, "t/name", "Grace")
    answer = served.post(f"/api/store/{route}", json={"name": "t/name", **body}, headers=AUTH)
    assert answer.status_code == 422 and answer.json()["problems"][0]["where"] == where, answer.text
    assert served.get("/api/store/moves", params={"name": "t/name"}).json()["moves"][-1]["to_version"] == 1


@pytest.mark.parametrize(
    ("body", "content_type", "says"),
    [
        (b'{"name": "n", "content": ', "application/json", "the body is not valid JSON at character 25"),
        (b"\xff\xfe", "application/json", "the body is not valid JSON at character 0"),
        (b'["n", "Ada"]', "application/json", "body: Input should be a valid dictionary"),
        (b'{"name": "n", "content": "Ada"}', "text/plain", "body: Input should be a valid dictionary"),
        (b"", "application/json", "body: Field required"),
    ],
)
def test_a_body_that_is_not_a_json_object_says_so_and_how_to_send_one(served, body, content_type, says):
    answer = served.post("/api/store/put", content=body, headers={**AUTH, "content-type": content_type})
    message = answer.json()["message"]
    assert answer.status_code == 422 and says in message, message
    assert "send one JSON object, with content-type: application/json" in message
    assert answer.json()["problems"][0]["where"] == "body"
    assert served.get("/api/store/prompts").json()["prompts"] == []


def test_a_read_only_server_refuses_writes_even_with_the_token(start, sqlite_url):
    with start(store_url=sqlite_url, read_only=True) as live, httpx.Client(base_url=live.base) as http:
        answer = http.post("/api/store/put", json={"name": "n", "content": "x"}, headers=AUTH)
        assert answer.status_code == 403 and "read-only" in answer.json()["message"]
        assert http.get("/api/health").json()["read_only"] is True


def test_an_absent_store_reads_empty_and_the_first_put_creates_it(start, tmp_path):
    path = tmp_path / "later" / "store.db"
    with start(store_url=f"sqlite:///{path}") as live, httpx.Client(base_url=live.base) as http:
        assert http.get("/api/store/prompts").json()["prompts"] == []
        assert http.get("/api/store/prompt", params={"name": "x"}).status_code == 404
        assert not path.exists()
        _put(http, "x", "first")
        assert path.exists()
    with PromptStore(f"sqlite:///{path}") as store:
        assert store.get("x").content == "first"


def test_an_unreachable_database_is_503_and_the_server_keeps_serving(start):
    url = "postgresql+psycopg://nobody:hunter2pw@127.0.0.1:1/none?connect_timeout=2"
    with start(store_url=url) as live, httpx.Client(base_url=live.base, timeout=30) as http:
        answer = http.get("/api/store/prompts")
        assert answer.status_code == 503 and answer.json()["error"] == "StoreError"
        assert "Connection refused" in answer.json()["message"]
        for path in ("/api/store/prompts", "/api/health", "/store", "/"):
            assert "hunter2pw" not in http.get(path).text, path
        assert http.get("/api/personas").status_code == 200


def test_a_server_reading_another_servers_store_has_no_store_pages(start):
    with start(store_url="http://127.0.0.1:9/") as live, httpx.Client(base_url=live.base) as http:
        answer = http.get("/api/store/prompts")
        assert answer.status_code == 404 and "another server" in answer.json()["message"]
        page = http.get("/store")
        assert page.status_code == 404 and "another server" in page.text


def test_concurrent_puts_number_versions_without_gaps(served):
    """Writers racing through the API get distinct, gapless versions (the store's guarantee, over HTTP)."""
    from concurrent.futures import ThreadPoolExecutor

    name = f"race/{uuid.uuid4().hex[:8]}"
    with ThreadPoolExecutor(8) as pool:
        versions = list(pool.map(lambda index: _put(served, name, f"text {index}")["version"], range(24)))
    assert sorted(versions) == list(range(1, 25))


def test_reads_are_kept_for_the_store_cache_and_forgotten_after_a_write(start, sqlite_url):
    """A change made to the database elsewhere shows once the kept read expires; one made through
    this server shows at once."""
    with PromptStore(sqlite_url) as store:
        store.put("k/name", "Ada", label="production")
        store.put("k/name", "Grace")
    params = {"name": "k/name", "label": "production"}
    with start(store_url=sqlite_url, store_cache=3600) as live, httpx.Client(base_url=live.base) as http:
        assert http.get("/api/store/prompt", params=params).json()["content"] == "Ada"
        with PromptStore(sqlite_url) as store:
            store.set_label("k/name", "production", 2)  # behind the server's back
        assert http.get("/api/store/prompt", params=params).json()["content"] == "Ada"  # kept
        moved = http.post("/api/store/label", json={"name": "k/name", "label": "staging", "version": 1}, headers=AUTH)
        assert moved.status_code == 200
        assert http.get("/api/store/prompt", params=params).json()["content"] == "Grace"  # forgotten at once
    with start(store_url=sqlite_url, store_cache=0) as live, httpx.Client(base_url=live.base) as http:
        with PromptStore(sqlite_url) as store:
            store.set_label("k/name", "production", 1)
        assert http.get("/api/store/prompt", params=params).json()["content"] == "Ada"
        with PromptStore(sqlite_url) as store:
            store.set_label("k/name", "production", 2)
        assert http.get("/api/store/prompt", params=params).json()["content"] == "Grace"


def test_a_read_that_a_write_overtakes_is_not_kept(sqlite_url):
    """A read that began before a write may carry the answer from before it: it is not kept, or it
    would be served for the whole store cache after the write."""
    from profiles.serve.store_access import StoreAccess

    with PromptStore(sqlite_url) as store:
        store.put("k/name", "Ada", label="production")
    access = StoreAccess(sqlite_url, read_cache=3600)
    try:
        reads = access.reads()
        key = ("get", "k/name")

        def read_overtaken_by_a_write():
            before = reads._store.get("k/name", label="production")
            access.writes().put("k/name", "Grace", label="production")  # lands while the read is on its way
            return before

        assert access._read(key, read_overtaken_by_a_write).content == "Ada"
        assert access._read(key, lambda: reads._store.get("k/name", label="production")).content == "Grace"
        assert reads.get("k/name", label="production").content == "Grace"
    finally:
        access.close()


def test_a_write_naming_a_key_twice_is_refused_and_changes_nothing(served):
    """`{"label": "staging", …, "label": "production"}` would move production if the last key won."""
    _put(served, "twice/name", "one", label="staging")
    _put(served, "twice/name", "two")
    body = b'{"name": "twice/name", "label": "staging", "version": 2, "label": "production"}'
    moved = served.post("/api/store/label", content=body, headers={**AUTH, "content-type": "application/json"})
    assert moved.status_code == 400 and "names 'label' twice" in moved.json()["message"], moved.text
    history = served.get("/api/store/history", params={"name": "twice/name"}).json()
    assert [item["labels"] for item in history["versions"]] == [["staging"], []]


def test_a_password_given_as_a_query_parameter_never_shows(start):
    """libpq takes `?password=…` as well as `user:password@`: the health answer, the store's pages
    and its errors show the URL with either hidden."""
    import socket

    with socket.socket() as closed:  # bound, never listening: connecting is refused at once
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        url = f"postgresql+psycopg://app@127.0.0.1:{port}/db?password=hunter2-query-secret&connect_timeout=5"
        with start(store_url=url) as live, httpx.Client(base_url=live.base, timeout=30) as http:
            paths = ("/api/health", "/api/store/prompts", "/store", "/store/prompt?name=x")
            answers = [http.get(path) for path in paths]
            answers.append(http.post("/api/store/put", json={"name": "n", "content": "x"}, headers=AUTH))
    assert answers[0].json()["store"].endswith("password=***")
    assert [answer.status_code for answer in answers] == [200, 503, 503, 503, 503]
    assert all("hunter2-query-secret" not in answer.text for answer in answers)
    assert "password=***" in answers[1].json()["message"]
