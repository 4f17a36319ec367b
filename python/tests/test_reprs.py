"""What a notebook shows: the summary table and the timeline (an SVG that parses)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

import parasim
from conftest import SCENARIOS


def test_result_reprs_render():
    r = parasim.simulate(SCENARIOS / "llama2-70b-64gpu.json")
    svg = r._repr_svg_()
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert "stage 0" in svg
    page = r._repr_html_()
    assert page.startswith("<table>") and "tokens/s" in page and "GiB" in page
    body = page.split("<div>", 1)[1].rsplit("</div>", 1)[0]
    assert ET.fromstring(body).tag.endswith("svg")
    assert "step" in repr(r) and "tokens/s" in repr(r)
    labels = dict(r.summary())
    assert labels["step time"].endswith(" s") and labels["MFU"].endswith(" %")


def test_plan_result_repr_html():
    planned = parasim.plan(SCENARIOS / "llama2-7b-dgx-h100.json", threads=2, progress=False)
    page = planned._repr_html_()
    assert "<table" in page
    assert "&lt;parasim.Plan" in page and "<parasim" not in page
    assert "parasim.Plan" in repr(planned.winner)


def test_a_result_without_its_workload():
    r = parasim.simulate(SCENARIOS / "llama2-7b-dgx-h100.json", keep_workload=False)
    assert r._repr_svg_() is None
    assert "<svg" not in r._repr_html_() and "tokens/s" in r._repr_html_()
    with pytest.raises(ValueError, match="keep_workload=True"):
        r.timeline_svg()
    with pytest.raises(ValueError, match="keep_workload=True"):
        r.chrome_trace()
