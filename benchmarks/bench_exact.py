"""Solve-time benchmark of exact MVA (issues #2 and #15).  Run: python benchmarks/bench_exact.py

Prints a table: median wall time of ``mva.solve(network)`` over several runs, after a
warm-up (numba compilation and cache load are start-up, not solve time).  ``solve_seconds``
is the result's own timing; ``solve()`` adds dispatch; ``new network`` is the cost for a
network never solved before (validation and the solver's per-network plan included);
``algorithm`` is the exact algorithm that ran (``mva-recursive``: 2^L complement passes;
``mva-convolution``: complements by tree convolution).  A second table gives the cost as
the number L of multi-server / load-dependent stations grows (issue #15's scaling series).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from mva import Network, Station, solve


def queues(n, rng, classes=1):
    return [Station(f"q{k}", "queue", rng.uniform(0.01, 0.1, classes)) for k in range(n)]


def cases():
    rng = np.random.default_rng(2026)
    q10 = queues(10, rng)
    fesc_short = Station("cpus", "ld", [0.02], capacity=[1.0, 1.8, 2.5, 3.1])
    five = queues(5, rng)
    yield ("single-class exact, 10 queues, N = 1,000", 0.1e-3,
           Network(q10, population=[1_000], think_time=[1.0]))
    yield ("single-class exact, 10 queues, N = 10,000", 1e-3,
           Network(q10, population=[10_000], think_time=[1.0]))
    yield ("one ld station (4-value FESC) + 5 queues, N = 500", 5e-3,
           Network([fesc_short] + five, population=[500], think_time=[1.0]))
    yield ("the same, N = 10,000, stable", 500e-3,
           Network([fesc_short] + five, population=[10_000], think_time=[1.0]))
    for n in (500, 10_000):
        fesc_long = Station("cpus", "ld", [0.02], capacity=list(np.minimum(np.arange(1, n + 1), 48) * 0.95))
        yield (f"one ld station (capacity table of N values) + 5 queues, N = {n:,}",
               5e-3 if n == 500 else 500e-3, Network([fesc_long] + five, population=[n], think_time=[1.0]))
    yield ("3 classes x 30 customers x 10 stations", 5e-3,
           Network(queues(10, rng, 3), population=[30, 30, 30], think_time=[1.0, 2.0, 0.5]))
    ld4 = Station("cpus", "ld", rng.uniform(0.01, 0.05, 4), capacity=[1.0, 1.9, 2.7, 3.4])
    yield ("4 classes x 20 customers x 10 stations, one multi-class ld station", 300e-3,
           Network([ld4] + queues(9, rng, 4), population=[20] * 4, think_time=[1.0] * 4))
    ld4_long = Station("cpus", "ld", rng.uniform(0.01, 0.05, 4), capacity=list(np.minimum(np.arange(1, 81), 16) * 0.9))
    yield ("  (the same with an 80-value capacity table)", 300e-3,
           Network([ld4_long] + queues(9, rng, 4), population=[20] * 4, think_time=[1.0] * 4))
    yield ("1 class, 32 multi/ld stations + 10 queues, N = 1,000", 100e-3,
           Network(marginal_stations(32, rng) + queues(10, rng), population=[1_000], think_time=[1.0]))
    yield ("3 classes x 15 customers, 12 multi/ld stations", 1.0,
           Network(marginal_stations(12, rng, 3), population=[15] * 3, think_time=[1.0] * 3))


def marginal_stations(n, rng, classes=1):
    """Eight-core servers (multi, 8 servers) alternating with FESCs of eight values."""
    out = []
    for k in range(n):
        demand = rng.uniform(0.01, 0.1, classes)
        if k % 2:
            out.append(Station(f"m{k}", "multi", demand * 8, servers=8))
        else:
            out.append(Station(f"f{k}", "ld", demand * 8, capacity=list(np.minimum(np.arange(1, 9), 6) * 0.9)))
    return out


def scaling():
    """(label, network) of the scaling series: L multi-server stations + one queue."""
    rng = np.random.default_rng(15)
    for L in (8, 12, 16, 24, 32, 64):
        for N in (200, 1_000):
            yield (f"1 class, N = {N:,}, {L} multi/ld + 1 queue",
                   Network(marginal_stations(L, rng) + queues(1, rng), population=[N], think_time=[1.0]))
    for L in (4, 8, 12, 16):
        yield (f"3 classes x 20, {L} multi/ld + 1 queue",
               Network(marginal_stations(L, rng, 3) + queues(1, rng, 3), population=[20] * 3,
                       think_time=[1.0] * 3))


def measure(network, repeats):
    solve(network)  # warm-up
    wall, kernel, cold = [], [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = solve(network)
        wall.append(time.perf_counter() - t0)
        kernel.append(result.solve_seconds)
        t0 = time.perf_counter()
        solve(network.replace())  # a fresh network: validation and solver plan included
        cold.append(time.perf_counter() - t0)
    return statistics.median(wall), statistics.median(kernel), statistics.median(cold), result.extras["algorithm"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    print(f"{'case':<72} {'target':>10} {'solve()':>11} {'solve_seconds':>14} {'new network':>12}  ok   "
          f"algorithm")
    for name, target, network in cases():
        repeats = args.repeats if target < 0.1 else max(3, args.repeats // 3)
        wall, kernel, cold, algorithm = measure(network, repeats)
        ok = "yes" if wall <= target else "NO"
        print(f"{name:<72} {target * 1e3:>8.1f}ms {wall * 1e3:>9.3f}ms {kernel * 1e3:>12.3f}ms "
              f"{cold * 1e3:>10.3f}ms  {ok:<4} {algorithm}")
    print(f"\n{'scaling in the number of multi-server / load-dependent stations':<72} {'solve()':>11}  algorithm")
    for name, network in scaling():
        wall, _, _, algorithm = measure(network, max(3, args.repeats // 3))
        print(f"{name:<72} {wall * 1e3:>9.3f}ms  {algorithm}")


if __name__ == "__main__":
    main()
