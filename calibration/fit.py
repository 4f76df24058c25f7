"""Calibration: model parameters from observations.

Two ways in:

* **Operational laws** (Denning & Buzen 1978): the service demand of device k is
  D_k = U_k / X (utilisation law), one estimate per operating point
  (:func:`operational_demands`), and, over several operating points, the regression of
  utilisation on the class throughputs, U_k = sum_c D_kc X_c (+ a background load if
  asked), by non-negative least squares (:func:`regression_demands`; Lawson & Hanson's
  NNLS through :func:`scipy.optimize.nnls`), with residuals.
* **Least-squares fitting** (:func:`fit`) of any named parameters of any network or model
  file against an observation table: one row per operating point, with the parameters
  that define it (columns named like the file's parameters, e.g. ``cpus`` or
  ``network.population``) and the observed outputs (columns named like the solver's
  outputs, e.g. ``throughput`` or ``utilization.cpu``).  The relative residuals
  (predicted - observed) / observed are minimised by :func:`scipy.optimize.least_squares`
  within bounds.  Uncertainties come from the Jacobian at the solution:
  cov = s^2 (J^T J)^-1 with s^2 = SSR / (m - n), and intervals from Student's t with
  m - n degrees of freedom (the usual linearised, Gauss-Newton intervals; Bates & Watts
  1988, ch. 2).  Rows can be held out: the fit never sees them and the errors on them
  are reported apart.

A fitted parameter may be a whole scalar parameter (``cpu.cache_hit_rate``) or one
element of a list parameter (``station.cpu.demand[0]``).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from mva.errors import ModelError
from mva.modelkind import split_element, with_element

__all__ = ["read_observations", "operational_demands", "regression_demands", "fit", "FitResult",
           "ObservationError", "parse_fit_spec", "calibrated_document"]


class ObservationError(ModelError):
    """A malformed observation table (names the column or row and the problem)."""


def read_observations(path_or_frame) -> pd.DataFrame:
    """An observation table from a CSV file (or a DataFrame): numeric columns, one row
    per operating point; an optional ``split`` column says ``train`` or ``holdout``.
    Empty cells are missing observations."""
    if isinstance(path_or_frame, pd.DataFrame):
        frame = path_or_frame.copy()
        where = "observations"
    else:
        where = str(path_or_frame)
        try:
            import csv

            with open(path_or_frame, newline="", encoding="utf-8") as fh:
                header = next(csv.reader(fh), [])
            dup = sorted({c.strip() for c in header if [h.strip() for h in header].count(c.strip()) > 1})
            if dup:      # pandas would rename them silently
                raise ObservationError(where, f"duplicate column(s): {', '.join(dup)}")
            frame = pd.read_csv(path_or_frame)
        except FileNotFoundError:
            raise ObservationError(where, "no such file") from None
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise ObservationError(where, f"not a readable CSV table ({str(exc).splitlines()[0]})") from None
    if frame.shape[0] == 0:
        raise ObservationError(where, "the table has no rows")
    frame.columns = [str(c).strip() for c in frame.columns]
    dup = sorted({c for c in frame.columns if list(frame.columns).count(c) > 1})
    if dup:
        raise ObservationError(where, f"duplicate column(s): {', '.join(dup)}")
    for col in frame.columns:
        if col == "file":
            if frame[col].isna().any():
                raise ObservationError(f"{where}: column file", "every row needs a model file")
            frame[col] = frame[col].astype(str)
            continue
        if col == "split":
            bad = set(frame[col].astype(str)) - {"train", "holdout"}
            if bad:
                raise ObservationError(f"{where}: column split", f"values must be train or holdout, got "
                                                                  f"{sorted(bad)[0]!r}")
            continue
        values = pd.to_numeric(frame[col], errors="coerce")
        bad_rows = np.flatnonzero(values.isna() & frame[col].notna())
        if bad_rows.size:
            r = int(bad_rows[0])
            raise ObservationError(f"{where}: row {r + 1}, column {col}", f"{frame[col].iloc[r]!r} is not a number")
        if np.isinf(values).any():
            raise ObservationError(f"{where}: column {col}", "infinite value")
        _check_measure_range(values, col, where)
        frame[col] = values
    return frame


def _check_measure_range(values: pd.Series, col: str, where: str) -> None:
    """A utilisation is a busy fraction (0 to 1), a throughput not negative."""
    if col.startswith("utilization") and ((values < 0) | (values > 1)).any():
        r = int(np.flatnonzero((values < 0) | (values > 1))[0])
        raise ObservationError(f"{where}: row {r + 1}, column {col}",
                               f"{values.iloc[r]:g} is not a utilisation: a busy fraction from 0 to 1 (of one "
                               "server; a multi-server device's per server, as the solvers report it)")
    if col.startswith("throughput") and (values < 0).any():
        r = int(np.flatnonzero(values < 0)[0])
        raise ObservationError(f"{where}: row {r + 1}, column {col}", f"{values.iloc[r]:g} is negative")


# --- operational laws --------------------------------------------------------------------------

def throughput_columns(frame: pd.DataFrame, where="observations"):
    cols = [c for c in frame.columns if c == "throughput" or c.startswith("throughput.")]
    if not cols:
        raise ObservationError(where, "needs a throughput column (or throughput.<class> columns)")
    if "throughput" in cols and len(cols) > 1:
        cols = [c for c in cols if c != "throughput"]     # per-class columns win
    return cols


def operational_demands(observations) -> pd.DataFrame:
    """Service demand D = U / X of every ``utilization.<device>`` column, per row (the
    utilisation law), with the mean, min and max over rows.  Single-class tables only
    (with several classes use :func:`regression_demands`).  Units: those of 1/X."""
    frame = read_observations(observations)
    xcols = throughput_columns(frame)
    if len(xcols) != 1:
        raise ObservationError("observations", "the utilisation law needs one throughput per row; with several "
                                               "classes use the regression")
    x = frame[xcols[0]].to_numpy(float)
    if np.any(x <= 0):
        raise ObservationError(f"observations: column {xcols[0]}", "throughputs must be positive")
    devices = [c for c in frame.columns if c.startswith("utilization.")]
    if not devices:
        raise ObservationError("observations", "needs utilization.<device> columns")
    for col in devices:
        given = int((frame[col].notna() & ~np.isnan(x)).sum())
        if given == 0:
            raise _too_few_rows(frame, xcols + [col], 0, 1)
    per_row = pd.DataFrame({c[len("utilization."):]: frame[c].to_numpy(float) / x for c in devices})
    summary = pd.DataFrame({"demand": per_row.mean(), "min": per_row.min(), "max": per_row.max(),
                            "rows": per_row.notna().sum()})
    summary.index.name = "device"
    return summary


def _too_few_rows(frame: pd.DataFrame, columns: list, usable: int, unknowns: int) -> ObservationError:
    """Too few rows with every one of ``columns`` given, naming the column whose empty
    cells cost the most rows (a missing throughput, not the utilisation beside it)."""
    gaps = {c: int(frame[c].isna().sum()) for c in columns}
    worst = max(columns, key=lambda c: gaps[c])
    return ObservationError(f"observations: column {worst}",
                            f"{usable} row(s) give {', '.join(columns)} together, for {unknowns} unknown(s); "
                            f"{worst} is empty in {gaps[worst]} of {len(frame)} rows")


def regression_demands(observations, background: bool = False) -> pd.DataFrame:
    """Demands by non-negative least squares of utilisation on throughput over the rows:
    U_k = sum_c D_kc X_c (+ U0_k if ``background``).  One row per device: the demand per
    class (``demand`` or ``demand.<class>``), ``background``, the residual RMS and the
    largest absolute residual (utilisation units), and ``rows`` used."""
    from scipy.optimize import nnls

    frame = read_observations(observations)
    xcols = throughput_columns(frame)
    devices = [c for c in frame.columns if c.startswith("utilization.")]
    if not devices:
        raise ObservationError("observations", "needs utilization.<device> columns")
    out = []
    for col in devices:
        rows = frame[xcols + [col]].dropna()
        a = rows[xcols].to_numpy(float)
        if background:
            a = np.column_stack([a, np.ones(len(rows))])
        if len(rows) < a.shape[1]:
            raise _too_few_rows(frame, xcols + [col], len(rows), a.shape[1])
        u = rows[col].to_numpy(float)
        coef, _ = nnls(a, u)
        resid = u - a @ coef
        rec = {"device": col[len("utilization."):]}
        for k, xc in enumerate(xcols):
            rec["demand" if xc == "throughput" else f"demand.{xc[len('throughput.'):]}"] = coef[k]
        rec["background"] = coef[-1] if background else 0.0
        rec["residual_rms"] = float(np.sqrt(np.mean(resid ** 2)))
        rec["residual_max"] = float(np.abs(resid).max())
        rec["rows"] = len(rows)
        out.append(rec)
    return pd.DataFrame(out).set_index("device")


# --- least-squares fitting ---------------------------------------------------------------------

def parse_fit_spec(text: str):
    """``NAME`` or ``NAME=LOW:HIGH`` (bounds; either side may be empty) -> (name, low, high)."""
    name, _, bounds = text.partition("=")
    name = name.strip()
    if not name:
        raise ModelError("--fit", f"expected NAME or NAME=LOW:HIGH, got {text!r}")
    low, high = 0.0, math.inf
    if bounds:
        lo, sep, hi = bounds.partition(":")
        if not sep:
            raise ModelError("--fit", f"bounds of {name} must be LOW:HIGH, got {bounds!r}")
        try:
            low = float(lo) if lo.strip() else -math.inf
            high = float(hi) if hi.strip() else math.inf
        except ValueError:
            raise ModelError("--fit", f"bounds of {name} must be numbers, got {bounds!r}") from None
        if not low < high:
            raise ModelError("--fit", f"bounds of {name}: {low} is not below {high}")
    return name, low, high


@dataclass(frozen=True)
class FitResult:
    """Fitted values and their uncertainty, and observed vs predicted per row.

    ``estimates``: one row per fitted parameter (value, std_error, low, high: the
    ``level`` confidence interval).  ``rows``: the observation table with
    ``predicted.<output>`` and ``error.<output>`` (relative) columns and ``split``.
    ``errors``: mean and max absolute relative error on train and holdout rows.
    """

    estimates: pd.DataFrame
    rows: pd.DataFrame
    errors: dict
    level: float
    converged: bool
    message: str
    values: dict = field(default_factory=dict)
    dof: int = 0

    def to_dict(self) -> dict:
        return {"estimates": {k: {c: (bool(v) if isinstance(v, (bool, np.bool_)) else
                                      None if not np.isfinite(v) else float(v)) for c, v in row.items()}
                              for k, row in self.estimates.to_dict(orient="index").items()},
                "errors": self.errors, "level": self.level, "converged": self.converged, "message": self.message,
                "degrees_of_freedom": self.dof, "values": self.values}


def fit(doc: dict, observations, parameters, holdout_rows=(), level: float = 0.95, method=None,
        options=None, loss: str = "linear", loss_scale: float = 0.1, documents: dict | None = None) -> FitResult:
    """Fit ``parameters`` (names, or (name, low, high) triples; ``name[k]`` for one list
    element) of the network or model document ``doc`` to ``observations``.

    Columns of the table that are parameters of the file define each row's operating
    point; the other columns (except ``split``) are observed outputs and must be outputs
    of the file's solver.  Rows in ``holdout_rows`` (0-based) or marked ``holdout`` in a
    ``split`` column are predicted but not fitted.

    ``loss`` is scipy's ``least_squares`` loss on the relative residuals: ``linear``
    (least squares), or ``soft_l1``, ``huber``, ``cauchy``, ``arctan`` to down-weight
    observations the model cannot meet (residuals beyond ``loss_scale``), as when
    published tables contradict each other.  Intervals then come from scipy's Gauss-Newton
    approximation of the robust cost and are rougher.  ``estimates.at_bound`` marks values
    that ended on a bound; their intervals treat them as free and mean little.

    A ``file`` column names each row's model file, relative to the observation file;
    ``documents`` (name to document) supplies them instead of reading files.
    """
    from scipy.optimize import least_squares

    real = lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool)   # noqa: E731  (numpy scalars too)
    if not (real(level) and 0 < level < 1):
        raise ModelError("level", f"must be between 0 and 1 (exclusive), e.g. 0.95, got {level!r}")
    if not (real(loss_scale) and math.isfinite(loss_scale) and loss_scale > 0):
        raise ModelError("loss_scale", f"must be a number > 0, got {loss_scale!r}")
    frame = read_observations(observations)
    targets, row_target = _fit_targets(doc, observations, frame, method, options, documents)
    problem = _Problem(frame, targets, row_target, parameters)
    train = _training_rows(frame, holdout_rows)
    theta0 = np.array([u.start for u in problem.unknowns])
    problem.predict(theta0)                                 # output names checked before fitting
    m = int(problem.mask[train].sum())
    if m < len(problem.unknowns):
        raise ObservationError("observations", f"{m} observed values in training rows for {len(problem.unknowns)} "
                                               "parameters")
    lows, highs = (np.array([getattr(u, side) for u in problem.unknowns]) for side in ("low", "high"))
    sol = least_squares(problem.residuals, _first_guess(theta0, lows, highs), bounds=(lows, highs), args=(train,),
                        x_scale="jac", loss=loss, f_scale=loss_scale, xtol=1e-12, ftol=1e-12, gtol=1e-12,
                        max_nfev=200 * (len(problem.unknowns) + 1))
    dof = m - len(problem.unknowns)
    estimates = _estimates(sol, problem.unknowns, theta0, lows, highs, dof, level)
    rows, errors = problem.compare(sol.x, train)
    values = {}
    for u, v in zip(problem.unknowns, sol.x, strict=True):
        values[u.base] = _with_value(values.get(u.base, problem.base_values[u.base]), u.index, float(v))
    return FitResult(estimates, rows, errors, level, bool(sol.success), str(sol.message), values, dof)


def _fit_targets(doc, observations, frame, method, options, documents) -> tuple[dict, list]:
    """The model target of each row: ``doc``'s, or the file its ``file`` column names
    (relative to the observation file; ``documents`` supplies them by name instead)."""
    from pathlib import Path

    from mva.files import read_document
    from mva.targets import target_from_document

    if "file" not in frame.columns:
        if doc is None:
            raise ModelError("fit", "give a model file or a 'file' column in the observations")
        return {None: target_from_document(doc, method, options)}, [None] * len(frame)
    root = Path(observations).parent if not isinstance(observations, pd.DataFrame) else Path(".")
    targets = {}
    for name in dict.fromkeys(frame["file"]):
        if documents is not None and name in documents:
            document = documents[name]
        else:
            document = read_document(str(Path(name) if Path(name).is_absolute() else root / name))
        targets[name] = target_from_document(document, method, options)
    return targets, list(frame["file"])


@dataclass(frozen=True)
class _Unknown:
    """A fitted parameter: its name as given (``name[k]`` for one element), the base
    parameter and element index, bounds and start value."""

    name: str
    base: str
    index: int | None
    low: float
    high: float
    start: float


def _unknown(spec, base_values: dict) -> _Unknown:
    """A fit specification (``NAME=LOW:HIGH`` text or a triple) against the file's values."""
    name, low, high = parse_fit_spec(spec) if isinstance(spec, str) else tuple(spec)
    base, index = split_element(name)
    value = base_values[base]
    if index is not None:
        with_element(name, value, index, None)      # ModelError if there is no such element
        start = float(value[index])
    elif isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise ModelError(name, f"{base} is a list of {len(value)}; fit one element, e.g. {base}[0]")
        start = float(value[0])
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ModelError(name, f"only numeric parameters can be fitted ({base} = {value!r})")
    else:
        start = float(value)
    return _Unknown(name, base, index, low, high, min(max(start, low), high))


