"""Governed labels, on SQLite and PostgreSQL: compare-and-set moves, the move log, undo, protected
labels, rollouts over several versions, and what put does with empty and unchanged content."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiles.errors import LabelConflictError, PromptNotFoundError, ProtectedLabelError, StoreError


def _three(store) -> None:
    for text in ("one", "two", "three"):
        store.put("s", text)


def test_every_move_is_recorded_with_author_and_note(store):
    """set_label, put(label=) and rollout all land in the move log, in order, with who and why."""
    store.put("s", "one", label="production", author="ana", note="first")
    store.put("s", "two")
    store.set_label("s", "production", 2, author="bo", note="release 2")
    store.rollout("s", "production", {1: 50, 2: 50}, author="cy")
    moves = store.moves("s")
    assert [(m.label, m.seq, m.before, m.after, m.author, m.note) for m in moves] == [
        ("production", 1, "-", "v1", "ana", "first"),
        ("production", 2, "v1", "v2", "bo", "release 2"),
        ("production", 3, "v2", "v1:50,v2:50", "cy", ""),
    ]
    assert moves[2].to_arms == ((1, 50), (2, 50)) and moves[2].to_version == 1
    assert all(move.moved_at.tzinfo is not None for move in moves)


def test_a_label_set_where_it_points_records_nothing(store):
    store.put("s", "one", label="production")
    store.set_label("s", "production", 1)
    assert [move.seq for move in store.moves("s")] == [1]


def test_moves_of_one_label_and_of_other_keys_stay_apart(store):
    store.put("s", "one", label="production")
    store.put("s", "zh", language="zh", label="production")
    store.set_label("s", "staging", 1)
    assert [move.label for move in store.moves("s", label="staging")] == ["staging"]
    assert [(move.language, move.label) for move in store.moves("s", language="zh")] == [("zh", "production")]
    with pytest.raises(PromptNotFoundError):
        store.moves("missing")


def test_expect_moves_only_from_the_expected_version(store):
    _three(store)
    store.set_label("s", "production", 1)
    store.set_label("s", "production", 2, expect=1)
    with pytest.raises(LabelConflictError, match=r"points at v2, not v1 as expected.*--expect 2"):
        store.set_label("s", "production", 3, expect=1)
    assert store.get("s", label="production").version == 2
    with pytest.raises(LabelConflictError, match="not nowhere"):
        store.set_label("s", "production", 3, expect=0)
    store.set_label("s", "staging", 3, expect=0)
    with pytest.raises(LabelConflictError, match=r"--expect 0"):
        store.set_label("s", "canary", 3, expect=2)
    with pytest.raises(StoreError, match="expect="):
        store.set_label("s", "production", 3, expect=-1)


def test_a_refused_put_with_a_label_adds_no_version(store):
    """put(label=, expect=) is one transaction: when the move is refused the version is not added."""
    store.put("s", "one", label="production")
    store.put("s", "two")
    with pytest.raises(LabelConflictError):
        store.put("s", "three", label="production", expect=2)
    assert [record.version for record in store.history("s")] == [1, 2]


def test_undo_steps_back_and_removes_a_new_label(store):
    _three(store)
    store.set_label("s", "production", 1)
    store.set_label("s", "production", 3)
    store.rollout("s", "production", [(3, 80), (2, 20)])
    undo = store.undo_label("s", "production", author="ana")
    assert (undo.before, undo.after, undo.undoes, undo.author) == ("v3:80,v2:20", "v3", 3, "ana")
    assert store.match("s", labels=["production"]).arms[0].record.version == 3
    assert not store.match("s", labels=["production"]).is_rollout
    store.set_label("s", "production", 2)  # a new move after an undo is undone first
    assert store.undo_label("s", "production").after == "v3"
    assert store.undo_label("s", "production").after == "v1"  # then the moves before the undone one
    assert store.undo_label("s", "production").after == "-"
    with pytest.raises(PromptNotFoundError):
        store.get("s", label="production")
    with pytest.raises(StoreError, match="no recorded move left to undo"):
        store.undo_label("s", "production")
    assert [move.seq for move in store.moves("s")] == list(range(1, 9))


def test_undo_checks_expect(store):
    _three(store)
    store.set_label("s", "production", 1)
    store.set_label("s", "production", 2)
    with pytest.raises(LabelConflictError):
        store.undo_label("s", "production", expect=1)
    assert store.undo_label("s", "production", expect=2).after == "v1"


def test_protected_labels_move_only_with_force(store):
    store.put("s", "one", label="production")
    store.put("s", "two")
    assert store.protect("production", author="ana") is True
    assert store.protect("production") is False
    assert [(p.label, p.author) for p in store.protected_labels()] == [("production", "ana")]
    for move in (
        lambda force: store.set_label("s", "production", 2, force=force),
        lambda force: store.rollout("s", "production", {1: 1, 2: 1}, force=force),
        lambda force: store.undo_label("s", "production", force=force),
    ):
        with pytest.raises(ProtectedLabelError, match=r"protected.*--force \(force=True in Python\)"):
            move(False)
        move(True)
    with pytest.raises(ProtectedLabelError):
        store.put("s", "three", label="production")
    assert [record.version for record in store.history("s")] == [1, 2]
    with pytest.raises(ProtectedLabelError):
        store.put("new", "x", label="production")  # creating a protected label is a move too
    assert [summary.name for summary in store.list()] == ["s"]
    store.set_label("s", "staging", 2)
    assert store.unprotect("production") is True and store.unprotect("production") is False
    store.set_label("s", "production", 1)


def test_a_protected_label_blocks_an_import_without_force(store, other_store, tmp_path):
    store.put("s", "one", label="production")
    store.put("s", "two")
    store.export(tmp_path / "a")
    store.set_label("s", "production", 2)
    store.export(tmp_path / "b")
    other_store.import_(tmp_path / "a", author="ci")
    other_store.protect("production")
    with pytest.raises(ProtectedLabelError):
        other_store.import_(tmp_path / "b")
    assert other_store.get("s", label="production").version == 1
    result = other_store.import_(tmp_path / "b", force=True, author="ci")
    assert result.labels_moved == 1 and other_store.get("s", label="production").version == 2
    moves = other_store.moves("s")
    assert [(m.after, m.author) for m in moves] == [("v1", "ci"), ("v2", "ci")]
    assert moves[0].note == f"import from {tmp_path / 'a'}"


def test_rollouts_survive_export_and_import(store, other_store, tmp_path):
    _three(store)
    store.rollout("s", "production", {2: 90, 3: 10})
    (path,) = store.export(tmp_path / "out")
    assert "production:\n    2: 90\n    3: 10\n" in path.read_text()
    assert other_store.import_(tmp_path / "out").labels_moved == 1
    (summary,) = other_store.list()
    assert summary.rollouts == (("production", ((2, 90), (3, 10))),) and summary.labels == (("production", 2),)
    assert other_store.import_(tmp_path / "out").labels_moved == 0


def test_rollout_picks_by_key_and_the_first_without_one(store):
    _three(store)
    arms = store.rollout("s", "production", {2: 90, 3: 10})
    assert [(arm.record.version, arm.weight) for arm in arms] == [(2, 90), (3, 10)]
    assert store.get("s", label="production").version == 2
    assert store.find("s", labels=["production"])[0].version == 2
    picked = {key: store.get("s", label="production", rollout_key=key).version for key in map(str, range(400))}
    assert picked == {key: store.get("s", label="production", rollout_key=key).version for key in picked}
    share = sum(version == 3 for version in picked.values()) / len(picked)
    assert 0.05 < share < 0.15
    labels = {record.version: record.labels for record in store.history("s")}
    assert labels == {1: (), 2: ("production",), 3: ("production",)}


@pytest.mark.parametrize(
    ("arms", "message"),
    [
        ({}, "at least one"),
        ({1: 0}, "weight of v1"),
        ({1: 1.5}, "weight of v1"),
        ([(1, 5), (1, 5)], "each version once"),
        ({9: 1}, "no such version"),
        ({i: 1 for i in range(1, 18)}, "at most 16"),
        ({1: 2**31, 2: 1}, "weight of v1 must be a whole number from 1 to 2147483647"),
        ({1: 1, 10**20: 1}, "a version is a whole number from 1 to 2147483647"),
    ],
)
def test_bad_rollouts_are_refused(store, arms, message):
    store.put("s", "one", label="production")
    with pytest.raises(StoreError, match=message):
        store.rollout("s", "production", arms)
    assert store.get("s", label="production").version == 1 and len(store.moves("s")) == 1


@pytest.mark.parametrize("number", [2**31, 10**20])
def test_versions_past_what_the_database_holds_are_a_store_error(store, number):
    """A version or expect= too large for an integer column says so, on SQLite as on PostgreSQL."""
    store.put("s", "one", label="production")
    for attempt in (
        lambda: store.set_label("s", "production", number),
        lambda: store.set_label("s", "production", 1, expect=number),
        lambda: store.get("s", version=number),
        lambda: store.diff("s", 1, number),
    ):
        with pytest.raises(StoreError, match="from 1 to 2147483647"):
            attempt()
    assert store.get("s", label="production").version == 1 and len(store.moves("s")) == 1


def test_a_one_version_rollout_is_a_plain_move(store):
    _three(store)
    store.rollout("s", "production", {3: 100})
    assert not store.match("s", labels=["production"]).is_rollout
    assert store.moves("s")[-1].after == "v3"


def test_empty_content_is_refused(store):
    with pytest.raises(StoreError, match="is empty"):
        store.put("s", " \n")
    assert store.list() == ()


def test_unchanged_content_adds_no_version_but_still_labels(store):
    first = store.put("s", "one")
    again = store.put("s", "one", label="production", note="ignored")
    assert (first.unchanged, again.unchanged) == (False, True)
    assert again.version == 1 and again.labels == ("production",) and again.note == ""
    assert [record.version for record in store.history("s")] == [1]
    assert store.put("s", "one\n").version == 2  # any difference is a new version


_operations = st.lists(
    st.one_of(
        st.tuples(st.just("set"), st.integers(1, 4)),
        st.tuples(
            st.just("rollout"), st.lists(st.tuples(st.integers(1, 4), st.integers(1, 9)), min_size=2, max_size=3)
        ),
        st.tuples(st.just("undo"), st.none()),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=_operations)
def test_the_move_log_tells_the_whole_story(store, operations):
    """Whatever sequence of moves, rollouts and undos: the log counts without a gap, each move starts
    where the one before it ended, and the last one ends where the label points."""
    name = f"p{uuid.uuid4().hex[:10]}"
    for text in ("one", "two", "three", "four"):
        store.put(name, text)
    for kind, argument in operations:
        try:
            if kind == "set":
                store.set_label(name, "production", argument)
            elif kind == "rollout":
                store.rollout(name, "production", argument)
            else:
                store.undo_label(name, "production")
        except StoreError as exc:  # an undo with nothing left, or a rollout naming a version twice
            assert "no recorded move left" in str(exc) or "each version once" in str(exc)
    moves = store.moves(name, label="production")
    assert [move.seq for move in moves] == list(range(1, len(moves) + 1))
    previous = "-"
    for move in moves:
        assert move.before == previous
        previous = move.after
    try:
        found = store.match(name, labels=["production"])
    except PromptNotFoundError:
        assert previous == "-"
    else:
        now = ",".join(f"v{arm.record.version}:{arm.weight}" for arm in found.arms) if found.is_rollout else (
            f"v{found.arms[0].record.version}"
        )
        assert now == previous


def test_a_bad_rollout_in_an_export_names_the_file(store, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "s.yaml").write_text(
        "name: s\nlanguage: ''\nmodel: ''\nlabels:\n  production: {1: 0}\nversions:\n"
        "- {version: 1, created_at: '2026-01-05T10:00:00+00:00', author: '', note: '', content: one}\n"
    )
    with pytest.raises(StoreError, match=r"s\.yaml: label 'production': the weight of v1"):
        store.import_(folder)
    assert store.list() == ()


def test_latest_is_not_a_label_to_move(store, tmp_path):
    """Every chain reads `latest` as the newest version, so a label of that name would list as v1 and serve v2."""
    _three(store)
    for move in (
        lambda: store.set_label("s", "latest", 1),
        lambda: store.put("s", "four", label="latest"),
        lambda: store.rollout("s", "latest", {1: 50, 2: 50}),
    ):
        with pytest.raises(StoreError, match="'latest' is not a label to move"):
            move()
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "s.yaml").write_text(
        "name: t\nlabels: {latest: 1}\nversions:\n- {version: 1, content: x, created_at: '2026-01-01T00:00:00'}\n"
    )
    with pytest.raises(StoreError, match="label 'latest': 'latest' is not a label to move"):
        store.import_(folder)
    assert [summary.name for summary in store.list()] == ["s"] and store.history("s")[-1].version == 3
    assert all(move.label != "latest" for move in store.moves("s"))
    # nor one to protect: protected, it made every move of it say it needs the admin token instead
    with pytest.raises(StoreError, match="'latest' is not a label to move"):
        store.protect("latest")
    assert store.protected_labels() == ()


def test_reading_the_label_latest_gives_the_newest_version(store):
    """No label may be called `latest`, so asking for one reads the newest version, as a chain does,
    instead of a "not found" that nothing could ever satisfy."""
    _three(store)
    store.set_label("s", "production", 1)
    assert store.get("s", label="latest").version == 3
    found = store.match("s", labels=["latest"])
    assert (found.label, found.arms[0].record.version) == (None, 3)
    assert store.find("s", labels=["staging", "latest"]) == (store.get("s", version=3), None)
