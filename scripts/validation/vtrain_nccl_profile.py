#!/usr/bin/env python3
"""Writes scenarios/validation/profiles/vtrain-a100-nccl-tests.json: the all-reduce times vTrain
published for the A100 machine its ground truth ran on, as a parasim cost-model profile (version
2, docs/profile.md), so that the vTrain cases are simulated with that machine's collectives.

The source: VIA-Research/vTrain at commit f8dda84 (MIT licence), trace/a100/AR_GPU{n}_1M_1024M_LUT,
n = 2..8. Each file is nccl-tests all_reduce_perf output (float, one node): message size in
bytes from 1 MiB to 1 GiB in 1 MiB steps, then the out-of-place time (ns) and bus bandwidth, then
the in-place time and bus bandwidth. vTrain's predictor reads these tables for its tensor- and
data-parallel all-reduces (src/predictor.py).

This keeps the out-of-place times of the fewest rows (chosen greedily, the first and last
always) such that log-log interpolation between them, which is how parasim reads a series, is
within 1 % of every published row (the tables have kinks where NCCL changes algorithm or
protocol), and adds no fit: outside 1 MiB .. 1 GiB parasim extrapolates with the line through
the smallest and largest points and says so in a warning.

Usage: scripts/validation/vtrain_nccl_profile.py VTRAIN_CHECKOUT [OUT]
  VTRAIN_CHECKOUT: a clone of github.com/VIA-Research/vTrain (a work tree, or a bare git
  directory, read at f8dda84)
"""
import json
import math
import os
import subprocess
import sys

COMMIT = "f8dda8473a48b373b1d25f51f52d685bff5150c5"
MIB = 1 << 20
TOLERANCE = 0.01  # interpolation error allowed against any published row


def read_lut(checkout, n):
    path = f"trace/a100/AR_GPU{n}_1M_1024M_LUT"
    if os.path.isfile(os.path.join(checkout, path)):
        with open(os.path.join(checkout, path)) as f:
            text = f.read()
    else:
        text = subprocess.run(["git", "--git-dir", checkout, "show", f"{COMMIT}:{path}"],
                              check=True, capture_output=True, text=True).stdout
    rows = []
    for line in text.splitlines()[1:]:
        size, _count, dtype, time_ns, _busbw, _ip_time, _ip_busbw = line.split(",")
        assert dtype == "float", line
        rows.append((int(size), float(time_ns) * 1e-9))
    assert rows[0][0] == MIB and rows[-1][0] == 1024 * MIB and len(rows) == 1024, path
    return rows


def kept_points(rows, tolerance):
    """The fewest rows, greedily, such that log-log interpolation between them is within
    `tolerance` of every row: start from the first and last, add the worst-served row."""
    kept = {0, len(rows) - 1}
    while True:
        points = [rows[i] for i in sorted(kept)]
        worst, at = max((abs(interpolate(points, s) / t - 1), i) for i, (s, t) in enumerate(rows))
        if worst <= tolerance:
            return points, worst
        kept.add(at)


def interpolate(points, size):
    for (s0, t0), (s1, t1) in zip(points, points[1:]):
        if s0 <= size <= s1:
            f = (math.log(size) - math.log(s0)) / (math.log(s1) - math.log(s0))
            return math.exp(math.log(t0) + f * (math.log(t1) - math.log(t0)))
    raise ValueError(size)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    checkout = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) == 3 else os.path.normpath(os.path.join(
        os.path.dirname(__file__), "..", "..", "scenarios", "validation", "profiles",
        "vtrain-a100-nccl-tests.json"))
    series = []
    counts = []
    worst = 0.0
    for n in range(2, 9):
        rows = read_lut(checkout, n)
        kept, error = kept_points(rows, TOLERANCE)
        worst = max(worst, error)
        counts.append(len(kept))
        series.append({
            "kind": "all-reduce",
            "group": {"size": n, "gpus_per_node": n, "nodes": 1},
            "points": [{"bytes": s, "in_place": False, "median_s": t, "p20_s": t, "p80_s": t,
                        "samples": 1, "correct": True} for s, t in kept],
        })
    profile = {
        "parasim_profile": 2,
        "source": ("All-reduce times of the A100 machine vTrain's ground truth ran on, as vTrain "
                   "published them: nccl-tests all_reduce_perf, float, 2 to 8 GPUs of one node, "
                   "1 MiB to 1 GiB (github.com/VIA-Research/vTrain @ f8dda84, "
                   "trace/a100/AR_GPU{n}_1M_1024M_LUT; MIT licence). Out-of-place times of "
                   "the rows that log-log interpolation needs to stay within "
                   f"{100 * worst:.2f} % of every published row. Written by "
                   "scripts/validation/vtrain_nccl_profile.py."),
        "provenance": {
            "device": "A100-SXM4-80GB",
            "device_count": 8,
            "nodes": 1,
            "command_line": "nccl-tests all_reduce_perf as published by vTrain (trace/a100)",
        },
        "complete": True,
        "measurements": {"collectives": series},
    }
    with open(out, "w") as f:
        json.dump(profile, f, indent=1)
        f.write("\n")
    print(f"wrote {out}: 7 series of {counts} points; interpolation within "
          f"{100 * worst:.2f} % of the published rows")


if __name__ == "__main__":
    main()
