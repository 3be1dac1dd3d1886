"""The benchmark script runs and reports what it promises; its timings are never asserted here."""

from __future__ import annotations

import csv
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "bench" / "run.py"

ROW_KEYS = {
    "id",
    "label",
    "unit",
    "status",
    "median",
    "p90",
    "floor",
    "floor_label",
    "ratio",
    "target",
    "passed",
    "note",
    "samples",
    "extra",
}


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("profiles_bench_run", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_quick_run_of_one_row_writes_the_report(tmp_path):
    """`--quick --only create_literal` prints the table and writes JSON with every key."""
    out = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--only", "create_literal", "--json", str(out), "--plain"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "create_profile(), literal fields" in result.stdout and "< 15 µs" in result.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["schema"] == 1
    assert {"date", "quick", "python", "platform", "cpus", "versions", "seconds"} <= set(report["meta"])
    assert report["meta"]["quick"] is True
    (row,) = report["rows"]
    assert set(row) == ROW_KEYS
    assert row["id"] == "create_literal" and row["status"] == "ok" and row["unit"] == "µs"
    assert row["median"] > 0 and row["p90"] >= row["median"] and row["floor"] > 0 and row["ratio"] > 0
    assert isinstance(row["passed"], bool) and row["samples"] > 0


def test_unknown_row_is_refused(tmp_path):
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--only", "nope", "--json", str(tmp_path / "r.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "unknown row(s) nope" in result.stderr and "create_literal" in result.stderr


def test_rows_cover_the_issue(bench):
    """Every measured operation has a row, comparators included."""
    assert list(bench.ROWS) == [
        "system",
        "system_templated",
        "messages",
        "system_extends",
        "chat_template",
        "create_literal",
        "create_env",
        "load_1000",
        "batch",
        "dedupe",
        "datasketch",
        "import",
        "dbgpt",
        "langchain",
        "haystack",
    ]


def test_template_floors_render_the_same_text(bench):
    """The chat-template and extends rows compare like with like: the floors print the same text."""
    import json

    from profiles import ChatTemplate, load_profile

    source = (bench.EXAMPLES / "chat" / "qwen2.5-instruct.jinja").read_text(encoding="utf-8")
    conversation = json.loads((bench.EXAMPLES / "chat" / "conversation.json").read_text(encoding="utf-8"))
    messages, tools = conversation["messages"], conversation["tools"]
    ours = ChatTemplate(source).render(messages, tools=tools, add_generation_prompt=True)
    assert ours == bench._chat_floor(source)(messages, tools, True)
    assert "<tools>" in ours and "<tool_call>" in ours
    profile = load_profile(bench.EXAMPLES / "extends" / "support.yaml").create_profile()
    text = profile.format_system_prompt(bench.QUESTION, plan="premium")
    assert text == bench._extends_floor(profile, {"plan": "premium"})()
    assert "Offer a call back" in text and "You are Ada" in text


def test_floor_renders_the_same_prompt(bench):
    """The floor does the same work: its prompt equals the library's, templated fields included."""
    from profiles import load_profile

    summarizer = load_profile(REPO / "profile_configs" / "summarizer.yaml").create_profile()
    floor, variables = bench._floor_renderer(summarizer, {})
    assert floor() == summarizer.format_system_prompt(bench.QUESTION)
    assert "constraints" in variables and "question" not in variables  # only what the template declares

    planner = load_profile(REPO / "profile_configs" / "planner.yaml").create_profile()
    floor, _ = bench._floor_renderer(planner, {"agents": bench.AGENTS})
    assert floor() == planner.format_system_prompt(bench.QUESTION, agents=bench.AGENTS)
    assert bench.AGENTS in floor()


def test_messages_row_compares_the_same_prompts(tmp_path):
    """The messages row runs, and its floor renders exactly the two prompts the messages hold."""
    out = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--only", "messages", "--json", str(out), "--plain"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    (row,) = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert row["id"] == "messages" and row["target"] == "≤ 1.1× floor" and row["extra"]["same_output"] is True
    assert row["ratio"] > 0 and "format_messages, summarizer" in result.stdout


def test_portable_template_gives_the_same_words(bench):
    """Libraries without our `sentence` filter get it applied to the values instead."""
    from jinja2.sandbox import SandboxedEnvironment

    from profiles import load_profile

    profile = load_profile(REPO / "profile_configs" / "summarizer.yaml").create_profile()
    source, variables, floor = bench._portable(profile)
    assert "sentence" not in source
    assert bench._same_words(SandboxedEnvironment().from_string(source).render(variables), floor())


def test_written_personas_load(bench, tmp_path):
    """The 1,000-persona row reads files the loader accepts, each distinct."""
    from profiles import load_profiles

    bench.write_personas(tmp_path, 5)
    loaded = load_profiles(tmp_path)
    assert len(loaded) == 5
    assert {config.name for config in loaded.values()} == {f"Persona {index}" for index in range(5)}


def test_dataset_matches_its_mapping(bench, tmp_path):
    """The batch row's CSV has every column its mapping names, one row per persona."""
    import yaml

    data, mapping, base = bench.write_dataset(tmp_path, 3)
    with data.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 3 and rows[0]["customer_id"] == "c-0000001"
    spec = yaml.safe_load(mapping.read_text(encoding="utf-8"))
    assert spec["id"] in rows[0]
    plain_columns = [value for value in spec["fields"].values() if "{{" not in value]
    assert all(column in rows[0] for column in plain_columns)
    from profiles import load_profile

    assert load_profile(base).create_profile().get_role() == "Customer support agent"


def test_batch_row_skips_without_the_command(bench, monkeypatch):
    """Without `profiles batch` the row says so instead of failing."""
    monkeypatch.setattr(bench, "batch_available", lambda: (False, ""))
    (row,) = bench.row_batch(bench.Settings.make(quick=True))
    assert row.status == "skipped" and row.note == "skipped: batch command not available"


def test_table_marks_failures_and_skips(bench):
    report = {
        "meta": {"quick": True},
        "rows": [
            vars(
                bench.Row(
                    "a",
                    "A",
                    "µs",
                    median=30.0,
                    p90=40.0,
                    floor=20.0,
                    ratio=1.5,
                    target="≤ 1.3× floor",
                    passed=False,
                    floor_label="bare",
                )
            ),
            vars(bench.Row("b", "B", "MB", status="skipped", note="skipped: batch command not available")),
        ],
    }
    lines = bench.table_lines(report)
    assert lines[0] == ["A", "30.0 µs", "40.0 µs", "20.0 µs bare", "1.50×", "≤ 1.3× floor", "FAIL"]
    assert lines[1][-1] == "skipped: batch command not available"


def _performance_section() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return readme.split("\n## Performance\n", 1)[1]


def test_readme_command_runs(tmp_path):
    """The README's `--quick --only …` command runs as written (its JSON goes to a temp folder)."""
    import shlex

    section = _performance_section()
    (line,) = [line for line in section.splitlines() if line.startswith("python bench/run.py --quick --only")]
    argv = [str(tmp_path / "out.json") if arg == "out.json" else arg for arg in shlex.split(line)]
    result = subprocess.run(
        [sys.executable, *argv[1:], "--plain"], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert [row["id"] for row in report["rows"]] == ["system", "create_literal"]


def test_readme_table_names_every_row(bench):
    """The table shown in the README has one line per row of the script, labelled as it prints them."""
    section = _performance_section()
    table = section.split("```text\n", 1)[1].split("```", 1)[0]
    labels = [line.split("  ")[0] for line in table.splitlines()[3:]]
    settings = bench.Settings.make(quick=False)
    assert len(labels) == len(bench.ROWS)
    assert f"profiles batch --render, {settings.batch_rows:,} rows" in labels
    assert "format_system_prompt, summarizer" in labels and "Haystack PromptBuilder.run" in labels


def test_child_peak_is_its_own(bench, tmp_path):
    """A child's peak memory is its own, not this (larger) process's, which a fork would pass on."""
    ballast = bytearray(120_000_000)  # noqa: F841 - makes this process larger than any child below
    small = bench._child([sys.executable, "-c", "pass"], cwd=tmp_path)
    large = bench._child([sys.executable, "-c", "b = bytearray(80_000_000)"], cwd=tmp_path)
    assert small.code == 0 and large.code == 0
    assert small.peak_mb < 60 < 80 < large.peak_mb
    assert small.cpu > 0 and small.wall > 0


def test_child_past_its_timeout_is_ended(bench, tmp_path):
    run = bench._child([sys.executable, "-c", "import time; time.sleep(30)"], cwd=tmp_path, timeout=0.5)
    assert run.code != 0 and run.wall < 10


def test_batch_row_runs_the_command(bench):
    """With `profiles batch` installed, a small batch runs through the row and every row is written."""
    from dataclasses import replace

    available, _ = bench.batch_available()
    if not available:
        pytest.skip("profiles batch is not available in this installation")
    (row,) = bench.row_batch(replace(bench.Settings.make(quick=True), batch_rows=200))
    assert row.status == "ok", row.note
    assert row.extra["rows"] == row.extra["written"] == 200
    assert row.median > 0 and row.floor > 0 and isinstance(row.passed, bool)


def test_dedupe_row_runs_generate_against_the_scripted_server(bench):
    """The dedupe row runs `profiles generate` with and without --dedupe, at two counts, to the end."""
    from dataclasses import replace

    (row,) = bench.row_dedupe(replace(bench.Settings.make(quick=True), dedupe_personas=200))
    assert row.status == "ok", row.note
    assert row.extra["personas"] == 200 and row.median > 0 and row.floor > 0
    assert row.extra["peak_mb"] > 0 and isinstance(row.passed, bool)
    assert "µs/persona" in row.note


def test_datasketch_row_finds_the_same_near_copies(bench):
    """Beside datasketch (when installed), the index finds every planted near-copy; without it, a skip note."""
    from dataclasses import replace

    (row,) = bench.row_datasketch(replace(bench.Settings.make(quick=True), compare_texts=300))
    try:
        import datasketch  # noqa: F401
    except ImportError:
        assert row.status == "skipped" and "datasketch not installed" in row.note
        return
    assert row.status == "ok", row.note
    assert row.extra["found_ours"] == row.extra["found_datasketch"] == 29
