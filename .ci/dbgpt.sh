#!/usr/bin/env bash
# CI: the DB-GPT adapter's tests, in an environment of their own. DB-GPT pins aiohttp==3.8.4,
# which llama-index-core (in the test extra) refuses, so it cannot share the main test venv.
set -euo pipefail
cd "$(dirname "$0")/.."

export PIP_DISABLE_PIP_VERSION_CHECK=1
rm -rf .venv-dbgpt
python3 -m venv .venv-dbgpt
.venv-dbgpt/bin/pip install -q -e ".[dbgpt]" "pytest>=8"
.venv-dbgpt/bin/python -m pytest -m dbgpt tests/adapters/test_dbgpt.py
