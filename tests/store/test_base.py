"""PromptStore behaviour on every backend: versions, labels, lookups, history, list and diff."""

from __future__ import annotations

import dataclasses
from datetime import timezone

import pytest

from profiles.errors import PromptNotFoundError, StoreError


def test_versions_are_numbered_from_one_per_key(store):
    """Each put adds the next number; another language or model has its own numbering."""
    assert [store.put("summary", f"text {i}").version for i in range(3)] == [1, 2, 3]
    assert store.put("summary", "zh", language="zh").version == 1
    assert store.put("summary", "m", model="gpt-4o").version == 1
    assert store.put("other", "x").version == 1
    assert store.put("summary", "text 3").version == 4


def test_put_records_content_time_author_and_note(store):
    """What a put stores comes back unchanged, with an aware UTC time."""
    put = store.put("s", "line 1\nline 2\n", author="ana", note="first draft", language="zh_tw")
    got = store.get("s", language="zh-TW")
    assert got == put
    assert (got.content, got.author, got.note, got.language) == (
        "line 1\nline 2\n",
        "ana",
        "first draft",
        "zh-TW",
    )
    assert got.created_at.tzinfo is not None and got.created_at.utcoffset() == timezone.utc.utcoffset(None)


def test_versions_are_immutable(store):
    """Records are frozen and later puts or label moves leave earlier versions as they were."""
    first = store.put("s", "one", label="production")
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.content = "changed"  # type: ignore[misc]
    store.put("s", "two")
    store.set_label("s", "production", 2)
    again = store.get("s", version=1)
    assert (again.content, again.created_at, again.version) == ("one", first.created_at, 1)
    assert again.labels == ()


def test_labels_point_at_one_version_and_move(store):
    """A label names one version at a time; moving it takes it off the old one."""
    store.put("s", "one", label="production")
    store.put("s", "two", label="staging")
    assert store.get("s", label="production").content == "one"
    assert store.get("s", label="staging").content == "two"
    moved = store.set_label("s", "production", 2)
    assert moved.labels == ("production", "staging")
    assert store.get("s", label="production").version == 2
    assert [record.labels for record in store.history("s")] == [(), ("production", "staging")]


def test_set_label_on_missing_version_fails_and_keeps_the_label(store):
    """Labelling a version that does not exist is a PromptNotFoundError and moves nothing."""
    store.put("s", "one", label="production")
    with pytest.raises(PromptNotFoundError, match="v7"):
        store.set_label("s", "production", 7)
    with pytest.raises(PromptNotFoundError):
        store.set_label("missing", "production", 1)
    assert store.get("s", label="production").version == 1


def test_get_without_selector_returns_latest(store):
    """No label and no version means the newest version."""
    for text in ("a", "b", "c"):
        store.put("s", text, label="production" if text == "a" else None)
    assert store.get("s").content == "c"
    assert store.get("s", version=2).content == "b"


def test_get_follows_the_language_chain(store):
    """zh-TW falls back to zh, then to no language; an unrelated language gets the generic prompt."""
    store.put("s", "generic")
    store.put("s", "chinese", language="zh")
    assert store.get("s", language="zh-TW").content == "chinese"
    assert store.get("s", language="zh-Hant-TW").content == "chinese"
    assert store.get("s", language="fr").content == "generic"
    assert store.get("s").content == "generic"
    store.put("s", "taiwan", language="zh-TW")
    assert store.get("s", language="zh_TW").content == "taiwan"
    assert store.get("s", language="zh").content == "chinese"


def test_get_follows_the_model_fallback_within_a_language(store):
    """The exact model wins, then no model; the language matters more than the model."""
    store.put("s", "zh any model", language="zh")
    store.put("s", "any language for gpt", model="gpt-4o")
    assert store.get("s", language="zh", model="gpt-4o").content == "zh any model"
    assert store.get("s", model="gpt-4o").content == "any language for gpt"
    store.put("s", "zh for gpt", language="zh", model="gpt-4o")
    assert store.get("s", language="zh-TW", model="gpt-4o").content == "zh for gpt"
    assert store.get("s", language="zh", model="claude").content == "zh any model"


