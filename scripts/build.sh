#!/usr/bin/env bash
# Configures and builds parasim (Release) into ./build. Extra arguments go to CMake's configure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build
