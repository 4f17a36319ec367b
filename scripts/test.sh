#!/usr/bin/env bash
# Installs, builds and runs the whole test suite through CTest, JOBS tests at a time (default 2).
# GPU tests skip without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh "$@"
ctest --test-dir build --output-on-failure -j "${JOBS:-2}"
