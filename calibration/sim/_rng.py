"""Random numbers of the simulator's kernels (compiled; private to :mod:`calibration.sim`).

:func:`mix64` is the splitmix64 finaliser (Steele, Lea & Flood 2014), a bijection on
64-bit words used to hash keys and to scatter physical pages; :func:`next_random` is
Marsaglia's xorshift64* (Vigna 2016) on a one-element uint64 state array.
"""
from __future__ import annotations

import numpy as np

from mva.jit import jit


@jit(inline=True)
def mix64(x):
    """splitmix64 finaliser (a bijection on 64-bit words)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@jit(inline=True)
def next_random(rng):
    """xorshift64* step on ``rng[0]``; returns a uint64."""
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return x * np.uint64(2685821657736338717)
