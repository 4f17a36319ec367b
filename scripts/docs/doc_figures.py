#!/usr/bin/env python3
"""Regenerate, or check, every figure the docs quote from parasim's own output.

A doc marks each generated region with two lines of its own:

    <!-- figures: RECIPE-NAME -->
    ...text this script writes...
    <!-- /figures -->

The text between them is exactly what the named recipe prints now (indented like the opening
marker, so that a region can sit inside a list item). A recipe runs parasim on shipped scenarios,
or on copies of one it writes to a temporary folder with named fields changed (never under
scenarios/), and renders Markdown: a table, a fenced output block or a sentence. Figures that are
not parasim's (papers, datasheets, measurements) are constants here, next to the recipe that
prints them beside parasim's, with their source.

Whole files parasim draws for a doc (FILES: the TSP memory picture) are regenerated and checked
the same way.

Usage:
  scripts/docs/doc_figures.py [--check] [--parasim PATH] [--root DIR]
  scripts/docs/doc_figures.py --list                  # the recipes and what each shows
  scripts/docs/doc_figures.py --show RECIPE [...]     # what a recipe prints now, docs untouched

Without --check the regions are rewritten in place. With --check nothing is written: exit 1 with
a unified diff of every region whose text differs from what the build prints now. Exit 2 for a
marker naming an unknown recipe, a recipe no doc uses, a malformed region, or a command that
failed. --parasim defaults to ROOT/build/cli/parasim, --root to the repository holding this
script. Python 3 standard library only.
"""
import argparse
import concurrent.futures
import copy
import decimal
import difflib
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

GIB = 2 ** 30
DOC_GLOBS = ("docs/*.md", "README.md")
WIDTH = 98  # prose lines of a generated region (the docs wrap at about 100 columns)
BEGIN = re.compile(r"^(?P<indent>[ \t]*)<!-- figures: (?P<name>\S+) -->$")
END = re.compile(r"^[ \t]*<!-- /figures -->$")
DELETE = object()  # a field value in derive(): remove the field


class Failure(Exception):
    """A command a recipe needs failed, or its output is not what the recipe reads."""


# ---------------------------------------------------------------------------------------------
# Running parasim


