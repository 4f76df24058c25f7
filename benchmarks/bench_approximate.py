"""Solve-time benchmark of approximate MVA (issue #3 targets).

Run: python benchmarks/bench_approximate.py [--repeats 15]

Median wall time of ``mva.solve(network, method, tol=1e-8)`` after a warm-up (numba
compilation and cache load are start-up, not solve time).  Demands are uniform on
[0.005, 0.05] per station, think times uniform on [0.5, 2], seeded.
"""
from __future__ import annotations

import argparse
import numpy as np

from mva import Network, Station, solve

from timing import median_time


def network(n_classes, population, n_stations, seed=2026):
    rng = np.random.default_rng(seed)
    demands = rng.uniform(0.005, 0.05, (n_stations, n_classes))
    return Network([Station(f"s{k}", "queue", demands[k]) for k in range(n_stations)],
                   population=[population] * n_classes, think_time=rng.uniform(0.5, 2.0, n_classes).tolist())


CASES = (
    ("10 classes x 50 customers x 20 stations", network(10, 50, 20), "schweitzer", 1e-3),
    ("10 classes x 50 customers x 20 stations", network(10, 50, 20), "linearizer", 100e-3),
    ("100 classes x 10 customers x 1,000 stations", network(100, 10, 1000), "schweitzer", 1.0),
    ("100 classes x 200 customers x 1,000 stations", network(100, 200, 1000), "schweitzer", 1.0),
)


def measure(net, method, repeats):
    return median_time(lambda: solve(net, method, tol=1e-8), repeats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    print(f"{'case':<46} {'method':<11} {'median':>10} {'target':>9}  {'iterations':>10}  converged")
    for name, net, method, target in CASES:
        repeats = args.repeats if target < 1 else max(3, args.repeats // 5)
        seconds, result = measure(net, method, repeats)
        outer = result.extras.get("outer_iterations")
        its = f"{result.iterations}" + (f" ({outer} outer)" if outer else "")
        print(f"{name:<46} {method:<11} {seconds * 1e3:8.3f}ms {target * 1e3:7.0f}ms  {its:>10}  "
              f"{result.converged}")


if __name__ == "__main__":
    main()
