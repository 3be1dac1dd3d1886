"""DatasetProfileFactory: formats, mapping, base persona, bad rows, streaming, lookups, shards."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiles import (
    ConfigError,
    DatasetProfileFactory,
    DatasetRowError,
    FactoryError,
    FieldMapping,
    ProfileConfig,
    load_mapping,
)

DATASETS = "datasets"


@pytest.fixture
def example(configs):
    folder = configs / DATASETS
    return DatasetProfileFactory(
        folder / "customers.csv", folder / "customers.map.yaml", base=folder / "support_agent.yaml"
    )


def test_example_dataset_gives_one_profile_per_row(example):
    """The bundled customers dataset becomes twelve validated profiles, ids from its id column."""
    profiles = list(example.create_profiles())
    assert [profile.profile_id for profile in profiles] == [f"c-{n:03d}" for n in range(1, 13)]
    ada = profiles[0]
    assert ada.get_name() == "Support agent for Ada Byron"
    assert ada.get_goal() == "Give Enterprise-level support to Ada Byron of Analytical Engines Ltd."
    assert ada.get_role() == "Customer support agent"  # from the base persona
    prompt = ada.format_system_prompt("Where is my invoice?")
    assert "The customer is on the premium plan" in prompt and "Keep in mind: Prefers short answers" in prompt
    assert example.errors == []


def test_empty_cell_leaves_base_value_and_language_picks_locale(example):
    """An empty cell keeps the base persona's variable; a row's language selects its templates."""
    turing = example.create_profile("c-003")
    assert "Keep in mind: no notes on file" in turing.format_system_prompt()
    li_bai = example.create_profile("c-005")
    assert li_bai.get_language() == "zh" and "请始终使用简体中文回答" in li_bai.format_system_prompt()


def test_provenance_names_file_line_row_and_column(example):
    """A mapped field says which file line, row and column it came from; base fields their file."""
    profile = example.create_profile("c-002")
    assert profile.provenance["language"].endswith("customers.csv:3 row 2 column language")
    assert profile.provenance["goal"].endswith("row 2 template goal")
    assert profile.provenance["role"].startswith("yaml:")
    assert profile.provenance["role"].endswith("support_agent.yaml:4")  # the line of `role:`


def test_create_profile_by_row_number_without_id_column(write):
    """Without an id column a row's id is its number; an unknown id gives None."""
    source = write("people.csv", "name,role\nAda,Analyst\nGrace,Admiral\n")
    factory = DatasetProfileFactory(source)
    assert factory.create_profile(2).get_name() == "Grace"
    assert factory.create_profile(2).profile_id == 2
    assert factory.create_profile(3) is None


def test_create_profile_options_fill_only_empty_fields(write):
    """Options given to create_profile fill what the row and base leave empty, nothing else."""
    source = write("people.csv", "id,name,role\n1,Ada,\n")
    factory = DatasetProfileFactory(source, id_column="id")
    profile = factory.create_profile("1", name="Ignored", role="Analyst", goal="Count")
    assert (profile.get_name(), profile.get_role(), profile.get_goal()) == ("Ada", "Analyst", "Count")


def test_profile_config_accepts_the_factory(example):
    """ProfileConfig(factory=...) still works: the dataset's profile wins over the persona's fields."""
    config = ProfileConfig(factory=example)
    assert config.create_profile("c-004").get_name() == "Support agent for Katherine Johnson"


def test_identity_mapping_takes_columns_named_like_fields(write):
    """With no mapping, columns named like persona fields fill them and other columns are ignored."""
    source = write("people.jsonl", '{"name": "Ada", "role": "Analyst", "email": "ada@example.com"}\n')
    (profile,) = DatasetProfileFactory(source).create_profiles()
    assert profile.get_name() == "Ada" and "ada@example.com" not in profile.format_system_prompt()


def test_iterable_of_dicts_is_consumed_lazily():
    """An endless generator works: rows are made one at a time, never materialised."""
    rows = ({"name": f"Agent {n}", "role": "Tester"} for n in itertools.count(1))
    stream = DatasetProfileFactory(rows).create_profiles()
    first = list(itertools.islice(stream, 3))
    assert [profile.get_name() for profile in first] == ["Agent 1", "Agent 2", "Agent 3"]


