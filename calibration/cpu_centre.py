"""The CPU centre of the TPC-C model (Du & Zhang (2001), eq. 3.3-3.4) from the simulator.

Du & Zhang (2001) model the k processors with their caches and memory bus as a flow-equivalent
service centre whose rate mu_k(j) (instructions per cycle with j runnable transactions)
comes from its Fig. 5.  Here the shape of that function comes from simulator runs of the
DB workload (Foglia, Giorgi & Prete (2004) Table 3): j database processes on k processors give the global
system power GSP(k, j), which already contains the bus contention, the coherence misses
and the time slicing of j > k processes.  The absolute speed of one processor stays the
TPC-C model's own (its Norton aggregate at j = 1), because our simulator's cycles per
reference are not the paper machine's:

    mu_k(j) = mu_model(1) * GSP(k, j) / GSP(1, 1)          [REC]

``python -m calibration.cpu_centre [--max-jobs 8] [--references-per-job N]`` prints the
rates and TPC-C Table 10 (1-4 CPUs) with the model's own CPU centre and with this one.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace

import numpy as np

from .sim.bus import simulate
from .sim.synthetic import PRESETS, Application

__all__ = ["gsp_by_jobs", "cpu_rate_table", "main"]


def _db_jobs(jobs: int, references_per_job: int, seed: int = 1):
    """The DB preset's statistics with ``jobs`` PostgreSQL processes and no utilities
    (each process keeps the preset's per-process footprint)."""
    from .sim.synthetic import generate

    base = PRESETS["db"]
    pg = next(a for a in base.applications if a.name == "postgresql")
    per_process = pg.footprint / pg.count
    app = Application("postgresql", jobs, int(round(per_process * jobs)), True)
    user = per_process * jobs
    request = replace(base, name=f"db-{jobs}", applications=(app,),
                      distinct_blocks=int(round(user / (1 - base.kernel_footprint))),
                      shared_blocks=min(base.shared_blocks, int(user * 0.04)) if jobs > 1 else 0,
                      shared_access=base.shared_access if jobs > 1 else 0.0,
                      shared_write=base.shared_write if jobs > 1 else 0.0,
                      references=jobs * references_per_job, seed=seed)
    return generate(request)


def gsp_by_jobs(cpus: int, max_jobs: int, references_per_job: int = 1_000_000, **config) -> np.ndarray:
    """GSP of j = 1..max_jobs DB processes on ``cpus`` processors (simulator)."""
    out = np.empty(max_jobs)
    for j in range(1, max_jobs + 1):
        out[j - 1] = simulate(_db_jobs(j, references_per_job), cpus=cpus, **config).gsp
    return out


def cpu_rate_table(model, cpus: int, max_jobs: int = 8, references_per_job: int = 1_000_000,
                   reference_gsp: float | None = None, **config) -> list:
    """``cpu.rate`` for the TPC-C ``model`` with ``cpus`` processors: its own one-CPU
    rate times GSP(cpus, j) / GSP(1, 1) for j = 1..max_jobs (constant beyond)."""
    mu1 = float(model.replace(cpus=1, **{"cpu__rate": ()}).cpu_rate_function()[0])
    if reference_gsp is None:
        reference_gsp = gsp_by_jobs(1, 1, references_per_job, **config)[0]
    gsp = gsp_by_jobs(cpus, max_jobs, references_per_job, **config)
    return [float(mu1 * g / reference_gsp) for g in gsp]


def main(argv=None) -> int:
    from models.tpcc_smp import TPCCSMP, data

    parser = argparse.ArgumentParser(prog="python -m calibration.cpu_centre", description=__doc__.splitlines()[0])
    parser.add_argument("--max-jobs", type=int, default=8)
    parser.add_argument("--references-per-job", type=int, default=1_000_000)
    args = parser.parse_args(argv)

    base = TPCCSMP.from_values(data.configuration_values("C1"))
    table10 = data.published_tpmc().query("table == 10")
    paper = {int(c): float(t) for c, t in zip(table10.cpus, table10.tpmC)}     # Du & Zhang (2001) Table 10
    ref = gsp_by_jobs(1, 1, args.references_per_job)[0]
    print(f"CPU centre from the simulator (DB preset, {args.references_per_job:,} references per process); "
          f"GSP(1, 1) = {ref:.3f}")
    print(f"{'CPUs':>4}  {'mu_k(j), instructions/cycle, j = 1..' + str(args.max_jobs):<60} {'tpmC model':>10} "
          f"{'tpmC sim-FESC':>13} {'paper':>6}")
    tables = {k: cpu_rate_table(base, k, args.max_jobs, args.references_per_job, reference_gsp=ref)
              for k in (1, 2, 3, 4)}
    for k, rates in tables.items():
        own = base.replace(cpus=k).solve().outputs["tpmC"]
        fed = base.replace(cpus=k, cpu__rate=tuple(rates)).solve().outputs["tpmC"]
        print(f"{k:>4}  {' '.join(f'{r:.3f}' for r in rates):<60} {own:>10.1f} {fed:>13.1f} {paper[k]:>6.1f}")
    # the shape from the simulator, the absolute speed fitted to Table 10 (one parameter)
    from scipy.optimize import least_squares

    def tpmc(scale):
        return np.array([base.replace(cpus=k, cpu__rate=tuple(scale * r for r in tables[k])).solve().outputs["tpmC"]
                         for k in tables])

    target = np.array([paper[k] for k in tables])
    fit = least_squares(lambda x: tpmc(x[0]) / target - 1, [0.5], bounds=([1e-3], [10.0]))
    err = tpmc(fit.x[0]) / target - 1
    print(f"\nwith the simulator's shape and the speed fitted to Table 10 (mu scaled by {fit.x[0]:.3f}):")
    for (k, e), t in zip(zip(tables, err), tpmc(fit.x[0])):
        print(f"  {k} CPUs: tpmC {t:.1f} (paper {paper[k]}), error {100 * e:+.1f}%")
    print(f"  mean |error| {100 * np.abs(err).mean():.1f}%, max {100 * np.abs(err).max():.1f}% (in-sample: 1 "
          f"parameter, 4 points)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
