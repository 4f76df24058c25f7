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

import math
import time

import numpy as np

from . import _kernels
from .errors import ModelError, SaturationError
from .network import Network, Station
from .open import open_load_effect
from .result import Result

__all__ = ["exact_mva", "closed_throughput_curve", "MAX_LATTICE_POINTS"]

#: Largest population lattice (prod of N_c + 1) the exact solver will attempt.
MAX_LATTICE_POINTS = 20_000_000
#: Largest working memory (bytes) the exact solver will allocate for one lattice pass.
MAX_LATTICE_BYTES = 4 * 2**30


def _lattice_size(population, n_stations, n_tracked) -> int:
    """Lattice points of the exact solve; refuses what would not fit in memory."""
    size = math.prod(int(n) + 1 for n in population)
    bytes_needed = 8.0 * size * (n_stations + n_tracked + 2 * len(population))
    if size > MAX_LATTICE_POINTS or bytes_needed > MAX_LATTICE_BYTES:
        raise ModelError("network.population",
                         f"the exact solver would visit {size:.3g} population vectors "
                         f"({bytes_needed / 2**30:.3g} GiB; limits {MAX_LATTICE_POINTS:.3g} vectors, "
                         f"{MAX_LATTICE_BYTES / 2**30:.3g} GiB); use an approximate method")
    return size


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


def _closed_lattice(plan, force_lattice=False):
    """Solve the closed part of a network (its :class:`_Plan`) on the whole lattice.

    ``force_lattice`` skips the single-class kernel (for tests).  Returns
    (throughput (L, C), residence (M, C), queue (M,), marginal (M, T)) for the full
    population; the lattice index is mixed radix with class 0 fastest.  Complement
    networks (one station removed) are solved by the same kernel and memoised.
    """
    demand, is_delay, table, cap_len, tracked = (plan.closed_demand, plan.is_delay, plan.table,
                                                 plan.cap_len, plan.tracked)
    think, population = plan.think, plan.population
    size = _lattice_size(population, len(cap_len), int(tracked.sum()))
    n_classes = len(population)
    kernel = _kernels.single_class_mva if n_classes == 1 and not force_lattice else _kernels.closed_lattice_mva
    cache = {}

    def run(keep):
        if keep in cache:
            return cache[keep]
        needs = [i for i, k in enumerate(keep) if tracked[k] > 0]
        comp_index = np.full(len(keep), -1, dtype=np.int64)
        comp = np.empty((len(needs), size, n_classes)) if needs else _NO_COMPLEMENT
        for row, i in enumerate(needs):
            comp_index[i] = row
            comp[row] = run(keep[:i] + keep[i + 1:])[0]
        if len(keep) == len(cap_len):  # the whole network: no copies
            out = kernel(demand, is_delay, table, cap_len, tracked, think, population, comp_index, comp)
        else:
            rows = np.array(keep, dtype=np.int64)
            out = kernel(demand[rows], is_delay[rows], table[rows], cap_len[rows], tracked[rows],
                         think, population, comp_index, comp)
        cache[keep] = out
        return out

    return run(tuple(range(len(cap_len))))


_NO_COMPLEMENT = np.empty((1, 1, 1))