class _Problem:
    """The observations, the targets that predict them and the unknowns: predictions
    and relative residuals for a vector of unknown values."""

    def __init__(self, frame: pd.DataFrame, targets: dict, row_target: list, parameters):
        self.frame, self.targets, self.row_target = frame, targets, row_target
        target = next(iter(targets.values()))
        names = set.intersection(*({p.name for p in t.parameters()} for t in targets.values()))
        if not parameters:
            raise ModelError("--fit", "name at least one parameter to fit")
        self.base_values = dict(target.base)
        for spec in parameters:
            base = split_element(parse_fit_spec(spec)[0] if isinstance(spec, str) else spec[0])[0]
            if base not in names:
                target.check_names([base])                  # "did you mean" error
        self.unknowns = [_unknown(spec, self.base_values) for spec in parameters]
        self.inputs = [c for c in frame.columns if c in names]
        self.outputs = [c for c in frame.columns if c not in names and c not in ("split", "file")]
        clash = sorted(set(self.inputs) & {u.base for u in self.unknowns})
        if clash:
            raise ObservationError(f"observations: column {clash[0]}", "is both an operating-point column and fitted")
        if not self.outputs:
            raise ObservationError("observations", "no observed output columns (every column is a parameter)")
        self.observed = frame[self.outputs].to_numpy(float)
        self.scale = np.where(np.abs(self.observed) > 0, np.abs(self.observed), 1.0)
        self.mask = ~np.isnan(self.observed)

    def case(self, i: int, theta) -> dict:
        """Row ``i``'s operating point with the unknowns at ``theta``."""
        base = self.targets[self.row_target[i]].base
        frame = self.frame
        out = {c: _as_param(frame[c].iloc[i], base[c]) for c in self.inputs if not np.isnan(frame[c].iloc[i])}
        for u, v in zip(self.unknowns, theta, strict=True):
            out[u.base] = _with_value(out.get(u.base, base[u.base]), u.index, v)
        return out

    def predict(self, theta) -> np.ndarray:
        """Predicted outputs, rows x observed columns."""
        result = np.full((len(self.frame), len(self.outputs)), np.nan)
        for key, t in self.targets.items():
            rows = [i for i in range(len(self.frame)) if self.row_target[i] == key]
            solved = t.solve_cases([self.case(i, theta) for i in rows])
            for k, c in enumerate(self.outputs):
                if c in solved.columns:
                    result[rows, k] = solved[c].to_numpy(float)
                elif not np.all(np.isnan(self.observed[rows, k])):
                    raise ObservationError(f"observations: column {c}", "is neither a parameter nor an output; "
                                           f"outputs: {', '.join(map(str, solved.columns))}")
        return result

    def residuals(self, theta, rows) -> np.ndarray:
        """Relative residuals of the observed values of ``rows`` (a boolean mask)."""
        r = (self.predict(theta) - self.observed) / self.scale
        return r[rows][self.mask[rows]]

    def compare(self, theta, train) -> tuple[pd.DataFrame, dict]:
        """The observation table with ``predicted.*``, ``error.*`` and ``split`` columns,
        and the mean and max absolute relative error on train and holdout rows."""
        pred = self.predict(theta)
        rel = (pred - self.observed) / self.scale
        rows = self.frame.copy()
        for k, c in enumerate(self.outputs):
            rows[f"predicted.{c}"] = pred[:, k]
            rows[f"error.{c}"] = rel[:, k]
        rows["split"] = np.where(train, "train", "holdout")
        errors = {}
        for label, sel in (("train", train), ("holdout", ~train)):
            vals = np.abs(rel[sel][self.mask[sel]])
            errors[label] = ({"mean": float(vals.mean()), "max": float(vals.max()), "values": int(vals.size)}
                             if vals.size else {"mean": None, "max": None, "values": 0})
        return rows, errors


