"""A model or network file with named parameters, as every what-if command sees it:
:class:`ModelTarget` (the kind's parameters over the file's values and ``--set``
overrides) and :func:`load_model` for a Python user.

Sweeps (:mod:`mva.sweep`), sensitivities (:mod:`mva.analysis`) and fitting
(:mod:`calibration.fit`) take a :class:`ModelTarget`; it solves one case, or many through
the kind's vectorised ``solve_batch`` / ``solve_columns`` when it has them.

Example: the TPC-C model file of configuration C2 with four CPUs instead of two (its one
disk holds it up, so they buy little)

>>> model = load_model("data/tpcc/c2.toml", cpus=4)
>>> round(model.solve().outputs["tpmC"], 1)
50.6
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import copy
import re
from dataclasses import replace as dc_replace

from .files import read_document
from .modelkind import (Parameter, check_names, document_kind, model_from_document, resolve_document,
                        warn_unreliable_cases)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ModelTarget", "target_from_document", "load_model"]


def load_model(path: str, **overrides):
    """The model (or network) a file describes, built and checked, with ``overrides``
    of its parameters by name (``cpus=4``; a dotted name as ``disk__seek_time=0.9e6``
    or ``**{"disk.seek_time": 0.9e6}``); call ``solve()`` on it, or ``simulate()``
    where the kind has one.  A :class:`~mva.errors.ModelError` names a bad field."""
    doc = read_document(path)
    return model_from_document(doc, {name.replace("__", "."): value for name, value in overrides.items()})


class ModelTarget:
    """A parsed file with named parameters: its kind's parameters over the file's values
    and ``overrides``; ``solver`` (``method`` and solver options) for kinds that take it."""

    def __init__(self, doc: dict, overrides: dict | None = None, solver: dict | None = None):
        self.doc = doc
        self.overrides = dict(overrides or {})
        self.solver = dict(solver or {})
        self.kind = document_kind(doc)
        self.cls, self.name, self.base = resolve_document(doc, overrides, solver)
        self.main_output = self.cls.main_output
        self.model = self._model({})      # cross-field checks, early

    def parameters(self) -> tuple[Parameter, ...]:
        """The kind's parameters, with the file's (and overrides') values as defaults."""
        return tuple(dc_replace(p, default=self.base[p.name]) for p in self.cls.parameters())

    def defaults(self) -> dict:
        """The model kind's own defaults (a network file's are its values)."""
        return {p.name: p.default for p in self.cls.parameters()}

    def units(self) -> dict:
        """The unit of each parameter and output by flat name (``utilization.cpu``), for
        the headers of sweep tables and the axes of plots.  Outputs' units come from one
        solve of the base case, so only when that is cheap (not ``--method
        simulation``); a name without a unit is absent."""
        units = {p.name: p.unit for p in self.cls.parameters() if p.unit}
        if self.solver.get("method") != "simulation":
            import warnings

            with warnings.catch_warnings():      # (the solve is for the units: its doubts belong to the rows)
                warnings.simplefilter("ignore")
                solution = self.model.solve()
            for name, unit in solution.units.items():
                units[name] = unit
        return units

    def _display(self, name: str):
        """(shown unit, factor) for a parameter whose unit the kind shows in another
        (``display_units``), else None; the factor reads the base case's parameter."""
        rules = getattr(self.cls, "display_units", None) or {}
        unit = next((p.unit for p in self.cls.parameters() if p.name == name), None)
        if unit not in rules:
            return None
        shown, parameter, scale = rules[unit]
        return shown, parameter, scale

    def shown_units(self, units: dict) -> dict:
        """``units`` with each parameter the kind shows in another unit given that unit."""
        out = dict(units)
        for name in list(units):
            rule = self._display(name)
            if rule is not None:
                out[name] = rule[0]
        return out

    def shown(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` with each such parameter's column in its shown unit (per row, when the
        factor's parameter is a column too), for tables and plots; files keep the unit."""
        import pandas as pd

        out = frame
        for column in frame.columns:
            rule = self._display(column)
            if rule is None or not pd.api.types.is_numeric_dtype(frame[column]):
                continue
            _, parameter, scale = rule
            base = frame[parameter] if parameter in frame.columns else self.base[parameter]
            if out is frame:
                out = frame.copy()
            out[column] = frame[column] * scale / base
        return out

    @staticmethod
    def unit_of(units: dict, column: str) -> str:
        """``column``'s unit: its own, or its group's (``utilization`` for
        ``utilization.cpu``); empty when none."""
        column = re.sub(r"\[\d+\]$", "", column)          # an element of a list has the list's unit
        return units.get(column) or units.get(column.split(".")[0], "")

    def check_names(self, names):
        check_names(self.cls.parameters(), names)

    def _model(self, case: dict):
        return self.cls.from_values({**self.base, **case}, name=self.name)

    def validate(self, case: dict) -> None:
        """ModelError if ``case`` is not a valid model (names, values, cross-field checks)."""
        self._model(case)

    def solve_one(self, case: dict) -> dict:
        return self._model(case).solve().flat()

    def solve_cases(self, cases: list[dict]) -> pd.DataFrame:
        """Flat outputs of every case (one row each); the kind's ``solve_batch`` if it has one."""
        import pandas as pd        # the library's import stays free of pandas (the CLI's start-up)

        if not cases:
            return pd.DataFrame()
        self.check_names(dict.fromkeys(n for c in cases for n in c))
        if self.cls.solve_batch is not None:
            return self.cls.solve_batch(self.base, cases)
        solutions = [self._model(c).solve() for c in cases]
        doubted = [s for s in solutions if s.doubted]
        if doubted:
            warn_unreliable_cases(len(doubted), len(cases), doubted[0].message)
        return pd.DataFrame([s.flat() for s in solutions])

    def solve_columns(self, columns: dict, count: int) -> pd.DataFrame:
        """:meth:`solve_cases` for cases given as one array per parameter (a kind's
        ``solve_columns`` skips building a dict per case)."""
        if self.cls.solve_columns is not None:
            frame = self.cls.solve_columns(self.base, columns, count)
            if frame is not None:
                return frame
        names = list(columns)
        lists = [columns[n].tolist() for n in names]
        return self.solve_cases([dict(zip(names, row, strict=False)) for row in zip(*lists, strict=False)] if names else [{}] * count)

    def document(self, values: dict) -> dict:
        """The file with ``values`` (dotted names) written in: the kind's own writer if it
        has one (a network file's stations), else into nested tables."""
        if self.cls.document is not None:
            extra = {k: v for k, v in self.doc.items() if k in ("kind", "name")}
            return {**extra, **self.cls.document(values)}
        out = copy.deepcopy(self.doc)
        for name, value in values.items():
            parts = name.split(".")
            table = out
            for part in parts[:-1]:
                table = table.setdefault(part, {})
            table[parts[-1]] = value
        return out


def target_from_document(doc: dict, method=None, options=None, overrides=None) -> ModelTarget:
    """The sweep target of a parsed file; ``method`` and ``options`` go to kinds that take a solver."""
    solver = {**({"method": method} if method else {}), **(options or {})}
    return ModelTarget(doc, overrides, solver)


