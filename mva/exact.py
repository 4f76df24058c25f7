"""Exact Mean Value Analysis: closed, open and mixed product-form networks.

Closed classes are solved by the multi-class MVA recursion over the population lattice
(Reiser & Lavenberg, "Mean-value analysis of closed multichain queuing networks",
JACM 27(2):313-322, 1980, doi:10.1145/322186.322195), with delay, multi-server and
load-dependent (FESC) stations through their marginal queue-length probabilities
(Reiser, "Mean-value analysis and convolution method for queue-dependent servers in
closed queueing networks", Performance Evaluation 1(1):7-18, 1981).

Numerical stability.  The textbook load-dependent recursion (also seed 002, eq. 3.4)
computes p(0|n) = 1 - sum_{j>=1} p(j|n).  Near saturation p(0|n) is tiny and the
subtraction cancels: the error is re-injected at every population step and amplified by
X(n) D / alpha(j) > 1 at low j, until probabilities go negative.  Here p(0|n) comes from
the complement network instead, p_k(0|n) = G_{-k}(n)/G(n), i.e.
p_k(0|n) = p_k(0|n - e_c) X_c(n) / X_c^{-k}(n) — every operation on positive numbers, so
the relative error grows at most linearly in the population (this is the stable
flow-equivalent MVA of G. Casale, "A note on stable flow-equivalent aggregation in
closed networks", Queueing Systems 60:193-202, 2008).  The complement networks are
solved by the same recursion (memoised), so a network with L stations that need
marginals (``multi``, and ``ld`` with more than one capacity value) costs up to 2^L
lattice passes.

Multi-server stations are exact as load-dependent stations with alpha(j) = min(j, m)
(Bolch et al., *Queueing Networks and Markov Chains*, 2nd ed., 2006, sec. 8.2.1).  Open
classes are summed out exactly, see :mod:`mva.open`.
"""
from __future__ import annotations

import time

import numpy as np

from . import _kernels
from .errors import ModelError, SaturationError
from .network import Network
from .open import open_load_effect
from .result import Result

__all__ = ["exact_mva", "closed_throughput_curve", "MAX_LATTICE_POINTS"]

#: Largest population lattice (prod of N_c + 1) the exact solver will attempt.
MAX_LATTICE_POINTS = 20_000_000


class _Lattice:
    """Population vectors 0 <= n <= N in mixed radix, grouped by total population."""

    def __init__(self, population: np.ndarray):
        radix = population + 1
        size = int(np.prod(radix.astype(float)))
        if size > MAX_LATTICE_POINTS:
            raise ModelError("network.population",
                             f"the exact solver would visit {size:.3g} population vectors (limit "
                             f"{MAX_LATTICE_POINTS:.3g}); use an approximate method")
        self.strides = np.ones(len(population), dtype=np.int64)
        for c in range(1, len(population)):
            self.strides[c] = self.strides[c - 1] * radix[c - 1]
        if len(population) == 1:
            levels = np.arange(size, dtype=np.int64)
            self.order = levels.copy()
            self.slot = np.zeros(size, dtype=np.int64)
        else:
            grid = np.indices(radix).reshape(len(population), -1)  # C-order: last axis fastest
            index = (grid * self.strides[:, None]).sum(axis=0)
            levels_by_row = grid.sum(axis=0)
            levels = np.empty(size, dtype=np.int64)
            levels[index] = levels_by_row
            self.order = np.argsort(levels, kind="stable").astype(np.int64)
            counts = np.bincount(levels, minlength=int(population.sum()) + 1)
            starts = np.concatenate(([0], np.cumsum(counts)))
            self.slot = np.empty(size, dtype=np.int64)
            self.slot[self.order] = np.arange(size) - starts[levels[self.order]]
        total = int(population.sum())
        counts = np.bincount(levels, minlength=total + 1)
        self.level_start = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.size = size


