#!/usr/bin/env bash
# Re-records scenarios/validation/guard.json: the development set's overall and per-source mean
# absolute step-time error and bias as the current parasim predicts them. The CTest entry
# validation_guard (label "validation") fails when the overall or a source's MAE grows past the
# recorded value by more than the tolerance (0.05 percentage points); re-record only when a
# change moves the error on purpose, and say why in the commit message (docs/validation.md).
#
# Usage: scripts/validation/record_guard.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-build}"
parasim="$build/cli/parasim"
[[ -x "$parasim" ]] || { echo "no $parasim: build parasim first (or give the build folder)" >&2; exit 2; }
result="$(mktemp)"
trap 'rm -f "$result"' EXIT
"$parasim" validate-against scenarios/validation --threads "${THREADS:-2}" --worst 0 \
  --json "$result" >/dev/null
commit="$(git rev-parse --short=12 HEAD)"
git diff --quiet HEAD -- . ':!scenarios/validation/guard.json' || commit="$commit + uncommitted changes"
python3 - "$result" "$commit" > scenarios/validation/guard.json.tmp <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
def entry(group):
    mae = group["mae_fraction"]
    bias = group["bias_fraction"]
    return {"simulated": group["simulated"],
            "mae_pct": None if mae is None else round(100 * mae, 4),
            "bias_pct": None if bias is None else round(100 * bias, 4)}
guard = {
    "parasim_validation_guard": 1,
    "about": ("Step-time error of the development set (scenarios/validation) as recorded by "
              "scripts/validation/record_guard.sh; CTest validation_guard fails when the overall "
              "or a source's MAE grows by more than mae_tolerance_pct_points. Re-record only on "
              "purpose, saying why in the commit (docs/validation.md)."),
    "recorded_at_commit": sys.argv[2],
    "mae_tolerance_pct_points": 0.05,
    "overall": entry(next(g for g in result["groups"] if g["scope"] == "overall")),
    "sources": {g["name"]: entry(g) for g in result["groups"] if g["scope"] == "source"},
}
print(json.dumps(guard, indent=2))
PY
mv scenarios/validation/guard.json.tmp scenarios/validation/guard.json
echo "recorded scenarios/validation/guard.json (parasim at $commit):"
cat scenarios/validation/guard.json
