"""What-if sweeps: solve a grid of cases of any model file (a network file is the kind
``network``, see :mod:`mva.modelkind`).

A :class:`~mva.targets.ModelTarget` is a parsed file with named parameters: the kind's
parameters over the file's values (and ``--set`` overrides).  It solves cases one by
one, or through the kind's vectorised ``solve_batch(base_values, cases)`` when it has one
(the network kind batches closed single-class networks, the TPC-C kind its fixed point).

:func:`sweep_chunks` solves a grid chunk by chunk, in grid order, in this process or on
a Dask cluster (``scheduler`` address or ``workers`` local processes), so memory is
bounded by the chunk size whatever the grid; :mod:`mva.sweep_output` writes the chunks
as they come.  Chunks are independent and pure, so the result is identical whichever
runs them; Dask retries a failed chunk.  :func:`run_sweep` collects every chunk in one
DataFrame (for notebooks and small grids).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .cluster import dask_client, worker_count
from .grid import Grid
from .targets import ModelTarget, target_from_document

__all__ = ["run_sweep", "sweep_chunks", "bottleneck", "CaseList", "DEFAULT_CHUNK"]

DEFAULT_CHUNK = 25_000     # larger chunks are no faster and grow the heap (glibc keeps freed 10 MB temporaries)


def bottleneck(frame: pd.DataFrame, exclude=()) -> pd.Series:
    """The most utilised device of each row (from its ``utilization.*`` columns), leaving
    out the devices named in ``exclude`` (delay stations: their "utilisation" is a mean
    number of busy servers, not a fraction of a capacity)."""
    columns = [c for c in frame.columns if c.startswith("utilization.") and c[len("utilization."):] not in exclude]
    if not columns:
        return pd.Series([""] * len(frame), index=frame.index, dtype=object)
    util = np.nan_to_num(frame[columns].to_numpy(dtype=float), nan=-np.inf)
    names = np.array([c[len("utilization."):] for c in columns], dtype=object)
    return pd.Series(names[np.argmax(util, axis=1)], index=frame.index)


class CaseList:
    """A list of case dicts with the interface of :class:`~mva.grid.Grid`."""

    def __init__(self, cases: list[dict]):
        self._cases = list(cases)
        self.names = list(dict.fromkeys(n for c in self._cases for n in c))

    def __len__(self) -> int:
        return len(self._cases)

    def cases(self, start: int = 0, stop: int | None = None) -> list[dict]:
        return self._cases[start:stop]


# --- running -------------------------------------------------------------------------------

def solve_chunk(target: ModelTarget, source, start: int, stop: int) -> pd.DataFrame:
    """Cases ``start .. stop - 1`` of ``source`` (a Grid or CaseList): the swept values,
    the outputs and the bottleneck, one row each."""
    if isinstance(source, Grid):
        columns = source.columns(start, stop)
        outputs = target.solve_columns(columns, stop - start)
        inputs = pd.DataFrame(columns)
    else:
        cases = source.cases(start, stop)
        outputs = target.solve_cases(cases)
        inputs = pd.DataFrame(cases)
    frame = pd.concat([inputs.reset_index(drop=True), outputs.reset_index(drop=True)], axis=1)
    frame["bottleneck"] = bottleneck(outputs, target.cls.not_bottlenecks)
    return frame


def _solve_remote(doc, overrides, solver, source, start, stop):
    """One chunk on a Dask worker: top-level and pure, so Dask can ship and retry it."""
    return solve_chunk(ModelTarget(doc, overrides, solver), source, start, stop)


def chunk_bounds(size: int, chunk_size: int, first: int = 0):
    """``(index, start, stop)`` of every chunk from chunk ``first`` on."""
    for k in range(first, math.ceil(size / chunk_size)):
        yield k, k * chunk_size, min(size, (k + 1) * chunk_size)


def default_chunk_size(size: int, workers: int | None) -> int:
    """About 4 chunks per worker (so a slow chunk does not hold the rest), at most
    :data:`DEFAULT_CHUNK` cases each."""
    if workers:
        return max(1, min(DEFAULT_CHUNK, math.ceil(size / (4 * workers))))
    return DEFAULT_CHUNK


def sweep_chunks(target: ModelTarget, source, *, chunk_size: int, first_chunk: int = 0,
                 scheduler: str | None = None, workers: int | None = None):
    """Yield ``(chunk index, frame)`` in grid order, from chunk ``first_chunk`` on."""
    target.check_names(source.names)
    bounds = chunk_bounds(len(source), max(1, chunk_size), first_chunk)
    if not (scheduler or workers):
        for k, start, stop in bounds:
            yield k, solve_chunk(target, source, start, stop)
        return
    yield from _dask_chunks(target, source, bounds, scheduler, workers)


def _dask_chunks(target, source, bounds, scheduler, workers):
    with dask_client(scheduler, workers) as client:
        from dask.distributed import wait

        window = 2 * worker_count(client, workers)
        source_future = client.scatter(source, broadcast=True)
        pending = []         # (index, future) in grid order; at most `window` in flight
        bounds = iter(bounds)
        exhausted = False
        while True:
            while not exhausted and len(pending) < window:
                nxt = next(bounds, None)
                if nxt is None:
                    exhausted = True
                    break
                k, start, stop = nxt
                pending.append((k, client.submit(_solve_remote, target.doc, target.overrides, target.solver,
                                                 source_future, start, stop, retries=2, pure=False)))
            if not pending:
                return
            k, future = pending.pop(0)
            wait(future)
            yield k, future.result()


def run_sweep(doc: dict, cases, *, method=None, options=None, overrides=None,
              scheduler: str | None = None, workers: int | None = None, chunk_size: int | None = None,
              progress: bool = True) -> pd.DataFrame:
    """Solve every case; one row per case: the swept values, the outputs, the bottleneck.

    Parameters
    ----------
    doc : dict
        A parsed network or model file.
    cases : list of dict, or Grid
        Parameter values by dotted name (see :mod:`mva.grid`).
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:port``).
    workers : int, optional
        Start a local Dask cluster of this many worker processes (ignored with
        ``scheduler``).  Neither: solve in this process.
    chunk_size : int, optional
        Cases per task (default: about 4 chunks per worker, at most 25,000 cases each).
    progress : bool
        A tqdm bar on stderr, shown after a second and only on a terminal.
    """
    from tqdm.auto import tqdm

    target = target_from_document(doc, method, options, overrides)     # errors before any work
    source = cases if isinstance(cases, Grid) else CaseList(cases)
    size = chunk_size or default_chunk_size(len(source), workers if (scheduler or workers) else None)
    frames = []
    with tqdm(total=len(source), disable=None if progress else True, delay=1.0, unit="case", leave=False) as bar:
        for _, frame in sweep_chunks(target, source, chunk_size=size, scheduler=scheduler, workers=workers):
            frames.append(frame)
            bar.update(len(frame))
    if not frames:
        return pd.DataFrame({"bottleneck": []})
    return pd.concat(frames, ignore_index=True)
