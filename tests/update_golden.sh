#!/usr/bin/env bash
# Re-baselines tests/data/golden.json from the current build: simulates every scenario in
# scenarios/ with `parasim simulate SCENARIO --json -` and records its step time, peak memory per
# simulated device, op count and event count. tests/cli/golden_test.cpp compares against it.
#
# Usage: tests/update_golden.sh BUILD_DIR      (e.g. tests/update_golden.sh build)
#
# Re-baseline only on purpose, when a change to the model is meant to move these numbers, and say
# in the commit message why they moved (tests/data/README.md). Review `git diff tests/data/golden.json`
# before committing.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build_dir=$1
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
parasim="$build_dir/cli/parasim"
if [[ ! -x "$parasim" ]]; then
  echo "$0: $parasim is missing or not executable; build it first (cmake --build $build_dir)" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

shopt -s nullglob
scenarios=("$repo"/scenarios/*.json)
if [[ ${#scenarios[@]} -eq 0 ]]; then
  echo "$0: no scenarios in $repo/scenarios" >&2
  exit 1
fi
for scenario in "${scenarios[@]}"; do
  name=$(basename "$scenario" .json)
  echo "simulating $name" >&2
  # The text report goes to stderr with --json -; keep it out of the way.
  "$parasim" simulate "$scenario" --json - >"$work/$name.json" 2>"$work/$name.txt" || {
    echo "$0: parasim simulate $scenario failed:" >&2
    cat "$work/$name.txt" >&2
    exit 1
  }
done

python3 - "$work" "$repo/tests/data/golden.json" <<'EOF'
import json, os, sys

work, target = sys.argv[1], sys.argv[2]
scenarios = {}
for file in sorted(os.listdir(work)):
    if not file.endswith(".json"):
        continue
    with open(os.path.join(work, file)) as f:
        result = json.load(f)
    scenarios[file[: -len(".json")]] = {
        "step_time_s": result["step_time_s"],
        "peak_memory_bytes": [int(b) for b in result["peak_memory_bytes"]],
        "ops": result["ops"],
        "events": result["events"],
    }
golden = {
    "parasim_golden": 1,
    "about": "Results of simulating every scenario in scenarios/ (symmetric mode, no profile), "
             "checked by tests/cli/golden_test.cpp. Regenerate on purpose only, with "
             "tests/update_golden.sh BUILD_DIR, and give the reason in the commit message "
             "(tests/data/README.md).",
    "scenarios": scenarios,
}
with open(target + ".tmp", "w") as f:
    json.dump(golden, f, indent=2)
    f.write("\n")
os.replace(target + ".tmp", target)
print(f"wrote {target} ({len(scenarios)} scenarios)", file=sys.stderr)
EOF
