"""compare: the command's axes, a DataFrame of the rows, the CLI's JSON bytes, the pictures."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

import parasim
from conftest import SCENARIOS

PACI = SCENARIOS / "paci-gpt2-medium.json"


def test_schedules_match_the_cli(run_cli, tmp_path):
    out = tmp_path / "rows.json"
    cli = run_cli("compare", str(PACI), "--schedules", "1f1b,zb-v,dualpipev,paci", "--json", str(out))
    assert cli.returncode == 0, cli.stderr
    frame = parasim.compare(PACI, schedules=["1f1b", "zb-v", "dualpipev", "paci"])
    assert frame.attrs["json"] == out.read_text()
    assert frame.attrs["text"] in cli.stdout
    assert list(frame["variant"]) == ["1f1b", "zb-v", "dualpipev", "paci"]
    for column in ["axis", "applicable", "schedule", "parallel.pp", "step_time_s", "tokens_per_s",
                   "mfu", "bubble_fraction", "peak_memory_bytes", "exposed_comm_s.pp",
                   "not_applicable"]:
        assert column in frame.columns
    row = frame.set_index("variant")
    assert not row.loc["dualpipev", "applicable"]  # 8 micro-batches < 2 x pp
    assert row.loc["zb-v", "tokens_per_s"] > row.loc["1f1b", "tokens_per_s"]


def test_a_comma_string_is_the_same_as_a_list():
    a = parasim.compare(PACI, schedules="1f1b,paci")
    b = parasim.compare(PACI, schedules=["1f1b", "paci"])
    assert a.attrs["json"] == b.attrs["json"]


def test_other_axes(run_cli, tmp_path):
    path = SCENARIOS / "llama3-8b-fsdp2-8gpu.json"
    out = tmp_path / "rows.json"
    cli = run_cli("compare", str(path), "--shardings", "zero-3,fsdp2", "--json", str(out))
    assert cli.returncode == 0, cli.stderr
    assert parasim.compare(path, shardings=["zero-3", "fsdp2"]).attrs["json"] == out.read_text()


def test_pictures_are_svg():
    frame = parasim.compare(PACI, schedules=["1f1b", "paci"], pictures=True)
    svgs = frame.attrs["svgs"]
    assert set(svgs) == {"1f1b", "paci"}
    for timeline, memory in svgs.values():
        assert ET.fromstring(timeline).tag.endswith("svg")
        assert ET.fromstring(memory).tag.endswith("svg")


def test_wrong_axis_items_raise(run_cli):
    cli = run_cli("compare", str(PACI), "--schedules", "1f1b,nope")
    assert cli.returncode == 2
    with pytest.raises(parasim.ScenarioError) as raised:
        parasim.compare(PACI, schedules=["1f1b", "nope"])
    assert str(raised.value) + "\n" == cli.stderr
