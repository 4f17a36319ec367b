"""Scenarios as Python objects: a dict, a file, or a :class:`Scenario` built from either."""

from __future__ import annotations

import copy
import json
import numbers
import os
from typing import Any, Mapping, Union

from . import _core
from .errors import ScenarioError

__all__ = ["Scenario", "ScenarioLike"]


class Scenario:
    """A parasim scenario (docs/scenario.md): the JSON document as a dict, and where it came from.

    ``Scenario(dict)`` or ``Scenario.load(path)``. :meth:`with_` returns a copy with some fields
    changed, by dotted path, so a sweep reads as one line per point::

        base = parasim.Scenario.load("scenarios/llama2-70b-64gpu.json")
        s = base.with_({"parallel.tp": 4, "parallel.dp": 4, "training.micro_batch": 2})

    Nothing is checked until it is used (or :func:`parasim.validate` is called): the C++ parser
    does every check, with the JSON path of each problem.
    """

    def __init__(self, document: Mapping[str, Any], name: str = "<scenario dict>"):
        if not isinstance(document, Mapping):
            raise TypeError(f"a scenario is a dict (a JSON object), not {type(document).__name__}")
        self._document: dict[str, Any] = copy.deepcopy(dict(document))
        self.name = name  #: names the scenario in error messages

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "Scenario":
        """Reads a scenario (or plan) file; its path names it in messages."""
        path = os.fspath(path)
        document = json.loads(_core.read_json_file(path))  # the commands' checks and messages
        if not isinstance(document, Mapping):
            message = f"expected a JSON object (a scenario), got {type(document).__name__}"
            raise ScenarioError(f"{path}: /: {message}", path, [("/", message)])
        return cls(document, name=path)

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the document."""
        return copy.deepcopy(self._document)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self._document, indent=indent)

    def with_(self, changes: Mapping[str, Any], name: str | None = None) -> "Scenario":
        """A copy with each ``"a.b.c": value`` set. Objects on the way are created; a preset
        named by a string (``"model": "llama2-7b"``) becomes ``{"preset": "llama2-7b"}`` first,
        so ``{"model.seq_len": 2048}`` changes the preset's sequence length. The copy is named
        ``name`` in messages (by default this one's name with "(changed)")."""
        document = copy.deepcopy(self._document)
        for dotted, value in changes.items():
            keys = dotted.split(".")
            node = document
            for depth, key in enumerate(keys[:-1]):
                child = node.get(key)
                if child is None:
                    child = node[key] = {}
                elif isinstance(child, str):
                    child = node[key] = {"preset": child}
                elif not isinstance(child, dict):
                    where = ".".join(keys[: depth + 1])
                    raise TypeError(f"with_({dotted!r}): {where} holds a {type(child).__name__}, "
                                    "not an object")
                node = child
            node[keys[-1]] = copy.deepcopy(value)
        changed = self.name if self.name.endswith(" (changed)") else f"{self.name} (changed)"
        return Scenario(document, name=name or changed)

    def __getitem__(self, key: str) -> Any:
        return self._document[key]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and other._document == self._document

    def __repr__(self) -> str:
        return f"Scenario({self._document.get('name', '?')!r}, from {self.name!r})"


ScenarioLike = Union[Scenario, Mapping[str, Any], str, os.PathLike]


def plain_value(value: Any) -> Any:
    """numpy's scalars (and 0-d arrays) and other number types as Python's bool, int or float (a
    sweep built from a DataFrame has them); anything else unchanged."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "ndim", 0) == 0:
        try:
            value = item()
        except (TypeError, ValueError):
            return value
    if isinstance(value, bool):
        return value
    if type(value).__name__ == "bool_":
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value


def _plain(value: Any) -> Any:
    converted = plain_value(value)
    if converted is value or not isinstance(converted, (bool, int, float, str)):
        raise TypeError(f"a scenario holds JSON values, not {type(value).__name__} ({value!r})")
    return converted


def _json_text(document: Mapping[str, Any], what: str) -> str:
    try:
        return json.dumps(dict(document), allow_nan=False, default=_plain)
    except ValueError as e:  # NaN or infinity: not JSON
        raise ValueError(f"the {what} holds a number JSON cannot write ({e})") from None


def source_of(scenario: ScenarioLike) -> tuple[str, str | None]:
    """(name, text): a path is read by the C++ side (text None), a dict is dumped to JSON."""
    if isinstance(scenario, Scenario):
        return scenario.name, _json_text(scenario._document, "scenario")
    if isinstance(scenario, (str, os.PathLike)):
        return os.fspath(scenario), None
    if isinstance(scenario, Mapping):
        return "<scenario dict>", _json_text(scenario, "scenario")
    raise TypeError(
        f"a scenario is a dict, a path or a parasim.Scenario, not {type(scenario).__name__}"
    )


def profile_source(profile: Any) -> tuple[str | None, str | None]:
    """(name, text) of an optional profile: a path, a dict, or None (the analytical model)."""
    if profile is None:
        return None, None
    if isinstance(profile, (str, os.PathLike)):
        return os.fspath(profile), None
    if isinstance(profile, Mapping):
        return "<profile dict>", _json_text(profile, "profile")
    raise TypeError(f"a profile is a path or a dict, not {type(profile).__name__}")
