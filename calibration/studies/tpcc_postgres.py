"""The TPC-C model with inputs traced from PostgreSQL, nothing fitted, against the paper.

Du, Zhang, Dong & Zhang ("Architectural effects of symmetric multiprocessors on TPC-C
commercial workload", J. Parallel and Distributed Computing 61, 2001) took their model's
inputs from POSTGRES 4.2 running TPC-C on their simulator (§4.2, Table 6).  Here the
inputs come the same way from PostgreSQL 15 (:mod:`calibration.sim.tpcc_recorder`,
:mod:`calibration.profiles.tpcc_postgres`): visits per transaction type from the traced
backends and their block I/O, the cache's hit rate at each CPU count from the
trace-driven bus machine; Table 7's service times; no parameter fitted to the paper's
tpmC.  The study prints those inputs beside Table 6, the CPU centre's rates for 1-4 CPUs,
C1's tpmC with 1-4 CPUs beside Table 10, and the paper's findings (the claims and bands
of :mod:`calibration.studies.tpcc`, written before any run) judged on this model.

Where our database differs from the paper's (said on every run, with the profile's
numbers, :func:`differences`): PostgreSQL 15 locks rows where POSTGRES 4.2 locked
tables; its transactions run several times fewer instructions and data references than
Table 6's; our disk visits are PostgreSQL's 8 KiB blocks measured with a 256 KiB buffer
pool, each costing Table 7's seek and rotation plus 32 sector transfers; a commit forces
the write-ahead log (POSTGRES 4.2 had no log: it forced data pages).

``python -m calibration.studies.tpcc_postgres [--recording DIR] [--results FILE]``
"""
from __future__ import annotations

import sys
from dataclasses import replace

import pandas as pd

from mva.arguments import OneLineParser
from models.tpcc_smp import TPCCSMP, data
from models.tpcc_smp.report import reproduce

from ..profiles.tpcc_postgres import cache_table, model_values, packaged_values, profile
from .cli import add_study_options, run_study, write_outputs
from .findings import format_findings
from .tpcc import CLAIMS as FITTED_CLAIMS
from .tpcc import HALF, findings_of

__all__ = ["CLAIMS", "inputs_table", "cpu_rates", "cpu_curve", "findings", "differences", "main"]

#: The claims and bands of :mod:`calibration.studies.tpcc` (written before any run); none
#: is in-sample here, since nothing is fitted.
CLAIMS = tuple(replace(c, why_band=HALF) for c in FITTED_CLAIMS)


def inputs_table(values: dict) -> pd.DataFrame:
    """The traced visits per transaction type beside the paper's Table 6."""
    t6 = data.visits()
    names = ("new_order", "payment", "order_status", "delivery", "stock_level")
    rows = []
    for i, name in enumerate(names):
        rows.append({"transaction": name,
                     "instructions": values["workload.instructions"][i], "table6_instructions": t6["cpu"][i],
                     "memory_refs": values["workload.memory_reads"][i] + values["workload.memory_writes"][i],
                     "table6_memory_refs": t6["memory_read"][i] + t6["memory_write"][i],
                     "disk_reads": values["workload.disk_reads"][i], "table6_disk_reads": t6["disk_read"][i],
                     "disk_writes": values["workload.disk_writes"][i], "table6_disk_writes": t6["disk_write"][i]})
    return pd.DataFrame(rows)


def cpu_rates(values: dict, cpus=(1, 2, 3, 4), busy: int = 6) -> pd.DataFrame:
    """mu_k(j), instructions per cycle of the CPU centre with j = 1..``busy`` transactions
    present, for each CPU count k (the paper's Fig. 5, whose values are not printed)."""
    rows = []
    for k in cpus:
        mu = TPCCSMP.from_values({**values, "cpus": k}).cpu_rate_function()
        rows.append({"cpus": k, **{f"j={j}": float(mu[j - 1]) for j in range(1, busy + 1)}})
    return pd.DataFrame(rows)


