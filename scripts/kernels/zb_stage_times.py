#!/usr/bin/env python3
"""Per-micro-batch F, B and W of one pipeline stage, parasim against the Zero Bubble profile.

Qi et al. 2024, "Zero Bubble Pipeline Parallelism" (arXiv 2401.10241), profiled the forward (T_F),
input-gradient backward (T_B) and weight-gradient (T_W) time of one micro-batch on one stage of
their Megatron-LM runs (A100 SXM 80GB, fp16, sequence 1024, pure pipeline parallelism). This
script simulates one middle stage of each model with the zb-h1 schedule, which keeps F, B and W
apart, and sums the layers' F, B and W ops of the Chrome trace. A check of the kernel costs, not
a fit: no constant of parasim is derived from these figures (docs/kernels.md).

Usage: scripts/kernels/zb_stage_times.py [PARASIM] [--attention unfused|flash]
Python 3 standard library only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# model, layers on a middle stage (22/30/46/62 layers on 8/8/16/32 stages, the first and last
# stage one fewer), hidden, heads, micro-batch, profiled T_F, T_B, T_W in ms (the paper's runs
# with the fewest micro-batches of each model).
STAGES = [
    ("1.5B", 3, 2304, 24, 6, 18.522, 18.086, 9.337),
    ("6.2B", 4, 4096, 32, 3, 29.718, 29.444, 19.927),
    ("14.6B", 3, 5120, 40, 1, 11.347, 11.248, 8.132),
    ("28.3B", 2, 6144, 48, 1, 10.419, 10.207, 7.715),
]


def stage_scenario(name, layers, hidden, heads, micro_batch, attention):
    return {
        "name": f"zb-{name}-stage",
        "model": {"layers": layers, "hidden": hidden, "heads": heads, "ffn_hidden": 4 * hidden,
                  "vocab": 8, "seq_len": 1024},
        "cluster": {"preset": "dgx-a100-80gb", "gpus_per_node": 1},
        "training": {"global_batch": micro_batch, "micro_batch": micro_batch,
                     "precision": "fp16", "attention": attention},
        "parallel": {"schedule": "zb-h1"},
    }


def layer_times_ms(parasim, scenario, work):
    path = os.path.join(work, scenario["name"] + ".json")
    trace = path + ".trace.json"
    with open(path, "w") as f:
        json.dump(scenario, f)
    subprocess.run([parasim, "simulate", path, "--trace", trace], check=True,
                   stdout=subprocess.DEVNULL)
    with open(trace) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    totals = {"F": 0.0, "B": 0.0, "W": 0.0}
    for e in events:
        words = e.get("name", "").split()
        # Layer ops are named "F L0 attn", "B L2 mlp bwd", "W L1 wgrad" (durations in us).
        if e.get("ph") == "X" and len(words) > 1 and words[0] in totals and words[1][:1] == "L":
            totals[words[0]] += e["dur"] / 1000.0
    return totals


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parasim", nargs="?", default="build/cli/parasim")
    parser.add_argument("--attention", choices=["unfused", "flash"], default="unfused")
    args = parser.parse_args()
    print(f"attention {args.attention}; times in ms per micro-batch, errors (parasim - profiled)"
          " / profiled")
    print(f"{'model':6} {'F':>7} {'B':>7} {'W':>7} | {'T_F':>7} {'T_B':>7} {'T_W':>7} | "
          f"{'F err':>7} {'B err':>7} {'W err':>7} {'sum err':>7}")
    with tempfile.TemporaryDirectory() as work:
        for name, layers, hidden, heads, mb, tf, tb, tw in STAGES:
            t = layer_times_ms(args.parasim,
                               stage_scenario(name, layers, hidden, heads, mb, args.attention),
                               work)
            total = t["F"] + t["B"] + t["W"]
            print(f"{name:6} {t['F']:7.2f} {t['B']:7.2f} {t['W']:7.2f} | {tf:7.2f} {tb:7.2f} "
                  f"{tw:7.2f} | {t['F'] / tf - 1:+7.1%} {t['B'] / tb - 1:+7.1%} "
                  f"{t['W'] / tw - 1:+7.1%} {total / (tf + tb + tw) - 1:+7.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
