"""What-if sweeps: solve a grid of cases of a network file or a model file.

A *target* is what a file describes, with named parameters:

- a network file: ``network.population``, ``network.think_time``, ``network.arrival_rate``,
  ``station.<name>.demand`` and, by station type, ``station.<name>.servers`` /
  ``station.<name>.capacity``.  Cases that differ only in demands and think times of a
  closed single-class network go through the batch solver (:mod:`mva.batch`), one
  compiled pass per shape; anything else is solved case by case.
- a model file (``kind = ...``): the model kind's parameters; a kind may offer a
  vectorised ``solve_batch(base_values, cases)``, otherwise cases are solved one by one.

:func:`run_sweep` returns one row per case (swept parameters, then flattened outputs and
the ``bottleneck``), computed in-process or, chunk by chunk, on a Dask cluster
(``scheduler`` address or ``workers`` local processes).  Chunks are independent and pure,
so the result is identical whichever runs them; Dask retries a failed chunk.
"""
from __future__ import annotations

import copy
import math
from dataclasses import replace as dc_replace

import numpy as np
import pandas as pd

from .errors import ModelError
from .modelkind import Parameter, check_names, flatten, hashable, is_model_document, resolve_document, resolve_values

__all__ = ["target_from_document", "run_sweep", "bottleneck", "NetworkTarget", "ModelTarget"]


def bottleneck(frame: pd.DataFrame) -> pd.Series:
    """The most utilised device of each row (from its ``utilization.*`` columns)."""
    util = frame[[c for c in frame.columns if c.startswith("utilization.")]]
    if util.shape[1] == 0:
        return pd.Series([""] * len(frame), index=frame.index)
    return util.fillna(-np.inf).idxmax(axis=1).str.slice(len("utilization."))


def _names(cases) -> list[str]:
    """Every parameter name any case sets, in first-seen order."""
    return list(dict.fromkeys(name for case in cases for name in case))


# --- network files -------------------------------------------------------------------------

NUMERIC = ("demand", "think_time")


