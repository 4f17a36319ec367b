#!/usr/bin/env python3
"""Splits measured and predicted step times of a validation file into the parts its cases vary:
per step (the fixed part: optimizer, data-parallel reduction) and per micro-batch, and the
per-micro-batch part into per layer and the rest. No figure is fitted into parasim: this only
reads what validate-against predicted next to what was measured, to show where they differ.

For every layout (hidden, layers, tp, pp, dp, micro-batch) with at least two global batches,
a least-squares line step = fixed + per_mb x (micro-batches per replica) is fitted to the
measured and to the predicted step times; then, for every (hidden, tp, pp, dp, micro-batch)
with at least two layer counts, per_mb = rest + per_layer x layers. Printed in ms, measured
then predicted (pp = 1 layouts only for the layer split: with pp > 1 the micro-batch count also
sets the pipeline bubble).

Usage:
  build/cli/parasim validate-against scenarios/validation --csv cases.csv
  scripts/validation/decompose.py scenarios/validation/vtrain.json cases.csv [--family F]
"""
import argparse
import csv
import json
from collections import defaultdict


def line_fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - slope * mx, slope  # intercept, slope


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("validation_file")
    parser.add_argument("cases_csv", help="validate-against --csv output")
    parser.add_argument("--family", default="", help="only cases of this family")
    args = parser.parse_args()
    doc = json.load(open(args.validation_file))
    rows = {r["id"]: r for r in csv.DictReader(open(args.cases_csv))}
    layouts = defaultdict(list)
    for c in doc["cases"]:
        r = rows.get(c["id"])
        if r is None or r["status"] != "simulated" or "scenario" not in c:
            continue
        if args.family and c["family"] != args.family:
            continue
        s = c["scenario"]
        m, p, t = s["model"], s["parallel"], s["training"]
        micro_batches = t["global_batch"] // (t["micro_batch"] * p["dp"])
        key = (m["hidden"], m["layers"], p["tp"], p["pp"], p["dp"], t["micro_batch"])
        layouts[key].append((micro_batches, float(r["measured_step_time_s"]),
                             float(r["predicted_step_time_s"])))

    per_layout = {}
    print("Per layout: step = fixed + per micro-batch x micro-batches (ms; measured / predicted)")
    print(f"{'hidden':>6} {'layers':>6} {'tp':>3} {'pp':>3} {'dp':>3} {'mb':>3} {'runs':>4} "
          f"{'fixed':>15} {'per micro-batch':>17}")
    for key in sorted(layouts):
        runs = layouts[key]
        if len({n for n, _, _ in runs}) < 2:
            continue
        xs = [n for n, _, _ in runs]
        fm, sm = line_fit(xs, [m for _, m, _ in runs])
        fp, sp = line_fit(xs, [p for _, _, p in runs])
        per_layout[key] = (sm, sp, fm, fp)
        print(f"{key[0]:>6} {key[1]:>6} {key[2]:>3} {key[3]:>3} {key[4]:>3} {key[5]:>3} "
              f"{len(runs):>4} {1e3 * fm:7.1f} / {1e3 * fp:5.1f} {1e3 * sm:8.1f} / {1e3 * sp:6.1f}")

    by_shape = defaultdict(list)
    for (h, layers, tp, pp, dp, mb), (sm, sp, _, _) in per_layout.items():
        if pp == 1:
            by_shape[(h, tp, dp, mb)].append((layers, sm, sp))
    print()
    print("pp 1: per micro-batch = rest + per layer x layers (ms; measured / predicted)")
    print(f"{'hidden':>6} {'tp':>3} {'dp':>3} {'mb':>3} {'per layer':>17} {'rest':>15}")
    for key in sorted(by_shape):
        pts = by_shape[key]
        if len(pts) < 2:
            continue
        xs = [layers for layers, _, _ in pts]
        rm, lm = line_fit(xs, [m for _, m, _ in pts])
        rp, lp = line_fit(xs, [p for _, _, p in pts])
        print(f"{key[0]:>6} {key[1]:>3} {key[2]:>3} {key[3]:>3} {1e3 * lm:8.2f} / {1e3 * lp:6.2f} "
              f"{1e3 * rm:7.1f} / {1e3 * rp:5.1f}")


if __name__ == "__main__":
    main()
