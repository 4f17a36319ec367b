#!/usr/bin/env bash
# Re-writes tests/data/exports/ from the current exports (run from the repository root after a
# build). Goldens move only on purpose: say why in the commit message (tests/data/README.md).
set -euo pipefail
build="${1:-build}"
PARASIM_UPDATE_EXPORTS=1 "$build/tests/test_planner" -tc='*goldens*' > /dev/null
git status --short tests/data/exports