class NetworkTarget:
    """A network file with named parameters (see the module docstring)."""

    main_output = "throughput"

    def __init__(self, doc: dict, method: str | None = None, options: dict | None = None,
                 overrides: dict | None = None):
        from .files import network_from_dict
        self.doc = doc
        self.method = method or "exact"
        self.options = dict(options or {})
        self._params = self._parameters()
        self.base = resolve_values(self._params, overrides or {})
        self.network = network_from_dict(self.document(self.base))   # validates file and overrides

    def _parameters(self):
        head = self.doc.get("network", {}) if isinstance(self.doc.get("network"), dict) else {}
        params = []
        for key, unit, what in (("population", "customers", "closed population per class"),
                                ("think_time", "time unit", "think time per class"),
                                ("arrival_rate", "1/time unit", "open arrival rate per class")):
            if key in head or key in ("population", "think_time"):
                params.append(Parameter(f"network.{key}", head.get(key, 0), unit, what))
        for st in self.doc.get("station", []) if isinstance(self.doc.get("station"), list) else []:
            if not isinstance(st, dict) or "name" not in st:
                continue
            name = st["name"]
            params.append(Parameter(f"station.{name}.demand", st.get("demand"), "time unit",
                                    f"service demand per class at {name}"))
            if st.get("type") == "multi":
                params.append(Parameter(f"station.{name}.servers", st.get("servers", 1), "servers",
                                        f"servers at {name}"))
            if st.get("type") == "ld":
                params.append(Parameter(f"station.{name}.capacity", st.get("capacity"), "",
                                        f"relative capacity alpha(1..J) of {name}"))
        return tuple(params)

    def parameters(self) -> tuple[Parameter, ...]:
        """The file's parameters, with the file's (and overrides') values as defaults."""
        return tuple(dc_replace(p, default=self.base[p.name]) for p in self._params)

    def defaults(self) -> dict:
        """A network file has no defaults of its own: its values are the file's."""
        return {p.name: p.default for p in self._params}

    def document(self, values: dict) -> dict:
        """The network document with ``values`` (dotted names) written in."""
        doc = copy.deepcopy(self.doc)
        head = doc.setdefault("network", {})
        stations = {st["name"]: st for st in doc.get("station", [])}
        for name, value in values.items():
            part = name.split(".")
            if part[0] == "network":
                head[part[1]] = value
            else:
                stations[".".join(part[1:-1])][part[-1]] = value
        return doc

    def check_names(self, names):
        check_names(self._params, names)

    def _outputs(self, result) -> dict:
        one = len(result.classes) == 1      # then exactly the class's numbers, as the batch path gives
        out = {"throughput": float(result.throughput[0]) if one else result.system_throughput,
               "response_time": float(result.response_time[0]) if one else result.system_response_time}
        if len(result.classes) > 1:
            out.update({f"throughput.{c}": float(x) for c, x in zip(result.classes, result.throughput)})
            out.update({f"response_time.{c}": float(r) for c, r in zip(result.classes, result.response_time)})
        out.update({f"utilization.{s}": float(u) for s, u in zip(result.stations, result.station_utilization())})
        out["converged"] = bool(result.converged)
        return out

    def _network(self, case: dict):
        from .files import network_from_dict
        return network_from_dict(self.document({**self.base, **case}))

    def validate(self, case: dict) -> None:
        """ModelError if ``case`` makes an invalid network."""
        check_names(self._params, case)
        self._network(case)

    def solve_one(self, case: dict) -> dict:
        from . import solve
        return self._outputs(solve(self._network(case), method=self.method, **self.options))

    def solve_cases(self, cases: list[dict]) -> pd.DataFrame:
        """Flat outputs of every case (one row each), batched where the cases share a shape."""
        if not cases:
            return pd.DataFrame()
        names = _names(cases)
        self.check_names(names)
        if self.method != "exact" or self.options:
            return pd.DataFrame([self.solve_one(c) for c in cases])
        # group the cases by shape (everything but demands and think times); each group of a
        # closed single-class network is one batch, anything else is solved case by case
        numeric = [n for n in names if n.endswith(NUMERIC)]
        groups = {}
        for i, case in enumerate(cases):
            shape = tuple((n, hashable(v)) for n, v in case.items() if n not in numeric)
            groups.setdefault(shape, []).append(i)
        from .batch import can_batch
        parts = []
        for shape, rows in groups.items():
            group = [cases[i] for i in rows]
            network = self.network if not shape else NetworkTarget(self.doc, overrides={**self.base,
                                                                                         **dict(shape)}).network
            if can_batch(network):
                part = self._solve_batch(network, group, [n for n in numeric if any(n in c for c in group)])
            else:
                part = pd.DataFrame([self.solve_one(c) for c in group])
            parts.append(part.set_axis(rows))
        return pd.concat(parts).sort_index().reset_index(drop=True) if len(parts) > 1 else parts[0]

    def _solve_batch(self, net, cases, names):
        from .batch import batch_exact_single_class
        stations = list(net.station_names)
        demand = np.tile(net.demands[:, 0], (len(cases), 1))
        think = np.full(len(cases), float(net.think_time[0]))
        for name in names:
            values = [c.get(name, self.base[name]) for c in cases]
            flat = np.array([v[0] if isinstance(v, (list, tuple)) and len(v) == 1 else v for v in values],
                            dtype=object)
            try:
                column = flat.astype(float)
            except (TypeError, ValueError):
                raise ModelError(name, "must be a number (one class)") from None
            if not np.all(np.isfinite(column)) or np.any(column < 0):
                bad = column[~(np.isfinite(column) & (column >= 0))][0]
                raise ModelError(name, f"must be finite and >= 0, got {bad:g}")
            if name == "network.think_time":
                think = column
            else:
                demand[:, stations.index(name[len("station."):-len(".demand")])] = column
        out = batch_exact_single_class(net, demand, think)
        columns = {"throughput": out["throughput"], "response_time": out["response_time"]}
        columns.update({f"utilization.{s}": out["utilization"][:, k] for k, s in enumerate(stations)})
        columns["converged"] = np.ones(len(cases), dtype=bool)
        return pd.DataFrame(columns)


# --- model files ---------------------------------------------------------------------------

