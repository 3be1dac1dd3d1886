"""Export to and import from a folder of YAML files: round trips both ways, idempotence, conflicts."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiles.errors import StoreError
from profiles.store import PromptStore
from profiles.store.keys import PromptKey
from profiles.store.sync import file_name, read_folder

from .strategies import contents, languages, models, names


def _everything(store: PromptStore) -> list[tuple]:
    rows = []
    for summary in store.list():
        for r in store.history(summary.name, language=summary.language, model=summary.model):
            rows.append(
                (r.name, r.language, r.model, r.version, r.content, r.created_at, r.author, r.note, r.labels)
            )
    return rows


def _fill(store: PromptStore) -> None:
    store.put("summary", "v1\n", author="ana", note="first", label="production")
    store.put("summary", "v2 with: yaml # chars\n  indented\n", label="staging")
    store.put("summary", "台灣\n", language="zh-TW", model="gpt-4o")
    store.put("team/writer", "no final newline")


def test_export_then_import_into_an_empty_store_copies_everything(store, other_store, tmp_path):
    """Every version, time, author, note and label arrives unchanged."""
    _fill(store)
    written = store.export(tmp_path / "prompts")
    assert len(written) == 3 and all(path.suffix == ".yaml" for path in written)
    result = other_store.import_(tmp_path / "prompts")
    assert (result.versions_added, result.labels_moved) == (4, 2)
    assert _everything(other_store) == _everything(store)


def test_importing_an_export_into_its_own_store_adds_nothing(store, tmp_path):
    """Import is idempotent: the versions are already there."""
    _fill(store)
    before = _everything(store)
    store.export(tmp_path)
    assert store.import_(tmp_path).versions_added == 0
    assert store.import_(tmp_path).labels_moved == 0
    assert _everything(store) == before


def test_sync_both_ways_through_a_folder(store, other_store, tmp_path):
    """New versions and label moves made on either side reach the other through the folder."""
    _fill(store)
    store.export(tmp_path)
    other_store.import_(tmp_path)
    other_store.put("summary", "v3 from the other side\n")
    other_store.set_label("summary", "production", 3)
    other_store.export(tmp_path)
    result = store.import_(tmp_path)
    assert (result.versions_added, result.labels_moved) == (1, 1)
    assert store.get("summary", label="production").content == "v3 from the other side\n"
    store.put("summary", "v4 back again\n")
    store.export(tmp_path)
    assert other_store.import_(tmp_path).versions_added == 1
    assert _everything(other_store) == _everything(store)


def test_export_writes_readable_yaml(store, tmp_path):
    """Multi-line prompts are literal blocks, so git diffs read like the prompt."""
    store.put("summary", "line one\nline two\n", label="production")
    (path,) = store.export(tmp_path)
    assert path.name == "summary__any__any.yaml"
    text = path.read_text(encoding="utf-8")
    assert "content: |\n    line one\n    line two\n" in text
    document = yaml.safe_load(text)
    assert document["labels"] == {"production": 1} and document["versions"][0]["version"] == 1


def test_conflicting_version_is_refused_and_nothing_is_imported(store, tmp_path):
    """A file whose version 1 differs from the store's is an error; the import is all or nothing."""
    store.put("a", "store text")
    folder = tmp_path / "in"
    folder.mkdir()
    good = {
        "name": "b",
        "versions": [{"version": 1, "created_at": "2026-01-01T00:00:00+00:00", "content": "b"}],
    }
    bad = {
        "name": "a",
        "versions": [{"version": 1, "created_at": "2026-01-01T00:00:00+00:00", "content": "other"}],
    }
    (folder / "0_b.yaml").write_text(yaml.safe_dump(good))
    (folder / "1_a.yaml").write_text(yaml.safe_dump(bad))
    with pytest.raises(StoreError, match="different content"):
        store.import_(folder)
    assert [s.name for s in store.list()] == ["a"]
    assert store.get("a").content == "store text"


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ("[1, 2]", "expected a mapping"),
        ("name: ''\n", "non-empty"),
        ("name: a\nversions: {}\n", "'versions' must be a list"),
        (
            "name: a\nversions:\n- {version: 0, content: x, created_at: '2026-01-01T00:00:00'}\n",
            "whole number",
        ),
        ("name: a\nversions:\n- {version: 1, content: 5, created_at: '2026-01-01T00:00:00'}\n", "'content'"),
        ("name: a\nversions:\n- {version: 1, content: x, created_at: yesterday}\n", "ISO 8601"),
        ("name: a\nlabels: {production: 3}\nversions: []\n", "does not exist"),
        ("name: a\n  bad: [indent\n", "cannot read"),
        (
            "name: a\nversions:\n- {version: 99999999999999999999, content: x, created_at: '2026-01-01T00:00:00'}\n",
            "from 1 to 2147483647",
        ),
        ("name: a\nversions:\n- {version: 1, content: '', created_at: '2026-01-01T00:00:00'}\n", "non-empty text"),
        (
            'name: a\nversions:\n- {version: 1, content: "a\\0b", created_at: "2026-01-01T00:00:00"}\n',
            "versions[0]: field 'content' contains a NUL",
        ),
        (
            "name: a\nversions:\n- {version: 1, content: " + "x" * 1_000_001 + ", created_at: '2026-01-01T00:00:00'}\n",
            "versions[0]: field 'content' is 1,000,001 bytes of UTF-8; a stored prompt holds at most 1,000,000",
        ),
        (
            "name: a\nlabels: {' prod': 1}\nversions:\n- {version: 1, content: x, created_at: '2026-01-01T00:00:00'}\n",
            "label ' prod': a label must be non-empty",
        ),
        (
            "name: a\nversions:\n- {version: 1, content: x, created_at: '9999-12-31T23:00:00-05:00'}\n",
            "versions[0]: field 'created_at' must be an ISO 8601 time in the years 1 to 9999 UTC",
        ),
        (
            "name: a\nversions:\n- {version: 1, content: x, created_at: '0001-01-01T00:00:00+01:00'}\n",
            "versions[0]: field 'created_at' must be an ISO 8601 time in the years 1 to 9999 UTC",
        ),
        (
            "name: a\nlabels: {production: 1, production: 2}\nversions:\n"
            "- {version: 1, content: x, created_at: '2026-01-01T00:00:00'}\n"
            "- {version: 2, content: y, created_at: '2026-01-01T00:00:00'}\n",
            "line 2, column 25: duplicate key 'production' (first at line 2)",
        ),
        (
            "name: a\nlabels: {canary: {1: 90, 1: 10}}\nversions:\n"
            "- {version: 1, content: x, created_at: '2026-01-01T00:00:00'}\n",
            "duplicate key '1'",
        ),
        ("name: a\nversions: []\nname: b\n", "line 3, column 1: duplicate key 'name'"),
        ("name: a\nlables: {production: 1}\n", "unknown field 'lables'; the fields are name, language, model, labels"),
        (
            "name: a\nversions:\n- {version: 1, content: x, created_at: '2026-01-01T00:00:00', notes: why}\n",
            "versions[0]: unknown field 'notes'; the fields are version, created_at, author, note, content",
        ),
        ("name: a\n---\nname: b\n", "holds several YAML documents"),
        ("name: [a]\n", "field 'name' must be text, got list"),
        ("name: a\nmodel: 5\n", "field 'model' must be text, got int"),
        (
            "name: a\nlabels: {production: 1, production: 2}\n"
            "versions:\n- {version: 1, content: x, created_at: '2026-01-01T00:00:00'}\n"
            "- {version: 2, content: y, created_at: '2026-01-01T00:00:00'}\n",
            "duplicate key 'production' (first at line 2); keep one of them",
        ),
    ],
)
def test_malformed_files_name_the_file(store, tmp_path, document, problem):
    """Each malformed file gives a StoreError naming the file and the problem, once."""
    (tmp_path / "broken.yaml").write_text(document)
    with pytest.raises(StoreError) as caught:
        store.import_(tmp_path)
    message = str(caught.value)
    assert "broken.yaml" in message and problem in message
    assert message.count("broken.yaml") == 1 and message.count("fix the file") <= 1
    assert store.list() == ()


