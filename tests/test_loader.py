"""Loading persona YAML: safe parsing, positions in errors, several documents and folders."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from profiles import ConfigError, load_profile, load_profiles
from profiles.loader import parse_profiles
from profiles.safe_yaml import MAX_FILE_BYTES

BAD = """\
name: Aristotle
role: Summarizer
goal:
  - a
  - b
colour: blue
role: Other
"""


def test_examples_load(configs):
    loaded = load_profiles(configs)
    assert {"summarizer", "planner", "analyst_zh"} <= set(loaded)
    assert loaded["analyst_zh"].language == "zh"


def test_duplicate_wrong_type_and_unknown_field_reported_together(write):
    """All three problems come in one error, each with its line and column, in file order."""
    path = write("bad.yaml", BAD)
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    rendered = [(issue.line, issue.column, issue.field) for issue in caught.value.issues]
    assert rendered == [(4, 3, "goal"), (6, 1, "colour"), (7, 1, "role")]
    text = str(caught.value)
    assert f"{path}:4:3: field 'goal': expected text, got a list" in text
    assert "duplicate key 'role' (first at line 2)" in text
    assert f"{path}:6:1: field 'colour': unknown field" in text


def test_list_item_error_points_at_the_item(write):
    path = write("p.yaml", "name: n\nrole: r\nconstraints:\n  - fine\n  - 42\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    (issue,) = caught.value.issues
    assert (issue.line, issue.column, issue.field) == (5, 5, "constraints.1")


def test_missing_identity_has_a_line(write):
    path = write("p.yaml", "goal: g\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    assert {issue.field for issue in caught.value.issues} == {"name", "role"}
    assert all(issue.line == 1 for issue in caught.value.issues)


def test_unsafe_tags_are_refused(write):
    path = write("p.yaml", "name: !!python/object/apply:os.system ['echo hi']\nrole: r\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_profile(path)


def test_syntax_error_has_position(write):
    path = write("p.yaml", "name: [unclosed\nrole: r\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    assert caught.value.issues[0].line is not None
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty"),
        ("- a\n- b\n", "must be a mapping of fields .*, got a list"),
        ("just text\n", "got the text 'just text'"),
    ],
)
def test_wrong_shapes(write, text, message):
    with pytest.raises(ConfigError, match=message):
        load_profile(write("p.yaml", text))


def test_a_document_that_is_no_mapping_is_named_at_its_line_and_empty_ones_are_skipped(write):
    """A trailing `---` (an empty document) holds nothing to load; a list or a number is named where it is."""
    path = write("team.yaml", "---\nname: Ada\nrole: R\n---\nname: Grace\nrole: R\n---\n")
    assert [config.create_profile().get_name() for config in load_profiles(path).values()] == ["Ada", "Grace"]
    path.write_text("name: Ada\nrole: R\n---\n- x\n---\n5\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_profiles(path)
    assert [(issue.line, issue.column) for issue in caught.value.issues] == [(4, 1), (6, 1)]
    assert caught.value.issues[1].message.endswith("got the number 5")


def test_non_text_keys_are_refused(write):
    with pytest.raises(ConfigError, match="key 1 is not text"):
        load_profile(write("p.yaml", "name: n\nrole: r\n1: x\n"))


def test_missing_file_and_size_cap(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_profile(tmp_path / "nope.yaml")
    big = tmp_path / "big.yaml"
    big.write_text("name: " + "a" * (MAX_FILE_BYTES + 1))
    with pytest.raises(ConfigError, match="limit for a persona"):
        load_profile(big)


def test_bom_and_crlf_are_accepted(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_bytes("\ufeffname: Ada\r\nrole: Engineer\r\n".encode())
    assert load_profile(path).name == "Ada"


def test_not_utf8(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_bytes(b"name: \xff\xfe\nrole: r\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_profile(path)


def test_several_documents(write):
    path = write("team.yaml", "name: A\nrole: r\n---\nname: B\nrole: r\n")
    loaded = load_profiles(path)
    assert [config.name for config in loaded.values()] == ["A", "B"]
    assert list(loaded) == ["team", "team#2"]
    with pytest.raises(ConfigError, match="holds 2 personas"):
        load_profile(path)


def test_error_in_second_document_points_into_it(write):
    path = write("team.yaml", "name: A\nrole: r\n---\nname: B\nrole: [x]\n")
    with pytest.raises(ConfigError) as caught:
        load_profiles(path)
    assert caught.value.issues[0].line == 5


def test_folder_reports_every_file(tmp_path):
    (tmp_path / "a.yaml").write_text("name: A\n")
    (tmp_path / "b.yml").write_text("role: R\n")
    (tmp_path / "notes.txt").write_text("ignored")
    with pytest.raises(ConfigError) as caught:
        load_profiles(tmp_path)
    assert {issue.file.rsplit("/", 1)[-1] for issue in caught.value.issues} == {"a.yaml", "b.yml"}


def test_template_file_relative_to_persona(write):
    write("prompts/sys.j2", "I am {{ name }}.")
    path = write("p.yaml", "name: Ada\nrole: r\ntemplates:\n  system: {file: prompts/sys.j2}\n")
    profile = load_profile(path).create_profile()
    assert profile.format_system_prompt() == "I am Ada."


def test_missing_template_file(write):
    path = write("p.yaml", "name: Ada\nrole: r\ntemplates:\n  system: {file: nope.j2}\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    assert caught.value.issues[0].line == 4
    assert "template file 'nope.j2' not found" in str(caught.value)


def test_dynamic_mapping_in_yaml(write, monkeypatch):
    path = write("p.yaml", "name: {key: LOADER_NAME, default: Ada}\nrole: r\n")
    config = load_profile(path)
    assert config.create_profile().get_name() == "Ada"
    monkeypatch.setenv("LOADER_NAME", "Grace")
    assert config.create_profile().get_name() == "Grace"


def test_unknown_provider_in_yaml_has_a_line(write):
    path = write("p.yaml", "name: n\nrole: {key: R, provider: vault}\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    assert caught.value.issues[0].line == 2
    assert "unknown provider 'vault'" in str(caught.value)


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(name=_text, role=_text, goal=st.none() | _text, constraints=st.lists(_text, max_size=5))
def test_yaml_round_trip(name, role, goal, constraints):
    """Any persona dumped to YAML loads back with the same values."""
    data = {"name": name, "role": role, "constraints": constraints}
    if goal is not None:
        data["goal"] = goal
    (config,) = parse_profiles(yaml.safe_dump(data, allow_unicode=True))
    assert (config.name, config.role, config.goal) == (name, role, goal)
    assert list(config.constraints) == constraints


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_only_raises_config_error(text):
    """Whatever the file holds, loading either works or raises ConfigError."""
    try:
        parse_profiles(text)
    except ConfigError:
        pass


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_text, children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_text, _values, max_size=6))
def test_documents_match_the_safe_loader(data):
    """The loader's own construction of text, lists and mappings gives what yaml.safe_load gives."""
    from profiles.safe_yaml import read_documents as _documents

    text = yaml.safe_dump(data, allow_unicode=True)
    documents, issues, _ = _documents(text, "p.yaml")
    if issues:  # keys that differ only in look-alike letters (`´` folds to ` ́`) are refused on purpose
        assert all("duplicate key" in issue.message for issue in issues)
        return
    assert documents == [yaml.safe_load(text)]


