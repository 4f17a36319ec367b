"""compare: a scenario changed along one axis, each variant simulated, side by side."""

from __future__ import annotations

import json
from typing import Any, Iterable, Union

from . import _core
from .errors import warn_all
from .frames import flatten, table
from .scenario import ScenarioLike, plain_value, profile_source, source_of

__all__ = ["compare", "COMPARE_AXES"]

#: The axes of ``parasim compare`` (``--schedules`` ...), by keyword.
COMPARE_AXES = (
    "schedules", "placements", "layouts", "seq_lens", "optimizers", "ep", "dispatchers",
    "precisions", "shardings", "tp_overlaps", "cp_variants", "recomputes", "compiles",
)

_COLUMNS = [
    "variant", "axis", "applicable", "schedule", "tp_placement", "layout", "seq_len",
    "optimizer.name", "parallel.dp", "parallel.tp", "parallel.cp", "parallel.pp", "parallel.chunks",
    "step_time_s", "tokens_per_s", "mfu", "bubble_fraction", "peak_memory_bytes", "fits_in_hbm",
    "exposed_comm_s.tp", "exposed_comm_s.pp", "exposed_comm_s.dp", "exposed_comm_s.cp",
    "exposed_comm_s.ep", "not_applicable",
]

Items = Union[str, Iterable[Any]]


def _item(value: Any) -> str:
    value = plain_value(value)
    if isinstance(value, bool):  # compare --compiles takes off and on
        return "on" if value else "off"
    return str(value)


def _items(value: Items) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, Iterable):
        return _item(value)
    return ",".join(_item(v) for v in value)


def compare(
    scenario: ScenarioLike,
    *,
    chunks: int = 2,
    profile: Any = None,
    allow_foreign_profile: bool = False,
    pictures: bool = False,
    **axes: Items,
) -> Any:
    """The scenario under each item of one axis, as ``parasim compare`` runs it::

        parasim.compare("scenarios/paci-gpt2-medium.json", schedules=["1f1b", "zb-v", "paci"])

    Axes (one per call, as on the command line): schedules, placements, layouts (with seq_lens),
    optimizers, ep, dispatchers, precisions, shardings, tp_overlaps, cp_variants, recomputes,
    compiles; each a list, a comma-separated string or one value (True/False for on/off). No
    axis: every schedule (pp > 1). The profile's and the cost model's warnings are issued as
    ParasimWarning.

    Returns a DataFrame (without pandas, a list of dicts with the same ``attrs``), one row per
    variant: its identity, its step time (s), tokens/s, MFU, bubbles and peak memory (bytes) per
    stage, exposed communication by kind (s), and, for a variant that does not apply, why. ``frame.attrs``
    holds ``json`` (the CLI's ``--json`` bytes), ``text`` (its table) and, with
    ``pictures=True``, ``svgs``: {variant: (timeline SVG, memory SVG)}.
    """
    unknown = sorted(set(axes) - set(COMPARE_AXES))
    if unknown:
        raise TypeError(f"compare() has no axis {', '.join(unknown)} (axes: {', '.join(COMPARE_AXES)})")
    name, text = source_of(scenario)
    profile_name, profile_text = profile_source(profile)
    rows_json, table_text, svgs, messages = _core.compare(
        name, text, {k: _items(v) for k, v in axes.items()}, chunks, profile_name, profile_text,
        allow_foreign_profile, pictures,
    )
    warn_all(messages)
    rows = [flatten(r) for r in json.loads(rows_json)["rows"]]
    columns = [c for c in _COLUMNS if any(c in r for r in rows)]
    columns += [c for r in rows for c in r if c not in columns and not c.startswith("_")]
    columns = list(dict.fromkeys(columns))
    frame = table(rows, columns)
    extras = {"json": rows_json, "text": table_text, "svgs": {label: (t, m) for label, t, m in svgs}}
    frame.attrs.update(extras)
    return frame
