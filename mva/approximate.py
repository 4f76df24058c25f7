"""Approximate Mean Value Analysis: Bard-Schweitzer and Linearizer.

Exact MVA needs the solution at every population vector below N; approximate MVA
estimates what an arriving customer sees, the network at N - e_c, from the network at N
itself, and solves the resulting fixed point.  Cost per iteration is O(M C) (times J for
load-dependent stations) whatever the populations.

Bard-Schweitzer (proportional estimation)
    Q_ki(N - e_c) ~= (N - e_c)_i Q_ki(N) / N_i: removing a class-c customer removes the
    fraction 1/N_c of class c's customers everywhere (Y. Bard, "Some extensions to
    multiclass queueing network analysis", 1979; P. Schweitzer, "Approximate analysis of
    multiclass closed networks of queues", 1979; Lazowska et al., *Quantitative System
    Performance*, 1984, sec. 6.4.2).  Exact when the total population is 1.

Linearizer
    Chandy & Neuse, "Linearizer: a heuristic algorithm for queueing network models of
    computing systems", CACM 25(2):126-134, 1982, doi:10.1145/358396.358403.  The
    fraction Q_ki(n)/n_i is assumed to change linearly with the population near N:
    Q_ki(N - e_c - e_j) ~= (N - e_c - e_j)_i [Q_ki(N - e_j)/(N - e_j)_i + F_kic] with
    F_kic = Q_ki(N - e_c)/(N - e_c)_i - Q_ki(N)/N_i measured by solving the C networks
    at N - e_c with the same equations.  Outer iterations repeat until the corrections
    settle (Chandy & Neuse stop after three; we iterate to the tolerance).  Exact when the
    total population is at most 2.

Multi-server and load-dependent stations
    The exact MVA residence time at a station with capacity function alpha(j)
    (Reiser 1981) needs the marginal probabilities p_k(j | N - e_c), j < J - 1.  Both
    methods estimate them as Akyildiz & Bolch do for multi-server stations
    (I. F. Akyildiz and G. Bolch, "Mean value analysis approximation for multiple server
    queueing networks", Performance Evaluation 8(2):77-91, 1988; Bolch et al.,
    *Queueing Networks and Markov Chains*, 2nd ed., 2006, sec. 9.1): the marginal at N
    comes from the exact recursion p(j|N) = sum_c X_c D_kc p(j-1|N - e_c)/alpha(j) for
    j = 1..J-1 and p(0|N) from the utilisation law sum_j alpha(j) p(j|N) = sum_c X_c D_kc,
    generalised here from alpha(j) = min(j, m) to any capacity function.  For the marginal
    at N - e_c we do not take p(j|N) itself but remove one class-c customer in the spirit
    of Schweitzer (our reconstruction): given j customers at station k, the removed one
    is among them with probability t(j) = min(j pi / Q_k, 1), pi = Q_kc/N_c, so

        p(j | N - e_c) ~= p(j|N) (1 - t(j)) + p(j+1|N) t(j+1),

    which keeps the distribution normalised, has exactly Schweitzer's mean
    Q_k(N) - Q_kc/N_c while no t(j) reaches 1, and is exact when the total population
    is 1.  The marginal at N is then solved from the recursion, not iterated.  Linearizer adds to
    it the correction measured at N - e_c, G_kjc = p_k(j|N - e_c) - (the estimate at N),
    as it does for queue lengths (the marginal-probability Linearizer of
    A. E. Krzesinski and J. Greyling, "Improved Linearizer methods for queueing networks
    with queue dependent centers", SIGMETRICS 1984, doi:10.1145/809311.809338).

    ``multiserver="seidmann"`` instead replaces each ``m``-server station of demand D by a
    single server of demand D/m in series with a delay of demand D (m - 1)/m
    (A. Seidmann, P. Schweitzer and S. Shalev-Oren, "Computerized closed queueing network
    models of flexible manufacturing systems", Large Scale Systems 12:91-107, 1987): cheaper
    and cruder; ``ld`` stations keep the marginal method.

Open classes are summed out exactly first (:mod:`mva.open`), as in the exact solver.

Accuracy.  ``Result.accuracy`` states the method's measured error (:data:`TYPICAL_ACCURACY`).
A station whose capacity function decreases somewhere is checked after convergence against
its exact conditional solution (:func:`unreliable_stations`, :mod:`mva.conditional`); a
result that fails the check is flagged ``"unreliable: ..."`` with the station and the
reason, and a :class:`~mva.errors.NumericalWarning` is issued.

Convergence.  The change of an iteration is the largest of: the relative change of each
class throughput, the change of each queue length relative to its class population, and
the absolute change of each marginal probability.  Successive substitution converges
linearly, so the distance to the fixed point is about change * rho / (1 - rho), rho the
ratio of successive changes; an iteration stops when that estimate (and the change itself)
is at most ``tol``.  Near saturation substitution can oscillate; on a network of queues
and delays (no station carries marginals) a fixed point that has not converged after 500
substitution steps is finished by Newton's method on the C class throughputs, each
station's queue lengths solved in closed form (:func:`mva._approximate_kernels.amva_newton`);
``extras["newton_iterations"]`` counts its steps.  Linearizer solves its inner fixed
points to ``tol / 10`` and applies the same test to its outer iteration, where a step that left the solution at N
where it was, after one that moved it by more than ``tol``, is no sign of the fixed point
(with two classes of one customer it can stand still for a step while the corrections
still move).  A result that stops at an iteration cap carries
``converged=False`` and a :class:`~mva.errors.NumericalWarning` is issued.
"""
from __future__ import annotations

