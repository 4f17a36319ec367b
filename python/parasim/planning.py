"""plan: every way to train the scenario's model on its cluster, screened, the best simulated,
ranked; the winner as a plan that exports to the trainer's configuration."""

from __future__ import annotations

import html
import json
import math
import os
import sys
import threading
import warnings
from typing import Any, Callable, Iterable, Mapping, Optional, Union

from . import _core
from .errors import NoPlanError, ParasimWarning, warn_all
from .frames import flatten, table
from .scenario import ScenarioLike, plain_value, profile_source, source_of

__all__ = ["plan", "export", "Plan", "PlanResult", "ExportedConfig", "TRAINERS", "EXPORT_TARGETS"]

#: The trainers a plan can be made for (``plan --for``).
TRAINERS = ("megatron", "deepspeed", "torchtitan")
#: The configurations ``export`` writes (``parasim export --to``).
EXPORT_TARGETS = ("megatron", "deepspeed", "torchtitan", "shampoo")

Progress = Callable[[str, int, int], None]


class ExportedConfig(str):
    """A trainer's configuration as text (what ``parasim export`` writes), with what the command
    prints beside it on standard error: ``notes`` (what the trainer takes from code or the
    launcher), ``differences`` (with ``allow_approximate``: each setting written differently,
    also issued as a warning) and ``trainer`` (the trainer and version written for)."""

    notes: list[str]
    differences: list[str]
    trainer: str


def _export(name: str, text: Optional[str], to: str, version: Optional[str], as_json: bool,
            allow_approximate: bool) -> Union[str, Any]:
    config, label, notes, differences = _core.export(
        name, text, to, version or "", as_json, allow_approximate)
    for difference in differences:
        warnings.warn(f"parasim export: approximate: {difference}", ParasimWarning, stacklevel=3)
    if as_json:
        return json.loads(config)
    out = ExportedConfig(config)
    out.notes, out.differences, out.trainer = list(notes), list(differences), label
    return out


def export(scenario: ScenarioLike, to: str, version: Optional[str] = None, json: bool = False,
           allow_approximate: bool = False) -> Union[str, Any]:
    """A scenario or plan (a dict, a path, a Scenario) as the trainer's configuration, as
    ``parasim export --to`` writes it: megatron (arguments), deepspeed (its JSON config),
    torchtitan (TOML) or shampoo (the optimizer's constructor), as an :class:`ExportedConfig`
    (a str with the command's notes). ``json=True`` returns the JSON form parsed. A setting the
    trainer cannot express raises ScenarioError naming it, unless ``allow_approximate``: then
    each difference is a warning and in ``differences``."""
    name, text = source_of(scenario)
    return _export(name, text, to, version, json, allow_approximate)


class Plan:
    """The winning layout as a plan file (docs/plan.md): the full scenario, its predicted
    figures, the runners-up, the search's figures and provenance."""

    def __init__(self, text: str):
        self._text = text
        self._document: dict[str, Any] = json.loads(text)

    def to_json(self) -> str:
        """The plan file as ``parasim plan --out`` writes it."""
        return self._text

    def to_dict(self) -> dict[str, Any]:
        return json.loads(self._text)

    @property
    def scenario(self) -> dict[str, Any]:
        """The winning scenario in full (what ``simulate`` takes)."""
        return json.loads(json.dumps(self._document["scenario"]))

    @property
    def predicted(self) -> dict[str, Any]:
        """The winner's simulated result (the fields of ``simulate``'s JSON)."""
        return json.loads(json.dumps(self._document["predicted"]))

    def save(self, path: Union[str, os.PathLike]) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self._text)

    def export(self, to: str, version: Optional[str] = None, json: bool = False,
               allow_approximate: bool = False) -> Union[str, Any]:
        """The trainer's configuration for this plan (see :func:`parasim.export`)."""
        return _export("<plan>", self._text, to, version, json, allow_approximate)

    def __repr__(self) -> str:
        p = self._document["scenario"].get("parallel", {})
        step = self._document["predicted"]["step_time_s"]
        return (f"<parasim.Plan {self._document['scenario'].get('name', '?')}: dp {p.get('dp')} "
                f"tp {p.get('tp')} pp {p.get('pp')}, {p.get('schedule')}, step {step:.4f} s>")


