"""Speed of the cc-NUMA simulator: simulated references per second at 64 nodes for each
kernel and option, and peak memory for a long run (``python benchmarks/bench_ccnuma.py
[--long REFERENCES]``; the issue's bound is for 10^8 references)."""
from __future__ import annotations

import argparse
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
        size = 256
        while True:       # GE's references grow as n^3
            wl = parallel_kernel("ge", processes=args.nodes, size=size)
            if size ** 3 >= args.long:
                break
            size += 64
        t = time.perf_counter()
        r = simulate_ccnuma(wl, CCNUMAConfig())
        s = time.perf_counter() - t
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"\nlong run: GE n={size}, {r.totals['references']:,} references in {s:.1f} s "
              f"({r.totals['references'] / s / 1e6:.2f} M/s); peak RSS {peak:.0f} MiB")


if __name__ == "__main__":
    main()
