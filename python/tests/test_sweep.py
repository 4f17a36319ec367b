"""A sweep built in Python: 100 scenarios from one base, simulated in a loop and from threads
(the GIL is released, the results are the same bytes whatever the order or thread count)."""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor

import parasim
from conftest import SCENARIOS

BASE = parasim.Scenario.load(SCENARIOS / "paci-gpt2-medium.json")


def sweep_points() -> list[parasim.Scenario]:
    points = []
    schedules = ["1f1b", "gpipe", "zb-h1", "interleaved-1f1b", "paci"]
    for schedule, micro_batch, recompute, zero in itertools.product(
        schedules, [1, 2, 4, 8, 16], ["none", "selective"], [0, 1]
    ):
        changes = {"parallel.schedule": schedule, "training.micro_batch": micro_batch,
                   "training.recompute": recompute, "parallel.zero_stage": zero,
                   "name": f"sweep-{schedule}-mb{micro_batch}-{recompute}-z{zero}"}
        if schedule == "interleaved-1f1b":
            changes["parallel.chunks"] = 2
        points.append(BASE.with_(changes))
    return points


def test_a_sweep_of_100_scenarios():
    points = sweep_points()
    assert len(points) == 100
    results = {}
    refused = {}
    for s in points:
        try:
            results[s["name"]] = parasim.simulate(s, keep_workload=False)
        except parasim.ScenarioError as e:  # a combination the rules refuse, with its path
            assert e.problems and e.problems[0].path.startswith("/")
            refused[s["name"]] = e.problems
    assert len(results) >= 80, sorted(refused)
    for name, r in results.items():
        assert r.scenario == name
        assert r.step_time_s > 0 and r.tokens_per_s > 0
    # A larger micro-batch never holds less activation memory per step at the same schedule.
    by = {n: r for n, r in results.items()}
    small, large = by.get("sweep-1f1b-mb1-none-z0"), by.get("sweep-1f1b-mb16-none-z0")
    if small and large:
        assert max(large.peak_memory_bytes) > max(small.peak_memory_bytes)


def test_threads_give_the_same_bytes_as_a_loop():
    points = sweep_points()[:12]
    loop = [parasim.simulate(s).to_json() for s in points]
    with ThreadPoolExecutor(max_workers=4) as pool:
        threaded = list(pool.map(lambda s: parasim.simulate(s).to_json(), points))
    assert threaded == loop
