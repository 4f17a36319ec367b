"""plan: the ranked candidates as a DataFrame, the winner as a plan that exports, the CLI's
bytes, progress through a callback."""

from __future__ import annotations

import json

import pytest

import parasim
from conftest import SCENARIOS

SMALL = SCENARIOS / "llama2-7b-dgx-h100.json"


@pytest.fixture(scope="module")
def planned():
    return parasim.plan(SMALL, for_trainer="megatron", threads=2, keep=20, progress=False)


def test_plan_matches_the_cli(planned, run_cli, tmp_path):
    candidates, out = tmp_path / "candidates.json", tmp_path / "plan.json"
    cli = run_cli("plan", str(SMALL), "--for", "megatron", "--threads", "2", "--keep", "20",
                  "--json", str(candidates), "--out", str(out))
    assert cli.returncode == 0, cli.stderr
    assert planned.to_json() == candidates.read_text()
    assert planned.text in cli.stdout
    ours, theirs = planned.winner.to_dict(), json.loads(out.read_text())
    assert ours["provenance"].pop("command_line") == "parasim.plan (Python)"
    theirs["provenance"].pop("command_line")
    assert ours == theirs
    # The plan file's text, with the provenance line aside, is the same bytes.
    drop = lambda text: [l for l in text.splitlines() if '"command_line"' not in l]  # noqa: E731
    assert drop(planned.winner.to_json()) == drop(out.read_text())
    # Its export is the CLI's export of the same plan.
    exported = run_cli("export", str(out), "--to", "megatron")
    assert exported.returncode == 0, exported.stderr
    config = planned.winner.export(to="megatron")
    assert config == exported.stdout
    assert [f"parasim export: note: {n}" for n in config.notes] == exported.stderr.splitlines()
    assert config.trainer.startswith("megatron-core") and config.differences == []


def test_candidates_frame(planned):
    frame = planned.candidates
    assert len(frame) >= planned.ranked >= 1
    for column in ["rank", "candidate.dp", "candidate.tp", "candidate.pp", "candidate.schedule",
                   "candidate.micro_batch", "candidate.recompute", "estimate.step_time_s",
                   "simulated.step_time_s", "simulated.tokens_per_s", "simulated.mfu",
                   "simulated.device_memory_bytes", "simulated.fits"]:
        assert column in frame.columns, column
    ranked = frame.dropna(subset=["rank"])
    assert len(ranked) == planned.ranked and list(ranked["rank"]) == list(range(1, planned.ranked + 1))
    assert ranked["simulated.fits"].all()
    assert not frame.loc[frame["rank"].isna(), "simulated.fits"].fillna(False).any()
    steps = list(ranked["simulated.step_time_s"])
    assert steps == sorted(steps)
    assert steps[0] == planned.winner.predicted["step_time_s"]
    assert len(planned.screened) == 20
    assert planned.winner.scenario["parallel"]["dp"] == frame["candidate.dp"].iloc[0]


def test_winner_simulates_to_its_prediction(planned):
    again = parasim.simulate(planned.winner.scenario)
    assert again.to_dict() == planned.winner.predicted


def test_export_targets_and_json(planned, tmp_path, run_cli):
    args = planned.winner.export(to="megatron", json=True)
    assert isinstance(args, list) and any(str(a).startswith("--") for a in args)
    path = tmp_path / "plan.json"
    planned.winner.save(path)
    assert path.read_text() == planned.winner.to_json()
    cli = run_cli("export", str(path), "--to", "deepspeed")
    py = parasim.export(path, to="deepspeed") if cli.returncode == 0 else None
    if cli.returncode == 0:
        assert py == cli.stdout
    else:
        with pytest.raises(parasim.ScenarioError):
            parasim.export(path, to="deepspeed")
    with pytest.raises(ValueError, match="megatron, deepspeed, torchtitan or shampoo"):
        planned.winner.export(to="nemo")


def test_progress_callback_and_its_errors():
    calls = []
    parasim.plan(SMALL, threads=2, progress=lambda tier, done, total: calls.append((tier, done, total)))
    assert calls and {c[0] for c in calls} <= {"screened", "simulated"}
    assert all(0 <= done <= total for _, done, total in calls)

    class Stop(Exception):
        pass

    def stop(tier, done, total):
        raise Stop(tier)

    with pytest.raises(Stop):
        parasim.plan(SMALL, threads=2, progress=stop)


def test_same_plan_whatever_the_threads():
    one = parasim.plan(SMALL, threads=1, progress=False)
    two = parasim.plan(SMALL, threads=2, progress=False)
    assert one.to_json() == two.to_json()


def test_search_narrows_the_space():
    r = parasim.plan(SMALL, search={"tp": [2], "pp": [1]}, threads=2, progress=False)
    frame = r.candidates.dropna(subset=["rank"])
    assert set(frame["candidate.tp"]) == {2} and set(frame["candidate.pp"]) == {1}