def test_missing_folder_is_a_store_error(store, tmp_path):
    """Importing a folder that does not exist says so."""
    with pytest.raises(StoreError, match="no such folder"):
        store.import_(tmp_path / "nope")


def test_file_names_are_unique_and_safe():
    """Unsafe parts are replaced and a hash keeps different keys apart."""
    keys = [PromptKey("a/b"), PromptKey("a?b"), PromptKey("a", "any"), PromptKey("a"), PromptKey("a__b")]
    spelled = [file_name(key) for key in keys]
    assert len(set(spelled)) == len(keys)
    assert all("/" not in name and "?" not in name for name in spelled)
    assert file_name(PromptKey("summary", "zh-TW", "gpt-4o")) == "summary__zh-TW__gpt-4o.yaml"


def test_names_differing_only_in_case_get_different_files(store, other_store, tmp_path):
    """On a case-blind disk Summary and summary must not overwrite each other."""
    store.put("Summary", "upper")
    store.put("summary", "lower")
    files = store.export(tmp_path)
    assert len({path.name.casefold() for path in files}) == 2
    other_store.import_(tmp_path)
    assert other_store.get("Summary").content == "upper" and other_store.get("summary").content == "lower"


_entries = st.lists(st.tuples(names, languages, models, contents), min_size=1, max_size=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=_entries, label_last=st.booleans())
def test_arbitrary_prompts_round_trip_through_a_folder(entries, label_last):
    """Any names, keys and contents survive export then import into a new store, exactly."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        with (
            PromptStore(f"sqlite:///{root / 'a.db'}") as source,
            PromptStore(f"sqlite:///{root / 'b.db'}") as copy,
        ):
            for name, language, model, content in entries:
                source.put(
                    name,
                    content,
                    language=language,
                    model=model,
                    note=content[:10],
                    label="production" if label_last else None,
                )
            source.export(root / "folder")
            assert len(read_folder(root / "folder")) == len(source.list())
            result = copy.import_(root / "folder")
            # a put equal to its key's newest version adds none, so count what the source holds
            assert result.versions_added == sum(summary.latest_version for summary in source.list())
            assert _everything(copy) == _everything(source)
            assert copy.import_(root / "folder").versions_added == 0


@settings(max_examples=300, deadline=None)
@given(
    name=names,
    language=languages,
    model=models,
    texts=st.lists(contents, min_size=1, max_size=3),
    author=contents,
    label=names.map(str.strip).filter(bool),
)
def test_any_prompt_file_reads_back_exactly(tmp_path_factory, name, language, model, texts, author, label):
    """Writing a prompt file and reading it back gives the same key, versions and labels."""
    from datetime import datetime, timezone

    from profiles.store.models import PromptVersion
    from profiles.store.sync import write_folder

    key = PromptKey(name, language, model)
    moment = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
    records = [
        PromptVersion(name, language, model, number, text, moment, author, text[::-1])
        for number, text in enumerate(texts, start=1)
    ]
    folder = tmp_path_factory.mktemp("folder")
    write_folder(folder, {key: (records, {label: len(texts)})})
    (record,) = read_folder(folder)
    assert record.key == key
    assert list(record.versions) == records
    assert record.labels == {label: len(texts)}


_EXPORT_UNDER_A_FILE_SIZE_LIMIT = """
import resource, signal, sys
from profiles.errors import StoreError
from profiles.store import PromptStore
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), int(sys.argv[3])))
try:
    PromptStore(sys.argv[1]).export(sys.argv[2])
