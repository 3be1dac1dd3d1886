#!/usr/bin/env python
"""Measure what agent-profiles costs, each cost beside the floor it could reach.

Prompt rendering runs on every agent step and batch creation over whole populations, so each row
times one operation of the library and, in the same run, the least work that operation could do
(the floor): the same template compiled once in a bare Jinja sandbox, libyaml alone, a plain
frozen dataclass. Machines are noisy; a ratio to a floor measured seconds apart is not, so the
targets are ratios wherever a floor exists.

    python bench/run.py            # every row, a few minutes
    python bench/run.py --quick    # fewer repeats and a 10,000-row batch, under a minute
    python bench/run.py --only system,import --json out.json

Rows for DB-GPT, LangChain, Haystack and datasketch run when the `bench` extra is installed
(`pip install -e ".[bench]"`) and are skipped otherwise.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

__all__ = ["ROWS", "Row", "main", "run"]

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "profile_configs"
DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "latest.json"

#: JSON layout version; bump it when a key changes meaning.
SCHEMA_VERSION = 1

QUESTION = "What changed in the Q3 report?"
AGENTS = "Searcher, Booker, Coder"


@dataclass
class Row:
    """One measured operation beside its floor, with the target it is held to."""

    id: str
    label: str
    unit: str
    status: str = "ok"  # ok, skipped or failed
    median: float | None = None
    p90: float | None = None
    floor: float | None = None
    floor_label: str | None = None
    ratio: float | None = None
    target: str | None = None
    passed: bool | None = None
    note: str | None = None
    samples: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Settings:
    """How hard to measure: `--quick` trades precision for time."""

    quick: bool
    repeats: int
    batch_seconds: float
    process_runs: int
    load_repeats: int
    batch_rows: int
    #: Personas `profiles generate --dedupe` makes in the dedupe row (and a tenth of them, to see
    #: how the cost grows), and texts the datasketch comparison indexes.
    dedupe_personas: int = 100_000
    compare_texts: int = 10_000

    @classmethod
    def make(cls, quick: bool) -> Settings:
        if quick:
            return cls(True, repeats=7, batch_seconds=0.01, process_runs=5, load_repeats=3, batch_rows=10_000,
                       dedupe_personas=10_000, compare_texts=2_000)
        return cls(False, repeats=30, batch_seconds=0.02, process_runs=15, load_repeats=9, batch_rows=100_000)


# measuring ------------------------------------------------------------------------------------


#: In-process rows count this process's CPU time, not wall time: on a shared machine other
#: processes stretch wall time by whatever they happen to run, CPU time far less.
_clock = time.process_time


def _per_call(fn: Callable[[], Any], number: int, clock: Callable[[], float] | None = None) -> float:
    clock = clock or _clock
    start = clock()
    for _ in range(number):
        fn()
    return (clock() - start) / number


def _calls_per_batch(fn: Callable[[], Any], seconds: float, clock: Callable[[], float] | None = None) -> int:
    """How many calls fill about `seconds`; a batch that short keeps the timer's cost out."""
    fn()  # warm: first calls compile and fill caches, which is not what a row measures
    number = 1
    while True:
        took = _per_call(fn, number, clock) * number
        if took >= seconds / 4 or number >= 1_000_000:
            return max(1, int(number * seconds / max(took, 1e-9)))
        number *= 4


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _paired(
    subject: Callable[[], Any],
    floor: Callable[[], Any],
    settings: Settings,
    repeats: int | None = None,
    clock: Callable[[], float] | None = None,
) -> tuple[list[float], list[float]]:
    """Per-call seconds of `subject` and `floor`, batches interleaved so drift hits both alike.

    `clock` is CPU time unless given: rows that wait on a server pass wall time, since the round
    trips are what they cost.
    """
    repeats = repeats or settings.repeats
    gc.collect()
    n_subject = _calls_per_batch(subject, settings.batch_seconds, clock)
    n_floor = _calls_per_batch(floor, settings.batch_seconds, clock)
    subject_times, floor_times = [], []
    for _ in range(repeats):
        subject_times.append(_per_call(subject, n_subject, clock))
        floor_times.append(_per_call(floor, n_floor, clock))
    return subject_times, floor_times


def _timed_row(
    row: Row, subject_times: list[float], floor_times: list[float], scale: float, max_ratio: float | None
) -> Row:
    row.median = statistics.median(subject_times) * scale
    row.p90 = _quantile(subject_times, 0.9) * scale
    row.floor = statistics.median(floor_times) * scale
    # each subject batch ran right beside a floor batch: the median of those pairs' ratios
    # holds still when other processes take the CPU for a while, the ratio of medians less so
    row.ratio = statistics.median(s / f for s, f in zip(subject_times, floor_times, strict=True) if f)
    row.samples = len(subject_times)
    if max_ratio is not None and row.ratio is not None:
        row.target = f"≤ {max_ratio:g}× floor"
        row.passed = row.ratio <= max_ratio
    return row


# the subjects and their floors ----------------------------------------------------------------


def _sentence(value: Any, end: str = ".") -> str:
    """The bundled templates' `sentence` filter: the floor needs it to compile the same template."""
    text = "" if value is None else str(value).rstrip()
    if not text:
        return ""
    return text if text[-1] in ".。!?！？" else text + end


def _bare_env() -> Any:
    """A plain immutable sandbox with the options the library's templates are written for."""
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["sentence"] = _sentence
    return env


def _system_inputs(question: str | None = None) -> dict[str, Any]:
    return {
        "question": question,
        "most_recent_memories": None,
        "resource_prompt": None,
        "out_schema": None,
        "now_time": None,
        "is_retry_chat": False,
    }


def _floor_renderer(profile: Any, caller: dict[str, Any]) -> tuple[Callable[[], str], dict[str, Any]]:
    """The least work the system prompt needs: its template and field templates compiled once.

    Returns the render function and the variables it passes the main template.
    """
    from jinja2 import meta

    env = _bare_env()
    source = profile.get_system_prompt_template()
    declared = meta.find_undeclared_variables(env.parse(source))
    every = {**_system_inputs(QUESTION), **dict(profile.values), **dict(profile.bound), **caller}
    variables = {name: every.get(name) for name in declared}
    template = env.from_string(source)

    def field_template(text: str) -> tuple[Any, dict[str, Any]]:
        names = meta.find_undeclared_variables(env.parse(text))
        return env.from_string(text), {name: every.get(name) for name in names}

    fields: list[tuple[str, int | None, Any, dict[str, Any]]] = []
    for name, value in profile.values.items():
        if name not in declared:
            continue
        if isinstance(value, str) and "{{" in value:
            fields.append((name, None, *field_template(value)))
        elif isinstance(value, tuple):
            for index, item in enumerate(value):
                if "{{" in item:
                    fields.append((name, index, *field_template(item)))

    if not fields:
        return (lambda: template.render(variables).strip()), variables

    def render() -> str:
        current = dict(variables)
        for name, index, compiled, field_variables in fields:
            text = compiled.render(field_variables)
            if index is None:
                current[name] = text
            else:
                items = list(current[name])
                items[index] = text
                current[name] = tuple(items)
        return template.render(current).strip()

    return render, variables


def row_system(settings: Settings) -> list[Row]:
    """format_system_prompt of the summarizer (six constraints) against the bare sandbox."""
    from profiles import load_profile

    profile = load_profile(CONFIGS / "summarizer.yaml").create_profile()
    floor, _ = _floor_renderer(profile, {})
    ours = profile.format_system_prompt(QUESTION)
    row = Row("system", "format_system_prompt, summarizer", "µs", floor_label="same template, bare sandbox")
    row.extra["same_output"] = ours == floor()
    return [_timed_row(row, *_paired(lambda: profile.format_system_prompt(QUESTION), floor, settings), 1e6, 1.1)]


