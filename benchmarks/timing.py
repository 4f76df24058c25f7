"""Shared timing helper of the benchmark scripts."""
from __future__ import annotations

import statistics
import time


def median_time(func, repeats: int):
    """Median wall time (s) of ``func()`` over ``repeats`` runs after one warm-up run
    (numba compilation and cache loading are start-up, not solve time), and the last result."""
    result = func()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result
