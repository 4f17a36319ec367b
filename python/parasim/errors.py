"""The exceptions and warnings parasim raises.

Every problem of a bad scenario, plan or profile is reported at once, each with the JSON path
(RFC 6901) it is at, as ``parasim validate`` prints them; the command line exits with code 2
where these are raised.
"""

from __future__ import annotations

import warnings
from typing import Iterable, NamedTuple

__all__ = ["Problem", "ParasimError", "ScenarioError", "SimulationError", "NoPlanError",
           "ParasimWarning", "warn_all"]


class Problem(NamedTuple):
    """One problem of an input: where it is and what was expected."""

    path: str  #: JSON path into the file ("/parallel/tp"); "/" for the whole file
    message: str  #: what was expected and what was found


class ParasimError(Exception):
    """Base class of parasim's own errors."""


class ScenarioError(ParasimError, ValueError):
    """A scenario, plan or profile that parasim refuses (exit code 2 on the command line).

    ``problems`` holds every problem found, ``file`` the file (or the name given for a dict),
    and ``str(error)`` the lines the command prints: ``FILE: /json/path: message``.
    """

    def __init__(self, message: str, file: str = "", problems: list[tuple[str, str]] | None = None):
        super().__init__(message.rstrip("\n"))
        self.file = file
        self.problems = [Problem(path, text) for path, text in (problems or [])]


class SimulationError(ParasimError, RuntimeError):
    """The generated workload cannot run: a broken invariant inside parasim (exit code 1)."""


class NoPlanError(ParasimError, RuntimeError):
    """No layout of the search space fits (``parasim plan`` exits 1 and writes nothing).

    ``text`` is the table the command prints, with the rejects and the closest misses.
    """

    def __init__(self, message: str, text: str = ""):
        super().__init__(message)
        self.text = text


class ParasimWarning(UserWarning):
    """What the command prints as a ``warning:`` line: an incomplete profile, a cost-model figure
    taken from a default, a setting approximated in an export."""


def warn_all(messages: Iterable[str], stacklevel: int = 3) -> None:
    """Each message as a ParasimWarning, attributed to the caller of the API function."""
    for message in messages:
        warnings.warn(message, ParasimWarning, stacklevel=stacklevel)