def cpu_curve(values: dict) -> pd.DataFrame:
    """C1 with 1-4 CPUs: the model's tpmC beside Table 10's."""
    paper = data.published_tpmc().query("table == 10")
    rows = []
    for r in paper.itertuples():
        model = TPCCSMP.from_values({**data.configuration_values("C1"), **values, "cpus": int(r.cpus)})
        rows.append({"cpus": int(r.cpus), "paper": float(r.tpmC), "model": float(model.solve().outputs["tpmC"])})
    frame = pd.DataFrame(rows)
    frame["model/paper"] = frame.model / frame.paper
    return frame


def findings(values: dict) -> list:
    """The paper's findings (:data:`CLAIMS`) judged on the model with ``values``."""
    return findings_of(reproduce(values, classes=False).tpmc, CLAIMS)


def differences(values: dict) -> list:
    """Where our database differs from the paper's POSTGRES 4.2, with this profile's numbers."""
    t = inputs_table(values)
    fewer = t.table6_instructions / t.instructions
    refs = t.table6_memory_refs / t.memory_refs
    return ["PostgreSQL 15 locks rows; POSTGRES 4.2 locked whole tables (§4.3)",
            f"our transactions run {fewer.min():.1f}-{fewer.max():.1f} times fewer instructions and "
            f"{refs.min():.1f}-{refs.max():.1f} times fewer data references than Table 6's",
            "disk visits are 8 KiB blocks read and written with a 256 KiB buffer pool, each costing Table 7's "
            "seek and rotation and 32 of its 256-byte sector transfers",
            "a commit forces the write-ahead log; POSTGRES 4.2 had no log and forced data pages"]


def _report(values: dict, rows: list) -> str:
    fmt = {"instructions": "{:,.0f}".format, "table6_instructions": "{:,.0f}".format,
           "memory_refs": "{:,.0f}".format, "table6_memory_refs": "{:,.0f}".format}
    hits = values["cpu.cache_hit_rate_by_cpus"]
    lines = ["TPC-C model with inputs traced from PostgreSQL (nothing fitted to the paper's tpmC)", "",
             "Visits per transaction (ours; the paper's Table 6):",
             inputs_table(values).to_string(index=False, formatters=fmt, float_format=lambda v: f"{v:.1f}"), "",
             "Cache hit rate per data reference (bus machine, 16 KiB, 32-byte blocks): "
             + ", ".join(f"{k} CPU{'s' if k > 1 else ''} {h:.4f}" for k, h in enumerate(hits, start=1)), "",
             "CPU centre rate mu_k(j), instructions per cycle (the stalling Norton aggregate):",
             cpu_rates(values).to_string(index=False, float_format=lambda v: f"{v:.4f}"), "",
             "C1 (1 I/O bus, 1 disk) with 1-4 CPUs, tpmC beside Table 10:",
             cpu_curve(values).to_string(index=False, float_format=lambda v: f"{v:.2f}"), "",
             format_findings(rows, "Findings against the paper (traced PostgreSQL inputs)"), "",
             "Where our database differs from the paper's POSTGRES 4.2:"]
    lines += [f"  - {d}" for d in differences(values)]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m calibration.studies.tpcc_postgres", description=__doc__.splitlines()[0])
    parser.add_argument("--recording", metavar="DIR", help="derive the inputs from this recording (mva trace tpcc) "
                                                           "instead of the packaged profile")
    add_study_options(parser, runs=False)

    def body(args, _):
        if args.recording:
            values = model_values(profile(args.recording), cache_table(f"{args.recording}/tpcc.toml"))
        else:
            values = packaged_values()
        rows = findings(values)
        print(_report(values, rows))
        write_outputs(rows, args, "TPC-C on an SMP (Du, Zhang, Dong & Zhang, JPDC 2001): findings of the model with "
                                  "inputs traced from PostgreSQL")

    return run_study(parser, argv, (), body, files=("findings", "results"))


if __name__ == "__main__":
    sys.exit(main())

