"""Tables as pandas DataFrames when pandas is installed, else as lists of dicts (same columns)."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

__all__ = ["table", "flatten", "Rows"]


class Rows(list):
    """A table without pandas: a list of dicts (one per row, the same columns in each), with
    ``attrs`` as a DataFrame has them."""

    def __init__(self, rows: Iterable[dict] = (), columns: list[str] | None = None):
        super().__init__(rows)
        self.columns = list(columns or [])
        self.attrs: dict[str, Any] = {}

    def to_string(self, index: bool = True) -> str:
        """The rows as an aligned text table, a column per key (as DataFrame.to_string)."""
        def cell(value: Any) -> str:
            return f"{value:.6g}" if isinstance(value, float) else str(value)

        header = ([""] if index else []) + self.columns
        body = [([str(i)] if index else []) + [cell(row.get(c)) for c in self.columns]
                for i, row in enumerate(self)]
        widths = [max(len(line[k]) for line in [header, *body]) for k in range(len(header))]
        return "\n".join(" ".join(text.rjust(w) for text, w in zip(line, widths))
                         for line in [header, *body])

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            part = Rows(super().__getitem__(key), self.columns)
            part.attrs = dict(self.attrs)
            return part
        return super().__getitem__(key)

    def __str__(self) -> str:
        return self.to_string()


def flatten(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts become dotted columns ("simulated.step_time_s"); lists stay as values."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def table(rows: Iterable[Mapping[str, Any]], columns: list[str] | None = None) -> Any:
    """A pandas DataFrame of `rows` (columns in first-seen order, or `columns`), or the rows."""
    rows = [dict(r) for r in rows]
    if columns is None:
        columns = []
        for r in rows:
            columns.extend(k for k in r if k not in columns)
    try:
        import pandas as pd
    except ImportError:
        return Rows(({c: r.get(c) for c in columns} for r in rows), columns)
    return pd.DataFrame(rows, columns=columns)
