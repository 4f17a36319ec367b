"""Sweep tensor parallelism and micro-batch size for Llama 2 70B on 64 H100s (4 pipeline
stages, data parallelism taking the rest, global batch 128, full recomputation) and plot tokens/s
and peak memory per GPU.

    python examples/sweep_llama2_70b.py [OUT.svg]

docs/python.md shows the picture it draws (docs/python-sweep.svg).
"""
from __future__ import annotations

import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import parasim  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
GPUS, PP = 64, 4


def sweep() -> list[dict]:
    base = parasim.Scenario.load(ROOT / "scenarios" / "llama2-70b-64gpu.json")
    rows = []
    for tp in (1, 2, 4, 8):
        for micro_batch in (1, 2, 4):
            dp = GPUS // (tp * PP)
            point = base.with_({"name": f"llama2-70b tp{tp} mb{micro_batch}", "parallel.tp": tp,
                                "parallel.dp": dp, "parallel.sequence_parallel": tp > 1,
                                "training.micro_batch": micro_batch, "training.recompute": "full"})
            row = {"tp": tp, "dp": dp, "micro_batch": micro_batch}
            try:
                r = parasim.simulate(point, keep_workload=False)  # the figures only
            except parasim.ScenarioError as e:
                row["refused"] = e.problems[0].message
            else:
                row.update(tokens_per_s=r.tokens_per_s, step_time_s=r.step_time_s,
                           peak_gib=max(r.peak_memory_bytes) / 2**30, fits=r.fits_in_hbm)
            rows.append(row)
    return rows


def plot(rows: list[dict], out: pathlib.Path) -> None:
    plt.rcParams["svg.hashsalt"] = "parasim"  # the same file for the same figures
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for tp in sorted({r["tp"] for r in rows}):
        ran = [r for r in rows if r["tp"] == tp and "tokens_per_s" in r]
        if not ran:
            continue
        x = [r["micro_batch"] for r in ran]
        line, = left.plot(x, [r["tokens_per_s"] / 1e3 for r in ran], marker="o", label=f"tp {tp}")
        right.plot(x, [r["peak_gib"] for r in ran], marker="o", color=line.get_color(), label=f"tp {tp}")
        for r in ran:
            if not r["fits"]:  # a black ring where the step does not fit in HBM
                left.plot(r["micro_batch"], r["tokens_per_s"] / 1e3, "o", ms=13, mfc="none",
                          color="black")
    hbm_gib = 80e9 / 2**30
    right.axhline(hbm_gib, color="black", lw=1, ls="--", label="H100 HBM (80 GB)")
    left.set(xlabel="micro-batch size (sequences)", ylabel="throughput (thousand tokens/s)",
             title="Llama 2 70B, 64 H100, pp 4 (ringed: over HBM)", xticks=[1, 2, 4])
    right.set(xlabel="micro-batch size (sequences)", ylabel="peak memory per GPU (GiB)",
              title="the largest stage's peak", xticks=[1, 2, 4])
    left.legend()
    right.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out, metadata={"Date": None})
    plt.close(fig)


if __name__ == "__main__":
    rows = sweep()
    for r in rows:
        print(r)
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "llama2-70b-sweep.svg")
    plot(rows, out)
    print(f"picture: {out}")
