"""`profiles batch`: outputs, bad rows, resuming after a kill or Ctrl-C, shards, flat memory."""

from __future__ import annotations

import csv
import gc
import json
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from profiles import ProfileConfig, load_profile
from profiles.batch import BatchError, BatchOptions, parse_shard, run_batch
from profiles.cli import cli

REPO = Path(__file__).resolve().parent.parent
DATASETS = REPO / "profile_configs" / "datasets"
EXAMPLE = [
    "--from", str(DATASETS / "customers.csv"),
    "--map", str(DATASETS / "customers.map.yaml"),
    "--base", str(DATASETS / "support_agent.yaml"),
]  # fmt: skip


def make_customers(path: Path, rows: int) -> Path:
    """A customers-like CSV of `rows` rows that the example mapping and base persona accept."""
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["customer_id", "contact_name", "company", "segment", "language", "plan", "notes"])
        for n in range(1, rows + 1):
            writer.writerow(
                [
                    f"c-{n:06d}",
                    f"Customer {n}",
                    f"Company {n % 97}",
                    ("SMB", "Enterprise")[n % 2],
                    "zh" if n % 7 == 0 else "en",
                    "premium",
                    f"note {n}" if n % 3 else "",
                ]
            )
    return path


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_example_dataset_to_jsonl_with_prompts(runner, tmp_path):
    """The README example: the bundled dataset becomes twelve personas with their prompts."""
    out = tmp_path / "personas.jsonl"
    result = runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(out), "--render", "-q", "Where is my invoice?"])
    assert result.exit_code == 0, result.output
    assert f"wrote 12 persona(s) to {out}" in result.output
    records = lines(out)
    assert [record["id"] for record in records] == [f"c-{n:03d}" for n in range(1, 13)]
    first = records[0]
    assert first["row"] == 1 and first["persona"]["name"] == "Support agent for Ada Byron"
    assert first["prompts"]["user"] == "Question: Where is my invoice?"
    assert "You are Support agent for Ada Byron." in first["prompts"]["system"]
    # every persona written is a valid persona again
    for record in records:
        assert ProfileConfig(**record["persona"]).create_profile().get_name() == record["persona"]["name"]


def test_folder_output_is_loadable_personas(runner, tmp_path):
    """A folder output holds one persona file per row, each loadable, and prompts beside it."""
    out = tmp_path / "personas"
    result = runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(out), "--render"])
    assert result.exit_code == 0, result.output
    assert len(list(out.glob("*.yaml"))) == 12 and len(list(out.glob("*.prompts.json"))) == 12
    profile = load_profile(out / "c-005.yaml").create_profile()
    assert profile.get_name() == "Support agent for 李白" and "请始终使用简体中文回答" in profile.format_system_prompt()
    prompts = json.loads((out / "c-005.prompts.json").read_text(encoding="utf-8"))
    assert prompts["system"] == profile.format_system_prompt()
    assert runner.invoke(cli, ["validate", str(out)]).exit_code == 0


