"""The persona API over a real server: list, read, explain, render, ETags, and refused requests."""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from .conftest import HOSTILE, SECRET_VALUE

JSON = {"content-type": "application/json"}


def test_openapi_describes_every_route(client):
    """/openapi.json lists the persona and store routes, and the bearer scheme writes use."""
    spec = client.get("/openapi.json").json()
    paths = set(spec["paths"])
    assert {
        "/api/personas",
        "/api/personas/{path}",
        "/api/personas/{path}/explain",
        "/api/personas/{path}/render",
        "/api/personas/{path}/prompts/{kind}",
        "/api/store/prompts",
        "/api/store/prompt",
        "/api/store/history",
        "/api/store/diff",
        "/api/store/put",
        "/api/store/label",
    } <= paths
    assert spec["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    assert "security" in spec["paths"]["/api/store/put"]["post"]
    assert "security" not in spec["paths"]["/api/personas/{path}/render"]["post"]


def test_docs_page_loads_only_local_assets(client):
    """/docs is Swagger UI from the installed package and an external start-up script."""
    page = client.get("/docs")
    assert page.status_code == 200
    assert "/docs-assets/swagger-ui-bundle.js" in page.text and "/static/swagger-init.js" in page.text
    assert "http://" not in page.text and "https://" not in page.text and "<script>" not in page.text
    for asset in ("/docs-assets/swagger-ui-bundle.js", "/docs-assets/swagger-ui.css", "/static/swagger-init.js"):
        assert client.get(asset).status_code == 200


def test_list_shows_status_and_problems(client):
    """Every persona file is listed; a broken one carries each problem with file and line."""
    listed = client.get("/api/personas").json()
    by_path = {item["path"]: item for item in listed["personas"]}
    assert {"summarizer.yaml", "planner.yaml", "broken.yaml", "hostile.yaml"} <= set(by_path)
    assert by_path["summarizer.yaml"]["ok"] and by_path["summarizer.yaml"]["deployments"] == ["staging", "prod"]
    broken = by_path["broken.yaml"]
    assert not broken["ok"]
    lines = {(issue["field"], issue["line"]) for issue in broken["issues"]}
    assert ("colour", 3) in lines and ("goal", 5) in lines
    assert all(issue["file"] == "broken.yaml" for issue in broken["issues"])
    assert "datasets" not in " ".join(by_path)  # a folder's own files only, as `profiles validate` reads it


def test_read_persona(client):
    detail = client.get("/api/personas/planner.yaml").json()
    assert detail["name"] == "Hypatia" and detail["ok"]
    assert detail["kinds"][:3] == ["system", "user", "write_memory"] and "react" not in detail["kinds"]
    assert detail["variables"] == {"max_steps": 8}
    assert detail["samples"]["agents"] == "Searcher, Coder"


def test_explain_per_deployment(client):
    """explain answers each field's value and source for a deployment, file names relative."""
    answer = client.get("/api/personas/summarizer.yaml/explain?deployment=staging")
    rows = {row["field"]: row for row in answer.json()["rows"]}
    assert rows["name"]["value"] == "Socrates"
    assert rows["name"]["source"] == "overlay staging: summarizer.yaml:30"
    assert rows["role"]["source"] == "yaml:summarizer.yaml:8"


def test_explain_and_render_mask_secrets(client):
    """A secret read from .env shows as *** in explain, and in a render even where the persona allows it."""
    rows = {row["field"]: row for row in client.get("/api/personas/secretive.yaml/explain").json()["rows"]}
    assert rows["name"] == {"field": "name", "value": "***", "secret": True, "source": rows["name"]["source"]}
    rendered = client.post("/api/personas/secretive.yaml/render", json={"kind": "system"}).json()
    assert rendered["text"].startswith("You are ***.")
    for path in (
        "/api/personas",
        "/api/personas/secretive.yaml",
        "/api/personas/secretive.yaml/explain",
        "/api/personas/secretive.yaml/prompts/system",
        "/personas/secretive.yaml",
        "/",
    ):
        assert SECRET_VALUE not in client.get(path).text, path


def test_render_each_deployment(client):
    """The same persona renders its staging and prod identities; the context is echoed."""
    staging = client.post("/api/personas/summarizer.yaml/render", json={"kind": "system", "deployment": "staging"})
    prod = client.post("/api/personas/summarizer.yaml/render", json={"kind": "system", "deployment": "prod"})
    assert staging.status_code == prod.status_code == 200
    assert staging.json()["text"].startswith("You are Socrates.") and prod.json()["text"].startswith("You are Plato.")
    assert prod.json()["context"] == {"deployment": "prod", "language": None, "model": None}


def test_render_with_variables_and_question(client):
    body = {"kind": "user", "question": "Plan a trip", "variables": {"agents": "Searcher"}}
    text = client.post("/api/personas/planner.yaml/render", json=body).json()["text"]
    assert "Plan a trip" in text
    body = {"kind": "system", "variables": {"agents": "Booker"}}
    system = client.post("/api/personas/planner.yaml/render", json=body)
    assert "Booker" in system.json()["text"]


def test_render_language(client):
    text = client.post("/api/personas/analyst_zh.yaml/render", json={"kind": "system"}).json()["text"]
    assert text.startswith("你是墨子。")


def test_get_prompt_answers_with_an_etag_and_304(client):
    """A rendered prompt can be polled: the same ETag gives an empty 304, another variable a new tag."""
    url = "/api/personas/planner.yaml/prompts/system?var.agents=Searcher"
    first = client.get(url)
    etag = first.headers["etag"]
    assert first.status_code == 200 and "Searcher" in first.json()["text"]
    assert first.headers["cache-control"] == "no-cache"
    again = client.get(url, headers={"If-None-Match": etag})
    assert (again.status_code, again.content, again.headers["etag"]) == (304, b"", etag)
    assert client.get(url, headers={"If-None-Match": f'"other", W/{etag}'}).status_code == 304
    assert client.get(url, headers={"If-None-Match": '"other"'}).status_code == 200
    changed = client.get("/api/personas/planner.yaml/prompts/system?var.agents=Coder", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag


@pytest.mark.parametrize(
    "path", ["/api/personas", "/api/personas/summarizer.yaml", "/api/personas/summarizer.yaml/explain?deployment=prod"]
)
def test_reads_answer_304_when_unchanged(client, path):
    etag = client.get(path).headers["etag"]
    assert client.get(path, headers={"If-None-Match": etag}).status_code == 304


def test_render_problems_are_4xx_with_the_message(client):
    """A missing variable, an unknown kind and a bad request are the caller's to fix, with what and where."""
    missing = client.post("/api/personas/planner.yaml/render", json={"kind": "system"})
    assert missing.status_code == 422
    assert missing.json()["error"] == "RenderError" and "'agents'" in missing.json()["message"]
    unknown = client.post("/api/personas/planner.yaml/render", json={"kind": "nope", "variables": {"agents": "a"}})
    assert unknown.status_code == 404 and "system, user, write_memory" in unknown.json()["message"]
    extra = client.post("/api/personas/planner.yaml/render", json={"kind": "system", "colour": "blue"})
    assert extra.status_code == 422 and extra.json()["error"] == "RequestValidationError"
    broken = client.post("/api/personas/broken.yaml/render", json={"kind": "system"})
    assert broken.status_code == 422 and broken.json()["error"] == "ConfigError"
    assert {issue["line"] for issue in broken.json()["issues"]} == {3, 5}
    garbage = client.post("/api/personas/planner.yaml/render", content=b"{not json", headers=JSON)
    assert garbage.status_code == 422


@pytest.mark.parametrize(
    ("route", "body", "says"),
    [
        ("render", '{"kind": "system", "variables": {"agents": "\\ud800"}}', "variable 'agents' holds '\\ud800'"),
        ("render", '{"kind": "user", "question": "\\udc00", "variables": {"agents": "a"}}', "the question holds"),
        ("render", '{"kind": "system", "language": "\\ud800", "variables": {"agents": "a"}}', "language '\\ud800'"),
        ("render", '{"kind": "system", "model": "x\\ud800", "variables": {"agents": "a"}}', "model 'x\\ud800'"),
        ("messages", '{"variables": {"agents": "a"}, "history": [{"role": "user", "content": "\\ud800"}]}', "history"),
    ],
)
def test_a_lone_surrogate_in_a_request_is_a_422_not_a_500(client, route, body, says):
    """JSON can spell half a surrogate pair; no answer can carry it back out, so it is refused up front."""
    answer = client.post(f"/api/personas/planner.yaml/{route}", content=body.encode(), headers=JSON)
    assert answer.status_code == 422 and says in answer.json()["message"], answer.text
    assert client.get("/api/health").json()["status"] == "ok"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ('{"variables": {"agents": ' + "[" * 5000 + "]" * 5000 + "}}", "nests arrays or objects too deeply"),
        ('{"variables": {"agents": 1' + "0" * 5000 + "}}", "a number with over 4,300 digits"),
        ('{"kind": "system", "variables": {"agents": "a", "agents": "b"}}', "names 'agents' twice in one object"),
        ('{"kind": "user", "variables": {"agents": "a"}, "kind": "system"}', "names 'kind' twice in one object"),
    ],
)
def test_a_body_the_json_reader_gives_up_on_says_why(client, body, says):
    """JSON that Python's reader will not take (nesting past its recursion limit, an integer past its
    digit limit) or would read as one of two things (a key twice, where the last silently wins) is a
    400 saying what and how to send it, not "There was an error parsing the body" or a guess."""
    answer = client.post("/api/personas/planner.yaml/render", content=body.encode(), headers=JSON)
    assert answer.status_code == 400 and says in answer.json()["message"], answer.text
    assert client.get("/api/health").json()["status"] == "ok"


