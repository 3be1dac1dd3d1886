#!/usr/bin/env bash
# CI: the Ray engine's tests, in a virtual environment of their own with the `ray` extra.
# Ray is large (a few hundred MB installed), so the main test environment, which installs exactly
# ".[test]", leaves it out and skips these tests; this step runs them on a local Ray that the
# tests start themselves (ray.init(num_cpus=2)).
set -euo pipefail
cd "$(dirname "$0")/.."

export PIP_DISABLE_PIP_VERSION_CHECK=1
rm -rf .venv-ray
python3 -m venv .venv-ray
.venv-ray/bin/pip install -q -e ".[test,ray]"
.venv-ray/bin/python -m pytest -q -m ray tests/test_batch_ray.py
rm -rf .venv-ray
