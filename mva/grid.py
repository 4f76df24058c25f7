"""Parameter grids for what-if sweeps: ``NAME=SPEC`` specifications, cartesian and zipped.

A SPEC is one of

- ``start:stop:step``: an arithmetic range including ``stop`` when it falls on the grid
  (``1:16:1`` is 1, 2, ..., 16; ``0.6e6:1e6:0.1e6`` five values).  Integers stay integers.
- ``a,b,c``: a list; each item is a TOML value (``1``, ``0.5``, ``"serial"``, ``[1,2]``)
  or a bare word.
- ``@file.csv``: the column named NAME of a CSV file (or its only column).

NAME may be one element of a list parameter, ``NAME[k]`` (as in ``--set`` and ``--fit``).
A :class:`Grid` makes its cases on demand, a range of them at a time, so a sweep of any
size is solved and written in bounded memory.

Examples
--------
>>> parse_spec("cpus", "1:4:1")
[1, 2, 3, 4]
>>> parse_spec("disk.seek_time", "0.6e6:1e6:0.2e6")
[600000.0, 800000.0, 1000000.0]
>>> [case for case in cartesian({"a": [1, 2], "b": ["x", "y"]})]
[{'a': 1, 'b': 'x'}, {'a': 1, 'b': 'y'}, {'a': 2, 'b': 'x'}, {'a': 2, 'b': 'y'}]
"""
from __future__ import annotations

import csv
import math

import numpy as np

from .errors import ModelError
from .modelkind import parse_value, split_assignment

__all__ = ["parse_spec", "parse_sweeps", "cartesian", "zipped", "Grid", "MAX_CASES", "MAX_VALUES"]

MAX_VALUES = 10_000_000     # values of one sweep (held in memory)
MAX_CASES = 50_000_000      # cases of a grid built as a list (cartesian, zipped); a Grid has no limit


def _range(name: str, spec: str) -> list:
    parts = spec.split(":")
    if len(parts) != 3:
        raise ModelError(f"--sweep {name}", f"a range is start:stop:step, got {spec!r}")
    start, stop, step = (parse_value(p) for p in parts)
    for label, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ModelError(f"--sweep {name}", f"range {label} must be a number, got {v!r}")
    if step <= 0:
        raise ModelError(f"--sweep {name}", f"range step must be > 0, got {step}")
    if stop < start:
        raise ModelError(f"--sweep {name}", f"range {spec!r} is reversed (stop < start)")
    count = int(math.floor((stop - start) / step * (1 + 1e-12) + 1e-9)) + 1
    if count > MAX_VALUES:
        raise ModelError(f"--sweep {name}", f"range {spec!r} has {count} values (limit {MAX_VALUES})")
    if all(isinstance(v, int) for v in (start, stop, step)):
        return list(range(start, start + step * count, step))
    # 12 significant digits: 0.1 + 2 * 0.1 is 0.3 here, not 0.30000000000000004
    return [float(f"{start + i * step:.12g}") for i in range(count)]


def _csv_column(name: str, path: str) -> list:
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as exc:
        raise ModelError(f"--sweep {name}", f"cannot read {path}: {exc.strerror}") from None
    if not rows:
        raise ModelError(f"--sweep {name}", f"{path} has no rows")
    columns = list(rows[0])
    column = name if name in columns else (columns[0] if len(columns) == 1 else None)
    if column is None:
        raise ModelError(f"--sweep {name}", f"{path} has no column {name!r} (columns: {', '.join(columns)})")
    return [parse_value(r[column]) for r in rows]


def parse_spec(name: str, spec: str) -> list:
    """The values of one sweep: ``start:stop:step``, ``a,b,c`` or ``@file.csv``."""
    spec = spec.strip()
    if not spec:
        raise ModelError(f"--sweep {name}", "is empty")
    if spec.startswith("@"):
        values = _csv_column(name, spec[1:])
    elif spec.count(":") == 2 and not spec.startswith(("[", '"')):
        values = _range(name, spec)
    else:
        values = [parse_value(v) for v in _split_list(spec)]
    if not values:
        raise ModelError(f"--sweep {name}", "gives no values")
    return values


