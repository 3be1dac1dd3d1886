"""Templates, includes, parents and .env files come only from their folders; no symlink leads out."""

from __future__ import annotations

import os

import pytest

from profiles.errors import ConfigError, ProfilesError, RenderError, ResolutionError
from profiles.loader import load_profile
from profiles.rendering.loader import ConfinedLoader
from profiles.rendering.renderer import Renderer

SECRET = "TOP-SECRET-OUTSIDE-CONTENT"


@pytest.fixture
def outside(tmp_path):
    """A file outside the persona's folder, holding text that must never show."""
    folder = tmp_path / "outside"
    folder.mkdir()
    path = folder / "secret.j2"
    path.write_text(SECRET)
    return path


@pytest.fixture
def persona_dir(tmp_path):
    folder = tmp_path / "personas"
    (folder / "templates" / "default" / "en").mkdir(parents=True)
    return folder


def _persona(folder, extra=""):
    path = folder / "p.yaml"
    path.write_text("name: Ada\nrole: Analyst\n" + extra)
    return path


@pytest.mark.parametrize(
    "include",
    [
        "{% include '../outside/secret.j2' %}",
        "{% include '../../outside/secret.j2' %}",
        "{% include 'x/../../outside/secret.j2' %}",
        "{% include '/etc/passwd' %}",
        "{% include 'C:/Windows/win.ini' %}",
        "{% include '..\\\\outside\\\\secret.j2' %}",
        "{% extends '../outside/secret.j2' %}",
        "{% import '../outside/secret.j2' as m %}",
        "{% from '../outside/secret.j2' import x %}",
        "{% include 'link.j2' %}",
        "{% include 'linkdir/secret.j2' %}",
    ],
)
def test_templates_cannot_reach_outside_their_root(persona_dir, outside, include):
    """Include, extends and import stay in the template root, whatever the name or symlink."""
    root = persona_dir / "templates"
    os.symlink(outside, root / "link.j2")
    os.symlink(outside.parent, root / "linkdir")
    renderer = Renderer([root])
    with pytest.raises(ProfilesError) as caught:
        renderer.render(renderer.compile(include, "t"), {})
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize("name", ["../outside/secret.j2", ".env", "/etc/passwd", "parts/.hidden"])
def test_a_refused_include_is_named_at_the_line_that_includes_it(persona_dir, name):
    """The loader refuses the name; the error says which template and line asked for it, also through a part."""
    root = persona_dir / "templates"
    (root / "parts").mkdir()
    (root / "parts" / "ask.j2").write_text(f"Ask.\n\n{{% include '{name}' %}}\n")
    renderer = Renderer([root])
    with pytest.raises(RenderError) as caught:
        renderer.render(renderer.compile("Hello\n{% include 'parts/ask.j2' %}", "t"), {})
    assert (caught.value.template, caught.value.line) == ("parts/ask.j2", 3)
    assert str(caught.value).startswith("template 'parts/ask.j2' line 3 (from template 't'): template name ")
    with pytest.raises(RenderError) as direct:
        renderer.render(renderer.compile(f"Hello\n{{% include '{name}' %}}", "t"), {})
    assert (direct.value.template, direct.value.line) == ("t", 2)


def test_a_symlinked_template_in_a_user_root_is_refused(persona_dir, outside):
    """A persona's template root whose system.j2 links outside gives a RenderError, not the file."""
    os.symlink(outside, persona_dir / "templates" / "default" / "en" / "system.j2")
    profile = load_profile(_persona(persona_dir, "template_roots: [templates]\n")).create_profile()
    with pytest.raises(RenderError, match="outside its folder") as caught:
        profile.format_system_prompt()
    assert SECRET not in str(caught.value)


def test_a_symlink_inside_the_root_is_fine(persona_dir):
    root = persona_dir / "templates"
    (root / "real.j2").write_text("inside")
    os.symlink(root / "real.j2", root / "alias.j2")
    renderer = Renderer([root])
    assert renderer.render(renderer.compile("{% include 'alias.j2' %}", "t"), {}) == "inside"


def test_confined_loader_refuses_odd_names(tmp_path):
    loader = ConfinedLoader([tmp_path])
    for name in ("", "a\x00b", "/abs.j2", "..", "a/../../b.j2"):
        with pytest.raises(RenderError):
            loader.get_source(None, name)


@pytest.mark.parametrize(
    "ref",
    ["../outside/p.yaml", "/etc/passwd", "sub/../../outside/p.yaml", "link.yaml"],
)
def test_extends_stays_in_the_persona_folder(persona_dir, outside, ref):
    (outside.parent / "p.yaml").write_text(f"name: {SECRET}\nrole: x\n")
    os.symlink(outside.parent / "p.yaml", persona_dir / "link.yaml")
    with pytest.raises(ConfigError) as caught:
        load_profile(_persona(persona_dir, f"extends: {ref}\n"))
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize("file", ["/etc/passwd", "../outside/secret.j2", "link.j2"])
def test_template_files_stay_in_the_persona_folder(persona_dir, outside, file):
    os.symlink(outside, persona_dir / "link.j2")
    with pytest.raises(ConfigError) as caught:
        load_profile(_persona(persona_dir, f"templates: {{system: {{file: '{file}'}}}}\n"))
    assert SECRET not in str(caught.value)


