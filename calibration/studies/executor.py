"""The one way a study runs its independent simulator runs: in this process (one worker),
in local processes (the default: one per core), or on a Dask cluster (``--workers N``
starts a local one, ``--scheduler ADDR`` uses a running one).  Every run is a pure
function of its arguments (the simulators are deterministic given their seeds), and the
results come back in the order of the tasks, so any executor gives the serial numbers.

A task is ``(function, args)`` with a module-level ``function`` and picklable ``args``
(a kernel's name and size rather than a workload, whose trace openers are closures).

>>> run_all([(pow, (2, 5)), (pow, (3, 2))], processes=1)
[32, 9]
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from collections.abc import Callable, Sequence

from mva.errors import ModelError

__all__ = ["run_all", "default_processes"]


def default_processes() -> int:
    """Local worker processes when none is asked for: the cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def run_all(tasks: Sequence[tuple[Callable, tuple]], processes: int | None = None, workers: int | None = None,
            scheduler: str | None = None, progress: Callable | None = None) -> list:
    """The results of ``tasks`` in their order.  ``processes``: local worker processes
    (None: :func:`default_processes`; 1: this process, no pickling); ``workers`` or
    ``scheduler``: a Dask cluster instead (:mod:`mva.cluster`).  ``progress(result)`` is
    called as each result arrives, in order."""
    tasks = list(tasks)
    if workers is not None and workers < 1:
        raise ModelError("--workers", f"must be >= 1, got {workers}")
    if processes is not None and processes < 1:
        raise ModelError("--processes", f"must be >= 1, got {processes}")
    if workers or scheduler:
        return _on_dask(tasks, workers, scheduler, progress)
    count = min(processes or default_processes(), max(len(tasks), 1))
    if count == 1:
        return _in_order((function(*args) for function, args in tasks), progress)
    with ProcessPoolExecutor(max_workers=count) as pool:
        return _in_order((f.result() for f in [pool.submit(function, *args) for function, args in tasks]), progress)


def _on_dask(tasks, workers, scheduler, progress) -> list:
    from mva.cluster import dask_client

    with dask_client(scheduler, workers) as client:
        return _in_order((f.result() for f in [client.submit(function, *args, pure=False) for function, args in tasks]),
                         progress)


def _in_order(results, progress) -> list:
    """``results`` (an iterator, in task order) as a list, ``progress`` told of each."""
    out = []
    for result in results:
        out.append(result)
        if progress:
            progress(result)
    return out
