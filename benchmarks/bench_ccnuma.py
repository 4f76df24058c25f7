"""Speed of the cc-NUMA simulator: simulated references per second at 64 nodes for each
kernel and option (trace generation included), and peak memory of long GE runs
(``python benchmarks/bench_ccnuma.py [--long REFERENCES]``; the issue's bound is for
10^8 references).  Each long run is a fresh process, so its peak resident size is its
own: the kernels make their traces as the simulator reads them, so the peak should
grow with the matrix (the line tables), not with the references."""
from __future__ import annotations

import argparse
import multiprocessing
import resource
import time

from calibration.sim.ccnuma import CCNUMAConfig, simulate_ccnuma
from calibration.sim.parallel import CCNUMA_KERNELS, parallel_kernel


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nodes", type=int, default=64)
    p.add_argument("--long", type=int, default=0, help="also run GE repeatedly up to this many references")
    args = p.parse_args()
    print(f"{'kernel':<16} {'options':<22} {'references':>12} {'seconds':>8} {'M refs/s':>9}")
    simulate_ccnuma(parallel_kernel("ge", processes=4, size=16))       # compile outside the timings
    for kernel in CCNUMA_KERNELS:
        wl = parallel_kernel(kernel, processes=args.nodes)
        for label, cfg in (("ft/none", CCNUMAConfig()), ("rr/basic", CCNUMAConfig(placement="round-robin",
                                                                                  proxies="basic")),
                           ("ft/reactive buffer 8", CCNUMAConfig(buffer=8, proxies="reactive"))):
            t = time.perf_counter()
            r = simulate_ccnuma(wl, cfg)
            s = time.perf_counter() - t
            refs = r.totals["references"]
            print(f"{kernel:<16} {label:<22} {refs:>12,} {s:>8.2f} {refs / s / 1e6:>9.2f}")
    if args.long:
        sizes = []
        for target in (args.long // 16, args.long // 4, args.long):
            size = 128
            while size ** 3 < target:       # GE's references grow as n^3
                size += 64
            sizes.append(size)
        print(f"\n{'long GE run':<16} {'references':>14} {'seconds':>8} {'M refs/s':>9} {'peak RSS MiB':>13}")
        with multiprocessing.get_context("spawn").Pool(1, maxtasksperchild=1) as pool:
            for size, refs, seconds, peak in pool.map(_long_run, [(args.nodes, n) for n in sorted(set(sizes))],
                                                      chunksize=1):
                print(f"{'n=' + str(size):<16} {refs:>14,} {seconds:>8.1f} {refs / seconds / 1e6:>9.2f} {peak:>13.0f}")


def _long_run(job):
    nodes, size = job
    wl = parallel_kernel("ge", processes=nodes, size=size)
    t = time.perf_counter()
    r = simulate_ccnuma(wl, CCNUMAConfig())
    seconds = time.perf_counter() - t
    return size, r.totals["references"], seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

if __name__ == "__main__":
    main()