import math
import warnings
from functools import partial

import numpy as np

from ._linearizer_kernels import linearizer as linearizer_kernel
from ._linearizer_kernels import cold_state, solve_population
from .errors import ModelError, NumericalWarning, check_positive_integer
from .jit import once
from .network import Network, Station, require_network
from .nonproduct import variant_spread
from .plan import SolverPlan, assemble_result
from .result import Result
from .jit import clock, seconds_since

__all__ = ["schweitzer", "linearizer", "MULTISERVER_METHODS", "TYPICAL_ACCURACY", "unreliable_stations",
           "CHECK_TOLERANCE"]

MULTISERVER_METHODS = ("marginal", "seidmann")


def check_options(tol, max_iter, multiserver, **more):
    """Validate the options of an approximate method (one-line :class:`ModelError`)."""
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not math.isfinite(tol) \
            or not 0 < tol < 1:
        raise ModelError("options.tol", f"must be a number in (0, 1), got {tol!r}")
    for name, value in dict(max_iter=max_iter, **more).items():
        check_positive_integer(f"options.{name}", value)
    if multiserver not in MULTISERVER_METHODS:
        raise ModelError("options.multiserver",
                         f"unknown method {multiserver!r}; valid: {', '.join(MULTISERVER_METHODS)}")


def _seidmann(network: Network):
    """The network with every multi-server station split into a queue and a delay
    (Seidmann et al. 1987), and for each original station the rows that replace it."""
    stations, groups = [], []
    taken = set(network.station_names)
    for s in network.stations:
        if s.kind != "multi" or s.servers == 1:
            groups.append([len(stations)])
            stations.append(s if s.kind != "multi" else Station(s.name, "queue", s.demand, discipline=s.discipline,
                                                                scv=s.scv, visits=s.visits))
            continue
        m = s.servers
        delay_name = f"{s.name}~delay"
        while delay_name in taken:
            delay_name += "~"
        taken.add(delay_name)
        groups.append([len(stations), len(stations) + 1])
        stations.append(Station(s.name, "queue", tuple(d / m for d in s.demand), discipline=s.discipline,
                                scv=s.scv, visits=s.visits))
        stations.append(Station(delay_name, "delay", tuple(d * (m - 1) / m for d in s.demand)))
    return network.replace(stations=stations), groups


def _merge_seidmann(network: Network, result: Result, groups) -> Result:
    """A result of the split network reported on the original stations."""
    first = [g[0] for g in groups]
    residence = np.array([result.residence_time[g].sum(axis=0) for g in groups])
    queue = np.array([result.queue_length[g].sum(axis=0) for g in groups])
    return Result(method=result.method, classes=result.classes, stations=network.station_names,
                  throughput=result.throughput, response_time=result.response_time,
                  residence_time=residence, queue_length=queue,
                  utilization=result.utilization[first], converged=result.converged,
                  iterations=result.iterations, solve_seconds=result.solve_seconds,
                  message=result.message, accuracy=result.accuracy, extras=result.extras)


