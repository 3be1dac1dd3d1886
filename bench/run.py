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
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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


def _per_call(fn: Callable[[], Any], number: int) -> float:
    start = _clock()
    for _ in range(number):
        fn()
    return (_clock() - start) / number


def _calls_per_batch(fn: Callable[[], Any], seconds: float) -> int:
    """How many calls fill about `seconds`; a batch that short keeps the timer's cost out."""
    fn()  # warm: first calls compile and fill caches, which is not what a row measures
    number = 1
    while True:
        took = _per_call(fn, number) * number
        if took >= seconds / 4 or number >= 1_000_000:
            return max(1, int(number * seconds / max(took, 1e-9)))
        number *= 4


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _paired(
    subject: Callable[[], Any], floor: Callable[[], Any], settings: Settings, repeats: int | None = None
) -> tuple[list[float], list[float]]:
    """Per-call seconds of `subject` and `floor`, batches interleaved so drift hits both alike."""
    repeats = repeats or settings.repeats
    gc.collect()
    n_subject = _calls_per_batch(subject, settings.batch_seconds)
    n_floor = _calls_per_batch(floor, settings.batch_seconds)
    subject_times, floor_times = [], []
    for _ in range(repeats):
        subject_times.append(_per_call(subject, n_subject))
        floor_times.append(_per_call(floor, n_floor))
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
    return [_timed_row(row, *_paired(lambda: profile.format_system_prompt(QUESTION), floor, settings), 1e6, 1.3)]


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

    return [_timed_row(row, *_paired(subject, floor, settings), 1e6, 2.0)]


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


def _plain_floor(config: Any) -> Callable[[], Any]:
    values = {name: value for name, value in config.create_profile().values.items()}
    return lambda: _PlainProfile(**values)


def row_create_literal(settings: Settings) -> list[Row]:
    """create_profile() with literal fields: should cost little more than building a record."""
    config = _literal_config()
    row = Row("create_literal", "create_profile(), literal fields", "µs", floor_label="frozen dataclass")
    row = _timed_row(row, *_paired(config.create_profile, _plain_floor(config), settings), 1e6, None)
    row.target = "< 15 µs"
    row.passed = row.median is not None and row.median < 15
    return [row]


def row_create_env(settings: Settings) -> list[Row]:
    """create_profile() of the summarizer as shipped, its name read from the environment."""
    from profiles import load_profile

    config = load_profile(CONFIGS / "summarizer.yaml")
    row = Row("create_env", "create_profile(), env field", "µs", floor_label="frozen dataclass")
    previous = os.environ.get("SUMMARY_PROFILE_NAME")
    os.environ["SUMMARY_PROFILE_NAME"] = "Plato"
    try:
        assert config.create_profile().get_name() == "Plato"
        return [_timed_row(row, *_paired(config.create_profile, _plain_floor(config), settings), 1e6, None)]
    finally:
        if previous is None:
            del os.environ["SUMMARY_PROFILE_NAME"]
        else:
            os.environ["SUMMARY_PROFILE_NAME"] = previous


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


def row_batch(settings: Settings) -> list[Row]:
    """`profiles batch --render` over a generated CSV, in a child process: wall time and peak RSS."""
    rows = settings.batch_rows
    row = Row("batch", f"profiles batch --render, {rows:,} rows", "MB", floor_label="profiles --help")
    available, help_text = batch_available()
    if not available:
        row.status = "skipped"
        row.note = "skipped: batch command not available"
        return [row]
    with tempfile.TemporaryDirectory(prefix="profiles-bench-batch-") as tmp:
        folder = Path(tmp)
        data, mapping, base = write_dataset(folder, rows)
        out = folder / "personas.jsonl"
        argv = [sys.executable, "-m", "profiles", "batch", "--from", str(data), "--map", str(mapping)]
        argv += ["--base", str(base), "--out", str(out), "--render", "--question", QUESTION]
        if "--quiet" in help_text:
            argv.append("--quiet")
        run = _child(argv, cwd=folder, timeout=120 if settings.quick else 300)
        floor = _child([sys.executable, "-m", "profiles", "--help"], cwd=folder)
        written = sum(1 for _ in out.open(encoding="utf-8")) if out.exists() else 0
    if run.code != 0:
        row.status = "failed"
        row.note = f"exit {run.code}: " + (run.output.strip().splitlines() or ["no output"])[-1][:200]
        return [row]
    row.median = run.peak_mb
    row.floor = floor.peak_mb
    row.ratio = run.peak_mb / floor.peak_mb if floor.peak_mb else None
    row.samples = 1
    row.target = "< 60 MB peak"
    row.passed = run.peak_mb < 60
    row.extra.update(
        {
            "rows": rows,
            "written": written,
            "wall_s": run.wall,
            "cpu_s": run.cpu,
            "per_row_us": run.wall / rows * 1e6,
            "rows_per_s": rows / run.wall,
        }
    )
    from profiles.cli.progress import format_rate  # the one format the commands show rates in

    row.note = f"{run.wall:.1f} s wall, {format_rate(rows / run.wall)} rows/s"
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
    variables = dict(variables)
    for name in ("role", "goal", "retry_goal"):
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
    "load_1000": row_load,
    "batch": row_batch,
    "dedupe": row_dedupe,
    "datasketch": row_datasketch,
    "import": row_import,
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
        widths = [max(len(cells[i]) for cells in [HEADERS, *lines]) for i in range(len(HEADERS))]
        print(title)
        for cells in [HEADERS, ["-" * width for width in widths], *lines]:
            print("  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip())
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
    args = parser.parse_args(argv)
    only = [name.strip() for item in args.only or [] for name in item.split(",") if name.strip()] or None

    def progress(name: str) -> None:
        print(f"measuring {name} …", file=sys.stderr, flush=True)

    report = run(only, quick=args.quick, progress=progress)
    print_table(report, plain=args.plain)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"results written to {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
