"""The built wheel carries the bundled templates and renders from an installed copy.

The wheel is installed into a fresh virtual environment outside the repository; its
dependencies are borrowed from the running environment through a path file, so the test needs
no network beyond building the wheel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"), str(REPO)],
        check=True,
        timeout=600,
    )
    (wheel,) = (work / "dist").glob("agent_profiles-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
        check=True,
        timeout=300,
    )
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # dependencies (pydantic, jinja2, …) come from this environment, after the venv's own packages
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return wheel, venv, work


def test_wheel_contains_templates(installed):
    wheel, _, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    assert "profiles/_bundled_templates/default/en/system.j2" in names
    assert "profiles/_bundled_templates/default/zh/user.j2" in names
    assert "profiles/py.typed" in names


def test_wheel_carries_the_studio_pages_and_files(installed):
    """`profiles serve` renders its pages from the package and serves its files from it: no network."""
    wheel, _, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for page in ("base.html", "persona.html", "label_review.html", "docs.html"):
        assert f"profiles/serve/pages/{page}" in names
    for asset in ("studio.css", "studio.js", "swagger-init.js", "favicon.svg", "docs.css"):
        assert f"profiles/serve/static/{asset}" in names


def test_installed_copy_renders_outside_the_repository(installed):
    _, venv, work = installed
    persona = work / "persona.yaml"
    persona.write_text("name: Ada\nrole: Reviewer\nlanguage: zh\nconstraints: [Be kind.]\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import profiles.rendering.templates as t; print(t.bundled_root())"],
        capture_output=True,
        text=True,
        check=True,
        cwd=work,
        env=env,
    ).stdout.strip()
    assert where.startswith(str(venv)) and where.endswith("_bundled_templates")
    result = subprocess.run(
        [str(venv / "bin" / "profiles"), "render", str(persona), "--question", "好吗？", "--json"],
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    prompts = json.loads(result.stdout)
    assert prompts["system"].startswith("你是Ada。") and "1. Be kind." in prompts["system"]
    assert prompts["user"] == "问题：好吗？"
