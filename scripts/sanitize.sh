#!/usr/bin/env bash
# Builds parasim with clang and runs the whole test suite, twice over:
#   clang  ./build-clang  clang++ Release, everything the default build has (CUDA AUTO: the .cu
#                         files go through nvcc and its default host compiler, the rest through
#                         clang++), then ctest.
#   asan   ./build-asan   clang++ with AddressSanitizer + UndefinedBehaviorSanitizer
#                         (-DPARASIM_SANITIZE=ON, -O1 -g, assertions on), CUDA OFF (the sanitizers
#                         cannot see into nvcc's code), benchmarks built but not run, then ctest
#                         with the sanitizer options of cmake/ParasimSanitize.cmake.
#   scripts/sanitize.sh [clang|asan]...      (default: both; .ci/run runs asan)
# Environment: CXX (default clang++, else clang++-14), JOBS (build jobs, default 2).
# Installs clang, its sanitizer runtimes and llvm-symbolizer when missing (Debian 12, as root),
# besides scripts/install-deps.sh's packages. Prints the seconds each stage took.
set -euo pipefail
cd "$(dirname "$0")/.."
stages=("$@")
((${#stages[@]})) || stages=(clang asan)
for s in "${stages[@]}"; do
  [[ $s == clang || $s == asan ]] \
    || { echo "unknown stage '$s' (expected clang or asan)" >&2; exit 2; }
done

bash scripts/install-deps.sh
missing=()
for p in clang libclang-rt-14-dev llvm-14; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
cxx=${CXX:-$(command -v clang++ || command -v clang++-14)}
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                                          -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
# Symbolized stacks in sanitizer reports.
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ]; then
  sym=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
  [ -n "$sym" ] && export ASAN_SYMBOLIZER_PATH=$sym
fi

report=()
for s in "${stages[@]}"; do
  start=$SECONDS
  # CMake drops the whole cache, -D options included, when the compiler of an existing build
  # directory changes: start that directory afresh instead.
  cache=build-$s/CMakeCache.txt
  if [ -f "$cache" ] && ! grep -qx "CMAKE_CXX_COMPILER:[A-Z]*=$cxx" "$cache"; then
    echo "build-$s was configured with another C++ compiler: reconfiguring it from scratch"
    rm -rf "$cache" "build-$s/CMakeFiles"
  fi
  case $s in
    clang)
      cmake -S . -B build-clang -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
            "${launcher[@]}" ;;
    asan)
      cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_COMPILER="$cxx" \
            "${launcher[@]}" -DPARASIM_SANITIZE=ON -DPARASIM_CUDA=OFF -DPARASIM_PYTHON=OFF
      grep -qx "PARASIM_SANITIZE:BOOL=ON" "$cache" \
        || { echo "build-asan is not configured with PARASIM_SANITIZE=ON" >&2; exit 1; } ;;
  esac
  cmake --build "build-$s" -j "${JOBS:-2}"
  built=$SECONDS
  # Tests labelled `long` (the planner's every-scenario x every-trainer sweep) run in the Release
  # suite (scripts/test.sh); here they would take most of the sanitizer run's time for code the
  # rest of the planner suite already runs under the sanitizers.
  ctest --test-dir "build-$s" --output-on-failure -j "${JOBS:-2}" -LE long
  report+=("$s: build $((built - start)) s, tests $((SECONDS - built)) s")
done
printf 'sanitize.sh %s\n' "${report[@]}"