def test_force_into_a_folder_leaves_only_this_runs_personas(runner, tmp_path, write):
    """--force over a folder from a bigger dataset removes the old rows' files once the new run is
    complete, and the prompts of personas no longer rendered; a stopped run and others' files keep theirs."""
    out = tmp_path / "personas"
    assert runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(out), "--render"]).exit_code == 0
    (out / "notes.yaml").write_text("mine: true\n", encoding="utf-8")
    rows = (DATASETS / "customers.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    fewer = write("fewer.csv", "".join(rows[:4]))  # the header and three rows
    args = ["batch", "--from", str(fewer), *EXAMPLE[2:], "--out", str(out)]

    bad = write("bad.csv", "".join(rows[:2]) + "c-002,Grace\n")  # its second row has two cells of seven
    stopped = runner.invoke(cli, [*args[:2], str(bad), *args[3:], "--force"])
    assert stopped.exit_code == 2, stopped.output
    assert len(list(out.glob("c-*.yaml"))) == 12  # stopped midway: the earlier files are all still there

    forced = runner.invoke(cli, [*args, "--force"])
    assert forced.exit_code == 0, forced.output
    assert sorted(path.name for path in out.glob("*.yaml")) == ["c-001.yaml", "c-002.yaml", "c-003.yaml", "notes.yaml"]
    assert list(out.glob("*.prompts.json")) == []  # rendered by the first run only
    assert (out / "notes.yaml").read_text(encoding="utf-8") == "mine: true\n"
    assert runner.invoke(cli, ["validate", str(out / "c-003.yaml")]).exit_code == 0


def test_secret_fields_are_written_as_their_definition(runner, tmp_path, write, monkeypatch):
    """A secret field's value never reaches the output; its provider and key do."""
    monkeypatch.setenv("AGENT_SECRET_NAME", "Hunter2")
    base = write("base.yaml", "name: {key: AGENT_SECRET_NAME, secret: true, default: x}\nrole: R\n")
    source = write("rows.csv", "goal\nHelp\n")
    out = tmp_path / "o.jsonl"
    result = runner.invoke(cli, ["batch", "--from", str(source), "--base", str(base), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Hunter2" not in out.read_text(encoding="utf-8")
    assert lines(out)[0]["persona"]["name"] == {"key": "AGENT_SECRET_NAME", "provider": "env", "secret": True}


BAD_ROWS = "id,name,role\n1,Ada,Analyst\n2,,Admiral\n3,Alan\n4,Grace,Hopper\n"


def test_bad_row_stops_the_batch_with_its_row_number(runner, tmp_path, write):
    """--on-error raise (the default): exit 2 at the first bad row, naming file line, row and column."""
    source = write("people.csv", BAD_ROWS)
    out = tmp_path / "o.jsonl"
    result = runner.invoke(cli, ["batch", "--from", str(source), "--out", str(out)])
    assert result.exit_code == 2
    assert f"Error: {source}:3: row 2, column 'name': is required" in result.output
    assert [record["id"] for record in lines(out)] == [1]  # the good row before it is kept


def test_collect_lists_every_bad_row_and_writes_them(runner, tmp_path, write):
    """--on-error collect: good rows are written, each bad row is listed and saved, exit 2."""
    source = write("people.csv", BAD_ROWS)
    out = tmp_path / "o.jsonl"
    result = runner.invoke(cli, ["batch", "--from", str(source), "--out", str(out), "--on-error", "collect"])
    assert result.exit_code == 2
    assert f"{source}:3: row 2, column 'name'" in result.output
    assert f"{source}:4: row 3: has 2 cells but the header has 3" in result.output
    assert "2 bad row(s) were left out" in result.output
    assert [record["row"] for record in lines(out)] == [1, 4]
    errors = lines(tmp_path / "o.errors.jsonl")
    assert [(error["row"], error["line"], error["column"]) for error in errors] == [
        (2, 3, "name"),
        (3, 4, None),
    ]


def test_skip_leaves_bad_rows_out_and_succeeds(runner, tmp_path, write):
    """--on-error skip: exit 0, bad rows counted in the summary."""
    source = write("people.csv", BAD_ROWS)
    out = tmp_path / "o.jsonl"
    result = runner.invoke(cli, ["batch", "--from", str(source), "--out", str(out), "--on-error", "skip"])
    assert result.exit_code == 0 and "left out 2 bad row(s)" in result.output
    assert len(lines(out)) == 2 and not (tmp_path / "o.errors.jsonl").exists()


@pytest.mark.parametrize("out_name", ["o.jsonl", "folder", "o.parquet", "-"])
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_lone_surrogate_in_a_json_row_is_a_bad_row(runner, tmp_path, write, out_name, workers):
    """`"\\ud800"` alone is valid JSON but no text: the row is bad, by its column, not an internal error."""
    source = write(
        "people.jsonl",
        '{"name": "Ada", "role": "Clerk"}\n'
        '{"name": "Gr\\ud800ce", "role": "Clerk"}\n'
        '{"name": "Alan", "role": "Clerk", "n\\udcffte": "x"}\n'
        '{"name": "Edsger \\ud83d\\ude00", "role": "Clerk"}\n',
    )
    out = "-" if out_name == "-" else str(tmp_path / out_name)
    args = ["batch", "--from", str(source), "--out", out, "--workers", workers]
    result = runner.invoke(cli, [*args, "--on-error", "skip"])
    assert result.exit_code == 0, result.output
    assert "left out 2 bad row(s)" in result.stderr
    if out_name == "o.jsonl":
        assert [record["persona"]["name"] for record in lines(tmp_path / out_name)] == ["Ada", "Edsger 😀"]
    stopped = runner.invoke(cli, [*args[:4], str(tmp_path / "stopped.jsonl"), "--workers", workers])
    assert stopped.exit_code == 2
    assert f"Error: {source}:2: row 2: column 'name' holds \\ud800, half of a UTF-16 surrogate pair" in stopped.stderr


@pytest.mark.parametrize("workers", ["1", "2"])
def test_nan_and_infinity_in_a_cell_are_bad_rows(runner, tmp_path, write, workers):
    """json.loads reads NaN, Infinity and 1e999: a goal was written as the text 'nan', a variable as NaN in the
    output (a line no JSON reader takes), and a NaN id as "id":NaN."""
    mapping = write("m.yaml", "id: i\nfields:\n  name: name\n  role: role\n  goal: goal\n  variables.m: m\n")
    source = write(
        "people.jsonl",
        '{"i": 1, "name": "Ada", "role": "R", "goal": NaN, "m": null}\n'
        '{"i": 2, "name": "Bob", "role": "R", "goal": null, "m": {"x": [1, Infinity]}}\n'
        '{"i": 3, "name": "Cy", "role": "R", "goal": 1e999, "m": null}\n'
        '{"i": NaN, "name": "Di", "role": "R", "goal": null, "m": null}\n'
        '{"i": 5, "name": "Ed", "role": "R", "goal": 1.5, "m": {"x": [1, 2.5]}}\n',
    )
    out = tmp_path / "o.jsonl"
    args = ["batch", "--from", str(source), "--map", str(mapping), "--out", str(out), "--workers", workers]
    result = runner.invoke(cli, [*args, "--on-error", "collect"])
    assert result.exit_code == 2, result.output
    assert f"{source}:1: row 1, column 'goal': holds NaN, which is no number JSON has" in result.stderr
    assert "column 'm', field 'variables.m': holds Infinity at ['x'][1]" in result.stderr
    assert f"{source}:3: row 3, column 'goal': holds Infinity" in result.stderr
    assert "row 4, column 'i', field 'id': the id is nan" in result.stderr
    (record,) = [json.loads(line) for line in out.read_bytes().splitlines()]  # every line JSON
    assert record == {"id": 5, "row": 5, "persona": {"name": "Ed", "role": "R", "goal": "1.5",
                                                     "variables": {"m": {"x": [1, 2.5]}}}}


@pytest.mark.parametrize("fmt", ["jsonl", "yaml"])
def test_rows_nested_too_deep_are_bad_rows_or_a_file_error(runner, tmp_path, write, fmt):
    """A cell nested past the YAML bound is a bad row; one past the parser's stack stops with the file's line."""
    deep = "[" * 100 + "]" * 100
    rows = [{"name": "Ada", "role": "Clerk"}, {"name": "Grace", "role": "Clerk", "variables": {"x": "DEEP"}}]
    if fmt == "jsonl":
        text = "".join(json.dumps(row) + "\n" for row in rows).replace('"DEEP"', deep)
    else:
        text = "- {name: Ada, role: Clerk}\n- {name: Grace, role: Clerk, variables: {x: DEEP}}\n".replace("DEEP", deep)
    source = write(f"people.{fmt}", text)
    out = tmp_path / "o.jsonl"
    args = ["batch", "--from", str(source), "--out", str(out), "--workers", "2", "--render"]
    result = runner.invoke(cli, [*args, "--on-error", "collect"])
    assert result.exit_code == 2, result.output
    assert f"{source}:2: row 2: nested over 64 levels deep; flatten the structure" in result.stderr
    assert [record["persona"]["name"] for record in lines(out)] == ["Ada"]
    source.write_text(text.replace(deep, "[" * 5000 + "]" * 5000), encoding="utf-8")
    stopped = runner.invoke(cli, [*args, "--force"])
    assert stopped.exit_code == 2 and "internal error" not in stopped.output
    assert "nested too deeply to read" in stopped.stderr and f"{source}:" in stopped.stderr


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_cell_bound_to_a_declared_input_is_read_by_its_type(runner, tmp_path, write, workers):
    """`variables.n` for `inputs: {n: integer}`: the CSV text 5 is the integer 5 (the written persona loads and
    renders as the batch did); text that is no integer is a bad row naming the column, not a broken file."""
    base = write("base.yaml", "role: R\ninputs:\n  n: integer\ntemplates:\n  user: {inline: 'N {{ n + 1 }}'}\n")
    mapping = write("m.yaml", "fields:\n  name: name\n  variables.n: n\n")
    source = write("people.csv", "name,n\nAnn,5\nBob,x\n")
    out = tmp_path / "o.jsonl"
    args = ["batch", "--from", str(source), "--map", str(mapping), "--base", str(base), "--out", str(out), "--render"]
    result = runner.invoke(cli, [*args, "--workers", workers, "--on-error", "collect"])
    assert result.exit_code == 2, result.output
    assert f"{source}:3: row 2, column 'n', field 'variables.n': does not fit inputs.n: 'x' is not an integer" in (
        result.stderr
    )
    (record,) = lines(out)
    assert record["persona"]["variables"] == {"n": 5} and record["prompts"]["user"] == "N 6"
    written = ProfileConfig.from_data(record["persona"]).create_profile()
    assert written.format_user_prompt() == record["prompts"]["user"]


def test_render_failure_is_a_row_issue(runner, tmp_path, write):
    """A row whose prompt cannot render (a variable nobody gives) is a bad row like any other."""
    base = write("base.yaml", "name: A\nrole: R\ngoal: 'Serve {{ company }}'\n")
    source = write("rows.csv", "company\nAcme\n\n")
    source.write_text('company\nAcme\n""\n', encoding="utf-8")
    out = tmp_path / "o.jsonl"
    args = [
        "batch",
        "--from",
        str(source),
        "--base",
        str(base),
        "--map",
        str(write("m.yaml", "fields:\n  variables.company: company\n")),
        "--out",
        str(out),
        "--render",
        "--on-error",
        "collect",
    ]
    result = runner.invoke(cli, args)
    assert result.exit_code == 2 and "row 2" in result.output and "company" in result.output
    assert len(lines(out)) == 1


def test_existing_output_needs_resume_or_force(runner, tmp_path):
    """A second run into the same output is refused unless told to start over; a finished run keeps no checkpoint."""
    out = tmp_path / "o.jsonl"
    assert runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(out)]).exit_code == 0
    assert not (tmp_path / "o.jsonl.checkpoint").exists()
    again = runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(out)])
    assert again.exit_code == 2 and "already exists" in again.output and "--force" in again.output
    done = runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(out), "--resume"])
    assert done.exit_code == 2 and "a batch that finishes removes its own" in done.output
    forced = runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(out), "--force"])
    assert forced.exit_code == 0 and len(lines(out)) == 12


