"""Random service times for the compiled simulators, by mean and squared coefficient of
variation (scv), and the seed of their stream.

One definition for every simulator of the project (:mod:`mva._simulation_kernel`, the
model kinds' architecture simulators), so that ``scv`` means the same distribution
everywhere.
"""
from __future__ import annotations

import numpy as np

from .jit import jit

__all__ = ["seed", "service_time", "exponential"]


@jit
def seed(value):
    """Seed numba's generator (one stream per process; the simulators are sequential)."""
    np.random.seed(value)


@jit(inline=True)
def exponential(mean):
    """An exponential time of mean ``mean`` (inverse transform; 0 for mean 0)."""
    return -np.log(1.0 - np.random.random()) * mean


@jit(inline=True)
def service_time(mean, scv):
    """A service time with mean ``mean`` and squared coefficient of variation ``scv``:
    deterministic (0), gamma with shape 1/scv (between 0 and 1), exponential (1), or
    two-phase hyperexponential with balanced means (above 1: branch probability
    p = (1 + sqrt((scv - 1)/(scv + 1)))/2, branch means mean/(2p) and mean/(2(1 - p));
    Sauer & Chandy, *Computer Systems Performance Modeling*, 1981)."""
    if scv == 0.0:
        return mean
    if scv < 1.0:
        return np.random.gamma(1.0 / scv, mean * scv)
    p = 0.5 * (1.0 + np.sqrt((scv - 1.0) / (scv + 1.0)))
    return exponential(mean / (2.0 * p) if np.random.random() < p else mean / (2.0 * (1.0 - p)))
