"""Prompt kinds users add, rendering them by name, and replacing templates at run time."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from profiles import ConfigError, ProfileConfig, RenderError, TemplateNotFoundError
from profiles.cli import cli
from profiles.loader import load_profile

PLANNER = "Plan for {{ name }}: split {{ task }} into at most {{ max_steps }} steps."


def _persona(tmp_path: Path, extra: str = "", *, planner: str | None = PLANNER, locale: str = "en") -> Path:
    folder = tmp_path / "prompts" / "default" / locale
    folder.mkdir(parents=True)
    if planner is not None:
        (folder / "planner.j2").write_text(planner, encoding="utf-8")
    path = tmp_path / "planner.yaml"
    path.write_text(
        "name: Hypatia\nrole: Planner\ntemplate_roots: [prompts]\nvariables:\n  max_steps: 5\n" + extra,
        encoding="utf-8",
    )
    return path


def test_kind_from_user_root_renders(tmp_path):
    """A planner.j2 in the persona's template root renders with format_prompt and its variables."""
    profile = load_profile(_persona(tmp_path)).create_profile()
    assert (
        profile.format_prompt("planner", task="a trip")
        == "Plan for Hypatia: split a trip into at most 5 steps."
    )


def test_kind_in_user_root_falls_back_along_locales(tmp_path):
    """A kind written only in English serves a zh-TW profile too."""
    profile = load_profile(_persona(tmp_path)).create_profile(language="zh-TW")
    assert profile.template_for("planner").name == "default/en/planner.j2"


def test_kind_from_persona_templates(tmp_path):
    """A kind given inline under the persona's templates: renders without any root."""
    config = ProfileConfig(
        name="Ada", role="Critic", templates={"review": {"inline": "Review as {{ name }}."}}
    )
    profile = config.create_profile()
    assert profile.format_prompt("review") == "Review as Ada."
    assert "review" in profile.known_kinds()


def test_unknown_kind_lists_known_ones(tmp_path):
    """An unknown kind names every kind the profile knows: bundled, its roots', and its own."""
    config = load_profile(_persona(tmp_path, "templates:\n  review:\n    inline: x\n"))
    with pytest.raises(TemplateNotFoundError) as info:
        config.create_profile().format_prompt("plannr")
    message = str(info.value)
    assert "unknown prompt kind 'plannr'" in message
    assert "known kinds are planner, react, review, system, user, write_memory" in message
    assert "<family>/<locale>/plannr.j2" in message


def test_kinds_of_other_roots_are_not_known(tmp_path):
    """A persona without the root does not see its kinds: roots are per persona."""
    _persona(tmp_path)
    profile = ProfileConfig(name="a", role="b").create_profile()
    assert "planner" not in profile.known_kinds()


def test_env_template_path_adds_kinds(tmp_path, monkeypatch):
    """PROFILES_TEMPLATE_PATH folders are searched for kinds too."""
    folder = tmp_path / "shared" / "default" / "en"
    folder.mkdir(parents=True)
    (folder / "critic.j2").write_text("Critique as {{ role }}.", encoding="utf-8")
    monkeypatch.setenv("PROFILES_TEMPLATE_PATH", str(tmp_path / "nowhere-empty-part") + "_missing")
    with pytest.raises(Exception, match="PROFILES_TEMPLATE_PATH names"):
        ProfileConfig(name="a", role="Judge").create_profile()
    monkeypatch.setenv("PROFILES_TEMPLATE_PATH", str(tmp_path / "shared"))
    assert (
        ProfileConfig(name="a", role="Judge").create_profile().format_prompt("critic") == "Critique as Judge."
    )


