#!/usr/bin/env python3
"""What the measured vTrain single-node step times are made of, from the measurements alone (no
parasim prediction is read, nothing is fitted into parasim).

vTrain's single-node ground truth (VIA-Research/vTrain data/ground_truth_single.csv at f8dda84)
turns out to be exactly additive: with pipeline depth 1, every step time is

    step = fixed(hidden, layers, tp, dp, mb) + micro_batches x (rest(hidden, tp, mb)
                                                               + layers x per_layer(hidden, tp, mb))

to the last printed digit (residuals ~1e-14 ms, where repeated real runs scatter by tenths of a
percent), and a step's data-parallel degree only adds a constant (the gradient all-reduce). So each
(hidden, tp, micro-batch) cell carries one per-layer time, composed into up to 80 step times.
This script prints:

1. how exact that composition is (the largest residual of each line fit, in ms);
2. the per-layer and rest times of every cell (ms per micro-batch);
3. the cells whose per-layer time falls as the micro-batch grows (more GPU work per kernel, the
   same host work), and by how much. With identical ranks (parasim's model) a layer's time cannot
   fall as its GPU work grows; with ranks whose hosts drift apart between collectives it can
   (GPU work queued behind a slow host absorbs the drift), and so can measurement noise;
4. an estimate of the floor under the error of any model in which a layer's time cannot fall
   as its GPU work grows: the per-layer times made non-decreasing in the micro-batch (per
   (hidden, tp), weighted by the cases each cell feeds) with the least change, composed back
   into step times, and scored against the measured steps (MAE % and worst %); once in least
   squares and once in least absolute deviation (weighted medians). Neither minimises the
   composed steps' MAE exactly, so both are estimates, not bounds.

Usage:
  scripts/validation/vtrain_structure.py scenarios/validation/vtrain.json [--check-exact MS]
"""
import argparse
import json
from collections import defaultdict

from decompose import line_fit  # the same least-squares line, beside this script


def weighted_median(points):
    """The lower weighted median of (value, weight) pairs."""
    points = sorted(points)
    half = sum(w for _, w in points) / 2
    running = 0
    for v, w in points:
        running += w
        if running >= half:
            return v
    return points[-1][0]


