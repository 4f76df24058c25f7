"""The TPC-C model of Du & Zhang (2001), calibrated on the paper's Tables 10 and 12, judged on the rest.

(Du, Zhang, Dong & Zhang, "Architectural effects of symmetric multiprocessors on TPC-C
commercial workload", J. Parallel and Distributed Computing 61, 2001.)  The fit is
:func:`calibration.profiles.tpcc_smp.calibrate`; this report prints the fitted unknowns,
the held-out errors, the paper's conclusions and why a tight held-out fit and Table 10
exclude each other (:func:`models.tpcc_smp.ceiling.one_cpu_bound`).

``python -m calibration.studies.tpcc [--fit NAME=LOW:HIGH ...] [--loss cauchy] [--cpu-centre paper]``
"""
from __future__ import annotations

from mva.arguments import OneLineParser
import sys

from models.tpcc_smp.ceiling import one_cpu_bound
from models.tpcc_smp.model import CALIBRATED, CALIBRATED_PAPER_CENTRE

from ..profiles.tpcc_smp import UNKNOWNS, TPCCCalibration, calibrate
from .cli import add_study_options, run_study, write_outputs
from .findings import Claim, format_findings, judge

__all__ = ["CLAIMS", "findings", "findings_of", "main"]

PAPER = "Du, Zhang, Dong & Zhang, TPC-C on SMP systems, JPDC 2001"
HALF = "the paper's value +-50% of the effect"

#: The paper's findings (§5), each with its value from its own tables (tpmC of C2 unless
#: said; a cut is the paper's largest step of that table), and the bands that count as the
#: same magnitude, written before any run.  Tables 10 and 12 are the fit's data, so the
#: CPU findings are in-sample.
CLAIMS = (
    Claim("disk-rotation", PAPER, "§5.4, Table 15", "Cutting the disk rotation latency by 40% (1.5 to 0.9 M "
          "cycles) raises tpmC by 16.7%", "tpmC(rotation 0.9e6) / tpmC(1.5e6) - 1, C2", 0.167, (0.084, 0.251), HALF),
    Claim("disk-seek", PAPER, "§5.4, Table 14", "Cutting the seek time by 40% (1 to 0.6 M cycles) raises tpmC by "
          "10.8%", "tpmC(seek 0.6e6) / tpmC(1e6) - 1, C2", 0.108, (0.054, 0.162), HALF),
    Claim("disk-transfer", PAPER, "§5.4, Table 16", "Cutting the transfer time by 40% raises tpmC by 6.6%",
          "tpmC(transfer 25200) / tpmC(42000) - 1, C2", 0.066, (0.033, 0.099), HALF),
    Claim("disk-order", PAPER, "§5.4, Tables 14-16", "Rotation latency matters more than seek time, which matters "
          "more than transfer time", "share of C2-C6 where the 40% cuts rank rotation > seek > transfer", 1.0,
          (1.0, 1.0), "all five configurations, as the tables show", neutral=0.5),
    Claim("second-bus", PAPER, "§5.3, Table 14", "A second I/O bus (C3 to C4) raises tpmC by 15.6%",
          "tpmC(C4) / tpmC(C3) - 1", 0.156, (0.078, 0.234), HALF),
    Claim("bus-over-disks", PAPER, "§5.3, Table 14", "A second I/O bus helps more than doubling the disks on one "
          "bus (C2 to C3: +3.2%)", "gain(C3 to C4) - gain(C2 to C3)", 0.124, (0.062, 0.186), HALF),
    Claim("memory-latency", PAPER, "§5.2, Table 11", "Halving the memory and memory-bus latency raises tpmC by "
          "26.3% (47.2 to 59.6)", "tpmC(latency 50) / tpmC(100) - 1, C2", 0.263, (0.131, 0.394), HALF),
    Claim("allocation-e", PAPER, "§5.5, Table 17", "Allocation E is the best, 6.0% above the next (B)",
          "tpmC(E) / max(tpmC(A-D)) - 1, C6", 0.060, (0.030, 0.089), HALF),
    Claim("cpus-1-to-2", PAPER, "§5.1, Table 10", "A second CPU nearly doubles tpmC (+91.9%)",
          "tpmC(2 CPUs) / tpmC(1) - 1, C1", 0.919, (0.46, 1.38), HALF + " (in-sample: Table 10 is fitted)"),
    Claim("cpus-2-to-4", PAPER, "§5.1, Table 10", "Beyond two CPUs tpmC grows little (+13.3% from 2 to 4)",
          "tpmC(4 CPUs) / tpmC(2) - 1, C1", 0.133, (0.067, 0.2), HALF + " (in-sample: Table 10 is fitted)"),
)


def findings(cal: TPCCCalibration) -> list:
    """The paper's findings with the fitted model's values and verdicts."""
    return findings_of(cal.tpmc)


