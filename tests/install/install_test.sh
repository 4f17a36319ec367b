#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then the installed parasim on installed files:
#   install_test.sh BUILD_DIR SOURCE_DIR VERSION BUILD_PARASIM PLUGIN_DIR
# Checks: the executable is bin/parasim and runs without the build tree (no library "not
# found"); the plugins built beside the build tree's executable (BUILD_DIR/cli/libparasim_*.so)
# are in PLUGIN_DIR (relative to the prefix, e.g. lib/parasim), resolve their libraries, and the
# installed parasim loads its own (devices names the installed CUDA plugin, a cpu calibration's
# profile names the MPI the installed MPI plugin ran); every shipped
# scenario and profile is in share/parasim/scenarios and validates; the README and every file of
# docs/ are in share/doc/parasim; nothing else is installed; simulating an installed scenario
# from another directory gives the build tree's result bit for bit.
set -euo pipefail
build=$(realpath "$1")
source_dir=$(realpath "$2")
version=$3
build_parasim=$(realpath "$4")
plugin_dir=$5
plugins=$(cd "$build/cli" && ls libparasim_*.so 2>/dev/null || true)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
fail() { echo "install test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" > "$prefix.log" 2>&1 \
  || { cat "$prefix.log"; rm -f "$prefix.log"; fail "cmake --install failed"; }
rm -f "$prefix.log"
parasim=$prefix/bin/parasim
[ -x "$parasim" ] || fail "no executable bin/parasim under the prefix"

# What was installed, against what should be.
expected=$(
  echo bin/parasim
  for p in $plugins; do echo "$plugin_dir/$p"; done
  (cd "$source_dir" && find scenarios -type f -name '*.json' | sed 's|^|share/parasim/|')
  echo share/doc/parasim/README.md
  (cd "$source_dir" && find docs -type f | sed 's|^|share/doc/parasim/|')
)
installed=$(cd "$prefix" && find . -type f | sed 's|^\./||')
diff <(sort <<< "$expected") <(sort <<< "$installed") \
  || fail "installed files differ from the expected list (< expected, > installed)"
while read -r f; do
  [ "$f" = bin/parasim ] && continue
  [[ "$f" == "$plugin_dir"/* ]] && continue
  src=${f#share/parasim/}
  src=${src#share/doc/parasim/}
  cmp -s "$source_dir/$src" "$prefix/$f" || fail "$f differs from $src"
done <<< "$expected"

# Runs without the build tree: every shared library resolves with no LD_LIBRARY_PATH.
if ldd_out=$(env -u LD_LIBRARY_PATH ldd "$parasim" 2>&1); then
  ! grep -q "not found" <<< "$ldd_out" \
    || fail "installed parasim misses libraries: $(grep "not found" <<< "$ldd_out" | tr -s ' \t\n' ' ')"
fi
for p in $plugins; do
  ldd_out=$(env -u LD_LIBRARY_PATH ldd "$prefix/$plugin_dir/$p" 2>&1) \
    || fail "ldd $plugin_dir/$p failed: $ldd_out"
  ! grep -q "not found" <<< "$ldd_out" \
    || fail "installed $p misses libraries: $(grep "not found" <<< "$ldd_out" | tr -s ' \t\n' ' ')"
done
cd "$prefix"
if [[ " $plugins " == *" libparasim_cuda.so "* ]]; then
  first=$(env -u LD_LIBRARY_PATH bin/parasim devices | head -1 || true)
  [[ "$first" == "CUDA plugin: $prefix/$plugin_dir/libparasim_cuda.so "* ]] \
    || fail "the installed parasim does not load the installed CUDA plugin: $first"
fi
if [[ " $plugins " == *" libparasim_mpi.so "* ]]; then
  # The profile records the MPI it ran over: "none" unless the installed MPI plugin loaded.
  env -u LD_LIBRARY_PATH bin/parasim calibrate --backend cpu --ops norm --quick -n 1 -w 0 \
    --out mpi.json > /dev/null 2>&1 || fail "bin/parasim calibrate --backend cpu failed"
  python3 -c 'import json, sys; m = json.load(open("mpi.json"))["provenance"]["mpi"]; sys.exit(not m.startswith("Open MPI"))' \
    || fail "the installed parasim does not load the installed MPI plugin (mpi.json)"
  rm -f mpi.json
fi
[ "$(env -u LD_LIBRARY_PATH bin/parasim --version | head -1)" = "parasim $version" ] \
  || fail "bin/parasim --version is not $version"
for s in share/parasim/scenarios/*.json; do
  env -u LD_LIBRARY_PATH bin/parasim validate "$s" > /dev/null || fail "validate $s failed"
done
scenario=llama2-7b-dgx-h100.json
env -u LD_LIBRARY_PATH bin/parasim simulate "share/parasim/scenarios/$scenario" \
  --json installed.json > /dev/null
"$build_parasim" simulate "$source_dir/scenarios/$scenario" --json "$prefix/built.json" > /dev/null
python3 - installed.json built.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["step_time_s"] == b["step_time_s"], (a["step_time_s"], b["step_time_s"])
print(f"installed parasim: step time {a['step_time_s']} s, as the build tree's")
PY
echo "install test: OK ($(wc -l <<< "$installed") files under the prefix)"