class Runner:
    """Runs parasim and the repository's scripts from the repository root, each distinct command
    once (recipes that quote the same output share it), and writes scenario copies to a
    temporary folder."""

    def __init__(self, parasim, root, work, log=None):
        self.parasim_path = str(parasim)
        self.log = log  # a file to which each command's wall time goes, or None
        self.root = Path(root)
        self.work = Path(work)
        self._lock = threading.Lock()
        self._results = {}

    def _once(self, key, compute):
        with self._lock:
            entry = self._results.setdefault(key, {"lock": threading.Lock()})
        with entry["lock"]:
            if "value" not in entry:
                entry["value"] = compute()
            return entry["value"]

    def command(self, argv, expect_rc=0):
        """stdout and stderr of argv (run in the root); Failure unless it exits expect_rc."""
        argv = [str(a) for a in argv]

        def run():
            start = time.monotonic()
            p = subprocess.run(argv, cwd=self.root, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            if self.log:
                shown = " ".join(Path(a).name if a.startswith(str(self.work)) else a
                                 for a in argv[:8])
                print(f"{time.monotonic() - start:7.2f} s  {shown}", file=self.log, flush=True)
            if p.returncode != expect_rc:
                raise Failure(f"`{' '.join(argv)}` exited {p.returncode} (expected {expect_rc}):"
                              f"\n{p.stderr.strip()[-2000:]}")
            return p.stdout, p.stderr
        return self._once(("cmd", tuple(argv), expect_rc), run)

    def parasim(self, *args, expect_rc=0):
        """stdout of `parasim ARGS`."""
        return self.command([self.parasim_path, *args], expect_rc)[0]

    def parasim_stderr(self, *args, expect_rc=0):
        """stderr of `parasim ARGS`."""
        return self.command([self.parasim_path, *args], expect_rc)[1]

    def json(self, *args):
        """The JSON `parasim ARGS --json -` writes."""
        return self._once(("json",) + tuple(str(a) for a in args),
                          lambda: json.loads(self.parasim(*args, "--json", "-")))

    def script(self, path, *args):
        """stdout of the repository's Python script at path (relative to the root)."""
        return self.command([sys.executable, self.root / path, *args])[0]

    def temp(self, name):
        """A path in the temporary folder."""
        return self.work / name

    def derive(self, scenario, changes):
        """A copy of the shipped scenario (path relative to the root) with fields changed:
        changes maps a dotted path ("model.low_rank.variant") to its new value, or to DELETE (a
        preset name met on the way, "model": "llama2-7b", becomes {"preset": "llama2-7b"}).
        Returns the copy's path in the temporary folder, named after the changes."""
        label = ",".join(f"{k}={'-' if v is DELETE else json.dumps(v, sort_keys=True)}"
                         for k, v in sorted(changes.items()))

        def write():
            doc = json.loads((self.root / scenario).read_text())
            for dotted, value in sorted(changes.items()):
                *parents, leaf = dotted.split(".")
                node = doc
                for key in parents:
                    if not isinstance(node.get(key), dict):
                        node[key] = {} if key not in node else {"preset": node[key]}
                    node = node[key]
                if value is DELETE:
                    node.pop(leaf, None)
                else:
                    node[leaf] = copy.deepcopy(value)
            digest = hashlib.sha1(label.encode()).hexdigest()[:10]
            path = self.work / f"{Path(scenario).stem}-{digest}.json"
            path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
            return path
        return self._once(("derive", scenario, label), write)


# ---------------------------------------------------------------------------------------------
# Number formats (as the docs write them)

def fixed(x, digits):
    """x with a fixed number of decimals; never "-0.0"."""
    s = f"{x:.{digits}f}"
    return s[1:] if s.startswith("-") and float(s) == 0 else s


def signed(x, digits=1, minus="-"):
    """x with its sign ("+9.6", "-14.3"; "0.0" when it rounds to zero)."""
    s = fixed(x, digits)
    s = s if s.startswith("-") or float(s) == 0 else "+" + s
    return s.replace("-", minus)


def thousands(n):
    """A count with thousands separators: 1,503."""
    return f"{round(n):,}"


def sci(x, digits=3):
    """Scientific notation as the docs write it: 1.607e5."""
    mantissa, exponent = f"{x:.{digits}e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def half_up(text, digits):
    """A printed decimal rounded half up to digits decimals ("7.715" -> "7.72"), as a reader
    rounds what the command printed."""
    step = decimal.Decimal(1).scaleb(-digits)
    return str(decimal.Decimal(text).quantize(step, rounding=decimal.ROUND_HALF_UP))


def percent_change(value, reference):
    """(value / reference - 1) in percent."""
    return 100.0 * (value / reference - 1.0)


def signed_range(values, digits=1, minus="-"):
    """The smallest and largest of values, signed: "-7.4 to +1.7"."""
    lo, hi = min(values), max(values)
    if fixed(lo, digits) == fixed(hi, digits):
        return signed(lo, digits, minus)
    return f"{signed(lo, digits, minus)} to {signed(hi, digits, minus)}"


def span(values, digits):
    """The smallest and largest of values, unsigned: "45.95-81.10"."""
    return f"{fixed(min(values), digits)}-{fixed(max(values), digits)}"


def table(header, rows, align=None):
    """A Markdown table; align is a string of "l" / "r" per column (default all "l")."""
    align = align or "l" * len(header)
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(rule) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(re.sub(r"\|  (?=\|)", "| ", line) for line in lines)


def fenced(text, info=""):
    """text in a fenced code block."""
    return f"```{info}\n{text.rstrip()}\n```"


def output_block(run, args, stream="stdout", expect_rc=0, info=""):
    """What `parasim ARGS` prints on stream (stdout or stderr), verbatim in a fenced block."""
    out, err = run.command([run.parasim_path, *args], expect_rc)
    return fenced(out if stream == "stdout" else err, info)


def rows_by(rows, *keys):
    """compare --json rows indexed by the given fields (one field: by its value)."""
    out = {}
    for r in rows:
        if not r.get("applicable", True):
            raise Failure(f"variant {r.get('variant')} does not apply: {r.get('reason')}")
        out[r[keys[0]] if len(keys) == 1 else tuple(r[k] for k in keys)] = r
    return out


def max_peak(row, key="peak_memory_bytes"):
    """The fullest simulated GPU's peak of a simulate result."""
    return max(row[key])


def collective(result, kind, op):
    """A simulate result's row of `collectives` for one kind ("tp", "cp") and op."""
    for c in result["collectives"]:
        if c["kind"] == kind and c["op"] == op:
            return c
    raise Failure(f"no {kind} {op} in {result.get('scenario')}'s collectives")


# ---------------------------------------------------------------------------------------------
# docs/boost.md: BOOST's low-rank models and bottleneck-aware tensor parallelism

BOOST_MODELS = ("1b", "3b", "7b-tp4", "13b-tp4-pp2", "30b-16gpu")
BOOST_PROFILE = "scenarios/profiles/boost-perlmutter-allreduce.json"
# BOOST README "End to end System Performance (Fig. 5)" (30B from secondary notes;
# docs/boost-configs.md): seconds per iteration full-rank / vanilla / BOOST, and BOOST's speedups
# over full-rank / vanilla as published.
BOOST_PAPER = {
    "1b": ((0.85, 0.56, 0.59), (1.44, 0.95)),
    "3b": ((1.14, 1.41, 0.78), (1.46, 1.81)),
    "7b-tp4": ((1.06, 1.64, 0.72), (1.47, 2.28)),
    "13b-tp4-pp2": ((2.07, 2.42, 1.30), (1.59, 1.86)),
    "30b-16gpu": ((2.43, 2.58, 1.27), (1.91, 2.03)),
}
BOOST_TOLERANCE = 15.0  # percent, the issue's
# Paper vanilla / BOOST seconds per variant at 7B TP 4 (BOOST README).
BOOST_VARIANTS = {"svd": (1.57, 0.70), "cola": (1.64, 0.72), "lax": (1.72, 0.75)}


def slashed(values, digits=2, suffix=""):
    """"0.85 / 0.56 / 0.59": values with a fixed number of decimals."""
    return " / ".join(f"{v:.{digits}f}{suffix}" for v in values)


def boost_steps(run, model, profile=None, scenario=None):
    """The compare rows of megatron / vanilla / btp on scenarios/boost-MODEL.json (or the given
    copy of it)."""
    args = ["compare", scenario or f"scenarios/boost-{model}.json",
            "--placements", "megatron,vanilla,btp"]
    if profile:
        args += ["--profile", profile]
    rows = rows_by(run.json(*args)["rows"], "variant")
    return rows["megatron"], rows["vanilla"], rows["btp"]


def boost_times(run, profile=None):
    """The paper's table beside parasim's: seconds per iteration full-rank / vanilla / BTP and
    BTP's speedups, per shipped boost scenario (with --profile: BOOST's measured all-reduces)."""
    column = "parasim with the profile (s)" if profile else "parasim (s)"
    rows = []
    for m in BOOST_MODELS:
        full, vanilla, btp = (r["step_time_s"] for r in boost_steps(run, m, profile))
        paper_s, paper_x = BOOST_PAPER[m]
        rows.append((m, slashed(paper_s), slashed((full, vanilla, btp)), slashed(paper_x, 2, "x"),
                     slashed((full / btp, vanilla / btp), 2, "x")))
    return table(("model", "paper (s)", column, "paper speedup vs full / vanilla",
                  "parasim speedup vs full / vanilla"), rows)


def boost_7b_speedups(run, profile):
    """BTP over full-rank and over vanilla at 7B TP 4, each with its error against the paper."""
    full, vanilla, btp = (r["step_time_s"] for r in boost_steps(run, "7b-tp4", profile))
    out = []
    for ours, paper in zip((full / btp, vanilla / btp), BOOST_PAPER["7b-tp4"][1]):
        out.append((ours, paper, percent_change(ours, paper)))
    return out


def inside(error):
    return "inside" if abs(error) <= BOOST_TOLERANCE else "outside"


def boost_check(run):
    """The issue's check on 7B TP 4 without the profile: BTP's speedups against the paper's,
    inside or outside ±15 %."""
    (f, fp, fe), (v, vp, ve) = boost_7b_speedups(run, None)
    return (f"On 7B TP 4 (the issue's check): BTP over full-rank {f:.2f}x against the paper's "
            f"{fp:.2f}x ({signed(fe)} %, {inside(fe)} ±15 %); BTP over vanilla {v:.2f}x against "
            f"{vp:.2f}x ({signed(ve)} %, {inside(ve)} ±15 %).")


def boost_check_profile(run):
    """The same check with BOOST's measured all-reduces, and whether 1B and 3B move with the
    profile."""
    (f, fp, fe), (v, vp, ve) = boost_7b_speedups(run, BOOST_PROFILE)
    both = {inside(fe), inside(ve)}
    verdict = f"both {both.pop()}" if len(both) == 1 else \
        f"full-rank {inside(fe)}, vanilla {inside(ve)}"
    same = all(f"{a['step_time_s']:.3f}" == f"{b['step_time_s']:.3f}"
               for m in ("1b", "3b")
               for a, b in zip(boost_steps(run, m), boost_steps(run, m, BOOST_PROFILE)))
    moves = "1B and 3B do not change" if same else "1B and 3B change too"
    return (f"On 7B TP 4: {f:.2f}x against {fp:.2f}x ({signed(fe)} %) and {v:.2f}x against "
            f"{vp:.2f}x ({signed(ve)} %), {verdict} the issue's ±15 %; {moves}.")


def boost_cited(run):
    """The figures "Why the differences" cites: 1B with unfused attention, one GPU's vanilla and
    BTP, full-rank and BTP against the paper at 3B-30B, 30B's speedup, and peak memory."""
    _, van1, btp1 = boost_steps(run, "1b")
    flash = run.json("simulate", "scenarios/boost-1b.json")
    unfused = run.json("simulate", run.derive("scenarios/boost-1b.json",
                                              {"training.attention": "unfused"}))
    errors = []
    for m in BOOST_MODELS[1:]:
        full, _, btp = boost_steps(run, m)
        paper_full, _, paper_btp = BOOST_PAPER[m][0]
        errors += [percent_change(full["step_time_s"], paper_full),
                   percent_change(btp["step_time_s"], paper_btp)]
    full30, _, btp30 = boost_steps(run, "30b-16gpu")
    small = [r for m in BOOST_MODELS[:3] for r in boost_steps(run, m)]
    peaks = [max_peak(r) / GIB for r in small]
    vanilla7 = boost_steps(run, "7b-tp4")[1]
    hbm = vanilla7["hbm_capacity_bytes"] / GIB
    fits = "fits" if vanilla7["fits_in_hbm"] else "does not fit"
    rows = [
        ("1B step (BTP), unfused attention / FlashAttention",
         f"{unfused['step_time_s']:.2f} / {flash['step_time_s']:.2f} s", ""),
        ("1B step on one GPU, vanilla / BTP", f"{van1['step_time_s']:.2f} / "
         f"{btp1['step_time_s']:.2f} s", f"{slashed(BOOST_PAPER['1b'][0][1:])} s"),
        ("full-rank and BTP steps against the paper's, 3B-30B",
         f"{signed_range(errors, 0)} %", ""),
        ("30B, BTP over full-rank", f"{full30['step_time_s'] / btp30['step_time_s']:.2f}x",
         f"{BOOST_PAPER['30b-16gpu'][1][0]:.2f}x"),
        ("peak memory per GPU, 1B-7B, all three placements (tensors)", f"{span(peaks, 2)} GiB",
         ""),
        ("vanilla 7B: tensors / with the CUDA context and NCCL buffers, against the A100's HBM",
         f"{max_peak(vanilla7) / GIB:.2f} / {max_peak(vanilla7, 'device_memory_bytes') / GIB:.2f}"
         f" GiB of {hbm:.1f} GiB: {fits}", ""),
    ]
    return table(("figure", "parasim", "paper"), rows)


def boost_variants(run):
    """Vanilla and BTP seconds per iteration of SVD, CoLA and LaX at 7B TP 4 with the all-reduce
    profile (scenario copies with model.low_rank.variant changed), and each step's size."""
    steps = {}
    for variant in BOOST_VARIANTS:
        copy_ = run.derive("scenarios/boost-7b-tp4.json", {"model.low_rank.variant": variant})
        _, vanilla, btp = boost_steps(run, "7b-tp4", BOOST_PROFILE, scenario=copy_)
        steps[variant] = (vanilla["step_time_s"], btp["step_time_s"])
    rows = [(v, slashed(BOOST_VARIANTS[v]), slashed(steps[v])) for v in BOOST_VARIANTS]
    order = list(BOOST_VARIANTS)

    def moves(values):
        return " and ".join(f"{signed(percent_change(values[b], values[a]))} %"
                            for a, b in zip(order, order[1:]))
    sentence = (
        f"From SVD to CoLA to LaX, BTP's step grows by {moves({v: steps[v][1] for v in order})} "
        f"(paper {moves({v: BOOST_VARIANTS[v][1] for v in order})}), vanilla's by "
        f"{moves({v: steps[v][0] for v in order})} (paper "
        f"{moves({v: BOOST_VARIANTS[v][0] for v in order})}).")
    return table(("variant", "paper vanilla / BOOST (s)", "parasim vanilla / BTP (s)"),
                 rows) + "\n\n" + sentence


# ---------------------------------------------------------------------------------------------
# docs/schedules.md: PACI's setup

PACI = "scenarios/paci-gpt2-medium.json"


PACI_COMPARE = ("compare", PACI, "--chunks", "3")
CHUNKED_SCHEDULES = "1f1b,zb-1p,zb-2p,zb-v,dualpipev,interleaved-zb,paci"


def chunked_svgs(run):
    """The pictures of `compare PACI --schedules CHUNKED_SCHEDULES --svg DIR`."""
    def compute():
        out = run.temp("chunked-svg")
        run.parasim("compare", PACI, "--schedules", CHUNKED_SCHEDULES, "--svg", out)
        return {p.name: p.read_text() for p in out.iterdir()}
    return run._once(("chunked-svg",), compute)


def paci_rows(run):
    return rows_by(run.json(*PACI_COMPARE)["rows"], "variant")


def paci_mem(run):
    """PACI's mem mode on the same scenario (a copy with parallel.paci_mode "mem"): throughput
    and stage 0's peak against perf mode's."""
    mem = run.json("simulate", run.derive(PACI, {"parallel.paci_mode": "mem"}))
    perf = paci_rows(run)["paci"]
    return (f"PACI `mem` mode on the same scenario (`\"paci_mode\": \"mem\"`): "
            f"{sci(mem['tokens_per_s'])} tokens/s, stage-0 peak "
            f"{mem['peak_memory_bytes'][0] / GIB:.2f} GiB instead of "
            f"{perf['peak_memory_bytes'][0] / GIB:.2f} GiB (only the stage input is kept; the "
            f"stage forward is recomputed).")


def stage_runs(values):
    """"1 on stages 0-6, 0 on stage 7": runs of equal values over the stages."""
    parts, start = [], 0
    for i in range(1, len(values) + 1):
        if i == len(values) or values[i] != values[start]:
            stages = f"stages {start}-{i - 1}" if i - 1 > start else f"stage {start}"
            parts.append(f"{values[start]} on {stages}")
            start = i
    return ", ".join(parts)


def paci_claims(run):
    """The PACI paper's claims beside parasim on paci-gpt2-medium: throughput against ZB-H2,
    peak memory against 1F1B, staleness per stage, speedup over the flush baselines."""
    rows = paci_rows(run)
    paci, zbh1, zbh2 = rows["paci"], rows["zb-h1"], rows["zb-h2"]
    f1b, inter = rows["1f1b"], rows["interleaved-1f1b"]
    tps = {k: r["tokens_per_s"] for k, r in rows.items()}
    h1_h2 = "equals zb-h1" if round(tps["zb-h1"]) == round(tps["zb-h2"]) else \
        f"differs from zb-h1 ({sci(tps['zb-h1'])})"
    peaks = [p / GIB for p in paci["peak_memory_bytes"]]
    same = "identical to" if [f"{p:.2f}" for p in peaks] == \
        [f"{p / GIB:.2f}" for p in f1b["peak_memory_bytes"]] else "different from"
    zb = [p / GIB for p in zbh1["peak_memory_bytes"]]
    zb_stage = zb.index(max(zb))
    stale = stage_runs([s["max"] for s in paci["staleness"]])
    claims = [
        ("PACI matches or exceeds ZB-2p throughput",
         f"{sci(tps['paci'])} tokens/s, {tps['paci'] / tps['zb-h2']:.2f}x zb-h2 "
         f"({sci(tps['zb-h2'])}). parasim's zb-h2 is the handcrafted H2, not the automatic ZB-2p; "
         f"with m = P = 8 it cannot run its extra warm-up and {h1_h2}"),
        ("same peak memory as 1F1B-flush",
         f"{peaks[0]:.2f} GiB on stage 0, every stage {same} 1f1b (tested); zb-h1/h2 need "
         f"{max(zb):.2f} GiB on stage {zb_stage}, which keeps up to P micro-batches' logit "
         f"gradients until their deferred W"),
        ("at most ceil((P-s-1)/a) updates crossed; one for a >= P-1", f"max {stale}"),
        ("up to 1.69x time-to-accuracy over the best flush baseline at batch 128",
         f"{tps['paci'] / f1b['tokens_per_s']:.2f}x throughput over 1f1b, "
         f"{tps['paci'] / inter['tokens_per_s']:.2f}x over interleaved-1f1b (v = 3); the ideal "
         f"(a+P-1)/a = 1.875x is not reached because stage 7 also carries the 50257-wide head "
         f"(layers are split evenly; PACI splits by profiled time)"),
    ]
    return table(("claim (PACI paper)", "parasim on paci-gpt2-medium"), claims)


# ---------------------------------------------------------------------------------------------
# docs/tsp.md: TSP and context parallelism on MI300X

TSP = "scenarios/tsp-7b-mi300x.json"
TSP_1024 = "scenarios/tsp-7b-1024-mi300x.json"
TSP_LAYOUTS = ("tsp", "tp", "tp2xsp4", "tp4xsp2", "cp")
TSP_SEQS = (16384, 32768, 65536, 131072)
TSP_1024_LAYOUTS = ("tsp", "tp", "tp2xsp4", "tp4xsp2", "cp", "tp8xsp2")
# Zyphra's post (https://www.zyphra.com/post/tsp): peak GB per GPU, TSP and TP at 16K and 128K.
TSP_PAPER_PEAK = {("tsp", 16384): 31.0, ("tp", 16384): 31.5, ("tsp", 131072): 38.8,
                  ("tp", 131072): 70.0}
TSP_PAPER_TOKENS = {"tsp": "173M tokens/s", "matched": "66.3M tokens/s (or 86M)",
                    "ratio": "2.6x"}
TSP_PARAMS = 8.6e9  # the 7B-class model's parameters as docs/tsp.md's arithmetic takes them


def seq_label(n):
    return f"{n // 1024}K"


def tsp_rows(run, changes=None, layouts=TSP_LAYOUTS, seqs=TSP_SEQS):
    """compare --layouts rows of tsp-7b-mi300x (or a copy with changes) by (layout, length)."""
    scenario = run.derive(TSP, changes) if changes else TSP
    doc = run.json("compare", scenario, "--layouts", ",".join(layouts),
                   "--seq-lens", ",".join(map(str, seqs)))
    return rows_by(doc["rows"], "layout", "seq_len")


TSP_RECOMPUTE = {"training.recompute": "full"}


def tsp_grid(run, changes, value):
    rows = tsp_rows(run, changes)
    body = [(seq_label(s),) + tuple(value(rows[(l, s)]) for l in TSP_LAYOUTS) for s in TSP_SEQS]
    return table(("sequence",) + TSP_LAYOUTS, body)


def tsp_memory(run, changes=None):
    """Peak memory per GPU (GB = 1e9 B) of each layout at each sequence length (changes: on a
    copy of the scenario with those fields changed)."""
    return tsp_grid(run, changes, lambda r: f"{max_peak(r) / 1e9:.1f}")


def tsp_memory_notes(run):
    """Which layout has the lowest peak in each row, and the rows that do not fit the MI300X."""
    plain, full = tsp_rows(run), tsp_rows(run, TSP_RECOMPUTE)
    lowest = all(min(TSP_LAYOUTS, key=lambda l: max_peak(rows[(l, s)])) == "tsp"
                 for rows in (plain, full) for s in TSP_SEQS)
    first = ("TSP has the lowest peak in every row of both tables." if lowest else
             "TSP does not have the lowest peak in every row.")
    parts = []
    for label, rows in (("Without recomputation", plain), ("With full recomputation", full)):
        over = [f"{l.upper()} at {seq_label(s)} ({max_peak(rows[(l, s)]) / 1e9:.1f} GB)"
                for s in TSP_SEQS for l in TSP_LAYOUTS if not rows[(l, s)]["fits_in_hbm"]]
        if over:
            hbm = next(iter(rows.values()))["hbm_capacity_bytes"] / 1e9
            listed = ", ".join(over[:-1]) + " and " + over[-1] if len(over) > 1 else over[0]
            parts.append(f"{label}, {listed} do not fit the MI300X's {hbm:.0f} GB (with the "
                         f"CUDA context and NCCL buffers)")
    if not parts:
        return first + " Every row fits the MI300X."
    return first + " " + "; ".join(parts) + ": `compare` marks such rows with `GiB*`."


def tsp_paper_gap(run):
    """parasim's 128K peaks against the paper's, without and with full recomputation."""
    parts, inside_ = [], []
    for label, rows in (("without recomputation", tsp_rows(run)),
                        ("with full recomputation", tsp_rows(run, TSP_RECOMPUTE))):
        figs, errors = [], []
        for layout in ("tsp", "tp"):
            gb = max_peak(rows[(layout, 131072)]) / 1e9
            e = percent_change(gb, TSP_PAPER_PEAK[(layout, 131072)])
            errors.append(e)
            figs.append(f"{layout.upper()} {gb:.1f} GB, {signed(e, 0)} %")
            if abs(e) <= 15:
                inside_.append(f"{layout.upper()} {label}")
        where = "above" if all(e > 0 for e in errors) else \
            "below" if all(e < 0 for e in errors) else "around"
        parts.append(f"{where} the paper's {label} ({'; '.join(figs)})")
    verdict = ("outside the ±15 % the issue asks for either way, so that item stays open"
               if not inside_ else f"inside the issue's ±15 % for {' and '.join(inside_)} only")
    return f"parasim's 128K figures are {parts[0]} and {parts[1]}: {verdict}."


def line_through(at_16k, at_128k):
    """Slope (bytes per token) and intercept (bytes) of the line through two peaks in bytes, at
    16K and 128K tokens."""
    slope = (at_128k - at_16k) / (131072 - 16384)
    return slope, at_16k - 16384 * slope


def fit_line(rows, layout):
    """parasim's line for a layout, through its 16K and 128K peaks."""
    return line_through(max_peak(rows[(layout, 16384)]), max_peak(rows[(layout, 131072)]))


def paper_line(layout):
    """The paper's line for TSP or TP, through its 16K and 128K figures."""
    return line_through(TSP_PAPER_PEAK[(layout, 16384)] * 1e9,
                        TSP_PAPER_PEAK[(layout, 131072)] * 1e9)


def tsp_slopes(run):
    """Slope (kB per token of sequence, per GPU) and intercept (GB) through the 16K and 128K
    peaks, TSP and TP: the paper's and parasim's with and without full recomputation."""
    lines = {"paper": {l: paper_line(l) for l in ("tsp", "tp")}}
    for label, changes in (("parasim, full recomputation", TSP_RECOMPUTE),
                           ("parasim, no recomputation", None)):
        rows = tsp_rows(run, changes)
        lines[label] = {l: fit_line(rows, l) for l in ("tsp", "tp")}
    body = [("| | slope, kB per token | | intercept, GB | |"), "|---|---|---|---|---|",
            "| | TSP | TP | TSP | TP |"]
    for label, fit in lines.items():
        body.append(f"| {label} | {fit['tsp'][0] / 1e3:.1f} | {fit['tp'][0] / 1e3:.1f} | "
                    f"{fit['tsp'][1] / 1e9:.1f} | {fit['tp'][1] / 1e9:.1f} |")
    return "\n".join(body)


def tsp_gap_figures(run):
    """The figures the list under the slope table cites: slopes against the paper's, the
    intercepts' gap, fp32 gradients at 128K, and TSP's gathered K/V."""
    full, plain = tsp_rows(run, TSP_RECOMPUTE), tsp_rows(run)
    paper = {l: paper_line(l) for l in ("tsp", "tp")}
    ratio = {l: fit_line(full, l)[0] / paper[l][0] for l in ("tsp", "tp")}
    keep = {l: fit_line(plain, l)[0] / paper[l][0] for l in ("tsp", "tp")}
    gap = {l: (paper[l][1] - fit_line(full, l)[1]) / 1e9 for l in ("tsp", "tp")}
    fp32 = tsp_rows(run, dict(TSP_RECOMPUTE, **{"training.grad_precision": "fp32"}),
                    layouts=("tsp", "tp"), seqs=(131072,))
    fp32_figs = []
    for l in ("tsp", "tp"):
        gb = max_peak(fp32[(l, 131072)]) / 1e9
        fp32_figs.append(f"{gb:.1f} GB ({signed(percent_change(gb, TSP_PAPER_PEAK[(l, 131072)]))}"
                         f" %)")
    kv = 2 * collective(plain[("tsp", 131072)], "tp", "all-gather")["mean_message_bytes"] / 1e9
    rows = [
        ("full-recomputation slope, share of the paper's",
         f"{100 * ratio['tsp']:.0f} % / {100 * ratio['tp']:.0f} %"),
        ("no-recomputation slope, multiple of the paper's",
         f"{keep['tsp']:.1f}x / {keep['tp']:.1f}x"),
        ("the paper's intercept above parasim's (full recomputation)",
         f"{gap['tsp']:.1f} / {gap['tp']:.1f} GB (TSP's {gap['tsp'] - gap['tp']:.1f} GB more)"),
        ("128K, full recomputation, `\"grad_precision\": \"fp32\"`: peak against the paper's",
         " / ".join(fp32_figs)),
        ("TSP's gathered K/V at 128K, one bucket per round (two head shards)",
         f"{kv:.2f} GB per GPU"),
    ]
    return table(("figure", "TSP / TP"), rows)


def tsp_memory_svg(run):
    """The picture of peak memory against sequence length, as `compare --layouts ... --seq-lens
    ... --svg DIR` draws it (DIR/memory-vs-sequence.svg)."""
    out = run.temp("tsp-svg")
    out.mkdir(exist_ok=True)
    run.parasim("compare", TSP, "--layouts", ",".join(TSP_LAYOUTS),
                "--seq-lens", ",".join(map(str, TSP_SEQS)), "--svg", out)
    return (out / "memory-vs-sequence.svg").read_text()


def moe_timeline_svg(run):
    """docs/moe.md's picture: one step of Qwen3-30B-A3B cut to 2 layers and one micro-batch per
    GPU on 8 H100s (ep 8), as `compare --ep 8 --svg DIR` draws it: the experts' dispatch and
    combine on their own lane."""
    scenario = run.derive("scenarios/qwen3-30b-a3b-8gpu.json",
                          {"name": "qwen3-30b-a3b cut to 2 layers", "model.layers": 2,
                           "training.global_batch": 8})
    out = run.temp("moe-svg")
    out.mkdir(exist_ok=True)
    run.parasim("compare", scenario, "--ep", "8", "--svg", out)
    return (out / "ep_8-timeline.svg").read_text()


def every_nth_table(run):
    """docs/activation-checkpointing.md: llama3-8b-fsdp2-8gpu under none, full and torchtitan
    0.2.2's every-N-th block (N 2 and 4): step time, tokens/s, stage 0's activations."""
    scenario = "scenarios/llama3-8b-fsdp2-8gpu.json"
    variants = [("`none`", {"training.recompute": "none"}),
                ("`full` (every block)", {"training.recompute": "full"}),
                ("`every-nth` 2", {"training.recompute": "full",
                                   "training.recompute_method": "every-nth",
                                   "training.recompute_num_layers": 2}),
                ("`every-nth` 4", {"training.recompute": "full",
                                   "training.recompute_method": "every-nth",
                                   "training.recompute_num_layers": 4})]
    rows = []
    for label, changes in variants:
        r = run.json("simulate", run.derive(scenario, changes))
        act = r["memory_breakdown_bytes"][0]["activations"]
        rows.append((label, f"{r['step_time_s']:.3f}", f"{r['tokens_per_s']:,.0f}",
                     f"{act / 2**30:.2f}"))
    return table(("recompute", "step s", "tokens/s", "stage 0 activations GiB"), rows, "lrrr")


def pytorch_native_svgs(run, scenario, name, axis, values, files):
    """compare's per-variant pictures of a shipped scenario cut to 2 layers and one micro-batch
    per GPU (docs/pytorch-native.md): `values` on the `axis` option, `files` the variant files."""
    dp = json.loads((run.root / scenario).read_text())["parallel"]["dp"]
    cut = run.derive(scenario, {"name": name, "model.layers": 2, "training.global_batch": dp})
    out = run.temp(f"{Path(scenario).stem}-{axis}-svg")
    out.mkdir(exist_ok=True)
    run.parasim("compare", cut, f"--{axis}", values, "--svg", out)
    return {f: (out / f).read_text() for f in files}


def fsdp2_memory_svgs(run):
    return pytorch_native_svgs(run, "scenarios/llama3-8b-fsdp2-8gpu.json",
                               "llama3-8b cut to 2 layers", "shardings", "zero-3,fsdp2",
                               ["zero-3-memory.svg", "fsdp2-memory.svg"])


def compile_timeline_svgs(run):
    return pytorch_native_svgs(run, "scenarios/llama3-8b-torchtitan-compile.json",
                               "llama3-8b cut to 2 layers", "compiles", "off,on",
                               ["compile_off-timeline.svg", "compile_on-timeline.svg"])


def async_tp_timeline_svgs(run):
    return pytorch_native_svgs(run, "scenarios/llama3-70b-async-tp.json",
                               "llama3-70b cut to 2 layers", "tp-overlaps", "none,async-tp",
                               ["none-timeline.svg", "async-tp-timeline.svg"])


def tsp_throughput(run):
    """Tokens per second (thousands) of each layout at each sequence length, one node."""
    return tsp_grid(run, None, lambda r: f"{r['tokens_per_s'] / 1e3:.1f}")


def tsp_throughput_recompute(run):
    """The same with full recomputation, at 16K and 128K."""
    rows = tsp_rows(run, TSP_RECOMPUTE)
    parts = [f"{seq_label(s)} " + " / ".join(f"{rows[(l, s)]['tokens_per_s'] / 1e3:.1f}"
                                             for l in TSP_LAYOUTS) for s in (16384, 131072)]
    return f"With full recomputation: {'; '.join(parts)}."


def tsp_ring(run):
    """TSP against TP at 16K and 128K on one node, and what a ring step costs in the
    simulation."""
    rows = tsp_rows(run)
    low = rows[("tsp", 16384)]["tokens_per_s"] / rows[("tp", 16384)]["tokens_per_s"]
    high = percent_change(rows[("tsp", 131072)]["tokens_per_s"],
                          rows[("tp", 131072)]["tokens_per_s"])
    ring = collective(rows[("tsp", 16384)], "tp", "send-recv")
    return (f"At 16K TSP runs at {low:.2f} of TP's rate; at 128K it is {abs(high):.1f} % "
            f"{'ahead of' if high >= 0 else 'behind'} TP. TSP's ring steps (its tp send-recvs at "
            f"16K) move {ring['mean_message_bytes'] / 1e6:.1f} MB in "
            f"{ring['mean_time_s'] * 1e3:.3f} ms on average "
            f"({ring['algbw_bytes_per_s'] / 1e9:.1f} GB/s).")


TSP_1024_COMPARE = ("compare", TSP_1024, "--layouts", ",".join(TSP_1024_LAYOUTS))


def tsp_1024_rows(run):
    return rows_by(run.json(*TSP_1024_COMPARE)["rows"], "layout")


def millions(x):
    return f"{x / 1e6:.2f}M"


def tsp_1024_paper(run):
    """Zyphra's 1024-GPU throughput beside parasim's: TSP, the TP+SP layouts and their ratio."""
    rows = tsp_1024_rows(run)
    tsp = rows["tsp"]["tokens_per_s"]
    meshes = (("tp8xsp2", "8x2, 16 GPUs"), ("tp2xsp4", "2x4"), ("tp4xsp2", "4x2"))
    matched = ", ".join(f"{millions(rows[l]['tokens_per_s'])} ({label})" for l, label in meshes)
    ratio = ", ".join(f"{tsp / rows[l]['tokens_per_s']:.2f}x ({label.split(',')[0]})"
                      for l, label in meshes)
    return table(("", "paper", "parasim"), [
        ("TSP", TSP_PAPER_TOKENS["tsp"], f"{millions(tsp)} tokens/s"),
        ("TP+SP (matched)", TSP_PAPER_TOKENS["matched"], matched),
        ("TSP / TP+SP", TSP_PAPER_TOKENS["ratio"], ratio)])


def tsp_1024_mfu(run):
    """TSP's throughput at 1024 GPUs as MFU, and as 6N FLOP/s alone."""
    tsp = tsp_1024_rows(run)["tsp"]
    return (f"parasim's {millions(tsp['tokens_per_s'])} tokens/s for TSP is an MFU of "
            f"{100 * tsp['mfu']:.1f} % (model FLOPs with the causal attention, which at 128K is "
            f"twice the weights' 6N; 6N alone is {sci(6 * TSP_PARAMS * tsp['tokens_per_s'], 1)} "
            f"FLOP/s).")


def tsp_1024_exposed(run):
    """Per layout at 1024 GPUs: tokens/s, TSP against it, exposed communication by kind, peak;
    the TSP ring with a 448 GB/s peer link; the 8x2 mesh's K/V ring over the NICs."""
    rows = tsp_1024_rows(run)
    tsp = rows["tsp"]["tokens_per_s"]
    body = []
    for l in TSP_1024_LAYOUTS:
        r = rows[l]
        exposed = " / ".join(f"{r['exposed_comm_s'][k] * 1e3:.1f}" for k in ("tp", "dp", "cp"))
        star = "" if r["fits_in_hbm"] else "*"
        versus = "" if l == "tsp" else f"{signed(percent_change(tsp, r['tokens_per_s']))} %"
        body.append((l, thousands(r["tokens_per_s"]), versus, exposed,
                     f"{max_peak(r, 'device_memory_bytes') / GIB:.2f}{star}"))
    fast = run.json("simulate", run.derive(TSP_1024, {
        "cluster.intra_node.peer_bandwidth": "448 GB/s"}))
    ring = collective(rows["tp8xsp2"], "cp", "send-recv")
    notes = (
        f"TSP's exposed TP-group time is {rows['tsp']['exposed_comm_s']['tp'] * 1e3:.1f} ms per "
        f"step with the 64 GB/s peer link and {fast['exposed_comm_s']['tp'] * 1e3:.1f} ms with "
        f"448 GB/s (`\"peer_bandwidth\": \"448 GB/s\"` in `cluster.intra_node`). The 8x2 mesh's "
        f"context-parallel K/V ring sends {ring['mean_message_bytes'] / 1e6:.1f} MB in "
        f"{ring['mean_time_s'] * 1e3:.2f} ms ({ring['algbw_bytes_per_s'] / 1e9:.1f} GB/s over the "
        f"NICs), {rows['tp8xsp2']['exposed_comm_s']['cp'] * 1e3:.1f} ms of it exposed.")
    return table(("layout", "tokens/s", "TSP against it", "exposed tp / dp / cp, ms",
                  "peak with context and NCCL, GiB"), body, "lrrrr") + "\n\n" + notes


def tsp_1024_verdict(run):
    """Where TSP lands at 1024 GPUs: against every TP+SP layout, TP and pure context
    parallelism."""
    rows = tsp_1024_rows(run)
    tsp = rows["tsp"]["tokens_per_s"]
    meshes = [percent_change(tsp, rows[l]["tokens_per_s"]) for l in ("tp2xsp4", "tp4xsp2",
                                                                      "tp8xsp2")]
    if all(m >= 0 for m in meshes):
        mesh = f"{fixed(min(meshes), 1)}-{fixed(max(meshes), 1)} % ahead of every TP+SP layout"
    else:
        mesh = f"{signed_range(meshes)} % against the TP+SP layouts"
    tp = percent_change(tsp, rows["tp"]["tokens_per_s"])
    cp = percent_change(tsp, rows["cp"]["tokens_per_s"])
    fits = "which does not fit" if not rows["tp"]["fits_in_hbm"] else "which fits"

    def rel(x):
        return f"{abs(x):.1f} % {'ahead of' if x >= 0 else 'behind'}"
    return (f"The model puts TSP {mesh}, {rel(tp)} TP ({fits}), and {rel(cp)} pure context "
            f"parallelism (cp 8, which holds the whole model on every GPU: "
            f"{max_peak(rows['cp'], 'device_memory_bytes') / GIB:.2f} GiB).")


def tsp_kv_buckets(run):
    """parasim simulate on tsp-7b-mi300x with 4 layers: one K/V bucket per round against four,
    step time and the gathered K/V per bucket."""
    out = {}
    for buckets in (1, 4):
        out[buckets] = run.json("simulate", run.derive(TSP, {"model.layers": 4,
                                                             "parallel.tsp_kv_buckets": buckets}))

    def gathered(r):
        return collective(r, "tp", "all-gather")["mean_message_bytes"] / 1e6
    one, four = out[1]["step_time_s"], out[4]["step_time_s"]
    return (f"With 4 layers, 4 buckets per round take {four * 1e3:.1f} ms per step against "
            f"{one * 1e3:.1f} ms with one ({signed(percent_change(four, one))} %), for a quarter "
            f"of the gathered K/V held ({gathered(out[4]):.0f} MB per bucket instead of "
            f"{gathered(out[1]):.0f} MB).")


# ---------------------------------------------------------------------------------------------
# docs/dash.md: Shampoo and DASH

DASH = "scenarios/dash-llama-953m.json"
# DASH paper's table, ms per optimizer step: Distributed Shampoo / DASH-LW / DASH-GPU.
DASH_ROWS = (
    ("evd / Fro / fp32", "evd/fp32/1024", (3080, 2850, 2850)),
    ("coupled-newton / Fro / fp32", "coupled-newton/fp32/1024", (666, 149, 136)),
    ("coupled-newton / Fro / fp16", "coupled-newton/fp16/1024", (471, 138, 119)),
    ("newton-db / Fro / fp32", "newton-db/fp32/1024", (558, 188, 174)),
    ("newton-db / PI / fp32", "newton-db/fp32/1024/power-iteration", (740, 194, 177)),
)
DASH_NAMES = ("shampoo", "dash-layer", "dash-gpu")
DASH_TOLERANCE = 20.0  # percent, the issue's
# optimizer.host_op_overhead settings of the sensitivity table; the launch adds 4 us per op.
DASH_HOST_COSTS = (("0 s", 0), ("6 us", 6), ("11 us", 11), ("21 us", 21))
DASH_LAUNCH_US = 4
DASH_SENSITIVITY = ("shampoo/coupled-newton/fp32/1024", "dash-gpu/coupled-newton/fp16/1024",
                    "shampoo/newton-db/fp32/1024", "shampoo/coupled-newton/fp16/1024")
DASH_SENSITIVITY_PAPER = (666, 119, 558, 471)  # the paper's rows of DASH_SENSITIVITY (DASH_ROWS)
DASH_2048 = ("shampoo/coupled-newton/fp32/2048", "shampoo/coupled-newton/fp16/2048",
             "shampoo/newton-db/fp32/2048/power-iteration")


def dash_paper(name, spec):
    """The DASH paper's step (ms) of one implementation (shampoo, dash-layer, dash-gpu) and
    root/precision spec of the table."""
    return [paper for _, s, paper in DASH_ROWS if s == spec][0][DASH_NAMES.index(name)]


def dash_steps(run, variants, scenario=DASH):
    """Optimizer step (ms) and host loop of each optimizer variant, by variant name."""
    rows = rows_by(run.json("compare", scenario, "--optimizers", ",".join(variants))["rows"],
                   "variant")
    return {v: (rows[v]["optimizer_step_s"] * 1e3, rows[v]) for v in variants}


def dash_table_steps(run):
    variants = [f"{n}/{spec}" for _, spec, _ in DASH_ROWS for n in DASH_NAMES]
    return dash_steps(run, variants)


def dash_times(run):
    """The DASH paper's optimizer-step table beside parasim's (ms per step per GPU, Distributed
    Shampoo / DASH with layer stacking / DASH with GPU stacking)."""
    steps = dash_table_steps(run)
    rows = [(label, " / ".join(map(str, paper)),
             " / ".join(f"{steps[f'{n}/{spec}'][0]:.0f}" for n in DASH_NAMES))
            for label, spec, paper in DASH_ROWS]
    return table(("root / norm / precision", "paper: DistShampoo / DASH-LW / DASH-GPU (ms)",
                  "parasim (ms)"), rows)


def dash_check(run):
    """The Newton rows against the paper per implementation, the issue's ratio check, and the
    EVD rows."""
    steps = dash_table_steps(run)
    newton = [(spec, paper) for _, spec, paper in DASH_ROWS if not spec.startswith("evd")]

    def ours(name, spec):
        return steps[f"{name}/{spec}"][0]
    gpu = [ours("dash-gpu", s) for s, _ in newton]
    gpu_err = [percent_change(ours("dash-gpu", s), p[2]) for s, p in newton]
    layer_err = [percent_change(ours("dash-layer", s), p[1]) for s, p in newton]
    shampoo_share = [100 * ours("shampoo", s) / p[0] for s, p in newton]
    ds = ours("shampoo", "coupled-newton/fp32/1024")
    dg = ours("dash-gpu", "coupled-newton/fp16/1024")
    pds = dash_paper("shampoo", "coupled-newton/fp32/1024")
    pdg = dash_paper("dash-gpu", "coupled-newton/fp16/1024")
    err = percent_change(ds / dg, pds / pdg)
    verdict = ("outside ±20 %, so the issue stays open" if abs(err) > DASH_TOLERANCE
               else "inside ±20 %")
    evd = [ours(n, "evd/fp32/1024") / 1e3 for n in DASH_NAMES]
    papers = [dash_paper(n, "evd/fp32/1024") / 1e3 for n in DASH_NAMES]
    magnitude = (", the right order of magnitude"
                 if all(0.1 < e / p < 10 for e, p in zip(evd, papers)) else "")
    return (f"In the Newton rows DASH with GPU stacking comes out {signed_range(gpu_err, 0)} % "
            f"against the paper ({' / '.join(f'{g:.0f}' for g in gpu)} against "
            f"{' / '.join(str(p[2]) for _, p in newton)} ms), DASH with layer stacking "
            f"{signed_range(layer_err, 0)} %, Distributed Shampoo at {span(shampoo_share, 0)} % of "
            f"it. The issue's check: Distributed Shampoo CN fp32 against DASH-GPU CN fp16 — paper "
            f"{pds} / {pdg} ms = {pds / pdg:.1f}x, parasim {ds:.0f} / {dg:.0f} ms = "
            f"{ds / dg:.1f}x: {verdict}. EVD rows: {span(evd, 1)} s against the paper's "
            f"{span(papers, 1)} s{magnitude}.")


def dash_host(run):
    """The host loop per step on the busiest rank (ops and syncs), and DASH-GPU's fp16 row
    against its fp32 row."""
    steps = dash_table_steps(run)
    ds = steps["shampoo/coupled-newton/fp32/1024"][1]
    gpu32, gpu32_row = steps["dash-gpu/coupled-newton/fp32/1024"]
    gpu16 = steps["dash-gpu/coupled-newton/fp16/1024"][0]
    p32 = dash_paper("dash-gpu", "coupled-newton/fp32/1024")
    p16 = dash_paper("dash-gpu", "coupled-newton/fp16/1024")
    return (f"Host loop per step on the busiest rank, CN fp32: Distributed Shampoo "
            f"{thousands(ds['optimizer_host_ops'])} ops and "
            f"{thousands(ds['optimizer_host_syncs'])} "
            f"syncs, DASH-GPU {thousands(gpu32_row['optimizer_host_ops'])} ops and "
            f"{thousands(gpu32_row['optimizer_host_syncs'])} syncs. DASH-GPU's fp16 row is "
            f"{-percent_change(gpu16, gpu32):.0f} % faster than its fp32 row ({gpu16:.0f} "
            f"against {gpu32:.0f} ms; paper {p16} against {p32} ms, "
            f"{100 * (1 - p16 / p32):.0f} %).")


def dash_host_cost(run):
    """The sensitivity to the host cost per op: four optimizers' steps with
    optimizer.host_op_overhead 0 / 6 / 11 / 21 us (scenario copies), the paper's, and what the
    Distributed Shampoo CN fp32 row would need to match the paper."""
    by_cost = {}
    for label, us in DASH_HOST_COSTS:
        copy_ = run.derive(DASH, {"optimizer.host_op_overhead": label})
        steps = dash_steps(run, DASH_SENSITIVITY, copy_)
        by_cost[us] = [steps[v][0] for v in DASH_SENSITIVITY]
    rows = []
    for label, us in DASH_HOST_COSTS:
        name = f"{us} us" + (" (default)" if us == 6 else "")
        rows.append((name, f"{us + DASH_LAUNCH_US} us",
                     " / ".join(f"{t:.0f}" for t in by_cost[us])))
    rows.append(("paper", "", " / ".join(map(str, DASH_SENSITIVITY_PAPER))))
    paper = DASH_SENSITIVITY_PAPER
    mid = by_cost[11]  # 15 us per op, the middle of the cited 5-25 us
    near = [percent_change(mid[i], paper[i]) for i in (2, 3)]
    dash_moves = max(c[1] for c in by_cost.values()) - min(c[1] for c in by_cost.values())
    # The host cost at which Distributed Shampoo CN fp32 reaches the paper's 666 ms, by linear
    # interpolation between the two settings around it.
    costs = [us for _, us in DASH_HOST_COSTS]
    need = None
    for a, b in zip(costs, costs[1:]):
        ta, tb = by_cost[a][0], by_cost[b][0]
        if ta <= paper[0] <= tb:
            need = a + (paper[0] - ta) * (b - a) / (tb - ta) + DASH_LAUNCH_US
    reach = (f"reaching the paper's {paper[0]} ms would take about {need:.0f} us per op" if need
             else f"no setting here reaches the paper's {paper[0]} ms")
    sentence = (
        f"DASH-GPU moves by {dash_moves:.1f} ms over the four settings. At 15 us per op the "
        f"Distributed Shampoo NDB and CN fp16 rows are {signed(near[0])} % and {signed(near[1])} % "
        f"off the paper's {paper[2]} and {paper[3]} ms while CN fp32 stays at "
        f"{100 * mid[0] / paper[0]:.0f} % of {paper[0]}, and the issue's ratio is "
        f"{mid[0] / mid[1]:.1f}x; {reach}.")
    return table(("`host_op_overhead`", "per op with the launch",
                  "DS CN fp32 / DASH-GPU CN fp16 / DS NDB fp32 / DS CN fp16 (ms)"),
                 rows) + "\n\n" + sentence


def dash_block_2048(run):
    """Distributed Shampoo at block size 2048 against block size 1024."""
    big = dash_steps(run, DASH_2048)
    cn32 = dash_table_steps(run)["shampoo/coupled-newton/fp32/1024"][0]
    t = [big[v][0] for v in DASH_2048]
    moves = "falls from" if t[0] < cn32 else "does not fall from"
    return (f"parasim gives CN fp32 {t[0]:.0f}, CN fp16 {t[1]:.0f}, NDB PI {t[2]:.0f} ms at block "
            f"2048 (`--optimizers shampoo/coupled-newton/fp32/2048,...`): its CN fp32 row {moves} "
            f"{cn32:.0f} ms where the paper's stays.")


# ---------------------------------------------------------------------------------------------
# docs/planner.md

LLAMA70 = "scenarios/llama2-70b-64gpu.json"
GPT3 = "scenarios/gpt3-175b-1024gpu.json"
# The planner benchmark's (b): Megatron-Turing NLG 530B on up to 4,096 A100s over a
# Calculon-sized space, as benchmarks/planner_bench.cpp builds it (every whole number of 8-GPU
# nodes up to 512 nodes), written as a copy of the GPT-3 scenario with these fields replaced.
MTNLG_530B = {
    "name": "mt-nlg-530b", "description": DELETE, "parallel": DELETE,
    "model": {"name": "mt-nlg-530b", "layers": 105, "hidden": 20480, "heads": 128,
              "vocab": 51200, "seq_len": 2048},
    "cluster": {"preset": "dgx-a100-80gb", "nodes": 512},
    "training": {"global_batch": 2520, "micro_batch": 1},
    "optimizer": {"name": "adamw"},
    "search": {"gpus": list(range(8, 4097, 8)), "tp": [1, 2, 4, 8], "cp": [1],
               "micro_batch": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 15, 18, 20],
               "schedule": ["1f1b", "interleaved-1f1b"], "attention": ["unfused"]},
}


