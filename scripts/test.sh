#!/usr/bin/env bash
# Installs, builds and runs the whole test suite through CTest. GPU tests skip without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh "$@"
ctest --test-dir build --output-on-failure
