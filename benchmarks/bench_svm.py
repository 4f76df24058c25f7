"""Speed of the SVM study: the simulator (references per second, HLRC and SC, 16 nodes)
and the layered model (one solve, MVA and simulation).

    python benchmarks/bench_svm.py
"""
import time

from calibration.sim.parallel import SVM_KERNELS as KERNELS, parallel_kernel
from calibration.sim.svm import SVMConfig, simulate_svm
from calibration.profiles.svm_cluster import application_values
from calibration.studies.svm import GRANULARITY
from models.svm_cluster import SVMCluster


def main():
    simulate_svm(parallel_kernel("water", processes=4, size=32), SVMConfig())      # compile
    simulate_svm(parallel_kernel("water", processes=4, size=32), SVMConfig("sc", 64))
    print(f"{'kernel':<22} {'protocol':>8} {'references':>12} {'seconds':>8} {'M refs/s':>9} "
          f"{'MVA solve s':>12} {'sim solve s':>12}")
    for name in [f"{k}-{v}" for k in KERNELS for v in ("original", "restructured")]:
        wl = parallel_kernel(name)
        runs = {}
        for cfg in (SVMConfig(), SVMConfig("sc", GRANULARITY[name.partition("-")[0]])):
            t = time.perf_counter()
            r = simulate_svm(wl, cfg)
            dt = time.perf_counter() - t
            runs[cfg.protocol] = r
            print(f"{name:<22} {cfg.protocol:>8} {r.totals['references']:>12,} {dt:>8.2f} "
                  f"{r.totals['references'] / dt / 1e6:>9.1f}", end="")
            if cfg.protocol == "sc":
                values = application_values(runs["hlrc"], r)
                times = []
                for method in ("auto", "simulation"):
                    t = time.perf_counter()
                    SVMCluster({**values, "method": method, "events": 1_000_000}).solve()
                    times.append(time.perf_counter() - t)
                print(f" {times[0]:>12.2f} {times[1]:>12.2f}")
            else:
                print()


if __name__ == "__main__":
    main()
