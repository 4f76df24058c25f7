"""Log-space convolution: normalising constants of closed product-form networks, and the
complement networks (one station removed) that exact MVA needs for stable marginals.

Normalising constants.  G(n) of a closed multi-class network is the convolution over the
population lattice of one function per station (Buzen, "Computational algorithms for
closed queueing networks with exponential servers", CACM 16(9):527-531, 1973; Reiser &
Kobayashi, "Queuing networks with multiple closed chains: theory and computational
algorithms", IBM J. Res. Dev. 19(3):283-294, 1975).  The terminals and all delay stations
together give prod_c Z_c^{n_c}/n_c!; a station with capacity function alpha(j) gives
F(n) = |n|!/A(|n|) prod_c D_c^{n_c}/n_c!, A(j) = alpha(1)...alpha(j), whose generating
function is a function of u = sum_c D_c z_c alone, so convolving it costs
O(lattice * C * J) by a recursion over u (:func:`mva._convolution_kernels.convolve_station`).
All values are kept as logarithms (dynamic scaling in the spirit of S. S. Lam, "Dynamic
scaling and growth behavior of queuing network normalization constants", JACM
29(2):492-513, 1982) and combined by log-sum-exp of positive terms only, so neither
overflow at N = 10,000 nor cancellation can occur.

Complements.  Exact MVA with load-dependent stations takes p_k(0|n) = G_{-k}(n)/G(n) from
the network without station k (Casale 2008, see :mod:`mva.exact`).  Solving each
complement by MVA needs the complements of the complement: 2^L passes for L such
stations.  Here the L complements are built by divide and conquer, as in the tree
convolution algorithm (S. S. Lam and Y. L. Lien, "A tree convolution algorithm for the
solution of queueing networks", CACM 26(3):203-215, 1983): split the stations into two
halves, convolve each half into the other's "everything else", recurse.  Each station is
convolved O(log L) times: O(L log L) station convolutions in all, polynomial in the number
of stations.
"""
from __future__ import annotations

import numpy as np

from . import _convolution_kernels as kernels

__all__ = ["complement_log_constants", "complement_throughputs", "convolution_cost"]


def _log(values):
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(values, dtype=float))


def _base(plan, demand, think):
    """log G of the terminals, the delay stations and every station without marginals;
    the tracked stations (indices) left to convolve."""
    delay_total = think + demand[plan.is_delay].sum(axis=0)
    log_g = kernels.delay_log_constant(_log(delay_total), plan.population)
    tracked = []
    for k in range(len(plan.cap_len)):
        if plan.is_delay[k]:
            continue
        if plan.tracked[k] > 0:
            tracked.append(k)
        else:
            log_g = _add_station(log_g, plan, demand, k)
    return log_g, tracked


def _add_station(log_g, plan, demand, k):
    return kernels.convolve_station(log_g, _log(demand[k]), plan.table[k], int(plan.cap_len[k]),
                                    plan.population)


def complement_log_constants(plan, demand=None, think=None) -> dict:
    """log G_{-k}(n) on the whole lattice for every station k that carries marginals.

    Parameters
    ----------
    plan : SolverPlan
        The closed part of the network (:class:`mva.plan.SolverPlan`).
    demand : ndarray (M, C_closed), optional
        Demands to use instead of the plan's (time unit).
    think : ndarray (C_closed,), optional
        Think times to use instead of the plan's (time unit).

    Returns
    -------
    dict station index -> ndarray (L,) of log G_{-k}(n), lattice in mixed radix with class
    0 fastest (G in the time unit to the power |n|; -inf where G_{-k}(n) = 0).
    """
    demand = plan.closed_demand if demand is None else demand
    log_g, tracked = _base(plan, demand, plan.think if think is None else think)
    out = {}

    def split(outside, stations):
        if len(stations) == 1:
            out[stations[0]] = outside
            return
        half = len(stations) // 2
        first, second = stations[:half], stations[half:]
        for group, rest in ((first, second), (second, first)):
            acc = outside
            for k in rest:
                acc = _add_station(acc, plan, demand, k)
            split(acc, group)

    if tracked:
        split(log_g, tracked)
    return out


def complement_throughputs(plan, demand=None, think=None):
    """Complement throughputs in the layout :func:`mva._exact_kernels.closed_lattice_mva` takes.

    Returns ``comp_index`` (M,) (row of station k, -1 if it carries no marginals) and
    ``comp_throughput`` (K, L, C): X_c^{-k}(n) = G_{-k}(n - e_c)/G_{-k}(n) (1/time unit;
    inf where class c cannot be served without station k).
    """
    logs = complement_log_constants(plan, demand, think)
    M = len(plan.cap_len)
    comp_index = np.full(M, -1, dtype=np.int64)
    rows = []
    for row, k in enumerate(sorted(logs)):
        comp_index[k] = row
        rows.append(kernels.complement_throughputs(logs[k], plan.population))
    comp = np.stack(rows) if rows else np.empty((1, 1, 1))
    return comp_index, comp


def convolution_cost(plan) -> float:
    """Relative cost of :func:`complement_log_constants` (lattice points x classes x
    capacity values convolved), for choosing between exact algorithms."""
    C = len(plan.population)
    total = int(plan.population.sum())
    tracked = [k for k in range(len(plan.cap_len)) if plan.tracked[k] > 0]
    depth = max(1.0, np.ceil(np.log2(max(len(tracked), 1))))
    work = sum(min(int(plan.cap_len[k]), total + 1) for k in tracked) * depth
    work += sum(1 for k in range(len(plan.cap_len)) if not plan.is_delay[k] and plan.tracked[k] == 0)
    return float(plan.lattice_points) * C * (work + 1)