def test_jsonl_rows_numbers_and_bad_lines(write):
    """JSONL: blank lines are not rows; bad JSON and non-objects are reported with row and line."""
    source = write(
        "people.jsonl",
        '{"name": "Ada", "role": "Analyst"}\n\n{"name": "Grace", "role": \n[1, 2]\n{"name": 7, "role": "R"}\n',
    )
    factory = DatasetProfileFactory(source, on_error="collect")
    profiles = list(factory.create_profiles())
    assert [profile.get_name() for profile in profiles] == ["Ada", "7"]  # numbers become text
    assert [(issue.row, issue.line) for issue in factory.errors] == [(2, 3), (3, 4)]
    assert "invalid JSON" in factory.errors[0].message
    assert "expected a JSON object, got a list" in str(factory.errors[1])


def test_csv_bad_rows_report_row_line_column_and_reason(write):
    """CSV: each bad row names the data row, the file line (after a multi-line cell) and the column."""
    source = write(
        "people.csv",
        'id,who,job\n1,Ada,Analyst\n2,"Grace\nHopper",\n3,Alan\n4,,Tester\n5,Linus,"Kernel"\n',
    )
    factory = DatasetProfileFactory(source, {"name": "who", "role": "job"}, id_column="id", on_error="collect")
    stream = factory.create_profiles()
    assert [profile.profile_id for profile in stream] == ["1", "5"]
    found = [(issue.row, issue.line, issue.column, issue.field) for issue in stream.errors]
    assert found == [(2, 3, "job", "role"), (3, 5, None, None), (4, 6, "who", "name")]
    assert str(stream.errors[0]).startswith(f"{source}:3: row 2, column 'job', field 'role': is required")
    assert "has 2 cells but the header has 3" in str(stream.errors[1])
    assert stream.errors is factory.errors


def test_on_error_raise_stops_at_the_first_bad_row(write):
    """raise: the first bad row raises DatasetRowError carrying its issues, after the good rows."""
    source = write("people.csv", "name,role\nAda,Analyst\n,Admiral\nAlan,\n")
    stream = DatasetProfileFactory(source).create_profiles()
    assert next(stream).get_name() == "Ada"
    with pytest.raises(DatasetRowError) as caught:
        next(stream)
    assert caught.value.issues[0].row == 2 and caught.value.issues[0].line == 3
    assert "column 'name'" in str(caught.value) and "--on-error skip" in str(caught.value)
    assert isinstance(caught.value, FactoryError)


def test_on_error_skip_keeps_no_errors(write):
    """skip: bad rows are left out and not kept."""
    source = write("people.csv", "name,role\nAda,Analyst\n,Admiral\n")
    factory = DatasetProfileFactory(source, on_error="skip")
    assert [profile.get_name() for profile in factory.create_profiles()] == ["Ada"]
    assert factory.errors == []


def test_invalid_field_value_is_a_row_issue(write):
    """A value the persona schema refuses (a list for a text field) is reported for its column."""
    source = write("people.yaml", "- {name: Ada, role: Analyst}\n- {name: [A, B], role: Analyst}\n")
    factory = DatasetProfileFactory(source, on_error="collect")
    assert len(list(factory.create_profiles())) == 1
    (issue,) = factory.errors
    assert (issue.row, issue.line, issue.column) == (
        2,
        2,
        "name",
    ) and "expected text, got a list" in issue.message


def test_yaml_dataset_must_be_a_list_and_refuses_aliases(write):
    """YAML: a mapping at the top or an alias is refused with the file (and line)."""
    with pytest.raises(FactoryError, match="must be a list of mappings"):
        list(DatasetProfileFactory(write("a.yaml", "name: Ada\n")).create_profiles())
    aliased = write("b.yaml", "- &a {name: Ada, role: R}\n- *a\n")
    with pytest.raises(FactoryError, match=r"b.yaml:2: invalid YAML: aliases are not allowed"):
        list(DatasetProfileFactory(aliased).create_profiles())


