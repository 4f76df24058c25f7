"""Speed of the reuse-distance pass and of the CMT machine, on one core.

    python benchmarks/bench_reuse.py [--references N] [--traces DIR]

(a) Exact stack distances (Fenwick tree) and StatCache sampling of a 10^8-reference
    stream, references per second and the process's peak memory (resident set).  The
    stream cycles a pool of 16 generated chunks of 2^20 references each (kept in memory,
    so generation is not timed): 60% of references to 4,096 hot blocks, 30% to 65,536
    warm ones, 10% uniform over 2^21 blocks (128 MiB); 8-byte loads, 64-byte blocks.
    Peak memory is printed after each pass: it must not grow with the trace length.
(b) The same passes over the real traces of ``data/traces/record-cmt.sh DIR`` when
    ``--traces`` is given (data references only, read from .npz, so reading is timed).
(c) The CMT machine: simulated cycles per second of four threads on one core.
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from calibration.sim.reuse import reuse_profile  # noqa: E402
from calibration.sim.traces import LOAD, Chunk  # noqa: E402

POOL, CHUNK = 16, 1 << 20


def pool(seed=1):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(POOL):
        u = rng.random(CHUNK)
        b = np.where(u < 0.6, rng.integers(0, 4096, CHUNK),
                     np.where(u < 0.9, 4096 + rng.integers(0, 65536, CHUNK), rng.integers(0, 1 << 21, CHUNK)))
        out.append(Chunk(np.full(CHUNK, LOAD, np.uint8), (b * 64).astype(np.uint64), np.full(CHUNK, 8, np.uint16),
                         np.zeros(CHUNK, bool)))
    return out


def stream(chunks, references):
    left = references
    while left > 0:
        for c in chunks:
            if left <= 0:
                return
            yield c if len(c) <= left else c.slice(0, left)
            left -= len(c)


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--references", type=int, default=100_000_000)
    ap.add_argument("--traces", metavar="DIR", help="directory of record-cmt.sh traces")
    args = ap.parse_args()
    chunks = pool()
    reuse_profile(chunks[0].slice(0, 1000))
    reuse_profile(chunks[0].slice(0, 1000), sample=0.5)        # compile outside the timing
    print(f"pool of {POOL * CHUNK:,} references in memory; peak resident {peak_mib():.0f} MiB before the passes")
    print(f"{'pass':<26} {'references':>13} {'seconds':>8} {'M refs/s':>9} {'peak MiB':>9}  notes")
    for n in sorted({args.references // 10, args.references}):
        t0 = time.perf_counter()
        p = reuse_profile(stream(chunks, n))
        dt = time.perf_counter() - t0
        print(f"{'(a) exact':<26} {p.references:>13,} {dt:>8.2f} {p.references / dt / 1e6:>9.2f} {peak_mib():>9.0f}"
              f"  {p.distinct:,} distinct blocks")
    for rate in (1e-3, 1e-4):
        t0 = time.perf_counter()
        p = reuse_profile(stream(chunks, args.references), sample=rate)
        dt = time.perf_counter() - t0
        print(f"{f'(a) sampled {rate:g}':<26} {p.references:>13,} {dt:>8.2f} {p.references / dt / 1e6:>9.2f} "
              f"{peak_mib():>9.0f}  {p.samples:,} samples")
    if args.traces:
        for path in sorted(Path(args.traces).glob("*.npz")):
            for rate in (None, 1e-3):
                t0 = time.perf_counter()
                p = reuse_profile(path, data_only=True, sample=rate)
                dt = time.perf_counter() - t0
                label = f"(b) {path.stem} " + ("exact" if rate is None else f"{rate:g}")
                print(f"{label:<26} {p.references:>13,} {dt:>8.2f} {p.references / dt / 1e6:>9.2f} "
                      f"{peak_mib():>9.0f}  with reading the .npz")
    from calibration.sim.cmt import CMTConfig, simulate_cmt
    from calibration.sim.synthetic import locality_thread
    from calibration.sim.workload import Workload

    wl = Workload("bench", tuple(locality_thread(f"t{k}", p, fp, 1_000_000, seed=k + 1, base=0x1000000 * (k + 1))
                                 for k, (p, fp) in enumerate((("random", 2 << 20), ("hot", 256 << 10),
                                                              ("stream", 512 << 10), ("random", 16 << 10)))))
    simulate_cmt(wl, CMTConfig(cycles=10_000, warmup=0))
    cfg = CMTConfig(cycles=20_000_000, warmup=0, l2=96 << 10)
    r = simulate_cmt(wl, cfg)
    print(f"(c) CMT machine, 4 threads on one core, L2 96 KiB: {r.cycles / r.seconds / 1e6:.1f} M cycles/s, "
          f"{r.instructions / r.seconds / 1e6:.1f} M instructions/s (IPC {r.ipc:.3f}; includes loading the traces)")


if __name__ == "__main__":
    main()
