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
Table 6's; our disk visits are PostgreSQL's 8 KiB blocks measured with a buffer pool at
the paper's ratio of memory to database (``data/tpcc/README.md``), each costing Table 7's
seek and rotation plus 16 sector and 32 bus transfers; a commit forces the write-ahead
log (POSTGRES 4.2 had no log: it forced data pages).

``python -m calibration.studies.tpcc_postgres [--recording DIR] [--results FILE]``
"""
from __future__ import annotations

from dataclasses import replace

import pandas as pd

from mva.arguments import OneLineParser, nonnegative_int
from models.tpcc_smp import TPCCSMP, data
from models.tpcc_smp.report import reproduce

from ..profiles.tpcc_postgres import BUFFER_POOL, cache_table, model_values, packaged_values, profile
from .cli import add_study_options, run_study, write_outputs
from .findings import format_findings
from .tpcc import CLAIMS as FITTED_CLAIMS
from .tpcc import IN_SAMPLE, findings_of, machine_accuracy, what_if_rows, what_if_summary

__all__ = ["CLAIMS", "inputs_table", "cpu_rates", "cpu_curve", "findings", "regime", "differences", "main"]

#: The claims and bands of :mod:`calibration.studies.tpcc` (written before any run); none
#: is in-sample here, since nothing is fitted.
CLAIMS = tuple(replace(c, in_sample=False, why_band=c.why_band.replace(IN_SAMPLE, "")) for c in FITTED_CLAIMS)


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


def findings(values: dict, accuracy=None, rep=None) -> list:
    """The paper's findings (:data:`CLAIMS`) judged on the model with ``values``
    (``accuracy``: the model against its machine, or None when not run)."""
    rep = rep or reproduce(values, classes=False)
    return findings_of(rep.tpmc, rep.utilization, CLAIMS, accuracy=accuracy)


def regime(values: dict) -> dict:
    """Where the traced database runs: C1's tpmC with one and two CPUs and the step, and
    C2's busiest disk and the processors' load (the paper: +91.9%, Table 12: 63.4%)."""
    one, two = (TPCCSMP.from_values({**data.configuration_values("C1"), **values, "cpus": k}).solve().outputs
                for k in (1, 2))
    c2 = TPCCSMP.from_values({**data.configuration_values("C2"), **values}).solve().outputs["utilization"]
    disks = {k: u for k, u in c2.items() if k.startswith("disk_")}
    busiest = max(disks, key=disks.get)
    return {"one_cpu": one["tpmC"], "two_cpus": two["tpmC"], "step": two["tpmC"] / one["tpmC"] - 1,
            "one_cpu_processors": one["utilization"]["processors"], "c2_busiest_disk": busiest,
            "c2_disk": disks[busiest], "c2_processors": c2["processors"]}


def differences(values: dict) -> list:
    """Where our database differs from the paper's POSTGRES 4.2, with this profile's numbers."""
    t = inputs_table(values)
    fewer = t.table6_instructions / t.instructions
    refs = t.table6_memory_refs / t.memory_refs
    return ["PostgreSQL 15 locks rows; POSTGRES 4.2 locked whole tables (§4.3)",
            f"our transactions run {fewer.min():.1f}-{fewer.max():.1f} times fewer instructions and "
            f"{refs.min():.1f}-{refs.max():.1f} times fewer data references than Table 6's",
            f"disk visits are 8 KiB blocks read and written with a {BUFFER_POOL} buffer pool, "
            "each costing Table 7's seek and rotation, 16 of its 512-byte sector transfers and 32 of its 256-byte "
            "I/O bus transfers",
            "a commit forces the write-ahead log; POSTGRES 4.2 had no log and forced data pages"]


def _report(values: dict, rows: list, rep=None, machine=None) -> str:
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
             format_findings(rows, "Findings against the paper (traced PostgreSQL inputs)"), ""]
    if rep is not None:
        lines += [what_if_summary(what_if_rows(rep.tpmc)), ""]
    r = regime(values)
    lines += [f"Regime: one CPU {r['one_cpu']:.1f} tpmC (its processor {r['one_cpu_processors']:.0%} busy), two "
              f"{r['two_cpus']:.1f} ({100 * r['step']:+.1f}%; the paper +91.9%); C2's busiest disk "
              f"{r['c2_busiest_disk']} {r['c2_disk']:.0%} busy (Table 12: 63.4%), its processors {r['c2_processors']:.0%}",
              ""]
    if machine is not None:
        lines += ["The model against its simulated machine with these inputs, tpmC:",
                  machine.to_string(index=False, float_format=lambda v: f"{v:.3f}"), ""]
    lines += ["Where our database differs from the paper's POSTGRES 4.2:"]
    lines += [f"  - {d}" for d in differences(values)]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m calibration.studies.tpcc_postgres", description=__doc__.splitlines()[0])
    parser.add_argument("--recording", metavar="DIR", help="derive the inputs from this recording (mva trace tpcc) "
                                                           "instead of the packaged profile")
    parser.add_argument("--events", type=nonnegative_int, default=400_000,
                        help="events of each simulated-machine run for the accuracy check (0: skip it)")
    add_study_options(parser, runs=False)

    def check(args):
        from mva.errors import ModelError
        if args.events < 0 or 0 < args.events < 20_000:
            raise ModelError("--events", f"must be 0 (skip the machine) or at least 20000, got {args.events}")
        if args.recording is not None:
            from pathlib import Path
            if not (Path(args.recording) / "tpcc.toml").is_file():
                raise ModelError("--recording", f"{args.recording} has no tpcc.toml (record one with mva trace tpcc)")

    def body(args, _):
        if args.recording:
            values = model_values(profile(args.recording), cache_table(f"{args.recording}/tpcc.toml"))
        else:
            values = packaged_values()
        rep = reproduce(values, classes=False)
        accuracy, machine = (None, None) if args.events == 0 else machine_accuracy(values, args.events)
        rows = findings(values, accuracy, rep)
        print(_report(values, rows, rep, machine))
        r = regime(values)
        appendix = [("Where the traced database runs",
                     f"one CPU {r['one_cpu']:.1f} tpmC (its processor {r['one_cpu_processors']:.0%} busy), two "
                     f"{r['two_cpus']:.1f} ({100 * r['step']:+.1f}%; the paper +91.9%); C2's busiest disk "
                     f"{r['c2_busiest_disk']} {r['c2_disk']:.0%} busy (Table 12: 63.4%), its processors "
                     f"{r['c2_processors']:.0%}"),
                    ("What-if rows of Tables 11 and 13-17, by effect", what_if_summary(what_if_rows(rep.tpmc)))]
        if machine is not None:
            appendix.append(("The model against its simulated machine, tpmC (C1-C9)",
                             machine.to_string(index=False, float_format=lambda v: f"{v:.3f}")))
        write_outputs(rows, args, "TPC-C on an SMP (Du, Zhang, Dong & Zhang, JPDC 2001): findings of the model with "
                                  "inputs traced from PostgreSQL", appendix)

    return run_study(parser, argv, (), body, files=("findings", "results"), check=check)


if __name__ == "__main__":
    from mva.output import exit_with

    exit_with(main, "python -m calibration.studies.tpcc_postgres")

