"""Throughput and response-time bounds for closed single-class networks.

Asymptotic bounds (ABA): Muntz & Wong (1974); Denning & Buzen, "The operational analysis
of queueing network models", Computing Surveys 10(3), 1978.  Balanced job bounds (BJB):
Zahorjan, Sevcik, Eager & Galler, "Balanced job bound analysis of queueing networks",
CACM 25(2):134-141, 1982; with think time as in Jain, *The Art of Computer Systems
Performance Analysis*, 1991, Box 34.2.  Delay stations add their demand to the think time
(Lazowska et al., *Quantitative System Performance*, 1984, sec. 5.3).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ModelError
from .network import Network

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

    ``max(D, N Dmax' - Z) <= R(N) <= sum_k D_k N / min_j alpha_k(j)`` and
    ``N / (N D'' + Z) <= X(N) <= min(N / (D + Z), 1 / Dmax')`` where, for load-dependent
    and multi-server stations, ``Dmax'`` uses the largest capacity (``D_k / max alpha_k``)
    and ``D''`` the smallest (a customer never waits behind more than N - 1 others, each
    served at rate at least ``min alpha_k / D_k``).  Delay stations count in ``D`` only.

    Parameters
    ----------
    network : Network
        One closed class, population >= 1.
    """
    n, z = _single_closed(network)
    d = network.demands[:, 0]
    queueing_bottleneck = 0.0
    worst_residence = 0.0
    for k, station in enumerate(network.stations):
        cap = station.capacity_function()
        if cap is None:
            worst_residence += d[k]
            continue
        queueing_bottleneck = max(queueing_bottleneck, d[k] / cap.max())
        worst_residence += n * d[k] / cap.min()
    total = float(d.sum())
    x_upper = n / (total + z)
    if queueing_bottleneck > 0:
        x_upper = min(x_upper, 1.0 / queueing_bottleneck)
    x_lower = n / (worst_residence + z)
    return Bounds(x_lower, x_upper, max(total, n / x_upper - z), worst_residence, "asymptotic")


def balanced_job_bounds(network: Network) -> Bounds:
    """Balanced job bounds on X(N) and R(N) for a closed single-class network.

    With D the total and Dmax, Davg the largest and mean demand over the K queueing
    stations, and Z the think time plus delay-station demand::

        N / (D + Z + (N-1) Dmax / (1 + Z/(N D)))  <=  X(N)
        X(N)  <=  min(1/Dmax, N / (D + Z + (N-1) Davg / (1 + Z/(N D))))

    Parameters
    ----------
    network : Network
        One closed class, population >= 1, stations of type ``queue`` or ``delay``.
    """
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
    shrink = 1.0 + z / (n * total)
    x_lower = n / (total + z + (n - 1) * d_max / shrink)
    x_upper = min(1.0 / d_max, n / (total + z + (n - 1) * d_avg / shrink))
    return Bounds(x_lower, x_upper, n / x_upper - z, n / x_lower - z, "balanced-job")
