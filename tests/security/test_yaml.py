"""Hostile persona YAML ends in a ConfigError with file and line, quickly; never a raw Python error."""

from __future__ import annotations

import pytest
import yaml

from profiles.errors import ConfigError
from profiles.loader import load_profile, parse_profiles
from profiles.safe_yaml import MAX_FILE_BYTES, MAX_YAML_DEPTH

BASE = "name: Ada\nrole: Analyst\n"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("goal", "goal\u200b"),  # zero-width space
        ("goal", "goal\u200d"),  # zero-width joiner
        ("goal", "\ufeffgoal"),  # byte order mark
        ("goal", "go\u00adal"),  # soft hyphen
        ("goal", "goal\u2028"),  # line separator
        ("goal", "goal\u0085"),  # next line
        ("goal", "ｇｏａｌ"),  # fullwidth: NFKC-equal
        ("ﬁeld", "field"),  # ligature: NFKC-equal
    ],
)
def test_look_alike_duplicate_keys_are_refused(first, second):
    """Keys that differ only by invisible characters, line breaks or NFKC folding are duplicates."""
    text = BASE + f'"{first}": one\n"{_escaped(second)}": two\n'
    with pytest.raises(ConfigError, match="duplicate key") as caught:
        parse_profiles(text, file="p.yaml")
    issue = next(issue for issue in caught.value.issues if "duplicate" in issue.message)
    assert issue.line == 4
    assert "hidden or look-alike" in issue.message


def _escaped(key: str) -> str:
    return "".join(char if char.isascii() and char.isprintable() else f"\\u{ord(char):04x}" for char in key)


def test_plain_duplicate_keys_are_refused():
    with pytest.raises(ConfigError, match=r"p.yaml:3:1: .*duplicate key 'name' \(first at line 1\)"):
        parse_profiles(BASE + "name: Bob\n", file="p.yaml")


def test_alias_bomb_is_refused_fast():
    """A billion-laughs document is refused while loading, before anything stringifies it."""
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    with pytest.raises(ConfigError, match="expands to over") as caught:
        parse_profiles(BASE + "\n".join(lines) + "\n", file="bomb.yaml")
    assert caught.value.issues[0].line is not None


def test_recursive_alias_is_refused():
    with pytest.raises(ConfigError, match="nested over"):
        parse_profiles(BASE + "variables: &v {self: *v}\n", file="p.yaml")


@pytest.mark.parametrize("depth", [MAX_YAML_DEPTH + 1, 999, 100_000])
def test_deep_nesting_is_a_config_error_with_a_line(depth):
    """Deep nesting is a ConfigError with a line, never a RecursionError."""
    text = BASE + "variables:\n  v: " + "[" * depth + "]" * depth + "\n"
    with pytest.raises(ConfigError, match="nest") as caught:
        parse_profiles(text, file="deep.yaml")
    assert caught.value.issues[0].line == 4


def test_non_text_keys_are_refused():
    with pytest.raises(ConfigError, match="not text"):
        parse_profiles(BASE + "variables: {1: a}\n", file="p.yaml")
    with pytest.raises(ConfigError):
        parse_profiles(BASE + "? [a, b]\n: c\n", file="p.yaml")


def test_bom_and_crlf_are_accepted(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_bytes(b"\xef\xbb\xbfname: Ada\r\nrole: Analyst\r\ngoal: Count\r\n")
    config = load_profile(path)
    assert config.create_profile().get_goal() == "Count"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"# only a comment\n", "empty"),
        (b"- name: Ada\n- role: x\n", "mapping of fields .*, got a list"),
        (b"just text\n", "mapping of fields"),
        (b"name: [1, 2]\nrole: x\n", "name"),
        (b"name: Ada\nrole: {a: b}\n", "role"),
        (b"name: Ada\nrole: x\nconstraints: 3\n", "constraints"),
        (b"name: Ada\nrole: x\nvariables: [a]\n", "variables"),
        (b"name: Ada\nrole: x\nsamples: [a]\n", "samples"),
        (b"name: Ada\nrole: x\ntemplates: {system: {file: /etc/passwd}}\n", "relative"),
        (b"name: Ada\nrole: x\ntemplates: {system: {file: ../x.j2}}\n", "leads outside"),
        (b"name: Ada\nrole: [\n", "invalid YAML"),
        (b"name: Ada\nrole: x\n\tgoal: y\n", "invalid YAML"),
        (b"\xff\xfe\x00n\x00a", "UTF-8"),
        (b"name: !!python/object/apply:os.system ['echo hi']\nrole: x\n", "invalid YAML.*remove the tag"),
        (b"--- \nname: a\nrole: b\n--- \n- 1\n", "got a list"),
    ],
)
def test_malformed_files_are_config_errors(tmp_path, content, message):
    path = tmp_path / "p.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=message) as caught:
        load_profile(path)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(("content", "where", "escape"), [
    (b"name: A\x00\nrole: x\n", (1, 8), "\\x00"),
    (b"name: Ada\nrole: x\ngoal: 'a\x01b'\n", (3, 9), "\\x01"),
    (b"\xef\xbb\xbfname: Ada\nrole: \xef\xbf\xbe\n", (2, 7), "\\ufffe"),
])  # fmt: skip
def test_a_character_yaml_refuses_is_named_at_its_line_and_column(tmp_path, content, where, escape):
    """PyYAML reports a NUL or other control character by offset only; the error gives line and column."""
    path = tmp_path / "p.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    (issue,) = caught.value.issues
    assert (issue.line, issue.column) == where
    assert "is not allowed in a YAML file" in issue.message and f'("{escape}")' in issue.message
    assert "position" not in str(caught.value)


def test_a_ten_megabyte_file_is_refused_unread(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("name: Ada\nrole: x\ngoal: " + "a" * 10_000_000 + "\n")
    with pytest.raises(ConfigError, match=f"{MAX_FILE_BYTES}-byte limit"):
        load_profile(path)


def test_a_huge_value_is_not_echoed():
    """A long wrong value shows cut in the message, which stays bounded."""
    text = BASE + "constraints: {" + ", ".join(f"k{i}: {'v' * 50}" for i in range(20_000)) + "}\n"
    with pytest.raises(ConfigError) as caught:
        parse_profiles(text, file="p.yaml")
    assert len(str(caught.value)) <= 4000


def test_unicode_names_load():
    config = parse_profiles("name: 阿达 👩‍💻\nrole: Анали́тик\ngoal: ﬁnd\n", file="p.yaml")[0]
    profile = config.create_profile()
    assert profile.get_name() == "阿达 👩‍💻"
    assert "阿达" in profile.format_system_prompt()


def test_other_yaml_files_are_bounded_too():
    """Family rules, mapping and store files load through the same bounds, as YAML errors."""
    from profiles.safe_yaml import safe_load

    assert safe_load("a: [1, 2]\n") == {"a": [1, 2]}
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    for text in ("\n".join(lines), "a: " + "[" * 500 + "]" * 500):
        with pytest.raises(yaml.YAMLError):
            safe_load(text)


def test_family_rules_with_deep_nesting_are_a_config_error(tmp_path):
    from profiles.rendering.families import load_family_rules

    (tmp_path / "families.yaml").write_text("rules: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ConfigError, match="families.yaml"):
        load_family_rules([tmp_path])