@pytest.mark.parametrize(
    ("route", "body", "says"),
    [
        ("/api/personas/planner.yaml/render", '{"variables": {"agents": "Zoë"}}'.encode("latin-1"), "byte 0xeb at"),
        ("/api/store/put", b'{"name": "a", "content": "\xff"}', "byte 0xff at position 26"),
    ],
)
def test_a_body_that_is_not_utf8_says_so_and_where(client, writer, route, body, says):
    """JSON is UTF-8; a body in Latin-1 (or with a stray byte) is a 400 naming the byte and where it is,
    not "There was an error parsing the body"."""
    answer = client.post(route, content=body, headers={**JSON, **writer})
    message = answer.json()["message"]
    assert answer.status_code == 400 and "not UTF-8" in message and says in message, answer.text
    assert client.get("/api/health").json()["status"] == "ok"


def test_a_listed_persona_whose_file_name_holds_a_backslash_can_be_read(start, tmp_path):
    """POSIX lets a file name hold a backslash; the list (and the MCP prompts) named such a persona,
    and every read of it took the backslash for a folder separator: "no persona 'back\\\\slash.yaml'"."""
    (tmp_path / "back\\slash.yaml").write_text("name: Ada\nrole: Tester\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inner.yaml").write_text("name: Grace\nrole: Tester\n", encoding="utf-8")
    with start(tmp_path) as live, httpx.Client(base_url=live.base, timeout=30) as http:
        assert [item["path"] for item in http.get("/api/personas").json()["personas"]] == ["back\\slash.yaml"]
        read = http.get("/api/personas/back%5Cslash.yaml")
        assert read.status_code == 200 and read.json()["name"] == "Ada", read.text
        assert "You are Ada." in http.get("/personas/back%5Cslash.yaml").text
        # where no such file is there, a backslash still reads as a folder separator
        assert http.get("/api/personas/sub%5Cinner.yaml").json()["name"] == "Grace"


