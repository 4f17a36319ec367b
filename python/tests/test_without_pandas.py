"""Without pandas every table is a list of dicts with the same columns, and compare's JSON,
text and pictures stay reachable through ``attrs``."""

from __future__ import annotations

import sys

import pytest

import parasim
from conftest import SCENARIOS


@pytest.fixture
def no_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` raises ImportError


def test_tables_are_lists_of_dicts(no_pandas):
    r = parasim.simulate(SCENARIOS / "llama2-7b-dgx-h100.json")
    memory = r.memory()
    assert isinstance(memory, list) and [row["peak_bytes"] for row in memory] == r.peak_memory_bytes
    planned = parasim.plan(SCENARIOS / "llama2-7b-dgx-h100.json", threads=2, keep=3, progress=False)
    top = planned.top(2)
    assert [row["rank"] for row in top] == [1, 2] and "step_time_s" in top.columns
    assert top[:1].columns == top.columns and len(top[:1]) == 1
    assert top.to_string().splitlines()[0].split()[:3] == ["rank", "dp", "tp"]
    assert len(planned.screened) == 3
    assert all(set(row) == set(planned.candidates.columns) for row in planned.candidates)
    assert "<pre>" in planned._repr_html_()


def test_compare_keeps_its_attrs(no_pandas, run_cli, tmp_path):
    path = SCENARIOS / "paci-gpt2-medium.json"
    out = tmp_path / "rows.json"
    cli = run_cli("compare", str(path), "--schedules", "1f1b,paci", "--json", str(out))
    assert cli.returncode == 0, cli.stderr
    rows = parasim.compare(path, schedules=["1f1b", "paci"], pictures=True)
    assert isinstance(rows, list) and [row["variant"] for row in rows] == ["1f1b", "paci"]
    assert rows.attrs["json"] == out.read_text()
    assert set(rows.attrs["svgs"]) == {"1f1b", "paci"}


def test_the_plan_script_runs_without_pandas(no_pandas, tmp_path, monkeypatch):
    import runpy

    from conftest import SOURCE_DIR

    out = tmp_path / "args.txt"
    monkeypatch.setattr(sys, "argv", ["plan_llama2_70b.py", str(out)])
    runpy.run_path(str(SOURCE_DIR / "examples" / "plan_llama2_70b.py"), run_name="__main__")
    assert "--tensor-model-parallel-size" in out.read_text()