def row_system_templated(settings: Settings) -> list[Row]:
    """format_system_prompt of the planner, whose fields hold `{{ agents }}` and `{{ max_steps }}`."""
    from profiles import load_profile

    profile = load_profile(CONFIGS / "planner.yaml").create_profile()
    floor, _ = _floor_renderer(profile, {"agents": AGENTS})
    ours = profile.format_system_prompt(QUESTION, agents=AGENTS)
    row = Row(
        "system_templated",
        "format_system_prompt, templated fields",
        "µs",
        floor_label="same templates, bare sandbox",
    )
    row.extra["same_output"] = ours == floor()

    def subject() -> str:
        return profile.format_system_prompt(QUESTION, agents=AGENTS)

    return [_timed_row(row, *_paired(subject, floor, settings), 1e6, 1.3)]


def row_messages(settings: Settings) -> list[Row]:
    """format_messages of the summarizer against its two prompts rendered alone, one after the other."""
    from profiles import load_profile

    profile = load_profile(CONFIGS / "summarizer.yaml").create_profile()

    def floor() -> tuple[str, str]:
        return profile.format_system_prompt(QUESTION), profile.format_user_prompt(QUESTION)

    def subject() -> Any:
        return profile.format_messages(QUESTION)

    row = Row("messages", "format_messages, summarizer", "µs", floor_label="system + user prompt alone")
    row.extra["same_output"] = [message["content"] for message in subject()] == list(floor())
    return [_timed_row(row, *_paired(subject, floor, settings), 1e6, 1.1)]


EXAMPLES = REPO / "examples"


def _chat_floor(source: str) -> Callable[..., str]:
    """transformers' chat-template environment on a bare immutable sandbox: the template compiled once.

    The same options, `tojson` and loop controls as transformers; inputs are prepared the way
    transformers prepares them (rebuilt from plain data, reasoning aliased), with the same code the
    library uses, so the row measures what the sandbox adds to a render.
    """
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from profiles.rendering.chat_template import _alias_reasoning_fields, _plain

    def tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = tojson
    template = env.from_string(source)

    def render(messages: Any, tools: Any = None, add_generation_prompt: bool = False) -> str:
        chat = _alias_reasoning_fields(_plain(messages))
        return template.render(
            messages=chat, tools=_plain(tools), documents=None, add_generation_prompt=add_generation_prompt
        )

    return render


def row_chat_template(settings: Settings) -> list[Row]:
    """A model's chat template (Qwen2.5, two tools, a tool call) through ChatTemplate, in the sandbox."""
    from profiles import ChatTemplate

    source = (EXAMPLES / "chat" / "qwen2.5-instruct.jinja").read_text(encoding="utf-8")
    conversation = json.loads((EXAMPLES / "chat" / "conversation.json").read_text(encoding="utf-8"))
    messages, tools = conversation["messages"], conversation["tools"]
    template = ChatTemplate(source)
    floor = _chat_floor(source)
    row = Row("chat_template", "chat template with tools (Qwen2.5)", "µs", floor_label="same template, bare sandbox")

    def subject() -> str:
        return template.render(messages, tools=tools, add_generation_prompt=True)

    def bare() -> str:
        return floor(messages, tools, add_generation_prompt=True)

    row.extra["same_output"] = subject() == bare()
    return [_timed_row(row, *_paired(subject, bare, settings), 1e6, 1.15)]


def _extends_floor(profile: Any, caller: dict[str, Any]) -> Callable[[], str]:
    """The persona's child and base templates compiled once, from the same folders, in a bare sandbox."""
    from jinja2 import FileSystemLoader

    env = _bare_env()
    env.loader = FileSystemLoader([str(root) for root in profile.renderer.roots])
    compiled = profile.template_for("system")
    template = env.get_template(compiled.name)
    every = {**_system_inputs(QUESTION), **dict(profile.values), **dict(profile.bound), **caller}
    variables = {name: every[name] for name in compiled.declared if name in every}
    return lambda: template.render(variables).strip()


def row_system_extends(settings: Settings) -> list[Row]:
    """format_system_prompt of a persona whose system template extends a shared base template."""
    from profiles import load_profile

    profile = load_profile(EXAMPLES / "extends" / "support.yaml").create_profile()
    floor = _extends_floor(profile, {"plan": "premium"})
    label = "format_system_prompt, template extends a base"
    row = Row("system_extends", label, "µs", floor_label="same templates, bare sandbox")

    def subject() -> str:
        return profile.format_system_prompt(QUESTION, plan="premium")

    row.extra["same_output"] = subject() == floor()
    return [_timed_row(row, *_paired(subject, floor, settings), 1e6, 1.15)]


@dataclass(frozen=True)
class _PlainProfile:
    """The floor of create_profile: a frozen record of the same twelve values."""

    name: Any
    role: Any
    goal: Any
    retry_goal: Any
    desc: Any
    constraints: Any
    retry_constraints: Any
    expand_prompt: Any
    examples: Any
    language: Any
    model: Any
    avatar: Any


_LITERAL_PERSONA = (CONFIGS / "summarizer.yaml").read_text(encoding="utf-8")


def _literal_config() -> Any:
    """The summarizer with every field literal (its name is a dynamic field in the file)."""
    from profiles import parse_profiles

    head, rest = _LITERAL_PERSONA.split("\nname:", 1)
    text = head + "\nname: Aristotle\nrole:" + rest.split("\nrole:", 1)[1]
    (config,) = parse_profiles(text, file="summarizer-literal.yaml", base_dir=CONFIGS)
    return config


def row_create_literal(settings: Settings) -> list[Row]:
    """create_profile() with literal fields: a new small profile on the plan compiled before.

    The floor: the deployment from the environment, then one dict lookup of what was made before.
    """
    config = _literal_config()
    made = {None: config.create_profile()}

    def floor() -> Any:
        return made.get(os.environ.get("PROFILES_DEPLOYMENT"))

    row = Row("create_literal", "create_profile(), literal fields", "µs", floor_label="env read + dict lookup")
    row = _timed_row(row, *_paired(config.create_profile, floor, settings), 1e6, None)
    row.target = "< 15 µs"
    row.passed = row.median is not None and row.median < 15
    return [row]


def row_create_env(settings: Settings) -> list[Row]:
    """create_profile() of the summarizer as shipped, its name read from the environment."""
    from profiles import load_profile

    config = load_profile(CONFIGS / "summarizer.yaml")
    row = Row("create_env", "create_profile(), env field", "µs", floor_label="frozen dataclass + os.environ.get")
    previous = os.environ.get("SUMMARY_PROFILE_NAME")
    os.environ["SUMMARY_PROFILE_NAME"] = "Plato"
    try:
        assert config.create_profile().get_name() == "Plato"
        values = dict(config.create_profile().values)

        def floor() -> Any:  # the least work: a new record, its one dynamic value read from the environment
            return _PlainProfile(**{**values, "name": os.environ.get("SUMMARY_PROFILE_NAME") or "Aristotle"})

        return [_timed_row(row, *_paired(config.create_profile, floor, settings), 1e6, 3)]
    finally:
        if previous is None:
            del os.environ["SUMMARY_PROFILE_NAME"]
        else:
            os.environ["SUMMARY_PROFILE_NAME"] = previous


@dataclass(frozen=True, slots=True)
class _SlottedProfile:
    """The memory floor of a held profile: the same twelve values in a slotted frozen record."""

    name: Any
    role: Any
    goal: Any
    retry_goal: Any
    desc: Any
    constraints: Any
    retry_constraints: Any
    expand_prompt: Any
    examples: Any
    language: Any
    model: Any
    avatar: Any