def isotonic_non_decreasing(values, weights, l1=False):
    """Weighted non-decreasing fit by pooling adjacent violators: each pool's value is its
    weighted mean (least squares) or weighted median (least absolute deviation)."""
    blocks = []  # [value, members [(value, weight)]]
    for v, w in zip(values, weights):
        blocks.append([v, [(v, w)]])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            _, m2 = blocks.pop()
            _, m1 = blocks.pop()
            members = m1 + m2
            total = sum(w for _, w in members)
            value = (weighted_median(members) if l1
                     else sum(x * w for x, w in members) / total)
            blocks.append([value, members])
    out = []
    for v, members in blocks:
        out.extend([v] * len(members))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("validation_file", help="scenarios/validation/vtrain.json")
    parser.add_argument("--check-exact", type=float, metavar="MS",
                        help="exit 1 unless every residual of part 1 is below MS milliseconds")
    args = parser.parse_args()
    doc = json.load(open(args.validation_file))
    cases = []
    for c in doc["cases"]:
        if c["family"] != "vtrain-single-node" or "scenario" not in c:
            continue
        s = c["scenario"]
        m, p, t = s["model"], s["parallel"], s["training"]
        if p["pp"] != 1:
            continue
        cases.append(dict(id=c["id"], h=m["hidden"], layers=m["layers"], tp=p["tp"], dp=p["dp"],
                          mb=t["micro_batch"], n=t["global_batch"] // (t["micro_batch"] * p["dp"]),
                          ms=1e3 * c["measured"]["step_time_s"]))
    print(f"vTrain single-node cases with pipeline depth 1: {len(cases)}")

    # 1. step = fixed + n x per_mb, per (h, layers, tp, dp, mb)
    by_layout = defaultdict(list)
    for c in cases:
        by_layout[(c["h"], c["layers"], c["tp"], c["dp"], c["mb"])].append(c)
    per_mb, worst_mb_residual = {}, 0.0
    for key, runs in by_layout.items():
        if len({r["n"] for r in runs}) < 2:
            continue
        fixed, slope = line_fit([r["n"] for r in runs], [r["ms"] for r in runs])
        per_mb[key] = (fixed, slope)
        for r in runs:
            worst_mb_residual = max(worst_mb_residual, abs(r["ms"] - fixed - slope * r["n"]))
    # per_mb = rest + layers x per_layer, per (h, tp, dp, mb)
    by_cell_dp = defaultdict(list)
    for (h, layers, tp, dp, mb), (_, slope) in per_mb.items():
        by_cell_dp[(h, tp, dp, mb)].append((layers, slope))
    cell, worst_layer_residual = {}, 0.0
    for (h, tp, dp, mb), pts in by_cell_dp.items():
        if len(pts) < 2:
            continue
        rest, per_layer = line_fit([x for x, _ in pts], [y for _, y in pts])
        for x, y in pts:
            worst_layer_residual = max(worst_layer_residual, abs(y - rest - per_layer * x))
        cell.setdefault((h, tp, mb), []).append((dp, rest, per_layer))
    spread = max((max(p for _, _, p in v) - min(p for _, _, p in v)) for v in cell.values())
    print("1. Exactness of the composition (ms):")
    print(f"   step = fixed + micro-batches x per micro-batch: largest residual {worst_mb_residual:.1e}")
    print(f"   per micro-batch = rest + layers x per layer:    largest residual {worst_layer_residual:.1e}")
    print(f"   per layer across data-parallel degrees of one cell: largest spread {spread:.1e}")
    if args.check_exact is not None:
        worst = max(worst_mb_residual, worst_layer_residual, spread)
        if not worst < args.check_exact:
            print(f"not exactly additive: a residual of {worst:.3g} ms >= {args.check_exact} ms")
            raise SystemExit(1)

    # 2. the cells
    per_layer = {k: v[0][2] for k, v in cell.items()}
    rest = {k: v[0][1] for k, v in cell.items()}
    print("2. Per (hidden, tp, micro-batch) cell: ms per layer per micro-batch, and the rest "
          "(embedding, head, loss) per micro-batch")
    print(f"   {'hidden':>6} {'tp':>3} {'mb':>3} {'per layer':>10} {'rest':>8}")
    for k in sorted(per_layer):
        print(f"   {k[0]:>6} {k[1]:>3} {k[2]:>3} {per_layer[k]:>10.3f} {rest[k]:>8.3f}")

    # 3. orderings no mechanism produces
    print("3. Per-layer time falling as the micro-batch grows (same hidden and tp):")
    series = defaultdict(list)
    for (h, tp, mb), v in per_layer.items():
        series[(h, tp)].append((mb, v))
    violations = 0
    for key in sorted(series):
        pts = sorted(series[key])
        for (m1, v1), (m2, v2) in zip(pts, pts[1:]):
            if v2 < v1:
                violations += 1
                print(f"   hidden {key[0]} tp {key[1]}: mb {m1} {v1:.3f} ms -> mb {m2} {v2:.3f} ms "
                      f"({100 * (v2 - v1) / v1:+.1f} %)")
    print(f"   {violations} of {sum(len(v) - 1 for v in series.values())} adjacent pairs")

    # 4. the floor under an ordering-respecting model
    weight = defaultdict(float)  # cases per cell, weighting its per-layer time
    for c in cases:
        weight[(c["h"], c["tp"], c["mb"])] += 1
    fixed_of = {key: f for key, (f, _) in per_mb.items()}
    def floor(l1):
        monotone = {}
        for key, pts in series.items():
            pts = sorted(pts)
            fitted = isotonic_non_decreasing([v for _, v in pts],
                                             [weight[(key[0], key[1], m)] for m, _ in pts], l1)
            for (mb, _), v in zip(pts, fitted):
                monotone[(key[0], key[1], mb)] = v
        errors = []
        for c in cases:
            k = (c["h"], c["tp"], c["mb"])
            lk = (c["h"], c["layers"], c["tp"], c["dp"], c["mb"])
            if k not in monotone or lk not in fixed_of:
                continue
            composed = fixed_of[lk] + c["n"] * (rest[k] + c["layers"] * monotone[k])
            errors.append((composed - c["ms"]) / c["ms"])
        return errors

    print("4. Estimated floor under a model whose per-layer time cannot fall as the micro-batch "
          "grows:")
    for l1, name in ((False, "least squares"), (True, "least absolute deviation")):
        errors = floor(l1)
        mae = 100 * sum(abs(e) for e in errors) / len(errors)
        worst = max(errors, key=abs)
        print(f"   {name}: {len(errors)} cases, MAE {mae:.2f} %, worst {100 * worst:+.2f} %")


if __name__ == "__main__":
    main()
