#!/usr/bin/env bash
# Makes (or brings up to date) the virtual environment the Python module is built and tested
# with: build/python-venv, with nanobind (the binding library), scikit-build-core (pip install .),
# pytest, pandas and matplotlib (the API's DataFrames and the examples' plots) from PyPI.
# scripts/test.sh configures the build with its Python; prints the interpreter's path.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/python-venv
# Pinned, so that a test run does not change with a release: nanobind's stubgen output is what
# python/parasim/_core.pyi is checked against (python/tests/test_stubs.py).
packages=(nanobind==3.1.0 scikit-build-core==1.1.2 pytest==9.2.0 pandas==3.1.1 matplotlib==3.11.2)
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p build
  python3 -m venv "$venv" >&2
fi
if ! "$venv/bin/python" - "${packages[@]}" 2>/dev/null <<'PY'
import sys
from importlib.metadata import version
sys.exit(any(version(n) != v for n, v in (p.split("==") for p in sys.argv[1:])))
PY
then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${packages[@]}" >&2
fi
echo "$PWD/$venv/bin/python"
