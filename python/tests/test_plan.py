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
    assert planned.winner.export(to="megatron") == exported.stdout


def test_candidates_frame(planned):
    frame = planned.candidates
    assert len(frame) >= planned.ranked >= 1
    for column in ["rank", "candidate.dp", "candidate.tp", "candidate.pp", "candidate.schedule",
                   "candidate.micro_batch", "candidate.recompute", "estimate.step_time_s",
                   "simulated.step_time_s", "simulated.tokens_per_s", "simulated.mfu",
                   "simulated.device_memory_bytes", "simulated.fits"]:
        assert column in frame.columns, column
    ranked = frame.dropna(subset=["rank"])
    steps = list(ranked["simulated.step_time_s"])
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
