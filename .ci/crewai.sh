#!/usr/bin/env bash
# CI: CrewAI loads and runs the files `profiles export --to crewai` writes, in an environment of
# its own: CrewAI needs openai<3 and an OpenTelemetry that google-adk (in the test extra) refuses.
set -euo pipefail
cd "$(dirname "$0")/.."

export PIP_DISABLE_PIP_VERSION_CHECK=1
rm -rf .venv-crewai
python3 -m venv .venv-crewai
.venv-crewai/bin/pip install -q -e . "crewai>=1.15" "pytest>=8"
.venv-crewai/bin/python -m pytest -m crewai tests/interop/test_crewai_library.py
