"""Batch solvers: many networks of one shape in one compiled pass.

:func:`batch_exact_single_class`: exact MVA of closed single-class networks.
:func:`batch_approximate`: Linearizer or Bard-Schweitzer of closed networks of any
classes, with each case's accuracy checks (below).

Cases share the stations' kinds and capacities, the population and the class structure;
demands and think times vary per case.  The recursion is :func:`mva._exact_kernels.single_class_mva`
run over a leading batch axis inside one compiled loop
(:func:`mva._exact_kernels.batch_single_class_mva`), complements included, so each case's
numbers are bit-for-bit those of :func:`mva.exact_mva` on that case, without B Python
calls.  Networks with many stations that carry marginals take their complements from the
convolution (:mod:`mva.convolution`), one case at a time, as :func:`mva.exact_mva` does.
Used by what-if sweeps (:mod:`mva.sweep`).

The approximate batch (:func:`batch_approximate`) cannot be bit for bit: its speed comes
from starting each case where the previous one ended (numerical continuation), so each
answer is the single solve's fixed point to within the tolerance, not the same
rounding.  Its flags are the single solve's (:func:`mva.nonproduct.variant_spread`'s
limits applied by :func:`mva.nonproduct.spread_measures` to every case at once), but for
one: a case the cold start leaves unsettled at ``max_outer`` can settle from its
neighbour's answer, and is then converged, on the fixed point the single solve reaches
with more outer steps (never the reverse: a start that does not settle starts again
from cold).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from . import _exact_kernels, convolution
from .errors import ModelError
from .exact import exact_algorithm, solve_with_complements, warm_up
from .network import Network, require_network
from .plan import SolverPlan, utilization
from .result import is_unreliable

__all__ = ["batch_exact_single_class", "can_batch", "batch_approximate", "can_batch_approximate",
           "BATCH_APPROXIMATE"]


def can_batch(network: Network) -> bool:
    """True when ``network`` has one class, closed, and is product form, so the batch
    solver applies (its rows carry no accuracy note: a residual-time approximation goes
    through :func:`mva.solve`, which flags and warns)."""
    return network.n_classes == 1 and not network.is_open.any() and not SolverPlan.of(network).residual.any()


def batch_exact_single_class(network: Network, demand, think) -> dict:
    """Exact MVA of ``network`` with each row of ``demand`` and entry of ``think``.

    Parameters
    ----------
    network : Network
        The shape: station kinds, servers, capacities, population (one closed class).
    demand : array (B, M)
        Service demand of each case at each station (time unit).
    think : array (B,)
        Think time of each case (time unit).

    Returns
    -------
    dict of arrays
        ``throughput`` (B,) in 1/time unit, ``response_time`` (B,), ``residence_time``
        (B, M), ``queue_length`` (B, M), ``utilization`` (B, M) as :class:`~mva.Result`
        defines it.
    """
    require_network(network)
    if not can_batch(network):
        raise ModelError("network", "the batch solver needs one closed class")
    plan = SolverPlan.of(network)
    demand, think = _checked_cases(demand, think, (network.n_stations,), ())
    B = len(demand)
    warm_up()
    if exact_algorithm(plan) == "mva-recursive":
        x, resid, queue, marginal = solve_with_complements(
            plan, _exact_kernels.batch_single_class_mva, demand[:, :, None], think[:, None], batch=True)
    else:   # many stations with marginals: complements by convolution, case by case
        parts = [convolution.complement_throughputs(plan, demand[b][:, None], think[b:b + 1]) for b in range(B)]
        comp_index = parts[0][0]
        comp = np.stack([p[1] for p in parts])
        x, resid, queue, marginal = _exact_kernels.batch_single_class_mva(
            demand[:, :, None], plan.is_delay, plan.table, plan.cap_len, plan.tracked, think[:, None],
            plan.population, comp_index, comp, plan.residual)
    throughput = x[:, -1, 0].copy()
    residence = resid[:, :, 0]
    util = utilization(plan, (demand * throughput[:, None])[:, :, None], marginal)[:, :, 0]
    return {"throughput": throughput, "response_time": residence.sum(axis=1), "residence_time": residence,
            "queue_length": residence * throughput[:, None], "utilization": util}


def _checked_cases(demand, think, demand_shape: tuple, think_shape: tuple):
    """``demand`` (B, *demand_shape) and ``think`` (B, *think_shape) as contiguous float64,
    checked: the shapes, and every value finite and >= 0 (:class:`ModelError` otherwise)."""
    demand = np.ascontiguousarray(np.asarray(demand, dtype=float))
    think = np.ascontiguousarray(np.asarray(think, dtype=float))
    B = len(demand)
    if demand.shape != (B, *demand_shape) or think.shape != (B, *think_shape):
        raise ModelError("demand", f"expected {(B, *demand_shape)} demands and {(B, *think_shape)} think times")
    if not (np.all(np.isfinite(demand)) and np.all(demand >= 0) and np.all(np.isfinite(think)) and np.all(think >= 0)):
        raise ModelError("demand", "demands and think times must be finite and >= 0")
    return demand, think


# --- approximate MVA of many multi-class networks -----------------------------------------

#: The approximate methods the batch path runs (with their default multi-server treatment).
BATCH_APPROXIMATE = ("linearizer", "schweitzer")


def can_batch_approximate(network: Network) -> bool:
    """True when :func:`batch_approximate` takes ``network``'s shape: closed classes only,
    more than one customer, no station whose capacity function decreases (those get a
    conditional check per case, :func:`mva.approximate.unreliable_stations`)."""
    if network.is_open.any() or sum(network.population) <= 1:
        return False
    plan = SolverPlan.of(network)
    return not any(np.any(np.diff(plan.table[k, :plan.cap_len[k]]) < 0)
                   for k in range(network.n_stations) if not plan.is_delay[k])


def _structure_keys(network: Network, demand, every_station: bool = False) -> np.ndarray:
    """Per case, what decides which stations are product form
    (:meth:`mva.plan.SolverPlan._non_product_form`): which classes visit each station that
    is not processor sharing, and whether their demands there differ; ``every_station``:
    which classes visit every station (what else ``auto``'s choice reads: the routes of
    :func:`mva.decomposition.decomposition_refusal`)."""
    ordered = [k for k, s in enumerate(network.stations) if every_station or s.discipline != "ps"]
    if not ordered:
        return np.zeros(len(demand), dtype=np.int64)
    part = demand[:, ordered, :]
    visiting = part > 0
    high = np.where(visiting, part, -np.inf).max(axis=2)
    low = np.where(visiting, part, np.inf).min(axis=2)
    flags = np.concatenate([visiting.reshape(len(demand), -1), (high > low)], axis=1)
    return np.unique(np.packbits(flags, axis=1), axis=0, return_inverse=True)[1].reshape(-1)


def batch_approximate(network: Network, demand, think, method: str = "linearizer", tol: float = 1e-8,
                      max_iter: int = 10_000, max_outer: int = 100) -> dict:
    """Linearizer or Bard-Schweitzer on many closed multi-class networks of one shape, each
    case with the accuracy checks of :func:`mva.solve` (the non-product-form variants of
    :func:`mva.nonproduct.variant_spread`, a utilisation above 1).

    ``method="auto"``: what :func:`mva.auto.auto` chooses, per structure (its choice does
    not depend on the demands' values, only on which are zero and which differ): the
    batch where it chooses Linearizer or Bard-Schweitzer, else each case solved by
    ``auto`` alone (exact MVA, decomposition).

    Cases share the stations' kinds, disciplines, priorities, servers and capacities, the
    populations and the classes; demands and think times vary.  They are solved in one
    compiled pass per structure (which stations are product form,
    :func:`_structure_keys`), blocks of 64 cases in parallel, each case started from the one
    before it (:func:`mva._linearizer_kernels.batch_approximate`): every answer is that of
    :func:`mva.solve` on the case to within ``tol``.

    Parameters
    ----------
    network : Network
        The shape (closed classes only, :func:`can_batch_approximate`).
    demand : array (B, M, C)
        Service demand of each case at each station for each class (time unit).
    think : array (B, C)
        Think time of each case per class (time unit).
    method : {"linearizer", "schweitzer", "auto"}
    tol, max_iter, max_outer : as :func:`mva.approximate.linearizer`.

    Returns
    -------
    dict of arrays
        ``throughput`` (B, C) in 1/time unit, ``response_time`` (B, C), ``residence_time``
        (B, M, C), ``utilization`` (B, M, C) as :class:`~mva.Result` defines it,
        ``converged`` (B,), ``unreliable`` (B,) (the case's result would say
        ``unreliable:``), ``iterations`` (B,).
    """
    from ._linearizer_kernels import batch_approximate as kernel
    from .approximate import _warm_up, check_options
    from .auto import choose_method
    from .nonproduct import spread_measures, variant_settings

    if method not in (*BATCH_APPROXIMATE, "auto"):
        raise ModelError("method", f"the approximate batch solver runs {', '.join(BATCH_APPROXIMATE)} or auto, "
                                   f"not {method!r}")
    check_options(tol, max_iter, "marginal", max_outer=max_outer)
    if not can_batch_approximate(network):
        raise ModelError("network", "the approximate batch solver needs closed classes, more than one customer and "
                                    "no decreasing capacity function")
    M, C = network.n_stations, network.n_classes
    demand, think = _checked_cases(demand, think, (M, C), (C,))
    B = len(demand)
    population = np.asarray(network.population, dtype=float)
    idle = ((demand.sum(axis=1) + think) == 0) & (population > 0)
    if idle.any():
        b, c = map(int, np.argwhere(idle)[0])
        raise ModelError("network.population", f"case {b}: closed class {network.classes[c]!r} has zero total demand "
                                               "and zero think time: its throughput would be infinite")
    _warm_up()
    out = {"throughput": np.zeros((B, C)), "residence_time": np.zeros((B, M, C)), "utilization": np.zeros((B, M, C)),
           "converged": np.zeros(B, dtype=bool), "unreliable": np.zeros(B, dtype=bool),
           "iterations": np.zeros(B, dtype=np.int64)}
    keys = _structure_keys(network, demand, every_station=method == "auto")
    for key in np.unique(keys):
        rows = np.flatnonzero(keys == key)
        # in the order of their parameters, so that neighbours are close (a shuffled
        # sweep of one value becomes a line the predictor follows); a grid keeps its order
        params = np.concatenate([demand[rows].reshape(len(rows), -1), think[rows]], axis=1)
        varying = params[:, np.ptp(params, axis=0) > 0]
        rows = rows[np.lexsort(varying.T[::-1])] if varying.shape[1] else rows
        case = _case_network(network, demand[rows[0]], think[rows[0]])
        chosen = choose_method(case)[0] if method == "auto" else method
        if chosen not in BATCH_APPROXIMATE:
            _solve_alone(network, demand, think, rows, out, tol, max_iter, max_outer)
            continue
        plan = SolverPlan.of(case)
        settings = variant_settings(plan) if plan.backlog.any() else np.zeros((0, 4), dtype=np.int64)
        x = np.zeros((len(rows), C))
        residence = np.zeros((len(rows), M, C))
        marginal = np.zeros((len(rows), M, plan.table.shape[1]))
        converged = np.zeros(len(rows), dtype=np.bool_)
        iterations = np.zeros(len(rows), dtype=np.int64)
        variants = np.zeros((len(rows), len(settings), C))
        kernel(np.ascontiguousarray(demand[rows]), np.ascontiguousarray(think[rows]), plan.is_delay, plan.table,
               plan.cap_len, population, plan.residual, plan.backlog, plan.closed_level, plan.closed_visits, plan.preemption,
               plan.blocking, chosen == "linearizer", tol, max_iter, max_outer, settings, x, residence, marginal,
               converged, iterations, variants)
        util = utilization(plan, demand[rows] * x[:, None, :], marginal)
        unreliable = (util.sum(axis=2)[:, plan.backlog] > 1.0 + 1e-9).any(axis=1)
        if len(settings):
            unreliable |= spread_measures(x, variants, compare_estimate=chosen == "linearizer")["doubtful"]
        out["throughput"][rows], out["residence_time"][rows], out["utilization"][rows] = x, residence, util
        out["converged"][rows], out["unreliable"][rows], out["iterations"][rows] = converged, unreliable, iterations
    out["response_time"] = out["residence_time"].sum(axis=1)
    return out


def _case_network(network: Network, demand, think) -> Network:
    """``network`` with one case's demands (M, C) and think times (C,)."""
    stations = [dataclasses.replace(s, demand=tuple(demand[k])) for k, s in enumerate(network.stations)]
    return network.replace(stations=stations, think_time=tuple(think))


def _solve_alone(network, demand, think, rows, out, tol, max_iter, max_outer) -> None:
    """The cases ``rows`` solved one by one by ``auto`` (where it does not choose an
    approximate method), written into ``out``."""
    from .solve import solve

    for b in rows:
        result = solve(_case_network(network, demand[b], think[b]), "auto", tol=tol, max_iter=max_iter,
                       max_outer=max_outer)
        out["throughput"][b], out["residence_time"][b] = result.throughput, result.residence_time
        out["utilization"][b], out["converged"][b] = result.utilization, result.converged
        out["unreliable"][b] = is_unreliable(result.accuracy)
        out["iterations"][b] = result.iterations