def test_anchors_merge_keys_and_tags_load_as_yaml_says():
    from profiles.safe_yaml import read_documents as _documents

    text = (
        "base: &base {a: 1, b: [x, y]}\n"
        "copy: *base\n"
        "merged:\n  <<: *base\n  b: z\n"
        "when: 2024-01-02\n"
        "empty:\n"
        "set: !!set {p: null}\n"
    )
    (document,), issues, _ = _documents(text, "p.yaml")
    assert document == yaml.safe_load(text) and not issues
    assert document["copy"] is document["base"]


def test_two_merge_keys_in_one_mapping_are_refused(write):
    """A second `<<` in one mapping was accepted silently, the one merge YAML allows losing to it."""
    path = write("p.yaml", "name: Ada\nrole: Reviewer\nvariables:\n  <<: {tone: calm}\n  <<: {tone: loud}\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    (issue,) = caught.value.issues
    assert (issue.line, issue.column, issue.field) == (5, 3, "variables.<<")
    assert "second merge key '<<' in one mapping (first at line 4)" in issue.message
    assert "<<: [*first, *second]" in issue.message
    one = write("q.yaml", "name: Ada\nrole: Reviewer\nvariables:\n  <<: [{tone: calm}, {pace: slow}]\n")
    assert load_profile(one).variables == {"tone": "calm", "pace": "slow"}


@pytest.mark.parametrize(("text", "field"), [
    ("variables:\n  a: 1\n  a: 2\n", "variables.a"),
    ("tools:\n- name: t\n  name: u\n", "tools.0.name"),
    ("deployments:\n  prod:\n    goal: g\n    goal: h\n", "deployments.prod.goal"),
])
def test_a_nested_duplicate_key_names_its_whole_path(write, text, field):
    """A duplicate key inside `variables:` was reported as field 'a', as if it were a persona field."""
    path = write("p.yaml", "name: Ada\nrole: Reviewer\n" + text)
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    assert any(issue.field == field and "duplicate key" in issue.message for issue in caught.value.issues)
    assert f"field '{field}': duplicate key" in str(caught.value)


def test_a_name_two_personas_share_says_how_to_pick_one(write):
    path = write("team.yaml", "name: Ada\nrole: Reviewer\n---\nname: Ada\nrole: Writer\n")
    with pytest.raises(ConfigError, match=r"holds 2 personas named 'Ada'; .*pick one by number instead \(--index N"):
        load_profile(path, name="Ada")
    assert load_profile(path, index=2).role == "Writer"


@settings(max_examples=60, deadline=None)
@given(
    before=st.text(max_size=40),
    surrogate=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    after=st.text(max_size=40),
)
def test_a_lone_surrogate_is_a_config_error_at_its_line(before, surrogate, after):
    """Text decoded with surrogateescape (or a JSON "\\ud800") holds a character libyaml cannot take."""
    text = f"name: Ada\nrole: Guide\ngoal: {before}{surrogate}{after}\n"
    position = text.index(surrogate)
    with pytest.raises(ConfigError, match="lone surrogate") as caught:
        parse_profiles(text, file="odd.yaml")
    (issue,) = caught.value.issues
    assert (issue.file, issue.line) == ("odd.yaml", text.count("\n", 0, position) + 1)
    assert issue.column == position - text.rfind("\n", 0, position)


def test_a_lone_surrogate_in_another_yaml_file_is_a_yaml_error():
    from profiles.safe_yaml import safe_load

    with pytest.raises(yaml.YAMLError, match=r"U\+DC80 is half of a UTF-16 pair"):
        safe_load("match: gpt-\udc80\nfamily: odd\n")


@pytest.mark.parametrize(
    ("text", "problem", "line"),
    [
        ("a: 1\nb: 2\na: 3\n", "duplicate key 'a' (first at line 1); keep one of them", 3),
        ("x:\n  y: 1\n  'y': 2\n", "duplicate key 'y' (first at line 2); keep one of them", 3),
        ("a: &a {p: 1}\nb: &b {q: 1}\nc:\n  <<: *a\n  <<: *b\n", "merge several mappings with one key", 5),
    ],
)
def test_another_yaml_file_refuses_a_duplicate_key_at_its_line(text, problem, line):
    """Mapping, store and conversation files are read as persona files are: PyYAML keeps the last silently."""
    from profiles.safe_yaml import safe_load

    with pytest.raises(yaml.MarkedYAMLError) as caught:
        safe_load(text)
    assert problem in caught.value.problem and caught.value.problem_mark.line + 1 == line


def test_keys_of_different_types_are_no_duplicates():
    from profiles.safe_yaml import safe_load

    assert safe_load("1: x\n'1': y\n") == {1: "x", "1": "y"}


def test_a_device_is_read_no_further_than_the_limit():
    """A device has no size to check first: /dev/zero was read until memory ran out."""
    with pytest.raises(ConfigError) as caught:
        load_profile("/dev/zero")
    assert str(caught.value) == "/dev/zero: file holds over 2000000 bytes, the limit for a persona"


def test_a_persona_can_come_through_a_pipe(tmp_path):
    """`profiles render <(envsubst < persona.yaml)` reads a pipe, which has no size either."""
    result = subprocess.run(
        [sys.executable, "-m", "profiles", "render", "/dev/stdin", "--kind", "system"],
        input="name: Ada\nrole: Guide\n", capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )
    assert result.returncode == 0 and result.stdout.startswith("You are Ada. Your role: Guide."), result.stderr
