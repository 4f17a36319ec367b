#!/usr/bin/env bash
# Makes (or brings up to date) the virtual environment the Python module is built and tested
# with: build/python-venv, with nanobind (the binding library), scikit-build-core (pip install .),
# pytest, pandas and matplotlib (the API's DataFrames and the examples' plots) from PyPI.
# scripts/test.sh configures the build with its Python; prints the interpreter's path.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/python-venv
packages=(nanobind scikit-build-core pytest pandas matplotlib)
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p build
  python3 -m venv "$venv" >&2
fi
if ! "$venv/bin/python" -c "import nanobind, scikit_build_core, pytest, pandas, matplotlib" 2>/dev/null; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${packages[@]}" >&2
fi
echo "$PWD/$venv/bin/python"
