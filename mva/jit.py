"""The one numba policy of every package in this project (``mva``, ``models``, ``calibration``).

:func:`jit` compiles a function once per machine (``cache=True``), without the GIL
(``nogil``, so Dask threads and the TPC-C batch run in parallel), and with numpy's error
model: a division by zero gives ``inf`` or ``nan`` instead of raising, which the
solvers use deliberately (the contention term of a saturated device is infinite) and
which lets numba leave the zero checks out of hot loops.  ``inline=True`` marks a small
helper that numba inlines into its callers (the simulator's steps, the lattice odometer),
``parallel=True`` a kernel with ``prange`` loops.  ``refcounts=False`` compiles a kernel
that allocates nothing without numba's runtime: every array argument and tuple unpacking
otherwise costs an atomic increment and decrement, which numba's pruning pass does not
remove across calls (numba issues #2345, #2350); that was 55% of the cc-NUMA
simulator's time.  A kernel that does allocate then fails to compile, loudly.
"""
from __future__ import annotations

import time

from numba import njit, prange
from numba.core import event

__all__ = ["once", "jit", "prange", "POLICY", "compile_seconds", "startup_seconds", "clock", "seconds_since"]

# every numba compilation of this process, outermost events only (numba's own listener)
_COMPILING = event.TimingListener()
event.register("numba:compile", _COMPILING)
# everything done under numba's compiler lock: compiling, and loading kernels from the
# on-disk cache (a first call's 0.05-0.5 s per kernel, outside the compile event)
_STARTING = event.TimingListener()
event.register("numba:compiler_lock", _STARTING)


def compile_seconds() -> float:
    """Seconds this process has spent compiling numba kernels (the first run on a fresh
    install compiles them all; later runs load them from numba's cache)."""
    return _COMPILING.duration if _COMPILING.done else 0.0


def startup_seconds() -> float:
    """Seconds this process has spent compiling numba kernels or loading them from the
    cache: start-up cost, never solve time or simulation speed."""
    return max(_STARTING.duration if _STARTING.done else 0.0, compile_seconds())


def clock() -> tuple[float, float]:
    """A mark for :func:`seconds_since`: the wall clock and the start-up time so far."""
    return time.perf_counter(), startup_seconds()


def seconds_since(mark: tuple[float, float]) -> float:
    """Wall seconds since ``mark`` less the numba compiling and cache loading in between:
    every solve and simulation time the project reports, so a first run's start-up is
    neither solve time nor simulation speed (the command line reports it apart)."""
    return time.perf_counter() - mark[0] - (startup_seconds() - mark[1])

POLICY = {"cache": True, "nogil": True, "error_model": "numpy"}


def jit(func=None, *, inline: bool = False, parallel: bool = False, refcounts: bool = True):
    """``@jit`` or ``@jit(inline=True)`` / ``@jit(parallel=True)`` / ``@jit(refcounts=False)``:
    numba under :data:`POLICY`."""
    def compile_(f):
        options = {} if refcounts else {"_nrt": False}      # numba's (private) switch for its runtime
        return njit(**POLICY, inline="always" if inline else "never", parallel=parallel, **options)(f)
    return compile_ if func is None else compile_(func)


def once(function):
    """``function`` run the first time the result is called and never again: loading the
    compiled kernels (numba's on-disk cache) before any timing, which is start-up cost."""
    done = []

    def run():
        if not done:
            done.append(True)
            function()
    run.__doc__, run.__name__ = function.__doc__, function.__name__
    return run
