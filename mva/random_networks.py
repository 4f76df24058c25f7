"""Random networks, product form and not, for accuracy studies of approximate methods and for
property-based tests.  Every draw comes from the ``numpy.random.Generator`` passed in, so a
seed reproduces a sample."""
from __future__ import annotations

import math

import numpy as np

from .exact import MAX_LATTICE_POINTS
from .network import STATION_KINDS, Network, Station

__all__ = ["random_station", "random_closed_network", "random_study_sample", "lattice_points",
           "STUDY_KIND_WEIGHTS", "NONPRODUCT_KINDS", "SCV_VALUES", "random_nonproduct_network"]

#: Station mix of the accuracy studies: mostly queues, some of every other kind.
STUDY_KIND_WEIGHTS = {"queue": 4.0, "delay": 1.0, "multi": 1.5, "ld": 1.5}


def random_station(rng: np.random.Generator, name: str, n_classes: int, kind: str | None = None,
                   demand_range=(0.05, 1.0), skip_probability=0.15, max_servers=3,
                   monotone_capacity=False) -> Station:
    """One station of ``kind`` (drawn uniformly from the four kinds if None).

    Demands are uniform on ``demand_range`` (time units), and each class skips the
    station with ``skip_probability``.  ``multi``: 1..``max_servers`` servers.  ``ld``: 1-4
    capacity values, uniform on [0.3, 3] or, with ``monotone_capacity``, increasing and
    concave from alpha(1) = 1 like a flow-equivalent server of several processors.
    """
    kind = kind or STATION_KINDS[rng.integers(len(STATION_KINDS))]
    demand = rng.uniform(*demand_range, n_classes)
    demand[rng.random(n_classes) < skip_probability] = 0.0
    if kind == "multi":
        return Station(name, "multi", demand, servers=int(rng.integers(1, max_servers + 1)))
    if kind == "ld":
        length = int(rng.integers(1, 5))
        if monotone_capacity:
            steps = np.sort(rng.uniform(0.2, 1.0, length - 1))[::-1]
            cap = np.round(np.concatenate(([1.0], 1.0 + np.cumsum(steps))), 3)
        else:
            cap = np.round(rng.uniform(0.3, 3.0, length), 3)
        return Station(name, "ld", demand, capacity=cap)
    return Station(name, kind, demand)


def lattice_points(population) -> int:
    """Population vectors an exact MVA visits: prod_c (N_c + 1)."""
    return math.prod(int(n) + 1 for n in population)