def test_list_fields_split_text_at_line_breaks(write):
    """A text cell mapped to constraints becomes one constraint per non-empty line."""
    source = write("people.csv", 'name,role,rules\nAda,Analyst,"Be brief\n\nCite sources"\n')
    (profile,) = DatasetProfileFactory(
        source, {"name": "name", "role": "role", "constraints": "rules"}
    ).create_profiles()
    assert profile.get_constraints() == ["Be brief", "Cite sources"]


def test_cells_are_data_never_templates(write):
    """Braces in a cell are printed as they are; they are not run against the prompt's variables."""
    source = write("people.csv", "name,role\n{{ question }} {% if x %},Analyst\n")
    (profile,) = DatasetProfileFactory(source).create_profiles()
    assert "You are {{ question }} {% if x %}." in profile.format_system_prompt("secret question")


def test_cells_never_look_up_the_environment(write, monkeypatch):
    """A cell shaped like a dynamic field (`{key: …}`) is refused: data must not read env or store."""
    monkeypatch.setenv("PROFILES_TEST_CELL_SECRET", "leaked-value")
    lookup = {"key": "PROFILES_TEST_CELL_SECRET"}
    rows = [
        {"name": lookup, "role": "Analyst", "constraints": None, "x": None},
        {"name": "Ada", "role": "Analyst", "constraints": ["be brief", lookup], "x": None},
        {"name": "Ada", "role": "Analyst", "constraints": None, "x": {"nested": lookup}},
        {"name": "Grace", "role": "Analyst", "constraints": None, "x": {"plain": "data"}},
    ]
    mapping = {"name": "name", "role": "role", "constraints": "constraints", "variables.x": "x"}
    factory = DatasetProfileFactory(rows, mapping, on_error="collect")
    profiles = list(factory.create_profiles())
    assert [profile.get_name() for profile in profiles] == ["Grace"]
    assert [issue.row for issue in factory.errors] == [1, 2, 3]
    assert all("holds a mapping with 'key:'" in issue.message for issue in factory.errors)
    assert "leaked-value" not in repr(profiles) + str(factory.errors)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40))
def test_any_cell_text_round_trips(text):
    """Whatever text a cell holds, the profile's name is that text, stripped."""
    rows = [{"name": text, "role": "Tester"}]
    factory = DatasetProfileFactory(rows, on_error="collect")
    profiles = list(factory.create_profiles())
    if text.strip():
        assert profiles[0].get_name() == text.strip()
    else:
        assert factory.errors[0].field == "name"


def test_template_mapping_sees_row_and_row_number(write):
    """A mapping template reads the row as `row` and its number as `row_number`."""
    source = write("people.csv", "first,last\nAda,Lovelace\n")
    fields = {"name": "{{ row.first }} {{ row['last'] }}", "role": "Agent #{{ row_number }}"}
    (profile,) = DatasetProfileFactory(source, fields).create_profiles()
    assert (profile.get_name(), profile.get_role()) == ("Ada Lovelace", "Agent #1")


def test_template_reading_a_missing_column_is_a_row_issue(write):
    """A template that reads a column the row lacks fails that row, naming the field."""
    source = write("people.jsonl", '{"first": "Ada", "job": "Analyst"}\n{"job": "Admiral"}\n')
    factory = DatasetProfileFactory(source, {"name": "{{ row.first }}", "role": "job"}, on_error="collect")
    assert len(list(factory.create_profiles())) == 1
    assert factory.errors[0].row == 2 and factory.errors[0].field == "name"
    assert "first" in factory.errors[0].message


def test_template_output_is_bounded(write):
    """A mapping template cannot build an oversized value."""
    rows = [{"n": "x"}]
    factory = DatasetProfileFactory(
        rows, {"name": "{% for i in range(30000) %}{{ row.n }}{% endfor %}", "role": "n"}, on_error="collect"
    )
    assert list(factory.create_profiles()) == []
    assert "over 20000 characters" in factory.errors[0].message


