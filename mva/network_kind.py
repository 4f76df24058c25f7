"""The built-in model kind ``network``: a network file (:mod:`mva.files`) as a model with
named parameters, so it takes ``--list-parameters``, ``--set``, ``--sweep`` and
``calibrate --fit`` like every other kind (:mod:`mva.modelkind`).

Its parameters are the file's own numbers: ``network.population``,
``network.think_time``, ``network.arrival_rate``, ``station.<name>.demand`` and, by
station type, ``station.<name>.servers`` / ``station.<name>.capacity`` (a list element
is ``NAME[k]``).  The kind is bound to one file (:meth:`NetworkKind.for_document`): the
stations and classes are the file's, the parameters' defaults are the file's values,
and ``--method`` with the solver options chooses how it is solved (default ``auto``).

Sweeps whose cases differ only in demands and think times go through a batch solver
(:mod:`mva.batch`), one compiled pass per shape: exact MVA for a closed single-class
network (``auto`` or ``exact``), Linearizer or Bard-Schweitzer for closed networks of any
classes under ``--method linearizer`` or ``schweitzer``, or under ``auto`` where it runs
them; anything else is solved case by case.
"""
from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .errors import ModelError, NumericalWarning
from .files import DEFAULT_TIME_UNIT, time_unit
from .modelkind import (ModelKind, ModelSolution, Parameter, hashable, resolve_values, split_element,
                        warn_unreliable_cases)
from .result import is_unreliable

__all__ = ["NetworkKind", "NetworkModel", "NetworkSolution"]

NUMERIC = ("demand", "think_time")
#: Sweeps from this many cases on get :meth:`NetworkKind.sweep_note`.
SWEEP_NOTE_CASES = 100
SOLVER_KEYS = ("method", "tol", "max_iter", "max_outer", "multiserver", "seed", "events", "replications",
               "precision", "target", "confidence", "workers", "scheduler")


