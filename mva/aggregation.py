"""Flow-equivalent service centres by Norton aggregation.

A subnetwork of a closed single-class network can be replaced by one load-dependent
station whose service rate with ``j`` customers present is the throughput of the
subnetwork solved *in isolation* (shorted: no think time, no other stations) with ``j``
customers.  The replacement is exact for product-form networks (Chandy, Herzog & Woo,
"Parametric analysis of queueing networks", IBM J. Res. Dev. 19(1), 1975: Norton's
theorem for queueing networks) and is the standard flow-equivalent service centre (FESC)
of Lazowska et al., *Quantitative System Performance*, 1984, ch. 8.

This is general library code: any subnetwork, any station kinds.  Du & Zhang (2001) use it for
its CPU centre (eq. 3.3-3.4): k CPUs with their caches and the memory they stall on.
"""
from __future__ import annotations

import numpy as np

from .errors import ModelError, check_positive_integer
from .exact import closed_throughput_curve
from .network import Network, Station, require_network

__all__ = ["norton_throughputs", "flow_equivalent_station"]


def norton_throughputs(subnetwork: Network, max_population: int) -> np.ndarray:
    """Throughput ``X(j)`` of the shorted subnetwork for ``j = 1..max_population``.

    Parameters
    ----------
    subnetwork : Network
        One closed class; its population and think time are ignored (the subnetwork is
        shorted: think time 0, population j).
    max_population : int
        Largest j needed, >= 1 (e.g. the population of the enclosing network).

    Returns
    -------
    ndarray, shape (max_population,)
        ``X(1), ..., X(max_population)`` in completions per unit of the subnetwork's
        demand time unit.
    """
    require_network(subnetwork, "subnetwork")
    if subnetwork.n_classes != 1 or subnetwork.is_open.any():
        raise ModelError("subnetwork", "Norton aggregation needs one closed class")
    check_positive_integer("max_population", max_population)
    if not np.any(subnetwork.demands > 0):
        raise ModelError("subnetwork", "every demand is zero: the aggregate would serve at infinite rate")
    shorted = subnetwork.replace(population=(int(max_population),), think_time=(0.0,))
    return closed_throughput_curve(shorted)[1:]


def flow_equivalent_station(name: str, subnetwork: Network, max_population: int) -> Station:
    """An ``ld`` station flow-equivalent to ``subnetwork`` for up to ``max_population`` customers.

    The station's demand is ``1/X(1)`` (the subnetwork's total demand for a lone customer)
    and its relative capacity is ``alpha(j) = X(j)/X(1)``, so its service rate with j
    customers is ``alpha(j)/demand = X(j)``; beyond ``max_population`` the rate stays at
    ``X(max_population)``.

    Examples
    --------
    Two CPUs (0.4 s each per job) stalling on a bus (0.1 s), aggregated for up to 3 jobs:

    >>> from mva import Network, Station
    >>> sub = Network([Station("cpus", "multi", [0.4], servers=2), Station("bus", "queue", [0.1])],
    ...               population=[1])
    >>> fesc = flow_equivalent_station("cpu", sub, 3)
    >>> fesc.demand, [round(a, 4) for a in fesc.capacity]
    ((0.5,), [1.0, 1.9231, 2.2414])
    """
    rates = norton_throughputs(subnetwork, max_population)
    return Station(name, "ld", [1.0 / rates[0]], capacity=rates / rates[0])