@pytest.mark.parametrize("out_name", ["o.jsonl", "folder", "o.parquet"])
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_batch_stopped_before_its_first_row_leaves_nothing_to_force(runner, tmp_path, write, out_name, workers):
    """A dataset without the mapped columns, or a bad first row, leaves no checkpoint and no empty output:
    the same command, once the dataset is fixed, runs without --force. One good row is kept as before."""
    roots = write("prompts/default/en/handoff.j2", "Hand over to {{ name }}.")
    base = write("base.yaml", f"role: Clerk\ntemplate_roots: [{roots.parent.parent.parent.name}]\n")
    mapping = write("m.yaml", "fields:\n  name: contact\n")
    source = write("people.csv", "id,person\n1,Ada\n")
    out = tmp_path / out_name
    args = ["batch", "--from", str(source), "--map", str(mapping), "--base", str(base), "--out", str(out)]
    args += ["--workers", workers]
    before = sorted(path.name for path in tmp_path.iterdir())
    missing = runner.invoke(cli, args)
    assert missing.exit_code == 2 and "names column(s) 'contact' that the dataset does not have" in missing.stderr
    source.write_text("id,contact\n1,\n2,Grace\n", encoding="utf-8")
    bad_first = runner.invoke(cli, args)
    assert bad_first.exit_code == 2 and "row 1, column 'contact', field 'name': is required" in bad_first.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == before
    source.write_text("id,contact\n1,Ada\n2,\n", encoding="utf-8")
    bad_second = runner.invoke(cli, args)
    assert bad_second.exit_code == 2 and "row 2, column 'contact'" in bad_second.stderr
    kept = runner.invoke(cli, args)  # the good row is kept, and its checkpoint with it
    assert kept.exit_code == 2 and "records an unfinished batch that stopped after row 1" in kept.stderr
    source.write_text("id,contact\n1,Ada\n2,Grace\n", encoding="utf-8")
    fixed = runner.invoke(cli, [*args, "--force"])
    assert fixed.exit_code == 0, fixed.output


