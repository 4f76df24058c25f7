"""The one result type returned by every solver."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Result", "is_unreliable"]


@dataclass(frozen=True)
class Result:
    """Steady-state measures of a network.

    Arrays are per class (shape ``(C,)``) or per station and class (shape ``(M, C)``), in
    the order of ``classes`` and ``stations``; time in the network's unit.

    Attributes
    ----------
    method : str
        Solver that produced the result.
    classes, stations : tuple of str
        Names, in array order.
    throughput : ndarray (C,)
        Interactions completed per time unit, per class (an open class: its arrival rate).
    response_time : ndarray (C,)
        System response time per interaction, per class (sum of residence times; the
        terminals' think time is not included).
    residence_time : ndarray (M, C)
        Time per interaction spent at each station (all visits, queueing included).
    queue_length : ndarray (M, C)
        Mean number of customers at each station (waiting and in service).
    utilization : ndarray (M, C)
        ``queue``/``delay``: X D; ``multi``: X D / m (busy fraction of one server);
        ``ld``: the class's share (in proportion to X D) of the busy probability 1 - P(0).
    converged : bool
        False when an iterative method stopped before its tolerance was met.
    iterations : int
        Iterations used (0 for direct methods).
    solve_seconds : float
        Wall time of the solve alone.
    message : str
        Anything the user should know about how the result was obtained.
    accuracy : str
        What the numbers are worth: ``"exact"``, the method's measured typical error, or
        ``"unreliable: ..."`` with the station and the reason (then a
        :class:`~mva.errors.NumericalWarning` was issued too).
    half_width : dict
        Simulation only: the confidence-interval half-width of each measure, by field name
        (``"throughput"``, ``"response_time"``, ``"residence_time"``, ``"queue_length"``,
        ``"utilization"``), arrays shaped as the measure; empty for analytic methods.
    confidence_level : float
        The level of those intervals (e.g. 0.95); 0 when there are none.
    extras : dict
        Method details, e.g. ``"algorithm"`` (which exact algorithm ran),
        ``"outer_iterations"`` (Linearizer), ``"auto"`` (why ``method="auto"`` chose it).
    """

    method: str
    classes: tuple[str, ...]
    stations: tuple[str, ...]
    throughput: np.ndarray
    response_time: np.ndarray
    residence_time: np.ndarray
    queue_length: np.ndarray
    utilization: np.ndarray
    converged: bool = True
    iterations: int = 0
    solve_seconds: float = 0.0
    message: str = ""
    accuracy: str = ""
    half_width: dict = field(default_factory=dict, repr=False, compare=False)
    confidence_level: float = 0.0
    extras: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        # the last guard of numerical honesty: a measure that left double precision is
        # never reported as converged or exact, whatever produced it
        lost = _lost_precision(self)
        if lost:
            object.__setattr__(self, "converged", False)
            object.__setattr__(self, "accuracy", f"unreliable: {lost}")
            object.__setattr__(self, "message", "; ".join(m for m in (self.message, lost) if m))

    @property
    def system_throughput(self) -> float:
        """Total throughput over all classes."""
        return float(np.sum(self.throughput))

    @property
    def system_response_time(self) -> float:
        """Throughput-weighted mean response time over classes (0 if nothing flows)."""
        x = np.asarray(self.throughput)
        total = x.sum()
        return float((x * self.response_time).sum() / total) if total > 0 else 0.0

    def station_utilization(self) -> np.ndarray:
        """Total utilisation of each station (sum over classes), shape ``(M,)``."""
        return np.asarray(self.utilization).sum(axis=1)

    def to_frame(self):
        """Long-form pandas DataFrame: one row per (station, class)."""
        import pandas as pd

        rows = []
        for k, station in enumerate(self.stations):
            for c, cls in enumerate(self.classes):
                row = {
                    "station": station, "class": cls,
                    "throughput": float(self.throughput[c]),
                    "residence_time": float(self.residence_time[k, c]),
                    "queue_length": float(self.queue_length[k, c]),
                    "utilization": float(self.utilization[k, c]),
                }
                if self.half_width:       # simulation: each measure's interval half-width
                    for name in ("throughput", "residence_time", "queue_length", "utilization"):
                        hw = self.half_width[name]
                        row[f"{name}_half_width"] = float(hw[c] if hw.ndim == 1 else hw[k, c])
                rows.append(row)
        return pd.DataFrame(rows)

    def to_dict(self) -> dict:
        """Plain JSON-ready dictionary (the keys of ``mva solve --format json``)."""
        return {
            "method": self.method,
            "classes": list(self.classes),
            "throughput": [float(v) for v in self.throughput],
            "response_time": [float(v) for v in self.response_time],
            "stations": [
                {"name": name,
                 "utilization": [float(v) for v in self.utilization[k]],
                 "queue_length": [float(v) for v in self.queue_length[k]],
                 "residence_time": [float(v) for v in self.residence_time[k]]}
                for k, name in enumerate(self.stations)
            ],
            "converged": bool(self.converged),
            "iterations": int(self.iterations),
            "solve_seconds": float(self.solve_seconds),
            "message": self.message,
            "accuracy": self.accuracy,
            "algorithm": self.extras.get("algorithm", self.method),
            **({"auto": self.extras["auto"]} if "auto" in self.extras else {}),
            **({"confidence_level": float(self.confidence_level),
                "half_width": finite_or_none(self.half_width)}
               if self.half_width else {}),
        }


_MEASURES = ("throughput", "response_time", "residence_time", "queue_length", "utilization")


def _lost_precision(result: Result) -> str:
    """What is not a number among ``result``'s measures: an infinite value anywhere, or
    NaN in a class that flows (a class without customers has NaN means by design)."""
    try:
        arrays = {name: np.asarray(getattr(result, name), dtype=float) for name in _MEASURES}
    except (TypeError, ValueError):
        return ""
    # every solve passes here: one sum a measure settles the common case (all finite)
    if np.isfinite(sum(float(a.sum()) for a in arrays.values())):
        return ""
    x = arrays["throughput"]
    flows = np.isfinite(x) & (x > 0)
    for name, values in arrays.items():
        if np.isinf(values).any():
            return f"{name} is infinite: the inputs' magnitudes left double precision"
        column = values[flows] if values.ndim == 1 else values[:, flows] if values.ndim == 2 else values
        if np.isnan(column).any():
            return f"{name} is NaN in a class with throughput: the inputs' magnitudes left double precision"
    return ""


def is_unreliable(accuracy: str) -> bool:
    """Whether an accuracy note (:attr:`Result.accuracy`, or a model's copy of one) flags
    its answer: it starts with ``unreliable:``."""
    return accuracy.startswith("unreliable")


def finite_or_none(values):
    """JSON-ready half-widths: arrays to nested lists of floats, dicts by key (a model's
    half-widths), ``None`` (JSON null) for an unknown (infinite) one."""
    if isinstance(values, dict):
        return {k: finite_or_none(v) for k, v in values.items()}
    array = np.asarray(values, dtype=float)
    if array.ndim == 0:
        return float(array) if np.isfinite(array) else None
    return [finite_or_none(v) for v in array]