def test_bad_mapping_templates_fail_at_construction():
    """A template that does not parse, or reads a bare variable, is refused before any row is read."""
    with pytest.raises(ConfigError, match=r"fields.goal.*does not parse"):
        DatasetProfileFactory([], {"goal": "{{ row.x "})
    with pytest.raises(ConfigError, match=r"row.segment"):
        DatasetProfileFactory([], {"goal": "{{ segment }}"})


def test_bad_mapping_templates_in_a_file_name_its_line(write):
    """Read from a mapping file, a template that does not compile is named at its file and line."""
    path = write("m.yaml", "id: cid\nfields:\n  name: name\n  goal: '{{ row.x '\n  desc: '{{ segment }}'\n")
    with pytest.raises(ConfigError) as caught:
        DatasetProfileFactory([], path)
    assert str(caught.value).startswith(f"{path}:4: field 'fields.goal': the template does not parse")
    path.write_text("fields:\n  name: name\n  desc: '{{ segment }}'\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        DatasetProfileFactory([], path)
    assert str(caught.value).startswith(f"{path}:3: field 'fields.desc': the template uses segment")


def test_mapped_column_missing_from_header_fails_the_file(write):
    """A column the mapping names but the CSV header lacks stops the run, listing the real columns."""
    source = write("people.csv", "name,role\nAda,Analyst\n")
    factory = DatasetProfileFactory(source, {"name": "nmae", "role": "role"})
    with pytest.raises(FactoryError, match=r"column\(s\) 'nmae'.*columns are name, role"):
        list(factory.create_profiles())


def test_mapping_file_errors_name_file_line_and_fix(write):
    """A mapping file with a misspelt field names the line and suggests the field."""
    path = write("m.yaml", "id: cid\nfields:\n  name: a\n  gaol: b\n")
    with pytest.raises(ConfigError) as caught:
        load_mapping(path)
    assert f"{path}:4: field 'fields.gaol': not a persona field; did you mean 'goal'?" in str(caught.value)
    assert load_mapping(write("ok.yaml", "id: cid\nfields: {name: a}\n")) == FieldMapping({"name": "a"}, "cid")


def test_a_mapping_file_with_a_field_mapped_twice_is_refused_at_the_second(write):
    """PyYAML keeps the last of two keys, so `name:` mapped twice silently took the second column."""
    path = write("twice.yaml", "fields:\n  name: full_name\n  role: role\n  name: nick\n")
    with pytest.raises(ConfigError) as caught:
        load_mapping(path)
    assert f"{path}:4:3: invalid YAML: duplicate key 'name' (first at line 2); keep one of them" in str(caught.value)


def test_variables_entries_bind_template_variables(write):
    """`variables.NAME: column` makes a cell a template variable of that profile."""
    base = write("base.yaml", "name: Agent\nrole: Helper\ngoal: 'Serve {{ company }}'\n")
    source = write("c.csv", "company\nAcme\n")
    (profile,) = DatasetProfileFactory(source, {"variables.company": "company"}, base=base).create_profiles()
    assert "Your goal: Serve Acme." in profile.format_system_prompt()


def test_parquet_is_read_by_record_batch(tmp_path):
    """Parquet rows stream from pyarrow record batches; ints become text fields."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "people.parquet"
    table = pa.table({"id": list(range(1, 2501)), "name": [f"P{n}" for n in range(1, 2501)], "role": ["R"] * 2500})
    pq.write_table(table, path, row_group_size=1000)
    factory = DatasetProfileFactory(path, id_column="id")
    profiles = list(factory.create_profiles())
    assert len(profiles) == 2500 and profiles[-1].profile_id == 2500 and profiles[-1].get_name() == "P2500"
    assert factory.create_profile("1200").get_name() == "P1200"


def test_shards_partition_the_rows(write):
    """Shards 0/3, 1/3 and 2/3 together hold every row exactly once."""
    lines = "\n".join(json.dumps({"id": f"u{n}", "name": f"N{n}", "role": "R"}) for n in range(60))
    factory = DatasetProfileFactory(write("u.jsonl", lines), id_column="id")
    shards = [[result.profile_id for result in factory.iter_results(shard=(i, 3))] for i in range(3)]
    assert sorted(itertools.chain(*shards)) == sorted(f"u{n}" for n in range(60))
    assert all(shards)
    with pytest.raises(FactoryError, match="shard"):
        list(factory.iter_results(shard=(3, 3)))


def test_unknown_suffix_and_missing_file_are_clear(tmp_path):
    """The format comes from the suffix; an unknown one or a missing file says how to fix it."""
    with pytest.raises(FactoryError, match=r"cannot tell the dataset format.*\.xlsx.*`--format` on the command line"):
        DatasetProfileFactory(tmp_path / "a.xlsx")
    with pytest.raises(FactoryError, match="not found"):
        list(DatasetProfileFactory(tmp_path / "a.csv").create_profiles())
    with pytest.raises(FactoryError, match="on_error"):
        DatasetProfileFactory([], on_error="ignore")


def test_base_with_a_factory_is_refused():
    """A base persona is plain data; one with its own factory is refused."""
    base = ProfileConfig(factory=lambda *args, **kwargs: None)
    with pytest.raises(FactoryError, match="base persona"):
        DatasetProfileFactory([], base=base)


def test_base_deployment_overlay_applies_and_rows_still_win(write, monkeypatch):
    """The base persona's overlay for PROFILES_DEPLOYMENT applies to every row; cells win over it."""
    base = write(
        "base.yaml", "name: Agent\nrole: Helper\ngoal: Help\ndeployments:\n  prod: {role: Prod helper, goal: Ship}\n"
    )
    source = write("rows.csv", "name,goal\nAda,\nGrace,Sail\n")
    monkeypatch.setenv("PROFILES_DEPLOYMENT", "prod")
    ada, grace = DatasetProfileFactory(source, base=base).create_profiles()
    assert (ada.get_name(), ada.get_role(), ada.get_goal()) == ("Ada", "Prod helper", "Ship")
    assert grace.get_goal() == "Sail" and ada.provenance["role"].startswith("overlay prod")
    monkeypatch.delenv("PROFILES_DEPLOYMENT")
    (plain, _) = DatasetProfileFactory(source, base=base).create_profiles()
    assert plain.get_role() == "Helper"


def test_base_template_roots_are_searched(write, tmp_path):
    """A base persona's template_roots serve the rows' prompts."""
    write("tpl/default/en/user.j2", "Ticket for {{ name }}: {{ question }}")
    base = write("base.yaml", "name: Agent\nrole: Helper\ntemplate_roots: [tpl]\n")
    (profile,) = DatasetProfileFactory([{"name": "Ada"}], base=base).create_profiles()
    assert profile.format_user_prompt("Refund") == "Ticket for Ada: Refund"


def test_a_base_holds_only_what_rows_share(write, runner):
    """A base with only a role: each row gives the name, and the merged row is what is validated."""
    from profiles.cli import cli

    base = write("shared.yaml", "role: Helper\n")
    source = write("people.csv", "full_name\nAda\n\n")
    factory = DatasetProfileFactory([{"full_name": "Ada"}, {"full_name": ""}], {"name": "full_name"}, base=base,
                                    on_error="collect")
    assert [(profile.get_name(), profile.get_role()) for profile in factory.create_profiles()] == [("Ada", "Helper")]
    assert [str(issue) for issue in factory.errors] == [
        "<rows>: row 2, column 'full_name', field 'name': is required, but column 'full_name' is empty here and "
        "the base persona does not set it"
    ]
    mapping = write("people.map.yaml", "fields:\n  name: full_name\n")
    out = base.parent / "out.jsonl"
    result = runner.invoke(cli, ["batch", "--from", str(source), "--map", str(mapping), "--base", str(base),
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text(encoding="utf-8"))["persona"] == {"name": "Ada", "role": "Helper"}


def test_a_base_may_be_a_mapping_of_fields():
    factory = DatasetProfileFactory([{"name": "Ada"}], base={"role": "Helper", "goal": "Help."})
    (profile,) = factory.create_profiles()
    assert (profile.get_name(), profile.get_role(), profile.get_goal()) == ("Ada", "Helper", "Help.")


def test_a_base_still_refuses_a_misspelt_kind(write):
    base = write("shared.yaml", "role: Helper\ntemplates:\n  sytem: {inline: Hi}\n")
    with pytest.raises(ConfigError, match="'sytem' is one letter away from the built-in 'system'"):
        DatasetProfileFactory([{"name": "Ada"}], base=base)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("2", "has 1 cell but the header has 3: no value for 'full_name', 'job'"),
        ("2,Ada", "has 2 cells but the header has 3: no value for 'job'"),
        ("2,Ada,Analyst,extra", "has 4 cells but the header has 3: 1 cell after the last column, 'job'"),
    ],
)
def test_a_row_of_the_wrong_width_names_the_columns(write, line, message):
    source = write("people.csv", f"id,full_name,job\n1,Grace,Admiral\n{line}\n")
    factory = DatasetProfileFactory(source, {"name": "full_name", "role": "job"}, on_error="collect")
    assert len(list(factory.create_profiles())) == 1
    (issue,) = factory.errors
    assert str(issue).startswith(f"{source}:3: row 2: {message}")