def test_resume_refuses_changed_options(runner, tmp_path):
    """A stopped batch resumed with other options is refused: its rows might not match."""
    out = tmp_path / "o.jsonl"
    _stop_example_batch(out)
    changed = runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(out), "--resume", "--render"])
    assert changed.exit_code == 2 and "the render changed" in changed.output


def test_resume_refuses_a_changed_format(runner, tmp_path, write):
    """The same file read as TSV holds other cells than read as CSV: the resumed rows were read the new way."""
    source = write("people.txt", "name,role\tgoal\n" + "".join(f"N{n},R\tG{n}\n" for n in range(1, 11)))
    mapping = write("m.yaml", "fields:\n  name: \"N{{ row_number }}\"\n  role: \"{{ row | list | join('+') }}\"\n")
    out = tmp_path / "o.jsonl"
    options = BatchOptions(source=source, mapping=mapping, out=out, format="csv", chunk_rows=2)
    with pytest.raises(KeyboardInterrupt):
        run_batch(options, _interrupt_at(5))
    args = ["batch", "--from", str(source), "--map", str(mapping), "--out", str(out), "--resume"]
    changed = runner.invoke(cli, [*args, "--format", "tsv"])
    assert changed.exit_code == 2 and "cannot resume" in changed.output and "the format changed" in changed.output
    resumed = runner.invoke(cli, [*args, "--format", "csv", "--quiet"])
    assert resumed.exit_code == 0, resumed.output
    assert {record["persona"]["role"] for record in lines(out)} == {"name+role\tgoal"}
    assert len(lines(out)) == 10