PLAN_LLAMA70 = ("plan", LLAMA70, "--threads", "2")


def plan_llama70(run):
    return run.parasim(*PLAN_LLAMA70)


def plan_rows(text):
    """The ranked table's rows of a plan by their first column ("yours", "1", ...): step s,
    MFU."""
    rows = {}
    step = mfu = None
    for line in text.splitlines():
        words = line.split()
        if words[:1] == ["rank"] and "step" in words and "MFU" in words:
            # The header spells "step s" in two words: the columns after it sit one to the left.
            step, mfu = words.index("step"), words.index("MFU") - 1
            continue
        if (step is not None and len(words) > mfu and (words[0] == "yours" or words[0].isdigit())
                and "/" in words[1]):
            rows[words[0]] = {"step": float(words[step]), "mfu": words[mfu]}
    return rows


def plan_summary(text):
    """Screen counts, the screen's error over the simulated set and the winner of a plan."""
    def find(pattern):
        m = re.search(pattern, text, re.M)
        if not m:
            raise Failure(f"plan output without /{pattern}/")
        return m.groups()
    screened, feasible, simulated = map(int, find(
        r"^screen: (\d+) candidates, (\d+) feasible; simulated (\d+)$"))
    mean, largest, spearman = find(r"mean \|error\| ([\d.]+) %, largest ([\d.]+) %, Spearman "
                                   r"rank correlation (-?[\d.]+)")
    over = re.search(r"^\s*(\d+)\s+peak memory over .*\(simulated\)$", text, re.M)
    return {"screened": screened, "feasible": feasible, "simulated": simulated,
            "fit": simulated - (int(over.group(1)) if over else 0), "mean": mean,
            "largest": largest, "spearman": spearman, "winner": find(r"^winner: (.*)$")[0],
            "rows": plan_rows(text)}


