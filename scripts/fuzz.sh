#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz (clang, ASan + UBSan, -DPARASIM_FUZZ=ON) into
# ./build-fuzz and runs each for RUNS executions (default 1,000,000), printing per harness the
# executions done, the seconds taken and whether it crashed. Exit status 1 when one crashed.
#   scripts/fuzz.sh [RUNS] [HARNESS...]      HARNESS: scenario_parser_fuzz, profile_parser_fuzz,
#                                            plan_file_fuzz, validation_file_fuzz,
#                                            search_section_fuzz
# Environment: CXX (default clang++, else clang++-14), FUZZ_JOBS (build jobs, default 2),
# FUZZ_WORK (corpus and logs, default build-fuzz/work). A crash leaves its input as
# FUZZ_WORK/<harness>/crash-*: copy it to tests/fuzz/crashes/ with what it shows.
# Seeds: scenarios/, tests/data/bad/ (scenario parser); scenarios/profiles/, tests/data/bad-profile/
# (profile parser); those and tests/fuzz/seeds/plan/ (plan files); tests/fuzz/seeds/validation/
# (validation files: the development set's are larger than a fuzz input); tests/fuzz/seeds/search/
# (search sections). tests/fuzz/crashes/ is never a seed. A known crash still open (listed in
# tests/fuzz/crashes/README.md) can be stepped over so the run goes on past it:
#   PARASIM_FUZZ_KNOWN=json-number-overflow,control-characters-in-messages scripts/fuzz.sh
# A dictionary of every JSON key and unit word in the seeds (tokens the parsers look for) is
# made from the seeds themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
shift || true
harnesses=("$@")
((${#harnesses[@]})) || harnesses=(scenario_parser_fuzz profile_parser_fuzz plan_file_fuzz
                                   validation_file_fuzz search_section_fuzz)
cxx=${CXX:-$(command -v clang++ || command -v clang++-14)}
work=${FUZZ_WORK:-build-fuzz/work}

launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" \
  -DPARASIM_FUZZ=ON -DPARASIM_CUDA=OFF -DPARASIM_BUILD_TESTS=OFF -DPARASIM_BUILD_BENCHMARKS=OFF \
  > /dev/null
cmake --build build-fuzz -j "${FUZZ_JOBS:-2}" --target "${harnesses[@]}"

seeds_of() {
  case $1 in
    scenario_parser_fuzz) echo scenarios tests/data/bad ;;
    profile_parser_fuzz) echo scenarios/profiles tests/data/bad-profile ;;
    plan_file_fuzz) echo scenarios tests/data/bad tests/fuzz/seeds/plan ;;
    validation_file_fuzz) echo tests/fuzz/seeds/validation ;;
    search_section_fuzz) echo tests/fuzz/seeds/search ;;
    *) echo "unknown harness $1 (scenario_parser_fuzz, profile_parser_fuzz, plan_file_fuzz," \
            "validation_file_fuzz or search_section_fuzz)" >&2; exit 2 ;;
  esac
}

# The recorded crashes first (tests/fuzz/crashes/README.md), with nothing stepped over: which
# are still open. Informative only: the run below decides the exit status.
for h in "${harnesses[@]}"; do
  for f in tests/fuzz/crashes/*.json; do
    if env -u PARASIM_FUZZ_KNOWN "build-fuzz/tests/fuzz/$h" "$f" > /dev/null 2>&1; then
      echo "$h $f: no crash (fixed, or not this parser's)"
    else
      echo "$h $f: still crashes"
    fi
  done
done

status=0
summary=()
for h in "${harnesses[@]}"; do
  read -r -a seeds <<< "$(seeds_of "$h")"
  dir="$work/$h"
  mkdir -p "$dir/corpus"
  # Dictionary: every quoted word of the seeds ("tp", "layers", "GB/s", "1f1b", ...).
  cat $(printf '%s/*.json ' "${seeds[@]}") | grep -o '"[A-Za-z0-9_./ -]\{1,40\}"' | sort -u \
    > "$dir/keys.dict"
  log="$dir/fuzz.log"
  start=$(date +%s%N)
  set +e
  (cd "$dir" && "$OLDPWD/build-fuzz/tests/fuzz/$h" -runs="$runs" -dict=keys.dict \
      -max_len=65536 -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
      corpus $(printf "$OLDPWD/%s " "${seeds[@]}")) > "$log" 2>&1
  rc=$?
  set -e
  end=$(date +%s%N)
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  [ -n "$execs" ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
  if [ "$rc" -eq 0 ]; then
    result="no crash"
  else
    status=1
    crash=$(grep -o 'Test unit written to .*' "$log" | sed 's/Test unit written to //' | tail -1)
    result="CRASH (exit $rc): $dir/${crash#./}; log $log"
  fi
  summary+=("$(printf '%-22s %12s %9d  %s' "$h" "${execs:-?}" "$(((end - start) / 1000000000))" \
    "$result")")
done
printf '%-22s %12s %9s  %s\n' harness executions seconds result
printf '%s\n' "${summary[@]}"
exit "$status"
