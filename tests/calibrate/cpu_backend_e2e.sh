#!/usr/bin/env bash
# End to end on any machine: calibrate the CPU with two MPI ranks, simulate with the profile it
# wrote, check it against held-out points, and check the cuda backend's no-GPU exit code.
#   cpu_backend_e2e.sh PARASIM SOURCE_DIR
set -euo pipefail
parasim=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Root in containers and CI; two ranks may exceed the cores of a small runner.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

echo "--- mpirun -np 2 parasim calibrate --backend cpu --quick"
mpirun -np 2 "$parasim" calibrate --backend cpu --quick -n 5 -w 2 --out "$work/p.json" \
  | tee "$work/calibrate.txt"

python3 - "$work/p.json" "$work/calibrate.txt" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
printed = open(sys.argv[2]).read()
assert p["parasim_profile"] == 2, p["parasim_profile"]
assert p["complete"] is True
prov = p["provenance"]
assert prov["backend"] == "cpu" and prov["ranks"] == 2, prov
m = p["measurements"]
assert len(m["gemm"]) >= 48, len(m["gemm"])
kinds = {s["kind"] for s in m["collectives"]}
assert kinds == {"all-reduce", "all-gather", "reduce-scatter", "broadcast", "all-to-all",
                 "send-recv"}, kinds
for s in m["collectives"]:
    assert s["group"]["size"] == 2, s["group"]
    assert "fit" in s, s
    # A bandwidth the noise hid (beta clamped at 0: a rank descheduled on busy cores) is allowed
    # only with the warning that says so.
    assert (s["fit"]["beta_s_per_byte"] > 0 or
            f"warning: {s['kind']} on 2 ranks: the measured times do not grow" in printed), s["fit"]
    assert all(pt["correct"] for pt in s["points"]), s["kind"]
assert len(m["solvers"]) > 0 and len(m["norms"]) > 0
print("profile ok:", len(m["gemm"]), "gemm,", sum(len(s["points"]) for s in m["collectives"]),
      "collective,", len(m["solvers"]), "solver,", len(m["norms"]), "norm points")
PY

echo "--- parasim simulate --profile"
scenario="$source_dir/scenarios/gpt2-medium-gpipe.json"
"$parasim" simulate "$scenario" --json "$work/plain.json" > /dev/null
# A CPU's profile on a GPU scenario is refused (exit 2) unless allowed.
if "$parasim" simulate "$scenario" --profile "$work/p.json" > /dev/null 2> "$work/foreign.err"; then
  echo "a CPU profile was applied to a GPU scenario without --allow-foreign-profile"; exit 1
fi
grep -q "/provenance/backend: the profile was measured by the cpu backend" "$work/foreign.err"
"$parasim" simulate "$scenario" --profile "$work/p.json" --allow-foreign-profile \
  --json "$work/profiled.json" > "$work/profiled.txt" 2> "$work/profiled.err"
grep -q "cost model: profile" "$work/profiled.txt"
python3 - "$work/plain.json" "$work/profiled.json" <<'PY'
import json, sys
plain, profiled = (json.load(open(f)) for f in sys.argv[1:3])
a, b = plain["step_time_s"], profiled["step_time_s"]
# A CPU's measured memory bandwidth is far below a GPU's HBM: memory-bound kernels get slower.
assert b > a, (a, b)
print(f"step time {a:.6f} s analytical, {b:.6f} s with the CPU profile")
PY

echo "--- mpirun -np 2 parasim calibrate --backend cpu --quick --check"
mpirun -np 2 "$parasim" calibrate --backend cpu --quick -n 5 -w 2 --check "$work/p.json" \
  | tee "$work/check.txt"
grep -q "largest |error|" "$work/check.txt"

echo "--- an interrupted run leaves a valid, incomplete profile"
set +e
timeout -s KILL 3 "$parasim" calibrate --backend cpu --out "$work/partial.json" -n 50 2>/dev/null
set -e
python3 - "$work/partial.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["complete"] is False, "a killed run must leave complete: false"
print("partial profile ok:", len(p["measurements"].get("gemm", [])), "gemm points")
PY

echo "--- the cuda backend without a GPU exits 3 with one line"
set +e
"$parasim" devices > "$work/devices.txt"
devices_status=$?
set -e
if [ "$devices_status" -eq 3 ]; then
  grep -q "No GPUs visible" "$work/devices.txt" || { echo "devices exit 3 without saying why"; exit 1; }
  set +e
  "$parasim" calibrate --backend cuda --quick --out "$work/gpu.json" 2> "$work/gpu.err"
  status=$?
  set -e
  cat "$work/gpu.err"
  [ "$status" -eq 3 ] || { echo "expected exit code 3, got $status"; exit 1; }
  [ "$(wc -l < "$work/gpu.err")" -eq 1 ] || { echo "expected one line"; exit 1; }
  [ ! -e "$work/gpu.json" ] || { echo "no profile may be written"; exit 1; }
else
  echo "a GPU is present: skipped"
fi
echo "cpu backend end to end: OK"
