"""The studio in headless Chromium (Debian's, through Playwright): open a persona, switch the
deployment and see the prompt change, compare two store versions, move a label without the
token (refused) and with it; every page loads nothing from outside 127.0.0.1 and breaks no rule
of the Content-Security-Policy. Screenshots go to each test's temporary folder."""

from __future__ import annotations

import httpx
import pytest

from .conftest import HOSTILE
from .live import TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def store_server(start, sqlite_url):
    """A server of its own with a prompt in two versions, `production` on v1."""
    with start(store_url=sqlite_url) as live:
        for content, label in (("You are Ada.\nBe brief.\n", "production"), ("You are Grace.\nBe brief.\n", None)):
            body = {"name": "support/system", "content": content, "label": label, "note": f"{content[:12]}"}
            assert httpx.post(live.base + "/api/store/put", json=body, headers=AUTH).status_code == 201
        yield live


def _clean(visit) -> None:
    assert not visit.csp_violations(), visit.csp_violations()
    assert not [line for line in visit.console if line.startswith(("error", "pageerror"))], visit.console


def test_switching_the_deployment_changes_the_prompt(visit, live):
    page = visit.page
    page.goto(live.base + "/")
    assert page.locator("#personas tr[data-path='broken.yaml'] .status.bad").inner_text() == "2 problems"
    visit.shot("personas")
    with page.expect_navigation():
        page.click("a.persona-link:text-is('summarizer.yaml')")
    prompt = page.locator("#prompt")
    assert prompt.inner_text().startswith("You are Aristotle.")
    with page.expect_navigation():
        page.select_option("#deployment", "staging")  # studio.js sends the form on change
    assert prompt.inner_text().startswith("You are Socrates.")
    assert page.locator("#explain tr[data-field='name'] .source").inner_text() == "overlay staging: summarizer.yaml:30"
    with page.expect_navigation():
        page.select_option("#deployment", "prod")
    assert prompt.inner_text().startswith("You are Plato.")
    visit.shot("summarizer-prod")
    _clean(visit)


def test_the_preview_works_without_javascript(no_js_visit, live):
    page = no_js_visit.page
    page.goto(live.base + "/personas/planner.yaml")
    assert "Searcher, Coder" in page.locator("#prompt").inner_text()
    page.fill("input[data-input='agents']", "Booker, Payer")
    page.select_option("#kind", "system")
    with page.expect_navigation():
        page.click("#preview-button")
    assert "Booker, Payer" in page.locator("#prompt").inner_text()
    no_js_visit.shot("planner-no-js")


def test_compare_two_deployments_side_by_side(visit, live):
    page = visit.page
    page.goto(live.base + "/personas/summarizer.yaml")
    with page.expect_navigation():
        page.click("#compare-link")
    assert page.locator("#diff tr.changed").count() == 1
    assert page.locator("#diff tr.changed td.left del").inner_text() == "Aristotle"
    assert page.locator("#diff tr.changed td.right ins").inner_text() == "Socrates"
    visit.shot("compare-deployments")
    _clean(visit)


def test_compare_two_store_versions(visit, store_server):
    page = visit.page
    page.goto(store_server.base + "/store")
    with page.expect_navigation():
        page.click("a.prompt-link:text-is('support/system')")
    page.check("input[name='from'][value='1']")
    page.check("input[name='to'][value='2']")
    with page.expect_navigation():
        page.click("#compare-button")
    assert page.locator("#diff tr.changed td.left del").inner_text() == "Ada"
    assert page.locator("#diff tr.changed td.right ins").inner_text() == "Grace"
    assert page.locator("#diff tr.same").count() == 1
    visit.shot("compare-versions")
    _clean(visit)