def row_memory(settings: Settings) -> list[Row]:
    """Bytes each held profile adds (env field, a distinct name each), against a slotted record."""
    import tracemalloc

    from profiles import load_profile

    config = load_profile(CONFIGS / "summarizer.yaml")
    count = 2_000 if settings.quick else 10_000
    previous = os.environ.get("SUMMARY_PROFILE_NAME")
    names = [f"Plato {index}" for index in range(count)]  # made before, so neither side pays for them

    def held(make: Callable[[str], Any]) -> float:
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        kept = [make(name) for name in names]
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        assert len(kept) == count
        return (after - before) / count

    def ours(name: str) -> Any:
        os.environ["SUMMARY_PROFILE_NAME"] = name
        return config.create_profile()

    try:
        ours("warm")
        values = dict(config.create_profile().values)
        subject = held(ours)

        def plain(name: str) -> Any:  # the same environment read, so both hold a string of their own
            os.environ["SUMMARY_PROFILE_NAME"] = name
            return _SlottedProfile(**{**values, "name": os.environ.get("SUMMARY_PROFILE_NAME")})

        floor = held(plain)
    finally:
        if previous is None:
            os.environ.pop("SUMMARY_PROFILE_NAME", None)
        else:
            os.environ["SUMMARY_PROFILE_NAME"] = previous
    row = Row("memory", "memory per held profile", "B", floor_label="slotted frozen dataclass")
    row.median = subject
    row.floor = floor
    row.ratio = subject / floor if floor else None
    row.samples = count
    row.target = "≤ 2× floor"
    row.passed = row.ratio is not None and row.ratio <= 2
    return [row]


# the prompt store --------------------------------------------------------------------------


#: The store key of the summarizer's name in the store rows.
_STORE_KEY = "summarizer/name"

#: The least a label lookup can ask of the database: one exact key, one label, one join.
_RAW_SELECT = (
    "SELECT v.version, v.content, v.created_at, v.author, v.note FROM profiles_prompts p "
    "JOIN profiles_prompt_labels l ON l.prompt_id = p.id "
    "JOIN profiles_prompt_versions v ON v.prompt_id = p.id AND v.version = l.version "
    "WHERE p.name = {p} AND p.language = {p} AND p.model = {p} AND l.label = {p}"
)


def _fill_store(url: str) -> None:
    """A store as a team keeps one: a few versions, a staging and a production label, a Chinese key."""
    from profiles.store import PromptStore

    with PromptStore(url) as store:
        for number in range(1, 4):
            store.put(_STORE_KEY, f"Plato {number}", author="bench")
        store.set_label(_STORE_KEY, "production", 2)
        store.set_label(_STORE_KEY, "staging", 3)
        store.put(_STORE_KEY, "柏拉图", language="zh", label="production")
        store.put("summarizer/goal", "Summarize.", label="production")


def _store_get_row(row: Row, url: str, floor: Callable[[], Any], settings: Settings, clock: Any, target: float) -> Row:
    from profiles.store import PromptStore

    store = PromptStore(url, create=False)
    try:
        found = store.get(_STORE_KEY, label="production")
        row.extra["same_output"] = (found.version, found.content) == tuple(floor()[:2])

        def subject() -> Any:
            return store.get(_STORE_KEY, label="production")

        return _timed_row(row, *_paired(subject, floor, settings, clock=clock), 1e6, target)
    finally:
        store.close()


def row_store_get_sqlite(settings: Settings) -> list[Row]:
    """PromptStore.get by label on a SQLite file against one raw SELECT on an open connection."""
    import sqlite3

    with tempfile.TemporaryDirectory(prefix="profiles-bench-store-") as tmp:
        path = Path(tmp) / "store.db"
        url = f"sqlite:///{path}"
        _fill_store(url)
        raw = sqlite3.connect(path)
        sql = _RAW_SELECT.format(p="?")
        try:
            row = Row("store_get_sqlite", "PromptStore.get, SQLite", "µs", floor_label="one raw SELECT")
            return [_store_get_row(
                row, url, lambda: raw.execute(sql, (_STORE_KEY, "", "", "production")).fetchone(), settings, None, 3
            )]
        finally:
            raw.close()


def _postgres_base() -> str | None:
    return os.environ.get("PROFILES_BENCH_POSTGRES_URL") or os.environ.get("PROFILES_TEST_POSTGRES_URL")


def row_store_get_postgres(settings: Settings) -> list[Row]:
    """PromptStore.get by label on PostgreSQL against one raw SELECT (wall time: round trips count)."""
    row = Row("store_get_postgres", "PromptStore.get, PostgreSQL", "µs", floor_label="one raw SELECT")
    base = _postgres_base()
    if not base:
        row.status = "skipped"
        row.note = "skipped: set PROFILES_BENCH_POSTGRES_URL (or PROFILES_TEST_POSTGRES_URL)"
        return [row]
    import uuid
    from urllib.parse import quote

    import psycopg
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    schema = f"bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        url = f"{base}{'&' if '?' in base else '?'}options={quote(f'-csearch_path={schema}')}"
        _fill_store(url)
        plain = make_url(base).set(drivername="postgresql").render_as_string(hide_password=False)
        raw = psycopg.connect(plain, options=f"-csearch_path={schema}", autocommit=True)
        sql = _RAW_SELECT.format(p="%s")
        try:
            floor = lambda: raw.execute(sql, (_STORE_KEY, "", "", "production")).fetchone()  # noqa: E731
            return [_store_get_row(row, url, floor, settings, time.perf_counter, 1.5)]
        finally:
            raw.close()
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def _store_persona(url: str, ttl: float) -> tuple[Any, Any]:
    """The summarizer with its name read from the store, and the provider it reads through."""
    from profiles import StoreProvider, parse_profiles, register_provider

    text = _LITERAL_PERSONA.replace(
        "key: SUMMARY_PROFILE_NAME\n  provider: env", f"key: {_STORE_KEY}\n  provider: store"
    )
    (config,) = parse_profiles(text, file="summarizer-store.yaml", base_dir=CONFIGS)
    provider = StoreProvider(url, ttl=ttl)
    register_provider("store", provider)
    return config, provider