def plan_own_layout(run):
    """How much slower the scenario's own layout is than the planner's winner."""
    rows = plan_rows(plan_llama70(run))
    return (f"The scenario's own layout (tp 8, pp 4, unfused attention) is "
            f"{rows['yours']['step'] / rows['1']['step']:.2f}x slower than the winner.")


def plan_gpus_664(run):
    """The nearest feasible GPU counts `plan --gpus 664` names on Llama-2 70B with 128 nodes."""
    copy_ = run.derive(LLAMA70, {"cluster.nodes": 128, "parallel": DELETE})
    err = run.parasim_stderr("plan", copy_, "--gpus", "664", expect_rc=1)
    m = re.search(r"nearest GPU counts with a layout that passes the rules: ([\d, ]+) \(--gpus\)",
                  err)
    if not m:
        raise Failure(f"plan --gpus 664 said: {err.strip()}")
    return (f"For example, `--gpus 664` on Llama-2 70B (`scenarios/llama2-70b-64gpu.json` on 128 "
            f"nodes, without its `parallel` section) names {m.group(1)}.")


def plan_one_chunk(run):
    """Stage 0's peak with interleaved-1f1b and one chunk against 1f1b on Llama-2 70B, dp 8
    tp 8 pp 4 (copies of llama2-70b-64gpu on 32 nodes), unfused and with FlashAttention."""
    figs = []
    for attention in ("unfused", "flash"):
        base = {"cluster.nodes": 32, "parallel.dp": 8, "training.attention": attention}
        one = run.json("simulate", run.derive(LLAMA70, base))
        inter = run.json("simulate", run.derive(LLAMA70, dict(base, **{
            "parallel.schedule": "interleaved-1f1b", "parallel.chunks": 1})))
        figs.append((inter["peak_memory_bytes"][0] - one["peak_memory_bytes"][0]) / GIB)
    return (f"Interleaved-1f1b with one chunk, simulated on its own on Llama-2 70B with dp 8 tp 8 "
            f"pp 4 (`scenarios/llama2-70b-64gpu.json` on 32 nodes), holds {figs[0]:.2f} GiB more "
            f"on stage 0 than 1f1b ({figs[1]:.2f} GiB more with FlashAttention).")


