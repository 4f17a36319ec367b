"""The Python API's per-call overhead: parasim.simulate(path) from Python against the command's
own simulate run in-process (`parasim simulate PATH --json OUT`, timed in C++ with no process
start), and against the same C++ steps without writing the file (read, simulate, result JSON,
text report: what parasim.simulate asks of the module), on the same scenario, interleaved so
that all three see the same machine. Prints figures; never fails on slowness (the target,
within 10 % of the CLI's in-process time, is issue 32's).

    PYTHONPATH=build/python python3 benchmarks/python_overhead.py [--scenario PATH] [--repeats N]
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import tempfile
import time

import parasim
from parasim import _core

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default=str(ROOT / "scenarios" / "llama2-7b-dgx-h100.json"))
    parser.add_argument("--repeats", type=int, default=30)
    a = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = str(pathlib.Path(tmp) / "result.json")
        parasim.simulate(a.scenario)  # warm both paths once
        _core.time_cli_simulate(a.scenario, out, 1)
        cli, core, py = [], [], []
        for _ in range(a.repeats):
            cli += _core.time_cli_simulate(a.scenario, out, 1)
            core += _core.time_core_simulate(a.scenario, 1)
            start = time.perf_counter()
            result = parasim.simulate(a.scenario)
            _ = result.step_time_s
            py.append(time.perf_counter() - start)
        same = pathlib.Path(out).read_text() == result.to_json()
    cli_ms, core_ms, py_ms = (statistics.median(t) * 1e3 for t in (cli, core, py))
    print(f"scenario: {a.scenario}")
    print(f"repeats: {a.repeats}, medians of interleaved runs")
    print(f"CLI in-process, parasim simulate --json FILE: {cli_ms:8.2f} ms per call")
    print(f"the same C++ steps without the file:          {core_ms:8.2f} ms per call")
    print(f"Python parasim.simulate(path) -> Result:      {py_ms:8.2f} ms per call")
    print(f"against the CLI in-process: {py_ms - cli_ms:+.2f} ms ({100 * (py_ms / cli_ms - 1):+.1f} %; "
          "target: within 10 %)")
    print(f"against the C++ steps alone: {py_ms - core_ms:+.2f} ms ({100 * (py_ms / core_ms - 1):+.1f} %): "
          "the binding, the Result and its JSON parse")
    print(f"result bytes equal to the CLI's file: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
