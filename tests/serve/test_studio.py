"""The studio's pages over HTTP: content escaped everywhere, forms guarded by CSRF and Origin,
label moves confirmed and made only with the token or a signed-in session."""

from __future__ import annotations

import re

import httpx
import pytest

from .conftest import HOSTILE
from .live import TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}
SCRIPT = "<script>alert('stored')</script>"


@pytest.fixture
def studio(start, sqlite_url):
    """A server of its own with a prompt of two versions whose text is hostile."""
    with start(store_url=sqlite_url) as live, httpx.Client(base_url=live.base, timeout=30) as http:
        for content, label in (
            (f"Hello {SCRIPT}\nsecond line\n", "production"),
            (f"Bye {SCRIPT}\nsecond line\n", None),
        ):
            body = {"name": "greet/<b>name</b>", "content": content, "label": label}
            assert http.post("/api/store/put", json=body, headers=AUTH).status_code == 201
        http.live = live  # type: ignore[attr-defined]
        yield http


def _csrf(page: httpx.Response) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)


def _no_markup(text: str, *fragments: str) -> None:
    for fragment in fragments:
        assert fragment not in text, fragment


def test_persona_pages_escape_hostile_names(client):
    listed = client.get("/")
    assert listed.status_code == 200
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in listed.text
    _no_markup(listed.text, HOSTILE, "<img src=x")
    persona = client.get("/personas/hostile.yaml")
    _no_markup(persona.text, HOSTILE, "<img src=x", "</pre><b>bold</b>")
    assert "Say &lt;/pre&gt;&lt;b&gt;bold&lt;/b&gt; &amp; more" in persona.text
    evil = client.get("/personas/hostile.yaml?deployment=evil&kind=system")
    _no_markup(evil.text, "<svg onload")
    assert "&lt;svg onload=alert(3)&gt;" in evil.text
    compare = client.get("/personas/hostile.yaml/compare?left=&right=evil&kind=system")
    assert compare.status_code == 200 and 'id="diff"' in compare.text
    _no_markup(compare.text, HOSTILE, "<svg onload", "<img src=x")


def test_store_pages_and_diffs_escape_stored_text(studio):
    listed = studio.get("/store")
    _no_markup(listed.text, "<b>name</b>")
    assert "greet/&lt;b&gt;name&lt;/b&gt;" in listed.text
    name = "greet/<b>name</b>"
    for page in (
        studio.get("/store/prompt", params={"name": name}),
        studio.get("/store/diff", params={"name": name, "from": 1, "to": 2}),
        studio.get("/store/label", params={"name": name, "label": "production", "version": 2}),
    ):
        assert page.status_code == 200, page.text
        _no_markup(page.text, SCRIPT, "<b>name</b>")
    diff = studio.get("/store/diff", params={"name": name, "from": 1, "to": 2}).text
    assert "<del>Hello</del>" in diff and "<ins>Bye</ins>" in diff
    assert "&lt;script&gt;alert(&#39;stored&#39;)&lt;/script&gt;" in diff


def test_persona_page_previews_each_deployment(client):
    staging = client.get("/personas/summarizer.yaml?deployment=staging&kind=system").text
    prod = client.get("/personas/summarizer.yaml?deployment=prod&kind=system").text
    assert "You are Socrates." in staging and "You are Plato." in prod
    assert 'data-field="name"' in prod and "env:SUMMARY_PROFILE_NAME" in prod


def test_persona_page_fills_inputs_from_samples_and_shows_render_errors(client):
    page = client.get("/personas/planner.yaml")
    assert 'name="var.agents" value="Searcher, Coder"' in page.text and "Searcher, Coder." in page.text
    emptied = client.get("/personas/planner.yaml?kind=system&var.agents=")
    assert 'id="render-error"' in emptied.text and "&#39;agents&#39;" in emptied.text
    tripped = client.get("/personas/bounded.yaml?kind=user&question=q")
    assert tripped.status_code == 200 and "LimitExceeded" in tripped.text