class _Plan:
    """Everything :func:`exact_mva` derives from a network before the recursion; built
    once per (immutable) network and cached on it."""

    def __init__(self, network: Network):
        demand = network.demands
        M, _ = demand.shape
        self.capacities = [s.capacity_function() for s in network.stations]
        self.open_mask = network.is_open
        self.rate = np.asarray(network.arrival_rate, dtype=float)
        self.open_classes = np.flatnonzero(self.open_mask)
        self.open_load = demand[:, self.open_mask] @ self.rate[self.open_mask] if len(self.open_classes) \
            else np.zeros(M)
        _check_open_saturation(network, self.capacities, self.open_load)
        self.effects = [None if cap is None or self.open_load[k] == 0 else
                        open_load_effect(cap, float(self.open_load[k]))
                        for k, cap in enumerate(self.capacities)]
        closed_caps = [cap if e is None else e.capacity for cap, e in zip(self.capacities, self.effects)]
        self.closed = np.flatnonzero(~self.open_mask)
        self.population = np.asarray(network.population, dtype=np.int64)[self.closed]
        self.think = np.asarray(network.think_time, dtype=float)[self.closed]
        self.closed_demand = np.ascontiguousarray(demand[:, self.closed])
        self.is_delay, self.table, self.cap_len = _pack_capacities(closed_caps)
        # marginals p(0..J-2) are carried for every non-delay station with J > 1
        self.tracked = np.where(self.is_delay, 0, self.cap_len - 1)

    @classmethod
    def of(cls, network: Network) -> "_Plan":
        plan = network._derived.get("exact_plan")
        if plan is None:
            plan = network._derived["exact_plan"] = cls(network)
        return plan


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
    plan = _Plan.of(network)
    demand = network.demands
    M, C = demand.shape
    throughput = np.zeros(C)
    residence = np.zeros((M, C))
    queue = np.zeros((M, C))
    closed_total_queue = np.zeros(M)
    marginal = np.zeros((M, max(int(plan.tracked.max()), 1)))
    marginal[:, 0] = 1.0
    if plan.population.sum() > 0:
        x_lattice, r_closed, q_closed, marginal = _closed_lattice(plan)
        x_closed = x_lattice[-1]
        if len(plan.open_classes):
            throughput[plan.closed] = x_closed
            residence[:, plan.closed] = r_closed
            queue[:, plan.closed] = r_closed * x_closed
        else:
            throughput, residence, queue = x_closed.copy(), r_closed, r_closed * x_closed
        closed_total_queue = q_closed

    # Open classes: response from the closed customers they meet (module mva.open).
    # Open customers at a station split among open classes in proportion to lambda_c D_kc.
    rate = plan.rate
    throughput[plan.open_classes] = rate[plan.open_classes]
    for k in range(M):
        a = plan.open_load[k]
        if a == 0:
            continue
        if plan.capacities[k] is None:
            open_queue = a
        else:
            open_queue = plan.effects[k].open_queue_length(closed_total_queue[k], marginal[k])
        for c in plan.open_classes:
            queue[k, c] = open_queue * rate[c] * demand[k, c] / a
            residence[k, c] = open_queue * demand[k, c] / a

    utilization = _utilization(network, plan, throughput, marginal)
    response = residence.sum(axis=0)
    return Result(method="exact", classes=network.classes, stations=network.station_names,
                  throughput=throughput, response_time=response, residence_time=residence,
                  queue_length=queue, utilization=utilization,
                  solve_seconds=time.perf_counter() - start)


_WARM = False


def _warm_up():
    """Load the compiled kernels (numba cache) before any timing: that is start-up cost."""
    global _WARM
    if not _WARM:
        plan = _Plan(Network([Station("warm-up", "queue", [1.0])], population=[1]))
        for force in (False, True):
            _closed_lattice(plan, force_lattice=force)
        _WARM = True


def _utilization(network, plan, throughput, marginal):
    """Utilisation per station and class, as defined in :class:`~mva.result.Result`."""
    work = network.demands * throughput[None, :]
    util = work.copy()
    for k, station in enumerate(network.stations):
        cap = plan.capacities[k]
        if station.kind == "multi":
            util[k] = work[k] / station.servers
        elif station.kind == "ld":
            total = work[k].sum()
            if len(cap) == 1:
                util[k] = work[k] / cap[0]
            elif total > 0:
                no_open = 1.0 if plan.effects[k] is None else plan.effects[k].p_no_open_when_empty
                util[k] = (1.0 - marginal[k, 0] * no_open) * work[k] / total
    return util


def closed_throughput_curve(network: Network) -> np.ndarray:
    """Throughput X(n) for n = 0..N of a single-class closed network (1/time unit).

    One exact solve yields the whole curve, since MVA passes through every population.
    """
    if network.n_classes != 1 or network.is_open.any():
        raise ModelError("network.population", "the throughput curve needs one closed class")
    x_lattice, *_ = _closed_lattice(_Plan.of(network))
    return x_lattice[:, 0].copy()