def test_collect_after_a_skipping_run_says_which_bad_rows_it_lists(runner, tmp_path, write):
    """A batch stopped under --on-error skip and resumed with collect said all its bad rows were listed,
    while the errors file held only those after the resumed row."""
    source = write("people.csv", "name,role\n" + "".join(f"N{n},{'' if n % 2 else 'R'}\n" for n in range(1, 21)))
    out = tmp_path / "o.jsonl"
    with pytest.raises(KeyboardInterrupt):
        run_batch(BatchOptions(source=source, out=out, on_error="skip", chunk_rows=2), _interrupt_at(9))
    skipped = json.loads((tmp_path / "o.jsonl.checkpoint").read_text())["failed"]
    assert skipped >= 2
    args = ["batch", "--from", str(source), "--out", str(out), "--resume", "--on-error", "collect", "--quiet"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 2
    listed = len((tmp_path / "o.errors.jsonl").read_text(encoding="utf-8").splitlines())
    assert listed == 10 - skipped
    assert "Error: 10 bad row(s) were left out" in result.stderr
    assert (
        f"; {listed} of them are listed in {tmp_path / 'o.errors.jsonl'}, the other {skipped} were left out by a "
        "run without --on-error collect"
    ) in result.stderr
    assert "all are listed" not in result.stderr


def test_a_stopped_batch_says_what_is_there(runner, tmp_path):
    """With only the checkpoint left, the message says how far the batch got and that the output is gone."""
    out = tmp_path / "o.jsonl"
    _stop_example_batch(out)
    checkpoint = json.loads((tmp_path / "o.jsonl.checkpoint").read_text())
    kept = runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(out)])
    assert kept.exit_code == 2
    assert (
        f"{out}.checkpoint records an unfinished batch that stopped after row {checkpoint['rows_done']}, with "
        f"{checkpoint['written']} persona(s) written to {out}; pass --resume to continue it"
    ) in kept.output
    out.unlink()
    gone = runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(out)])
    assert gone.exit_code == 2 and f"{out} itself is gone" in gone.output
    assert "holds an earlier batch" not in gone.output


def test_a_stopped_parquet_batch_is_not_told_to_resume(runner, tmp_path):
    """It was told to pass --resume, which a Parquet output then refused, and that its file was gone."""
    out = tmp_path / "o.parquet"
    _stop_example_batch(out)
    stopped = runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(out)])
    assert stopped.exit_code == 2
    assert "pass --resume" not in stopped.output and "itself is gone" not in stopped.output
    rows = json.loads((tmp_path / "o.parquet.checkpoint").read_text())["rows_done"]
    assert (
        f"records an unfinished batch that stopped after row {rows}; a Parquet file is written whole, so it cannot "
        f"be resumed: pass --force to make {out} again"
    ) in stopped.output
    remade = runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(out), "--force"])
    assert remade.exit_code == 0, remade.output
    kept = runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(out)])
    assert kept.exit_code == 2 and "already exists; pass --force" in kept.output