def test_a_variable_given_twice_in_a_prompt_query_is_refused(client):
    """`?var.agents=A&var.agents=B` says two things; the last won without a word, as a JSON body's
    key named twice did."""
    answer = client.get("/api/personas/planner.yaml/prompts/system?var.agents=Booker&var.agents=Payer")
    assert answer.status_code == 422
    assert answer.json()["message"] == "'var.agents' is given twice; give each variable once"
    once = client.get("/api/personas/planner.yaml/prompts/system?var.agents=Booker")
    assert once.status_code == 200 and "Booker" in once.json()["text"]


def test_a_render_that_trips_a_bound_is_a_4xx_and_the_server_keeps_serving(client):
    tripped = client.post("/api/personas/bounded.yaml/render", json={"kind": "user", "question": "q"})
    assert tripped.status_code == 422
    assert "LimitExceeded" in tripped.json()["message"] and "bounded" not in tripped.json()["message"].split(":")[0]
    assert client.get("/api/health").json()["status"] == "ok"
    assert client.post("/api/personas/planner.yaml/render", json={"kind": "user", "question": "q"}).status_code == 200


def test_limits_on_values_and_bodies(client, live):
    """Too many variables, a value over the limit and a body over the limit are refused before rendering."""
    many = {f"v{index}": "x" for index in range(live.settings.max_variables + 1)}
    assert client.post("/api/personas/planner.yaml/render", json={"variables": many}).status_code == 422
    long_value = "x" * (live.settings.max_value_chars + 1)
    too_long = client.post("/api/personas/planner.yaml/render", json={"variables": {"agents": long_value}})
    assert too_long.status_code == 413 and "at most" in too_long.json()["message"]
    huge = b'{"question": "' + b"x" * live.settings.max_body_bytes + b'"}'
    refused = client.post("/api/personas/planner.yaml/render", content=huge, headers=JSON)
    assert refused.status_code == 413

    def chunks():
        for _ in range(live.settings.max_body_bytes // 65536 + 2):
            yield b"x" * 65536

    streamed = client.post("/api/personas/planner.yaml/render", content=chunks(), headers=JSON)
    assert streamed.status_code == 413
    for name in ("kind", "strict", "self", "not a name", "__class__"):
        bad = client.post("/api/personas/planner.yaml/render", json={"variables": {name: "x"}})
        assert bad.status_code == 422, name


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/personas/%2Fetc%2Fpasswd.yaml", 400),
        ("/api/personas/..%2F..%2Fetc%2Fhosts.yaml", 400),
        ("/api/personas/datasets%2F..%2F..%2Fx.yaml", 400),
        ("/api/personas/C:%5Cx.yaml", 400),
        ("/api/personas/.env", 404),
        ("/api/personas/nope.yaml", 404),
        ("/api/personas/datasets/customers.csv", 404),
    ],
)
def test_persona_paths_stay_in_the_folder(client, path, status):
    answer = client.get(path)
    assert answer.status_code == status, answer.text
    assert "/" not in answer.json()["message"].split("'")[0]  # no path of this machine in the message


