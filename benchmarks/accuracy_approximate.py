"""Accuracy of approximate MVA against exact MVA on random closed networks (issue #3).

Run: python benchmarks/accuracy_approximate.py [--count 300] [--seed 2026]

Draws ``count`` networks with 1-6 classes and 2-15 stations (queues, delays, multi-server
stations with 1-3 servers, load-dependent stations with increasing concave capacity
functions of 1-4 values), populations up to 50 per class reduced until the exact lattice
has at most 20,000 points, think time for about half the classes.  Each is solved exactly
and by every approximate method; the table gives, per method, the mean / 95th percentile /
maximum relative error of

* class throughput (every closed class of every network is one sample),
* system response time (throughput-weighted over classes; one sample per network),
* station queue length (all classes; every station of every network),

and the share of networks on which the method converged.  A second table splits the
throughput errors by whether the network has multi-server or load-dependent stations.
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


def _has_marginal_stations(network):
    return any(s.kind == "multi" and s.servers > 1 or s.kind == "ld" and len(s.capacity_function()) > 1
               for s in network.stations)


def relative(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    keep = np.abs(b) > 1e-12
    return np.abs(a[keep] - b[keep]) / np.abs(b[keep])


def run(count, seed):
    errors = {v: {"throughput": [], "response": [], "queue": [], "converged": [], "seconds": [],
                  "throughput_plain": [], "throughput_marginal": []} for v in VARIANTS}
    for network in random_study_sample(seed, count, max_classes=6, max_stations=15,
                                       max_population=50, max_lattice=20_000):
        exact = solve(network)
        marginal = _has_marginal_stations(network)
        for variant in VARIANTS:
            method, multiserver = variant
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NumericalWarning)
                result = solve(network, method, multiserver=multiserver)
            e = errors[variant]
            x_err = relative(result.throughput, exact.throughput)
            e["throughput"].extend(x_err)
            e["throughput_marginal" if marginal else "throughput_plain"].extend(x_err)
            e["response"].extend(relative([result.system_response_time], [exact.system_response_time]))
            e["queue"].extend(relative(result.queue_length.sum(axis=1), exact.queue_length.sum(axis=1)))
            e["converged"].append(result.converged)
            e["seconds"].append(result.solve_seconds)
    return errors


def _stats(values):
    v = np.asarray(values)
    return f"{100 * v.mean():7.3f} {100 * np.percentile(v, 95):7.3f} {100 * v.max():7.3f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    errors = run(args.count, args.seed)
    print(f"{args.count} random networks (seed {args.seed}); relative errors in percent: mean / p95 / max\n")
    head = f"{'method':<24} {'class throughput':>23}   {'system response time':>23}   " \
           f"{'station queue length':>23}   {'converged':>9}  {'max solve':>9}"
    print(head)
    print("-" * len(head))
    for (method, multiserver), e in errors.items():
        print(f"{method + ' / ' + multiserver:<24} {_stats(e['throughput'])}   {_stats(e['response'])}   "
              f"{_stats(e['queue'])}   {100 * np.mean(e['converged']):8.1f}%  {1e3 * max(e['seconds']):7.1f}ms")
    print("\nclass throughput by network type (mean / p95 / max, percent)\n")
    print(f"{'method':<24} {'queue/delay only':>23}   {'with multi or ld':>23}")
    for (method, multiserver), e in errors.items():
        plain = _stats(e["throughput_plain"]) if e["throughput_plain"] else "-"
        print(f"{method + ' / ' + multiserver:<24} {plain:>23}   {_stats(e['throughput_marginal'])}")
    print(f"\n({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