@contextmanager
def _cached_store_persona() -> Iterator[tuple[Any, Any]]:
    """The store-backed summarizer with its provider's cache filled for the `prod` deployment."""
    from profiles import StoreProvider, register_provider
    from profiles.context import Context

    with tempfile.TemporaryDirectory(prefix="profiles-bench-store-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'store.db'}"
        _fill_store(url)
        config, provider = _store_persona(url, ttl=3600)
        try:
            assert provider.find(_STORE_KEY, Context(deployment="prod")).value == "Plato 2"
            yield config, provider
        finally:
            provider.close()
            register_provider("store", StoreProvider())


def row_store_hit(settings: Settings) -> list[Row]:
    """The store provider answering from its TTL cache, against the dict lookup a cache needs."""
    from profiles.context import Context

    with _cached_store_persona() as (_config, provider):
        context = Context(deployment="prod")
        cache = {_STORE_KEY: "Plato 2"}
        row = Row("store_hit", "store lookup, TTL-cache hit", "µs", floor_label="dict lookup")
        times = _paired(lambda: provider.find(_STORE_KEY, context), lambda: cache.get(_STORE_KEY), settings)
        row = _timed_row(row, *times, 1e6, None)
        row.target = "≤ 5 µs"
        row.passed = row.median is not None and row.median <= 5
        return [row]


def row_create_store_hit(settings: Settings) -> list[Row]:
    """create_profile() with its name from the store, answered from the provider's cache."""
    with _cached_store_persona() as (config, _provider):
        profile = config.create_profile(deployment="prod")
        assert profile.get_name() == "Plato 2"
        values = dict(profile.values)
        cache = {_STORE_KEY: "Plato 2"}

        def floor() -> Any:  # the least work: a new record, its one dynamic value from a cache
            return _PlainProfile(**{**values, "name": cache[_STORE_KEY]})

        row = Row("create_store_hit", "create_profile(), store field, TTL hit", "µs",
                  floor_label="frozen dataclass + dict lookup")
        return [_timed_row(row, *_paired(lambda: config.create_profile(deployment="prod"), floor, settings), 1e6, 3)]


def row_create_store_ttl0(settings: Settings) -> list[Row]:
    """create_profile with a store field and no cache (ttl=0): one lookup per profile, SQLite."""
    import sqlite3

    from profiles import StoreProvider, register_provider

    with tempfile.TemporaryDirectory(prefix="profiles-bench-store-") as tmp:
        path = Path(tmp) / "store.db"
        url = f"sqlite:///{path}"
        _fill_store(url)
        config, provider = _store_persona(url, ttl=0)
        raw = sqlite3.connect(path)
        sql = _RAW_SELECT.format(p="?")
        try:
            assert config.create_profile(deployment="prod").get_name() == "Plato 2"
            row = Row("create_store_ttl0", "create_profile(), store field, ttl=0, SQLite", "µs",
                      floor_label="one raw SELECT")
            floor = lambda: raw.execute(sql, (_STORE_KEY, "", "", "production")).fetchone()  # noqa: E731
            return [_timed_row(row, *_paired(lambda: config.create_profile(deployment="prod"), floor,
                                             settings), 1e6, None)]
        finally:
            raw.close()
            provider.close()
            register_provider("store", StoreProvider())


_PERSONA_TEMPLATE = """\
# yaml-language-server: $schema=../schema/persona.schema.json
name: Persona {index}
role: Summarizer
goal: >-
  Summarize the answer to the user's question from the provided resources,
  keeping every fact it relies on (persona {index}).
retry_goal: Summarize again, fixing what the reviewer pointed out.
constraints:
  - Use only the information in the provided resources; never invent facts.
  - Keep the summary under {words} words.
  - Lead with the direct answer to the question, then the supporting points.
  - Keep numbers, names and dates exactly as they appear in the resources.
  - If the resources do not answer the question, say so plainly.
  - Write plain prose without headings or bullet points.
language: {language}
variables:
  max_steps: {steps}
"""


def write_personas(folder: Path, count: int) -> list[Path]:
    """Write `count` distinct persona files, as a team keeping one file per agent would."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        path = folder / f"persona_{index:05d}.yaml"
        language = ("en", "zh", "fr")[index % 3]
        path.write_text(
            _PERSONA_TEMPLATE.format(index=index, words=100 + index % 200, language=language, steps=index % 10),
            encoding="utf-8",
        )
        paths.append(path)
    return paths


def row_load(settings: Settings) -> list[Row]:
    """load_profiles() over a folder of 1,000 persona files against libyaml alone."""
    import yaml

    from profiles import load_profiles

    count = 1000
    with tempfile.TemporaryDirectory(prefix="profiles-bench-") as tmp:
        folder = Path(tmp)
        paths = write_personas(folder, count)
        loader = getattr(yaml, "CSafeLoader", None)
        if loader is None:
            return [Row("load_1000", "load 1,000 personas", "s", status="skipped", note="PyYAML has no libyaml")]

        def subject() -> Any:
            loaded = load_profiles(folder)
            assert len(loaded) == count
            return loaded

        def floor() -> list[Any]:
            return [yaml.load(path.read_text(encoding="utf-8"), Loader=loader) for path in sorted(folder.iterdir())]

        row = Row("load_1000", "load 1,000 personas (load_profiles)", "s", floor_label="yaml.load, CSafeLoader")
        subject_times, floor_times = [], []
        subject(), floor()  # warm the file cache and imports
        for _ in range(settings.load_repeats):
            subject_times.append(_per_call(subject, 1))
            floor_times.append(_per_call(floor, 1))
        row = _timed_row(row, subject_times, floor_times, 1.0, 1.5)
        if not settings.quick:
            row.extra["pure_python_safe_load_s"] = _per_call(
                lambda: [yaml.safe_load(path.read_text(encoding="utf-8")) for path in paths], 1
            )
        return [row]


# child processes ------------------------------------------------------------------------------


#: Runs a command as its own child and reports that child's resource use. A process forked from
#: this one starts with this one's resident memory as its high-water mark, and keeps it across
#: exec, so measuring a child directly would report this benchmark's own size; the launcher is
#: small, and its child's peak is the command's own.
_LAUNCHER = """
import json, resource, subprocess, sys
code = subprocess.call(sys.argv[2:])
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "maxrss_kib": usage.ru_maxrss, "cpu": usage.ru_utime + usage.ru_stime}, out)
"""


#: Children may write bytecode whatever this shell says: an installed package has its .pyc files,
#: so a command that compiles its modules from source on every run would measure the wrong thing.
_CHILD_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


@dataclass(frozen=True)
class _Run:
    """What one child process cost."""

    code: int
    wall: float  # seconds
    cpu: float  # seconds, user + system
    peak_mb: float  # resident memory high-water mark, 10**6 bytes
    output: str  # the end of what it printed


def _child(argv: list[str], *, cwd: Path | None = None, timeout: float = 600) -> _Run:
    """Run `argv` through the launcher; a run past `timeout` seconds is killed (exit code -9)."""
    with tempfile.TemporaryDirectory(prefix="profiles-bench-run-") as tmp:
        report = Path(tmp) / "usage.json"
        output_path = Path(tmp) / "output"
        with output_path.open("wb") as output:
            start = time.perf_counter()
            process = subprocess.Popen(
                [sys.executable, "-c", _LAUNCHER, str(report), *argv],
                cwd=cwd,
                env=_CHILD_ENV,
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # so a timeout ends the command too, not just the launcher
            )
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, 9)
                process.wait()
            wall = time.perf_counter() - start
        tail = output_path.read_bytes().decode("utf-8", "replace")[-2000:]
        if not report.exists():
            return _Run(process.returncode or -9, wall, 0.0, 0.0, tail)
        usage = json.loads(report.read_text(encoding="utf-8"))
    peak_mb = usage["maxrss_kib"] * 1024 / 1e6  # ru_maxrss is in KiB on Linux
    return _Run(usage["code"], wall, usage["cpu"], peak_mb, tail)


def _python_ms(code: str) -> tuple[float, float]:
    """CPU and wall milliseconds of `python -c code` in a fresh interpreter."""
    run = _child([sys.executable, "-c", code], cwd=Path(tempfile.gettempdir()), timeout=60)
    if run.code != 0:
        raise RuntimeError(f"python -c {code!r} failed: {run.output.strip()[-200:]}")
    return run.cpu * 1e3, run.wall * 1e3


def row_import(settings: Settings) -> list[Row]:
    """`import profiles` in a fresh interpreter, less the interpreter's own start-up (CPU time)."""
    runs = settings.process_runs
    variants = {
        "bare": "pass",
        "import": "import profiles",
        "first_use": "import profiles; profiles.load_profile; profiles.ProfileConfig",
    }
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    wall: dict[str, list[float]] = {name: [] for name in variants}
    _python_ms("import profiles")  # warm the bytecode cache
    for _ in range(runs):  # interleaved, so a busy moment hits every variant
        for name, code in variants.items():
            cpu_ms, wall_ms = _python_ms(code)
            cpu[name].append(cpu_ms)
            wall[name].append(wall_ms)
    bare = statistics.median(cpu["bare"])
    row = Row("import", "import profiles (fresh interpreter)", "ms", floor_label="python -c pass")
    row.median = statistics.median(cpu["import"]) - bare
    row.p90 = _quantile(cpu["import"], 0.9) - bare
    row.floor = bare
    row.ratio = statistics.median(cpu["import"]) / bare
    row.samples = runs
    row.target = "< 150 ms"
    row.passed = row.median < 150
    row.extra["import_and_first_use_ms"] = statistics.median(cpu["first_use"]) - bare
    row.extra["wall_ms"] = statistics.median(wall["import"]) - statistics.median(wall["bare"])
    detail = _import_breakdown()
    if detail:
        row.extra["slowest_imports_ms"] = detail
    return [row]