class NetworkKind(ModelKind):
    """Kind ``network`` bound to one file's structure (see the module docstring)."""

    kind = "network"
    main_output = "throughput"

    def __init__(self, doc: dict, solver: dict | None = None):
        self.doc = {k: v for k, v in doc.items() if k not in ("kind", "name")}
        solver = dict(solver or {})
        unknown = sorted(set(solver) - set(SOLVER_KEYS))
        if unknown:
            raise ModelError(unknown[0], f"unknown solver option; valid: {', '.join(SOLVER_KEYS)}")
        self.method = solver.pop("method", None) or "auto"
        self.options = solver
        head = self.doc.get("network") if isinstance(self.doc.get("network"), dict) else {}
        self.name = doc.get("name") or head.get("name", "")
        if not isinstance(self.name, str):
            raise ModelError("network.name", f"must be a string, got {self.name!r}")
        self.time_unit = time_unit(head)
        self._parameters = self._read_parameters(head)
        stations = self.doc.get("station") if isinstance(self.doc.get("station"), list) else []
        #: Delay stations, never a sweep's bottleneck (see :func:`mva.sweep.bottleneck`).
        self.not_bottlenecks = tuple(st["name"] for st in stations
                                     if isinstance(st, dict) and st.get("type") == "delay" and "name" in st)

    @classmethod
    def for_document(cls, doc: dict, solver: dict | None = None) -> NetworkKind:
        """The kind bound to the network file ``doc`` (``solver``: method and options)."""
        return cls(doc, solver)

    def _read_parameters(self, head):
        params = []
        unit_of_time = self.time_unit
        for key, unit, what in (("population", "customers", "closed population per class"),
                                ("think_time", unit_of_time, "think time per class"),
                                ("arrival_rate", f"1/{unit_of_time}", "open arrival rate per class")):
            if key in head or key in ("population", "think_time"):
                params.append(Parameter(f"network.{key}", head.get(key, 0), unit, what))
        stations = self.doc.get("station", [])
        for i, st in enumerate(stations if isinstance(stations, list) else []):
            if not isinstance(st, dict) or "name" not in st:
                continue
            name = st["name"]
            if not isinstance(name, str) or not name:
                raise ModelError(f"station[{i}].name", f"must be a non-empty string, got {name!r}")
            params.append(Parameter(f"station.{name}.demand", st.get("demand"), unit_of_time,
                                    f"service demand per class at {name}"))
            if st.get("type") == "multi":
                params.append(Parameter(f"station.{name}.servers", st.get("servers", 1), "servers",
                                        f"servers at {name}"))
            if st.get("type") == "ld":
                params.append(Parameter(f"station.{name}.capacity", st.get("capacity"), "",
                                        f"relative capacity alpha(1..J) of {name}"))
            if "scv" in st or st.get("discipline") == "fcfs":   # where it can change a result
                params.append(Parameter(f"station.{name}.scv", st.get("scv", 1.0), "",
                                        f"squared coefficient of variation of service at {name}"))
            if "visits" in st:
                params.append(Parameter(f"station.{name}.visits", st.get("visits"), "visits",
                                        f"visits per interaction per class at {name}"))
        return tuple(params)

    def parameters(self) -> tuple[Parameter, ...]:
        """The file's parameters; their defaults are the file's values."""
        return self._parameters

    def values_in(self, doc: dict) -> dict:
        """Nothing beyond the defaults: the file's values are the defaults."""
        return {}

    def document(self, values: dict) -> dict:
        """The network document with ``values`` (dotted names) written in."""
        doc = copy.deepcopy(self.doc)
        head = doc.setdefault("network", {})
        # a malformed station (no name, not a table) is left for network_from_dict to report
        listed = doc.get("station") if isinstance(doc.get("station"), list) else []
        stations = {st["name"]: st for st in listed if isinstance(st, dict) and "name" in st}
        for name, value in values.items():
            part = name.split(".")
            if part[0] == "network":
                head[part[1]] = value
            else:
                stations[".".join(part[1:-1])][part[-1]] = value
        return doc

    def from_values(self, values: dict, name: str = "") -> NetworkModel:
        """The network with ``values`` written in (validated: ModelError naming the field).

        Only values that differ from the file's are written, so what the file leaves out
        (a missing population or demand) is still reported as missing."""
        from .files import network_from_dict
        resolved = resolve_values(self._parameters, values)
        changed = {p.name: resolved[p.name] for p in self._parameters
                   if p.name in values and hashable(resolved[p.name]) != hashable(p.default)}
        network = network_from_dict(self.document(changed))
        return NetworkModel(network, name or self.name, self.method, self.options, self.time_unit)

    @property
    def _exact(self) -> bool:
        """Whether cases may go through the batch solver, which is exact."""
        return self.method in ("auto", "exact") and not self.options

    @property
    def _approximate(self) -> str | None:
        """The method whose approximate batch solver may take the cases (``--method
        linearizer``, ``schweitzer`` or ``auto``, with options it takes), else None."""
        from .batch import BATCH_APPROXIMATE
        options = dict(self.options)
        if options.pop("multiserver", "marginal") != "marginal" or set(options) - {"tol", "max_iter", "max_outer"}:
            return None
        return self.method if self.method in (*BATCH_APPROXIMATE, "auto") else None

    def _batches(self, network) -> bool:
        """Whether the exact batch solver takes ``network``: one closed product-form class,
        and the method would solve it exactly (``auto`` within its budget, ``exact`` when
        its lattice fits); otherwise every case goes through :meth:`solve`, which picks
        or refuses as one solve would."""
        from .auto import choose_method
        from .batch import can_batch
        from .exact import exact_lattice_fits
        from .plan import SolverPlan

        if not self._exact or not can_batch(network):
            return False
        if self.method == "auto":
            return choose_method(network)[0] == "exact"
        return exact_lattice_fits(SolverPlan.of(network))

    def _batches_approximately(self, network) -> bool:
        """Whether the approximate batch solver takes ``network`` (:func:`mva.batch.can_batch_approximate`)."""
        from .auto import choose_method
        from .batch import BATCH_APPROXIMATE, can_batch_approximate
        if self._approximate is None or not can_batch_approximate(network):
            return False
        # auto: where it would choose an approximate method for the sweep's first case
        # (cases of other structures are solved as auto solves them, in the batch)
        return self._approximate != "auto" or choose_method(network)[0] in BATCH_APPROXIMATE

    def solve_batch(self, base: dict, cases: list[dict]) -> pd.DataFrame:
        """Flat outputs of every case, batched where the cases share a shape (everything
        but demands and think times): exactly for a closed single-class network, by the
        approximate batch solver for closed networks under ``--method linearizer`` or
        ``schweitzer``, or ``auto`` where it runs them (:func:`mva.batch.batch_approximate`).

        A row's ``unreliable`` says whether its result flags itself; instead of one
        warning per such case, one line says how many there are and why the first is."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", NumericalWarning)
            frame = self._solve_batch_cases(base, cases)
        doubts = [w for w in caught if issubclass(w.category, NumericalWarning) and "unreliable:" in str(w.message)]
        for w in caught:
            if w not in doubts:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        count = int(frame["unreliable"].sum()) if "unreliable" in frame else 0
        if count:
            first = str(doubts[0].message) if doubts else self._first_doubt(base, cases, frame)
            warn_unreliable_cases(count, len(frame), first)
        return frame

    def sweep_note(self, base: dict, count: int) -> str:
        """Before a sweep of ``count`` cases under ``auto`` that decomposes the network case
        by case (tens of milliseconds each), where ``--method linearizer`` would batch
        them: the choice, in one sentence; else ""."""
        from .auto import choose_method
        from .batch import can_batch_approximate

        if self.method != "auto" or self.options or count < SWEEP_NOTE_CASES:
            return ""
        network = self.from_values(base).network
        if not can_batch_approximate(network) or choose_method(network)[0] != "decomposition":
            return ""
        return (f"auto solves each of the {count:,} cases by decomposition, one by one (a Markov chain each); "
                "--method linearizer solves them in one compiled batch, thousands a second, with the accuracy the "
                "guide gives for it")

    def _first_doubt(self, base, cases, frame) -> str:
        """Why the first unreliable row of a batch is: its case solved alone."""
        row = int(np.flatnonzero(frame["unreliable"].to_numpy())[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumericalWarning)
            accuracy = self.from_values({**base, **cases[row]}).solve_result().accuracy
        return f"{self.method}: {accuracy}" if is_unreliable(accuracy) else "see the cases' accuracy"

    def _solve_batch_cases(self, base: dict, cases: list[dict]) -> pd.DataFrame:
        if not (self._exact or self._approximate):
            return pd.DataFrame([self.from_values({**base, **c}).solve().flat() for c in cases])
        names = list(dict.fromkeys(n for c in cases for n in c))
        numeric = [n for n in names if split_element(n)[0].endswith(NUMERIC)]
        groups = {}
        for i, case in enumerate(cases):
            shape = tuple((n, hashable(v)) for n, v in case.items() if n not in numeric)
            groups.setdefault(shape, []).append(i)
        parts = []
        for shape, rows in groups.items():
            group = [cases[i] for i in rows]
            network = self.from_values({**base, **dict(shape)}).network
            used = [n for n in numeric if any(n in c for c in group)]
            if self._batches(network):
                demand, think = self._case_arrays(network, group, used)
                part = self._batch(network, demand[:, :, 0], think[:, 0])
            elif self._batches_approximately(network):
                demand, think = self._case_arrays(network, group, used)
                part = self._batch_approximate(network, demand, think)
            else:
                part = pd.DataFrame([self.from_values({**base, **c}).solve().flat() for c in group])
            parts.append(part.set_axis(rows))
        return pd.concat(parts).sort_index().reset_index(drop=True) if len(parts) > 1 else parts[0]

    def solve_columns(self, base: dict, columns: dict, count: int):
        """The batch path straight from one array per parameter, when every swept name is
        a demand or think time of a closed single-class network; None otherwise."""
        if not self._exact or not all(n.endswith(NUMERIC) and n in base for n in columns):
            return None
        network = self.from_values(base).network
        if not self._batches(network):
            return None
        demand = np.tile(network.demands[:, 0], (count, 1))
        think = np.full(count, float(network.think_time[0]))
        for name, values in columns.items():
            column = self._column(name, values)
            if name == "network.think_time":
                think = column
            else:
                demand[:, _station_index(network, name)] = column
        return self._batch(network, demand, think)

    @staticmethod
    def _column(name, values) -> np.ndarray:
        """Per-case values of a one-class demand or think time as float64, checked."""
        if not (isinstance(values, np.ndarray) and values.dtype.kind in "if"):
            flat = np.array([v[0] if isinstance(v, (list, tuple)) and len(v) == 1 else v for v in values],
                            dtype=object)
            try:
                values = flat.astype(float)
            except (TypeError, ValueError):
                raise ModelError(name, "must be a number (one class)") from None
        return NetworkKind._checked(name, np.asarray(values, dtype=float))

    @staticmethod
    def _checked(name, column) -> np.ndarray:
        if not np.all(np.isfinite(column)) or np.any(column < 0):
            bad = column[~(np.isfinite(column) & (column >= 0))][0]
            raise ModelError(name, f"must be finite and >= 0, got {bad:g}")
        return column

    @staticmethod
    def _case_arrays(network, cases: list[dict], names) -> tuple[np.ndarray, np.ndarray]:
        """Each case's demands (B, M, C) and think times (B, C): ``network``'s, with the
        swept ``names`` (whole lists first, then ``NAME[k]`` elements) written in, checked."""
        C = network.n_classes
        demand = np.repeat(network.demands[None], len(cases), axis=0)
        think = np.repeat(np.asarray(network.think_time, dtype=float)[None], len(cases), axis=0)
        for name in sorted(names, key=lambda n: split_element(n)[1] is not None):
            whole, index = split_element(name)
            rows = [i for i, c in enumerate(cases) if name in c]
            target = think if whole == "network.think_time" else demand[:, _station_index(network, whole)]
            if index is not None and not -C <= index < C:
                raise ModelError(name, f"{whole} has no element {index}: it is a list of {C}")
            values = [cases[i][name] for i in rows]
            if index is None and C == 1:
                values = [v if isinstance(v, (list, tuple)) else [v] for v in values]
            try:
                column = np.array(values, dtype=float)
            except (TypeError, ValueError):
                column = None
            if column is None or column.shape != ((len(rows), C) if index is None else (len(rows),)):
                raise ModelError(name, f"must be {'a list of ' + str(C) + ' numbers' if index is None else 'a number'}")
            if index is None:
                target[rows] = NetworkKind._checked(name, column)
            else:
                target[rows, index] = NetworkKind._checked(name, column)
        return demand, think

    @staticmethod
    def _batch(net, demand, think) -> pd.DataFrame:
        from .batch import batch_exact_single_class
        out = batch_exact_single_class(net, demand, think)
        ones = np.ones(len(demand), dtype=bool)
        # exact MVA of a product-form network: converged, nothing to doubt
        return _rows(net, out["throughput"][:, None], out["response_time"][:, None], out["utilization"], ones, ~ones)

    def _batch_approximate(self, net, demand, think) -> pd.DataFrame:
        from .batch import batch_approximate
        out = batch_approximate(net, demand, think, self._approximate,
                                **{k: v for k, v in self.options.items() if k != "multiserver"})
        unconverged = int((~out["converged"]).sum())
        if unconverged:    # (a case solved alone warns itself)
            warnings.warn(f"{unconverged} of {len(demand)} cases did not converge (column converged): their numbers "
                          "are the iteration's last", NumericalWarning, stacklevel=2)
        return _rows(net, out["throughput"], out["response_time"], out["utilization"].sum(axis=2), out["converged"],
                     out["unreliable"])


def _station_index(network, name: str) -> int:
    """The station of a parameter ``station.<name>.demand``."""
    return network.station_names.index(name[len("station."):-len(".demand")])


def _rows(network, throughput, response_time, utilization, converged, unreliable) -> pd.DataFrame:
    """The rows of :meth:`NetworkModel.outputs` (plus ``converged`` and ``unreliable``) for
    many cases at once: ``throughput`` and ``response_time`` (B, C), ``utilization`` (B, M)."""
    if network.n_classes == 1:
        frame = {"throughput": throughput[:, 0], "response_time": response_time[:, 0]}
    else:   # the system's throughput and its throughput-weighted response time (Result's)
        total = throughput.sum(axis=1)
        weighted = np.divide((throughput * response_time).sum(axis=1), total, out=np.zeros(len(total)),
                             where=total > 0)
        frame = {"throughput": total, "response_time": weighted}
        frame.update({f"throughput.{c}": throughput[:, j] for j, c in enumerate(network.classes)})
        # a class that completes nothing (no customers) has no response time: NaN, shown n/a or -
        frame.update({f"response_time.{c}": np.where(throughput[:, j] > 0, response_time[:, j], np.nan)
                      for j, c in enumerate(network.classes)})
    frame.update({f"utilization.{s}": utilization[:, k] for k, s in enumerate(network.station_names)})
    frame["converged"], frame["unreliable"] = converged, unreliable
    return pd.DataFrame(frame)


class NetworkModel(ModelKind):
    """One network of a network file, with the method that solves it."""

    kind = "network"

    def __init__(self, network, name: str, method: str, options: dict, time_unit: str = DEFAULT_TIME_UNIT):
        self.network = network
        self.name = name
        self.method = method
        self.options = options
        self.time_unit = time_unit

    def units(self, outputs: dict) -> dict:
        """The unit of each output: throughputs per time unit, response times in it."""
        unit = self.time_unit
        return {name: f"1/{unit}" if name.startswith("throughput") else unit
                for name in outputs if name.startswith(("throughput", "response_time"))}

    def solve_result(self):
        """The full :class:`~mva.result.Result` (per class and station)."""
        from .solve import solve
        return solve(self.network, method=self.method, **self.options)

    @staticmethod
    def outputs(result) -> dict:
        """Named outputs: throughput and response time (per class too when there are
        several), utilisation per station."""
        one = len(result.classes) == 1      # then exactly the class's numbers, as the batch path gives
        out = {"throughput": float(result.throughput[0]) if one else result.system_throughput,
               "response_time": float(result.response_time[0]) if one else result.system_response_time}
        if not one:
            out.update({f"throughput.{c}": float(x) for c, x in zip(result.classes, result.throughput, strict=False)})
            out.update({f"response_time.{c}": float(r) if x > 0 else float("nan")
                        for c, r, x in zip(result.classes, result.response_time, result.throughput, strict=True)})
        out["utilization"] = {s: float(u) for s, u in zip(result.stations, result.station_utilization(), strict=False)}
        return out

    @staticmethod
    def output_half_widths(result) -> dict:
        """Half-widths of :meth:`outputs` from a simulation's per-class ones: a class's
        own; for a sum over classes (system throughput, a station's utilisation) the sum
        of the classes' half-widths, and for the throughput-weighted response time the
        same weighting of theirs (bounds that hold however the classes' errors
        correlate, ignoring the weights' own error); infinite where a class has none."""
        half = result.half_width
        one = len(result.classes) == 1
        x = np.asarray(result.throughput)
        hx, hr = np.asarray(half["throughput"]), np.asarray(half["response_time"])
        weighted = float((x * hr).sum() / x.sum()) if x.sum() > 0 else float(np.max(hr, initial=0.0))
        out = {"throughput": float(hx[0]) if one else float(hx.sum()),
               "response_time": float(hr[0]) if one else weighted}
        if not one:
            out.update({f"throughput.{c}": float(h) for c, h in zip(result.classes, hx, strict=True)})
            out.update({f"response_time.{c}": float(h) for c, h in zip(result.classes, hr, strict=True)})
        utilization = np.asarray(half["utilization"]).sum(axis=1)
        out["utilization"] = {s: float(h) for s, h in zip(result.stations, utilization, strict=True)}
        return out

    def solve(self) -> NetworkSolution:
        """The solution, with the full per-class, per-station ``result``, the ``network``
        and its ``time_unit``; a simulation's half-widths per output."""
        result = self.solve_result()
        if result.method == "simulation":
            message = "" if result.converged else result.message
        else:
            message = "" if result.converged else f"method {result.method} did not converge ({result.iterations} iterations)"
        outputs = self.outputs(result)
        extra = {}
        if result.half_width:
            extra = {"half_width": self.output_half_widths(result), "confidence_level": result.confidence_level}
        return NetworkSolution(self.name, self.kind, outputs, bool(result.converged), result.iterations,
                               result.solve_seconds, message, units=self.units(outputs), result=result,
                               network=self.network, time_unit=self.time_unit,
                               doubted=is_unreliable(result.accuracy), **extra)


@dataclass(frozen=True)
class NetworkSolution(ModelSolution):
    """The solution of a network file: the named outputs of every model kind, plus the
    full :class:`~mva.result.Result` (per class and station), the :class:`~mva.network.Network`
    and the file's time unit, which the command line prints in full."""

    result: Any = field(default=None, repr=False)
    network: Any = field(default=None, repr=False)
    time_unit: str = DEFAULT_TIME_UNIT

    @property
    def unreliable(self) -> bool:
        """Whether the result flags itself ``unreliable:`` (:attr:`mva.Result.accuracy`):
        ``doubted``, as every model solution says it (a sweep's column ``unreliable``)."""
        return self.doubted