def random_closed_network(rng: np.random.Generator, n_classes: int, n_stations: int,
                          kind_weights=None, max_population=50, max_lattice=20_000,
                          max_marginal_stations=3, think_probability=0.5, **station_options) -> Network:
    """A random closed network that the exact solver handles quickly.

    Parameters
    ----------
    n_classes, n_stations : int
    kind_weights : dict, optional
        Relative frequency of each station kind (default: uniform).
    max_population : int
        Largest population of one class; populations are drawn uniformly in
        1..max_population and then reduced until prod(N_c + 1) <= ``max_lattice``.
    max_marginal_stations : int
        At most this many ``multi``/``ld`` stations with more than one capacity value
        (the exact solver's cost doubles with each).
    think_probability : float
        Share of classes with a think time (uniform between 0 and twice the class's
        total demand); the others have none.
    **station_options
        Passed to :func:`random_station`.
    """
    kinds = list(kind_weights) if kind_weights else list(STATION_KINDS)
    weights = np.array([kind_weights[k] for k in kinds], float) if kind_weights else np.ones(len(kinds))
    weights /= weights.sum()
    max_lattice = min(max_lattice, MAX_LATTICE_POINTS)
    while True:
        stations, marginal_stations = [], 0
        for k in range(n_stations):
            kind = kinds[rng.choice(len(kinds), p=weights)]
            station = random_station(rng, f"s{k + 1}", n_classes, kind, **station_options)
            cap = station.capacity_function()
            if cap is not None and len(cap) > 1:
                if marginal_stations == max_marginal_stations:
                    station = Station(station.name, "queue", station.demand)
                else:
                    marginal_stations += 1
            stations.append(station)
        demands = np.array([s.demand for s in stations])
        totals = demands.sum(axis=0)
        think = np.where(rng.random(n_classes) < think_probability,
                         rng.uniform(0.0, 2.0, n_classes) * totals, 0.0)
        if np.any((totals == 0) & (think == 0)):
            continue
        population = rng.integers(1, max_population + 1, n_classes)
        while lattice_points(population) > max_lattice:
            c = int(np.argmax(population))
            population[c] = max(1, population[c] * 3 // 4)
        return Network(stations, population=population.tolist(), think_time=think.tolist())


def random_study_sample(seed: int, count: int, max_classes: int, max_stations: int, monotone_share: float = 1.0,
                        **options):
    """``count`` networks for an accuracy study, reproducible from ``seed``.

    Each has 1..``max_classes`` classes and 2..``max_stations`` stations drawn in the
    :data:`STUDY_KIND_WEIGHTS` mix.  A share ``monotone_share`` of the networks has
    increasing concave ``ld`` capacity functions (the kind of server the approximations
    target); the others draw capacities uniformly on [0.3, 3], most of them not monotone
    (a thrashing or lock-bound subsystem).  ``options`` go to
    :func:`random_closed_network` (e.g. ``max_population``, ``max_lattice``).
    """
    rng = np.random.default_rng(seed)
    options = {"kind_weights": STUDY_KIND_WEIGHTS, **options}
    for _ in range(count):
        # (no draw when every network is monotone: earlier samples stay as they were)
        monotone = monotone_share >= 1.0 or bool(rng.random() < monotone_share)
        yield random_closed_network(rng, int(rng.integers(1, max_classes + 1)),
                                    int(rng.integers(2, max_stations + 1)), monotone_capacity=monotone, **options)


#: The kinds of non-product-form network :func:`random_nonproduct_network` draws.
NONPRODUCT_KINDS = ("priority", "fcfs", "scv")
#: Squared coefficients of variation of the ``scv`` kind (deterministic to hyperexponential).
SCV_VALUES = (0.0, 0.25, 4.0, 9.0)


def random_nonproduct_network(rng: np.random.Generator, kind: str, max_population: int = 6) -> Network:
    """A random closed network with stations that are not product form.

    ``kind``:
    ``"priority"``: 2-4 classes, 1-2 single-server preemptive-resume priority stations
    (each class's level drawn from 0..C-1, at least two levels), demands uniform on
    [0.05, 1];
    ``"fcfs"``: 2-4 classes, 1-3 single-server FCFS stations whose demands differ by
    class by up to 20x (log-uniform on [0.05, 1]);
    ``"scv"``: 1-3 classes, 1-2 FCFS stations with service scv in :data:`SCV_VALUES`, one
    or 2-4 servers, equal or class-dependent demands.
    The other stations (1-3) are product form (PS queues, delays); populations are 1 to
    ``max_population`` per class, and most classes (70%) think for up to four times their
    total demand, so that loads from light to saturated are drawn.
    """
    if kind not in NONPRODUCT_KINDS:
        raise ValueError(f"kind must be one of {NONPRODUCT_KINDS}, got {kind!r}")
    n_classes = int(rng.integers(1 if kind == "scv" else 2, 4 if kind == "scv" else 5))
    stations = []
    for k in range(int(rng.integers(1, 3 if kind != "fcfs" else 4))):
        name = f"{kind}{k + 1}"
        if kind == "priority":
            levels = rng.integers(0, n_classes, n_classes)
            while np.unique(levels).size < 2:
                levels = rng.integers(0, n_classes, n_classes)
            stations.append(Station(name, "queue", rng.uniform(0.05, 1.0, n_classes), discipline="priority",
                                    priority=levels.tolist()))
        elif kind == "fcfs":
            stations.append(Station(name, "queue", np.exp(rng.uniform(np.log(0.05), 0.0, n_classes)),
                                    discipline="fcfs"))
        else:
            servers = 1 if rng.random() < 0.5 else int(rng.integers(2, 5))
            demand = rng.uniform(0.05, 1.0, n_classes) * servers
            if rng.random() < 0.5:
                demand[:] = demand[0]
            stations.append(Station(name, "multi", demand, servers=servers, discipline="fcfs",
                                    scv=float(SCV_VALUES[rng.integers(len(SCV_VALUES))])))
    for k in range(int(rng.integers(1, 4))):
        stations.append(Station(f"ps{k + 1}", "delay" if rng.random() < 0.25 else "queue",
                                rng.uniform(0.05, 1.0, n_classes)))
    demands = np.array([s.demand for s in stations])
    think = np.where(rng.random(n_classes) < 0.7, rng.uniform(0.0, 4.0, n_classes) * demands.sum(axis=0), 0.0)
    population = rng.integers(1, max_population + 1, n_classes)
    return Network(stations, population=population.tolist(), think_time=think.tolist())