def plan_bench(run):
    """The planner benchmark's searches, what they find: (a) GPT-3 175B's default space, (b)
    MT-NLG 530B's Calculon-sized space (a copy of the GPT-3 scenario; benchmarks/
    planner_bench.cpp builds the same). Timings are not figures of the build and stay out."""
    a = plan_summary(run.parasim("plan", GPT3))
    b = plan_summary(run.parasim("plan", run.derive(GPT3, MTNLG_530B), "--max-candidates", "1e9"))

    def winner(s):
        best = s["rows"]["1"]
        return f"{s['winner']}: {best['step']:.3f} s, MFU {best['mfu'].rstrip('%')} %"
    rows = [
        ("candidates in the space", thousands(a["screened"]), thousands(b["screened"])),
        ("valid and under the memory floor", thousands(a["feasible"]), thousands(b["feasible"])),
        ("simulated (fit)", f"{a['simulated']} ({a['fit']})", f"{b['simulated']} ({b['fit']})"),
        ("screen error over the simulated set: mean, max", f"{a['mean']} %, {a['largest']} %",
         f"{b['mean']} %, {b['largest']} %"),
        ("Spearman rank correlation", a["spearman"], b["spearman"]),
        ("winner", winner(a), winner(b)),
    ]
    return table(("", "(a) GPT-3 175B, 1,024 H100, default space",
                  "(b) MT-NLG 530B, up to 4,096 A100, Calculon-sized space"), rows, "lrr")


# ---------------------------------------------------------------------------------------------
# docs/result.md

LLAMA7 = "scenarios/llama2-7b-dgx-h100.json"


def wrap_items(opening, items, closing, indent, width=92):
    """opening + items joined by ", " + closing, broken before an item that would pass width;
    continuation lines start at indent."""
    lines, line = [], opening
    for i, item in enumerate(items):
        piece = item + (", " if i + 1 < len(items) else closing)
        if line.strip() and len(line) + len(piece.rstrip()) > width and line != opening:
            lines.append(line.rstrip())
            line = " " * indent
        line += piece
    lines.append(line.rstrip())
    return lines


# The abridged example of the result JSON: its keys in order, each shown whole ("value"), as a
# one-line list ("list"), an object ("object") or a list cut to its first object ("first").
RESULT_EXAMPLE = (
    ("parasim_result", "value"), ("scenario", "value"), ("mode", "value"),
    ("step_time_s", "value"), ("tokens_per_s", "value"), ("tokens_per_step", "value"),
    ("mfu", "value"), ("hfu", "value"), ("micro_batches", "value"), ("total_gpus", "value"),
    ("simulated_devices", "value"), ("bubble_fraction", "list"), ("peak_memory_bytes", "list"),
    ("memory_breakdown_bytes", "first"), ("hbm_capacity_bytes", "value"),
    ("comm_bytes", "object"), ("exposed_comm_s", "object"), ("link_bytes", "object"),
    ("collectives", "first"), ("critical_path_s", "object"), ("ops", "value"),
    ("events", "value"),
)
# Long figures rounded in the example (by key, or by the key of the object holding them).
RESULT_ROUNDED = {"exposed_comm_s": 6, "critical_path_s": 4, "mean_message_bytes": 1,
                  "mean_time_s": 9, "algbw_bytes_per_s": 1, "busbw_bytes_per_s": 1}


def result_value(key, value, digits=None):
    """A JSON value of the example, rounded where RESULT_ROUNDED says (zero stays 0.0)."""
    digits = RESULT_ROUNDED.get(key, digits)
    if digits is None or not isinstance(value, float) or value == 0:
        return json.dumps(value)
    return f"{value:.{digits}f}"


def result_object(opening, obj, closing, indent, digits=None):
    """An object's items wrapped after opening, continuation lines at indent."""
    items = [f"{json.dumps(k)}: {result_value(k, v, digits)}" for k, v in obj.items()]
    return wrap_items(opening, items, closing, indent)


