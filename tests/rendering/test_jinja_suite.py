"""Jinja's own filter, core-tag, API and security tests, run against the sandbox, fail only as documented.

The tests (jinja_suite/tests, unmodified from the jinja2 3.1.6 sdist, under Jinja's BSD licence beside
them) run in a child pytest twice: against stock `ImmutableSandboxedEnvironment`, and against this
package's sandbox (jinja_suite/env_under_test.py). The second may fail only where the first does or
where `differences.EXPECTED_FAILURES` says, each failure for a difference README's table lists.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from .differences import BASELINE_FAILURES, DIFFERENCES, EXPECTED_FAILURES, readme_table

SUITE = Path(__file__).resolve().parent / "jinja_suite"


def _run(factory: str, tmp_path: Path) -> tuple[set[str], int]:
    """The ids of the tests that fail against `factory`, and how many ran."""
    report = tmp_path / f"{factory}.xml"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SUITE), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--env-factory", factory, f"--junitxml={report}", "-c", "pytest.ini"],
        cwd=SUITE,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert report.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    failed, ran = set(), 0
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        ran += 1
        if case.find("failure") is not None or case.find("error") is not None:
            module = case.get("classname", "").split(".")
            # junit names a test tests.test_api.TestUndefined + name; rebuild pytest's node id
            path = "/".join(module[:2]) + ".py"
            node = "::".join([path, *module[2:], case.get("name", "")])
            failed.add(node)
    return failed, ran


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("jinja-suite")
    return {factory: _run(factory, folder) for factory in ("immutable", "profiles")}


def test_stock_sandbox_fails_only_the_known_baseline(results):
    """Against Jinja's own immutable sandbox, only the tests every Jinja sandbox fails fail."""
    failed, ran = results["immutable"]
    assert ran >= 240
    assert failed == set(BASELINE_FAILURES)


def test_our_sandbox_fails_exactly_where_the_differences_say(results):
    """Nothing differs from stock Jinja that the differences table does not account for."""
    failed, ran = results["profiles"]
    assert ran == results["immutable"][1]
    unexpected = failed - set(BASELINE_FAILURES) - set(EXPECTED_FAILURES)
    passing = set(EXPECTED_FAILURES) - failed
    assert not unexpected, f"fail without a documented difference: {sorted(unexpected)}"
    assert not passing, f"documented as failing, but pass: {sorted(passing)}"


def test_every_expected_failure_names_a_difference():
    assert set(EXPECTED_FAILURES.values()) <= set(DIFFERENCES)


def test_readme_table_is_the_list_of_differences():
    """README's "Differences from stock Jinja" table is `differences.DIFFERENCES`, row for row."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Differences from stock Jinja", 1)[1].split("\n## ", 1)[0]
    assert readme_table() in section
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    rows = [line for line in rows if not line.startswith(("| behaviour", "| ---"))]
    assert len(rows) == len(DIFFERENCES)
