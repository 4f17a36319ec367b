"""The examples run: the 10-line planning script, the sweep script (its picture is an SVG), and
every code cell of the notebook, in order, as Jupyter would run them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from conftest import SOURCE_DIR

EXAMPLES = SOURCE_DIR / "examples"


def run(script, *args, cwd):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, str(EXAMPLES / script), *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env)


def test_plan_script(tmp_path, run_cli):
    out = tmp_path / "args.txt"
    done = run("plan_llama2_70b.py", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[:4] == ["rank", "dp", "tp", "pp"]
    assert len(lines) == 1 + 5 + 1
    assert "--tensor-model-parallel-size" in out.read_text()
    assert len((EXAMPLES / "plan_llama2_70b.py").read_text().strip().splitlines()) <= 14


def test_sweep_script_draws_an_svg(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "sweep.svg"
    done = run("sweep_llama2_70b.py", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert ET.parse(out).getroot().tag.endswith("svg")
    assert done.stdout.count("'tp'") == 12


def test_notebook_cells_run(monkeypatch):
    pytest.importorskip("matplotlib")
    pytest.importorskip("pandas")
    import matplotlib

    matplotlib.use("Agg")
    notebook = json.loads((EXAMPLES / "parasim_tour.ipynb").read_text())
    assert notebook["nbformat"] == 4
    monkeypatch.chdir(EXAMPLES)
    monkeypatch.setattr(sys, "path", list(sys.path))
    namespace: dict = {"__name__": "__notebook__"}
    ran = 0
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        exec(compile("".join(cell["source"]), f"parasim_tour.ipynb cell {ran}", "exec"), namespace)
        ran += 1
    assert ran >= 8
    assert namespace["best"].ranked >= 1
    assert len(namespace["frame"]) == 12