def test_label_lookup_falls_back_to_a_key_that_has_the_label(store):
    """A language without the label defers to the next key in the chain that has it."""
    store.put("s", "generic prod", label="production")
    store.put("s", "zh draft", language="zh")
    assert store.get("s", language="zh").content == "zh draft"
    assert store.get("s", language="zh", label="production").content == "generic prod"
    store.set_label("s", "production", 1, language="zh")
    assert store.get("s", language="zh-TW", label="production").content == "zh draft"


def test_missing_prompt_raises_lookup_error_listing_what_was_tried(store):
    """The error is a PromptNotFoundError (a LookupError) naming the keys tried."""
    store.put("s", "zh only", language="zh")
    with pytest.raises(LookupError) as caught:
        store.get("s", language="fr", model="gpt-4o")
    assert isinstance(caught.value, PromptNotFoundError)
    assert "(fr, gpt-4o)" in str(caught.value) and "(-, -)" in str(caught.value)
    with pytest.raises(PromptNotFoundError, match="label 'production'"):
        store.get("s", language="zh", label="production")
    with pytest.raises(PromptNotFoundError):
        store.get("s", language="zh", version=2)


def test_label_and_version_together_are_refused(store):
    """Asking for both a label and a version is ambiguous."""
    store.put("s", "x", label="production")
    with pytest.raises(StoreError, match="not both"):
        store.get("s", label="production", version=1)


@pytest.mark.parametrize("bad", [0, -1, True])
def test_bad_version_numbers_are_refused(store, bad):
    """Versions are whole numbers from 1."""
    store.put("s", "x")
    with pytest.raises(StoreError):
        store.get("s", version=bad)


def test_history_lists_one_key_oldest_first(store):
    """History is exact: no fallback, oldest first, with labels."""
    store.put("s", "one", author="ana")
    store.put("s", "two", note="shorter", label="production")
    store.put("s", "zh", language="zh")
    history = store.history("s")
    assert [(r.version, r.content, r.author, r.note, r.labels) for r in history] == [
        (1, "one", "ana", "", ()),
        (2, "two", "", "shorter", ("production",)),
    ]
    assert [r.content for r in store.history("s", language="zh")] == ["zh"]
    with pytest.raises(PromptNotFoundError):
        store.history("s", language="zh-TW")


def test_list_summarises_every_key(store):
    """One summary per key, sorted, with the newest version and the labels."""
    assert store.list() == ()
    store.put("b", "1")
    store.put("a", "1", language="zh", label="production")
    store.put("a", "2", language="zh", label="staging")
    store.put("a", "1")
    summaries = store.list()
    assert [(s.name, s.language, s.model, s.latest_version, s.labels) for s in summaries] == [
        ("a", "", "", 1, ()),
        ("a", "zh", "", 2, (("production", 1), ("staging", 2))),
        ("b", "", "", 1, ()),
    ]
    assert [s.name for s in store.list(name="b")] == ["b"]


def test_diff_is_a_unified_diff_between_versions(store):
    """The diff shows removed and added lines under the two versions' references."""
    store.put("s", "keep\nold line\n", language="zh")
    store.put("s", "keep\nnew line\n", language="zh")
    text = store.diff("s", 1, 2, language="zh")
    assert text.splitlines()[:2] == ["--- s [zh] v1", "+++ s [zh] v2"]
    assert "-old line\n" in text and "+new line\n" in text and " keep\n" in text
    assert store.diff("s", 2, 2, language="zh") == ""
    with pytest.raises(PromptNotFoundError):
        store.diff("s", 1, 3, language="zh")


def test_diff_marks_a_missing_final_newline(store):
    """Text without a final newline still diffs line by line."""
    store.put("s", "a\nb")
    store.put("s", "a\nc")
    text = store.diff("s", 1, 2)
    assert "-b\n\\ No newline at end of file\n" in text and "+c\n" in text


def test_nul_characters_are_refused_everywhere(store):
    """PostgreSQL cannot store NUL, so no backend accepts it, and nothing is written."""
    with pytest.raises(StoreError, match="NUL"):
        store.put("s", "a\x00b")
    with pytest.raises(StoreError):
        store.put("s", "ok", note="\x00")
    assert store.list() == ()


