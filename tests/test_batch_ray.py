"""`profiles batch --engine ray` on a local Ray the tests start (`ray.init(num_cpus=2)`): the shards,
read in order, hold the local engine's exact output, ids and bad rows, as JSON lines and as Parquet.

Ray is the `ray` extra; CI installs it in a step of its own (.ci/ray.sh), which runs these tests.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profiles.batch import BatchError, BatchOptions, run_batch
from profiles.errors import FactoryError

from .test_batch import DATASETS, make_customers

ray = pytest.importorskip("ray", reason="the ray extra is not installed; .ci/ray.sh runs these tests")
pytestmark = pytest.mark.ray

MAP, BASE = DATASETS / "customers.map.yaml", DATASETS / "support_agent.yaml"


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield
    ray.shutdown()


def _shards(folder: Path, suffix: str = ".jsonl") -> list[Path]:
    return sorted(path for path in folder.iterdir() if path.name.startswith("part-") and path.suffix == suffix)


def _ray(options: BatchOptions):
    from profiles.batch_ray import run_batch_ray

    return run_batch_ray(options)


@pytest.mark.parametrize("render", [False, True], ids=["personas", "prompts"])
def test_shards_hold_the_local_engines_bytes(tmp_path, render):
    source = make_customers(tmp_path / "c.csv", 2500)
    local = tmp_path / "local.jsonl"
    options = dict(source=source, mapping=MAP, base=BASE, render=render, question="Where is my invoice?")
    run_batch(BatchOptions(out=local, **options))
    report = _ray(BatchOptions(out=tmp_path / "ray", **options))
    assert report.complete and report.written == 2500 and report.failed == 0
    shards = _shards(tmp_path / "ray")
    assert len(shards) >= 2  # one per block Ray hands back
    assert b"".join(path.read_bytes() for path in shards) == local.read_bytes()


def test_json_lines_input_gives_the_same_output(tmp_path):
    source = tmp_path / "c.jsonl"
    rows = [
        {"customer_id": f"c-{n}", "contact_name": f"C {n}", "company": "Co", "segment": "SMB", "language": "en",
         "plan": "premium", "notes": f"n {n}"}
        for n in range(1, 301)
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    local = tmp_path / "local.jsonl"
    run_batch(BatchOptions(source=source, out=local, mapping=MAP, base=BASE))
    _ray(BatchOptions(source=source, out=tmp_path / "ray", mapping=MAP, base=BASE))
    assert b"".join(path.read_bytes() for path in _shards(tmp_path / "ray")) == local.read_bytes()


def _same_as_local(tmp_path: Path, source: Path, mapping: Path | None = None) -> tuple[list[dict], list[dict]]:
    """The Ray engine's shards and errors beside the local engine's: the same bytes, the same bad rows."""
    options = dict(source=source, mapping=mapping, on_error="collect")
    local = tmp_path / "local.jsonl"
    run_batch(BatchOptions(out=local, **options))
    report = _ray(BatchOptions(out=tmp_path / "ray", **options))
    assert report.complete
    assert b"".join(path.read_bytes() for path in _shards(tmp_path / "ray")) == local.read_bytes()
    errors, ours = tmp_path / "local.errors.jsonl", tmp_path / "ray" / "errors.jsonl"
    theirs = [json.loads(line) for line in errors.read_bytes().splitlines()] if errors.exists() else []
    mine = [json.loads(line) for line in ours.read_bytes().splitlines()] if ours.exists() else []
    if source.suffix == ".csv":  # Ray's CSV reader does not tell the file line
        assert all(error.pop("line") is None for error in mine) and all(error.pop("line") for error in theirs)
    assert mine == theirs
    return [json.loads(line) for line in local.read_bytes().splitlines()], theirs


def test_json_lines_cells_are_read_as_the_local_engine_reads_them(tmp_path, write):
    """Ray's read_json went through pandas: the text "0123" became 123 and "1e3" 1000.0, a 5 in a column with
    a gap 5.0, a date a timestamp, and a list a row lacked ["nan"]."""
    source = tmp_path / "people.jsonl"
    source.write_bytes(
        b'\xef\xbb\xbf{"name": "Ada", "role": "R", "goal": "0123", "day": "2020-01-01", "n": 5, "tags": null}\n'
        b"\n  \n"
        b'{"name": "Bob", "role": "R", "goal": "1e3", "day": "x", "n": null, "tags": ["a"]}\r\n'
        b'{"name": "C\xe2\x80\xa8y", "role": "R", "goal": "g", "day": "x", "n": 2.5, "tags": null}\n'
        b'[1]\n{"name": "Di", "role": "R"}\n\xff\n'
        b'{"name": "Ed", "role": "R", "goal": "g", "day": "y", "n": 7, "tags": ["b", "c"]}'
    )
    mapping = write("m.yaml", "fields:\n  name: name\n  role: role\n  goal: goal\n  constraints: tags\n"
                              "  variables.day: day\n  variables.n: n\n")
    records, errors = _same_as_local(tmp_path, source, mapping)
    assert [record["persona"].get("goal") for record in records] == ["0123", "1e3", "g", "g"]
    assert records[0]["persona"]["variables"] == {"day": "2020-01-01", "n": 5}
    assert records[2]["persona"]["name"] == "C\u2028y"  # a line separator inside a text is no line break
    assert list(dict.fromkeys((error["row"], error["line"]) for error in errors)) == [(4, 6), (5, 7), (6, 8)]
    assert "the row has no column 'goal'" in errors[1]["message"]  # a key the row lacks, as locally (not null)


def test_csv_headers_and_empty_datasets_as_the_local_engine_reads_them(tmp_path, write):
    """A header past blank lines was read as no header, one with spaces around its names left every row
    without its columns, and a dataset of no rows was an internal error (Ray has no schema for it)."""
    source = tmp_path / "people.csv"
    source.write_bytes(b"\xef\xbb\xbf\r\n\r\n name , role ,goal\r\nAda,R,0123\r\n\"Bob\r\nB\",R,\r\n\r\nCy,,x\r\n")
    records, errors = _same_as_local(tmp_path, source)
    assert [record["persona"] for record in records] == [
        {"name": "Ada", "role": "R", "goal": "0123"}, {"name": "Bob\r\nB", "role": "R"}
    ]
    assert [(error["row"], error["column"]) for error in errors] == [(3, "role")]
    for empty in (write("none.csv", "name,role\n"), write("none.jsonl", "\n\n")):
        folder = tmp_path / empty.stem
        report = _ray(BatchOptions(source=empty, out=folder))
        assert report.complete and report.written == 0 and folder.is_dir() and not _shards(folder)
    with pytest.raises(FactoryError, match="column 'name' appears twice in the header"):
        _ray(BatchOptions(source=write("twice.csv", "\nname,role,name\nA,R,B\n"), out=tmp_path / "twice"))


def test_a_csv_file_rays_reader_refuses_is_a_batch_error(tmp_path, write):
    """Counting the rows reads the file: a row of the wrong width was a RayTaskError, an internal error."""
    source = write("people.csv", "name,role\nAda,Analyst,extra\n")
    with pytest.raises(BatchError, match=r"Ray could not make the batch: Failed to read CSV file: .*people.csv.*"
                                         r"the local engine \(without --engine ray\) reports a malformed row"):
        _ray(BatchOptions(source=source, out=tmp_path / "ray"))


def test_parquet_shards_equal_the_local_parquet_file(tmp_path):
    import pyarrow.parquet as pq

    source = make_customers(tmp_path / "c.csv", 1500)
    options = dict(source=source, mapping=MAP, base=BASE, render=True, question="Where is my invoice?")
    run_batch(BatchOptions(out=tmp_path / "local.parquet", **options))
    _ray(BatchOptions(out=tmp_path / "ray.parquet", **options))
    assert tmp_path.joinpath("ray.parquet").is_dir() and _shards(tmp_path / "ray.parquet", ".parquet")
    local = pq.read_table(tmp_path / "local.parquet")
    shards = [pq.read_table(path) for path in _shards(tmp_path / "ray.parquet", ".parquet")]
    assert sum(table.num_rows for table in shards) == local.num_rows == 1500
    assert [row for table in shards for row in table.to_pylist()] == local.to_pylist()


def _with_bad_rows(path: Path) -> Path:
    lines = ["customer_id,contact_name,company,segment,language,plan,notes"]
    lines += [f"{'' if n % 50 == 0 else f'c-{n}'},C {n},Co,SMB,en,premium,n" for n in range(1, 401)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_bad_rows_are_collected_as_the_local_engine_does(tmp_path):
    source = _with_bad_rows(tmp_path / "bad.csv")
    local = tmp_path / "local.jsonl"
    run_batch(BatchOptions(source=source, out=local, mapping=MAP, base=BASE, on_error="collect"))
    report = _ray(BatchOptions(source=source, out=tmp_path / "ray", mapping=MAP, base=BASE, on_error="collect"))
    assert report.failed == 8 and report.written == 392
    assert b"".join(path.read_bytes() for path in _shards(tmp_path / "ray")) == local.read_bytes()
    ours = [json.loads(line) for line in (tmp_path / "ray" / "errors.jsonl").read_text(encoding="utf-8").splitlines()]
    errors = local.with_name("local.errors.jsonl").read_text(encoding="utf-8")
    theirs = [json.loads(line) for line in errors.splitlines()]
    # the same rows and reasons; Ray's readers do not tell the file line
    assert [(item["row"], item["message"], item["column"]) for item in ours] == [
        (item["row"], item["message"], item["column"]) for item in theirs
    ]
    assert all(item["line"] is None for item in ours)


def test_a_bad_row_stops_the_ray_batch(tmp_path):
    from profiles.errors import DatasetRowError

    source = _with_bad_rows(tmp_path / "bad.csv")
    with pytest.raises(DatasetRowError, match="row 50"):
        _ray(BatchOptions(source=source, out=tmp_path / "ray", mapping=MAP, base=BASE))
    written = [json.loads(line)["row"] for path in _shards(tmp_path / "ray") for line in path.read_bytes().splitlines()]
    assert written == list(range(1, 50))


def test_what_the_ray_engine_refuses(tmp_path):
    source = make_customers(tmp_path / "c.csv", 10)
    with pytest.raises(BatchError, match="does not resume"):
        _ray(BatchOptions(source=source, out=tmp_path / "r", resume=True))
    with pytest.raises(BatchError, match="writes shards into a folder"):
        _ray(BatchOptions(source=source, out=tmp_path / "r.jsonl"))
    _ray(BatchOptions(source=source, out=tmp_path / "r", mapping=MAP, base=BASE))
    with pytest.raises(BatchError, match="already exists"):
        _ray(BatchOptions(source=source, out=tmp_path / "r", mapping=MAP, base=BASE))
    report = _ray(BatchOptions(source=source, out=tmp_path / "r", mapping=MAP, base=BASE, force=True))
    assert report.written == 10


def test_the_command_line_runs_on_ray(tmp_path, runner):
    from profiles.cli import cli

    source = make_customers(tmp_path / "c.csv", 200)
    args = ["batch", "--from", str(source), "--map", str(MAP), "--base", str(BASE), "--quiet"]
    assert runner.invoke(cli, [*args, "--out", str(tmp_path / "local.jsonl"), "--workers", "1"]).exit_code == 0
    result = runner.invoke(cli, [*args, "--engine", "ray", "--out", str(tmp_path / "ray")])
    assert result.exit_code == 0, result.output
    joined = b"".join(path.read_bytes() for path in _shards(tmp_path / "ray"))
    assert joined == (tmp_path / "local.jsonl").read_bytes()
    wrong = runner.invoke(cli, [*args, "--address", "ray://127.0.0.1:1", "--out", str(tmp_path / "x")])
    assert wrong.exit_code == 2 and "--engine ray" in wrong.output
