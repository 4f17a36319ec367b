"""Bad input through Python: every case the CLI answers with exit code 2 raises ScenarioError
with the same problems (JSON paths and messages); validate() lists them."""

from __future__ import annotations

import json

import pytest

import parasim
from conftest import SCENARIOS

BASE = json.loads((SCENARIOS / "llama2-7b-dgx-h100.json").read_text())


def broken(**changes):
    document = json.loads(json.dumps(BASE))
    for dotted, value in changes.items():
        *path, last = dotted.split("__")
        node = document
        for key in path:
            node = node[key]
        node[last] = value
    return document


CASES = {
    "wrong type": broken(parallel__tp="eight"),
    "unknown key": broken(parallel__tensor_parallel=2),
    "out of range": broken(parallel__pp=0),
    "several problems": broken(parallel__tp=-1, training__micro_batch="x", model="gpt-9"),
    "rule between fields": broken(parallel__tp=3),
    "unknown schedule": broken(parallel__schedule="1f2b"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_scenarios_raise_with_the_cli_problems(case, run_cli, tmp_path):
    document = CASES[case]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    cli = run_cli("simulate", str(path))
    assert cli.returncode == 2
    with pytest.raises(parasim.ScenarioError) as raised:
        parasim.simulate(path)
    error = raised.value
    assert str(error) + "\n" == cli.stderr
    assert error.file == str(path)
    assert error.problems and all(p.path.startswith("/") for p in error.problems)
    assert [f"{error.file}: {p.path}: {p.message}" for p in error.problems] == cli.stderr.splitlines()
    # The same problems from a dict (named so) and from validate().
    with pytest.raises(parasim.ScenarioError) as from_dict:
        parasim.simulate(document)
    assert from_dict.value.problems == error.problems
    assert parasim.validate(document) == error.problems
    if case == "several problems":
        assert len(error.problems) >= 3


def test_validate_valid_scenario_has_no_problems():
    assert parasim.validate(BASE) == []
    assert parasim.validate(SCENARIOS / "llama2-70b-64gpu.json") == []


@pytest.mark.parametrize("kind", ["missing", "folder", "not json", "not an object", "huge"])
def test_unreadable_inputs(kind, tmp_path, run_cli):
    path = tmp_path / "s.json"
    if kind == "folder":
        path.mkdir()
    elif kind == "not json":
        path.write_text('{"name": "x",')
    elif kind == "not an object":
        path.write_text("[1, 2]")
    elif kind == "huge":
        path.write_text('{"name": "' + "x" * (17 << 20) + '"}')
    cli = run_cli("simulate", str(path))
    assert cli.returncode == 2
    with pytest.raises(parasim.ScenarioError) as raised:
        parasim.simulate(path)
    assert str(raised.value) + "\n" == cli.stderr
    if kind == "huge":
        assert "MiB" in str(raised.value)
        with pytest.raises(parasim.ScenarioError, match="MiB"):
            parasim.simulate({"name": "x" * (17 << 20)})


def test_workload_over_the_limit_is_refused_with_the_limit_named(run_cli):
    path = SCENARIOS / "llama3-405b-16384gpu.json"
    cli = run_cli("simulate", str(path), "--full")
    assert cli.returncode == 2
    with pytest.raises(parasim.ScenarioError) as raised:
        parasim.simulate(path, full=True)
    assert str(raised.value) + "\n" == cli.stderr
    assert "over the limit of 10.0 million" in str(raised.value)
    assert parasim.validate(path, full=True) == raised.value.problems


def test_wrong_python_types_are_type_errors():
    with pytest.raises(TypeError):
        parasim.simulate(42)
    with pytest.raises(TypeError):
        parasim.Scenario([1, 2])
    with pytest.raises(TypeError, match="no axis"):
        parasim.compare(BASE, schedule=["1f1b"])


def test_plan_file_problem_paths_are_under_scenario(tmp_path):
    plan = {"parasim_plan": 1, "scenario": broken(parallel__tp="eight")}
    with pytest.raises(parasim.ScenarioError) as raised:
        parasim.simulate(plan)
    assert raised.value.problems[0].path.startswith("/scenario/")


def test_scenario_with_on_preset_strings_and_numbers():
    base = parasim.Scenario.load(SCENARIOS / "llama2-7b-dgx-h100.json")
    longer = base.with_({"model.seq_len": 2048, "cluster.nodes": 2, "parallel.dp": 4})
    assert longer["model"] == {"preset": "llama2-7b", "seq_len": 2048}
    assert longer["cluster"] == {"preset": "dgx-h100", "nodes": 2}
    assert parasim.validate(longer) == []
    assert longer.name.endswith("(changed)")
    r = parasim.simulate(longer)
    assert r.tokens_per_step == 2048 * 64
    with pytest.raises(TypeError, match="not an object"):
        base.with_({"parallel.dp.x": 1})


def test_numpy_numbers_and_nan():
    np = pytest.importorskip("numpy")
    document = json.loads(json.dumps(BASE))
    document["parallel"]["tp"] = np.int64(2)
    document["training"]["global_batch"] = np.int32(64)
    assert parasim.simulate(document).to_json() == parasim.simulate(BASE).to_json()
    document["training"]["global_batch"] = float("nan")
    with pytest.raises(ValueError, match="JSON cannot write"):
        parasim.simulate(document)
    document["training"]["global_batch"] = object()
    with pytest.raises(TypeError, match="JSON values"):
        parasim.simulate(document)


def test_scenario_load_reads_as_the_commands(tmp_path, run_cli):
    path = tmp_path / "broken.json"
    path.write_text('{"name": ')
    cli = run_cli("validate", str(path))
    with pytest.raises(parasim.ScenarioError) as raised:
        parasim.Scenario.load(path)
    assert str(raised.value) + "\n" == cli.stderr
    with pytest.raises(parasim.ScenarioError, match="cannot read"):
        parasim.Scenario.load(tmp_path / "missing.json")
    (tmp_path / "list.json").write_text("[1]")
    with pytest.raises(parasim.ScenarioError, match="JSON object"):
        parasim.Scenario.load(tmp_path / "list.json")


def test_copies_and_numpy_arguments():
    import copy

    np = pytest.importorskip("numpy")
    r = parasim.simulate(SCENARIOS / "paci-gpt2-medium.json")
    assert copy.copy(r).timeline_svg() == r.timeline_svg()
    base = parasim.Scenario.load(SCENARIOS / "llama2-7b-dgx-h100.json")
    twice = base.with_({"parallel.dp": np.int64(2)}).with_({"parallel.tp": 2})
    assert twice.name.endswith("(changed)") and not twice.name.endswith("(changed) (changed)")
    assert parasim.validate(base.with_({"parallel.sequence_parallel": np.bool_(True)})) == []
    planned = parasim.plan(base, search={"tp": np.int64(2), "sequence_parallel": np.bool_(True)},
                           max_candidates=np.int64(1000000), headroom=np.float32(0.05),
                           threads=np.int64(2), progress=False)
    assert set(planned.top(10)["tp"]) == {2}