def test_links_of_a_persona_whose_file_name_holds_a_percent_sign_lead_back_to_it(start, tmp_path):
    """The compare link and the sign-in link's way back were the page's path with a `%41` of the
    file's name left as it was, so they led to `50A.yaml`, a persona that is not there."""
    import html
    from urllib.parse import parse_qs, urlsplit

    (tmp_path / "50%41.yaml").write_text(
        "name: Ada\nrole: Tester\ndeployments:\n  prod:\n    name: Grace\n", encoding="utf-8"
    )
    with start(tmp_path) as live, httpx.Client(base_url=live.base, timeout=30) as http:
        shown = http.get("/personas/50%2541.yaml")
        assert shown.status_code == 200 and "You are Ada." in shown.text
        link = html.unescape(re.search(r'href="([^"]+)"[^>]*id="compare-link"', shown.text).group(1))
        assert link.startswith("/personas/50%2541.yaml/compare?")
        compared = http.get(link)
        assert compared.status_code == 200 and "Grace" in compared.text, compared.text[:500]
        sign_in = html.unescape(re.search(r'href="([^"]+)" id="sign-in"', shown.text).group(1))
        back = parse_qs(urlsplit(sign_in).query)["next"][0]
        assert back == "/personas/50%2541.yaml" and http.get(back).status_code == 200


def test_broken_personas_show_their_problems_inline(client):
    listed = client.get("/").text
    assert "broken.yaml:3:1" in listed and "colour" in listed
    page = client.get("/personas/broken.yaml")
    assert page.status_code == 200 and 'id="problems"' in page.text and "broken.yaml:5" in page.text


def test_missing_pages_are_studio_pages(client):
    for path in ("/personas/nope.yaml", "/personas/..%2F..%2Fetc%2Fpasswd.yaml", "/nope", "/store/prompt?name=nope"):
        page = client.get(path)
        assert page.status_code in (400, 404), path
        assert page.headers["content-type"].startswith("text/html") and 'id="error"' in page.text


def _move(http, page, **extra):
    form = {
        "csrf": _csrf(page),
        "name": "greet/<b>name</b>",
        "language": "",
        "model": "",
        "label": "production",
        "version": "2",
        **extra,
    }
    return http.post(
        "/store/label", data=form, headers={"Origin": http.base_url.scheme + "://" + http.base_url.netloc.decode()}
    )


def test_review_shows_what_will_change(studio):
    review = studio.get("/store/label", params={"name": "greet/<b>name</b>", "label": "production", "version": 2})
    assert re.search(r'id="now">v1<', review.text) and re.search(r'id="after">v2<', review.text)
    assert 'id="diff"' in review.text and 'id="confirm-move"' in review.text and 'id="token"' in review.text
    fresh = studio.get("/store/label", params={"name": "greet/<b>name</b>", "label": "canary", "version": 1})
    assert "not set (a new label)" in fresh.text
    same = studio.get("/store/label", params={"name": "greet/<b>name</b>", "label": "production", "version": 1})
    assert 'id="unchanged"' in same.text and 'id="confirm-move"' not in same.text


def test_review_of_a_rolled_out_label_shows_its_arms_and_can_end_the_rollout(studio):
    key = {"name": "greet/<b>name</b>"}
    arms = {"1": 90, "2": 10}
    rolled = studio.post("/api/store/rollout", json={**key, "label": "canary", "arms": arms}, headers=AUTH)
    assert rolled.status_code == 200
    # pinning the label to its first arm ends the rollout: a change, to be confirmed like any other
    review = studio.get("/store/label", params={**key, "label": "canary", "version": 1})
    assert re.search(r'id="now">v1:90, v2:10 ', review.text)
    assert 'id="unchanged"' not in review.text and 'id="confirm-move"' in review.text
    assert 'id="ends-rollout"' in review.text
    expect = re.search(r'name="expect" value="(\d+)"', review.text).group(1)
    moved = _move(studio, review, token=TOKEN, label="canary", version="1", expect=expect)
    assert moved.status_code == 303
    listed = studio.get("/api/store/prompts").json()["prompts"]
    assert [(item["labels"]["canary"], item["rollouts"]) for item in listed if item["name"] == key["name"]] == [
        (1, {})
    ]
    # a label that is not rolled out and already points there is still "nothing would change"
    same = studio.get("/store/label", params={**key, "label": "canary", "version": 1})
    assert 'id="unchanged"' in same.text and 'id="confirm-move"' not in same.text