class _State:
    """Queue lengths and marginals of the closed part at one population vector."""

    def __init__(self, plan, population, queue=None, marginal=None, throughput=None):
        """A cold start (:func:`mva._linearizer_kernels.cold_state`), or a warm one from
        ``queue``, ``marginal`` and ``throughput`` (copied: the kernels update them in place)."""
        self.population = np.asarray(population, dtype=float)
        M, C = plan.closed_demand.shape
        self.queue, self.marginal, self.throughput = np.zeros((M, C)), np.zeros(plan.table.shape), np.zeros(C)
        if queue is None:
            cold_state(plan.closed_demand, plan.think, self.population, self.queue, self.marginal, self.throughput)
        else:
            self.queue[:], self.marginal[:], self.throughput[:] = queue, marginal, throughput

    def solve(self, plan, queue_correction, marginal_correction, tol, max_iter):
        out = solve_population(plan.closed_demand, plan.is_delay, plan.table, plan.cap_len, plan.think,
                               self.population, queue_correction, marginal_correction, self.queue, self.marginal,
                               self.throughput, tol, max_iter, plan.residual, plan.backlog, plan.closed_level, plan.closed_visits,
                               plan.preemption, plan.blocking)
        self.residence, self.removal, self.iterations, self.newton_iterations, self.error = out
        return self


def _zero_corrections(plan):
    M, C = plan.closed_demand.shape
    return np.zeros((M, C)), np.zeros((M, plan.table.shape[1], C))


def _approximate(network, method, tol, max_iter, multiserver, driver, **more):
    check_options(tol, max_iter, multiserver, **more)
    _warm_up()
    start = clock()
    extras = {"multiserver": multiserver}
    split = multiserver == "seidmann" and any(s.kind == "multi" and s.servers > 1 for s in network.stations)
    solved, groups = _seidmann(network) if split else (network, None)
    plan = SolverPlan.of(solved)
    state, iterations, converged, message = (None, 0, True, "") if plan.population.sum() == 0 else \
        driver(plan, tol, max_iter, extras, **more)
    if not converged:
        warnings.warn(f"{method}: {message}", NumericalWarning, stacklevel=3)
    # (a network that is not product form has the accuracy of mva.nonproduct instead)
    accuracy = "" if plan.non_product else TYPICAL_ACCURACY[method, multiserver]
    # (with one closed customer both methods are exact: nothing to doubt)
    doubts, checked = unreliable_stations(solved, plan, state.throughput, state.residence) \
        if state is not None and plan.population.sum() > 1 else ([], [])
    if state is not None and plan.population.sum() > 1 and plan.backlog.any():
        # the variants by Bard-Schweitzer, whatever the method: a tenth of Linearizer's cost
        doubt, spread, form_gap = variant_spread(plan, state.throughput, lambda p: _schweitzer_driver(p, tol, max_iter, {})[0],
                                       compare_estimate=method == "linearizer",
                                       base=state.throughput if method == "schweitzer" else None)
        extras["variant_spread"], extras["product_form_gap"] = spread, form_gap
        doubts += doubt
    if checked:
        accuracy = "; ".join(filter(None, [accuracy, *checked]))
    if doubts:
        accuracy = "unreliable: " + "; ".join(doubts)
        message = "; ".join(filter(None, [message, accuracy]))
        warnings.warn(f"{method}: {accuracy}", NumericalWarning, stacklevel=3)
    closed = (None,) * 4 if state is None else \
        (state.throughput, state.residence, state.queue.sum(axis=1), state.marginal)
    result = assemble_result(solved, plan, method, *closed, converged=converged, iterations=iterations,
                             solve_seconds=seconds_since(start), message=message, accuracy=accuracy,
                             extras=extras)
    return _merge_seidmann(network, result, groups) if split else result


