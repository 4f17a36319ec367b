"""simulate's result: the fields of ``parasim simulate --json``, with the text report, the
pictures, and what a notebook shows."""

from __future__ import annotations

import html
import json
from typing import Any, Optional

from . import _core
from .frames import table

__all__ = ["Result"]

_KINDS = ("tp", "pp", "dp", "cp", "ep")


class Result:
    """One simulated training step.

    Every field of the result JSON (docs/result.md) is an attribute: ``step_time_s``,
    ``tokens_per_s``, ``mfu``, ``bubble_fraction`` (per stage), ``exposed_comm_s`` (by kind),
    ``peak_memory_bytes`` (per stage), ``memory_breakdown_bytes``, ``staleness``, ...
    :meth:`to_json` is the CLI's file byte for byte; :meth:`memory` the breakdown per stage as a
    table; :meth:`timeline_svg` the picture a notebook shows.

    The pictures and the trace are drawn from the simulated workload, which the result keeps
    unless ``simulate(..., keep_workload=False)`` (megabytes for a large scenario: keep it off in
    sweeps that keep their results). A result pickles without it.
    """

    def __init__(self, json_text: str, text: str, warnings: list[str],
                 simulation: Optional["_core.Simulation"] = None):
        self._json = json_text
        self._text = text
        self._warnings = list(warnings)
        self._simulation = simulation if simulation is not None and simulation.has_workload else None
        self._fields: dict[str, Any] = json.loads(json_text)
        self._timeline: Optional[str] = None

    @classmethod
    def _of(cls, simulation: "_core.Simulation") -> "Result":
        return cls(simulation.json, simulation.text, simulation.warnings, simulation)

    def __copy__(self) -> "Result":
        twin = Result(self._json, self._text, self._warnings)
        twin._simulation, twin._timeline = self._simulation, self._timeline
        return twin

    def __reduce__(self):
        return (Result, (self._json, self._text, self._warnings))

    def to_dict(self) -> dict[str, Any]:
        """The result JSON as a dict (a fresh copy)."""
        return json.loads(self._json)

    def to_json(self) -> str:
        """The result JSON exactly as ``parasim simulate --json`` writes it."""
        return self._json

    @property
    def text(self) -> str:
        """The text report ``parasim simulate`` prints."""
        return self._text

    @property
    def warnings(self) -> list[str]:
        """The profile's and the cost model's warnings (the CLI's ``warning:`` lines)."""
        return list(self._warnings)

    def __getattr__(self, name: str) -> Any:
        fields = self.__dict__.get("_fields")
        if fields is not None and name in fields:
            return fields[name]
        raise AttributeError(f"a parasim result has no field {name!r} (see to_dict())")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._fields))

    def memory(self) -> Any:
        """Peak memory per stage with its breakdown, in bytes (a DataFrame, or a list of dicts)."""
        rows = []
        for entry, peak in zip(self._fields["memory_breakdown_bytes"], self._fields["peak_memory_bytes"]):
            row = dict(entry)
            row["peak_bytes"] = peak
            rows.append(row)
        return table(rows)

    def _workload(self, what: str) -> "_core.Simulation":
        if self._simulation is None:
            raise ValueError(f"{what} is drawn from the simulated workload, which this result did "
                             "not keep: simulate(..., keep_workload=True)")
        return self._simulation

    def timeline_svg(self) -> str:
        """Per stage, its pipeline items and its communication, coloured by kind (SVG text)."""
        if self._timeline is None:
            self._timeline = self._workload("the timeline").timeline_svg()
        return self._timeline

    def memory_svg(self) -> str:
        """Memory in use per stage against time (needs ``simulate(..., memory_timeline=True)``)."""
        return self._workload("the memory picture").memory_svg()

    def chrome_trace(self) -> str:
        """The step as a Chrome trace (JSON text; open it in https://ui.perfetto.dev). With
        ``simulate(..., memory_timeline=True)`` it is ``parasim simulate --trace``'s file byte
        for byte (memory counters included); without, it has no memory counters."""
        return self._workload("the trace").chrome_trace()

    def summary(self) -> list[tuple[str, str]]:
        """The headline figures, each with its unit, as (label, value) pairs."""
        f = self._fields
        gib = 2.0**30
        exposed = f["exposed_comm_s"]
        return [
            ("scenario", str(f["scenario"])),
            ("schedule", str(f["schedule"])),
            ("step time", f"{f['step_time_s']:.4f} s"),
            ("throughput", f"{f['tokens_per_s']:,.0f} tokens/s"),
            ("MFU", f"{100 * f['mfu']:.1f} %"),
            ("bubble per stage", ", ".join(f"{100 * b:.1f} %" for b in f["bubble_fraction"])),
            ("exposed communication",
             ", ".join(f"{k} {exposed[k]:.4f} s" for k in _KINDS if exposed.get(k)) or "none"),
            ("peak memory per stage", ", ".join(f"{b / gib:.2f} GiB" for b in f["peak_memory_bytes"])),
            ("fits in HBM", "yes" if f["fits_in_hbm"] else "no"),
            ("max staleness", str(max((s["max"] for s in f["staleness"]), default=0))),
        ]

    def __repr__(self) -> str:
        f = self._fields
        return (
            f"<parasim.Result {f['scenario']}: step {f['step_time_s']:.4f} s, "
            f"{f['tokens_per_s']:,.0f} tokens/s, MFU {100 * f['mfu']:.1f} %>"
        )

    def _repr_html_(self) -> str:
        cells = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>"
            f"{html.escape(v)}</td></tr>"
            for k, v in self.summary()
        )
        picture = f"\n<div>{self.timeline_svg()}</div>" if self._simulation is not None else ""
        return f"<table>{cells}</table>{picture}"

    def _repr_svg_(self) -> Optional[str]:
        return self.timeline_svg() if self._simulation is not None else None
