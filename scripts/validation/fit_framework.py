#!/usr/bin/env python3
"""Fits a few global host costs of one framework preset on the development set, and prints the fit
and its residuals.

The issue (14, section 2) allows a small number of global parameters of a framework preset (a host
cost per op, a fixed cost per step) to be fitted on the development set, if each is a physical
quantity whose fitted value is checked against an independent published figure; never a per-case
or per-model factor. This script does the fitting; the check against the published figures is in
docs/frameworks.md ("Fitting"), and a preset adopts a fitted value only by an edit of
strategies/framework/framework_presets.cpp, with the figure and its source in the comment.

How: every case of the development set (scenarios/validation) whose scenario names the preset
(training.framework, a name or {"preset": ...}) is rewritten with the candidate values as host
overrides, {"preset": P, "host": {"forward_op": "12 us", ...}}, into a temporary folder, and
`parasim validate-against` runs it; the objective is the mean absolute step-time error of those
cases. Each parameter is searched by golden section on its interval, one at a time (a coordinate
descent, --rounds passes), so a fit costs a few dozen runs. With --every N the search uses every
N-th single-node case of each file (the multi-node and other cases all), then the best values are
confirmed once on every case.

Parameters: any field of the preset's "host" object (docs/scenario.md, training.framework), given
as NAME=LOW:HIGH in microseconds. "forward_op" keeps the preset's no-grad cost at its sourced
distance below it (forward_op_no_grad = forward_op - (7 - 5) us, pytorch/pytorch#41383) unless
forward_op_no_grad is fitted too.

Usage:
  scripts/validation/fit_framework.py --preset megatron-deepspeed \
      --param forward_op=5:40 --param autograd_function=5:60 [--every 4] [--rounds 2]
  scripts/validation/fit_framework.py --preset megatron-deepspeed --eval forward_op=12
                                                 (one evaluation, residuals printed)
Python 3 standard library only; parasim from --build (default: build).
"""

import argparse
import copy
import json
import math
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEV_SET = ROOT / "scenarios" / "validation"
NO_GRAD_GAP_US = 7.0 - 5.0  # pytorch/pytorch#41383: 7 us per op with requires_grad, 5 without
GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def framework_preset(scenario):
    fw = scenario.get("training", {}).get("framework", "megatron-lm")
    return fw if isinstance(fw, str) else fw.get("preset")


def load_cases(preset):
    """The validation files with only the cases of `preset`: [(file name, document)]."""
    out = []
    for path in sorted(DEV_SET.glob("*.json")):
        doc = json.loads(path.read_text())
        if "parasim_validation" not in doc:
            continue
        cases = [c for c in doc["cases"]
                 if "scenario" in c and framework_preset(c["scenario"]) == preset]
        if cases:
            doc = dict(doc, cases=cases)
            out.append((path.name, doc))
    return out


def subset(files, every):
    """Every `every`-th case of a family with more than 100 cases; all the others."""
    if every <= 1:
        return files
    out = []
    for name, doc in files:
        counts = {}
        for c in doc["cases"]:
            counts[c["family"]] = counts.get(c["family"], 0) + 1
        seen = {}
        kept = []
        for c in doc["cases"]:
            i = seen.get(c["family"], 0)
            seen[c["family"]] = i + 1
            if counts[c["family"]] <= 100 or i % every == 0:
                kept.append(c)
        out.append((name, dict(doc, cases=kept)))
    return out


def with_host(files, preset, values):
    """The files with every case's framework replaced by the preset plus host overrides."""
    host = {k: f"{v:.6g} us" for k, v in values.items()}
    if "forward_op" in values and "forward_op_no_grad" not in values:
        host["forward_op_no_grad"] = f"{max(0.0, values['forward_op'] - NO_GRAD_GAP_US):.6g} us"
    out = []
    for name, doc in files:
        doc = copy.deepcopy(doc)
        for c in doc["cases"]:
            fw = c["scenario"]["training"].get("framework", preset)
            fw = {"preset": fw} if isinstance(fw, str) else dict(fw)
            fw["host"] = dict(fw.get("host", {}), **host)
            c["scenario"]["training"]["framework"] = fw
        out.append((name, doc))
    return out


