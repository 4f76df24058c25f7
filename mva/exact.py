"""Exact Mean Value Analysis: closed, open and mixed product-form networks.

Closed classes are solved by the multi-class MVA recursion over the population lattice
(Reiser & Lavenberg, "Mean-value analysis of closed multichain queuing networks",
JACM 27(2):313-322, 1980, doi:10.1145/322186.322195), with delay, multi-server and
load-dependent (FESC) stations through their marginal queue-length probabilities
(Reiser, "Mean-value analysis and convolution method for queue-dependent servers in
closed queueing networks", Performance Evaluation 1(1):7-18, 1981).

Numerical stability.  The textbook load-dependent recursion (also Du & Zhang 2001, eq. 3.4)
computes p(0|n) = 1 - sum_{j>=1} p(j|n).  Near saturation p(0|n) is tiny and the
subtraction cancels: the error is re-injected at every population step and amplified by
X(n) D / alpha(j) > 1 at low j, until probabilities go negative.  Here p(0|n) comes from
the complement network instead, p_k(0|n) = G_{-k}(n)/G(n), i.e.
p_k(0|n) = p_k(0|n - e_c) X_c(n) / X_c^{-k}(n) — every operation on positive numbers, so
the relative error grows at most linearly in the population (this is the stable
flow-equivalent MVA of G. Casale, "A note on stable flow-equivalent aggregation in
closed networks", Queueing Systems 60:193-202, 2008).  The complement networks are
obtained in one of two ways, chosen by the network's shape (:func:`exact_algorithm`):

``"mva-recursive"``
    Each complement is solved by the same MVA recursion (memoised), which needs the
    complements of the complement: 2^L lattice passes for L stations that need marginals
    (``multi``, and ``ld`` with more than one capacity value).  Cheapest for L <= 2 or 3.
``"mva-convolution"``
    The complements' normalising constants come from a log-space tree convolution
    (:mod:`mva.convolution`): O(L log L) station convolutions, polynomial in the number of
    stations, positive terms only; then one MVA pass over the lattice.

Both are exact and agree to rounding; :attr:`Result.extras` ``["algorithm"]`` says which ran.

Multi-server stations are exact as load-dependent stations with alpha(j) = min(j, m)
(Bolch et al., *Queueing Networks and Markov Chains*, 2nd ed., 2006, sec. 8.2.1).  Open
classes are summed out exactly, see :mod:`mva.open`.
"""
from __future__ import annotations


import numpy as np

from . import _exact_kernels, convolution
from .errors import ModelError
from .jit import once
from .network import Network, Station, require_network
from .plan import SolverPlan, assemble_result
from .result import Result
from .jit import clock, seconds_since

__all__ = ["exact_mva", "closed_throughput_curve", "exact_algorithm", "exact_cost", "exact_lattice_fits",
           "MAX_LATTICE_POINTS", "EXACT_ALGORITHMS"]

#: The exact algorithms (see the module notes).
EXACT_ALGORITHMS = ("mva-recursive", "mva-convolution")

#: Largest population lattice (prod of N_c + 1) the exact solver will attempt.
MAX_LATTICE_POINTS = 20_000_000
#: Largest working memory (bytes) the exact solver will allocate for one lattice pass.
MAX_LATTICE_BYTES = 4 * 2**30


def _check_lattice(plan) -> None:
    """Refuse a lattice that would not fit (points, or memory for the arrays of the pass
    and the complements' throughputs)."""
    size = plan.lattice_points
    n_complements = int(np.count_nonzero(plan.tracked))
    bytes_needed = 8.0 * size * (len(plan.cap_len) + int(plan.tracked.sum())
                                 + (2 + n_complements) * len(plan.population))
    if size > MAX_LATTICE_POINTS or bytes_needed > MAX_LATTICE_BYTES:
        raise ModelError("network.population",
                         f"the exact solver would visit {size:.3g} population vectors "
                         f"({bytes_needed / 2**30:.3g} GiB; limits {MAX_LATTICE_POINTS:.3g} vectors, "
                         f"{MAX_LATTICE_BYTES / 2**30:.3g} GiB); use an approximate method")


#: Cost of one log-sum-exp step of the convolution relative to one MVA lattice step
#: (measured on this kernel pair; only the choice of algorithm depends on it).
_CONVOLUTION_STEP_COST = 6.0


