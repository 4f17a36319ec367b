"""The README's and docs/python.md's ```python blocks run as written, from the repository root."""

from __future__ import annotations

import re

import pytest

from conftest import SOURCE_DIR

DOCS = ["README.md", "docs/python.md"]


def blocks(name: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", (SOURCE_DIR / name).read_text(), re.M | re.S)


@pytest.mark.parametrize("name", DOCS)
def test_python_blocks_run(name, monkeypatch, tmp_path, capsys):
    pytest.importorskip("pandas")
    found = blocks(name)
    assert found, f"{name} has no python block"
    monkeypatch.chdir(SOURCE_DIR)
    for i, code in enumerate(found):
        code = code.replace('"plan.json"', repr(str(tmp_path / "plan.json")))
        exec(compile(code, f"{name} python block {i}", "exec"), {"__name__": "__doc__"})
    assert capsys.readouterr().out
