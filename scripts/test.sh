#!/usr/bin/env bash
# Installs, builds and runs the whole test suite through CTest, JOBS tests at a time (default 2).
# GPU tests skip without a GPU. The Python API (python/) is built and tested with the virtual
# environment scripts/python-env.sh makes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
python=$(bash scripts/python-env.sh)
bash scripts/build.sh -DPython_EXECUTABLE="$python" "$@"
ctest --test-dir build --output-on-failure -j "${JOBS:-2}"
