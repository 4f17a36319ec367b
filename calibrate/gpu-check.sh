#!/usr/bin/env bash
# The GPU check of the calibration module, for a machine with NVIDIA GPUs: builds parasim with
# CUDA, runs the GPU tests (ctest -L gpu), a quick calibration of every GPU on this host, the
# held-out check of the profile it wrote, and a simulation with that profile. Designed to finish
# within 8 minutes on one H200 (the build takes most of it). Prints the elapsed time per stage.
#
#   bash calibrate/gpu-check.sh [OUT_DIR]      (default OUT_DIR: ./gpu-check)
#
# Exit status: non-zero when a stage fails; with no GPU, the GPU tests report Skipped and the
# calibration exits with code 3, which this script reports and then stops with status 3.
set -uo pipefail
cd "$(dirname "$0")/.."
out_dir=${1:-gpu-check}
mkdir -p "$out_dir"
start=$(date +%s)
stage() { echo; echo "=== $1 ($(( $(date +%s) - start )) s elapsed)"; }

stage "configure and build (CUDA required, sm_90 only to save time)"
bash scripts/install-deps.sh || exit 1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPARASIM_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DPARASIM_BUILD_BENCHMARKS=OFF || exit 1
cmake --build build-gpu || exit 1
parasim=build-gpu/cli/parasim

stage "devices"
"$parasim" devices

stage "GPU tests (ctest -L gpu)"
ctest --test-dir build-gpu -L gpu --output-on-failure
tests_status=$?

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
launcher=()
if [ "${gpus:-0}" -gt 1 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  launcher=(mpirun -np "$gpus")
fi

stage "quick calibration on ${gpus:-0} GPU(s) -> $out_dir/profile.json"
"${launcher[@]}" "$parasim" calibrate --quick --out "$out_dir/profile.json"
calibrate_status=$?
if [ $calibrate_status -eq 3 ]; then
  echo "no GPU: calibration not possible here (exit code 3)"
  exit 3
fi

stage "held-out check of the profile"
"${launcher[@]}" "$parasim" calibrate --quick --check "$out_dir/profile.json" | tee "$out_dir/check.txt"
check_status=${PIPESTATUS[0]}

stage "simulate with the measured profile"
"$parasim" simulate scenarios/llama2-7b-dgx-h100.json --profile "$out_dir/profile.json" \
  | tee "$out_dir/simulate.txt"
simulate_status=${PIPESTATUS[0]}

stage "done: tests $tests_status, calibrate $calibrate_status, check $check_status, simulate $simulate_status"
[ $tests_status -eq 0 ] && [ $calibrate_status -eq 0 ] && [ $check_status -eq 0 ] && [ $simulate_status -eq 0 ]