def _pack_capacities(capacities):
    """(M, Jmax) padded capacity table, J per station, delay mask."""
    M = len(capacities)
    is_delay = np.array([c is None for c in capacities], dtype=np.bool_)
    cap_len = np.array([1 if c is None else len(c) for c in capacities], dtype=np.int64)
    jmax = int(cap_len.max()) if M else 1
    table = np.ones((M, jmax))
    for k, c in enumerate(capacities):
        if c is not None:
            table[k, :len(c)] = c
            table[k, len(c):] = c[-1]
    return is_delay, table, cap_len


def _closed_lattice(demand, capacities, tracked, think, population):
    """Solve a closed network on its whole population lattice.

    ``capacities[k]`` is None (delay) or alpha_k(1..J); ``tracked[k]`` the number of
    marginals to carry.  Returns (lattice, throughput (L, C), residence (M, C),
    queue (M,), marginal (M, T)) for the full population.
    """
    population = np.asarray(population, dtype=np.int64)
    lattice = _Lattice(population)
    think = np.asarray(think, dtype=float)
    cache = {}

    def run(keep):
        if keep in cache:
            return cache[keep]
        keep_list = list(keep)
        sub_caps = [capacities[k] for k in keep_list]
        is_delay, table, cap_len = _pack_capacities(sub_caps)
        sub_tracked = np.array([tracked[k] for k in keep_list], dtype=np.int64)
        needs = [i for i, k in enumerate(keep_list) if tracked[k] > 0]
        comp_index = -np.ones(len(keep_list), dtype=np.int64)
        comp = np.empty((max(len(needs), 1), lattice.size if needs else 1, len(population)))
        for row, i in enumerate(needs):
            comp_index[i] = row
            comp[row] = run(tuple(k for k in keep_list if k != keep_list[i]))[0]
        out = _kernels.closed_lattice_mva(
            np.ascontiguousarray(demand[keep_list]).reshape(len(keep_list), len(population)),
            is_delay, table, cap_len, sub_tracked, think, population,
            lattice.strides, lattice.order, lattice.level_start, lattice.slot,
            comp_index, comp)
        cache[keep] = out
        return out

    throughput, residence, queue, marginal = run(tuple(range(len(capacities))))
    return lattice, throughput, residence, queue, marginal


def _check_open_saturation(network: Network, capacities, open_load):
    for k, (station, cap) in enumerate(zip(network.stations, capacities)):
        if cap is None or open_load[k] == 0:
            continue
        limit = cap[-1]
        if open_load[k] >= limit:
            what = {"multi": f" on {station.servers} servers", "ld": f" at full capacity {limit:g}"}
            raise SaturationError(
                f"station[{station.name}]",
                f"open traffic saturates the station: utilisation {open_load[k] / limit:.4g} >= 1 "
                f"(open load {open_load[k]:.4g}{what.get(station.kind, '')}); no steady state exists")