def test_no_plan_and_bad_arguments(tmp_path, run_cli):
    document = json.loads(SMALL.read_text())
    document["cluster"] = {"preset": "dgx-h100", "nodes": 1}
    document.pop("parallel")
    document["model"] = "llama3.1-405b"
    path = tmp_path / "too-big.json"
    path.write_text(json.dumps(document))
    with pytest.raises(parasim.NoPlanError) as raised:
        parasim.plan(path, threads=2, progress=False)
    assert raised.value.text
    cli = run_cli("plan", str(path), "--threads", "2")
    assert cli.returncode == 1
    assert cli.stderr == f"{raised.value}; nothing written\n"
    assert cli.stdout == raised.value.text
    with pytest.raises(ValueError):
        parasim.plan(SMALL, top=0)
    with pytest.raises(ValueError):
        parasim.plan(SMALL, for_trainer="nemo")
    with pytest.raises(parasim.ScenarioError):
        parasim.plan(SMALL, search={"tp": ["x"]}, progress=False)


def test_a_tqdm_bar_by_default_when_tqdm_is_installed(monkeypatch):
    import sys
    import types

    bars = []

    class FakeBar:
        def __init__(self, total, desc, file, leave):
            self.total, self.desc, self.n, self.closed = total, desc, 0, False  # noqa: E501
            bars.append(self)

        def update(self, n):
            self.n += n
            assert 0 <= self.n <= self.total

        def refresh(self):
            assert 0 <= self.n <= self.total

        def close(self):
            self.closed = True

    fake = types.ModuleType("tqdm.auto")
    fake.tqdm = FakeBar
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", fake)
    parasim.plan(SMALL, threads=2)
    assert [b.desc for b in bars] == ["screened", "simulated"][: len(bars)] and bars
    assert all(b.n == b.total for b in bars)
    assert all(b.closed for b in bars)
    bars.clear()
    parasim.plan(SMALL, threads=2, progress=False)
    assert not bars


def test_export_refusal_and_approximation_as_the_cli(run_cli):
    path = SCENARIOS / "zb-v-gpt-6.2b-8gpu.json"
    refused = run_cli("export", str(path), "--to", "megatron")
    assert refused.returncode == 2
    with pytest.raises(parasim.ScenarioError) as raised:
        parasim.export(path, to="megatron")
    assert str(raised.value) + "\n" == refused.stderr
    assert {p.path for p in raised.value.problems} >= {"/parallel/schedule"}
    approximate = run_cli("export", str(path), "--to", "megatron", "--allow-approximate")
    assert approximate.returncode == 0
    with pytest.warns(UserWarning, match="approximate: /parallel/schedule"):
        config = parasim.export(path, to="megatron", allow_approximate=True)
    assert config == approximate.stdout
    assert [f"parasim export: approximate: {d}" for d in config.differences] == [
        line for line in approximate.stderr.splitlines() if "approximate:" in line]


def test_a_raising_callback_stops_the_plan_at_once():
    calls = []
    parasim.plan(SMALL, threads=1, progress=lambda *a: calls.append(a))
    assert len(calls) > 3

    class Stop(Exception):
        pass

    seen = []

    def stop_at_second(tier, done, total):
        seen.append(tier)
        if len(seen) == 2:
            raise Stop()

    with pytest.raises(Stop):
        parasim.plan(SMALL, threads=1, progress=stop_at_second)
    assert len(seen) == 2  # no call after the exception: the planner stopped


def test_ctrl_c_stops_a_plan_without_a_callback():
    import threading
    import time
    import _thread

    big = SCENARIOS / "llama2-70b-64gpu.json"
    start = time.perf_counter()
    parasim.plan(big, threads=1, progress=False)
    whole = time.perf_counter() - start
    timer = threading.Timer(whole / 20, _thread.interrupt_main)  # Ctrl-C early in the search
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        timer.start()
        parasim.plan(big, threads=1, progress=False)
    stopped = time.perf_counter() - start
    timer.join()
    # Checked every 50 ms at most: without the check the plan would run to its end first.
    assert stopped < whole / 2, (stopped, whole)


def test_arguments_out_of_the_commands_range():
    for bad in [dict(gpus=0), dict(gpus=-3), dict(threads=0), dict(threads=5000), dict(keep=-1),
                dict(max_candidates=float("nan")), dict(max_candidates=float("inf")),
                dict(tie_percent=500), dict(top=True), dict(headroom=1.0)]:
        with pytest.raises(ValueError):
            parasim.plan(SMALL, **bad)
    with pytest.raises(TypeError, match="progress"):
        parasim.plan(SMALL, progress=42)


def test_search_takes_one_value_and_booleans(run_cli, tmp_path):
    out = tmp_path / "c.json"
    cli = run_cli("plan", str(SMALL), "--threads", "2", "--search", "tp=2",
                  "--search", "sequence_parallel=true", "--json", str(out), "--keep", "5")
    assert cli.returncode == 0, cli.stderr
    r = parasim.plan(SMALL, search={"tp": 2, "sequence_parallel": True}, threads=2, keep=5,
                     progress=False)
    assert r.to_json() == out.read_text()


def test_the_gil_is_released_while_planning():
    import threading

    started, finished = threading.Event(), threading.Event()

    def first_call(tier, done, total):
        started.set()

    def run():
        try:
            parasim.plan(SCENARIOS / "llama2-70b-64gpu.json", threads=1, progress=first_call)
        finally:
            finished.set()

    worker = threading.Thread(target=run)
    worker.start()
    assert started.wait(timeout=120)
    count = 0
    while not finished.is_set():  # runs only while the plan does not hold the GIL
        count += 1
    worker.join()
    # A plan of about a second leaves this loop millions of turns; a plan holding the GIL
    # leaves it none but the few of one switch interval after the plan returns (measured:
    # about 30 thousand at most).
    assert count > 300_000, count