except StoreError as error:
    print(error)
    sys.exit(3)
"""


def test_an_export_that_fails_midway_leaves_the_previous_files_whole(tmp_path):
    """A write that fails (here: past a file size limit, as on a full disk) keeps the file of the last
    export as it was, never a file cut off in the middle of a version."""
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'store.db'}"
    folder = tmp_path / "prompts"
    with PromptStore(url) as store:
        store.put("big", "first\n" * 5_000, label="production")
        (path,) = store.export(folder)
        before = path.read_text(encoding="utf-8")
        store.put("big", "second\n" * 20_000)
    limit = len(before.encode()) + 1_000  # the old file fits, the new one does not
    run = subprocess.run(
        [sys.executable, "-c", _EXPORT_UNDER_A_FILE_SIZE_LIMIT, url, str(folder), str(limit)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 3, run.stderr
    assert "cannot export prompts to" in run.stdout
    assert path.read_text(encoding="utf-8") == before
    assert [item.name for item in folder.iterdir()] == [path.name]  # no temporary file left behind


@pytest.mark.parametrize("link", ["file", "folder"])
def test_an_import_reads_no_file_outside_its_folder(store, tmp_path, link):
    """A link in the folder to a file elsewhere is refused, and nothing is imported; a linked folder is
    not walked into."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    prompt = "name: secret\nversions:\n- {version: 1, content: from outside, created_at: '2026-01-01T00:00:00'}\n"
    (outside / "secret.yaml").write_text(prompt)
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "ok.yaml").write_text(prompt.replace("secret", "inside"))
    if link == "file":
        (folder / "linked.yaml").symlink_to(outside / "secret.yaml")
    else:
        (folder / "linked").symlink_to(outside, target_is_directory=True)
        assert store.import_(folder).versions_added == 1
        assert [summary.name for summary in store.list()] == ["inside"]
        return
    with pytest.raises(StoreError, match="outside") as raised:
        store.import_(folder)
    assert "copy the file in or remove the link" in str(raised.value)
    assert store.list() == ()