def run(parasim, files, threads):
    """validate-against on `files`; the result JSON."""
    with tempfile.TemporaryDirectory(prefix="parasim-fit-") as tmp:
        for name, doc in files:
            (pathlib.Path(tmp) / name).write_text(json.dumps(doc))
        result = pathlib.Path(tmp) / "result.out"
        proc = subprocess.run([str(parasim), "validate-against", tmp, "--threads", str(threads),
                               "--worst", "0", "--json", str(result)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            sys.exit(f"parasim validate-against failed ({proc.returncode}):\n{proc.stderr}")
        return json.loads(result.read_text())


def mae(result):
    errors = [abs(c["signed_error_fraction"]) for c in result["cases"] if c["status"] == "simulated"]
    return sum(errors) / len(errors)


class Objective:
    def __init__(self, parasim, files, preset, threads):
        self.parasim, self.files, self.preset, self.threads = parasim, files, preset, threads
        self.log = []

    def __call__(self, values):
        value = mae(run(self.parasim, with_host(self.files, self.preset, values), self.threads))
        self.log.append((dict(values), value))
        shown = ", ".join(f"{k} {v:.2f} us" for k, v in values.items())
        print(f"  eval {len(self.log):3d}: {shown}: MAE {100 * value:.2f} %", flush=True)
        return value


def golden_section(f, low, high, iterations):
    """The minimiser of a unimodal f on [low, high], to (high - low) x 0.618^iterations."""
    a, b = low, high
    c, d = b - GOLDEN * (b - a), a + GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iterations):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - GOLDEN * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + GOLDEN * (b - a)
            fd = f(d)
    return (c, fc) if fc <= fd else (d, fd)


def residuals(result, files):
    """Per source and family, and per (family, tp, micro-batch) where published: the errors."""
    published = {}
    for _, doc in files:
        for c in doc["cases"]:
            published[c["id"]] = c.get("published", {})
    print("  group                                     cases    MAE %   bias %  worst %")
    groups = {}
    for c in result["cases"]:
        if c["status"] != "simulated":
            continue
        e = c["signed_error_fraction"]
        groups.setdefault(("source", c["source"]), []).append(e)
        groups.setdefault(("family", c["family"]), []).append(e)
        par = published.get(c["id"], {}).get("parallel", {})
        if "tp" in par and "micro_batch_size" in par:
            key = f"{c['family']} tp {par['tp']} mb {par['micro_batch_size']}"
            groups.setdefault(("cell", key), []).append(e)
    groups[("overall", "")] = [c["signed_error_fraction"] for c in result["cases"]
                               if c["status"] == "simulated"]
    order = {"overall": 0, "source": 1, "family": 2, "cell": 3}
    for (scope, name), errors in sorted(groups.items(), key=lambda kv: (order[kv[0][0]], kv[0][1])):
        worst = max(errors, key=abs)
        label = f"{scope} {name}".strip()
        print(f"  {label:40s} {len(errors):6d} {100 * statistics.mean(map(abs, errors)):8.2f} "
              f"{100 * statistics.mean(errors):8.2f} {100 * worst:8.2f}")


def parse_values(items, ranges):
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        if not value:
            sys.exit(f"expected NAME={'LOW:HIGH' if ranges else 'VALUE'} (us), got {item!r}")
        if ranges:
            low, _, high = value.partition(":")
            out[name] = (float(low), float(high))
        else:
            out[name] = float(value)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__[__doc__.index("Usage:"):])
    ap.add_argument("--preset", required=True, help="the framework preset whose cases are fitted")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=LOW:HIGH",
                    help="a host cost to fit on [LOW, HIGH] microseconds (repeatable)")
    ap.add_argument("--eval", action="append", default=[], metavar="NAME=VALUE",
                    help="evaluate these host costs (us) on every case and print the residuals")
    ap.add_argument("--every", type=int, default=1,
                    help="search on every N-th case of families over 100 cases (default 1: all)")
    ap.add_argument("--rounds", type=int, default=1, help="coordinate-descent passes (default 1)")
    ap.add_argument("--iterations", type=int, default=7,
                    help="golden-section steps per parameter and pass (default 7)")
    ap.add_argument("--build", default=str(ROOT / "build"), help="parasim's build folder")
    ap.add_argument("--parasim", help="the parasim executable (default: BUILD/cli/parasim)")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    parasim = pathlib.Path(args.parasim or pathlib.Path(args.build) / "cli" / "parasim")
    if not parasim.exists():
        sys.exit(f"no {parasim}: build parasim first (or give --build)")
    files = load_cases(args.preset)
    if not files:
        sys.exit(f"no case of the development set names the framework preset {args.preset!r}")
    count = sum(len(doc["cases"]) for _, doc in files)
    print(f"preset {args.preset}: {count} cases in {', '.join(n for n, _ in files)}")

    full = Objective(parasim, files, args.preset, args.threads)
    if args.eval or not args.param:
        values = parse_values(args.eval, ranges=False)
        print("evaluation" + (" (the preset's own values)" if not values else ""))
        result = run(parasim, with_host(files, args.preset, values), args.threads)
        print(f"  MAE {100 * mae(result):.2f} %")
        residuals(result, files)
        return

    ranges = parse_values(args.param, ranges=True)
    search_files = subset(files, args.every)
    n_search = sum(len(doc["cases"]) for _, doc in search_files)
    print(f"search on {n_search} cases (--every {args.every}), golden section per parameter, "
          f"{args.rounds} pass(es) of {args.iterations} steps")
    search = Objective(parasim, search_files, args.preset, args.threads)
    values = {k: (lo + hi) / 2 for k, (lo, hi) in ranges.items()}
    for _ in range(args.rounds):
        for name, (low, high) in ranges.items():
            def along(x, name=name):
                return search(dict(values, **{name: x}))
            values[name], best = golden_section(along, low, high, args.iterations)
    print("fit: " + ", ".join(f"{k} = {v:.2f} us" for k, v in values.items()) +
          f" (search MAE {100 * best:.2f} %)")
    for name, (low, high) in ranges.items():
        if min(values[name] - low, high - values[name]) < 0.05 * (high - low):
            print(f"  warning: {name} ended at the edge of its interval [{low}, {high}] us")
    print("residuals on every case of the preset, before (the preset's values) and after the fit:")
    print(" before")
    residuals(run(parasim, with_host(files, args.preset, {}), args.threads), files)
    print(" after")
    after = run(parasim, with_host(files, args.preset, values), args.threads)
    residuals(after, files)
    full.log.append((values, mae(after)))


if __name__ == "__main__":
    main()