def _training_rows(frame: pd.DataFrame, holdout_rows) -> np.ndarray:
    """True for the rows fitted: not marked ``holdout`` in ``split``, not in ``holdout_rows``."""
    train = np.ones(len(frame), dtype=bool)
    if "split" in frame.columns:
        train &= frame["split"].astype(str).to_numpy() == "train"
    for r in holdout_rows:
        if not 0 <= r < len(frame):
            raise ModelError("--holdout-rows", f"row {r} is outside the table's {len(frame)} rows")
        train[r] = False
    return train


def _first_guess(theta0, lows, highs) -> np.ndarray:
    """A start inside the bounds: the file's values where positive, else the middle of
    finite bounds, nudged off a lower bound (where a scaled Jacobian can stall)."""
    x0 = np.where(theta0 > 0, theta0, np.where(np.isfinite(highs), (lows + highs) / 2, lows + 1.0))
    x0 = np.clip(x0, lows, highs)
    if np.any(x0 == lows) and np.all(np.isfinite(lows)):
        x0 = np.where(x0 == lows, lows + 1e-6 * np.maximum(1.0, np.abs(lows)), x0)
    return x0


def _estimates(sol, unknowns, theta0, lows, highs, dof: int, level: float) -> pd.DataFrame:
    """Values with Student-t intervals from the Jacobian at the solution (NaN with no
    degrees of freedom), and whether each ended on a bound."""
    from mva.simulation_output import student_t_quantile

    theta = sol.x
    if dof > 0:
        cov = np.linalg.pinv(sol.jac.T @ sol.jac) * (2.0 * sol.cost / dof)
        std = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        tq = student_t_quantile(0.5 + level / 2, dof)
    else:
        std = np.full(len(unknowns), np.nan)
        tq = np.nan
    span = np.where(np.isfinite(highs - lows), highs - lows, np.maximum(1.0, np.abs(theta)))
    at_bound = (theta - lows <= 1e-6 * span) | (highs - theta <= 1e-6 * span)
    estimates = pd.DataFrame({"value": theta, "std_error": std, "low": theta - tq * std, "high": theta + tq * std,
                              "start": theta0, "at_bound": at_bound}, index=[u.name for u in unknowns])
    estimates.index.name = "parameter"
    return estimates


def _as_param(cell, like):
    """A table cell as a parameter value shaped like the file's (ints stay ints; a
    one-element list stays a list)."""
    v = float(cell)
    if isinstance(like, (list, tuple)):
        return [v]
    if isinstance(like, int) and not isinstance(like, bool) and v.is_integer():
        return int(v)
    return v


def _with_value(current, index, value):
    if index is None:
        return [float(value)] if isinstance(current, (list, tuple)) else float(value)
    return with_element(f"[{index}]", current, index, float(value))


def calibrated_document(doc: dict, values: dict) -> dict:
    """``doc`` with fitted ``values`` (dotted names) written in, as its model kind
    writes a file (a network file's stations, a model file's nested tables)."""
    from mva.targets import ModelTarget

    return ModelTarget(doc).document(values)
