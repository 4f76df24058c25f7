"""Configurations per second of what-if sweeps (issue #8 targets).

Run: python benchmarks/bench_sweep.py [--repeats 3] [--cases 100000] [--tpcc-cases 10000]

(a) the 10-station single-class network of data/examples/ten-stations.toml at N = 48,
    one station's demand swept over 100,000 values (target >= 100,000 configurations/s);
(b) the TPC-C model (data/tpcc/c2.toml) over a grid of disk seek x rotation x transfer
    times, 10,000 configurations (target >= 10,000/s).
Each is timed through ``mva.sweep.run_sweep`` (grid to DataFrame, what ``mva solve
--sweep`` does) and, for the speed-up, against a Python loop of single solves of the same
cases (a sample, extrapolated).  Medians of ``--repeats`` runs after a warm-up; the machine
has 2 cores, which the TPC-C batch kernel uses (numba prange).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from mva import exact_mva  # noqa: E402
from mva.files import network_from_dict, read_document  # noqa: E402
from mva.grid import cartesian, parse_sweeps  # noqa: E402
from mva.sweep import run_sweep  # noqa: E402
from mva.targets import ModelTarget  # noqa: E402
from timing import median_time  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def loop_rate(solve_one, cases, sample):
    picked = cases[:: max(1, len(cases) // sample)][:sample]
    solve_one(picked[0])
    t0 = time.perf_counter()
    for case in picked:
        solve_one(case)
    return len(picked) / (time.perf_counter() - t0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--tpcc-cases", type=int, default=10_000)
    args = parser.parse_args(argv)

    ten = read_document(str(ROOT / "data" / "examples" / "ten-stations.toml"))
    demands = np.linspace(0.001, 0.1, args.cases)
    net_cases = [{"station.disk1.demand": float(d)} for d in demands]
    target = ModelTarget(ten)
    net_seconds = median_time(lambda: run_sweep(ten, net_cases, progress=False), args.repeats)[0]
    net_loop = loop_rate(lambda c: exact_mva(network_from_dict(target.document({**target.base, **c}))),
                         net_cases, 2000)

    c2 = read_document(str(ROOT / "data" / "tpcc" / "c2.toml"))
    side = max(2, round(args.tpcc_cases ** (1 / 3)))
    grid = parse_sweeps([f"disk.seek_time=0.5e6:{0.5e6 + (side - 1) * 0.05e6}:0.05e6",
                         f"disk.rotation_latency=0.6e6:{0.6e6 + (side - 1) * 0.05e6}:0.05e6",
                         f"disk.transfer_time=20000:{20000 + (side - 1) * 2000}:2000"])
    tpcc_cases = cartesian(grid)
    tpcc_seconds = median_time(lambda: run_sweep(c2, tpcc_cases, progress=False), args.repeats)[0]
    model = ModelTarget(c2)         # loop baseline: the model class's own solve, case by case
    tpcc_loop = loop_rate(model.solve_one, tpcc_cases, 1000)

    rows = [("(a) 10-station network, N = 48", len(net_cases), net_seconds, 100_000, net_loop),
            ("(b) TPC-C model C2, disk-time grid", len(tpcc_cases), tpcc_seconds, 10_000, tpcc_loop)]
    print(f"{'sweep':<38} {'cases':>8} {'seconds':>8} {'configs/s':>11} {'target':>8} "
          f"{'loop of solves/s':>17} {'speed-up':>9}")
    for name, count, seconds, target_rate, loop in rows:
        rate = count / seconds
        print(f"{name:<38} {count:>8} {seconds:>8.3f} {rate:>11,.0f} {target_rate:>8,} {loop:>17,.0f} "
              f"{rate / loop:>8.0f}x")


if __name__ == "__main__":
    main()
