"""`.ci/services/chromium.sh`, sourced by `.ci/run` the way CI does, finds a working browser or fails."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import REPO

SCRIPT = REPO / ".ci" / "services" / "chromium.sh"


def _source(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    body = (
        f'set -euo pipefail; source "{SCRIPT}"; '
        'echo "found=$PROFILES_TEST_CHROMIUM"; echo "args=$PROFILES_TEST_CHROMIUM_ARGS"'
    )
    return subprocess.run(["bash", "-c", body], capture_output=True, text=True, env=env, timeout=120)


def test_sourcing_exports_a_working_chromium(chromium_path):
    result = _source({"PATH": "/usr/bin:/bin", "HOME": "/tmp", "PROFILES_TEST_CHROMIUM": chromium_path})
    assert result.returncode == 0, result.stderr
    assert f"found={chromium_path}" in result.stdout and "--disable-quic" in result.stdout
    assert "[chromium.sh]" in result.stderr


def test_a_broken_browser_fails_the_run_with_its_output(chromium_path):
    """A binary that cannot render headless stops CI with a message, instead of failing tests later."""
    false = shutil.which("false")
    result = _source({"PATH": "/usr/bin:/bin", "HOME": "/tmp", "PROFILES_TEST_CHROMIUM": false})
    assert result.returncode == 1
    assert "did not render a page headless" in result.stderr and "found=" not in result.stdout


@pytest.mark.skipif(not shutil.which("shellcheck"), reason="shellcheck is not installed")
def test_the_script_passes_shellcheck():
    result = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