#: The least a cold `profiles render` of the summarizer needs: read the YAML with libyaml, read its
#: one environment field, compile the default family's three templates in a bare sandbox and print
#: them as the command does.
_RENDER_FLOOR = r"""
import os, sys
import yaml
from jinja2 import FileSystemLoader
from jinja2.sandbox import ImmutableSandboxedEnvironment

def sentence(value, end="."):
    text = "" if value is None else str(value).rstrip()
    return text if not text or text[-1] in ".。!?！？" else text + end

path, templates, question = sys.argv[1:4]
with open(path, encoding="utf-8") as file:
    data = yaml.load(file, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
name = data["name"]
if isinstance(name, dict):
    name = os.environ.get(name["key"]) or name.get("default")
values = {**data, "name": name, "question": question}
env = ImmutableSandboxedEnvironment(
    loader=FileSystemLoader([os.path.join(templates, "default", "en"), os.path.join(templates, "default")]),
    trim_blocks=True, lstrip_blocks=True,
)
env.filters["sentence"] = sentence
parts = []
for kind in ("system", "user", "write_memory"):
    parts.append(f"===== {kind} prompt =====\n" + env.get_template(kind + ".j2").render(values).strip())
print("\n\n".join(parts))
"""

#: The least the first use of the library needs: the same, for the system prompt alone.
_FIRST_USE_FLOOR = _RENDER_FLOOR.replace('("system", "user", "write_memory")', '("system",)')


def _cold_pair(subject: list[str], floor: list[str], runs: int, cwd: Path) -> tuple[list[_Run], list[_Run]]:
    """`runs` child processes of each command, interleaved so a busy moment hits both."""
    _child(subject, cwd=cwd, timeout=60)  # warm the bytecode and file caches
    _child(floor, cwd=cwd, timeout=60)
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(_child(subject, cwd=cwd, timeout=60))
        theirs.append(_child(floor, cwd=cwd, timeout=60))
    return ours, theirs


def _cold_row(row: Row, ours: list[_Run], theirs: list[_Run], max_ratio: float | None) -> Row:
    failed = [run for run in (*ours, *theirs) if run.code != 0]
    if failed:
        row.status = "failed"
        row.note = f"exit {failed[0].code}: " + (failed[0].output.strip().splitlines() or ["no output"])[-1][:160]
        return row
    return _timed_row(row, [run.cpu for run in ours], [run.cpu for run in theirs], 1e3, max_ratio)


def row_render_cold(settings: Settings) -> list[Row]:
    """`profiles render summarizer.yaml` in a fresh process against the bare script (CPU time)."""
    persona = CONFIGS / "summarizer.yaml"
    templates = REPO / "templates"
    subject = [sys.executable, "-m", "profiles", "render", str(persona), "-q", QUESTION]
    floor = [sys.executable, "-c", _RENDER_FLOOR, str(persona), str(templates), QUESTION]
    cwd = Path(tempfile.gettempdir())
    env_before = os.environ.pop("SUMMARY_PROFILE_NAME", None)
    try:
        ours, theirs = _cold_pair(subject, floor, settings.process_runs, cwd)
        same = subprocess.run(subject, capture_output=True, text=True, cwd=cwd).stdout.strip() == subprocess.run(
            floor, capture_output=True, text=True, cwd=cwd
        ).stdout.strip()
    finally:
        if env_before is not None:
            os.environ["SUMMARY_PROFILE_NAME"] = env_before
    row = Row("render_cold", "profiles render summarizer.yaml (cold)", "ms", floor_label="PyYAML + bare sandbox script")
    row = _cold_row(row, ours, theirs, 2)
    row.extra["same_output"] = same
    row.extra["wall_ms"] = statistics.median(run.wall for run in ours) * 1e3
    return [row]


def row_first_use(settings: Settings) -> list[Row]:
    """`import profiles`, load the summarizer, create it and render its system prompt, cold."""
    persona = CONFIGS / "summarizer.yaml"
    code = (
        "import sys, profiles\n"
        "profile = profiles.load_profile(sys.argv[1]).create_profile()\n"
        "print('===== system prompt =====\\n' + profile.format_system_prompt(sys.argv[3]))"
    )
    subject = [sys.executable, "-c", code, str(persona), "-", QUESTION]
    floor = [sys.executable, "-c", _FIRST_USE_FLOOR, str(persona), str(REPO / "templates"), QUESTION]
    cwd = Path(tempfile.gettempdir())
    ours, theirs = _cold_pair(subject, floor, settings.process_runs, cwd)
    row = Row("first_use", "import, load, create, render (cold)", "ms", floor_label="PyYAML + bare sandbox script")
    row = _cold_row(row, ours, theirs, None)
    same = subprocess.run(subject, capture_output=True, text=True, cwd=cwd).stdout.strip() == subprocess.run(
        floor, capture_output=True, text=True, cwd=cwd
    ).stdout.strip()
    row.extra["same_output"] = same
    return [row]


def _import_breakdown() -> dict[str, float]:
    """The heaviest modules `import profiles` pulls in, from `python -X importtime`."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import profiles"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    costs = {}
    for line in result.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            costs[parts[2].strip()] = int(parts[1]) / 1e3  # cumulative µs → ms
    top = sorted(costs.items(), key=lambda item: -item[1])[:5]
    return {name: round(ms, 2) for name, ms in top}


def write_dataset(folder: Path, rows: int) -> tuple[Path, Path, Path]:
    """A customers CSV of `rows` rows, with the example mapping and base persona it fits.

    The rows come from bench/batch.py, the batch-only benchmark, so both measure the same data.
    """
    spec = importlib.util.spec_from_file_location("profiles_bench_batch", Path(__file__).with_name("batch.py"))
    batch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(batch)
    data = folder / "customers.csv"
    batch.make_dataset(data, rows)
    return data, batch.DATASETS / "customers.map.yaml", batch.DATASETS / "support_agent.yaml"


def batch_available() -> tuple[bool, str]:
    """Whether this installation has `profiles batch`, asked of the CLI itself, and its help text."""
    result = subprocess.run(
        [sys.executable, "-m", "profiles", "batch", "--help"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=tempfile.gettempdir(),  # the installed package, as the batch run itself sees it
    )
    return result.returncode == 0, result.stdout


#: The least `profiles batch --render` over the customers CSV needs, in one process: read the CSV,
#: fill each row's persona as the mapping and base persona say (the mapping's and the fields'
#: templates compiled once, in a bare sandbox), render the two prompts with the default family's
#: templates compiled once per language, and write the same JSON lines with the same encoder. The
#: benchmark checks that its output equals the command's, byte for byte.
_BATCH_FLOOR = r"""
import csv, sys
import yaml
from jinja2 import FileSystemLoader
from jinja2.sandbox import ImmutableSandboxedEnvironment
from profiles.jsonlines import dumps_line

source, mapping_path, base_path, templates, question, out_path = sys.argv[1:7]

def sentence(value, end="."):
    text = "" if value is None else str(value).rstrip()
    return text if not text or text[-1] in ".。!?！？" else text + end