#: What each method's numbers are worth where no station is flagged, by (method,
#: multiserver): measured by ``benchmarks/accuracy_approximate.py`` (seeds 2027 and 31:
#: 800 random networks with 1-6 classes and every station kind, half of them with
#: capacity functions that rise and fall, against exact MVA; class throughputs).
TYPICAL_ACCURACY = {
    ("schweitzer", "marginal"): "approximate (Bard-Schweitzer): class throughputs within 15% of exact, "
                                "mean 1.7%, on 800 random networks",
    ("schweitzer", "seidmann"): "approximate (Bard-Schweitzer, Seidmann multi-servers): class throughputs within "
                                "15% of exact, mean 1.8%, on 800 random networks",
    ("linearizer", "marginal"): "approximate (Linearizer): class throughputs within 1.5% of exact, mean 0.14%, "
                                "on 800 random networks",
    ("linearizer", "seidmann"): "approximate (Linearizer, Seidmann multi-servers): class throughputs within 5.4% "
                                "of exact, mean 0.19%, on 800 random networks",
}


#: Largest discrepancy (relative, any class) between an approximate solution and the
#: exact conditional check of a station with a decreasing capacity function before the
#: result is flagged; chosen on the accuracy study, where it flagged every network more
#: than 3% off (the closest miss scored 2.6%).
CHECK_TOLERANCE = 0.01
#: Largest work of one conditional check (:func:`mva.conditional.conditional_cost`).
CHECK_BUDGET = 50_000


def unreliable_stations(network: Network, plan, throughput, residence) -> tuple[list[str], list[str]]:
    """Stations where an approximate solution is doubtful, and those that were checked.

    Approximate MVA's marginal estimate at N - e_c (module notes) assumes the station's
    queue-length distribution changes smoothly with the population.  A capacity function
    that *decreases* somewhere (a thrashing or lock-bound subsystem) can make the exact
    distribution bimodal (mostly empty or jammed), and the fixed point then settles in the
    wrong mode: errors up to 65% were measured.  For each such station the solution is
    checked against the station solved exactly with the rest of the network as per-class
    delays fitted to the approximate solution (:mod:`mva.conditional`); a discrepancy
    above :data:`CHECK_TOLERANCE` in any class's throughput flags the result, as does a
    check that would cost more than :data:`CHECK_BUDGET`.

    Parameters
    ----------
    network, plan : the (closed part of the) network solved.
    throughput : ndarray (C_closed,)   approximate X_c (1/time unit).
    residence : ndarray (M, C_closed)  approximate R_kc (time unit).

    Returns
    -------
    doubts : list of str     one sentence per flagged station (station, capacity, reason).
    checked : list of str    one phrase per decreasing-capacity station that passed.
    """
    from .conditional import conditional_cost, conditional_throughput

    doubts, checked = [], []
    population = plan.population
    for k, station in enumerate(network.stations):
        J = int(plan.cap_len[k])
        demand = plan.closed_demand[k]
        if plan.is_delay[k] or J < 2 or not demand.any():
            continue
        cap = plan.table[k, :J]
        drops = np.flatnonzero(np.diff(cap) < 0)
        if not len(drops):
            continue
        j = int(drops[0]) + 1
        where = f"station[{station.name}]: capacity decreases from alpha({j})={cap[j - 1]:.4g} to " \
                f"alpha({j + 1})={cap[j]:.4g}"
        if conditional_cost(population) > CHECK_BUDGET:
            doubts.append(f"{where}, where approximate MVA has no accuracy guarantee and the population is too "
                          f"large to check (use method exact or auto)")
            continue
        active = (population > 0) & (demand > 0)
        cycle = np.divide(population, throughput, out=np.zeros(len(population)), where=throughput > 0)
        outside = cycle - residence[k]   # per-class time away from station k (think time included)
        exact = conditional_throughput(demand, cap, population, np.maximum(outside, 0.0))
        gap = float(np.max(np.abs(exact[active] - throughput[active]) / throughput[active])) if active.any() else 0.0
        if gap > CHECK_TOLERANCE:
            doubts.append(f"{where}, and solved exactly with the rest of the network as delays it gives class "
                          f"throughputs {100 * gap:.2g}% away: approximate MVA has likely settled in the wrong "
                          f"mode (use method exact or auto)")
        else:
            checked.append(f"station[{station.name}]'s decreasing capacity checked (within {100 * gap:.2g}%)")
    return doubts, checked


