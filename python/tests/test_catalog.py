"""presets(), registry() and __version__: read from parasim's own tables, as `list --json`."""

from __future__ import annotations

import json

import parasim


def test_presets_and_registry_are_the_cli_list(run_cli):
    cli = run_cli("list", "--json")
    assert cli.returncode == 0, cli.stderr
    listed = json.loads(cli.stdout)
    assert parasim.presets() == listed["presets"]
    assert parasim.registry() == listed["strategies"]["kinds"]


def test_registry_entries_have_sources_and_parameters():
    kinds = {k["kind"]: k for k in parasim.registry()}
    assert {"schedule", "sharding", "precision", "moe_dispatcher", "allocator"} <= set(kinds)
    schedules = {e["name"]: e for e in kinds["schedule"]["entries"]}
    assert {"1f1b", "zb-v", "dualpipev", "paci"} <= set(schedules)
    assert all(e["source"] for k in kinds.values() for e in k["entries"])
    assert kinds["schedule"]["scenario_key"] == "/parallel/schedule"
    pp = kinds["schedule"]["shared_parameters"][0]
    assert pp["path"] == "/parallel/pp" and pp["unit"]


def test_presets_have_figures_with_units():
    p = parasim.presets()
    models = {m["name"]: m for m in p["models"]}
    assert models["llama2-70b"]["layers"] == 80
    clusters = {c["name"]: c for c in p["clusters"]}
    assert clusters["dgx-h100"]["hbm_bytes"] == 80e9
    assert all(c["source"] for c in p["clusters"])


def test_version_is_the_cli_version(run_cli):
    cli = run_cli("--version")
    assert parasim.__version__ in cli.stdout
