"""What can be chosen (read from parasim's own registry and preset tables, as
``parasim list --json`` prints them) and the checks of ``parasim validate``."""

from __future__ import annotations

import json
from typing import Any

from . import _core
from .errors import Problem, ScenarioError
from .scenario import ScenarioLike, source_of

__all__ = ["presets", "registry", "validate"]


def presets() -> dict[str, list[dict[str, Any]]]:
    """The model and cluster presets: ``{"models": [...], "clusters": [...]}``, each with its
    figures (units in the key names) and its source."""
    return json.loads(_core.presets_json())


def registry() -> list[dict[str, Any]]:
    """Every choice a scenario can make, by kind (schedule, tp_placement, sharding, optimizer,
    precision, ...): each kind's scenario key and entries, each entry with its description, its
    paper, the function that builds it and its parameters (path, unit, default, legal values)."""
    return json.loads(_core.registry_json())["kinds"]


def validate(scenario: ScenarioLike, full: bool = False, for_plan: bool = False) -> list[Problem]:
    """Every problem of the scenario, each with its JSON path; an empty list when it is valid.

    The checks of ``parasim validate``: the file, every field, the rules between them, and the
    size of the simulation (``full``: with every GPU simulated, as ``simulate(full=True)``).
    ``for_plan``: as ``plan`` reads it, where ``parallel`` may be left out.
    """
    name, text = source_of(scenario)
    try:
        _core.validate(name, text, full, for_plan)
    except ScenarioError as e:
        return e.problems
    return []
