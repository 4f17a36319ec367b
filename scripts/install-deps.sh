#!/usr/bin/env bash
# Installs the Debian 12 packages parasim builds with (skips the install when all are present).
# CUDA is optional: with nvcc on PATH the CUDA kernels are built too (PARASIM_CUDA=AUTO).
set -euo pipefail
packages=(g++ cmake ninja-build libboost-graph-dev libeigen3-dev nlohmann-json3-dev libcli11-dev
          libfmt-dev doctest-dev libopenmpi-dev openmpi-bin python3 python3-dev python3-venv
          zlib1g-dev libsqlite3-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