def result_example(run):
    """An abridged `parasim simulate scenarios/llama2-7b-dgx-h100.json --json -`: the keys a
    reader needs first (RESULT_EXAMPLE), lists cut to their first element, long figures
    rounded."""
    d = run.json("simulate", LLAMA7)
    lines = ["{"]
    for n, (key, shown) in enumerate(RESULT_EXAMPLE):
        comma = "," if n + 1 < len(RESULT_EXAMPLE) else ""
        head = f"  {json.dumps(key)}: "
        if shown == "value":
            lines.append(f"{head}{result_value(key, d[key])}{comma}")
        elif shown == "list":
            lines.append(f"{head}[{', '.join(result_value(key, v) for v in d[key])}]{comma}")
        elif shown == "object":
            lines += result_object(head + "{", d[key], "}" + comma, len(head) + 1,
                                   RESULT_ROUNDED.get(key))
        else:
            lines.append(head + "[")
            lines += result_object("    {", d[key][0], "},", 5)
            lines += ["    ...", f"  ]{comma}"]
    lines.append("}")
    return fenced("\n".join(lines), "json")


# ---------------------------------------------------------------------------------------------
# docs/scenario.md

def validate_example(run):
    """`parasim validate` printing its estimate of the work: Llama 2 7B, and GPT-3 175B on 1024
    GPUs with --full (the benchmark)."""
    out = []
    for args in ((LLAMA7,), (GPT3, "--full")):
        out.append("$ parasim validate " + " ".join(args))
        out.append(run.parasim("validate", *args).rstrip())
    return fenced("\n".join(out))


def shampoo_blocks(run):
    """The blocks Shampoo with block_size 16 would cut Llama 2 7B into (a copy of
    llama2-7b-dgx-h100 with that optimizer), which validate refuses."""
    copy_ = run.derive(LLAMA7, {"optimizer": {"name": "shampoo", "block_size": 16}})
    err = run.parasim_stderr("validate", copy_, expect_rc=2)
    m = re.search(r"about ([\d.]+ million) Shampoo blocks", err)
    if not m:
        raise Failure(f"validate said: {err.strip()}")
    return (f"`block_size` 16 on Llama 2 7B (`scenarios/llama2-7b-dgx-h100.json` with "
            f"`\"optimizer\": {{\"name\": \"shampoo\", \"block_size\": 16}}`) would cut the "
            f"weights into about {m.group(1)} blocks, and `validate` refuses it.")


# ---------------------------------------------------------------------------------------------
# docs/validation.md and docs/frameworks.md: the development set

MINUS = "\u2212"


def dev_set(run):
    """validate-against scenarios/validation: its JSON, and the CSV path it wrote."""
    csv_path = run.temp("cases.csv")
    return run.json("validate-against", "scenarios/validation", "--csv", csv_path), csv_path


def group_label(g):
    return "overall" if g["scope"] == "overall" else f"{g['scope']} `{g['name']}`"


def validation_table(run):
    """The development set's step-time error per group: cases, MAE, median, worst, bias."""
    d, _ = dev_set(run)
    rows = []
    for g in d["groups"]:
        rows.append((group_label(g), thousands(g["cases"]), thousands(g["simulated"]),
                     thousands(g["not_expressible"]), f"{100 * g['mae_fraction']:.2f}",
                     f"{100 * g['median_abs_error_fraction']:.2f}",
                     f"{signed(100 * g['worst_signed_error_fraction'], 2, MINUS)} "
                     f"(`{g['worst_case']}`)".lstrip("+"),
                     signed(100 * g["bias_fraction"], 2, MINUS).lstrip("+")))
    return table(("group", "cases", "simulated", "not expressible", "MAE %", "median %",
                  "worst % (case)", "bias %"), rows, "lrrrrrlr")


def validation_memory(run):
    """The peak-memory error where cases measured it, read as 10^9 B and as 2^30 B."""
    d, _ = dev_set(run)
    overall = d["groups"][0]["peak_memory"]
    measured = [c for c in d["cases"] if "measured_peak_memory_bytes" in c]
    as_gib = [c["predicted_peak_memory_bytes"] / (c["measured_peak_memory_bytes"] * GIB / 1e9) - 1
              for c in measured]
    mae = 100 * statistics.fmean(abs(e) for e in as_gib)
    bias = 100 * statistics.fmean(as_gib)
    word = "too low" if bias < 0 else "too high"
    sources = sorted({c["source"] for c in measured})
    return (f"Peak memory, where measured ({len(measured)} cases of "
            f"{', '.join(f'`{s}`' for s in sources)}; the ledger's peak of the fullest GPU "
            f"against the paper's figure read as 10^9 B, as its key `memory_gb` says): MAE "
            f"{100 * overall['mae_fraction']:.2f} %, median "
            f"{100 * overall['median_abs_error_fraction']:.2f} %, worst "
            f"{signed(100 * overall['worst_signed_error_fraction'], 2, MINUS)} % "
            f"(`{overall['worst_case']}`), bias "
            f"{signed(100 * overall['bias_fraction'], 2, MINUS)} %. "
            f"The paper does not say how it counted: read as 2^30 B (PyTorch's bytes / 1024^3, as "
            f"Megatron-LM's own memory report prints), the same predictions are "
            f"{abs(bias):.2f} % {word} on average (MAE {mae:.2f} %).")


def validation_faster(run):
    """How many predictions are faster than their measured run, and the slowest one."""
    d, _ = dev_set(run)
    simulated = [c for c in d["cases"] if c["status"] == "simulated"]
    faster = sum(c["signed_error_fraction"] < 0 for c in simulated)
    slowest = max(c["signed_error_fraction"] for c in simulated)
    return (f"{thousands(faster)} of the {thousands(len(simulated))} predictions are faster than "
            f"the measured run (the slowest prediction is {100 * slowest:.1f} % above its run).")


def validation_largest(run):
    """Ops in the simulation of the development set's largest case (Megatron-LM 2021's 1T model
    on 3,072 GPUs)."""
    cases = json.loads((run.root / "scenarios/validation/megatron2021-table1.json").read_text())
    case = [c for c in cases["cases"] if c["id"] == "t1_1008.0B"][0]
    path = run.temp("t1_1008.0B.json")
    path.write_text(json.dumps(case["scenario"], indent=1, sort_keys=True) + "\n")
    ops = run.json("simulate", path)["ops"]
    return (f"`t1_1008.0B`, Megatron-LM's 1T model on 3,072 GPUs, simulates {ops / 1e6:.2f} "
            f"million ops.")


def decompose(run):
    """scripts/validation/decompose.py on the single-node vTrain cases, parsed: the per-layout
    lines and the pp 1 cells."""
    _, csv_path = dev_set(run)
    text = run.script("scripts/validation/decompose.py", "scenarios/validation/vtrain.json",
                      csv_path, "--family", "vtrain-single-node")
    layouts, cells, part = [], [], None
    pair = r"([\d.]+)\s*/\s*([\d.]+)"
    for line in text.splitlines():
        if line.startswith("Per layout"):
            part = layouts
        elif line.startswith("pp 1"):
            part = cells
        elif part is layouts:
            m = re.match(rf"\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+{pair}\s+"
                         rf"{pair}$", line)
            if m:
                g = m.groups()
                layouts.append({"hidden": int(g[0]), "layers": int(g[1]), "tp": int(g[2]),
                                "pp": int(g[3]), "dp": int(g[4]), "mb": int(g[5]),
                                "fixed": (g[7], g[8]), "per_mb": (g[9], g[10])})
        elif part is cells:
            m = re.match(rf"\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+{pair}\s+{pair}$", line)
            if m:
                g = m.groups()
                cells.append({"hidden": int(g[0]), "tp": int(g[1]), "dp": int(g[2]),
                              "mb": int(g[3]), "layer": (g[4], g[5]), "rest": (g[6], g[7])})
    if not layouts or not cells:
        raise Failure("decompose.py printed neither table")
    return layouts, cells


def decompose_cells(run):
    """Per layer per micro-batch and the rest of a micro-batch (embedding, head, loss), ms,
    measured / predicted, for every (hidden, tp, micro-batch) cell of the pp 1 vTrain cases
    (the data-parallel degree does not change them)."""
    _, cells = decompose(run)
    seen, rows = {}, []
    for c in cells:
        key = (c["hidden"], c["tp"], c["mb"])
        if key in seen:
            if seen[key] != (c["layer"], c["rest"]):
                raise Failure(f"decompose.py: the cell {key} differs between data-parallel "
                              f"degrees, which the doc says it does not")
            continue
        seen[key] = (c["layer"], c["rest"])
        rows.append((c["hidden"], c["tp"], c["mb"], " / ".join(c["layer"]),
                     " / ".join(c["rest"])))
    return table(("hidden", "tp", "micro-batch", "per layer", "rest"), rows, "rrrll")


def decompose_fixed(run):
    """The fixed part per step (ms, measured / predicted) of the 24-layer pp 1 vTrain layouts at
    micro-batch 1, per hidden, tp and data-parallel degree."""
    layouts, _ = decompose(run)
    picked = [l for l in layouts if l["layers"] == 24 and l["pp"] == 1 and l["mb"] == 1]
    dps = sorted({l["dp"] for l in picked})
    rows = []
    for key in sorted({(l["hidden"], l["tp"]) for l in picked}):
        by_dp = {l["dp"]: " / ".join(l["fixed"]) for l in picked
                 if (l["hidden"], l["tp"]) == key}
        rows.append(key + tuple(by_dp.get(dp, "") for dp in dps))
    return table(("hidden", "tp") + tuple(f"dp {dp}" for dp in dps), rows,
                 "rr" + "l" * len(dps))


def zb_passes(run):
    """scripts/validation/zb_pass_times.py, parsed: per model its pp, micro-batch and layers and
    per pass (F, B, W) the profiled and simulated ms (as floats, and as printed rounded half up to
    2 decimals) with their ratio; and per model the last stage's forward."""
    text = run.script("scripts/validation/zb_pass_times.py", "--parasim", run.parasim_path)
    passes, last = {}, {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d.]+B)\s+(\d+)\s+(\d+)\s+(\d+)\s+([FBW])\s+([\d.]+)\s+([\d.]+)\s+"
                     r"([\d.]+)$", line)
        if m:
            g = m.groups()
            passes.setdefault(g[0], {"pp": g[1], "mb": g[2], "layers": g[3]})[g[4]] = {
                "profiled": float(g[5]), "ours": float(g[6]), "ratio": g[7],
                "profiled_text": half_up(g[5], 2), "ours_text": half_up(g[6], 2)}
        m = re.match(r"([\d.]+B): parasim's last stage forward ([\d.]+) ms", line)
        if m:
            last[m.group(1)] = float(m.group(2))
    if not passes:
        raise Failure("zb_pass_times.py printed no pass")
    return passes, last


def zb_pass_table(run):
    """Per model, the Zero Bubble fork's profiled F, B and W of a middle stage against
    parasim's."""
    passes, _ = zb_passes(run)
    rows = []
    for model, p in passes.items():
        rows.append((model, p["pp"], p["mb"], p["layers"]) +
                    tuple(f"{p[k]['profiled_text']} / {p[k]['ours_text']} ({p[k]['ratio']})"
                          for k in "FBW"))
    return table(("model", "pp", "micro-batch", "layers per middle stage",
                  "F: profiled / parasim (ratio)", "B", "W"), rows, "lrrrlll")


def zb_pass_notes(run):
    """Each pass's error range over the models (W split by micro-batch), and the forward's
    shortfall per layer at 1.5B and 14.6B."""
    passes, _ = zb_passes(run)

    def errors(k, models=None):
        return [percent_change(p[k]["ours"], p[k]["profiled"]) for m, p in passes.items()
                if models is None or m in models]
    mb1 = [m for m, p in passes.items() if p["mb"] == "1"]
    larger = [m for m, p in passes.items() if p["mb"] != "1"]
    mbs = " and ".join(sorted({passes[m]["mb"] for m in larger}, key=int))

    def short(model):
        f = passes[model]["F"]
        return (f["profiled"] - f["ours"]) / int(passes[model]["layers"])
    return (f"parasim against the profile: F {signed_range(errors('F'), 1, MINUS)} %, B "
            f"{signed_range(errors('B'), 1, MINUS)} %, W "
            f"{signed_range(errors('W', larger), 1, MINUS)}"
            f" % at micro-batches of {mbs} and {signed_range(errors('W', mb1), 1, MINUS)} % at "
            f"micro-batch 1; the forward falls short by {short('1.5B'):.2f} ms per layer at 1.5B "
            f"and {1e3 * short('14.6B'):.0f} us per layer at 14.6B.")


