"""parasim from Python: the same C++ simulator and planner as the ``parasim`` command, called
in-process, with scenarios as dicts and results as objects and DataFrames.

    import parasim
    r = parasim.simulate("scenarios/llama2-7b-dgx-h100.json")
    print(r.step_time_s, r.tokens_per_s, r.mfu)
    best = parasim.plan("scenarios/llama2-70b-64gpu.json", for_trainer="megatron")
    print(best.candidates.head())
    print(best.winner.export(to="megatron"))

Every result equals the command line's output byte for byte (``Result.to_json()`` is
``simulate --json``). Simulation and planning release the GIL, so threads run them in
parallel. Bad input raises :class:`ScenarioError` with every problem and its JSON path.
"""

from __future__ import annotations

from typing import Any

from . import _core
from .catalog import presets, registry, validate
from .comparison import COMPARE_AXES, compare
from .errors import (NoPlanError, ParasimError, ParasimWarning, Problem, ScenarioError,
                     SimulationError, warn_all)
from .planning import EXPORT_TARGETS, TRAINERS, ExportedConfig, Plan, PlanResult, export, plan
from .result import Result
from .scenario import Scenario, ScenarioLike, profile_source, source_of

__version__: str = _core.version

__all__ = [
    "__version__", "simulate", "validate", "plan", "compare", "export", "presets", "registry",
    "Scenario", "Result", "Plan", "PlanResult", "ExportedConfig", "Problem", "ParasimError",
    "ParasimWarning", "ScenarioError",
    "SimulationError", "NoPlanError", "COMPARE_AXES", "TRAINERS", "EXPORT_TARGETS",
]


def simulate(
    scenario: ScenarioLike,
    profile: Any = None,
    full: bool = False,
    *,
    allow_foreign_profile: bool = False,
    memory_timeline: bool = False,
    keep_workload: bool = True,
) -> Result:
    """One training step of the scenario (a dict, a path or a :class:`Scenario`), simulated.

    ``profile``: a calibrated profile (a path or a dict; None: the analytical model from the
    scenario's hardware). ``full``: every GPU, not one replica per stage. ``memory_timeline``:
    record memory over time (for :meth:`Result.memory_svg` and the trace's memory counters, as
    ``simulate --trace`` does). ``keep_workload``: keep what the pictures and the trace are
    drawn from (set it False in sweeps that keep many results: the figures stay, the megabytes
    of workload go).

    The profile's and the cost model's warnings are issued as :class:`ParasimWarning` and kept in
    ``Result.warnings``. Raises ScenarioError (every problem, with its JSON path) on bad input.
    """
    name, text = source_of(scenario)
    profile_name, profile_text = profile_source(profile)
    simulation = _core.simulate(name, text, profile_name, profile_text, allow_foreign_profile,
                                full, memory_timeline, keep_workload)
    warn_all(simulation.warnings)
    return Result._of(simulation)