def exact_cost(plan) -> tuple[str, float]:
    """The cheaper exact algorithm for a :class:`~mva.plan.SolverPlan` and its estimated
    cost in lattice steps (one step: one station and class at one population vector of
    an MVA pass, about 1-2 ns here).

    ``"mva-recursive"`` costs about 2^L / 2 passes for L stations that carry marginals;
    ``"mva-convolution"`` one pass plus its convolutions (module notes).
    """
    if plan.exact_choice is not None:
        return plan.exact_choice
    plan.exact_choice = _exact_cost(plan)
    return plan.exact_choice


def _exact_cost(plan):
    n_tracked = int(np.count_nonzero(plan.tracked))
    C = len(plan.population)
    per_pass = float(plan.lattice_points) * C * float(len(plan.cap_len) + plan.cap_len.sum())
    recursive = per_pass * max(1.0, 2.0 ** n_tracked / 2.0)   # subsets shrink: about half the stations each
    if n_tracked <= 1 or plan.residual.any():
        # one complement at most: the two coincide; with residual-time terms the
        # complements must come from the same (non-product-form) recursion
        return "mva-recursive", recursive
    convolution_total = _CONVOLUTION_STEP_COST * convolution.convolution_cost(plan) + per_pass
    return ("mva-recursive", recursive) if recursive <= convolution_total else ("mva-convolution", convolution_total)


def exact_algorithm(plan) -> str:
    """The exact algorithm :func:`exact_mva` runs for a :class:`~mva.plan.SolverPlan`
    (see :func:`exact_cost`)."""
    return exact_cost(plan)[0]


def exact_lattice_fits(plan) -> bool:
    """True when the exact solver would accept the plan's lattice (points and memory)."""
    try:
        _check_lattice(plan)
    except ModelError:
        return False
    return True


def _closed_lattice(plan, force_lattice=False, algorithm=None):
    """Solve the closed part of a network (its :class:`~mva.plan.SolverPlan`) on the whole lattice.

    ``force_lattice`` skips the single-class kernel and ``algorithm`` overrides the choice
    of :func:`exact_algorithm` (both for tests).  Returns (throughput (L, C), residence
    (M, C), queue (M,), marginal (M, T)) for the full population, and the algorithm used;
    the lattice index is mixed radix with class 0 fastest.
    """
    if not plan.lattice_checked:   # once per plan
        _check_lattice(plan)
        plan.lattice_checked = True
    single = len(plan.population) == 1 and not force_lattice
    kernel = _exact_kernels.single_class_mva if single else _exact_kernels.closed_lattice_mva
    algorithm = algorithm or exact_algorithm(plan)
    if not plan.needs_marginals:   # no complements: the whole network in one kernel call
        comp_index, comp = np.full(len(plan.cap_len), -1, dtype=np.int64), _NO_COMPLEMENT
    elif algorithm == "mva-recursive":
        return solve_with_complements(plan, kernel, plan.closed_demand, plan.think), algorithm
    else:
        comp_index, comp = convolution.complement_throughputs(plan)
    return kernel(plan.closed_demand, plan.is_delay, plan.table, plan.cap_len, plan.tracked, plan.think,
                  plan.population, comp_index, comp, plan.residual), algorithm


def solve_with_complements(plan, kernel, demand, think, batch=False):
    """Run ``kernel`` on the whole network after the complement networks it needs.

    A station that carries marginals needs p(0) from the network without it (see
    :mod:`mva._exact_kernels`), and so on recursively; each distinct subset of stations is solved
    once.  ``demand`` is (M, C), or (B, M, C) with ``batch`` (then ``think`` is (B, C)
    and complements are stacked on axis 1, as :func:`~mva._exact_kernels.batch_single_class_mva`
    expects).  Returns the kernel's outputs for the whole network.
    """
    is_delay, table, cap_len, tracked, population, residual = (plan.is_delay, plan.table, plan.cap_len,
                                                               plan.tracked, plan.population, plan.residual)
    cache = {}

    def run(keep):
        if keep in cache:
            return cache[keep]
        needs = [i for i, k in enumerate(keep) if tracked[k] > 0]
        comp_index = np.full(len(keep), -1, dtype=np.int64)
        for row, i in enumerate(needs):
            comp_index[i] = row
        parts = [run(keep[:i] + keep[i + 1:])[0] for i in needs]
        if batch:
            comp = np.stack(parts, axis=1) if parts else np.empty((demand.shape[0], 1, 1, 1))
        else:
            comp = np.stack(parts) if parts else _NO_COMPLEMENT
        if len(keep) == len(cap_len):  # the whole network: no copies
            out = kernel(demand, is_delay, table, cap_len, tracked, think, population, comp_index, comp, residual)
        else:
            rows = np.array(keep, dtype=np.int64)
            sub = np.ascontiguousarray(demand[:, rows] if batch else demand[rows])
            out = kernel(sub, is_delay[rows], table[rows], cap_len[rows], tracked[rows],
                         think, population, comp_index, comp, residual[rows])
        cache[keep] = out
        return out

    return run(tuple(range(len(cap_len))))


