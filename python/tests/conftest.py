"""Shared fixtures: the source tree, the CLI built beside the module (PARASIM_CLI), and a way to
run it, so tests can hold the Python API's output against the command's byte for byte."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("PARASIM_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
SCENARIOS = SOURCE_DIR / "scenarios"


def shipped_scenarios() -> list[pathlib.Path]:
    return sorted(SCENARIOS.glob("*.json"))


@pytest.fixture(scope="session")
def cli() -> str:
    path = os.environ.get("PARASIM_CLI") or str(SOURCE_DIR / "build" / "cli" / "parasim")
    if not os.access(path, os.X_OK):
        pytest.skip(f"no parasim executable at {path} (set PARASIM_CLI)")
    return path


@pytest.fixture(scope="session")
def run_cli(cli):
    def run(*args: str, cwd: str | os.PathLike | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([cli, *args], capture_output=True, text=True, cwd=cwd)

    return run
