"""Which template serves a prompt: kind × model family × locale, user roots before bundled ones."""

from __future__ import annotations

import fnmatch
import uuid
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from profiles import ConfigError, ProfileConfig, UnknownModelWarning
from profiles.cli import cli
from profiles.loader import load_profile
from profiles.rendering.families import FamilyRule, FamilyRules, load_family_rules
from profiles.rendering.renderer import Renderer
from profiles.rendering.templates import bundled_root, candidate_names

PERSONA = dict(name="Aristotle", role="Summarizer", goal="Summarize the text.", constraints=["Be brief."])


def _unique(prefix: str) -> str:
    """A model name no other test has warned about: warnings come once per model name per process."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _persona(tmp_path: Path, roots: str = "[tpl]") -> Path:
    (tmp_path / "tpl").mkdir(parents=True, exist_ok=True)
    return _write(tmp_path / "p.yaml", f"name: Aristotle\nrole: Summarizer\ntemplate_roots: {roots}\n")


def test_search_order_is_locale_then_family():
    """For each locale in the chain, the family is tried before `default`."""
    assert candidate_names("system", "zh-TW", "granite") == (
        "granite/zh-TW/system.j2",
        "default/zh-TW/system.j2",
        "granite/zh/system.j2",
        "default/zh/system.j2",
        "granite/en/system.j2",
        "default/en/system.j2",
    )
    assert candidate_names("user", None) == ("default/en/user.j2",)


def test_granite_renders_a_different_system_prompt():
    """The same persona renders one system prompt for a Granite model and another for the default family."""
    config = ProfileConfig(**PERSONA)
    granite = config.create_profile(model="ibm-granite/granite-3.3-8b-instruct")
    default = config.create_profile(model="gpt-4o")
    assert granite.family == "granite" and default.family == "default"
    assert granite.template_for("system").name == "granite/en/system.j2"
    assert granite.format_system_prompt().startswith("You are Aristotle, acting as Summarizer.")
    assert default.format_system_prompt().startswith("You are Aristotle. Your role: Summarizer.")
    assert granite.format_system_prompt() != default.format_system_prompt()
    # kinds the family does not change fall back to default
    assert granite.template_for("user").name == "default/en/user.j2"


def test_granite_in_chinese_prefers_chinese_over_family():
    """A Granite model asked in Chinese gets default/zh before granite/en: language first."""
    profile = ProfileConfig(**PERSONA).create_profile(model="granite-3.3-2b", language="zh")
    assert profile.template_for("system").name == "default/zh/system.j2"
    assert profile.format_system_prompt().startswith("你是Aristotle。")


def test_zh_tw_falls_back_to_chinese():
    """zh-TW has no templates of its own, so the Chinese ones serve it."""
    profile = ProfileConfig(**PERSONA).create_profile(language="zh-TW")
    assert profile.template_for("system").name == "default/zh/system.j2"
    assert profile.format_system_prompt().startswith("你是Aristotle。")
    assert "请始终使用繁体中文回答。" in profile.format_system_prompt()


def test_no_language_means_english():
    """No language gives the English templates, never a Chinese default."""
    assert ProfileConfig(**PERSONA).create_profile().template_for("system").name == "default/en/system.j2"


def test_user_root_family_locale_wins(tmp_path):
    """A user's granite/zh template serves a Granite model in zh before any bundled one."""
    path = _persona(tmp_path)
    _write(tmp_path / "tpl" / "granite" / "zh" / "system.j2", "格兰特：{{ name }}")
    profile = load_profile(path).create_profile(model="granite-3.3-8b", language="zh-TW")
    assert profile.format_system_prompt() == "格兰特：Aristotle"


def test_user_root_default_overrides_bundled_default(tmp_path):
    """A user's default/en/system.j2 replaces the bundled one for default-family models."""
    path = _persona(tmp_path)
    _write(tmp_path / "tpl" / "default" / "en" / "system.j2", "Custom {{ name }}")
    assert load_profile(path).create_profile(model="gpt-4o").format_system_prompt() == "Custom Aristotle"


def test_persona_template_wins_over_selection():
    """A persona's own `templates:` entry wins over family and locale selection."""
    config = ProfileConfig(**PERSONA, templates={"system": {"inline": "Own {{ name }}"}})
    assert config.create_profile(model="granite-3.3", language="zh").format_system_prompt() == "Own Aristotle"


