"""Throughput and response-time bounds for closed single-class networks.

Asymptotic bounds (ABA): Muntz & Wong (1974); Denning & Buzen, "The operational analysis
of queueing network models", Computing Surveys 10(3), 1978.  Balanced job bounds (BJB):
Zahorjan, Sevcik, Eager & Galler, "Balanced job bound analysis of queueing networks",
CACM 25(2):134-141, 1982; with think time as in Lazowska, Zahorjan, Graham & Sevcik,
*Quantitative System Performance*, 1984, Table 5.3.  Delay stations add their demand to the think time
(Lazowska et al., *Quantitative System Performance*, 1984, sec. 5.3).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ModelError
from .network import Network, require_network

__all__ = ["Bounds", "asymptotic_bounds", "balanced_job_bounds"]


@dataclass(frozen=True)
class Bounds:
    """Lower and upper bounds on throughput (1/time unit) and response time (time unit)."""

    throughput_lower: float
    throughput_upper: float
    response_time_lower: float
    response_time_upper: float
    method: str


def _single_closed(network: Network):
    if network.n_classes != 1 or network.is_open.any():
        raise ModelError("network.population", "bounds are defined here for one closed class")
    n = network.population[0]
    if n < 1:
        raise ModelError("network.population", "bounds need a population of at least 1")
    return n, float(network.think_time[0])


def asymptotic_bounds(network: Network) -> Bounds:
    """Asymptotic bounds on X(N) and R(N) for a closed single-class network.

    ``N / (R_max + Z) <= X(N) <= min(N / (R_min + Z), 1 / Dmax')`` and
    ``N / X_upper - Z <= R(N) <= R_max``, where ``Dmax' = max_k D_k / max_j alpha_k(j)``
    (the bottleneck at full capacity), ``R_min = sum_k D_k / max_j (alpha_k(j) / j)`` (a
    customer is never served faster than its best share of the station) and
    ``R_max = sum_k N D_k / min_j alpha_k(j)`` (never slower than behind N - 1 others at
    the lowest capacity).  For queue stations these are the classical
    ``max(D, N Dmax - Z) <= R(N) <= N D``; delay stations count D_k in both.

    Parameters
    ----------
    network : Network
        One closed class, population >= 1.

    Examples
    --------
    >>> from mva import Network, Station
    >>> net = Network([Station("cpu", "queue", [0.1]), Station("disk", "queue", [0.2])], population=[3],
    ...               think_time=[1.0])
    >>> b = asymptotic_bounds(net)
    >>> round(float(b.throughput_lower), 4), round(float(b.throughput_upper), 4)
    (1.5789, 2.3077)
    """
    require_network(network)
    n, z = _single_closed(network)
    d = network.demands[:, 0]
    queueing_bottleneck = 0.0
    best_residence = 0.0
    worst_residence = 0.0
    for k, station in enumerate(network.stations):
        cap = station.capacity_function()
        if cap is None:
            best_residence += d[k]
            worst_residence += d[k]
            continue
        per_customer = cap / np.arange(1, len(cap) + 1)  # alpha(j)/j falls beyond the list
        best_residence += d[k] / per_customer.max()
        queueing_bottleneck = max(queueing_bottleneck, d[k] / cap.max())
        worst_residence += n * d[k] / cap.min()
    x_upper = n / (best_residence + z)
    if queueing_bottleneck > 0:
        x_upper = min(x_upper, 1.0 / queueing_bottleneck)
    x_lower = n / (worst_residence + z)
    return Bounds(x_lower, x_upper, n / x_upper - z, worst_residence, "asymptotic")


def balanced_job_bounds(network: Network) -> Bounds:
    """Balanced job bounds on X(N) and R(N) for a closed single-class network.

    With D the total and Dmax, Davg the largest and mean demand over the K queueing
    stations, and Z the think time plus delay-station demand::

        N / (D + Z + (N-1) Dmax / (1 + Z/(N D)))  <=  X(N)
        X(N)  <=  min(1/Dmax, N / (D + Z + (N-1) Davg / (1 + Z/D)))

    The optimistic bound follows from the balanced network's MVA step
    ``R(n) = D + Davg (n - 1 - Z X(n-1))`` with ``X(n-1) <= (n-1)/(D + Z)``; note the
    factor is ``1 + Z/D`` there and ``1 + Z/(N D)`` in the pessimistic bound (Lazowska et
    al. 1984, Table 5.3).

    Parameters
    ----------
    network : Network
        One closed class, population >= 1, stations of type ``queue`` or ``delay``.
    """
    require_network(network)
    n, z = _single_closed(network)
    d = network.demands[:, 0]
    queues = []
    for k, station in enumerate(network.stations):
        if station.kind == "delay":
            z += d[k]
        elif station.kind == "queue":
            queues.append(d[k])
        else:
            raise ModelError(f"station[{station.name}].type",
                             "balanced job bounds are defined for queue and delay stations; "
                             "use asymptotic_bounds for multi-server or load-dependent stations")
    queues = np.asarray(queues)
    total = float(queues.sum())
    if total == 0:
        x = n / z
        return Bounds(x, x, 0.0, 0.0, "balanced-job")
    d_max = float(queues.max())
    d_avg = total / len(queues)
    x_lower = n / (total + z + (n - 1) * d_max / (1.0 + z / (n * total)))
    x_upper = min(1.0 / d_max, n / (total + z + (n - 1) * d_avg / (1.0 + z / total)))
    return Bounds(x_lower, x_upper, n / x_upper - z, n / x_lower - z, "balanced-job")