def exact_mva(network: Network) -> Result:
    """Exact MVA of a closed, open or mixed product-form network.

    Parameters
    ----------
    network : Network
        Any mix of ``queue``, ``delay``, ``multi`` and ``ld`` stations; closed classes
        (population, think time) and open classes (arrival rate).

    Returns
    -------
    Result
        Per-class throughput (1/time unit), response time (time unit), and per station
        residence time, queue length and utilisation.

    Raises
    ------
    SaturationError
        Open traffic alone loads a station to 1 or more.
    ModelError
        The population lattice is too large for the exact method.

    Notes
    -----
    Cost: O(prod_c (N_c + 1) * C * sum_k J_k) per lattice pass, times up to 2^L passes
    for L stations with a capacity function of more than one value (see module notes).
    Load-dependent stations with class-dependent demands are treated as processor-sharing
    (the BCMP product-form case).

    References
    ----------
    Reiser & Lavenberg (1980); Reiser (1981); Casale (2008); see the module docstring.

    Examples
    --------
    >>> from mva import Network, Station, exact_mva
    >>> net = Network([Station("cpu", "queue", [0.1]), Station("disk", "queue", [0.2])],
    ...               population=[3])
    >>> round(float(exact_mva(net).throughput[0]), 6)
    4.666667
    """
    _warm_up()
    start = time.perf_counter()
    demand = network.demands
    M, C = demand.shape
    capacities = [s.capacity_function() for s in network.stations]
    open_mask = network.is_open
    rate = np.asarray(network.arrival_rate)
    open_load = demand[:, open_mask] @ rate[open_mask] if open_mask.any() else np.zeros(M)
    _check_open_saturation(network, capacities, open_load)

    effects = [None if cap is None else open_load_effect(cap, float(open_load[k]))
               for k, cap in enumerate(capacities)]
    closed_caps = [None if e is None else e.capacity for e in effects]

    closed = np.flatnonzero(~open_mask)
    population = np.asarray(network.population, dtype=np.int64)[closed]
    throughput = np.zeros(C)
    residence = np.zeros((M, C))
    queue = np.zeros((M, C))
    tracked = [0 if cap is None else len(cap) - 1 for cap in capacities]
    closed_total_queue = np.zeros(M)
    marginal = np.zeros((M, max(max(tracked), 1)))
    marginal[:, 0] = 1.0
    if len(closed) and population.sum() > 0:
        lattice, x_lattice, r_closed, q_closed, marginal = _closed_lattice(
            demand[:, closed], closed_caps, tracked,
            np.asarray(network.think_time)[closed], population)
        x_closed = x_lattice[-1]
        throughput[closed] = x_closed
        residence[:, closed] = r_closed
        queue[:, closed] = r_closed * x_closed
        closed_total_queue = q_closed

    # Open classes: response from the closed customers they meet (module mva.open).
    for c in np.flatnonzero(open_mask):
        throughput[c] = rate[c]
    if open_mask.any():
        for k, station in enumerate(network.stations):
            a = open_load[k]
            if a == 0:
                continue
            if capacities[k] is None:
                open_queue = a
            else:
                open_queue = effects[k].open_queue_length(closed_total_queue[k], marginal[k])
            for c in np.flatnonzero(open_mask):
                share = rate[c] * demand[k, c] / a
                queue[k, c] = open_queue * share
                residence[k, c] = queue[k, c] / rate[c]

    utilization = _utilization(network, capacities, effects, throughput, marginal)
    response = residence.sum(axis=0)
    return Result(method="exact", classes=network.classes, stations=network.station_names,
                  throughput=throughput, response_time=response, residence_time=residence,
                  queue_length=queue, utilization=utilization,
                  solve_seconds=time.perf_counter() - start)


def _warm_up():
    """Load the compiled kernel (numba cache) before any timing: that is start-up cost."""
    if not _kernels.closed_lattice_mva.signatures:
        _closed_lattice(np.ones((1, 1)), [np.ones(1)], [0], np.zeros(1), np.ones(1, dtype=np.int64))


def _utilization(network, capacities, effects, throughput, marginal):
    """Utilisation per station and class, as defined in :class:`~mva.result.Result`."""
    work = network.demands * throughput[None, :]
    util = work.copy()
    for k, station in enumerate(network.stations):
        cap = capacities[k]
        if station.kind == "multi":
            util[k] = work[k] / station.servers
        elif station.kind == "ld":
            total = work[k].sum()
            if len(cap) == 1:
                util[k] = work[k] / cap[0]
            elif total > 0:
                busy = 1.0 - marginal[k, 0] * effects[k].p_no_open_when_empty
                util[k] = busy * work[k] / total
    return util


def closed_throughput_curve(network: Network) -> np.ndarray:
    """Throughput X(n) for n = 0..N of a single-class closed network (1/time unit).

    One exact solve yields the whole curve, since MVA passes through every population.
    """
    if network.n_classes != 1 or network.is_open.any():
        raise ModelError("network.population", "the throughput curve needs one closed class")
    demand = network.demands
    capacities = [s.capacity_function() for s in network.stations]
    tracked = [0 if cap is None else len(cap) - 1 for cap in capacities]
    _, x_lattice, *_ = _closed_lattice(demand, capacities, tracked, network.think_time,
                                       network.population)
    return x_lattice[:, 0].copy()