def test_unknown_model_warns_once_naming_it():
    """An unknown model warns once, naming the model, and renders with the default family."""
    model = _unique("mystery")
    config = ProfileConfig(**PERSONA)
    with pytest.warns(UnknownModelWarning, match=f"no template family matches model '{model}'"):
        profile = config.create_profile(model=model)
    assert profile.family == "default"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config.create_profile(model=model).format_system_prompt()


def test_family_rule_without_folder_warns(tmp_path):
    """A rule naming a family no root has a folder for warns and uses default."""
    path = _persona(tmp_path)
    _write(tmp_path / "tpl" / "families.yaml", "rules:\n  - match: 'acme-*'\n    family: acme\n")
    model = _unique("acme")
    with pytest.warns(
        UnknownModelWarning, match=f"model '{model}' matches family 'acme'.*no template root has"
    ):
        profile = load_profile(path).create_profile(model=model)
    assert profile.family == "default"


def test_user_rules_come_first(tmp_path):
    """A root's families.yaml is read before the bundled one: its granite-3.3 rule wins."""
    path = _persona(tmp_path)
    _write(tmp_path / "tpl" / "families.yaml", "rules:\n  - match: 'granite-3.3*'\n    family: granite33\n")
    _write(tmp_path / "tpl" / "granite33" / "en" / "system.j2", "G33 {{ name }}")
    config = load_profile(path)
    assert config.create_profile(model="Granite-3.3-8B").format_system_prompt() == "G33 Aristotle"
    older = config.create_profile(model="granite-3.1-8b")
    assert older.family == "granite" and older.template_for("system").name == "granite/en/system.j2"


def test_rules_are_case_insensitive_first_match():
    """Patterns match case-insensitively on the whole name; the first matching rule decides."""
    rules = FamilyRules(
        [FamilyRule("granite-3.3*", "g33"), FamilyRule("*granite*", "granite")], {"g33", "granite"}
    )
    assert rules.family_for("GRANITE-3.3-8b") == "g33"
    assert rules.family_for("ibm/Granite-3.0") == "granite"
    assert rules.family_for(None) == "default"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- match: x\n", "one key, 'rules'"),
        ("rules:\n  - match: x\n", "exactly 'match' and 'family'"),
        ("rules:\n  - match: x\n    family: Bad/Name\n", "must be a folder name"),
        ("rules:\n  - match: ''\n    family: a\n", "non-empty fnmatch pattern"),
    ],
)
def test_bad_rules_file_is_reported(tmp_path, text, message):
    """A malformed families.yaml is a ConfigError naming the file."""
    _write(tmp_path / "families.yaml", text)
    with pytest.raises(ConfigError, match=message) as info:
        load_family_rules([tmp_path])
    assert str(tmp_path / "families.yaml") in str(info.value)


def test_a_bad_rule_is_reported_at_its_line(tmp_path):
    """Errors in a families.yaml named the rule ('rules.1') but not the line it is written on."""
    _write(tmp_path / "families.yaml", (
        "rules:\n"
        "  - match: 'acme-*'\n"
        "    family: acme\n"
        "  - {match: '', family: x}\n"
        "  - match: 'b*'\n"
        "    family: Bad Name\n"
        "  - [1]\n"
        "  - {match: a, family: b, colour: red}\n"
    ))
    with pytest.raises(ConfigError) as info:
        load_family_rules([tmp_path])
    file = str(tmp_path / "families.yaml")
    assert [(issue.file, issue.line, issue.column, issue.field) for issue in info.value.issues] == [
        (file, 4, 13, "rules.1.match"), (file, 6, 13, "rules.2.family"),
        (file, 7, 5, "rules.3"), (file, 8, 5, "rules.4"),
    ]
    expected = f"{file}:8:5: field 'rules.4': each rule is a mapping with exactly 'match' and 'family' "
    expected += "(remove 'colour')"
    assert expected in str(info.value)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("rules:\n  - {match: a, family: b}\ncolour: red\n", ":3:1: field 'colour': unknown key 'colour'"),
        ("rules: 5\n", ":1:8: field 'rules': expected a mapping with one key, 'rules'"),
        ("rules:\n  - {match: a, family: b}\nrules:\n  - {match: c, family: d}\n",
         ":3:1: field 'rules': duplicate key 'rules' (first at line 1)"),
        ("rules:\n  - {match: a, family: b, family: c}\n", ":2:27: field 'rules.0.family': duplicate key 'family'"),
        ("rules: [\n", ":2:1: invalid YAML"),
    ],
)
def test_a_bad_rules_file_names_the_line_and_refuses_duplicate_keys(tmp_path, text, shown):
    """A second `rules:` silently replaced the first; a top-level problem had no line."""
    _write(tmp_path / "families.yaml", text)
    with pytest.raises(ConfigError) as info:
        load_family_rules([tmp_path])
    assert f"{tmp_path / 'families.yaml'}{shown}" in str(info.value)