def test_a_label_moves_only_with_the_token(studio):
    review = studio.get("/store/label", params={"name": "greet/<b>name</b>", "label": "production", "version": 2})
    refused = _move(studio, review)
    # the page's own words: a browser sends no Authorization header, as the API's refusal would say
    assert refused.status_code == 401 and "moving a label needs the token" in refused.text
    assert "into the Token field, or sign in first" in refused.text and "Authorization" not in refused.text
    wrong = _move(studio, review, token="not-it")
    assert wrong.status_code == 401 and "that is not the token" in wrong.text and "Authorization" not in wrong.text
    assert (
        studio.get("/api/store/prompt", params={"name": "greet/<b>name</b>", "label": "production"}).json()["version"]
        == 1
    )
    moved = _move(studio, review, token=TOKEN)
    assert moved.status_code == 303 and "moved=production" in moved.headers["location"]
    assert (
        studio.get("/api/store/prompt", params={"name": "greet/<b>name</b>", "label": "production"}).json()["version"]
        == 2
    )
    after = studio.get(moved.headers["location"])
    assert "Moved label production to v2." in after.text


def test_forms_need_the_csrf_token_and_the_same_origin(studio):
    review = studio.get("/store/label", params={"name": "greet/<b>name</b>", "label": "production", "version": 2})
    token = _csrf(review)
    base = {"name": "greet/<b>name</b>", "label": "production", "version": "2", "token": TOKEN}
    own = studio.base_url.scheme + "://" + studio.base_url.netloc.decode()
    cases = {
        "no csrf": ({**base}, {"Origin": own}),
        "forged csrf": ({**base, "csrf": "abc.def"}, {"Origin": own}),
        "foreign origin": ({**base, "csrf": token}, {"Origin": "http://127.0.0.1:1"}),
        "null origin": ({**base, "csrf": token}, {"Origin": "null"}),
        "no origin nor referer": ({**base, "csrf": token}, {}),
        "foreign referer": ({**base, "csrf": token}, {"Referer": "http://evil.example/x"}),
    }
    for case, (form, headers) in cases.items():
        answer = studio.post("/store/label", data=form, headers=headers)
        assert answer.status_code == 403, case
    with httpx.Client(base_url=studio.base_url) as other:  # a browser without this one's CSRF cookie
        assert other.post("/store/label", data={**base, "csrf": token}, headers={"Origin": own}).status_code == 403
    assert (
        studio.get("/api/store/prompt", params={"name": "greet/<b>name</b>", "label": "production"}).json()["version"]
        == 1
    )
    referer = studio.post("/store/label", data={**base, "csrf": token}, headers={"Referer": own + "/store"})
    assert referer.status_code == 303


def test_cookies_and_form_tokens_with_any_characters_are_refused_not_a_500(studio):
    """A non-ASCII CSRF or session cookie, or CSRF form field, is just a wrong one: the page shows, the post is 403."""
    own = studio.base_url.scheme + "://" + studio.base_url.netloc.decode()
    port = studio.base_url.port
    for cookie in (f"profiles_csrf_{port}", f"profiles_session_{port}"):
        with httpx.Client(base_url=studio.base_url) as browser:
            shown = browser.get("/store", headers={"Cookie": f"{cookie}=\u00e9.\u00e9".encode("latin-1")})
            assert shown.status_code == 200 and 'id="signed-in"' not in shown.text, cookie
    login = studio.get("/login")
    forged = {"csrf": _csrf(login).split(".")[0] + ".\u00e9\u4e2d", "token": TOKEN}
    answer = studio.post("/login", data=forged, headers={"Origin": own})
    assert answer.status_code == 403 and "security token" in answer.text
    wrong = studio.post("/login", data={"csrf": _csrf(login), "token": "\u00e9\u4e2d"}, headers={"Origin": own})
    assert wrong.status_code == 401