def test_a_prompt_whose_name_holds_a_line_break_can_be_compared_and_labelled(visit, store_server):
    """A browser sends each line break of a form's value as CR LF: the compare and label forms of a
    prompt named with a line feed (which the API takes) asked for a prompt the store lacks."""
    name = "two\nlines"
    for content in ("First.\n", "Second.\n"):
        put = httpx.post(store_server.base + "/api/store/put", json={"name": name, "content": content}, headers=AUTH)
        assert put.status_code == 201
    page = visit.page
    page.goto(store_server.base + "/store")
    with page.expect_navigation():
        page.click("#prompts tr:has-text('lines') a.prompt-link")
    with page.expect_navigation():
        page.click("#compare-button")
    assert "name=two%0D%0Alines" in page.url  # what the browser sent
    assert page.locator("#diff tr.changed td.right ins").inner_text() == "Second"
    with page.expect_navigation():
        page.go_back()
    page.fill("#label-name", "production")
    with page.expect_navigation():
        page.click("#review-button")
    assert page.locator("#after").inner_text() == "v2"
    page.fill("#token", TOKEN)
    with page.expect_navigation():
        page.click("#confirm-button")
    assert page.locator("#notice").inner_text() == "Moved label production to v2."
    listed = httpx.get(store_server.base + "/api/store/prompts").json()["prompts"]
    assert {item["name"]: item["labels"] for item in listed}[name] == {"production": 2}
    assert "two\r\nlines" not in {item["name"] for item in listed}  # nothing written under the sent name
    _clean(visit)


#: Where a piece of an element's text is drawn: the left edge of the first text node holding it.
_LEFT_OF = """([selector, piece]) => {
  const walker = document.createTreeWalker(document.querySelector(selector), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const at = node.data.indexOf(piece);
    if (at >= 0) {
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + piece.length);
      return range.getBoundingClientRect().left;
    }
  }
  return null;
}"""


def test_a_bidi_control_in_a_stored_name_or_label_does_not_reverse_the_studios_own_words(visit, store_server):
    """A right-to-left override (U+202E) in a prompt's name or a label, which the API takes, reversed
    every word after it on the review page: its button read "Move x2v ot", its heading "lliw ...".
    Each stored value is isolated, so only the value itself is drawn right to left."""
    name, label = "rtl\u202eevil", "x\u202e"
    for content in ("First.\n", "Second.\n"):
        put = httpx.post(store_server.base + "/api/store/put", json={"name": name, "content": content}, headers=AUTH)
        assert put.status_code == 201
    moved = httpx.post(
        store_server.base + "/api/store/label", json={"name": name, "label": label, "version": 1}, headers=AUTH
    )
    assert moved.status_code == 200
    page = visit.page
    page.goto(store_server.base + "/store/label?" + str(httpx.QueryParams(name=name, label=label, version=2)))
    assert page.locator("#after").inner_text() == "v2"
    left = lambda selector, piece: page.evaluate(_LEFT_OF, [selector, piece])  # noqa: E731
    for selector, first, then in (
        ("#confirm-button", "to", "v2"),
        ("main h2", "will", "instead"),
        ("#diff thead th", "v1", "(now)"),
        ("main h1", "of", "?"),
    ):
        assert left(selector, first) < left(selector, then), (selector, first, then)
    visit.shot("bidi-review")
    page.goto(store_server.base + "/store/diff?" + str(httpx.QueryParams({"name": name, "from": 1, "to": 2})))
    assert left("main h1", "v1") < left("main h1", "v2")
    _clean(visit)


def test_moving_a_label_is_refused_without_the_token_and_done_with_it(visit, store_server):
    page = visit.page
    page.goto(store_server.base + "/store/prompt?name=support/system")
    page.fill("#label-name", "production")
    page.select_option("#label-version", "2")
    with page.expect_navigation():
        page.click("#review-button")
    assert page.locator("#now").inner_text() == "v1" and page.locator("#after").inner_text() == "v2"
    assert page.locator("#diff tr.changed").count() == 1
    visit.shot("review-move")
    _clean(visit)
    with page.expect_navigation():  # no token
        page.click("#confirm-button")
    assert "moving a label needs the token" in page.locator("#error").inner_text()
    visit.shot("move-refused")
    assert (
        httpx.get(
            store_server.base + "/api/store/prompt", params={"name": "support/system", "label": "production"}
        ).json()["version"]
        == 1
    )
    with page.expect_navigation():
        page.go_back()
    page.fill("#token", TOKEN)
    page.fill("#note", "Grace takes over")
    with page.expect_navigation():
        page.click("#confirm-button")
    assert page.locator("#notice").inner_text() == "Moved label production to v2."
    assert page.locator("#history tr[data-version='2'] .label").inner_text() == "production"
    assert "Grace takes over" in page.locator("#moves").inner_text()
    visit.shot("moved")
    assert (
        httpx.get(
            store_server.base + "/api/store/prompt", params={"name": "support/system", "label": "production"}
        ).json()["version"]
        == 2
    )