def test_bundled_rules_know_common_models():
    """Common model names need no rule of the user's and do not warn."""
    rules = load_family_rules([bundled_root()])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for model in ("gpt-4o-mini", "o3-mini", "claude-3-5-sonnet", "meta-llama/Llama-3.1-8B", "qwen2.5-7b"):
            assert rules.family_for(model) == "default"


def test_selection_is_cached_without_filesystem_or_matching(monkeypatch):
    """After the first render, rendering again neither reads files nor matches model names."""
    renderer = Renderer([bundled_root()])
    family = renderer.family_for("granite-3.3-8b")
    first = renderer.find("system", "zh-TW", family)

    def forbidden(*args, **kwargs):
        raise AssertionError("selection was not cached")

    monkeypatch.setattr(renderer.env.loader, "get_source", forbidden)
    monkeypatch.setattr(fnmatch, "fnmatchcase", forbidden)
    monkeypatch.setattr(Path, "is_dir", forbidden)
    assert renderer.family_for("granite-3.3-8b") == "granite"
    assert renderer.find("system", "zh-TW", family) is first


def test_profile_render_touches_no_files(monkeypatch):
    """A created profile renders again and again without opening a template."""
    profile = ProfileConfig(**PERSONA).create_profile(model="granite-3.3-8b")
    expected = profile.format_system_prompt("q", resources=[{"content": "doc"}])
    monkeypatch.setattr(profile.renderer.env.loader, "get_source", lambda *a, **k: pytest.fail("file read"))
    assert profile.format_system_prompt("q", resources=[{"content": "doc"}]) == expected


@pytest.mark.parametrize(
    ("roots", "message"),
    [
        ("[../elsewhere]", "leads outside"),
        ("[/etc]", "must be relative to the persona's folder"),
        ("[missing]", "template root 'missing' is not a folder"),
        ("tpl", "expected a list of folders"),
    ],
)
def test_template_roots_are_confined(tmp_path, roots, message):
    """template_roots must be existing folders inside the persona's folder; errors cite file:line."""
    path = _persona(tmp_path, roots)
    with pytest.raises(ConfigError, match=message) as info:
        load_profile(path)
    assert f"{path}:3:" in str(info.value)


def test_env_template_path_is_searched_after_persona_roots(tmp_path, monkeypatch):
    """PROFILES_TEMPLATE_PATH roots serve templates; a persona's own roots come before them."""
    shared = tmp_path / "shared"
    _write(shared / "default" / "en" / "system.j2", "Shared {{ name }}")
    monkeypatch.setenv("PROFILES_TEMPLATE_PATH", str(shared))
    assert (
        load_profile(_persona(tmp_path / "a")).create_profile().format_system_prompt() == "Shared Aristotle"
    )
    _write(tmp_path / "b" / "tpl" / "default" / "en" / "system.j2", "Own root {{ name }}")
    assert (
        load_profile(_persona(tmp_path / "b")).create_profile().format_system_prompt() == "Own root Aristotle"
    )


def test_cli_model_picks_family(tmp_path):
    """`profiles render --model` renders the model family's system prompt."""
    path = _write(tmp_path / "a.yaml", "name: Aristotle\nrole: Summarizer\n")
    result = CliRunner().invoke(
        cli, ["render", str(path), "--kind", "system", "--model", "granite-3.3-8b-instruct"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("You are Aristotle, acting as Summarizer.")


def test_cli_unknown_model_warns(tmp_path):
    """The CLI shows an unknown model's warning as one line and still renders."""
    path = _write(tmp_path / "a.yaml", "name: Aristotle\nrole: Summarizer\n")
    model = _unique("cli-mystery")
    result = CliRunner().invoke(cli, ["render", str(path), "--kind", "system", "--model", model])
    assert result.exit_code == 0
    assert f"Warning: no template family matches model '{model}'" in result.output
    assert "You are Aristotle. Your role: Summarizer." in result.output