class ModelTarget:
    """A model file: the model kind's parameters over the file's values."""

    def __init__(self, doc: dict, overrides: dict | None = None):
        self.doc = doc
        self.cls, self.name, self.base = resolve_document(doc, overrides)
        self.main_output = getattr(self.cls, "main_output", "throughput")
        self._model({})      # cross-field checks, early

    def parameters(self) -> tuple[Parameter, ...]:
        """The kind's parameters, with the file's (and overrides') values as defaults."""
        return tuple(dc_replace(p, default=self.base[p.name]) for p in self.cls.parameters())

    def defaults(self) -> dict:
        """The model kind's own defaults."""
        return {p.name: p.default for p in self.cls.parameters()}

    def check_names(self, names):
        check_names(self.cls.parameters(), names)

    def _model(self, case: dict):
        return self.cls.from_values({**self.base, **case}, name=self.name)

    def validate(self, case: dict) -> None:
        """ModelError if ``case`` is not a valid model (names, values, cross-field checks)."""
        self._model(case)

    def solve_one(self, case: dict) -> dict:
        solution = self._model(case).solve()
        return {**flatten(solution.outputs), "converged": bool(solution.converged)}

    def solve_cases(self, cases: list[dict]) -> pd.DataFrame:
        """Flat outputs of every case (one row each); the kind's ``solve_batch`` if it has one."""
        if not cases:
            return pd.DataFrame()
        self.check_names(_names(cases))
        batch = getattr(self.cls, "solve_batch", None)
        if batch is not None:
            return batch(self.base, cases)
        return pd.DataFrame([self.solve_one(c) for c in cases])


def target_from_document(doc: dict, method=None, options=None, overrides=None):
    """The sweep target a parsed file describes (:class:`ModelTarget` or :class:`NetworkTarget`)."""
    if is_model_document(doc):
        return ModelTarget(doc, overrides)
    return NetworkTarget(doc, method, options, overrides)


# --- running -------------------------------------------------------------------------------

def _solve_chunk(doc, method, options, overrides, cases):
    """One chunk of a sweep: top-level and pure, so Dask can ship and retry it."""
    return target_from_document(doc, method, options, overrides).solve_cases(cases)


def _chunks(cases, size):
    return [cases[i:i + size] for i in range(0, len(cases), size)]


def run_sweep(doc: dict, cases: list[dict], *, method=None, options=None, overrides=None,
              scheduler: str | None = None, workers: int | None = None, chunk_size: int | None = None,
              progress: bool = True) -> pd.DataFrame:
    """Solve every case; one row per case: the swept values, the outputs, the bottleneck.

    Parameters
    ----------
    doc : dict
        A parsed network or model file.
    cases : list of dict
        Parameter values by dotted name (see :mod:`mva.grid`).
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:port``).
    workers : int, optional
        Start a local Dask cluster of this many worker processes (ignored with
        ``scheduler``).  Neither: solve in this process.
    chunk_size : int, optional
        Cases per task (default: about 4 chunks per worker, at most 100,000 cases each).
    progress : bool
        A tqdm bar on stderr, shown after a second and only on a terminal.
    """
    from tqdm.auto import tqdm

    target = target_from_document(doc, method, options, overrides)     # errors before any work
    target.check_names(_names(cases))
    distributed = bool(scheduler or workers)
    if chunk_size is None:      # about 4 chunks per worker, so a slow chunk does not hold the rest
        chunk_size = min(100_000, math.ceil(len(cases) / (4 * (workers or 1)))) if distributed else 100_000
    chunks = _chunks(cases, max(1, chunk_size))
    bar = tqdm(total=len(cases), disable=None if progress else True, delay=1.0, unit="case", leave=False)
    results = [None] * len(chunks)
    try:
        if distributed:
            results = _run_dask(chunks, doc, method, options, overrides, scheduler, workers, bar)
        else:
            for i, chunk in enumerate(chunks):
                results[i] = target.solve_cases(chunk)
                bar.update(len(chunk))
    finally:
        bar.close()
    outputs = pd.concat(results, ignore_index=True) if results else pd.DataFrame()
    frame = pd.concat([pd.DataFrame(cases), outputs], axis=1)
    frame["bottleneck"] = bottleneck(outputs)
    return frame


def _run_dask(chunks, doc, method, options, overrides, scheduler, workers, bar):
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:  # pragma: no cover - dask is an optional extra
        raise ModelError("--workers", "needs dask.distributed: pip install 'mva-smp[distributed]'") from None
    cluster = None
    try:
        if scheduler:
            client = Client(scheduler, timeout="10s")
        else:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster)
    except OSError as exc:
        raise ModelError("--scheduler", f"cannot reach {scheduler}: {exc}") from None
    try:
        futures = client.map(_solve_chunk, [doc] * len(chunks), [method] * len(chunks), [options] * len(chunks),
                             [overrides] * len(chunks), chunks, retries=2, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        results = [None] * len(chunks)
        for future in as_completed(futures):
            i = index[future.key]
            results[i] = future.result()
            bar.update(len(chunks[i]))
        return results
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
