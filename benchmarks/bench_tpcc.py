"""Solve-time benchmark of the Du & Zhang (2001) TPC-C SMP model (issue #4).

Run: python benchmarks/bench_tpcc.py [--repeats 7]

Median wall time of ``TPCCSMP.solve()`` for each Table 9 configuration (N = 48), for the
one-class model (MVA over n = 1..48 with the contention fixed point at each n) and the
five-class variant (exact multi-class MVA inside a fixed point), and the time of the whole
reproduction report.  The first solve, which loads numba's cache, is a warm-up.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mva.files import read_document  # noqa: E402
from mva.modelkind import model_from_document  # noqa: E402
from models.tpcc_smp.report import reproduce  # noqa: E402
from timing import median_time  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "tpcc"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    print(f"{'config':<7} {'one class':>10} {'tpmC':>7} {'five classes':>13} {'tpmC':>7}")
    for i in range(1, 10):
        doc = read_document(str(DATA / f"c{i}.toml"))
        one = model_from_document(doc)
        five = model_from_document(doc, {"model.classes": "transaction"})
        t1, s1 = median_time(one.solve, args.repeats)
        t5, s5 = median_time(five.solve, max(1, args.repeats // 2))
        print(f"C{i:<6} {t1 * 1e3:>8.1f} ms {s1.outputs['tpmC']:>7.2f} {t5 * 1e3:>10.1f} ms {s5.outputs['tpmC']:>7.2f}")
    t0 = time.perf_counter()
    rep = reproduce()
    elapsed = time.perf_counter() - t0
    mean, worst = rep.tpmc_error
    print(f"\nreproduction report (every published case, conclusions, five-class comparison): {elapsed:.2f} s "
          f"(target < 10 s); tpmC error mean {mean:.1%}, max {worst:.1%}")


if __name__ == "__main__":
    main()
