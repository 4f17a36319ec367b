"""plan: every way to train the scenario's model on its cluster, screened, the best simulated,
ranked; the winner as a plan that exports to the trainer's configuration."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable, Mapping, Optional, Union

from . import _core
from .errors import NoPlanError
from .frames import flatten, table
from .scenario import ScenarioLike, profile_source, source_of

__all__ = ["plan", "export", "Plan", "PlanResult", "TRAINERS", "EXPORT_TARGETS"]

#: The trainers a plan can be made for (``plan --for``).
TRAINERS = ("megatron", "deepspeed", "torchtitan")
#: The configurations ``export`` writes (``parasim export --to``).
EXPORT_TARGETS = ("megatron", "deepspeed", "torchtitan", "shampoo")

Progress = Callable[[str, int, int], None]


def _export(name: str, text: Optional[str], to: str, version: Optional[str], as_json: bool,
            allow_approximate: bool) -> Union[str, Any]:
    config, _label, _notes, _differences = _core.export(
        name, text, to, version or "", as_json, allow_approximate)
    return json.loads(config) if as_json else config


def export(scenario: ScenarioLike, to: str, version: Optional[str] = None, json: bool = False,
           allow_approximate: bool = False) -> Union[str, Any]:
    """A scenario or plan (a dict, a path, a Scenario) as the trainer's configuration, as
    ``parasim export --to`` writes it: megatron (arguments), deepspeed (its JSON config),
    torchtitan (TOML) or shampoo (the optimizer's constructor). ``json=True`` returns the JSON
    form parsed. A setting the trainer cannot express raises ScenarioError naming it, unless
    ``allow_approximate``."""
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
        """The candidates file as ``parasim plan --json`` writes it."""
        return self._candidates_json

    @property
    def candidates(self) -> Any:
        """Every simulated candidate, best first: its layout (``candidate.*``), the screen's
        estimate (``estimate.*``), the simulated figures (``simulated.*``: step time in s,
        tokens/s, MFU, device memory in bytes, bubble, exposed communication in s) and why a
        candidate was rejected."""
        rows = []
        for rank, entry in enumerate(self._candidates["simulated"], start=1):
            row = {"rank": rank if "simulated" in entry else None}
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
        frame = self.candidates
        if hasattr(frame, "head"):
            return f"<pre>{self.winner!r}</pre>" + frame.head(10).to_html()
        return f"<pre>{self.text}</pre>"


def _tqdm_progress() -> Optional[Progress]:
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    bars: dict[str, Any] = {}

    def update(tier: str, done: int, total: int) -> None:
        bar = bars.get(tier)
        if bar is None:
            for other in bars.values():
                other.close()
            bar = bars[tier] = tqdm(total=total, desc=tier, file=sys.stderr, leave=False)
        bar.total = total
        bar.n = done
        bar.refresh()

    return update


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
    ``{"tp": [4, 8], "schedule": ["1f1b", "zb-v"]}`` (docs/planner.md lists the keys).
    ``for_trainer`` (megatron, deepspeed, torchtitan): only what that trainer runs, with its
    defaults. ``threads``: the screen's and the simulations' threads (None: every core; the
    result is the same whatever the count). ``keep``: also keep the best N screened candidates
    (0: all) in ``screened``. ``progress``: a callable ``(tier, done, total)``, False for none,
    or None for a tqdm bar when tqdm is installed.

    Raises ScenarioError on bad input, NoPlanError when no layout fits.
    """
    if top < 1 or max_simulate < 1:
        raise ValueError("top and max_simulate take a whole number of 1 or more")
    if not 0 <= headroom < 1:
        raise ValueError("headroom is a fraction of HBM from 0 to below 1, e.g. 0.05")
    if for_trainer is not None and for_trainer not in TRAINERS:
        raise ValueError(f"for_trainer must be one of {', '.join(TRAINERS)}, not {for_trainer!r}")
    args = _core.PlanArguments()
    args.trainer = for_trainer or ""
    args.search = [f"{k}={v if isinstance(v, str) else ','.join(str(x) for x in v)}"
                   for k, v in (search or {}).items()]
    args.allow_async = allow_async
    args.gpus = gpus or 0
    args.max_candidates = max_candidates
    args.top = top
    args.max_simulate = max_simulate
    args.headroom = headroom
    args.threads = threads or 0
    args.keep = keep
    args.tie_percent = -1.0 if tie_percent is None else tie_percent
    args.command_line = "parasim.plan (Python)"
    if progress is None or progress is True:
        callback = _tqdm_progress()
    else:
        callback = progress or None
    name, text = source_of(scenario)
    profile_name, profile_text = profile_source(profile)
    ranked, table_text, candidates_json, plan_json, why = _core.plan(
        name, text, profile_name, profile_text, allow_foreign_profile, args, callback)
    if ranked == 0:
        raise NoPlanError(f"{name}: {why}", table_text)
    return PlanResult(ranked, table_text, candidates_json, plan_json)
