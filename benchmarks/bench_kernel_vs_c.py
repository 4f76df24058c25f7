"""Exact-MVA kernel speed against a tight C loop of the same recursion (issue #15, item 5).

Run: python benchmarks/bench_kernel_vs_c.py [--repeats 50]

Compiles ``benchmarks/mva_loop.c`` with the machine's C compiler (``cc -O2``) into a
temporary directory and calls it through ctypes, then times, on the same networks of
queue stations and in the same run:

* the C loop;
* the numba kernel alone (:func:`mva._exact_kernels.closed_lattice_mva` or
  :func:`~mva._exact_kernels.single_class_mva`, called directly on packed arrays);
* ``mva.solve(network)`` on a network already solved once (a warm call: dispatch, the
  cached solver plan, the kernel, and the Result);

as medians, and the ratios to C.  The issue's targets: kernel <= 2x C on the multi-class
case, a warm single-class solve at N = 1,000 <= 2x C.
"""
from __future__ import annotations

import argparse
import ctypes
import pathlib
import statistics
import subprocess
import tempfile
import time

import numpy as np

from mva import Network, Station, solve
from mva import _exact_kernels
from mva.plan import SolverPlan

HERE = pathlib.Path(__file__).resolve().parent


def compile_c(directory):
    library = pathlib.Path(directory) / "mva_loop.so"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", str(HERE / "mva_loop.c"), "-o", str(library)], check=True)
    lib = ctypes.CDLL(str(library))
    dbl, lng = ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_long)
    lib.lattice_mva.argtypes = [ctypes.c_int, ctypes.c_int, dbl, dbl, lng, dbl]
    lib.single_mva.argtypes = [ctypes.c_int, ctypes.c_long, dbl, ctypes.c_double, dbl, dbl]
    return lib


def median_seconds(func, repeats):
    func()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def ptr(array, kind=ctypes.c_double):
    return array.ctypes.data_as(ctypes.POINTER(kind))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(2026)
    with tempfile.TemporaryDirectory() as tmp:
        lib = compile_c(tmp)
        print(f"{'case':<44} {'C loop':>10} {'kernel':>10} {'x C':>6} {'warm solve':>11} {'x C':>6}")
        # multi-class lattice: 3 classes x 30 customers x 10 queues
        demand = np.ascontiguousarray(rng.uniform(0.01, 0.1, (10, 3)))
        think = np.array([1.0, 2.0, 0.5])
        population = np.array([30, 30, 30], dtype=np.int64)
        net = Network([Station(f"q{k}", "queue", demand[k]) for k in range(10)], population=population.tolist(),
                      think_time=think.tolist())
        _report(lib, "3 classes x 30 customers x 10 queues", net, demand, think, population, args.repeats,
                c_call=lambda out: lib.lattice_mva(10, 3, ptr(demand), ptr(think),
                                                   ptr(population, ctypes.c_long), ptr(out)),
                kernel=_exact_kernels.closed_lattice_mva)
        # single class, N = 1,000, 10 queues
        d1 = np.ascontiguousarray(rng.uniform(0.01, 0.1, (10, 1)))
        net1 = Network([Station(f"q{k}", "queue", d1[k]) for k in range(10)], population=[1_000], think_time=[1.0])
        queue = np.zeros(10)
        _report(lib, "1 class, N = 1,000, 10 queues", net1, d1, np.array([1.0]), np.array([1_000]), args.repeats,
                c_call=lambda out: lib.single_mva(10, 1_000, ptr(np.ascontiguousarray(d1[:, 0])), 1.0, ptr(out),
                                                  ptr(queue)),
                kernel=_exact_kernels.single_class_mva)


def _report(lib, name, net, demand, think, population, repeats, c_call, kernel):
    out = np.zeros(len(population))
    c_seconds = median_seconds(lambda: c_call(out), repeats)
    plan = SolverPlan.of(net)
    comp_index = np.full(net.n_stations, -1, dtype=np.int64)
    no_comp = np.empty((1, 1, 1))
    args = (plan.closed_demand, plan.is_delay, plan.table, plan.cap_len, plan.tracked, plan.think,
            plan.population, comp_index, no_comp, plan.residual)
    kernel_seconds = median_seconds(lambda: kernel(*args), repeats)
    result = solve(net)
    np.testing.assert_allclose(result.throughput, out, rtol=1e-10)   # the same recursion
    solve_seconds = median_seconds(lambda: solve(net), repeats)
    print(f"{name:<44} {c_seconds * 1e3:8.4f}ms {kernel_seconds * 1e3:8.4f}ms {kernel_seconds / c_seconds:5.2f}x "
          f"{solve_seconds * 1e3:9.4f}ms {solve_seconds / c_seconds:5.2f}x")


if __name__ == "__main__":
    main()
