"""simulate: inputs as paths, dicts and Scenario objects; results equal the CLI's bytes."""

from __future__ import annotations

import json

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
    result = parasim.simulate(path)
    assert result.to_json() == cli.stdout
    assert result.text in cli.stderr  # the report, the cost model's lines after it


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


def test_pictures_and_trace():
    r = parasim.simulate(SCENARIOS / "paci-gpt2-medium.json", memory_timeline=True)
    assert r.timeline_svg().startswith("<svg")
    assert r.memory_svg().startswith("<svg")
    trace = json.loads(r.chrome_trace())
    assert trace["traceEvents"]
    with pytest.raises(ValueError, match="memory_timeline=True"):
        parasim.simulate(LLAMA).memory_svg()