@pytest.mark.parametrize("name", ["o.jsonl", "o.parquet"])
def test_an_output_named_through_a_link_is_written_where_it_leads(runner, tmp_path, name):
    """--force over a linked .jsonl replaced the link with a new file (what it led to kept the old
    output), and a linked .parquet was renamed over the link: nothing reached where it led."""
    (tmp_path / "real").mkdir()
    (tmp_path / "work").mkdir()
    link = tmp_path / "work" / name
    link.symlink_to(Path("..") / "real" / name)
    target = tmp_path / "real" / name
    reference = tmp_path / f"reference{link.suffix}"
    assert runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(reference), "--render"]).exit_code == 0
    first = runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(link)])
    assert first.exit_code == 0, first.output
    assert link.is_symlink() and target.is_file()
    again = runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(link), "--render", "--force"])
    assert again.exit_code == 0, again.output
    assert link.is_symlink() and target.read_bytes() == reference.read_bytes()
    assert sorted(path.name for path in link.parent.iterdir()) == [name]


def _stop_example_batch(out):
    """The README's example batch into `out`, stopped by Ctrl-C at its fifth row (checkpoints every two)."""
    options = BatchOptions(
        source=DATASETS / "customers.csv",
        mapping=DATASETS / "customers.map.yaml",
        base=DATASETS / "support_agent.yaml",
        out=out,
        chunk_rows=2,
    )
    with pytest.raises(KeyboardInterrupt):
        run_batch(options, _interrupt_at(5))


def _interrupt_at(row: int):
    def progress(done: int, total: int | None) -> None:
        if done == row:
            raise KeyboardInterrupt

    return progress