def test_the_sign_in_link_signs_the_browser_in(visit, store_server):
    page = visit.page
    page.goto(f"{store_server.base}/login#token={TOKEN}")  # the link `profiles serve` prints
    page.wait_for_url(store_server.base + "/")
    assert page.locator("#signed-in").is_visible()
    assert "#token" not in page.url
    page.goto(store_server.base + "/store/label?name=support/system&label=production&version=2")
    assert page.locator("#token").count() == 0
    with page.expect_navigation():
        page.click("#confirm-button")
    assert page.locator("#notice").inner_text() == "Moved label production to v2."
    _clean(visit)


def test_a_sign_in_link_whose_token_holds_a_bare_percent_sign_still_signs_in(visit, start, sqlite_url):
    """A token set by hand may hold '%' (PROFILES_SERVE_TOKEN=100%-…); typed into the sign-in link,
    decoding it threw in the page and the browser was left on the sign-in form, not signed in."""
    token = "100%-sure-0123456789abcdef"
    with start(store_url=sqlite_url, token=token) as live:
        page = visit.page
        page.goto(f"{live.base}/login#token={token}")
        page.wait_for_url(live.base + "/")
        assert page.locator("#signed-in").is_visible() and "#token" not in page.url
        _clean(visit)


def test_hostile_names_stay_text_in_the_browser(visit, live):
    page = visit.page
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(live.base + "/")
    page.goto(live.base + "/personas/hostile.yaml?deployment=evil")
    assert page.locator("#persona-name").inner_text().startswith(HOSTILE)
    page.goto(live.base + "/personas/hostile.yaml/compare?left=&right=evil")
    assert not dialogs
    assert page.locator("script:not([src])").count() == 0
    _clean(visit)


def test_the_api_page_works_offline(visit, live):
    page = visit.page
    page.goto(live.base + "/docs")
    page.wait_for_selector(".opblock", timeout=20_000)
    paths = {text.replace("\u200b", "") for text in page.locator(".opblock-summary-path").all_inner_texts()}
    assert {"/api/personas", "/api/store/prompt", "/api/store/label"} <= paths
    assert page.locator("button.authorize").count() == 1
    visit.shot("api-docs")
    _clean(visit)


def test_the_guard_sees_a_request_that_would_leave_the_machine(visit, live):
    """A self-test of the fixture: a page pointing elsewhere is caught (and aborted) before it leaves.

    On a studio page the policy itself refuses the image before any request is made; on a blank
    page (no policy) the request is made, and the guard catches it.
    """
    page = visit.page
    page.goto(live.base + "/")
    with page.expect_event("requestfailed"):
        page.evaluate("document.body.insertAdjacentHTML('beforeend', '<img src=\"http://localhost:47/csp.png\">')")
    assert any("img-src" in violation for violation in visit.csp_violations())
    assert visit.outside == []  # the policy stopped it: nothing was even attempted
    page.goto("about:blank")
    with page.expect_event("requestfailed") as failed:
        page.set_content('<img src="http://localhost:47/probe.png">')
    assert failed.value.url == "http://localhost:47/probe.png"
    assert visit.outside == ["http://localhost:47/probe.png"]
    visit.outside.clear()
    visit.requests[:] = [url for url in visit.requests if "localhost:47" not in url]