def _schweitzer_driver(plan, tol, max_iter, extras):
    state = _State(plan, plan.population).solve(plan, *_zero_corrections(plan), tol, max_iter)
    extras["newton_iterations"] = state.newton_iterations
    converged = state.error <= tol
    message = "" if converged else (f"not converged after {state.iterations} iterations "
                                    f"(estimated error {state.error:.3g} > tol {tol:g})")
    return state, state.iterations, converged, message


def schweitzer(network: Network, tol: float = 1e-8, max_iter: int = 10_000,
               multiserver: str = "marginal") -> Result:
    """Bard-Schweitzer approximate MVA (proportional estimation).

    Parameters
    ----------
    network : Network
        Closed, open or mixed; any station kinds.
    tol : float, default 1e-8
        Convergence tolerance (see the module notes), in (0, 1).
    max_iter : int, default 10,000
        Iteration cap; a result that reaches it has ``converged=False`` and a
        :class:`~mva.errors.NumericalWarning` is issued.
    multiserver : {"marginal", "seidmann"}
        Treatment of multi-server stations (module notes).

    Returns
    -------
    Result
        Same measures and units as :func:`mva.exact_mva`; ``iterations`` counts fixed-point
        iterations.

    Notes
    -----
    Typical errors: a few percent on throughput, more on queue lengths (Lazowska et al.
    1984, ch. 6).  Cost O(M C J) per iteration, independent of the populations.

    References
    ----------
    Bard (1979); Schweitzer (1979); Akyildiz & Bolch (1988); see the module docstring.

    Examples
    --------
    >>> from mva import Network, Station, solve
    >>> net = Network([Station("cpu", "queue", [0.1]), Station("disk", "queue", [0.2])],
    ...               population=[3])
    >>> round(float(solve(net, "schweitzer").throughput[0]), 4)   # exact: 4.6667
    4.5721
    """
    require_network(network)
    return _approximate(network, "schweitzer", tol, max_iter, multiserver, _schweitzer_driver)


def _linearizer_driver(plan, tol, max_iter, extras, max_outer, start=None):
    population = plan.population.astype(float)
    M, C = plan.closed_demand.shape
    jmax = plan.table.shape[1]
    main = _State(plan, population)
    sub_queue, sub_marginal, sub_throughput = np.zeros((C, M, C)), np.zeros((C, M, jmax)), np.zeros((C, C))
    if start is None:
        fraction_shift = np.zeros((M, C, C))     # F[k, i, c]
        marginal_shift = np.zeros((M, jmax, C))  # G[k, j, c]
    else:
        # a related network's converged state: its corrections, queue lengths and throughputs
        if start["stations"] != M or not np.array_equal(start["population"], population):
            raise ModelError("options.start", f"is a result for {start['stations']} stations and populations "
                                              f"{start['population'].tolist()}, this network has {M} and "
                                              f"{population.tolist()}")
        fraction_shift, marginal_shift = start["fraction_shift"].copy(), start["marginal_shift"].copy()
        main = _State(plan, population, start["queue"], start["marginal"], start["throughput"])
        for c, (queue, marginal, throughput) in start["subs"].items():
            sub_queue[c], sub_marginal[c], sub_throughput[c] = queue, marginal, throughput
    inputs = (plan.closed_demand, plan.is_delay, plan.table, plan.cap_len, plan.think, population, plan.residual,
              plan.backlog, plan.closed_level, plan.closed_visits, plan.preemption, plan.blocking)
    # the start's last outer step counts as this iteration's step before its first only
    # where the start is this very network (a re-solve): a related network's first step
    # measures how far its fixed point moved, which says nothing of the start's rounding
    same = start is not None and all(np.array_equal(a, b) for a, b in zip(inputs, start["inputs"], strict=True))
    residence, iterations, newton, outer, outer_error, inner_ok, last_change = linearizer_kernel(
        *inputs, tol, max_iter, max_outer, start is not None, start["last_change"] if same else np.inf,
        fraction_shift, marginal_shift, main.queue, main.marginal, main.throughput, sub_queue, sub_marginal,
        sub_throughput)
    main.residence = residence
    extras["outer_iterations"] = outer
    extras["newton_iterations"] = newton
    extras["linearizer_state"] = {"population": population.copy(), "stations": M,
                                  "fraction_shift": fraction_shift, "marginal_shift": marginal_shift,
                                  "queue": main.queue.copy(), "marginal": main.marginal.copy(),
                                  "throughput": main.throughput.copy(), "last_change": float(last_change),
                                  "inputs": tuple(np.copy(a) for a in inputs),
                                  "subs": {int(c): (sub_queue[c].copy(), sub_marginal[c].copy(), sub_throughput[c].copy())
                                           for c in np.flatnonzero(population > 0)}}
    converged = bool(inner_ok and outer_error <= tol)
    if not converged and start is not None:
        # a start far from this network's fixed point can settle more slowly than a cold
        # start (seen on a multi-server station near saturation): start again from cold
        main, cold_iterations, converged, message = _linearizer_driver(plan, tol, max_iter, extras, max_outer)
        extras["outer_iterations"] += outer
        extras["newton_iterations"] += newton
        return main, iterations + cold_iterations, converged, message
    inner_tol = tol / 10
    if converged:
        message = ""
    elif not inner_ok:
        message = f"an inner fixed point reached max_iter={max_iter} before tol {inner_tol:g}"
    elif outer < 2:
        message = f"corrections not settled: max_outer={max_outer}, and convergence is judged from two outer steps"
    else:
        message = (f"corrections not settled after {outer} outer iterations "
                   f"(estimated error {outer_error:.3g} > tol {tol:g})")
    return main, iterations, converged, message