def test_template_roots_stay_in_the_persona_folder(persona_dir, outside):
    os.symlink(outside.parent, persona_dir / "linked")
    for root in ("../outside", "/tmp", "linked"):
        with pytest.raises(ConfigError):
            load_profile(_persona(persona_dir, f"template_roots: ['{root}']\n"))


def test_a_dotenv_symlink_leading_out_is_refused(persona_dir, outside, monkeypatch):
    (outside.parent / ".env").write_text(f"PERSONA_NAME={SECRET}\n")
    os.symlink(outside.parent / ".env", persona_dir / ".env")
    monkeypatch.chdir(persona_dir.parent)
    path = _persona(persona_dir, "goal: {key: PERSONA_NAME, provider: env, default: none}\n")
    with pytest.raises(ResolutionError, match="symlink leading outside") as caught:
        load_profile(path).create_profile()
    assert SECRET not in str(caught.value)


def test_dotenv_does_not_expand_process_variables(persona_dir, monkeypatch):
    """`${VAR}` in a .env file never pulls a value from the process environment."""
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.chdir(persona_dir.parent)
    (persona_dir / ".env").write_text("PERSONA_GOAL=leak ${AWS_SECRET_ACCESS_KEY}\n")
    path = _persona(persona_dir, "goal: {key: PERSONA_GOAL, provider: env, default: none}\n")
    try:
        prompt = load_profile(path).create_profile().format_system_prompt()
    except ProfilesError as exc:
        prompt = str(exc)
    assert SECRET not in prompt


def test_hidden_files_are_never_templates(tmp_path):
    """A `.env` beside the templates cannot be included, extended or named as a persona's template file."""
    from profiles import ConfigError, RenderError, load_profile
    from profiles.rendering.renderer import Renderer

    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-live-123\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[remote]\n")
    renderer = Renderer([tmp_path])
    for name in (".env", ".git/config", "./.env"):
        with pytest.raises(RenderError, match="hidden file"):
            renderer.render(renderer.compile(f"{{% include {name!r} %}}", "t"), {})
    assert ConfinedLoader([tmp_path]).list_templates() == []
    persona = tmp_path / "p.yaml"
    persona.write_text("name: A\nrole: B\ntemplates:\n  system: {file: .env}\n")
    with pytest.raises(ConfigError, match="hidden file") as caught:
        load_profile(persona)
    assert "sk-live-123" not in str(caught.value)


@pytest.mark.parametrize(
    ("extra", "field", "what"),
    [
        ('extends: "base.yaml\\0x"', "extends", "'base.yaml\\x00x' holds a NUL character"),
        ('templates: {system: {file: "a\\0b.j2"}}', "templates", "template path 'a\\x00b.j2' holds a NUL"),
        ('template_roots: ["a\\0b"]', "template_roots", "template path 'a\\x00b' holds a NUL"),
        ('output_schema: {file: "a\\0b.json"}', "output_schema", "output schema path 'a\\x00b.json' holds a NUL"),
    ],
)
def test_a_path_holding_nul_is_a_problem_at_its_line(persona_dir, extra, field, what):
    """The system refuses such a path with a ValueError, which reached users as an internal error."""
    (persona_dir / "base.yaml").write_text("goal: g\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(_persona(persona_dir, extra + "\n"))
    (issue,) = caught.value.issues
    assert (issue.line, issue.field) == (3, field) and what in issue.message and "Value error" not in str(issue)


def test_a_dotenv_symlink_to_a_file_further_down_its_folder_is_read(persona_dir, outside, monkeypatch):
    """`.env -> config/dev.env` stays inside the folder; it was refused as "leading outside its folder"."""
    (persona_dir / "config").mkdir()
    (persona_dir / "config" / "dev.env").write_text("PERSONA_NAME=Inside\n")
    os.symlink(persona_dir / "config" / "dev.env", persona_dir / ".env")
    os.symlink(outside.parent, persona_dir / "linked")  # a linked folder leading out is still refused
    os.symlink(persona_dir / "linked" / "secret.j2", persona_dir / ".env.prod")
    monkeypatch.chdir(persona_dir.parent)
    monkeypatch.delenv("PERSONA_NAME", raising=False)
    config = load_profile(_persona(persona_dir, "goal: {key: PERSONA_NAME, provider: env, default: none}\n"))
    assert config.create_profile().get_goal() == "Inside"
    with pytest.raises(ResolutionError, match="symlink leading outside"):
        config.create_profile(deployment="prod")


@pytest.mark.parametrize("field", ["templates: {system: {file: pipe.j2}}", "output_schema: {file: pipe.j2}"])
def test_a_named_pipe_named_as_a_file_is_refused_not_waited_on(persona_dir, field):
    """Reading a pipe nobody writes to waited for ever: a persona folder unpacked from an archive may hold one."""
    os.mkfifo(persona_dir / "pipe.j2")
    with pytest.raises(ConfigError, match="'pipe.j2' is not a regular file .*; name a file that holds it"):
        load_profile(_persona(persona_dir, field + "\n"))
