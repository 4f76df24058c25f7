"""The CPU centre of the TPC-C model (Du & Zhang (2001), eq. 3.3-3.4) from the simulator.

Prints the rates mu_k(j) of :func:`calibration.profiles.tpcc_smp.cpu_rate_table` for 1-4
CPUs and TPC-C Table 10 with the model's own CPU centre and with this one, then the
speed fitted to Table 10 with the simulator's shape.

``python -m calibration.studies.tpcc_cpu_centre [--max-jobs 8] [--references-per-job N]``
"""
from __future__ import annotations

from mva.arguments import OneLineParser, positive_int

import numpy as np

from ..profiles.tpcc_smp import cpu_rate_table, gsp_by_jobs
from .cli import run_study

__all__ = ["main"]


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m calibration.studies.tpcc_cpu_centre", description=__doc__.splitlines()[0])
    parser.add_argument("--max-jobs", type=positive_int, default=8, metavar="N",
                        help="the simulator's rates for 1..N transactions present (8)")
    parser.add_argument("--references-per-job", type=positive_int, default=1_000_000, metavar="N",
                        help="references each simulated DB process makes (1,000,000)")
    return run_study(parser, argv, (), _report, files=())


def _report(args, _chosen) -> None:
    from models.tpcc_smp import TPCCSMP, data

    base = TPCCSMP.from_values(data.configuration_values("C1"))
    table10 = data.published_tpmc().query("table == 10")
    paper = {int(c): float(t) for c, t in zip(table10.cpus, table10.tpmC, strict=False)}     # Du & Zhang (2001) Table 10
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
    for (k, e), t in zip(zip(tables, err, strict=False), tpmc(fit.x[0]), strict=False):
        print(f"  {k} CPUs: tpmC {t:.1f} (paper {paper[k]}), error {100 * e:+.1f}%")
    print(f"  mean |error| {100 * np.abs(err).mean():.1f}%, max {100 * np.abs(err).max():.1f}% (in-sample: 1 "
          f"parameter, 4 points)")


if __name__ == "__main__":
    from mva.output import exit_with

    exit_with(main, "python -m calibration.studies.tpcc_cpu_centre")