def findings_of(m, claims=CLAIMS) -> list:
    """The paper's findings (``claims``, :data:`CLAIMS` or the same with other band texts)
    judged on a reproduction's tpmC rows (``table``, ``configuration``, ``value``,
    ``mapping``, ``model``: :func:`models.tpcc_smp.report.reproduce`)."""

    def model(table, configuration, value=None) -> float:
        rows = m[(m.table == table) & (m.configuration == configuration)]
        if value is not None:
            rows = rows[rows.value == str(value)]
        return float(rows.model.iloc[0])

    cuts = {c: [model(tb, c, lo) / model(tb, c, hi) - 1 for tb, lo, hi in ((15, 900000, 1500000),
                                                                          (14, 600000, 1000000), (16, 25200, 42000))]
            for c in ("C2", "C3", "C4", "C5", "C6")}
    c2, c3, c4 = (model(14, c, 1000000) for c in ("C2", "C3", "C4"))
    others = max(float(m[(m.table == 17) & (m.mapping == a)].model.iloc[0]) for a in "ABCD")
    measured = {"disk-rotation": cuts["C2"][0], "disk-seek": cuts["C2"][1], "disk-transfer": cuts["C2"][2],
                "disk-order": sum(r > s > x for r, s, x in cuts.values()) / len(cuts),
                "second-bus": c4 / c3 - 1, "bus-over-disks": (c4 / c3 - 1) - (c3 / c2 - 1),
                "memory-latency": model(11, "C2", "50;5") / model(11, "C2", "100;10") - 1,
                "allocation-e": float(m[(m.table == 17) & (m.mapping == "E")].model.iloc[0]) / others - 1,
                "cpus-1-to-2": model(10, "mu2") / model(10, "mu1") - 1,
                "cpus-2-to-4": model(10, "mu4") / model(10, "mu2") - 1}
    return judge(claims, measured)


def _report(cal: TPCCCalibration, bound: dict) -> str:
    e = cal.errors()
    est = cal.fit.estimates
    lines = [f"TPC-C model (Du & Zhang, 2001) fitted on Tables 10 and 12 ({cal.fit.errors['train']['values']} observed "
             "values), predicting Tables 11 and 13-18", "", "Fitted unknowns (95% intervals from the Jacobian):"]
    for name, row in est.iterrows():
        lines.append(f"  {name:<28} {row.value:.6g}  [{row.low:.6g}, {row.high:.6g}]")
    pct = lambda s: f"mean {100 * s['mean']:.1f}%, max {100 * s['max']:.1f}% ({s['values']} values)"  # noqa: E731
    pts = lambda s: f"mean {s['mean']:.1f}, max {s['max']:.1f} points ({s['values']} values)"  # noqa: E731
    lines += ["", f"tpmC, Table 10 (fitted):            {pct(e['tpmc_train'])}",
              f"utilisation, Table 12 (fitted):     {pts(e['utilization_train_points'])}",
              f"tpmC, Tables 11, 13-17 (held out):  {pct(e['tpmc_heldout'])}",
              f"utilisation, Tables 11, 18 (held out): {pts(e['utilization_heldout_points'])}",
              ""]
    lines.append(format_findings(findings(cal), "Findings against the paper (the fitted model)"))
    t10 = cal.tpmc[cal.tpmc.table == 10]
    lines += ["", "Table 10: " + ", ".join(f"{r.configuration} paper {r.paper:.1f} model {r.model:.1f}"
                                           for r in t10.itertuples()), "",
              "Why a tight held-out fit and Table 10 exclude each other:",
              f"  one CPU at {bound['one_cpu_tpmc']:.1f} tpmC is saturated: capacity "
              f"{bound['one_cpu_capacity_tpmc']:.3f} tpmC (repairman MVA, {bound['outside_cpu_s']:.2f} s outside "
              "the CPU centre at most)",
              f"  two CPUs: at most {bound['two_cpu_ceiling_tpmc']:.1f} tpmC; "
              f"{bound['held_out_above_ceiling']} of {bound['held_out_rows']} held-out values are higher "
              f"(up to {bound['held_out_max_tpmc']:.1f})",
              f"  a model exact on the one-CPU value has held-out error at least mean "
              f"{100 * bound['least_heldout_error']['mean']:.1f}%, max {100 * bound['least_heldout_error']['max']:.1f}%",
              f"  held-out mean 5% needs the one-CPU value over-predicted by >= "
              f"{100 * bound['one_cpu_overprediction_for_mean_5pct']:.1f}%, max 10% by >= "
              f"{100 * bound['one_cpu_overprediction_for_max_10pct']:.1f}%"]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m calibration.studies.tpcc", description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="append", metavar="NAME=LOW:HIGH",
                        help=f"an unknown to fit (repeatable; default: {' '.join(UNKNOWNS)})")
    parser.add_argument("--loss", default="linear", choices=("linear", "soft_l1", "huber", "cauchy", "arctan"))
    parser.add_argument("--loss-scale", type=float, default=0.1)
    parser.add_argument("--cpu-centre", choices=("stalling", "paper"), default="stalling",
                        help="the model's CPU centre (model.cpu_centre; default stalling)")
    add_study_options(parser, runs=False)

    def body(args, _):
        cal = calibrate(tuple(args.fit or UNKNOWNS), loss=args.loss, loss_scale=args.loss_scale,
                        fixed={"model.cpu_centre": args.cpu_centre,
                               # the fit starts from the centre's own calibrated values
                               **(CALIBRATED_PAPER_CENTRE if args.cpu_centre == "paper" else CALIBRATED)})
        print(_report(cal, one_cpu_bound()))
        write_outputs(findings(cal), args, "TPC-C on an SMP (Du, Zhang, Dong & Zhang, JPDC 2001): findings of the "
                                           "model fitted on Tables 10 and 12")

    return run_study(parser, argv, (), body, files=("findings", "results"))


if __name__ == "__main__":
    sys.exit(main())


