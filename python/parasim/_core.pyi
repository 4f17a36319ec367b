"""
parasim's C++ library (JSON text in and out); use the parasim package instead
"""

from collections.abc import Mapping, Sequence


version: str = '0.1.0'

def presets_json() -> str:
    """
    The model and cluster presets as JSON text (parasim list presets --json).
    """

def registry_json() -> str:
    """Every registry entry as JSON text (parasim list strategies --json)."""

def validate(name: str, text: str | None, full: bool = False, layout_optional: bool = False) -> str:
    """
    Checks a scenario as parasim validate does; raises parasim.errors.ScenarioError.
    """

def read_json_file(path: str) -> str:
    """
    The text of a JSON input file, read and checked as the commands read theirs.
    """

class Simulation:
    """One simulated step (use parasim.simulate)."""

    @property
    def json(self) -> str:
        """The result JSON, as parasim simulate --json writes it."""

    @property
    def text(self) -> str:
        """The text report, as parasim simulate prints it."""

    @property
    def warnings(self) -> list[str]:
        """The profile's and the cost model's warnings."""

    @property
    def has_workload(self) -> bool:
        """Whether the workload was kept (the pictures and the trace need it)."""

    @property
    def memory_timeline(self) -> bool:
        """
        Whether memory was recorded over time (memory_svg, the trace's counters).
        """

    def timeline_svg(self) -> str:
        """Per stage: its pipeline items and its communication."""

    def memory_svg(self) -> str:
        """Memory in use per stage against time."""

    def chrome_trace(self) -> str:
        """The Chrome trace JSON (https://ui.perfetto.dev)."""

def simulate(name: str, text: str | None, profile_name: str | None, profile_text: str | None, allow_foreign_profile: bool, full: bool, memory_timeline: bool, keep_workload: bool) -> Simulation:
    """Simulates one step; raises parasim.errors.ScenarioError on bad input."""

def compare(name: str, text: str | None, axes: Mapping[str, str], chunks: int, profile_name: str | None, profile_text: str | None, allow_foreign_profile: bool, pictures: bool) -> tuple[str, str, list[tuple[str, str, str]], list[str]]:
    """
    Compares variants; axes maps an axis (schedules, ...) to its comma-separated list.
    """

class PlanArguments:
    """plan's options, as parasim plan takes them."""

    def __init__(self) -> None: ...

    @property
    def trainer(self) -> str: ...

    @trainer.setter
    def trainer(self, arg: str, /) -> None: ...

    @property
    def search(self) -> list[str]: ...

    @search.setter
    def search(self, arg: Sequence[str], /) -> None: ...

    @property
    def allow_async(self) -> bool: ...

    @allow_async.setter
    def allow_async(self, arg: bool, /) -> None: ...

    @property
    def gpus(self) -> int: ...

    @gpus.setter
    def gpus(self, arg: int, /) -> None: ...

    @property
    def max_candidates(self) -> float: ...

    @max_candidates.setter
    def max_candidates(self, arg: float, /) -> None: ...

    @property
    def top(self) -> int: ...

    @top.setter
    def top(self, arg: int, /) -> None: ...

    @property
    def max_simulate(self) -> int: ...

    @max_simulate.setter
    def max_simulate(self, arg: int, /) -> None: ...

    @property
    def headroom(self) -> float: ...

    @headroom.setter
    def headroom(self, arg: float, /) -> None: ...

    @property
    def threads(self) -> int: ...

    @threads.setter
    def threads(self, arg: int, /) -> None: ...

    @property
    def keep(self) -> int | None: ...

    @keep.setter
    def keep(self, arg: int | None, /) -> None: ...

    @property
    def tie_percent(self) -> float: ...

    @tie_percent.setter
    def tie_percent(self, arg: float, /) -> None: ...

    @property
    def command_line(self) -> str: ...

    @command_line.setter
    def command_line(self, arg: str, /) -> None: ...

def plan(name: str, text: str | None, profile_name: str | None, profile_text: str | None, allow_foreign_profile: bool, arguments: PlanArguments, progress: object | None, check_signals: bool) -> tuple[int, str, str, str, str, list[str]]:
    """
    Plans on one process; raises parasim.errors.ScenarioError on bad input.
    """

def export(name: str, text: str | None, to: str, version: str, json: bool, allow_approximate: bool) -> tuple[str, str, list[str], list[str]]:
    """A scenario or plan as a trainer's configuration."""

def time_cli_simulate(scenario: str, json_out: str, repeats: int) -> list[float]:
    """
    Seconds of each in-process run of `parasim simulate SCENARIO --json JSON_OUT`.
    """

def time_core_simulate(scenario: str, repeats: int) -> list[float]:
    """
    Seconds of each run of simulate's C++ steps for a path (no file written).
    """