@pytest.mark.parametrize("folder", [False, True], ids=["jsonl", "folder"])
def test_interrupted_and_resumed_equals_uninterrupted(tmp_path, folder):
    """Ctrl-C mid-chunk, then resume: exactly the rows of a run that was never stopped."""
    source = make_customers(tmp_path / "c.csv", 634)
    name = "out" if folder else "out.jsonl"
    common = {
        "source": source,
        "mapping": DATASETS / "customers.map.yaml",
        "base": DATASETS / "support_agent.yaml",
        "chunk_rows": 100,
        "chunk_seconds": 60,
    }
    whole = run_batch(BatchOptions(out=tmp_path / "whole" / name, **common))
    with pytest.raises(KeyboardInterrupt):
        run_batch(BatchOptions(out=tmp_path / "cut" / name, **common), _interrupt_at(255))
    if not folder:  # a torn last line, as a kill in the middle of a write leaves
        with open(tmp_path / "cut" / name, "ab") as file:
            file.write(b'{"id": "c-0005')
    resumed = run_batch(BatchOptions(out=tmp_path / "cut" / name, resume=True, **common))
    assert resumed.resumed_from == 200 and resumed.complete and resumed.written == whole.written == 634
    if folder:
        names = sorted(path.name for path in (tmp_path / "whole" / name).iterdir() if path.suffix == ".yaml")
        assert names == sorted(path.name for path in (tmp_path / "cut" / name).iterdir() if path.suffix == ".yaml")
        assert len(names) == 634
    else:
        assert (tmp_path / "cut" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()


def _wait_for_rows(checkpoint: Path, rows: int, child: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if json.loads(checkpoint.read_text())["rows_done"] >= rows:
                return
        except (OSError, ValueError):
            pass
        assert child.poll() is None, "the batch finished before it could be interrupted; use more rows"
        time.sleep(0.01)
    raise AssertionError("no progress within 60 s")


#: Rows of the interrupted batches: enough that thousands are still to come when the first checkpoint
#: appears (at 1,000 rows), however fast the machine, so the signal always lands mid-way.
KILLED_BATCH_ROWS = 40_000

_KILLED_BATCH_ARGS = [
    sys.executable,
    "-m",
    "profiles",
    "batch",
    "--map",
    str(DATASETS / "customers.map.yaml"),
    "--base",
    str(DATASETS / "support_agent.yaml"),
    "--quiet",
]


def _interruptible() -> None:
    """Give the child Ctrl-C back: a test run started in the background (as CI may be) ignores
    SIGINT, and a process started with SIGINT ignored rightly keeps ignoring it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> tuple[Path, Path]:
    """The input of the killed-batch tests and the output of one uninterrupted run over it, made once."""
    folder = tmp_path_factory.mktemp("killed")
    source = make_customers(folder / "c.csv", KILLED_BATCH_ROWS)
    whole = folder / "whole.jsonl"
    subprocess.run([*_KILLED_BATCH_ARGS, "--from", str(source), "--out", str(whole)], check=True, cwd=REPO)
    return source, whole


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM], ids=["SIGKILL", "SIGINT", "SIGTERM"])
def test_killed_cli_resumes_to_the_same_output(tmp_path, how, uninterrupted):
    """A real `profiles batch` killed mid-way, then run with --resume, equals an uninterrupted run."""
    source, whole = uninterrupted
    args = [*_KILLED_BATCH_ARGS, "--from", str(source)]
    cut = tmp_path / "cut.jsonl"
    child = subprocess.Popen(
        [*args, "--out", str(cut)], cwd=REPO, stderr=subprocess.PIPE, text=True, preexec_fn=_interruptible
    )
    _wait_for_rows(cut.with_name("cut.jsonl.checkpoint"), 1000, child)
    child.send_signal(how)
    _, stderr = child.communicate(timeout=60)
    if how in (signal.SIGINT, signal.SIGTERM):  # both stop the batch with the same hint
        assert child.returncode == 128 + how and f"run the same command with --resume to continue {cut}" in stderr
    else:
        assert child.returncode == -signal.SIGKILL
    assert cut.stat().st_size < whole.stat().st_size
    resumed = subprocess.run([*args, "--out", str(cut), "--resume"], cwd=REPO, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert cut.read_bytes() == whole.read_bytes()


def test_shards_together_equal_the_whole(runner, tmp_path):
    """Shards 0/3, 1/3 and 2/3 hold every persona of the whole run exactly once."""
    source = make_customers(tmp_path / "c.csv", 300)
    base = [
        "batch",
        "--from",
        str(source),
        "--map",
        str(DATASETS / "customers.map.yaml"),
        "--base",
        str(DATASETS / "support_agent.yaml"),
    ]
    assert runner.invoke(cli, [*base, "--out", str(tmp_path / "all.jsonl")]).exit_code == 0
    parts = []
    for index in range(3):
        out = tmp_path / f"part{index}.jsonl"
        assert runner.invoke(cli, [*base, "--out", str(out), "--shard", f"{index}/3"]).exit_code == 0
        parts.append(lines(out))
    assert all(parts)
    whole = {record["id"]: record for record in lines(tmp_path / "all.jsonl")}
    merged = [record for part in parts for record in part]
    assert len(merged) == len(whole) == 300
    assert {record["id"]: record for record in merged} == whole


def test_conflicting_options_are_usage_errors(runner, tmp_path):
    """--resume with --force, or --question without --render, is refused before any work."""
    out = str(tmp_path / "o.jsonl")
    both = runner.invoke(cli, ["batch", *EXAMPLE, "--out", out, "--resume", "--force"])
    assert both.exit_code == 2 and "pass one of them" in both.output
    question = runner.invoke(cli, ["batch", *EXAMPLE, "--out", out, "--question", "Hi"])
    assert question.exit_code == 2 and "add --render" in question.output
    assert not (tmp_path / "o.jsonl").exists()


def test_bad_shard_is_a_usage_error(runner, tmp_path):
    """--shard must be I/N with I < N."""
    result = runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(tmp_path / "o.jsonl"), "--shard", "3/3"])
    assert result.exit_code == 2 and "0 <= I < N" in result.output
    assert parse_shard(" 1 / 4 ") == (1, 4)


def test_duplicate_ids_in_folder_output_are_bad_rows(runner, tmp_path, write):
    """Two rows with one id would share a file; the second is reported instead of overwriting."""
    source = write("p.csv", "id,name,role\na,Ada,Analyst\na,Bob,Builder\n")
    out = tmp_path / "personas"
    result = runner.invoke(
        cli,
        [
            "batch",
            "--from",
            str(source),
            "--map",
            str(write("m.yaml", "id: id\n")),
            "--out",
            str(out),
            "--on-error",
            "collect",
        ],
    )
    assert result.exit_code == 2 and "row 2" in result.output and "already wrote a.yaml" in result.output
    assert load_profile(out / "a.yaml").name == "Ada"


@pytest.mark.parametrize("out_name", ["people.jsonl", "link.jsonl", "people.errors-as.jsonl"])
def test_an_output_that_is_an_input_is_refused(runner, tmp_path, write, out_name):
    """--force removed the dataset named as --out before reading it: 0 personas written over it, exit 0;
    the errors file beside another --out was emptied the same way."""
    rows = '{"name": "Ada", "role": "R"}\n'
    source = write("people.jsonl", rows)
    (tmp_path / "link.jsonl").symlink_to(source)
    out = tmp_path / out_name
    if out_name == "people.errors-as.jsonl":  # the dataset is where this --out keeps its bad rows
        out = tmp_path / "people-as.jsonl"
        source = write("people-as.errors.jsonl", rows)
    result = runner.invoke(cli, ["batch", "--from", str(source), "--out", str(out), "--force"])
    assert result.exit_code == 2
    assert f"would write over the dataset (--from), {source}; name another --out" in result.stderr
    assert source.read_text(encoding="utf-8") == rows
    elsewhere = runner.invoke(cli, ["batch", "--from", str(source), "--out", str(tmp_path / "o.jsonl")])
    assert elsewhere.exit_code == 0, elsewhere.output


def test_out_must_be_jsonl_or_a_folder(tmp_path):
    """An --out that looks like another file type is refused rather than made a folder."""
    with pytest.raises(BatchError, match=r"\.jsonl"):
        run_batch(BatchOptions(source=DATASETS / "customers.csv", out=tmp_path / "o.json"))


def _peak(source: Path, out: Path) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        run_batch(
            BatchOptions(
                source=source,
                out=out,
                mapping=DATASETS / "customers.map.yaml",
                base=DATASETS / "support_agent.yaml",
                chunk_rows=100,
            )
        )
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_dataset(tmp_path):
    """Peak traced memory for 10x the rows stays within a small bound of the smaller run's."""
    small = make_customers(tmp_path / "small.csv", 500)
    large = make_customers(tmp_path / "large.csv", 5_000)
    _peak(make_customers(tmp_path / "warm.csv", 50), tmp_path / "warm.jsonl")  # imports, compiled templates
    small_peak = _peak(small, tmp_path / "small.jsonl")
    large_peak = _peak(large, tmp_path / "large.jsonl")
    assert large_peak < small_peak * 1.25 + 128 * 1024, (small_peak, large_peak)


def test_shards_can_share_one_folder(runner, tmp_path):
    """Three shards writing into one folder give the same persona files as one whole run."""
    whole, shared = tmp_path / "whole", tmp_path / "shared"
    assert runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(whole)]).exit_code == 0
    for index in range(3):
        result = runner.invoke(cli, ["batch", *EXAMPLE, "--out", str(shared), "--shard", f"{index}/3"])
        assert result.exit_code == 0, result.output
    assert not list(shared.glob(".checkpoint*"))  # each finished shard removed its own

    def personas(folder: Path) -> dict[str, dict]:
        return {path.name: load_profile(path).model_dump(exclude={"factory"}) for path in folder.glob("*.y*")}

    assert len(personas(whole)) == 12 and personas(shared) == personas(whole)