class PlanResult:
    """What ``parasim plan`` prints and writes: ``candidates`` (the simulated layouts, best
    first, as a DataFrame), ``winner`` (a :class:`Plan`), ``text`` (the ranked table),
    ``screened`` (the screened candidates kept with ``keep``) and ``to_json()`` (the CLI's
    ``--json`` bytes)."""

    def __init__(self, ranked: int, text: str, candidates_json: str, plan_json: str):
        self.ranked = ranked  #: simulated candidates that fit, ranked
        self.text = text
        self._candidates_json = candidates_json
        self._candidates: dict[str, Any] = json.loads(candidates_json)
        self.winner = Plan(plan_json)

    def to_json(self) -> str:
        """The candidates file as ``parasim plan --json FILE --keep N`` writes it when planned
        with ``keep=N`` (``keep=0``: plain ``--json``, every screened candidate); without
        ``keep``, the same file with no screened candidates."""
        return self._candidates_json

    @property
    def candidates(self) -> Any:
        """Every simulated candidate, best first: ``rank`` (None for one that does not fit or was
        rejected), its layout (``candidate.*``), the screen's estimate (``estimate.*``), the
        simulated figures (``simulated.*``: step time in s, tokens/s, MFU, device memory in
        bytes, bubble, exposed communication in s) and why a candidate was rejected."""
        rows = []
        for position, entry in enumerate(self._candidates["simulated"], start=1):
            row = {"rank": position if position <= self.ranked else None}
            row.update(flatten({k: v for k, v in entry.items() if k != "result"}))
            rows.append(row)
        return table(rows)

    def top(self, n: int = 5) -> Any:
        """The best ``n`` ranked layouts, a column each for what was chosen and what it gives:
        dp, tp, pp, cp, schedule, micro_batch, recompute, sharding, step_time_s (s),
        tokens_per_s, mfu, memory_gib (the largest GPU's peak, GiB)."""
        rows = []
        for rank, entry in enumerate(self._candidates["simulated"][: self.ranked], start=1):
            c, s = entry["candidate"], entry["simulated"]
            rows.append({"rank": rank, "dp": c["dp"], "tp": c["tp"], "pp": c["pp"], "cp": c["cp"],
                         "schedule": c["schedule"], "micro_batch": c["micro_batch"],
                         "recompute": c["recompute"], "sharding": c["sharding"],
                         "step_time_s": s["step_time_s"], "tokens_per_s": s["tokens_per_s"],
                         "mfu": s["mfu"], "memory_gib": s["device_memory_bytes"] / 2**30})
        return table(rows[:n])

    @property
    def screened(self) -> Any:
        """The screened candidates kept (``plan(keep=N)``), best estimate first."""
        return table(flatten(e) for e in self._candidates["screened"])

    def __repr__(self) -> str:
        return f"<parasim.PlanResult: {self.ranked} ranked; winner {self.winner!r}>"

    def _repr_html_(self) -> str:
        frame = self.top(10)
        if hasattr(frame, "to_html"):
            return f"<pre>{html.escape(repr(self.winner))}</pre>" + frame.to_html(index=False)
        return f"<pre>{html.escape(self.text)}</pre>"


class _TqdmProgress:
    """A tqdm bar per tier ("screened", then "simulated"), each filled and closed when done."""

    def __init__(self, tqdm: Any):
        self._tqdm = tqdm
        self._bars: dict[str, Any] = {}
        self._closed: set[str] = set()

    def __call__(self, tier: str, done: int, total: int) -> None:
        bar = self._bars.get(tier)
        if bar is None:
            self._finish()
            bar = self._bars[tier] = self._tqdm(total=total, desc=tier, file=sys.stderr, leave=False)
        bar.total = total
        bar.update(done - bar.n)  # tqdm redraws at most every mininterval

    def _finish(self, completed: bool = True) -> None:
        for tier, bar in self._bars.items():
            if tier not in self._closed:
                if completed:
                    bar.n = bar.total
                    bar.refresh()
                bar.close()
                self._closed.add(tier)

    def close(self, completed: bool) -> None:
        """Closes the bars; `completed`: the call returned, so each tier is full."""
        self._finish(completed)


def _tqdm_progress() -> Optional[_TqdmProgress]:
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return _TqdmProgress(tqdm)


def _check_whole(name: str, value: Any, low: int, high: Union[int, float]) -> None:
    value = plain_value(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} takes a whole number from {low} to {high:g}, not {value!r}")


def _check_real(name: str, value: Any, low: float, high: float, high_open: bool = False,
                what: str = "") -> None:
    value = plain_value(value)
    ok = (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
          and low <= value and (value < high if high_open else value <= high))
    if not ok:
        raise ValueError(f"{name} is {what}, not {value!r}")