def test_cli_renders_user_kind(tmp_path):
    """`profiles render --kind planner` renders a kind from the persona's template root."""
    result = CliRunner().invoke(
        cli, ["render", str(_persona(tmp_path)), "--kind", "planner", "--var", "task=x"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "Plan for Hypatia: split x into at most 5 steps."


def test_cli_unknown_kind_lists_known(tmp_path):
    """An unknown --kind exits 2 naming the kinds it could have been."""
    result = CliRunner().invoke(cli, ["render", str(_persona(tmp_path)), "--kind", "plannr"])
    assert result.exit_code == 2
    assert (
        "'plannr' is not a prompt kind; known kinds are planner, react, system, user, write_memory, all"
        in (result.output)
    )


def test_cli_renders_react_kind(tmp_path):
    """`--kind react` renders the bundled ReAct prompt with the persona's tools."""
    path = _persona(tmp_path, "tools:\n  - name: search\n    description: Search the web.\n", planner=None)
    result = CliRunner().invoke(cli, ["render", str(path), "--kind", "react", "-q", "Why?"])
    assert result.exit_code == 0, result.output
    assert "- search: Search the web." in result.output and "Question: Why?" in result.output


# -- with_templates ---------------------------------------------------------------------------------


def _profile():
    return ProfileConfig(
        name="Ada", role="Researcher", tools=[{"name": "search", "description": "Find."}]
    ).create_profile()


def test_with_templates_returns_new_profile():
    """with_templates gives a new profile; the original renders as before."""
    profile = _profile()
    before = profile.format_system_prompt()
    changed = profile.with_templates(system="I am {{ name }}.")
    assert changed.format_system_prompt() == "I am Ada."
    assert profile.format_system_prompt() == before
    assert changed is not profile


def test_with_templates_react_keeps_contract():
    """A replacement react template using tools and tool_names is accepted and used."""
    changed = _profile().with_templates(
        react="{% for t in tools %}{{ t.name }}={{ t.description }}{% endfor %}"
        " [{{ tool_names }}] {{ react.answer }}:"
    )
    assert changed.format_prompt("react") == "search=Find. [search] Answer:"


@pytest.mark.parametrize(
    ("template", "missing"),
    [
        ("Tools: {% for t in tools %}{{ t.name }}{% endfor %}", "does not use tool_names"),
        ("Use one of {{ tool_names }}.", "does not use tools;"),
        ("Nothing about tools.", "does not use tools, tool_names"),
    ],
)
def test_with_templates_react_missing_variable_is_named(template, missing):
    """A react replacement that drops the tool descriptions or names is refused, naming what is missing."""
    with pytest.raises(RenderError) as info:
        _profile().with_templates(react=template)
    assert missing in str(info.value)
    assert "{{ tool_names }}" in str(info.value) or "{{ tools }}" in str(info.value)


def test_persona_react_template_must_keep_contract(tmp_path):
    """A persona's own react template is held to the same contract when rendered."""
    config = ProfileConfig(
        name="Ada",
        role="R",
        tools=[{"name": "search", "description": "Find."}],
        templates={"react": {"inline": "Tools: {{ tools | length }}"}},
    )
    with pytest.raises(RenderError, match="does not use tool_names"):
        config.create_profile().format_prompt("react")


def test_with_templates_syntax_error_shows_at_once():
    """A replacement that does not parse fails in with_templates, not at the first render."""
    with pytest.raises(RenderError, match="line 1"):
        _profile().with_templates(user="{{ question ")


def test_with_templates_adds_a_kind():
    """with_templates can add a kind the profile did not have."""
    changed = _profile().with_templates(summary="Summarize as {{ name }}.")
    assert changed.format_prompt("summary") == "Summarize as Ada."


@pytest.mark.parametrize("kind", ["a b", "", "../etc", "1st", "x.y", "été", "k" * 65])
def test_a_templates_key_follows_the_rule_kind_names_follow(tmp_path, kind):
    """`kinds: [a b]` was refused as no name a template file can have, but `templates: {a b: …}` was
    taken, making a kind no root could hold and no `kinds:` entry could list."""
    path = tmp_path / "p.yaml"
    path.write_text(f"name: Ada\nrole: Planner\ntemplates:\n  {kind!r}: {{inline: Plan.}}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    (issue,) = caught.value.issues
    assert (issue.field, issue.line) == (f"templates.{kind}", 4)
    assert f"prompt kind {kind!r} is not a name a template file can have" in issue.message
    with pytest.raises(ConfigError, match="not a name a template file can have"):
        ProfileConfig(name="Ada", role="Planner", templates={kind: {"inline": "Plan."}})


def test_a_templates_key_a_kind_may_have_is_taken():
    config = ProfileConfig(name="Ada", role="Planner", kinds=["plan-b"],
                           templates={"plan-b": {"inline": "B."}, "_draft2": {"inline": "D."}})
    profile = config.create_profile()
    assert (profile.format_prompt("plan-b"), profile.format_prompt("_draft2")) == ("B.", "D.")
