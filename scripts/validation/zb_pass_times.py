#!/usr/bin/env python3
"""parasim's per-stage pass times against the Zero Bubble paper's profiled T_F, T_B, T_W.

The Zero Bubble paper (Qi et al. 2024, arXiv 2401.10241) prints, beside its measured throughput,
the per-micro-batch times its scheduler profiled on the same runs ("settings_main" in
scenarios/validation/published/zerobubble-main.json): T_F (forward), T_B (input gradient), T_W
(weight gradient), in ms. They are component measurements of the runs in the development set, so
they say which pass parasim gets wrong, not only that the step is off. Nothing here goes back
into parasim.

How the fork timed them (sail-sg/zero-bubble-pipeline-parallelism, megatron/core/pipeline_parallel/
zb_schedules.py, ScheduleTimers): one Megatron Timer per pass kind around forward_step,
backward_step and the weight-gradient pop, averaged per rank; Megatron's Timer calls
torch.cuda.synchronize() at start and stop (NVIDIA/Megatron-LM megatron/timers.py), so a profiled
pass is its wall time alone on the device: host issue and GPU work, not overlapped with other
passes. The paper does not say which pipeline stage its single figure comes from; the script
compares parasim's middle stages (the median over every stage but the first and last, which in
these runs hold one layer fewer and the embedding or the head; the middle ones are identical).

For each model it simulates the development-set case with the fewest micro-batches (ZB-2p; the
schedule changes a pass's time only through what overlaps it, well under 1 %) with
`parasim simulate --trace`, every stage traced, and sums the durations of the first
micro-batch's F, B and W layer ops per stage; for the last stage it also prints the forward with
every op (its layers, the head and the loss).

Usage:
  scripts/validation/zb_pass_times.py [--parasim build/cli/parasim] [--models 1.5B,14.6B]
Python 3 standard library only.
"""
import argparse
import json
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "scenarios" / "validation" / "published" / "zerobubble-main.json"
CASES = ROOT / "scenarios" / "validation" / "zerobubble-main.json"

# A traced compute op of micro-batch k: "F L14 attn[k]", "B L14 mlp bwd[k]", "W L14 wgrad[k]";
# ANY_OP also takes the embedding's, the head's and the loss's ("F head[k]", ...).
PASS_OP = re.compile(r"^([FBW]) L\d+ .+\[(\d+)\]$")
ANY_OP = re.compile(r"^([FBW]) .+\[(\d+)\]$")
PROFILED_KEYS = ("profiled_t_f_ms", "profiled_t_b_ms", "profiled_t_w_ms")


def profiled_settings(models):
    """Per model, the profiled setting with the fewest micro-batches (from settings_main); exits
    with status 2 naming the file and the JSON path of a setting that lacks a field."""
    settings = json.loads(PUBLISHED.read_text())["settings_main"]
    numbers = ("pp", "num_microbatches", "micro_batch_size") + PROFILED_KEYS
    problems = []
    for i, s in enumerate(settings):
        if not isinstance(s.get("model"), str):
            problems.append(f"/settings_main/{i}/model: a model name expected")
        for key in numbers:
            if not isinstance(s.get(key), (int, float)) or isinstance(s.get(key), bool):
                problems.append(f"/settings_main/{i}/{key}: a number expected")
    if problems:
        print("\n".join(f"{PUBLISHED}: {p}" for p in problems), file=sys.stderr)
        sys.exit(2)
    unknown = sorted(models - {s["model"] for s in settings})
    if unknown:
        print(f"{PUBLISHED}: /settings_main has no model {', '.join(unknown)} (it has "
              f"{', '.join(sorted({s['model'] for s in settings}))})", file=sys.stderr)
        sys.exit(2)
    chosen = {}
    for s in settings:
        if models and s["model"] not in models:
            continue
        best = chosen.get(s["model"])
        if best is None or s["num_microbatches"] < best["num_microbatches"]:
            chosen[s["model"]] = s
    return chosen


def case_scenario(model, microbatches):
    """The development-set scenario of the ZB-2p run of `model` with `microbatches`."""
    wanted = f"main_{model}_m{microbatches}_ZB-2p"
    for case in json.loads(CASES.read_text())["cases"]:
        if case["id"] == wanted:
            return case["scenario"]
    sys.exit(f"{CASES}: no case '{wanted}' (regenerate with scripts/validation/make_dev_set.py)")