@pytest.mark.parametrize(
    ("suffix", "row", "advice"),
    [
        ("csv", "2,Ada", "add the missing cells (an empty one is a comma)"),
        ("tsv", "2\tAda", "add the missing cells (an empty one is a tab)"),
        ("tsv", "2\tAda\tAnalyst\textra", "remove them, or quote a cell that holds a tab"),
    ],
)
def test_a_row_of_the_wrong_width_is_told_its_own_separator(write, suffix, row, advice):
    """A TSV row short of a cell was told that an empty cell is a comma."""
    header = "id,full_name,job" if suffix == "csv" else "id\tfull_name\tjob"
    source = write(f"people.{suffix}", f"{header}\n{row}\n")
    factory = DatasetProfileFactory(source, {"name": "full_name", "role": "job"}, on_error="collect")
    assert list(factory.create_profiles()) == []
    (issue,) = factory.errors
    assert advice in str(issue)


@pytest.mark.parametrize(("key", "advice"), [("variables.goal", "map the column to goal itself"),
                                             ("variables.tools", "rename the variable")])
def test_a_variable_a_persona_file_refuses_is_refused_in_the_mapping(write, key, advice):
    """Written out, such a persona was a file that does not load."""
    source = write("people.csv", "id,full_name,job\n1,Grace,Admiral\n")
    name = key.split(".")[1]
    with pytest.raises(ConfigError, match=f"'fields.{key}': '{name}' cannot be a variable's name.*{advice}"):
        DatasetProfileFactory(source, {"name": "full_name", "role": "job", key: "job"})


