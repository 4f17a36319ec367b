"""simulate: inputs as paths, dicts and Scenario objects; results equal the CLI's bytes."""

from __future__ import annotations

import json
import warnings

import pytest

import parasim
from conftest import SCENARIOS, shipped_scenarios

LLAMA = SCENARIOS / "llama2-7b-dgx-h100.json"


def test_path_dict_and_scenario_give_the_same_result():
    by_path = parasim.simulate(LLAMA)
    document = json.loads(LLAMA.read_text())
    by_dict = parasim.simulate(document)
    by_object = parasim.simulate(parasim.Scenario(document))
    assert by_path.to_json() == by_dict.to_json() == by_object.to_json()


def test_result_fields_units_and_types():
    r = parasim.simulate(LLAMA)
    d = r.to_dict()
    assert r.step_time_s == d["step_time_s"] > 0
    assert r.tokens_per_s == pytest.approx(d["tokens_per_step"] / d["step_time_s"], rel=1e-12)
    assert 0 < r.mfu < 1
    assert len(r.bubble_fraction) == len(r.peak_memory_bytes) == d["simulated_devices"]
    assert set(r.exposed_comm_s) == {"tp", "pp", "dp", "cp", "ep"}
    assert all("max" in s for s in r.staleness)
    assert "tokens/s" in r.text and "step" in r.text
    with pytest.raises(AttributeError, match="no field"):
        r.no_such_field  # noqa: B018
    memory = r.memory()
    assert list(memory["peak_bytes"]) == r.peak_memory_bytes
    assert {"weights", "gradients", "optimizer state", "activations"} <= set(memory.columns)


@pytest.mark.parametrize("path", shipped_scenarios(), ids=lambda p: p.stem)
def test_byte_identical_to_cli_on_every_shipped_scenario(path, run_cli):
    cli = run_cli("simulate", str(path), "--json", "-")
    assert cli.returncode == 0, cli.stderr
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = parasim.simulate(path)
    assert result.to_json() == cli.stdout
    assert result.text in cli.stderr  # the report, the cost model's lines after it
    cli_warnings = [l for l in cli.stderr.splitlines() if l.startswith("warning: ")]
    assert [f"warning: {w}" for w in result.warnings] == cli_warnings
    assert [str(w.message) for w in caught if w.category is parasim.ParasimWarning] == result.warnings


def test_full_mode_matches_cli(run_cli):
    path = SCENARIOS / "paci-gpt2-medium.json"
    cli = run_cli("simulate", str(path), "--full", "--json", "-")
    assert cli.returncode == 0, cli.stderr
    assert parasim.simulate(path, full=True).to_json() == cli.stdout


def test_profile_is_applied_like_the_cli(run_cli, tmp_path):
    profiles = sorted((SCENARIOS / "profiles").glob("*.json"))
    if not profiles:
        pytest.skip("no shipped profile")
    profile = profiles[0]
    scenario = LLAMA
    cli = run_cli("simulate", str(scenario), "--profile", str(profile), "--allow-foreign-profile",
                  "--json", "-")
    assert cli.returncode == 0, cli.stderr
    r = parasim.simulate(scenario, profile=profile, allow_foreign_profile=True)
    assert r.to_json() == cli.stdout
    as_dict = parasim.simulate(scenario, profile=json.loads(profile.read_text()),
                               allow_foreign_profile=True)
    assert as_dict.to_json() == cli.stdout


def test_trace_is_the_clis(run_cli, tmp_path):
    path = SCENARIOS / "paci-gpt2-medium.json"
    trace = tmp_path / "t.json"
    cli = run_cli("simulate", str(path), "--trace", str(trace))
    assert cli.returncode == 0, cli.stderr
    assert parasim.simulate(path, memory_timeline=True).chrome_trace() == trace.read_text()


def test_time_beyond_the_engines_range_names_the_input(run_cli, tmp_path):
    document = json.loads(LLAMA.read_text())
    document["cluster"] = {"preset": "dgx-h100", "device": {"peak": {"bf16": "0.000001 TFLOP/s"}}}
    path = tmp_path / "slow.json"
    path.write_text(json.dumps(document))
    cli = run_cli("simulate", str(path))
    if cli.returncode != 2 or "check the scenario's and the profile's hardware" not in cli.stderr:
        pytest.fail(f"expected the time-range refusal: {cli.returncode} {cli.stderr}")
    with pytest.raises(parasim.ScenarioError) as raised:
        parasim.simulate(path)
    assert str(raised.value) + "\n" == cli.stderr
    assert raised.value.file == str(path) and raised.value.problems[0].path == "/"


def test_results_pickle_without_their_workload():
    import pickle

    r = parasim.simulate(LLAMA)
    again = pickle.loads(pickle.dumps(r))
    assert again.to_json() == r.to_json() and again.text == r.text
    assert again.warnings == r.warnings
    with pytest.raises(ValueError, match="keep_workload"):
        again.timeline_svg()


def test_pictures_and_trace():
    r = parasim.simulate(SCENARIOS / "paci-gpt2-medium.json", memory_timeline=True)
    assert r.timeline_svg().startswith("<svg")
    assert r.memory_svg().startswith("<svg")
    trace = json.loads(r.chrome_trace())
    assert trace["traceEvents"]
    with pytest.raises(ValueError, match="memory_timeline=True"):
        parasim.simulate(LLAMA).memory_svg()