def test_signing_in_lets_the_studio_write_without_the_token_field(studio):
    login = studio.get("/login?next=/store")
    own = studio.base_url.scheme + "://" + studio.base_url.netloc.decode()
    failed = studio.post(
        "/login", data={"csrf": _csrf(login), "token": "nope", "next": "/store"}, headers={"Origin": own}
    )
    assert failed.status_code == 401 and 'id="login-failed"' in failed.text
    done = studio.post("/login", data={"csrf": _csrf(login), "token": TOKEN, "next": "/store"}, headers={"Origin": own})
    assert done.status_code == 303 and done.headers["location"] == "/store"
    session = [value for name, value in studio.cookies.items() if name.startswith("profiles_session")]
    assert session and TOKEN not in session[0]
    review = studio.get("/store/label", params={"name": "greet/<b>name</b>", "label": "production", "version": 2})
    assert 'id="signed-in"' in review.text and 'id="token"' not in review.text
    assert _move(studio, review).status_code == 303
    outside = studio.post(
        "/login", data={"csrf": _csrf(login), "token": TOKEN, "next": "//evil.example/"}, headers={"Origin": own}
    )
    assert outside.headers["location"] == "/"


def test_the_token_never_shows_in_a_page(studio):
    for path in ("/", "/store", "/login", "/docs", "/personas/summarizer.yaml", "/api/health", "/openapi.json"):
        assert TOKEN not in studio.get(path).text, path


def test_a_read_only_studio_offers_no_writes(start, sqlite_url):
    from profiles.store import PromptStore

    with PromptStore(sqlite_url) as store:
        store.put("n", "one", label="production")
        store.put("n", "two")
    with start(store_url=sqlite_url, read_only=True) as live, httpx.Client(base_url=live.base) as http:
        page = http.get("/store/prompt", params={"name": "n"})
        assert "read-only" in page.text and 'id="move-label"' not in page.text
        review = http.get("/store/label", params={"name": "n", "label": "production", "version": 2})
        assert 'id="confirm-move"' not in review.text
        csrf = next(value for name, value in http.cookies.items() if name.startswith("profiles_csrf"))
        form = {"csrf": csrf, "name": "n", "label": "production", "version": "2", "token": TOKEN}
        refused = http.post("/store/label", data=form, headers={"Origin": live.base})
        assert refused.status_code == 403 and "read-only" in refused.text


def test_the_preview_shows_chat_messages_and_requests(client):
    page = client.get("/personas/triage.yaml?kind=%40messages")
    assert page.status_code == 200 and 'id="messages"' in page.text
    assert page.text.count('class="message role-') == 2 and "I was charged twice for March" in page.text
    assert "The customer&#39;s message, as they wrote it." in page.text  # the input's description
    typed = client.get(
        "/personas/triage.yaml?kind=%40request%3Aopenai-chat&question=&var.ticket=Hi&var.max_labels=2&var.tier=pro"
    )
    assert "&#34;temperature&#34;: 0.2" in typed.text and "at most 2 labels" in typed.text
    wrong = client.get(
        "/personas/triage.yaml?kind=%40messages&question=&var.ticket=Hi&var.max_labels=lots&var.tier=pro"
    )
    assert 'id="render-error"' in wrong.text and "max_labels" in wrong.text


def test_a_persona_with_problems_shows_them_above_its_preview(client):
    page = client.get("/personas/typo.yaml?kind=system&question=&var.nmae=Ann")
    assert 'id="problems"' in page.text and "profiles validate finds problems." in page.text
    assert 'id="prompt"' in page.text and "Greet Ann warmly." in page.text
