"""The one numba policy of every package in this project (``mva``, ``models``, ``calibration``).

:func:`jit` compiles a function once per machine (``cache=True``), without the GIL
(``nogil``, so Dask threads and the TPC-C batch run in parallel), and with numpy's error
model: a division by zero gives ``inf`` or ``nan`` instead of raising, which the
solvers use deliberately (the contention term of a saturated device is infinite) and
which lets numba leave the zero checks out of hot loops.  ``inline=True`` marks a small
helper that numba inlines into its callers (the simulator's steps, the lattice odometer),
``parallel=True`` a kernel with ``prange`` loops.
"""
from __future__ import annotations

from numba import njit, prange

__all__ = ["jit", "prange", "POLICY"]

POLICY = {"cache": True, "nogil": True, "error_model": "numpy"}


def jit(func=None, *, inline: bool = False, parallel: bool = False):
    """``@jit`` or ``@jit(inline=True)`` / ``@jit(parallel=True)``: numba under :data:`POLICY`."""
    def compile_(f):
        return njit(**POLICY, inline="always" if inline else "never", parallel=parallel)(f)
    return compile_ if func is None else compile_(func)