def stage_pass_times_ms(parasim, case_id, scenario, pp, workdir):
    """Per stage, {"F": ms, "B": ms, "W": ms} of micro-batch 0's layer ops, traced; and the last
    stage's forward with every op, in ms."""
    scenario_file = workdir / "scenario.json"
    trace_file = workdir / "trace.json"
    scenario_file.write_text(json.dumps(scenario))
    command = [parasim, "simulate", str(scenario_file), "--trace", str(trace_file),
               "--trace-ranks", f"0-{pp - 1}"]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{CASES}: case {case_id}: `{' '.join(command)}` failed "
                 f"(exit {run.returncode}):\n{run.stderr}")
    trace = json.loads(trace_file.read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    times = {}
    whole_forward = {}  # per stage: the forward with every op (embedding, head, loss)
    seen = set()  # (stage, op name): the first simulated step only
    for e in events:
        if e.get("ph") != "X":
            continue
        match = ANY_OP.match(e.get("name", ""))
        if not match or match.group(2) != "0" or (e["pid"], e["name"]) in seen:
            continue
        seen.add((e["pid"], e["name"]))
        ms = e["dur"] / 1000.0  # trace durations are in us
        if match.group(1) == "F":
            whole_forward[e["pid"]] = whole_forward.get(e["pid"], 0.0) + ms
        if PASS_OP.match(e["name"]):
            stage = times.setdefault(e["pid"], {"F": 0.0, "B": 0.0, "W": 0.0})
            stage[match.group(1)] += ms
    if len(times) != pp:
        sys.exit(f"{CASES}: case {case_id}: expected {pp} traced stages with layer ops in "
                 f"`{' '.join(command)}`'s trace, found {len(times)}")
    return [times[pid] for pid in sorted(times)], whole_forward[max(whole_forward)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parasim", default=str(ROOT / "build" / "cli" / "parasim"),
                        help="the parasim executable (default: build/cli/parasim)")
    parser.add_argument("--models", default="",
                        help="comma-separated model names (1.5B,6.2B,14.6B,28.3B; default all)")
    args = parser.parse_args()
    settings = profiled_settings({m for m in args.models.split(",") if m})
    if not pathlib.Path(args.parasim).is_file():
        print(f"{args.parasim}: no parasim executable; build it first (scripts/build.sh) or "
              f"give --parasim", file=sys.stderr)
        sys.exit(2)

    print("Per-micro-batch pass times, ms: profiled by the Zero Bubble fork (synchronized "
          "timers) / parasim")
    print(f"{'model':>6} {'pp':>3} {'mb':>3} {'layers':>6} {'pass':>4} {'profiled':>9} "
          f"{'parasim':>8} {'parasim/profiled':>17}")
    ratios = {"F": [], "B": [], "W": []}
    last_forwards = []
    with tempfile.TemporaryDirectory() as tmp:
        for model, s in settings.items():
            scenario = case_scenario(model, s["num_microbatches"])
            case_id = f"main_{model}_m{s['num_microbatches']}_ZB-2p"
            stages, last_forward = stage_pass_times_ms(args.parasim, case_id, scenario, s["pp"],
                                                       pathlib.Path(tmp))
            last_forwards.append((model, last_forward, stages[-1]["F"]))
            layers = int(statistics.median(scenario["parallel"]["stage_layers"][1:-1]))
            profiled = {"F": s["profiled_t_f_ms"], "B": s["profiled_t_b_ms"],
                        "W": s["profiled_t_w_ms"]}
            for kind in "FBW":
                middle = statistics.median(st[kind] for st in stages[1:-1])
                ratio = middle / profiled[kind]
                ratios[kind].append(ratio)
                print(f"{model:>6} {s['pp']:>3} {s['micro_batch_size']:>3} {layers:>6} "
                      f"{kind:>4} {profiled[kind]:>9.3f} {middle:>8.3f} {ratio:>17.3f}")
    for model, every_op, layers_only in last_forwards:
        print(f"{model}: parasim's last stage forward {every_op:.2f} ms with the head and the loss "
              f"({layers_only:.2f} ms of layers)")
    for kind in "FBW":
        if ratios[kind]:
            print(f"pass {kind}: parasim / profiled from {min(ratios[kind]):.3f} to "
                  f"{max(ratios[kind]):.3f} over {len(ratios[kind])} models")


if __name__ == "__main__":
    main()
