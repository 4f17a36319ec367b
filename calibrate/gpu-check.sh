#!/usr/bin/env bash
# The GPU check of the calibration module, for a machine with NVIDIA GPUs: builds parasim with
# CUDA, runs the GPU tests (ctest -L gpu), a quick calibration of every GPU on this host, the
# held-out check of the profile it wrote, a simulation with that profile, and (with PyTorch) the
# trace import on a profiler trace of this GPU's GEMMs. Designed to finish
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

# The trace import on a trace of this GPU: a few bf16 GEMMs under torch.profiler with
# record_shapes, fitted by calibrate --from-trace, and the fitted GEMMs against the measured
# profile's predictions (compare-trace). Skipped where PyTorch with CUDA is not installed.
stage "trace import (PyTorch profiler trace of bf16 GEMMs) -> $out_dir/trace-profile.json"
trace_status=0
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  python3 - "$out_dir/gemm-trace.json" <<'PY'
import sys, torch
from torch.profiler import profile, schedule, ProfilerActivity
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
             schedule=schedule(wait=1, warmup=1, active=3)) as p:
    for _ in range(5):
        for m in (1024, 4096, 8192):
            torch.mm(a[:m], b)
        p.step()
torch.cuda.synchronize()
p.export_chrome_trace(sys.argv[1])
PY
  "$parasim" calibrate --from-trace "$out_dir/gemm-trace.json" --out "$out_dir/trace-profile.json" \
    | tee "$out_dir/trace-import.txt"
  trace_status=${PIPESTATUS[0]}
  [ $trace_status -eq 0 ] && "$parasim" compare-trace "$out_dir/gemm-trace.json" \
      scenarios/llama2-7b-dgx-h100.json --profile "$out_dir/profile.json" \
      --allow-foreign-profile | tee "$out_dir/compare-trace.txt"
else
  echo "PyTorch with CUDA is not installed here: trace import skipped"
fi

stage "done: tests $tests_status, calibrate $calibrate_status, check $check_status, simulate $simulate_status, trace $trace_status"
[ $tests_status -eq 0 ] && [ $calibrate_status -eq 0 ] && [ $check_status -eq 0 ] &&
  [ $simulate_status -eq 0 ] && [ $trace_status -eq 0 ]