load = lambda path: yaml.load(open(path, encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
mapping, base = load(mapping_path), load(base_path)
bare = ImmutableSandboxedEnvironment()
fields = {target: bare.from_string(spec) for target, spec in mapping["fields"].items() if "{{" in spec}
columns = {target: spec for target, spec in mapping["fields"].items() if "{{" not in spec}
constraints = [bare.from_string(text) for text in base["constraints"]]
kinds = {}
for language in ("en", "zh"):
    env = ImmutableSandboxedEnvironment(
        loader=FileSystemLoader([f"{templates}/default/{language}", f"{templates}/default"]),
        trim_blocks=True, lstrip_blocks=True)
    env.filters["sentence"] = sentence
    kinds[language] = (env.get_template("system.j2"), env.get_template("user.j2"))
inputs = {"question": question, "most_recent_memories": None, "resource_prompt": None, "out_schema": None,
          "now_time": None, "is_retry_chat": False, "retry_goal": None, "retry_constraints": None, "desc": None,
          "expand_prompt": None, "examples": None, "model": None, "avatar": None}
with open(source, newline="", encoding="utf-8") as file, open(out_path, "wb") as out:
    for number, row in enumerate(csv.DictReader(file), start=1):
        persona = {"name": base["name"], "role": base["role"], "goal": base["goal"],
                   "constraints": base["constraints"], "variables": dict(base["variables"])}
        for target, template in fields.items():
            persona[target] = template.render(row=row, row_number=number).strip()
        for target, column in columns.items():
            value = row[column].strip()
            if target.startswith("variables."):
                if value:
                    persona["variables"][target[10:]] = value
            elif value:
                persona[target] = value
        variables = persona["variables"]
        language = persona.get("language")
        system, user = kinds["zh" if language == "zh" else "en"]
        values = {**inputs, **variables, **persona,
                  "constraints": [template.render(variables).strip() for template in constraints],
                  "language": language}
        record = {"id": row[mapping["id"]], "row": number, "persona": persona,
                  "prompts": {"system": system.render(values).strip(), "user": user.render(values).strip()}}
        out.write(dumps_line(record))
"""


def _batch_runs(rows: int, settings: Settings, variants: dict[str, list[str]]) -> tuple[dict[str, list[_Run]], dict]:
    """Each variant's child processes over one generated CSV, interleaved; and what each wrote.

    A variant is extra arguments for `profiles batch` (its output path is added), or, for the
    floor, `["floor"]`.
    """
    repeats = 1 if settings.quick else 2
    runs: dict[str, list[_Run]] = {name: [] for name in variants}
    written: dict[str, bytes | None] = {}
    with tempfile.TemporaryDirectory(prefix="profiles-bench-batch-") as tmp:
        folder = Path(tmp)
        data, mapping, base = write_dataset(folder, rows)
        for _ in range(repeats):
            for name, extra in variants.items():
                out = folder / (f"{name}.jsonl" if "ray" not in extra else name)
                if out.is_dir():
                    shutil.rmtree(out)
                else:
                    out.unlink(missing_ok=True)
                if extra == ["floor"]:
                    argv = [sys.executable, "-c", _BATCH_FLOOR, str(data), str(mapping), str(base),
                            str(REPO / "templates"), QUESTION, str(out)]
                else:
                    argv = [sys.executable, "-m", "profiles", "batch", "--from", str(data), "--map", str(mapping),
                            "--base", str(base), "--out", str(out), "--render", "--question", QUESTION, "--quiet",
                            *extra]
                runs[name].append(_child(argv, cwd=folder, timeout=600 if settings.quick else 1200))
                if out.is_dir():
                    written[name] = b"".join(path.read_bytes() for path in sorted(out.glob("part-*.jsonl")))
                else:
                    written[name] = out.read_bytes() if out.exists() else None
    return runs, written


def _failed(row: Row, runs: dict[str, list[_Run]]) -> bool:
    for name, items in runs.items():
        for run in items:
            if run.code != 0:
                row.status = "failed"
                row.note = f"{name}: exit {run.code}: " + (run.output.strip().splitlines() or ["no output"])[-1][:200]
                return True
    return False


def row_batch(settings: Settings) -> list[Row]:
    """`profiles batch --render` on one core against the tight script (CPU time), output checked equal."""
    rows = settings.batch_rows
    row = Row("batch", f"profiles batch --render, {rows:,} rows", "s", floor_label="csv → compiled templates → JSON")
    available, _help = batch_available()
    if not available:
        row.status = "skipped"
        row.note = "skipped: batch command not available"
        return [row]
    runs, written = _batch_runs(rows, settings, {"ours": ["--workers", "1"], "floor": ["floor"]})
    if _failed(row, runs):
        return [row]
    ours = statistics.median(run.cpu for run in runs["ours"])
    floor = statistics.median(run.cpu for run in runs["floor"])
    peak = max(run.peak_mb for run in runs["ours"])
    row.median, row.floor, row.ratio, row.samples = ours, floor, ours / floor, len(runs["ours"])
    share = floor / ours
    row.target = "≥ 70 % of the floor's rows/s; < 60 MB peak"
    row.passed = share >= 0.7 and peak < 60
    row.extra.update(rows=rows, rows_per_s=rows / ours, floor_rows_per_s=rows / floor, share_of_floor=share,
                     peak_mb=peak, same_output=written["ours"] == written["floor"],
                     wall_s=statistics.median(run.wall for run in runs["ours"]))
    from profiles.cli.progress import format_rate  # the one format the commands show rates in

    same = "same output" if row.extra["same_output"] else "OUTPUT DIFFERS"
    row.note = (f"{format_rate(rows / ours)} rows/s, {share:.0%} of the floor's {format_rate(rows / floor)}; "
                f"peak {peak:.0f} MB; {same}")
    return [row]


def row_batch_workers(settings: Settings) -> list[Row]:
    """`--workers 2` against `--workers 1` (wall time), the same bytes out."""
    rows = settings.batch_rows
    row = Row("batch_workers", f"profiles batch --workers 2, {rows:,} rows", "s", floor_label="--workers 1")
    runs, written = _batch_runs(rows, settings, {"one": ["--workers", "1"], "two": ["--workers", "2"]})
    if _failed(row, runs):
        return [row]
    one = statistics.median(run.wall for run in runs["one"])
    two = statistics.median(run.wall for run in runs["two"])
    # ru_maxrss of the children is the largest single process: the parent or one worker
    peak = max(run.peak_mb for run in runs["two"])
    row.median, row.floor, row.ratio, row.samples = two, one, two / one, len(runs["two"])
    row.target = "≥ 1.7× faster on 2 cores; ≤ 60 MB per process"
    row.passed = one / two >= 1.7 and peak <= 60
    # CPU time of every process of each run: what fanning out costs, whatever else the machine runs
    cpu_one = statistics.median(run.cpu for run in runs["one"])
    cpu_two = statistics.median(run.cpu for run in runs["two"])
    row.extra.update(rows=rows, speedup=one / two, peak_mb_per_process=peak, cpus=os.cpu_count(),
                     cpu_s_one=cpu_one, cpu_s_two=cpu_two, load_average=os.getloadavg()[0],
                     same_output=written["one"] == written["two"])
    same = "same output" if row.extra["same_output"] else "OUTPUT DIFFERS"
    row.note = (f"{one / two:.2f}× faster on {os.cpu_count()} cores; CPU {cpu_two:.1f} s in all processes "
                f"against {cpu_one:.1f} s; peak {peak:.0f} MB per process; {same}")
    return [row]


def row_batch_ray(settings: Settings) -> list[Row]:
    """`--engine ray` (a local Ray it starts, on this machine's cores) against the local engine."""
    rows = settings.batch_rows
    row = Row("batch_ray", f"profiles batch --engine ray, {rows:,} rows", "s", floor_label="local --workers 2")
    if importlib.util.find_spec("ray") is None:
        row.status = "skipped"
        row.note = "skipped: ray not installed (pip install -e '.[ray]')"
        return [row]
    runs, written = _batch_runs(rows, settings, {"local": ["--workers", "2"], "ray": ["--engine", "ray"]})
    if _failed(row, runs):
        return [row]
    local = statistics.median(run.wall for run in runs["local"])
    ray = statistics.median(run.wall for run in runs["ray"])
    row.median, row.floor, row.ratio, row.samples = ray, local, ray / local, len(runs["ray"])
    row.extra.update(rows=rows, same_output=written["local"] == written["ray"])
    same = "same output" if row.extra["same_output"] else "OUTPUT DIFFERS"
    row.note = f"wall time with Ray's start-up; {same}"
    return [row]


# near-duplicate removal ---------------------------------------------------------------------


def _scripted_server() -> Any:
    """The tests' scripted chat server, answering with its persona writer (repeats included)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from tests.llm_server import ChatServer
    from tests.persona_writer import PersonaWriter

    return ChatServer(default=PersonaWriter(), max_requests=10**7).start()


def _generate(server: Any, folder: Path, count: int, dedupe: bool) -> tuple[_Run, int]:
    rules = folder / "rules.txt"
    rules.write_text("Staff of a large bookshop.\n", encoding="utf-8")
    out = folder / f"personas-{count}-{int(dedupe)}.jsonl"
    argv = [sys.executable, "-m", "profiles", "generate", "--base-url", server.url, "--model", "writer",
            "--count", str(count), "--rules", str(rules), "--seed", "1", "--batch-size", "100",
            "--max-in-flight", "2", "--timeout", "60", "--out", str(out), "--quiet", "--force"]
    if dedupe:
        argv += ["--dedupe", "0.85"]
    run = _child(argv, cwd=folder, timeout=1200)
    written = sum(1 for _ in out.open(encoding="utf-8")) if out.exists() else 0
    return run, written


def row_dedupe(settings: Settings) -> list[Row]:
    """`profiles generate --dedupe 0.85` against the scripted server, beside the same run without it.

    CPU time of the command's process (the server runs here); the cost of deduplication per
    persona at the full count is compared with its cost at a tenth of it: near 1 means linear.
    """
    count = settings.dedupe_personas
    row = Row("dedupe", f"generate --dedupe 0.85, {count:,} personas", "s", floor_label="same run, no --dedupe")
    try:
        import numpy  # noqa: F401
    except ImportError:
        row.status = "skipped"
        row.note = "skipped: numpy not installed (pip install -e '.[dedupe]')"
        return [row]
    server = _scripted_server()
    try:
        with tempfile.TemporaryDirectory(prefix="profiles-bench-dedupe-") as tmp:
            folder = Path(tmp)
            runs = {}
            for size in (count // 10, count):
                for dedupe in (False, True):
                    runs[size, dedupe] = _generate(server, folder, size, dedupe)
    finally:
        server.stop()
    for (size, dedupe), (run, written) in runs.items():
        if run.code != 0 or written != size:
            row.status = "failed"
            row.note = f"{size:,} personas, dedupe={dedupe}: exit {run.code}, {written:,} written: " + (
                run.output.strip().splitlines() or ["no output"])[-1][:160]
            return [row]
    full, small = runs[count, True][0], runs[count // 10, True][0]
    full_floor, small_floor = runs[count, False][0], runs[count // 10, False][0]
    per_full = (full.cpu - full_floor.cpu) / count
    per_small = (small.cpu - small_floor.cpu) / (count // 10)
    row.median = full.cpu
    row.floor = full_floor.cpu
    row.ratio = full.cpu / full_floor.cpu if full_floor.cpu else None
    row.samples = 1
    scaling = per_full / per_small if per_small > 0 else None
    row.target = "cost per persona ≤ 1.5× at 10× the count"
    row.passed = scaling is not None and scaling <= 1.5
    row.extra.update(
        {
            "personas": count,
            "dedupe_us_per_persona": per_full * 1e6,
            "dedupe_us_per_persona_at_tenth": per_small * 1e6,
            "scaling": scaling,
            "peak_mb": full.peak_mb,
            "peak_mb_without_dedupe": full_floor.peak_mb,
            "wall_s": full.wall,
        }
    )
    shown = f"{scaling:.2f}" if scaling is not None else "–"
    row.note = (f"{per_full * 1e6:,.0f} µs/persona, ×{shown} at 10× the count; peak {full.peak_mb:.0f} MB "
                f"({full_floor.peak_mb:.0f} MB without)")
    return [row]


def _compare_texts(count: int) -> list[str]:
    import random

    rng = random.Random(2)
    syllables = [consonant + vowel for consonant in "bcdfgklmnprstvz" for vowel in "aeiou"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(5000)]
    texts = [" ".join(rng.choice(words) for _ in range(60)) for _ in range(count)]
    for index in range(0, count, 10):  # one in ten a near-copy of the text before it
        if index:
            texts[index] = texts[index - 1].replace(texts[index - 1].split()[3], "zz", 1)
    return texts


def row_datasketch(settings: Settings) -> list[Row]:
    """Signing and indexing texts at 0.85: ours beside datasketch's MinHash and MinHashLSH (128 functions)."""
    count = settings.compare_texts
    row = Row("datasketch", f"near-duplicate index, {count:,} texts", "s", floor_label="datasketch")
    try:
        import numpy  # noqa: F401
        from datasketch import MinHash, MinHashLSH
    except ImportError as exc:
        row.status = "skipped"
        row.note = f"skipped: {exc.name} not installed (pip install -e '.[bench]')"
        return [row]
    from profiles.similarity import MinHasher, NearDuplicateIndex, shingles

    texts = _compare_texts(count)

    def ours() -> int:
        index = NearDuplicateIndex(0.85, hasher=MinHasher())
        signatures = index.hasher.signatures(texts)
        return sum(index.add_if_new(i, signature) is not None for i, signature in enumerate(signatures))

    def theirs() -> int:
        lsh = MinHashLSH(threshold=0.85, num_perm=128)
        found = 0
        for i, text in enumerate(texts):
            minhash = MinHash(num_perm=128)
            minhash.update_batch([gram.encode("utf-8") for gram in shingles(text)])
            if lsh.query(minhash):
                found += 1
            else:
                lsh.insert(i, minhash)
        return found

    times: dict[str, list[float]] = {"ours": [], "theirs": []}
    found: dict[str, int] = {}
    for _ in range(1 if settings.quick else 3):
        for name, fn in (("ours", ours), ("theirs", theirs)):
            start = _clock()
            found[name] = fn()
            times[name].append(_clock() - start)
    row.median = min(times["ours"])
    row.floor = min(times["theirs"])
    row.ratio = row.median / row.floor if row.floor else None
    row.samples = len(times["ours"])
    row.extra.update({"found_ours": found["ours"], "found_datasketch": found["theirs"],
                      "version": _version("datasketch")})
    row.note = f"near-copies found: {found['ours']} ours, {found['theirs']} datasketch, of {(count - 1) // 10}"
    return [row]


# other libraries on the same persona ----------------------------------------------------------


def _summarizer_values() -> tuple[Any, dict[str, Any]]:
    from profiles import load_profile

    profile = load_profile(CONFIGS / "summarizer.yaml").create_profile()
    return profile, dict(profile.values)


def _portable(profile: Any) -> tuple[str, dict[str, Any], Callable[[], str]]:
    """The system template without the `sentence` filter, and values with it already applied.

    Other libraries cannot register our filter; applying it to the values beforehand gives the
    same text (up to blank lines, since they do not trim blocks) for the same work.
    """
    floor, variables = _floor_renderer(profile, {})
    source = profile.get_system_prompt_template().replace(" | sentence", "")
    source = source.replace("{% filter sentence %}", "").replace("{% endfilter %}", "")
    variables = dict(variables)
    for name in ("name", "role", "goal", "retry_goal"):
        if variables.get(name):
            variables[name] = _sentence(variables[name])
    return source, variables, floor


def _same_words(left: str, right: str) -> bool:
    return left.split() == right.split()


def row_dbgpt(settings: Settings) -> list[Row]:
    """DB-GPT's DefaultProfile.format_system_prompt (its own template) on the summarizer's values."""
    row = Row("dbgpt", "DB-GPT format_system_prompt", "µs", floor_label="bare sandbox (ours)")
    try:
        import logging

        logging.disable(logging.WARNING)
        from dbgpt.agent.core.profile import DefaultProfile as DbgptProfile
    except Exception as exc:  # not installed, or its imports fail on this interpreter
        row.status = "skipped"
        row.note = f"skipped: dbgpt not importable ({type(exc).__name__}: {str(exc)[:80]})"
        return [row]
    finally:
        import logging

        logging.disable(logging.NOTSET)
    profile, values = _summarizer_values()
    floor, _ = _floor_renderer(profile, {})
    theirs = DbgptProfile(
        name=values["name"],
        role=values["role"],
        goal=values["goal"],
        retry_goal=values["retry_goal"],
        constraints=list(values["constraints"]),
        retry_constraints=list(values["retry_constraints"]),
        examples=values["examples"],
    )

    def subject() -> str:
        return theirs.format_system_prompt(question=QUESTION, language="en")

    row.extra["version"] = _version("dbgpt")
    return [_timed_row(row, *_paired(subject, floor, settings, max(3, settings.repeats // 3)), 1e6, None)]


def row_langchain(settings: Settings) -> list[Row]:
    """LangChain's PromptTemplate (template_format="jinja2") on the same template and values."""
    row = Row("langchain", "LangChain PromptTemplate (jinja2)", "µs", floor_label="bare sandbox (ours)")
    try:
        from langchain_core.prompts import PromptTemplate
    except Exception as exc:
        row.status = "skipped"
        row.note = f"skipped: langchain-core not installed ({type(exc).__name__})"
        return [row]
    profile, _ = _summarizer_values()
    source, variables, floor = _portable(profile)
    template = PromptTemplate(template=source, template_format="jinja2")

    def subject() -> str:
        return template.format(**variables)

    row.extra["version"] = _version("langchain-core")
    row.extra["same_words"] = _same_words(subject(), floor())
    return [_timed_row(row, *_paired(subject, floor, settings), 1e6, None)]


def row_haystack(settings: Settings) -> list[Row]:
    """Haystack's PromptBuilder.run on the same template and values."""
    row = Row("haystack", "Haystack PromptBuilder.run", "µs", floor_label="bare sandbox (ours)")
    try:
        from haystack.components.builders import PromptBuilder
    except Exception as exc:
        row.status = "skipped"
        row.note = f"skipped: haystack-ai not installed ({type(exc).__name__})"
        return [row]
    profile, _ = _summarizer_values()
    source, variables, floor = _portable(profile)
    builder = PromptBuilder(template=source)

    def subject() -> str:
        return builder.run(**variables)["prompt"]

    row.extra["version"] = _version("haystack-ai")
    row.extra["same_words"] = _same_words(subject(), floor())
    return [_timed_row(row, *_paired(subject, floor, settings), 1e6, None)]


def _version(distribution: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


#: Every row, in the order the table shows them; `--only` takes these ids.
ROWS: dict[str, Callable[[Settings], list[Row]]] = {
    "system": row_system,
    "system_templated": row_system_templated,
    "messages": row_messages,


    "system_extends": row_system_extends,
    "chat_template": row_chat_template,
    "create_literal": row_create_literal,
    "create_env": row_create_env,
    "store_get_sqlite": row_store_get_sqlite,
    "store_get_postgres": row_store_get_postgres,
    "store_hit": row_store_hit,
    "create_store_hit": row_create_store_hit,
    "create_store_ttl0": row_create_store_ttl0,
    "memory": row_memory,
    "load_1000": row_load,
    "batch": row_batch,
    "batch_workers": row_batch_workers,
    "batch_ray": row_batch_ray,
    "dedupe": row_dedupe,
    "datasketch": row_datasketch,
    "import": row_import,
    "first_use": row_first_use,
    "render_cold": row_render_cold,
    "dbgpt": row_dbgpt,
    "langchain": row_langchain,
    "haystack": row_haystack,
}


# running and reporting ------------------------------------------------------------------------


def run(only: list[str] | None = None, *, quick: bool = False, progress: Callable[[str], None] | None = None) -> dict:
    """Measure the chosen rows and return the report that `--json` writes."""
    settings = Settings.make(quick)
    chosen = only or list(ROWS)
    unknown = [name for name in chosen if name not in ROWS]
    if unknown:
        raise SystemExit(f"unknown row(s) {', '.join(unknown)}; rows are {', '.join(ROWS)}")
    rows: list[Row] = []
    started = time.perf_counter()
    for name in chosen:
        if progress:
            progress(name)
        try:
            rows.extend(ROWS[name](settings))
        except Exception as exc:  # one broken row must not hide the others
            rows.append(Row(name, name, "", status="failed", note=f"{type(exc).__name__}: {exc}"[:300]))
    return {
        "schema": SCHEMA_VERSION,
        "meta": _meta(settings, time.perf_counter() - started),
        "rows": [asdict(row) for row in rows],
    }


def _meta(settings: Settings, seconds: float) -> dict[str, Any]:
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": settings.quick,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "versions": {name: _version(name) for name in ("agent-profiles", "jinja2", "pydantic", "PyYAML")},
        "seconds": round(seconds, 1),
    }


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "–"
    if unit == "µs":
        return f"{value:,.1f} µs" if value < 100 else f"{value:,.0f} µs"
    if unit == "s":
        return f"{value:.3f} s"
    if unit == "ms":
        return f"{value:.1f} ms"
    if unit == "B":
        return f"{value:,.0f} B"
    return f"{value:.1f} {unit}"


def table_lines(report: dict) -> list[list[str]]:
    """The table as cells: row, median, p90, floor, ratio, target, result."""
    lines = []
    for row in report["rows"]:
        if row["status"] != "ok":
            lines.append([row["label"], "", "", "", "", row["target"] or "", row["note"] or row["status"]])
            continue
        result = "" if row["passed"] is None else ("pass" if row["passed"] else "FAIL")
        if row["note"]:
            result = f"{result} ({row['note']})" if result else row["note"]
        floor = f"{_number(row['floor'], row['unit'])} {row['floor_label'] or ''}".strip()
        ratio = f"{row['ratio']:.2f}×" if row["ratio"] is not None else "–"
        target = row["target"] or "–"
        lines.append(
            [row["label"], _number(row["median"], row["unit"]), _number(row["p90"], row["unit"]), floor, ratio, target]
            + [result]
        )
    return lines


HEADERS = ["row", "median", "p90", "floor", "× floor", "target", "result"]


def plain_table(report: dict) -> str:
    """The table as plain text, as `--plain` prints it and the README shows it."""
    lines = table_lines(report)
    title = f"agent-profiles benchmark ({'quick' if report['meta']['quick'] else 'full'})"
    widths = [max(len(cells[i]) for cells in [HEADERS, *lines]) for i in range(len(HEADERS))]
    out = [title]
    for cells in [HEADERS, ["-" * width for width in widths], *lines]:
        out.append("  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip())
    return "\n".join(out) + "\n"


def write_readme_table(report: dict, readme: Path = REPO / "README.md") -> None:
    """Put the table into README.md's Performance section, in place of the one shown there."""
    text = readme.read_text(encoding="utf-8")
    head, section = text.split("\n## Performance\n", 1)
    before, rest = section.split("```text\n", 1)
    _old, after = rest.split("```", 1)
    readme.write_text(f"{head}\n## Performance\n{before}```text\n{plain_table(report)}```{after}", encoding="utf-8")


def print_table(report: dict, *, plain: bool = False) -> None:
    lines = table_lines(report)
    title = f"agent-profiles benchmark ({'quick' if report['meta']['quick'] else 'full'})"
    if not plain:
        try:
            from rich.console import Console
            from rich.table import Table
        except ImportError:
            plain = True
    if plain:
        print(plain_table(report), end="")
        return
    table = Table(title=title)
    for header in HEADERS:
        table.add_column(header, justify="right" if header in ("median", "p90", "× floor") else "left")
    for cells in lines:
        style = "red" if cells[-1].startswith("FAIL") else None
        table.add_row(*cells, style=style)
    Console().print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and a 10,000-row batch")
    parser.add_argument("--only", action="append", help=f"comma-separated rows to run: {', '.join(ROWS)}")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"where to write results ({DEFAULT_JSON})")
    parser.add_argument("--plain", action="store_true", help="a plain-text table even when rich is installed")
    parser.add_argument("--readme", action="store_true", help="also put the table into README.md")
    args = parser.parse_args(argv)
    only = [name.strip() for item in args.only or [] for name in item.split(",") if name.strip()] or None

    def progress(name: str) -> None:
        print(f"measuring {name} …", file=sys.stderr, flush=True)

    report = run(only, quick=args.quick, progress=progress)
    print_table(report, plain=args.plain)
    if args.readme:
        write_readme_table(report)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"results written to {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
