"""Accuracy of approximate MVA against exact MVA on random closed networks (issues #3, #15).

Run: python benchmarks/accuracy_approximate.py [--count 400] [--seed 2027] [--monotone-share 0.5]

Draws ``count`` networks with 1-6 classes and 2-15 stations (queues, delays, multi-server
stations with 1-3 servers, load-dependent stations with 1-4 capacity values), populations
up to 50 per class reduced until the exact lattice has at most 20,000 points, think time
for about half the classes.  A share ``--monotone-share`` of the networks has increasing
concave capacity functions; the others draw capacities uniformly on [0.3, 3] (most of
them rise and fall: a thrashing or lock-bound subsystem).  Each is solved exactly and by
every approximate method.

Tables (relative errors in percent):

1. per method: mean / 95th percentile / maximum error of class throughput (every closed
   class of every network is one sample), system response time, station queue length,
   and the share of networks on which the method converged;
2. class-throughput errors split by the networks' capacity functions (all
   non-decreasing vs some decreasing) and by whether the result was flagged
   (``accuracy`` starting with "unreliable" or ``converged`` False);
3. the flagging audit: networks whose worst class error exceeds the method's stated
   bound, and how many of those were flagged (the promise: all of them).
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from mva import NumericalWarning, solve
from mva.random_networks import random_study_sample

VARIANTS = (("schweitzer", "marginal"), ("schweitzer", "seidmann"),
            ("linearizer", "marginal"), ("linearizer", "seidmann"))
#: The per-network worst class-throughput error above which a result must be flagged.
BOUNDS = {"schweitzer": 0.10, "linearizer": 0.03}


def _decreasing_capacity(network):
    return any(s.kind == "ld" and np.any(np.diff(s.capacity_function()) < 0) for s in network.stations)


def relative(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    keep = np.abs(b) > 1e-12
    return np.abs(a[keep] - b[keep]) / np.abs(b[keep])


def run(count, seed, monotone_share):
    records = {v: [] for v in VARIANTS}
    for network in random_study_sample(seed, count, max_classes=6, max_stations=15, monotone_share=monotone_share,
                                       max_population=50, max_lattice=20_000):
        exact = solve(network)
        decreasing = _decreasing_capacity(network)
        for variant in VARIANTS:
            method, multiserver = variant
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NumericalWarning)
                result = solve(network, method, multiserver=multiserver)
            flagged = result.accuracy.startswith("unreliable") or not result.converged
            records[variant].append({
                "throughput": relative(result.throughput, exact.throughput),
                "response": relative([result.system_response_time], [exact.system_response_time]),
                "queue": relative(result.queue_length.sum(axis=1), exact.queue_length.sum(axis=1)),
                "converged": result.converged, "flagged": flagged, "decreasing": decreasing,
                "seconds": result.solve_seconds})
    return records


def _stats(values):
    v = np.concatenate(values) if values and isinstance(values[0], np.ndarray) else np.asarray(values)
    if len(v) == 0:
        return f"{'-':>7} {'-':>7} {'-':>7}"
    return f"{100 * v.mean():7.3f} {100 * np.percentile(v, 95):7.3f} {100 * v.max():7.3f}"


def _select(rows, **conditions):
    return [r["throughput"] for r in rows if all(r[k] == v for k, v in conditions.items())]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--seed", type=int, default=2027)
    parser.add_argument("--monotone-share", type=float, default=0.5)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    records = run(args.count, args.seed, args.monotone_share)
    rows0 = next(iter(records.values()))
    n_dec = sum(r["decreasing"] for r in rows0)
    print(f"{args.count} random networks (seed {args.seed}; {args.count - n_dec} with non-decreasing capacity "
          f"functions, {n_dec} with a decreasing one); relative errors in percent: mean / p95 / max\n")
    head = f"{'method':<24} {'class throughput':>23}   {'system response time':>23}   " \
           f"{'station queue length':>23}   {'converged':>9}  {'max solve':>9}"
    print(head)
    print("-" * len(head))
    for (method, multiserver), rows in records.items():
        print(f"{method + ' / ' + multiserver:<24} {_stats([r['throughput'] for r in rows])}   "
              f"{_stats([r['response'] for r in rows])}   {_stats([r['queue'] for r in rows])}   "
              f"{100 * np.mean([r['converged'] for r in rows]):8.1f}%  "
              f"{1e3 * max(r['seconds'] for r in rows):7.1f}ms")
    print("\nclass throughput by capacity functions and flag (mean / p95 / max, percent; n = networks)\n")
    print(f"{'method':<24} {'non-decreasing':>27}   {'decreasing, not flagged':>27}   {'decreasing, flagged':>27}"
          f"   {'all not flagged':>27}")
    for (method, multiserver), rows in records.items():
        cells = []
        for cond in ({"decreasing": False}, {"decreasing": True, "flagged": False},
                     {"decreasing": True, "flagged": True}, {"flagged": False}):
            sel = _select(rows, **cond)
            cells.append(f"{_stats(sel)} {len(sel):>3}")
        print(f"{method + ' / ' + multiserver:<24} " + "   ".join(f"{c:>27}" for c in cells))
    print("\nflagging audit: networks whose worst class-throughput error exceeds the bound\n")
    print(f"{'method':<24} {'bound':>6} {'above':>6} {'flagged':>8} {'unflagged above':>16} {'flagged total':>14}")
    for (method, multiserver), rows in records.items():
        bound = BOUNDS[method]
        above = [r for r in rows if r["throughput"].max() > bound]
        print(f"{method + ' / ' + multiserver:<24} {100 * bound:5.1f}% {len(above):>6} "
              f"{sum(r['flagged'] for r in above):>8} {sum(not r['flagged'] for r in above):>16} "
              f"{sum(r['flagged'] for r in rows):>14}")
    print(f"\n({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