def test_an_export_replaces_a_link_in_the_folder_rather_than_writing_through_it(store, tmp_path):
    """A file of the folder that is a link elsewhere is replaced by the exported file; its target is untouched."""
    store.put("n", "Ada")
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text("keep me\n")
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / file_name(PromptKey("n"))).symlink_to(outside)
    (path,) = store.export(folder)
    assert outside.read_text() == "keep me\n"
    assert not path.is_symlink() and "Ada" in path.read_text()


def test_a_prompt_with_ten_thousand_versions_round_trips(store, other_store, tmp_path):
    """A prompt's every version is one file: one of 9,200 versions (over 100,000 values, the bound a
    persona file has) exports, imports into an empty store and reads back the same, labels and all."""
    versions = [
        {"version": n, "created_at": "2026-01-05T10:00:00+00:00", "author": "ci", "note": "", "content": f"v{n}"}
        for n in range(1, 9_201)
    ]
    document = {"name": "busy", "language": "", "model": "", "labels": {"production": 9_000}, "versions": versions}
    (tmp_path / "in").mkdir()
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    (tmp_path / "in" / "busy.yaml").write_text(yaml.dump(document, Dumper=dumper, sort_keys=False), encoding="utf-8")

    assert store.import_(tmp_path / "in").versions_added == 9_200
    store.export(tmp_path / "out")
    assert other_store.import_(tmp_path / "out").versions_added == 9_200
    assert _everything(other_store) == _everything(store)
    assert other_store.get("busy", label="production").content == "v9000"


def test_a_long_store_file_still_refuses_an_alias_bomb(store, tmp_path):
    """The bound grows with the text, not with what aliases expand to: a short file whose aliases
    expand past its own length is refused, and nothing is imported."""
    bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for level in "bcdef":
        previous = chr(ord(level) - 1)
        bomb.append(f"{level}: &{level} [{', '.join(f'*{previous}' for _ in range(10))}]")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "bomb.yaml").write_text("\n".join(bomb) + "\n", encoding="utf-8")
    with pytest.raises(StoreError, match="expands to over 100000 values"):
        store.import_(tmp_path / "in")
    assert store.list() == ()
