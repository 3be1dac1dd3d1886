"""The one-statement lookup against the rule it implements, written out here in plain Python from
what ``history`` and ``list`` read; and a PostgreSQL connection the server dropped costs nothing."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiles.errors import PromptNotFoundError
from profiles.store import PromptStore
from profiles.store.keys import candidate_keys

_LANGUAGES = ["", "zh", "zh-TW"]
_MODELS = ["", "gpt-4o"]
_LABELS = ["production", "staging", "canary"]

#: Writes to a handful of keys of one name: versions, labels and rollouts.
_writes = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.sampled_from(_LANGUAGES), st.sampled_from(_MODELS), st.none()),
        st.tuples(
            st.just("label"), st.sampled_from(_LANGUAGES), st.sampled_from(_MODELS), st.sampled_from(_LABELS)
        ),
        st.tuples(
            st.just("rollout"), st.sampled_from(_LANGUAGES), st.sampled_from(_MODELS), st.sampled_from(_LABELS)
        ),
    ),
    min_size=1,
    max_size=14,
)
_chains = st.lists(st.one_of(st.none(), st.sampled_from(_LABELS)), min_size=1, max_size=4)


def _expected(store: PromptStore, name: str, language: str, model: str, chain: list[str | None], version=None):
    """The best match by the documented rule, from reads that do not use the lookup statement:
    keys in fallback order; per key the pinned version, or the chain's labels in order (None: the
    newest version); a rolled-out label serves all its versions."""
    summaries = {(item.language, item.model): item for item in store.list(name=name)}
    for key in candidate_keys(name, language, model):
        summary = summaries.get((key.language, key.model))
        if summary is None:
            continue
        history = {record.version: record for record in store.history(name, language=key.language, model=key.model)}
        if version is not None:
            if version in history:
                return None, [(history[version], 1)]
            continue
        labels = dict(summary.labels)
        rollouts = dict(summary.rollouts)
        for label in chain:
            if label is None:
                return None, [(history[max(history)], 1)]
            if label in rollouts:
                return label, [(history[number], weight) for number, weight in rollouts[label]]
            if label in labels:
                return label, [(history[labels[label]], 1)]
    return None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(writes=_writes, chain=_chains, language=st.sampled_from(["", "zh", "zh-TW", "fr"]),
       model=st.sampled_from(["", "gpt-4o", "qwen2"]), pinned=st.one_of(st.none(), st.integers(1, 3)))
def test_match_follows_the_documented_order(store, writes, chain, language, model, pinned):
    name = f"p{uuid.uuid4().hex[:10]}"
    counts: dict[tuple[str, str], int] = {}
    for step, (kind, lang, mod, label) in enumerate(writes):
        have = counts.get((lang, mod), 0)
        if kind == "put" or have == 0:
            store.put(name, f"text {step}", language=lang, model=mod)
            counts[lang, mod] = have + 1
        elif kind == "label":
            store.set_label(name, label, 1 + step % counts[lang, mod], language=lang, model=mod)
        elif counts[lang, mod] >= 2:
            store.rollout(name, label, {counts[lang, mod]: 3, 1: 1}, language=lang, model=mod)
    expected = _expected(store, name, language, model, chain, pinned)
    try:
        found = store.match(name, language=language, model=model, labels=chain, version=pinned)
    except PromptNotFoundError:
        assert expected is None
        return
    assert expected is not None
    label, arms = expected
    assert found.label == label
    assert [(arm.record, arm.weight) for arm in found.arms] == arms
    # the labels a returned version lists are those `history` lists for it
    for arm, (record, _weight) in zip(found.arms, arms, strict=True):
        assert arm.record.labels == record.labels and arm.record.created_at == record.created_at


def _store_pids(store: PromptStore) -> list[int]:
    """The server processes behind the store's connections: the pooled one its writes use and the
    one this thread's lookups use."""
    connection = store._backend.engine.raw_connection()
    try:
        pids = [connection.dbapi_connection.info.backend_pid]
    finally:
        connection.close()
    reader = store._reader
    held = [] if reader is None else [item.dbapi for item in reader._all if item.dbapi is not None]
    return pids + [dbapi.info.backend_pid for dbapi in held]


def _terminate(url: str, pids: list[int]) -> None:
    from sqlalchemy import create_engine, text

    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            for pid in pids:
                assert conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid}).scalar()
    finally:
        admin.dispose()


def test_a_dropped_postgres_connection_is_replaced_silently(postgres_url):
    """The server ends the store's connections (a restart, an idle timeout): the next read and the
    next write each run on new ones, with no error and nothing lost."""
    store = PromptStore(postgres_url)
    try:
        store.put("greeting", "hello", label="production")
        assert store.get("greeting", label="production").content == "hello"
        _terminate(postgres_url, _store_pids(store))
        assert store.get("greeting", label="production").content == "hello"
        _terminate(postgres_url, _store_pids(store))
        store.put("greeting", "hello again", label="production")
        assert store.get("greeting", label="production").content == "hello again"
        assert [record.content for record in store.history("greeting")] == ["hello", "hello again"]
    finally:
        store.close()