@pytest.mark.parametrize("source", [None, 5, b"rows.csv", {"name": "Ada", "role": "Analyst"}])
def test_a_source_that_is_no_path_and_no_rows_is_refused_when_given(source):
    with pytest.raises(FactoryError, match=f"a dataset is a file path .* row mappings.*got {type(source).__name__}"):
        DatasetProfileFactory(source)
    rows = iter([{"name": "Ada", "role": "Analyst"}])  # an iterator of rows is rows
    assert [profile.get_name() for profile in DatasetProfileFactory(rows).create_profiles()] == ["Ada"]


def test_blank_lines_before_a_csv_header_are_not_the_header(write):
    """They were read as an empty header, and the first row's width check raised IndexError."""
    source = write("people.csv", "\n\nname,,role\nAda,x,Analyst\n")
    with pytest.raises(FactoryError, match=r"people.csv:3: header cell 2 is empty"):
        list(DatasetProfileFactory(source).create_profiles())
    source = write("people.csv", "\r\n\nname,role\n\nAda,Analyst\n")
    (profile,) = DatasetProfileFactory(source).create_profiles()
    assert (profile.get_name(), profile.profile_id) == ("Ada", 1)


def test_a_csv_quote_never_closed_is_a_bad_row_not_the_rest_of_the_file(write):
    """Read leniently, the open quote took every later line into one cell: Bob and Carl were lost
    without a word, and Ada's role was three lines of the file."""
    source = write("people.csv", 'name,role\nAda,"Analyst\nBob,Dev\nCarl,Dev\n')
    factory = DatasetProfileFactory(source, on_error="collect")
    assert list(factory.create_profiles()) == []
    (issue,) = factory.errors
    assert (issue.row, issue.line) == (1, 2)
    assert "a quoted cell is never closed (lines 2-4 were read into it); add the closing quote" in str(issue)
    with pytest.raises(FactoryError, match=r"people.csv:1: the header row cannot be read: a quoted cell is never"):
        list(DatasetProfileFactory(write("people.csv", 'name,"role\nAda,x\n')).create_profiles())


