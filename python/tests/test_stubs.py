"""The shipped type stubs: parasim/_core.pyi is what nanobind's stubgen writes for the module
as built (regenerate: python -m nanobind.stubgen -m parasim._core -o python/parasim/_core.pyi),
and the package is marked typed (py.typed)."""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import pytest

import parasim
from conftest import SOURCE_DIR


def test_core_stub_is_current(tmp_path):
    if importlib.util.find_spec("nanobind") is None:
        pytest.skip("nanobind is not installed in this Python")
    import re
    from importlib.metadata import version

    pinned = re.search(r"nanobind==([0-9.]+)", (SOURCE_DIR / "scripts" / "python-env.sh").read_text())
    if version("nanobind") != pinned.group(1):  # stubgen's output changes between releases
        pytest.skip(f"the stub is checked with nanobind {pinned.group(1)}, not {version('nanobind')}")
    out = tmp_path / "_core.pyi"
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "parasim._core", "-o", str(out)],
                   check=True)
    shipped = SOURCE_DIR / "python" / "parasim" / "_core.pyi"
    assert out.read_text() == shipped.read_text(), "regenerate python/parasim/_core.pyi"


def test_package_is_typed():
    package = pathlib.Path(parasim.__file__).parent
    assert (package / "py.typed").exists()
    assert (package / "_core.pyi").exists()