def test_content_over_the_limit_is_refused_and_nothing_is_written(store):
    """A version holds at most MAX_CONTENT_BYTES of UTF-8, on every backend alike; the limit itself is fine."""
    from profiles.store.keys import MAX_CONTENT_BYTES

    wide = "é" * (MAX_CONTENT_BYTES // 2)  # two bytes each: exactly the limit
    assert store.put("s", wide).version == 1
    with pytest.raises(StoreError, match=f"is {MAX_CONTENT_BYTES + 2:,} bytes of UTF-8; a stored prompt holds at most"):
        store.put("s", wide + "é")
    assert [record.version for record in store.history("s")] == [1]


@pytest.mark.parametrize("field", ["name", "content", "language", "model", "author", "note", "label"])
def test_lone_surrogates_are_refused(store, field):
    """Text that cannot be encoded as UTF-8 is a StoreError, not a driver crash."""
    values = {"name": "s", "content": "ok", field: "bad \ud800"}
    with pytest.raises(StoreError, match="not valid Unicode|not a BCP 47 tag"):
        store.put(values.pop("name"), values.pop("content"), **values)
    assert store.list() == ()


def test_store_reopens_with_its_data(store_url, store):
    """A second store object on the same URL sees what the first wrote."""
    from profiles.store import PromptStore

    store.put("s", "persisted", label="production")
    with PromptStore(store_url) as again:
        assert again.get("s", label="production").content == "persisted"
        assert again.put("s", "next").version == 2


def test_list_of_a_store_of_seventy_thousand_prompts(store_url, store, tmp_path):
    """More prompt keys than PostgreSQL takes parameters in one statement (65,535): the labels and
    rollouts of every one are listed, where the listing failed as if the server were down."""
    from sqlalchemy import create_engine, text

    store.put("seed", "first", label="production")
    count = 70_000
    engine = create_engine(store_url)
    now = "2026-01-05 10:00:00"
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO profiles_prompts (id, name, language, model, created_at) "
                "VALUES (:id, :name, '', '', :now)"
            ),
            [{"id": 10 + n, "name": f"p{n:05d}", "now": now} for n in range(count)],
        )
        conn.execute(
            text(
                "INSERT INTO profiles_prompt_versions (prompt_id, version, content, created_at, author, note) "
                "VALUES (:id, 1, 'text', :now, '', '')"
            ),
            [{"id": 10 + n, "now": now} for n in range(count)],
        )
        conn.execute(
            text(
                "INSERT INTO profiles_prompt_labels (prompt_id, label, version, updated_at) "
                "VALUES (:id, 'production', 1, :now)"
            ),
            [{"id": 10 + n, "now": now} for n in range(count)],
        )
    engine.dispose()
    store.put("p69999", "second")
    store.rollout("p69999", "canary", {1: 90, 2: 10})

    summaries = store.list()
    assert len(summaries) == count + 1
    assert all(dict(summary.labels).get("production") == 1 for summary in summaries)
    assert dict(summaries[-2].rollouts) == {"canary": ((1, 90), (2, 10))}  # p69999, then seed


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.find("a", labels="production"), "labels= is a list of labels"),  # not p, r, o, d, …
        (lambda s: s.find("a", labels=None), "labels= is a list of labels"),
        (lambda s: s.match("a", labels=[]), "at least one label"),
        (lambda s: s.rollout("a", "canary", None), "a rollout is a mapping of version to weight"),
        (lambda s: s.rollout("a", "canary", 5), "a rollout is a mapping of version to weight"),
        (lambda s: s.put("a", "text", language=5), "the language must be text"),
        (lambda s: s.history("a", model=["gpt-4o"]), "the model must be text"),
        (lambda s: s.get("a", language=b"zh"), "the language must be text"),
        (lambda s: s.export(None), "export takes a folder's path"),
        (lambda s: s.import_(5), "import_ takes a folder's path"),
    ],
)
def test_arguments_of_the_wrong_type_are_a_store_error(store, call, message):
    """Each says what the argument takes, instead of a TypeError or AttributeError from inside, or a
    label chain given as one text read as the labels of its letters."""
    store.put("a", "one", label="production")
    with pytest.raises(StoreError, match=message):
        call(store)
    assert [summary.name for summary in store.list()] == ["a"]


def test_a_label_chain_given_as_a_generator_is_read_once(store):
    """tuple(labels) for the memo used to drain a generator, leaving the lookup an empty chain."""
    store.put("a", "one", label="production")
    store.put("a", "two")
    assert store.find("a", labels=(label for label in ["production", None]))[0].version == 1