_NO_COMPLEMENT = np.empty((1, 1, 1))


def exact_mva(network: Network, algorithm: str = "auto") -> Result:
    """Exact MVA of a closed, open or mixed product-form network.

    Parameters
    ----------
    network : Network
        Any mix of ``queue``, ``delay``, ``multi`` and ``ld`` stations; closed classes
        (population, think time) and open classes (arrival rate).
    algorithm : {"auto", "mva-recursive", "mva-convolution"}
        How complement networks are obtained (module notes); ``"auto"`` picks the cheaper
        by the network's shape.  All give the same answer to rounding.

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
        The population lattice is too large for the exact method, or a station with
        closed customers is not product form (priority, FCFS with class-dependent
        demands, multi-server FCFS with non-exponential service: :mod:`mva.nonproduct`).

    Notes
    -----
    Cost: O(prod_c (N_c + 1) * C * sum_k J_k) per lattice pass; for L stations with a
    capacity function of more than one value, min(2^L passes, O(L log L) convolutions of
    the same order) (see module notes; ``result.extras["algorithm"]`` says which ran).
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
    require_network(network)
    if algorithm != "auto" and algorithm not in EXACT_ALGORITHMS:
        raise ModelError("options.algorithm", f"unknown algorithm {algorithm!r}; valid: auto, "
                                              f"{', '.join(EXACT_ALGORITHMS)}")
    warm_up()
    start = clock()
    plan = SolverPlan.of(network)
    if algorithm == "mva-convolution" and plan.residual.any() and plan.needs_marginals:
        raise ModelError("options.algorithm", "mva-convolution needs product form, and station "
                                              f"{plan.non_exponential[0]} has non-exponential FCFS service: use "
                                              "mva-recursive or auto")
    closed = (None,) * 4
    chosen = "none"   # nothing closed to solve
    if plan.population.sum() > 0 and plan.beyond_lattice:
        k = plan.beyond_lattice[0]
        raise ModelError(f"station[{network.stations[k].name}].discipline",
                         f"{network.stations[k].name} is not product form, where exact MVA does not apply: use method "
                         "auto, linearizer or schweitzer (approximate, mva.nonproduct) or simulation")
    if plan.population.sum() > 0:
        (x_lattice, r_closed, q_closed, marginal), chosen = _closed_lattice(
            plan, algorithm=None if algorithm == "auto" else algorithm)
        closed = (x_lattice[-1], r_closed, q_closed, marginal)
    return assemble_result(network, plan, "exact", *closed, solve_seconds=seconds_since(start),
                           accuracy="exact", extras={"algorithm": chosen})


@once
def warm_up():
    """Load the exact solvers' compiled kernels (numba cache) before any timing."""
    plan = SolverPlan(Network([Station("warm-up", "queue", [1.0])], population=[1]))
    for force in (False, True):
        for algorithm in EXACT_ALGORITHMS:
            _closed_lattice(plan, force_lattice=force, algorithm=algorithm)


def closed_throughput_curve(network: Network) -> np.ndarray:
    """Throughput X(n) for n = 0..N of a single-class closed network (1/time unit).

    One exact solve yields the whole curve, since MVA passes through every population.
    """
    require_network(network)
    if network.n_classes != 1 or network.is_open.any():
        raise ModelError("network.population", "the throughput curve needs one closed class")
    (x_lattice, *_), _ = _closed_lattice(SolverPlan.of(network))
    return x_lattice[:, 0].copy()
