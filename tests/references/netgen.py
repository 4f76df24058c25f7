"""Random product-form networks for tests: every station type, 1-4 classes."""
from __future__ import annotations

import math

import numpy as np

from mva import Network
from mva.random_networks import random_station  # noqa: F401  (tests import it from here)

KINDS = ("queue", "delay", "multi", "ld")


def enumeration_size(n_stations, population):
    return math.prod(math.comb(n + n_stations, n_stations) for n in population)


def random_closed_network(rng, n_classes, max_states=3000, kinds=None):
    """A closed network small enough for brute-force enumeration."""
    while True:
        m = int(rng.integers(1, 5))
        chosen = kinds or [KINDS[rng.integers(len(KINDS))] for _ in range(m)]
        stations = [random_station(rng, f"s{k}", n_classes, kind) for k, kind in enumerate(chosen)]
        population = rng.integers(1, 5, n_classes)
        think = np.where(rng.random(n_classes) < 0.5, 0.0, rng.uniform(0.1, 3.0, n_classes))
        if enumeration_size(len(stations), population) > max_states:
            continue
        demands = np.array([s.demand for s in stations])
        if np.any((demands.sum(axis=0) == 0) & (think == 0)):
            continue
        return Network(stations, population=population.tolist(), think_time=think.tolist())


def description(network):
    """Stations as tuples for tests/references/reference.py."""
    return [(s.kind, s.servers, s.capacity, list(s.demand)) for s in network.stations]
