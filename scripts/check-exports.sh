#!/usr/bin/env bash
# Exports FILE (a scenario or a plan) to every trainer and has each trainer's own code read it:
#   megatron    megatron.training.arguments parse_args + validate_args (WORLD_SIZE set)
#   deepspeed   deepspeed.runtime.config.DeepSpeedConfig, with a one-process gloo group and an
#               mpu whose data-parallel size is the plan's (so the batch identity is checked),
#               and without an mpu where AutoTP is on (its own launch: world = tp x dp); then
#               deepspeed.initialize and one optimizer step of a toy model on the CPU
#               (DS_ACCELERATOR=cpu, gloo): 1 process, or tp (AutoTP) x pp (PipelineModule)
#               processes (at most 8: larger degrees halved, as the verdict says), the model's
#               layers at 1/k width, counting the gradient reductions (ZeRO-3: reduce-scatters
#               per backward for the exported bucket)
#   torchtitan  torchtitan.config.manager.ConfigManager (0.3: --module llama3 --config
#               llama3_debugmodel plus the overrides; 0.2: --job.config_file), then again with
#               one user flag appended after the export (--training.steps 10, as a launch that
#               adds its own flags does), and the trainer's batch rule
#   shampoo     the DistributedShampoo (or DASH) constructor on a tiny model
# and prints one line per target: accepted, rejected (with the trainer's message), refused by
# parasim (the plan uses what the trainer cannot express), or skipped (trainer not installed).
# Exit code 1 when a trainer rejected an export.
#
# Needs the trainers installed in PYTHON's environment (pip; Python >= 3.12 for megatron-core):
#   pip install torch megatron-core==0.19.2 deepspeed==0.19.8 torchtitan==0.3.0
# torchtitan 0.2.2 beside 0.3.0: pip install --target DIR --no-deps torchtitan==0.2.2 and
# TORCHTITAN02_PATH=DIR; Distributed Shampoo and DASH from their repositories:
# SHAMPOO_PATH=<clone of facebookresearch/optimizers>, DASH_PATH=<clone of
# IST-DASLab/ISTA-DASLab-Optimizers>.
#
# The first DeepSpeed check compiles DeepSpeed's CPU fused_adam op (cached in
# ~/.cache/torch_extensions); an 8-process toy run takes about a minute on 2 cores.
#
# Usage: scripts/check-exports.sh FILE [--allow-approximate]
#   env: PYTHON (default python3), PARASIM (default build/cli/parasim), CHECK_EXPORTS_DETAIL=1
#        (also print each check's "detail:" lines: the toy run's reductions, tracebacks)
set -u
here="$(cd "$(dirname "$0")" && pwd)"
file="${1:?usage: scripts/check-exports.sh FILE [--allow-approximate]}"
shift
parasim="${PARASIM:-$here/../build/cli/parasim}"
python="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0

run_check() {  # target version suffix
  local target="$1" version="$2" out="$work/$1-$2"
  if ! "$parasim" export "$file" --to "$target" ${version:+--version "$version"} \
      --out "$out" "${@:3}" 2> "$work/err"; then
    echo "$target ${version:-default}: refused by parasim export: $(head -c 600 "$work/err")"
    return
  fi
  local pythonpath="${PYTHONPATH:-}"
  [ "$target" = torchtitan ] && [ "$version" = 0.2 ] && pythonpath="${TORCHTITAN02_PATH:-}:$pythonpath"
  [ "$target" = shampoo ] && pythonpath="${SHAMPOO_PATH:-}:${DASH_PATH:-}:$pythonpath"
  local line
  line="$(PYTHONPATH="$pythonpath" "$python" "$here/export/check_export.py" "$target" \
          "${version:-default}" "$out" "$file" "$work/err" 2>"$work/py-err" | tail -n 1)"
  [ -z "$line" ] && line="rejected: $(grep -v '^detail: ' "$work/py-err" | tail -n 3 | tr '\n' ' ')"
  echo "$target ${version:-default}: $line"
  if [ -n "${CHECK_EXPORTS_DETAIL:-}" ]; then
    grep '^detail: ' "$work/py-err" | sed 's/^/    /'
  fi
  case "$line" in rejected*) status=1 ;; esac
}

run_check megatron "" "$@"
run_check deepspeed "" "$@"
run_check torchtitan "" "$@"
run_check torchtitan 0.2 "$@"
run_check shampoo "" "$@"
exit $status