def _split_list(spec: str) -> list[str]:
    """Split on commas outside brackets and quotes, so ``[1,2],[3,4]`` is two items."""
    items, depth, quote, current = [], 0, False, []
    for ch in spec:
        if ch == '"':
            quote = not quote
        elif not quote and ch == "[":
            depth += 1
        elif not quote and ch == "]":
            depth -= 1
        if ch == "," and depth == 0 and not quote:
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    items.append("".join(current))
    if any(not item.strip() for item in items):
        raise ModelError("--sweep", f"empty item in list {spec!r}")
    return items


def parse_sweeps(specs) -> dict:
    """``["cpus=1:4:1", "disks=1,2,4"]`` to ``{"cpus": [1, 2, 3, 4], "disks": [1, 2, 4]}``."""
    sweeps = {}
    for text in specs:
        name, spec = split_assignment(text, "--sweep", "SPEC")
        if name in sweeps:
            raise ModelError(f"--sweep {name}", "is given twice")
        sweeps[name] = parse_spec(name, spec)
    return sweeps


class Grid:
    """The cases of a sweep, made on demand: the cartesian product of the sweeps (the
    first varying slowest) or, with ``zip``, the sweeps paired value by value.

    ``len(grid)`` cases; :meth:`cases` gives cases ``start .. stop - 1`` as dicts and
    :meth:`columns` as one array per parameter, without building the others.
    """

    def __init__(self, sweeps: dict, zip: bool = False):
        self.names = list(sweeps)
        self.values = [list(v) for v in sweeps.values()]
        self.zip = zip
        if zip:
            lengths = {name: len(v) for name, v in sweeps.items()}
            if len(set(lengths.values())) > 1:
                raise ModelError("--zip", "sweeps of unequal length: "
                                 + ", ".join(f"{n} has {k}" for n, k in lengths.items()))
            self.size = next(iter(lengths.values()), 0)
        else:
            self.size = math.prod(len(v) for v in self.values) if self.values else 0
        self._arrays = [_as_array(v) for v in self.values]

    def __len__(self) -> int:
        return self.size

    def _digits(self, start: int, stop: int) -> list:
        index = np.arange(start, stop, dtype=np.int64)
        if self.zip:
            return [index] * len(self.names)
        digits = []
        for values in reversed(self.values):       # the last sweep varies fastest
            digits.append(index % len(values))
            index = index // len(values)
        return digits[::-1]

    def columns(self, start: int, stop: int) -> dict:
        """``{name: array}`` of cases ``start .. stop - 1`` (object arrays for list values)."""
        return {name: array[d] for name, array, d in zip(self.names, self._arrays, self._digits(start, stop), strict=False)}

    def cases(self, start: int = 0, stop: int | None = None) -> list[dict]:
        """Cases ``start .. stop - 1`` as dicts of Python values."""
        stop = self.size if stop is None else stop
        digits = [d.tolist() for d in self._digits(start, stop)]
        return [dict(zip(self.names, (vals[i] for vals, i in zip(self.values, row, strict=False)), strict=False)) for row in zip(*digits, strict=False)]


def _as_array(values: list) -> np.ndarray:
    """Values as a numpy array: numeric when every value is a number of one type, else objects."""
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.int64)
    if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.float64)
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):      # element by element: list values must stay lists
        out[i] = v
    return out


def cartesian(sweeps: dict):
    """Every combination, the first sweep varying slowest (a list of dicts)."""
    grid = Grid(sweeps)
    if len(grid) > MAX_CASES:
        raise ModelError("--sweep", f"the grid has {len(grid)} cases (limit {MAX_CASES} for a list of cases)")
    return grid.cases()


def zipped(sweeps: dict):
    """The sweeps paired value by value; they must have equal lengths."""
    return Grid(sweeps, zip=True).cases()