def zb_steps(run):
    """Per Zero Bubble model: the forward's ratio, the range of its cases' step errors, and the
    last stage's forward against a middle stage's."""
    passes, last = zb_passes(run)
    d, _ = dev_set(run)
    rows = []
    for model, p in passes.items():
        errs = [100 * c["signed_error_fraction"] for c in d["cases"]
                if c["source"] == "zerobubble-main" and c["id"].split("_")[1] == model]
        rows.append((model, p["F"]["ratio"], f"{signed_range(errs, 2, MINUS)}",
                     f"{last[model]:.2f} / {p['F']['ours_text']}"))
    return table(("model", "F: parasim / profiled", "step errors %",
                  "forward ms: last stage / middle stage"), rows, "lrll")


def validation_biases(run):
    """The forward's mean shortfall, the step shortfall it predicts with and without recompute,
    and the biases of the Megatron-family groups."""
    d, _ = dev_set(run)
    passes, _ = zb_passes(run)
    short = 100 * (1 - statistics.fmean(p["F"]["ours"] / p["F"]["profiled"]
                                        for p in passes.values()))
    bias = {g["name"]: signed(100 * g["bias_fraction"], 2, MINUS) for g in d["groups"]}
    return (f"The forward's mean shortfall over the Zero Bubble models is {short:.1f} % (the F "
            f"ratios above), which puts the step {short / 2:.1f} % short with every layer "
            f"recomputed and {short / 2.75:.1f} % without. The measured biases: "
            f"{bias['megatron2021-table1']} % (`megatron2021-table1`, every "
            f"layer recomputed), {bias['vtrain-multi-node']} % (`vtrain-multi-node`, every layer "
            f"recomputed), {bias['zerobubble-main']} % (`zerobubble-main`, no recompute).")


def framework_preset(run):
    """The megatron-deepspeed preset's error on vTrain's cases in this build (the preset row of
    the fit table, as it is now)."""
    d, _ = dev_set(run)
    g = {x["name"]: x for x in d["groups"]}
    return (f"With vTrain's measured all-reduces (this build) the preset gives vtrain MAE "
            f"{100 * g['vtrain']['mae_fraction']:.2f} %, bias "
            f"{signed(100 * g['vtrain']['bias_fraction'], 2, MINUS)} %, single-node MAE "
            f"{100 * g['vtrain-single-node']['mae_fraction']:.2f} %, multi-node MAE "
            f"{100 * g['vtrain-multi-node']['mae_fraction']:.2f} %; the fit has not been rerun.")


# ---------------------------------------------------------------------------------------------
# docs/kernels.md

def zb_stages(run, attention):
    """scripts/kernels/zb_stage_times.py, parsed: per model F, B, W, the profile's and the
    errors."""
    text = run.script("scripts/kernels/zb_stage_times.py", run.parasim_path,
                      "--attention", attention)
    out = {}
    num = r"\s+([\d.]+)"
    err = r"\s+([+-][\d.]+)%"
    for line in text.splitlines():
        m = re.match(rf"([\d.]+B){num}{num}{num} \|{num}{num}{num} \|{err}{err}{err}{err}$", line)
        if m:
            g = m.groups()
            out[g[0]] = {"ours": g[1:4], "profiled": g[4:7],
                         "errors": [float(e) for e in g[7:10]], "sum": float(g[10])}
    if not out:
        raise Failure("zb_stage_times.py printed no stage")
    return out


# Layers per middle stage and micro-batch of each model's stage (scripts/kernels/zb_stage_times.py).
ZB_STAGE_SHAPES = {"1.5B": (3, 6), "6.2B": (4, 3), "14.6B": (3, 1), "28.3B": (2, 1)}


def zb_stage_table(run):
    """One middle stage of each Zero Bubble model, unfused attention: profiled and simulated
    F / B / W (ms per micro-batch) and the errors."""
    stages = zb_stages(run, "unfused")
    rows = []
    for model, s in stages.items():
        layers, mb = ZB_STAGE_SHAPES[model]
        rows.append((f"{model} ({layers}, {mb})", " / ".join(s["profiled"]),
                     " / ".join(s["ours"]),
                     " / ".join(signed(e, 1, MINUS) for e in s["errors"]) + " %",
                     f"{signed(s['sum'], 1, MINUS)} %"))
    return table(("model (layers/stage, mb)", "profiled F / B / W", "parasim F / B / W",
                  "error F / B / W", "error of F+B+W"), rows)


def zb_stage_flash(run):
    """The 1.5B stage with FlashAttention instead."""
    flash, unfused = zb_stages(run, "flash")["1.5B"], zb_stages(run, "unfused")["1.5B"]
    faster = "faster still" if flash["sum"] < unfused["sum"] else "not faster"
    f, b, w = flash["ours"]
    return (f"With `\"attention\": \"flash\"` (FA2 table) the stages are {faster} (1.5B: F {f}, "
            f"B {b}, W {w}; sum {signed(flash['sum'], 1, MINUS)} %), so the profiled runs are "
            f"unlikely to have used FlashAttention.")


def zb_stage_forward(run):
    """F and B error ranges over the models, and one 1.5B forward layer's kernel time against
    the profile's."""
    stages = zb_stages(run, "unfused")
    f = [s["errors"][0] for s in stages.values()]
    b = [s["errors"][1] for s in stages.values()]
    one = stages["1.5B"]
    layers = ZB_STAGE_SHAPES["1.5B"][0]
    return (f"F {signed_range(f, 1, MINUS)} %, B {signed_range(b, 1, MINUS)} %; one 1.5B forward "
            f"layer is {float(one['ours'][0]) / layers:.2f} ms of kernels against "
            f"{float(one['profiled'][0]) / layers:.2f} ms profiled.")


def zb_stage_w(run):
    """W's error on the micro-batch-1 models."""
    stages = zb_stages(run, "unfused")
    w = [f"{signed(s['errors'][2], 1, MINUS)} %" for m, s in stages.items()
         if ZB_STAGE_SHAPES[m][1] == 1]
    return f"W error at micro-batch 1: {' and '.join(w)}."


# ---------------------------------------------------------------------------------------------
# The recipes: name -> (function, keyword arguments). A doc names one per region. A command's
# output shown verbatim is output_block with the command's arguments (and stream, exit code).

EXPORT_PLAN = "tests/data/plan-llama2-7b.json"
EXPORT_PLAN_FSDP2 = "tests/data/plan-llama2-7b-fsdp2.json"  # the same, as torchtitan shards it

HTA_TRACE = "tests/data/traces/hta-resnet-ddp-2xa100-rank0.json.gz"

RECIPES = {
    # docs/calibration.md: the trace import on a real public trace, and compare-trace
    "trace-import": (output_block, {"args": ("calibrate", "--from-trace", HTA_TRACE, "--out", "-"),
                                    "stream": "stderr"}),
    "compare-trace": (output_block, {"args": ("compare-trace", HTA_TRACE,
                                              "scenarios/zero-offload-13b-dgx-a100.json")}),
    # docs/export.md: one plan exported four ways (tests/data/plan-llama2-7b.json)
    "export-gpipe-refused": (output_block, {"args": ("export", "scenarios/gpt2-medium-gpipe.json",
                                                     "--to", "megatron"),
                                            "stream": "stderr", "expect_rc": 2}),
    "export-megatron": (output_block, {"args": ("export", EXPORT_PLAN, "--to", "megatron")}),
    "export-megatron-notes": (output_block, {"args": ("export", EXPORT_PLAN, "--to", "megatron"),
                                             "stream": "stderr"}),
    "export-deepspeed": (output_block, {"args": ("export", EXPORT_PLAN, "--to", "deepspeed"),
                                        "info": "json"}),
    "export-torchtitan-zero3-refused": (output_block, {"args": ("export", EXPORT_PLAN, "--to",
                                                                "torchtitan"),
                                                       "stream": "stderr", "expect_rc": 2}),
    "export-torchtitan": (output_block, {"args": ("export", EXPORT_PLAN_FSDP2, "--to",
                                                  "torchtitan")}),
    "export-torchtitan-0.2": (output_block, {"args": ("export", EXPORT_PLAN_FSDP2, "--to", "torchtitan",
                                                      "--version", "0.2"), "info": "toml"}),
    "export-shampoo-refused": (output_block, {"args": ("export", EXPORT_PLAN, "--to", "shampoo"),
                                              "stream": "stderr", "expect_rc": 2}),
    "export-dash": (output_block, {"args": ("export", "scenarios/dash-llama-953m.json", "--to",
                                            "shampoo"), "info": "python"}),
    # docs/activation-checkpointing.md: torchtitan 0.2.2's every N-th block
    "every-nth-llama3-8b": (every_nth_table, {}),
    # docs/tp-overlap.md: torchtitan's llama3_405b config (float8 + AsyncTP + compile)
    "tp-overlap-float8-405b": (output_block, {"args": ("compare",
                                                       "scenarios/llama3-405b-torchtitan-float8.json",
                                                       "--tp-overlaps", "none,async-tp")}),
    # docs/boost.md
    "boost-times": (boost_times, {}),
    "boost-check": (boost_check, {}),
    "boost-times-profile": (boost_times, {"profile": BOOST_PROFILE}),
    "boost-check-profile": (boost_check_profile, {}),
    "boost-cited": (boost_cited, {}),
    "boost-variants": (boost_variants, {}),
    # docs/schedules.md
    "paci-compare": (output_block, {"args": PACI_COMPARE}),
    "schedules-chunked-compare": (output_block, {"args": ("compare", PACI, "--schedules",
                                                          CHUNKED_SCHEDULES)}),
    "paci-dp-compare": (output_block, {"args": ("compare", "scenarios/llama2-70b-64gpu.json",
                                                "--schedules", "1f1b,paci")}),
    "zb-v-6.2b-compare": (output_block, {"args": ("compare", "scenarios/zb-v-gpt-6.2b-8gpu.json",
                                                  "--schedules",
                                                  "1f1b,zb-1p,zb-2p,zb-v,dualpipev,interleaved-zb")}),
    "paci-mem": (paci_mem, {}),
    "paci-claims": (paci_claims, {}),
    # docs/tsp.md
    "tsp-memory": (tsp_memory, {}),
    "tsp-memory-recompute": (tsp_memory, {"changes": TSP_RECOMPUTE}),
    "tsp-memory-notes": (tsp_memory_notes, {}),
    "tsp-paper-gap": (tsp_paper_gap, {}),
    "tsp-slopes": (tsp_slopes, {}),
    "tsp-gap-figures": (tsp_gap_figures, {}),
    "tsp-throughput": (tsp_throughput, {}),
    "tsp-throughput-recompute": (tsp_throughput_recompute, {}),
    "tsp-ring": (tsp_ring, {}),
    "tsp-1024-compare": (output_block, {"args": TSP_1024_COMPARE}),
    "tsp-1024-paper": (tsp_1024_paper, {}),
    "tsp-1024-mfu": (tsp_1024_mfu, {}),
    "tsp-1024-exposed": (tsp_1024_exposed, {}),
    "tsp-1024-verdict": (tsp_1024_verdict, {}),
    "tsp-kv-buckets": (tsp_kv_buckets, {}),
    # docs/dash.md
    "dash-times": (dash_times, {}),
    "dash-check": (dash_check, {}),
    "dash-host": (dash_host, {}),
    "dash-host-cost": (dash_host_cost, {}),
    "dash-block-2048": (dash_block_2048, {}),
    # docs/planner.md
    "plan-one-chunk": (plan_one_chunk, {}),
    "plan-gpus-664": (plan_gpus_664, {}),
    "plan-example": (output_block, {"args": PLAN_LLAMA70}),
    "plan-own-layout": (plan_own_layout, {}),
    "plan-bench": (plan_bench, {}),
    # docs/result.md
    "result-example": (result_example, {}),
    # docs/scenario.md
    "validate-example": (validate_example, {}),
    "shampoo-blocks": (shampoo_blocks, {}),
    "three-problems": (output_block, {"args": ("validate", "tests/data/bad/three-problems.json"),
                                      "stream": "stderr", "expect_rc": 2}),
    # docs/validation.md
    "validation-largest": (validation_largest, {}),
    "validation-table": (validation_table, {}),
    "validation-memory": (validation_memory, {}),
    "validation-faster": (validation_faster, {}),
    "decompose-cells": (decompose_cells, {}),
    "decompose-fixed": (decompose_fixed, {}),
    "zb-pass-table": (zb_pass_table, {}),
    "zb-pass-notes": (zb_pass_notes, {}),
    "zb-steps": (zb_steps, {}),
    "validation-biases": (validation_biases, {}),
    # docs/frameworks.md
    "framework-preset": (framework_preset, {}),
    # docs/kernels.md
    "zb-stage-table": (zb_stage_table, {}),
    "zb-stage-flash": (zb_stage_flash, {}),
    "zb-stage-forward": (zb_stage_forward, {}),
    "zb-stage-w": (zb_stage_w, {}),
}

