"""Batch solver: exact MVA of many closed single-class networks of one shape in one pass.

Cases share the stations' kinds and capacities, the population and the class structure;
demands and think times vary per case.  The recursion is :func:`mva._exact_kernels.single_class_mva`
run over a leading batch axis inside one compiled loop
(:func:`mva._exact_kernels.batch_single_class_mva`), complements included, so each case's
numbers are bit-for-bit those of :func:`mva.exact_mva` on that case, without B Python
calls.  Networks with many stations that carry marginals take their complements from the
convolution (:mod:`mva.convolution`), one case at a time, as :func:`mva.exact_mva` does.
Used by what-if sweeps (:mod:`mva.sweep`).
"""
from __future__ import annotations

import numpy as np

from . import _exact_kernels, convolution
from .errors import ModelError
from .exact import exact_algorithm, solve_with_complements, warm_up
from .network import Network
from .plan import SolverPlan, utilization

__all__ = ["batch_exact_single_class", "can_batch"]


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
    if not can_batch(network):
        raise ModelError("network", "the batch solver needs one closed class")
    plan = SolverPlan.of(network)
    demand = np.ascontiguousarray(np.asarray(demand, dtype=float))
    think = np.asarray(think, dtype=float)
    B, M = demand.shape
    if M != network.n_stations or think.shape != (B,):
        raise ModelError("demand", f"expected ({B}, {network.n_stations}) demands and ({B},) think times")
    if not (np.all(np.isfinite(demand)) and np.all(demand >= 0) and np.all(np.isfinite(think))
            and np.all(think >= 0)):
        raise ModelError("demand", "demands and think times must be finite and >= 0")
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