def test_a_symlink_out_of_the_folder_is_refused(start, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside.yaml"
    outside.write_text("name: Outside\nrole: Secret\n")
    (root / "inside.yaml").write_text("name: Inside\nrole: Fine\n")
    (root / "link.yaml").symlink_to(outside)
    with start(root) as live, httpx.Client(base_url=live.base) as http:
        answer = http.get("/api/personas/link.yaml")
        assert answer.status_code == 400 and "outside the served folder" in answer.json()["message"]
        assert "Outside" not in http.get("/api/personas/link.yaml/explain").text
        assert http.get("/api/personas/inside.yaml").json()["name"] == "Inside"
        listed = http.get("/api/personas").text
        assert "inside.yaml" in listed and "link.yaml" not in listed  # nor listed as if it were one


def test_subfolder_personas_can_be_named(client):
    detail = client.get("/api/personas/datasets/support_agent.yaml")
    assert detail.status_code == 200 and detail.json()["ok"]


def test_other_host_names_are_refused(client, live):
    """A page whose DNS name was rebound to 127.0.0.1 cannot read the server under its own name."""
    refused = client.get("/api/personas", headers={"Host": "evil.example:80"})
    assert refused.status_code == 400 and "does not answer to the host" in refused.json()["message"]
    assert client.get("/api/personas", headers={"Host": f"localhost:{live.settings.port}"}).status_code == 200


def test_every_answer_carries_the_security_headers(client):
    for path in ("/api/personas", "/", "/static/studio.css", "/nope", "/api/personas/nope.yaml", "/docs"):
        answer = client.get(path)
        assert answer.headers["content-security-policy"].startswith("default-src 'self'"), path
        assert "unsafe-inline" not in answer.headers["content-security-policy"]
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["x-frame-options"] == "DENY"


def test_hostile_names_are_data_in_json(client):
    listed = client.get("/api/personas").json()
    names = {item["path"]: item["name"] for item in listed["personas"]}
    assert names["hostile.yaml"] == HOSTILE
    assert client.get("/api/personas").headers["content-type"] == "application/json"


def test_messages_follow_the_layout_with_history_in_its_slot(client):
    body = {
        "variables": {"ticket": "I was charged twice."},
        "history": [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi, how can I help?"}],
    }
    answer = client.post("/api/personas/triage.yaml/messages", json=body)
    assert answer.status_code == 200, answer.text
    messages = answer.json()["messages"]
    assert [message["role"] for message in messages] == ["system", "user", "assistant", "user"]
    assert messages[0]["content"].startswith("You are Iris.") and "I was charged twice." in messages[-1]["content"]
    anthropic = client.post("/api/personas/triage.yaml/messages", json={**body, "style": "anthropic"}).json()
    assert anthropic["messages"]["system"].startswith("You are Iris.")
    assert [turn["role"] for turn in anthropic["messages"]["messages"]] == ["user", "assistant", "user"]


def test_requests_for_each_api(client):
    variables = {"ticket": "Site down", "max_labels": 2}
    chat = client.post("/api/personas/triage.yaml/request", json={"variables": variables}).json()["request"]
    assert chat["model"] == "gpt-4o-mini" and chat["messages"][0]["role"] == "system"
    assert "at most 2 labels" in chat["messages"][0]["content"]
    assert chat["temperature"] == 0.2 and "response_format" in chat
    prod = client.post("/api/personas/triage.yaml/request", json={"variables": variables, "deployment": "prod"})
    assert prod.json()["request"]["temperature"] == 0
    anthropic = client.post("/api/personas/triage.yaml/request", json={"variables": variables, "api": "anthropic"})
    assert anthropic.json()["request"]["system"].startswith("You are Iris.")
    responses = client.post(
        "/api/personas/triage.yaml/request", json={"variables": variables, "api": "openai-responses"}
    )
    assert "input" in responses.json()["request"]
    unknown = client.post("/api/personas/triage.yaml/request", json={"variables": variables, "api": "gopher"})
    assert unknown.status_code == 422


def test_declared_inputs_are_checked(client):
    missing = client.post("/api/personas/triage.yaml/messages", json={})
    assert (
        missing.status_code == 422
        and missing.json()["error"] == "InputError"
        and "'ticket'" in missing.json()["message"]
    )
    wrong = client.post("/api/personas/triage.yaml/messages", json={"variables": {"ticket": "x", "max_labels": "lots"}})
    assert wrong.status_code == 422 and "max_labels" in wrong.json()["message"]
    enum = client.post("/api/personas/triage.yaml/messages", json={"variables": {"ticket": "x", "tier": "gold"}})
    assert enum.status_code == 422 and "tier" in enum.json()["message"]
    bad_history = client.post(
        "/api/personas/triage.yaml/messages", json={"variables": {"ticket": "x"}, "history": [{"role": "wizard"}]}
    )
    assert bad_history.status_code == 422 and bad_history.json()["error"] == "HistoryError"
    no_model = client.post("/api/personas/planner.yaml/request", json={"variables": {"agents": "a"}})
    assert no_model.status_code == 422 and no_model.json()["error"] == "RequestError"


def test_messages_and_requests_mask_secrets(client):
    messages = client.post("/api/personas/secretive.yaml/messages", json={})
    assert messages.status_code == 200 and messages.json()["messages"][0]["content"].startswith("You are ***.")
    request = client.post("/api/personas/secretive.yaml/request", json={"model": "gpt-4o"})
    assert request.status_code == 200 and SECRET_VALUE not in request.text and "You are ***." in request.text


def test_a_persona_says_what_inputs_it_takes(client):
    detail = client.get("/api/personas/triage.yaml").json()
    assert detail["inputs"]["ticket"]["description"] == "The customer's message, as they wrote it."
    assert detail["inputs_schema"]["required"] == ["ticket"]
    assert detail["inputs"]["tier"]["enum"] == ["free", "pro", "enterprise"]
    assert [slot for slot in detail["layout"]] == [{"kind": "system"}, {"history": True}, {"kind": "user"}]


def test_a_likely_typo_fails_validation_but_the_persona_still_renders(client):
    """The list says what `profiles validate` says; a persona that loads can still be previewed."""
    by_path = {item["path"]: item for item in client.get("/api/personas").json()["personas"]}
    typo = by_path["typo.yaml"]
    assert (typo["ok"], typo["loads"]) == (False, True)
    assert any("did you mean 'name'" in issue["message"] for issue in typo["issues"])
    given = client.post("/api/personas/typo.yaml/render", json={"kind": "system", "variables": {"nmae": "Ann"}})
    assert given.status_code == 200 and "Greet Ann warmly." in given.json()["text"]
    assert by_path["summarizer.yaml"]["ok"] and by_path["summarizer.yaml"]["loads"]


def test_a_body_that_stalls_midway_is_a_408_not_an_open_request_forever(start):
    """A client that sends its headers, part of its body and then nothing (or drips it) is answered
    once `body_seconds` pass, and the server goes on serving."""
    with start(body_seconds=1) as live:
        port = int(live.base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
            sock.sendall(
                b"POST /api/store/put HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100\r\n\r\n{"
            )
            answer = b""
            while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
                chunk = sock.recv(4096)
                if not chunk:
                    break
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408"), answer
        assert "did not arrive within 1 s (1 bytes came)" in json.loads(body)["message"]
        assert httpx.get(live.base + "/api/health").json()["status"] == "ok"


@pytest.mark.parametrize("path", ["/api/health", "/api/personas/summarizer.yaml", "/", "/store", "/nothing"])
def test_head_answers_as_get_without_the_body(client, path):
    """A monitor's `curl -I` gets the status and headers a GET gets (the ETag too), not a 405."""
    got, head = client.get(path), client.head(path)
    assert head.status_code == got.status_code and head.content == b""
    assert head.headers["content-length"] == got.headers["content-length"]
    assert head.headers.get("etag") == got.headers.get("etag")