def test_shards_sharing_a_folder_do_not_overwrite_each_others_ids(runner, tmp_path, write):
    """Ids a/b and a_b give one file name: one run reports the second as a bad row, but shard 1/3 wrote
    a/b over shard 0/3's a_b without a word, losing it."""
    from profiles.buckets import stable_bucket

    source = write("people.csv", "id,name,role\na/b,One,R\na_b,Two,R\nc,Three,R\n")
    mapping = write("m.yaml", "id: id\n")
    assert (stable_bucket("a_b", 3), stable_bucket("a/b", 3)) == (0, 1)
    shared = tmp_path / "shared"
    args = ["batch", "--from", str(source), "--map", str(mapping), "--out", str(shared)]
    outcomes = [runner.invoke(cli, [*args, "--shard", f"{index}/3", "--on-error", "collect"]) for index in range(3)]
    assert [outcome.exit_code for outcome in outcomes] == [0, 2, 0]
    assert "row 1, field 'id': a_b.yaml holds the persona of another id" in outcomes[1].stderr
    assert load_profile(shared / "a_b.yaml").name == "Two"
    again = runner.invoke(cli, [*args, "--shard", "0/3", "--force"])  # a shard made again rewrites its own
    assert again.exit_code == 0, again.output
    assert load_profile(shared / "a_b.yaml").name == "Two"


def test_written_persona_keeps_tools_and_loads_again(runner, tmp_path, write):
    """A base persona's tools are written with each persona, which validates as a persona again."""
    base = write(
        "base.yaml",
        "name: A\nrole: R\ntools:\n  - name: search\n    description: Search the web\n"
        "    parameters: {type: object, properties: {q: {type: string}}}\n",
    )
    source = write("rows.csv", "name\nAda\n")
    out = tmp_path / "o.jsonl"
    assert runner.invoke(cli, ["batch", "--from", str(source), "--base", str(base), "--out", str(out)]).exit_code == 0
    persona = lines(out)[0]["persona"]
    assert persona["tools"][0]["name"] == "search"
    assert [tool.name for tool in ProfileConfig(**persona).tools] == ["search"]