def _search_value(value: Any) -> str:
    value = plain_value(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _search_values(values: Any) -> str:
    """A search key's values as --search writes them: "1,2,4"; one value or a list of them."""
    if isinstance(values, str) or not isinstance(values, Iterable):
        return _search_value(values)
    return ",".join(_search_value(v) for v in values)


def plan(
    scenario: ScenarioLike,
    search: Optional[Mapping[str, Any]] = None,
    for_trainer: Optional[str] = None,
    threads: Optional[int] = None,
    *,
    profile: Any = None,
    allow_foreign_profile: bool = False,
    allow_async: bool = False,
    gpus: Optional[int] = None,
    top: int = 16,
    max_simulate: int = 64,
    headroom: float = 0.05,
    max_candidates: float = 4e8,
    keep: Optional[int] = None,
    tie_percent: Optional[float] = None,
    progress: Union[None, bool, Progress] = None,
) -> PlanResult:
    """The best layouts of the scenario's model on its cluster, as ``parasim plan`` finds them.

    ``search`` narrows or widens the space, as ``--search KEY=V1,V2`` does:
    ``{"tp": [4, 8], "schedule": ["1f1b", "zb-v"], "sequence_parallel": True}`` (one value or a
    list; docs/planner.md lists the keys; problems name them as ``--search KEY``).
    ``for_trainer`` (megatron, deepspeed, torchtitan): only what that trainer runs, with its
    defaults. ``threads``: the screen's and the simulations' threads (None: every core; the
    result is the same whatever the count). ``keep``: also keep the best N screened candidates
    (0: all) in ``screened``. ``progress``: a callable ``(tier, done, total)``, False for none,
    or None for a tqdm bar when tqdm is installed. An exception the callable raises, or Ctrl-C
    when plan runs on the main thread, stops the search or the simulation of candidates after
    the block or simulation under way and is raised (the set-up and the simulation of the
    scenario's own layout run to their end first). The profile's warnings are issued as
    ParasimWarning.

    Raises ScenarioError on bad input, NoPlanError when no layout fits, ValueError for an
    argument out of the command's range.
    """
    # The command's ranges (cli/main.cpp): --top, --max-simulate, --gpus, --threads, --keep
    # (0 here: every screened candidate, as --json without --keep), --headroom,
    # --max-candidates, --tie.
    _check_whole("top", top, 1, 1 << 20)
    _check_whole("max_simulate", max_simulate, 1, 1 << 20)
    if gpus is not None:
        _check_whole("gpus", gpus, 1, 1 << 30)
    if threads is not None:
        _check_whole("threads", threads, 1, 1024)
    if keep is not None:
        _check_whole("keep", keep, 0, 1e12)
    _check_real("headroom", headroom, 0, 1, high_open=True,
                what="a fraction of HBM from 0 to below 1, e.g. 0.05")
    _check_real("max_candidates", max_candidates, 1, 1e18, what="a count from 1 to 1e18")
    if tie_percent is not None:
        _check_real("tie_percent", tie_percent, 0, 100, what="a percentage from 0 to 100")
    if for_trainer is not None and for_trainer not in TRAINERS:
        raise ValueError(f"for_trainer must be one of {', '.join(TRAINERS)}, not {for_trainer!r}")
    if not (progress is None or isinstance(progress, bool) or callable(progress)):
        raise TypeError("progress is a callable (tier, done, total), True, False or None")
    args = _core.PlanArguments()
    args.trainer = for_trainer or ""
    args.search = [f"{key}={_search_values(values)}" for key, values in (search or {}).items()]
    args.allow_async = allow_async
    args.gpus = int(plain_value(gpus)) if gpus is not None else 0
    args.max_candidates = float(plain_value(max_candidates))
    args.top = int(plain_value(top))
    args.max_simulate = int(plain_value(max_simulate))
    args.headroom = float(plain_value(headroom))
    args.threads = int(plain_value(threads)) if threads is not None else 0
    args.keep = int(plain_value(keep)) if keep is not None else None
    args.tie_percent = -1.0 if tie_percent is None else float(plain_value(tie_percent))
    args.command_line = "parasim.plan (Python)"
    if progress is None or progress is True:
        callback = _tqdm_progress()
    else:
        callback = progress or None
    name, text = source_of(scenario)
    profile_name, profile_text = profile_source(profile)
    bar = callback if isinstance(callback, _TqdmProgress) else None
    try:
        ranked, table_text, candidates_json, plan_json, why, messages = _core.plan(
            name, text, profile_name, profile_text, allow_foreign_profile, args, callback,
            threading.current_thread() is threading.main_thread())
    except BaseException:
        if bar:
            bar.close(completed=False)
        raise
    if bar:
        bar.close(completed=True)
    warn_all(messages)
    if ranked == 0:
        raise NoPlanError(f"{name}: {why}", table_text)
    return PlanResult(ranked, table_text, candidates_json, plan_json)