# Whole files the docs show, drawn by parasim: path -> function returning the file's text.
FILES = {
    "docs/tsp-memory-vs-sequence.svg": tsp_memory_svg,
    "docs/moe-timeline.svg": moe_timeline_svg,
    "docs/schedules-zb-v-timeline.svg": lambda run: chunked_svgs(run)["zb-v-timeline.svg"],
    "docs/pytorch-native-zero3-memory.svg":
        lambda run: fsdp2_memory_svgs(run)["zero-3-memory.svg"],
    "docs/pytorch-native-fsdp2-memory.svg":
        lambda run: fsdp2_memory_svgs(run)["fsdp2-memory.svg"],
    "docs/pytorch-native-eager-timeline.svg":
        lambda run: compile_timeline_svgs(run)["compile_off-timeline.svg"],
    "docs/pytorch-native-compiled-timeline.svg":
        lambda run: compile_timeline_svgs(run)["compile_on-timeline.svg"],
    "docs/pytorch-native-tp-serial-timeline.svg":
        lambda run: async_tp_timeline_svgs(run)["none-timeline.svg"],
    "docs/pytorch-native-async-tp-timeline.svg":
        lambda run: async_tp_timeline_svgs(run)["async-tp-timeline.svg"],
}

# Recipes whose commands take longest start first, so that the rest fill the other cores.
SLOW_FIRST = ("plan-bench", "validation-table", "plan-example", "zb-pass-table",
              "validation-largest", "zb-stage-table", "zb-stage-flash")


# ---------------------------------------------------------------------------------------------
# Regions in the docs

class Region:
    def __init__(self, path, name, indent, begin, end, text):
        self.path, self.name, self.indent = path, name, indent
        self.begin, self.end, self.text = begin, end, text  # marker line indices, body


def find_regions(root):
    """Every region of every doc, and the problems with the markers (a list of messages)."""
    regions, problems = [], []
    paths = sorted({p for pattern in DOC_GLOBS for p in Path(root).glob(pattern)})
    for path in paths:
        lines = path.read_text().split("\n")
        rel = path.relative_to(root)
        open_at = None
        for i, line in enumerate(lines):
            begin, end = BEGIN.match(line), END.match(line)
            if begin:
                if open_at is not None:
                    problems.append(f"{rel}:{i + 1}: region opened inside the region of line "
                                    f"{open_at[0] + 1}")
                open_at = (i, begin.group("name"), begin.group("indent"))
            elif end:
                if open_at is None:
                    problems.append(f"{rel}:{i + 1}: <!-- /figures --> without an opening marker")
                    continue
                start, name, indent = open_at
                regions.append(Region(path, name, indent, start, i,
                                      "\n".join(lines[start + 1:i])))
                open_at = None
            elif "<!-- figures" in line or "<!-- /figures" in line:
                problems.append(f"{rel}:{i + 1}: malformed marker: {line.strip()}")
        if open_at is not None:
            problems.append(f"{rel}:{open_at[0] + 1}: region {open_at[1]} is never closed")
    return regions, problems


# A line that Markdown would read as a list item, a heading, a quote or a rule.
BLOCK_START = re.compile(r"^(\d{1,9}[.)]|[-+*>#]+|=+)(\s|$)")


# A figure and its unit ("7.20 %", "1.25 million", "312 ms") stay on one line.
UNIT = re.compile(r"(?<=\d) (?=(%|ms|us|s|GB|GiB|MB|million|tokens/s|FLOP/s)[\s.,;:)]|"
                  r"(%|ms|us|s|GB|GiB|MB|million|tokens/s|FLOP/s)$)")
KEEP = "\ue000"  # stands for a space that may not break


def fill(paragraph, width):
    """paragraph wrapped at width columns or a little less, so that no line starts as Markdown
    block syntax would and no figure is parted from its unit."""
    kept = UNIT.sub(KEEP, paragraph)
    for w in range(width, max(width - 20, 20), -1):
        lines = textwrap.wrap(kept, w, break_long_words=False, break_on_hyphens=False)
        if not any(BLOCK_START.match(line) for line in lines[1:]):
            return "\n".join(lines).replace(KEEP, " ")
    raise Failure(f"cannot wrap: {paragraph}")


def wrap_prose(text, width=WIDTH):
    """Paragraphs of prose wrapped at width columns, as the docs are; tables, fenced blocks and
    list items are left as they are."""
    blocks, fence = [], False
    for block in text.split("\n\n"):
        first = block.lstrip()
        if fence or first.startswith(("|", "```", "- ", "$ ")):
            blocks.append(block)
        else:
            blocks.append(fill(" ".join(block.split()), width))
        fence ^= block.count("```") % 2 == 1
    return "\n\n".join(blocks)


def indent_text(text, indent):
    return "\n".join(indent + line if line else line for line in text.split("\n"))


def render(runner, name):
    """A recipe's region text (prose wrapped), or a generated file's whole text."""
    if name in FILES:
        return FILES[name](runner)
    function, kwargs = RECIPES[name]
    return wrap_prose(function(runner, **kwargs).rstrip("\n"))


def render_all(runner, names, jobs):
    """Each named recipe's (or generated file's) text, and a list of failures."""
    order = sorted(names, key=lambda n: (n not in SLOW_FIRST,
                                         SLOW_FIRST.index(n) if n in SLOW_FIRST else 0))
    texts, failures = {}, []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(render, runner, n): n for n in order}
        for future in concurrent.futures.as_completed(futures):
            name = futures[future]
            try:
                texts[name] = future.result()
            except (Failure, KeyError, IndexError, ValueError, OSError) as e:
                failures.append(f"recipe {name}: {type(e).__name__}: {e}")
    return texts, sorted(failures)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Regenerate (or --check) the figures docs quote from parasim's output.")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a region differs from the build's output")
    parser.add_argument("--parasim", default=None,
                        help="the parasim executable (default: ROOT/build/cli/parasim)")
    parser.add_argument("--root", default=None,
                        help="the repository (default: the one holding this script)")
    parser.add_argument("--jobs", type=int, default=max(2, os.cpu_count() or 2),
                        help="recipes run at once (default: the machine's cores, at least 2)")
    parser.add_argument("--list", action="store_true",
                        help="list the recipes and what each shows, then exit")
    parser.add_argument("--show", action="append", metavar="RECIPE", default=[],
                        help="print what RECIPE renders now (repeatable) and exit; docs untouched")
    parser.add_argument("--verbose", action="store_true",
                        help="print each command's wall time on standard error")
    return parser.parse_args(argv)


def list_recipes():
    """--list: every recipe and generated file with what it shows."""
    for name, (function, kwargs) in RECIPES.items():
        given = f" [{', '.join(f'{k}={v}' for k, v in kwargs.items())}]" if kwargs else ""
        print(f"{name}: {' '.join((function.__doc__ or '').split())}{given}")
    for name, function in FILES.items():
        print(f"{name} (file): {' '.join((function.__doc__ or '').split())}")


def marker_problems(root, regions, problems):
    """The marker problems plus every region naming an unknown recipe and every recipe no doc
    uses."""
    problems = list(problems)
    used = {r.name for r in regions}
    for r in regions:
        if r.name not in RECIPES:
            problems.append(f"{r.path.relative_to(root)}:{r.begin + 1}: unknown recipe {r.name}")
    problems += [f"recipe {name} is used by no doc" for name in RECIPES if name not in used]
    return problems


def plural(n, noun):
    return f"{n} {noun}" + ("" if n == 1 else "s")


def report_stale(root, regions, stale, stale_files, texts):
    """--check's report: a unified diff per stale region, a line per stale file; the exit
    code."""
    for r in stale:
        rel = r.path.relative_to(root)
        print(f"{rel}:{r.begin + 1}: region {r.name} differs from what the build prints")
        sys.stdout.writelines(difflib.unified_diff(
            (r.text + "\n").splitlines(True),
            (indent_text(texts[r.name], r.indent) + "\n").splitlines(True),
            f"{rel} ({r.name}, in the doc)", f"{rel} ({r.name}, this build)"))
    for f in stale_files:
        print(f"{f}: differs from what the build draws")
    if stale or stale_files:
        print(f"doc_figures: {len(stale)} of {len(regions)} regions and {len(stale_files)} of "
              f"{plural(len(FILES), 'file')} are stale; run scripts/docs/doc_figures.py to "
              f"regenerate them")
        return 1
    docs = len({r.path for r in regions})
    print(f"doc_figures: all {plural(len(regions), 'region')} in {plural(docs, 'doc')} and "
          f"{plural(len(FILES), 'file')} match the build")
    return 0


def rewrite(root, regions, stale, stale_files, texts):
    """Writes the stale regions and files in place."""
    for path in sorted({r.path for r in stale}):
        lines = path.read_text().split("\n")
        mine = sorted((r for r in stale if r.path == path), key=lambda r: -r.begin)
        for r in mine:
            lines[r.begin + 1:r.end] = indent_text(texts[r.name], r.indent).split("\n")
        path.write_text("\n".join(lines))
        names = ", ".join(r.name for r in reversed(mine))
        print(f"doc_figures: updated {path.relative_to(root)}: {names}")
    for f in stale_files:
        (root / f).write_text(texts[f])
        print(f"doc_figures: updated {f}")
    if not stale and not stale_files:
        print(f"doc_figures: all {plural(len(regions), 'region')} and "
              f"{plural(len(FILES), 'file')} already match the build")
    return 0


def show(runner, names, jobs):
    """--show: what the named recipes render now."""
    unknown = [n for n in names if n not in RECIPES and n not in FILES]
    if unknown:
        print(f"doc_figures: unknown recipe {', '.join(unknown)}", file=sys.stderr)
        return 2
    texts, failures = render_all(runner, names, jobs)
    if failures:
        print("\n".join(f"doc_figures: {f}" for f in failures), file=sys.stderr)
        return 2
    for name in names:
        print(f"<!-- figures: {name} -->\n{texts[name]}\n<!-- /figures -->")
    return 0


def main(argv=None):
    args = parse_args(argv)
    if args.list:
        list_recipes()
        return 0
    root = Path(args.root or Path(__file__).resolve().parents[2]).resolve()
    parasim = Path(args.parasim).resolve() if args.parasim else root / "build" / "cli" / "parasim"
    if not os.access(parasim, os.X_OK):
        print(f"doc_figures: {parasim}: not an executable parasim", file=sys.stderr)
        return 2
    log = sys.stderr if args.verbose else None
    with tempfile.TemporaryDirectory(prefix="doc_figures.") as work:
        runner = Runner(parasim, root, work, log)
        if args.show:
            return show(runner, args.show, args.jobs)
        regions, problems = find_regions(root)
        problems = marker_problems(root, regions, problems)
        if problems:
            print("\n".join(f"doc_figures: {p}" for p in problems), file=sys.stderr)
            return 2
        texts, failures = render_all(runner, sorted({r.name for r in regions}) + sorted(FILES),
                                     args.jobs)
    if failures:
        print("\n".join(f"doc_figures: {f}" for f in failures), file=sys.stderr)
        return 2
    stale = [r for r in regions if r.text != indent_text(texts[r.name], r.indent)]
    stale_files = [f for f in sorted(FILES)
                   if not (root / f).is_file() or (root / f).read_text() != texts[f]]
    if args.check:
        return report_stale(root, regions, stale, stale_files, texts)
    return rewrite(root, regions, stale, stale_files, texts)


if __name__ == "__main__":
    sys.exit(main())