def linearizer(network: Network, tol: float = 1e-8, max_iter: int = 10_000, max_outer: int = 100,
               multiserver: str = "marginal", start: Result | None = None) -> Result:
    """Linearizer approximate MVA (Chandy & Neuse 1982).

    Parameters
    ----------
    network : Network
        Closed, open or mixed; any station kinds.
    tol : float, default 1e-8
        Convergence tolerance of every fixed point and of the outer iteration on the
        corrections (see the module notes), in (0, 1).
    max_iter : int, default 10,000
        Iteration cap of each inner fixed point.
    max_outer : int, default 100
        Cap on outer iterations (re-solving the C networks at N - e_c). Convergence is
        judged from the contraction of two successive steps, so it takes two at least.
    multiserver : {"marginal", "seidmann"}
        Treatment of multi-server stations (module notes).
    start : Result, optional
        A Linearizer result of a network with the same stations, classes and
        populations (the previous step of a fixed point or sweep over demands): its
        corrections and queue lengths start the iteration, which then needs fewer
        outer iterations; the answer is the same to within ``tol`` (should the
        iteration not settle from there, it starts again from scratch).

    Returns
    -------
    Result
        ``iterations`` counts inner iterations over all fixed points;
        ``extras["outer_iterations"]`` the outer ones; ``extras["linearizer_state"]``
        what ``start`` reads.  ``converged=False`` (and a
        :class:`~mva.errors.NumericalWarning`) if either cap was reached.

    Notes
    -----
    Cost: (C + 1) fixed points per outer iteration, each O(M C J) per iteration.
    Typically within about 1% of exact (Chandy & Neuse 1982).

    References
    ----------
    Chandy & Neuse (1982); Krzesinski & Greyling (1984); Akyildiz & Bolch (1988); see the
    module docstring.

    Examples
    --------
    >>> from mva import Network, Station, solve
    >>> net = Network([Station("cpu", "queue", [0.1]), Station("disk", "queue", [0.2])],
    ...               population=[3])
    >>> round(float(solve(net, "linearizer").throughput[0]), 4)   # exact: 4.6667
    4.6621
    """
    require_network(network)
    driver = _linearizer_driver if start is None else partial(_linearizer_driver, start=_start_state(start))
    return _approximate(network, "linearizer", tol, max_iter, multiserver, driver, max_outer=max_outer)


def _start_state(start) -> dict:
    """The Linearizer state a ``start`` result carries (checked in the driver against
    the network's shape)."""
    state = start.extras.get("linearizer_state") if isinstance(start, Result) else None
    if state is None:
        raise ModelError("options.start", "must be a result of the linearizer method (it carries the corrections "
                                          "to start from)")
    return state


@once
def _warm_up():
    """Load the approximate solvers' compiled kernel (numba cache) before any timing."""
    plan = SolverPlan(Network([Station("warm-up", "queue", [1.0])], population=[1]))
    _State(plan, plan.population).solve(plan, *_zero_corrections(plan), 1e-8, 10)
