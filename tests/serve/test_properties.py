"""Whatever a client sends, the server answers with a status it means: never an internal error,
and always the same answer for the same request. Side-by-side diffs keep every line of both texts."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiles.serve.diffs import side_by_side

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12,
)
bodies = st.fixed_dictionaries(
    {},
    optional={
        "kind": st.sampled_from(["system", "user", "write_memory", "react", "nope"]) | text,
        "question": st.none() | text,
        "deployment": st.none() | st.sampled_from(["staging", "prod", "evil"]) | text,
        "language": st.none() | st.sampled_from(["en", "zh-TW", "xx"]) | text,
        "model": st.none() | text,
        "variables": st.dictionaries(text, json_values, max_size=5) | json_values,
        "strict": st.booleans() | json_values,
    },
)
personas = st.sampled_from(
    ["planner.yaml", "summarizer.yaml", "hostile.yaml", "broken.yaml", "secretive.yaml", "bounded.yaml", "nope.yaml"]
)
MEANT = {200, 304, 307, 400, 401, 403, 404, 405, 409, 413, 422}
SLOW = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.filterwarnings("ignore::profiles.deployments.UnknownDeploymentWarning")  # random deployments
@SLOW
@given(persona=personas, body=bodies)
def test_render_bodies_get_a_meant_status(live, persona, body):
    with httpx.Client(base_url=live.base, timeout=30) as http:
        answer = http.post(f"/api/personas/{persona}/render", json=body)
        assert answer.status_code in MEANT, (answer.status_code, answer.text)
        assert answer.json().get("error") != "InternalError"
        if answer.status_code == 200:
            again = http.post(f"/api/personas/{persona}/render", json=body)
            assert again.json() == answer.json()


@SLOW
@given(path=st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=60))
def test_any_persona_path_gets_a_meant_status(live, path):
    with httpx.Client(base_url=live.base, timeout=30) as http:
        for url in (f"/api/personas/{path}", f"/api/personas/{path}/explain", f"/personas/{path}"):
            try:
                answer = http.get(url)
            except httpx.InvalidURL:
                continue  # the client would not send it
            assert answer.status_code in MEANT, (url, answer.status_code, answer.text)


@SLOW
@given(params=st.dictionaries(st.sampled_from(["name", "language", "model", "label", "version", "chain"]), text))
def test_any_store_query_gets_a_meant_status(live, params):
    with httpx.Client(base_url=live.base, timeout=30) as http:
        answer = http.get("/api/store/prompt", params=params)
        assert answer.status_code in MEANT, (answer.status_code, answer.text)


lines = st.lists(
    st.sampled_from(["a", "b", "c", "same line", "<b>x</b>", "", "    indented", "日本", "a\r", "\u2028"]), max_size=30
)


@settings(max_examples=300, deadline=None)
@given(old=lines, new=lines)
def test_a_side_by_side_diff_keeps_every_line_of_both_texts(old, new):
    old_text, new_text = "\n".join(old), "\n".join(new)
    rows = side_by_side(old_text, new_text, context=10_000)
    if old_text == new_text:
        assert rows == []
        return
    left = ["".join(part.text for part in row.left) for row in rows if row.left_no is not None]
    right = ["".join(part.text for part in row.right) for row in rows if row.right_no is not None]
    both_end = old_text.endswith("\n") and new_text.endswith("\n")
    assert left == _lines(old_text, both_end) and right == _lines(new_text, both_end)
    assert [row.left_no for row in rows if row.left_no is not None] == list(range(1, len(left) + 1))
    assert all(row.kind != "skipped" for row in rows)


def _lines(text: str, shared_final_newline: bool) -> list[str]:
    lines = text.split("\n")
    return lines[:-1] if shared_final_newline else lines


def test_a_final_newline_alone_is_a_difference_shown():
    rows = side_by_side("a\na", "a\na\n")
    assert [(row.kind, row.right_no) for row in rows if row.kind != "same"] == [("added", 3)]
    both = side_by_side("a\nb\n", "a\nc\n")  # a final newline both have is no row of its own
    assert [(row.kind, row.left_no) for row in both] == [("same", 1), ("changed", 2)]


@pytest.mark.parametrize(("context", "hidden", "shown"), [(0, 20, 0), (3, 17, 3)])
def test_long_unchanged_runs_fold(context, hidden, shown):
    """Twenty equal lines before a change fold into one row, keeping `context` lines next to it."""
    same = "\n".join(f"line {index}" for index in range(20))
    rows = side_by_side(same + "\nold end", same + "\nnew end", context=context)
    assert [row.hidden for row in rows if row.kind == "skipped"] == [hidden]
    assert len([row for row in rows if row.kind == "same"]) == shown
    last = rows[-1]
    assert last.kind == "changed" and [(part.text, part.changed) for part in last.left] == [
        ("old", True),
        (" end", False),
    ]