def test_text_after_a_csv_cells_closing_quote_is_a_bad_row(write):
    """`"Ana"lyst` was read as the text Analyst; a quote inside an unquoted cell stays text."""
    source = write("people.csv", 'name,role\nAda,"Ana"lyst\nBob,"Dev, senior"\nCarl,5" screen\n')
    factory = DatasetProfileFactory(source, on_error="collect")
    assert [profile.get_role() for profile in factory.create_profiles()] == ["Dev, senior", '5" screen']
    (issue,) = factory.errors
    assert issue.row == 1 and "quote the whole cell, doubling any quote inside it" in str(issue)


def test_a_csv_cell_over_the_limit_says_what_to_do(write):
    source = write("people.csv", "name,role\nAda," + "x" * 200_000 + "\nBob,Dev\n")
    factory = DatasetProfileFactory(source, on_error="collect")
    assert [profile.get_name() for profile in factory.create_profiles()] == ["Bob"]
    (issue,) = factory.errors
    assert "a cell is longer than 131,072 characters" in str(issue) and "JSON lines (.jsonl)" in str(issue)


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"name": "Ada", "role": {"a": 1}}, "column 'role': holds a mapping, expected text; write the value itself"),
        ({"name": "Ada", "role": "R", "goal": {}}, "column 'goal': holds a mapping, expected text"),
        ({"name": "Ada", "role": "R", "constraints": {"a": 1}},
         "column 'constraints': holds a mapping, expected a list of texts, or a text split at line breaks"),
    ],
)
def test_a_mapping_cell_for_a_field_is_named_as_a_mapping(write, row, expected):
    """It was read as a dynamic field: 'unknown key(s) a in a dynamic field; allowed keys are default, key, …',
    advice a dataset cell cannot take (a cell holding one is refused as a lookup)."""
    factory = DatasetProfileFactory(write("people.jsonl", json.dumps(row) + "\n"), on_error="collect")
    assert list(factory.create_profiles()) == []
    (issue,) = factory.errors
    assert expected in str(issue) and "dynamic field" not in str(issue)
    variables = DatasetProfileFactory(
        write("vars.jsonl", json.dumps({"name": "Ada", "role": "R", "plan": {"tier": 2}}) + "\n"),
        {"name": "name", "role": "role", "variables.plan": "plan"},
    )
    (profile,) = variables.create_profiles()  # a variable may hold a mapping
    assert profile.bound["plan"] == {"tier": 2}


def test_a_json_lines_row_naming_a_key_twice_is_a_bad_row(write):
    """It was read as whichever came last: Ada became Eve without a word, where a YAML dataset refuses
    a duplicate key and a CSV header a repeated column."""
    source = write(
        "people.jsonl",
        '{"name": "Ada", "role": "R", "name": "Eve"}\n{"name": "Bo", "role": "R", "note": {"x": 1, "x": 2}}\n'
        '{"name": "Cy", "role": "R", "note": {"x": 1, "y": {"x": 2}}}\n',
    )
    factory = DatasetProfileFactory(source, on_error="collect")
    assert [profile.get_name() for profile in factory.create_profiles()] == ["Cy"]
    assert [(issue.row, issue.line, issue.message) for issue in factory.errors] == [
        (1, 1, "duplicate key 'name'; keep one of them"),
        (2, 2, "duplicate key 'x'; keep one of them"),
    ]
