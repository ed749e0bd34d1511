#!/usr/bin/env bash
# Every test of the project: the Rust workspace, then the Python package's tests
# (pytest) against the package built from this checkout, in a virtual environment
# under target/ with what the tests need from PyPI (numpy, pytest, gymnasium, ray).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== Rust tests"
cargo test --workspace --release

echo "== Python tests"
VENV=target/python-venv
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check numpy pytest gymnasium ray
# The install command docs/python.md gives users.
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check ./crates/axion-py
"$VENV/bin/python" -m pytest -q crates/axion-py/tests
