"""Accuracy of the non-product-form MVA (:mod:`mva.nonproduct`) against simulation, on
random closed networks with priority stations, FCFS stations with class-dependent
service, and non-exponential FCFS service at single- and multi-server stations
(issue #36).

Run: python benchmarks/accuracy_nonproduct.py [--count 300] [--seed 2036] [--workers 2]
     [--precision 0.005] [--csv FILE] [--cache DIR] [--kinds priority fcfs scv] [--partial-only]

For each kind (:data:`mva.random_networks.NONPRODUCT_KINDS`) ``count`` networks are
drawn from ``seed`` (:func:`mva.random_networks.random_nonproduct_network`; the
approximation's choices were made on other networks, see the module notes of
:mod:`mva.nonproduct`), each simulated until every class's response time has a 95%
half-width of at most ``precision`` of itself, and solved by ``auto`` (the
non-product-form MVA) and by what the project did before (FCFS solved as processor
sharing; priority refused, shown here solved as processor sharing; non-exponential
multi-server service refused, shown here as exponential), and by Linearizer with the
non-product-form terms (what ``auto`` ran before partial chains, on the networks that now
need them; ``--partial-only`` draws only those).

Tables (relative errors against simulation, percent): per kind and load (the busiest
station's simulated utilisation below / at least 0.8), mean and max of class throughput
and class response time, for the new method and the old treatment; then the flagging
audit: networks whose worst class-throughput error exceeds 5%, and how many were flagged
(``Result.accuracy`` starting "unreliable").
"""
from __future__ import annotations

import argparse
import time

from mva.random_networks import NONPRODUCT_KINDS
from mva.validation import MAX_EVENTS, nonproduct_report, nonproduct_rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300, help="networks per kind")
    parser.add_argument("--seed", type=int, default=2036)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--precision", type=float, default=0.005)
    parser.add_argument("--max-events", type=int, default=MAX_EVENTS)
    parser.add_argument("--csv", help="write one row per network here")
    parser.add_argument("--cache", help="a folder keeping the simulations, so that a rerun only solves")
    parser.add_argument("--kinds", nargs="+", choices=NONPRODUCT_KINDS, default=list(NONPRODUCT_KINDS))
    parser.add_argument("--partial-only", action="store_true",
                        help="only the networks whose whole Markov chain is over auto's limit (partial chains)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = nonproduct_rows(args.count, args.seed, args.precision, args.kinds, args.cache, args.workers,
                           args.max_events, args.partial_only)
    if args.csv:
        rows.to_csv(args.csv, index=False)
    print(nonproduct_report(rows, args.precision))
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
