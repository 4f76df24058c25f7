"""The TPC-C model of Du, Zhang, Dong & Zhang (JPDC 2001), fitted on the paper's Table 10, judged on the rest.

(Du, Zhang, Dong & Zhang, "Architectural effects of symmetric multiprocessors on TPC-C
commercial workload", J. Parallel and Distributed Computing 61, 2001.)  The fit is
:func:`calibration.profiles.tpcc_smp.calibrate`: two constants (one processor's speed
alone, the disk accesses per Table 6 disk visit) on Table 10 only.  The study prints the
fitted values, the held-out levels, one findings row per what-if of the paper (Tables 11,
13-17, the abstract; Table 10's rows marked in-sample), every what-if row of Tables 11
and 13-17 judged by its effect, the paper's accuracy claim restated as the model against
its own simulated machine, and what in the paper's tables no model can meet.

``python -m calibration.studies.tpcc [--fit NAME=LOW:HIGH ...] [--cpu-centre paper] [--events N]``
"""
from __future__ import annotations


import numpy as np
import pandas as pd

from mva.arguments import OneLineParser, positive_float
from models.tpcc_smp import data
from models.tpcc_smp.model import CALIBRATED, CALIBRATED_PAPER_CENTRE

from ..profiles.tpcc_smp import FIT_TABLES, UNKNOWNS, TPCCCalibration, calibrate
from .cli import add_study_options, run_study, write_outputs
from .findings import CHECK, Claim, format_findings, judge

__all__ = ["CLAIMS", "CUTS", "findings", "findings_of", "what_if_rows", "what_if_summary", "machine_accuracy",
           "main"]

PAPER = "Du, Zhang, Dong & Zhang, TPC-C on SMP systems, JPDC 2001"
HALF = "the paper's value +-50% of the effect"
IN_SAMPLE = " (in-sample: Table 10 is fitted)"

#: The paper's configurations of Tables 13-16, in its column order.
COLUMNS = ("C2", "C3", "C5", "C4", "C6")

#: Each per-configuration what-if: its table, the parameter, the value cut to and the base
#: value (the largest step of the table), and what the paper says of it.
CUTS = {"bus": (13, "io_bus.latency", 3072, 5120, "Cutting the I/O bus latency by 40% (5120 to 3072 cycles)"),
        "seek": (14, "disk.seek_time", 600000, 1000000, "Cutting the disk seek time by 40% (1 to 0.6 M cycles)"),
        "rotation": (15, "disk.rotation_latency", 900000, 1500000,
                     "Cutting the disk rotation latency by 40% (1.5 to 0.9 M cycles)"),
        "transfer": (16, "disk.transfer_time", 25200, 42000, "Cutting the disk transfer time by 40% (42000 to "
                                                             "25200 cycles)")}


def _tpmc(frame: pd.DataFrame, column: str, table, configuration, value=None, mapping=None) -> float:
    """``column`` of the one row of ``frame`` for a published case (table, configuration,
    the swept value, the mapping)."""
    rows = frame[(frame.table == table) & (frame.configuration == configuration)]
    if value is not None:
        rows = rows[rows.value.astype(str) == str(value)]
    if mapping is not None:
        rows = rows[rows.mapping == mapping]
    return float(rows[column].iloc[0])


def _paper_tpmc(table, configuration, value=None, mapping=None) -> float:
    return _tpmc(data.published_tpmc(), "tpmC", table, configuration, value, mapping)


def _cut_claims() -> list:
    """One claim per (what-if, configuration) of Tables 13-16, the paper's value from its table."""
    claims = []
    for name, (table, _, low, high, text) in CUTS.items():
        for c in COLUMNS:
            effect = _paper_tpmc(table, c, low) / _paper_tpmc(table, c, high) - 1
            claims.append(Claim(f"{name}-{c.lower()}", PAPER, f"§5.2-5.3, Table {table}",
                                f"{text} raises {c}'s tpmC by {100 * effect:.1f}%",
                                f"tpmC({low}) / tpmC({high}) - 1, {c}", round(effect, 4),
                                (round(0.5 * effect, 4), round(1.5 * effect, 4)), HALF, kind=CHECK))
    return claims


def _paper_cut_median(name: str) -> float:
    """The median over C2-C6 of the paper's effect of one of :data:`CUTS`."""
    table, _, low, high, _ = CUTS[name]
    return round(float(np.median([_paper_tpmc(table, c, low) / _paper_tpmc(table, c, high) - 1 for c in COLUMNS])), 4)


def _claims() -> tuple:
    c2, c3, c4 = (_paper_tpmc(14, c, 1000000) for c in ("C2", "C3", "C4"))
    c3_13, c4_13 = (_paper_tpmc(13, c, 5120) for c in ("C3", "C4"))
    e, b = _paper_tpmc(17, "C6", mapping="E"), _paper_tpmc(17, "C6", mapping="B")
    mem = _paper_tpmc(11, "C2", "50;5") / _paper_tpmc(11, "C2", "100;10") - 1
    rotation, bus = _paper_cut_median("rotation"), _paper_cut_median("bus")
    return (
        # the abstract and §7
        Claim("disk-order", PAPER, "abstract, §5.3, Tables 14-16", "Among disk parameters the rotation latency "
              "affects tpmC most, the seek time second, the transfer time least",
              "share of C2-C6 where the 40% cuts rank rotation > seek > transfer", 1.0, (1.0, 1.0),
              "all five configurations, as the tables show", neutral=0.5),
        Claim("rotation-most", PAPER, "abstract, §7, Table 15", "The disk rotation latency affects the "
              f"performance of TPC-C most significantly: a 40% cut raises tpmC by {100 * rotation:.1f}% (median "
              "of C2-C6)", "median over C2-C6 of tpmC(rotation 0.9 M) / tpmC(1.5 M) - 1", rotation,
              (round(0.5 * rotation, 4), round(1.5 * rotation, 4)), HALF),
        Claim("io-bus-latency", PAPER, "§7, Table 13", "The I/O bus latency plays an important role in performance: "
              f"a 40% cut raises tpmC by {100 * bus:.1f}% (median of C2-C6)", "median over C2-C6 of tpmC(bus latency "
              "3072) / tpmC(5120) - 1", bus, (round(0.5 * bus, 4), round(1.5 * bus, 4)), HALF),
        Claim("bus-over-disks", PAPER, "abstract, §5.2, Table 14", "Among I/O buses and disks, the number of I/O "
              "buses has the deepest impact: a second bus (C3 to C4, +15.6%) helps more than a second disk on one "
              "bus (C2 to C3, +3.2%)", "gain(C3 to C4) - gain(C2 to C3)", round(c4 / c3 - c3 / c2, 4),
              (round(0.5 * (c4 / c3 - c3 / c2), 4), round(1.5 * (c4 / c3 - c3 / c2), 4)), HALF),
        Claim("model-accuracy", PAPER, "abstract, §4.3, Fig. 6", "The queueing model is within 11.2% of the "
              "simulated machine's tpmC on C1-C9 (restated: our model against our simulated machine)",
              "max abs(model / machine - 1) of tpmC over C1-C9, 48 terminals", 0.112, (0.0, 0.112),
              "the paper's own stated range", neutral=-1.0),
        # Table 10: fitted
        Claim("cpus-1-to-2", PAPER, "§5.1, Table 10", "A second CPU nearly doubles tpmC (+91.9%)",
              "tpmC(2 CPUs) / tpmC(1) - 1, C1", 0.919, (0.46, 1.38), HALF + IN_SAMPLE, in_sample=True),
        Claim("cpus-2-to-4", PAPER, "§5.1, Table 10", "Beyond two CPUs tpmC grows little (+13.3% from 2 to 4)",
              "tpmC(4 CPUs) / tpmC(2) - 1, C1", 0.133, (0.067, 0.2), HALF + IN_SAMPLE, in_sample=True),
        # Table 11
        Claim("memory-latency", PAPER, "§5.2, Table 11", "Halving the memory and memory-bus reply latency raises "
              f"C2's tpmC by {100 * mem:.1f}% (47.2 to 59.6)", "tpmC(latency 50) / tpmC(100) - 1, C2",
              round(mem, 4), (round(0.5 * mem, 4), round(1.5 * mem, 4)), HALF),
        Claim("memory-latency-io-bus", PAPER, "§5.2, Table 11", "As memory gets faster the I/O bus becomes the "
              "bottleneck: its utilisation rises from 40.3% to 67.9%", "U(io_bus_1, latency 50) - U(latency 100), "
              "C2, percentage points", 27.6, (13.8, 41.4), HALF, kind=CHECK),
        # Tables 13-16, each configuration
        *_cut_claims(),
        Claim("second-bus", PAPER, "§5.2, Tables 13-14", f"A second I/O bus (C3 to C4) raises tpmC by "
              f"{100 * (c4 / c3 - 1):.1f}% (Tables 14-16's bases; Table 13's give {100 * (c4_13 / c3_13 - 1):.1f}%)",
              "tpmC(C4) / tpmC(C3) - 1", round(c4 / c3 - 1, 4), (round(0.5 * (c4 / c3 - 1), 4),
                                                                 round(1.5 * (c4 / c3 - 1), 4)), HALF, kind=CHECK),
        # Table 17
        Claim("allocation-e", PAPER, "§5.4, Table 17", f"Allocation E is the best, {100 * (e / b - 1):.1f}% above "
              "the next (B)", "tpmC(E) / max(tpmC(A-D)) - 1, C6", round(e / b - 1, 4),
              (round(0.5 * (e / b - 1), 4), round(1.5 * (e / b - 1), 4)), HALF),
        Claim("allocation-e-vs-one-disk", PAPER, "§5.4, §7, Table 17", "Allocation E on 2 buses and 4 disks "
              f"improves tpmC by {100 * (e / c2 - 1):.1f}% over all data on one disk", "tpmC(C6, E) / tpmC(C2) - 1",
              round(e / c2 - 1, 4), (round(0.5 * (e / c2 - 1), 4), round(1.5 * (e / c2 - 1), 4)), HALF),
        # Table 18
        Claim("allocation-e-balanced", PAPER, "§5.4, Table 18", "Allocation E balances its disks (54.2, 47.3, "
              "38.6, 46.1% busy: the busiest 1.40 times the least)", "U(busiest disk) / U(least busy disk) - 1, C6 E",
              0.404, (0.0, 0.606), "the paper's ratio +50%; any balance better than that counts", neutral=10.0,
              direction=-1, kind=CHECK),
    )


#: The findings as the paper states them (bands written before any run; see :func:`_claims`).
CLAIMS = _claims()


def _model_tpmc(m: pd.DataFrame, table, configuration, value=None, mapping=None) -> float:
    return _tpmc(m, "model", table, configuration, value, mapping)


def findings(cal: TPCCCalibration, accuracy=None) -> list:
    """The paper's findings with the fitted model's values and verdicts (``accuracy``: the
    model against the machine, :func:`machine_accuracy`, or None when not run)."""
    return findings_of(cal.tpmc, cal.utilization, accuracy=accuracy)


def findings_of(m: pd.DataFrame, u: pd.DataFrame, claims=CLAIMS, accuracy=None) -> list:
    """``claims`` judged on a reproduction's tpmC rows ``m`` and utilisation rows ``u``
    (:func:`models.tpcc_smp.report.reproduce`); ``accuracy`` as :func:`findings`."""
    cuts = {}
    for name, (table, _, low, high, _) in CUTS.items():
        for c in COLUMNS:
            cuts[f"{name}-{c.lower()}"] = _model_tpmc(m, table, c, low) / _model_tpmc(m, table, c, high) - 1
    order = sum(cuts[f"rotation-{c}"] > cuts[f"seek-{c}"] > cuts[f"transfer-{c}"]
                for c in (x.lower() for x in COLUMNS)) / len(COLUMNS)
    c2, c3, c4 = (_model_tpmc(m, 14, c, 1000000) for c in ("C2", "C3", "C4"))
    alloc = {a: _model_tpmc(m, 17, "C6", mapping=a) for a in "ABCDE"}
    ubus = u[(u.table == 11) & (u.device == "io_bus_1")].set_index("value")["model"]
    e = u[(u.table == 18) & (u.mapping == "E") & u.device.str.startswith("disk_")]["model"]
    median_cut = lambda name: float(np.median([cuts[f"{name}-{c.lower()}"] for c in COLUMNS]))  # noqa: E731
    measured = {**cuts, "disk-order": order, "rotation-most": median_cut("rotation"), "io-bus-latency": median_cut("bus"), "bus-over-disks": (c4 / c3 - 1) - (c3 / c2 - 1),
                "cpus-1-to-2": _model_tpmc(m, 10, "mu2") / _model_tpmc(m, 10, "mu1") - 1,
                "cpus-2-to-4": _model_tpmc(m, 10, "mu4") / _model_tpmc(m, 10, "mu2") - 1,
                "memory-latency": _model_tpmc(m, 11, "C2", "50;5") / _model_tpmc(m, 11, "C2", "100;10") - 1,
                "memory-latency-io-bus": float(ubus["50;5"] - ubus["100;10"]),
                "second-bus": c4 / c3 - 1,
                "allocation-e": alloc["E"] / max(alloc[a] for a in "ABCD") - 1,
                "allocation-e-vs-one-disk": alloc["E"] / c2 - 1,
                "allocation-e-balanced": float(e.max() / e.min() - 1)}
    if accuracy is not None:
        measured["model-accuracy"] = accuracy
    return judge(claims, _explained(claims, measured, m, u))


def _explained(claims, measured: dict, m: pd.DataFrame, u: pd.DataFrame) -> dict:
    """``measured`` with a note in numbers on every row the band does not take: the terminals'
    ceiling where the model's base case leaves too little room, else what in the model or
    the paper keeps the effect small (:func:`models.tpcc_smp.report.limits`)."""
    from models.tpcc_smp.report import limits

    from .findings import verdict

    n = limits()
    util = lambda table, c, device, value=None: float(u[(u.table == table) & (u.configuration == c)  # noqa: E731
                                                       & (u.device == device)
                                                       & ((u.value.astype(str) == str(value)) if value else True)]
                                                    .model.iloc[0]) / 100
    c2_disk = util(12, "C2", "disk_1")
    shares = ", ".join(f"{x:.1%}" for x in n["e_shares"])
    bases = {f"{name}-{c.lower()}": _model_tpmc(m, table, c, high)
             for name, (table, _, _, high, _) in CUTS.items() for c in COLUMNS}
    bases.update({"memory-latency": _model_tpmc(m, 11, "C2", "100;10"), "second-bus": _model_tpmc(m, 14, "C3", 1000000),
                  "allocation-e-vs-one-disk": _model_tpmc(m, 14, "C2", 1000000),
                  "cpus-1-to-2": _model_tpmc(m, 10, "mu1"), "cpus-2-to-4": _model_tpmc(m, 10, "mu2")})
    c2_room = n["ceiling"] / bases["memory-latency"] - 1
    out = dict(measured)
    for claim in claims:
        value = measured.get(claim.id)
        if value is None or claim.in_sample or verdict(claim, value) == "yes":
            continue
        base = bases.get(claim.id)
        room = n["ceiling"] / base - 1 if base else None
        column = claim.id.rsplit("-", 1)[-1]
        if room is not None and room < claim.band[0]:
            note = (f"{value:.4g}: the terminals' ceiling ({n['ceiling']:.2f} tpmC) leaves the model's base of "
                    f"{base:.1f} tpmC at most {room:+.1%}, below the band")
        elif claim.id in ("second-bus", "bus-over-disks"):
            note = (f"{value:.4g}: SCSI-2 transfers are {n['bus_share']:.1%} of an access, so one bus hardly holds two "
                    f"disks back (C3's bus {util(12, 'C3', 'io_bus_1'):.0%} busy)")
        elif column in ("c4", "c6") and base:
            left = 48 / (base / 60 / data.mix()[0]) - n["think_time"]
            note = (f"{value:.4g}: the model's {column.upper()} has {left:.2f} s of response time left to cut (base "
                    f"{base:.1f} tpmC, ceiling {n['ceiling']:.2f}); the paper's two-bus cuts reach or pass the ceiling")
        elif claim.id.startswith("bus-") or claim.id == "io-bus-latency":
            note = (f"{value:.4g}: the bus latencies are {n['bus_share']:.1%} of a disk access's hold at SCSI-2 speed, "
                    f"so a 40% cut gains at most {n['bus_gain_max']:+.1%} (the paper's C2 needs {n['bus_needed']:.0%})")
        elif claim.id.startswith(("rotation-", "seek-", "transfer-")):
            note = (f"{value:.4g}: the paper's C2 effects imply elasticities adding to {n['sum']:.2f}, a model's add to "
                    f"at most 1; the simulated machine's C2 effects are this model's (validation --what-ifs)")
        elif claim.id.startswith("memory-latency"):
            held = (f"C2 is {c2_room:.1%} below the terminals' ceiling" if c2_room < 0.05
                    else f"its disk is {c2_disk:.0%} busy")
            note = (f"{value:.4g}: memory does not hold C2 up here ({held}); the paper's C2 effects add to "
                    f"{n['sum']:.2f} where a model's add to at most 1")
        elif claim.id.startswith("allocation-e"):
            note = f"{value:.4g}: Table 5 puts {shares} of accesses on allocation E's disks 1-4"
        else:
            continue
        out[claim.id] = (value, note)
    return out


#: Each published table's base case, by the value of its swept parameter.
BASES = {11: "100;10", 13: "5120", 14: "1000000", 15: "1500000", 16: "42000"}


def what_if_rows(m: pd.DataFrame) -> pd.DataFrame:
    """Every what-if row of Tables 11 and 13-17, judged by its effect: the change from its
    table's base case in the paper and in the model, and whether the model's lies within
    +-50% of the paper's (same sign).  Table 17's allocations are changes from C2 (all
    data on one disk), the comparison the paper makes (§5.4: +24.3% for E)."""
    rows = []
    c2 = _model_tpmc(m, 14, "C2", 1000000)
    for r in m.itertuples():
        if r.table == 17:
            paper_base, model_base = _paper_tpmc(14, "C2", 1000000), c2
        elif r.table in BASES and str(r.value) != BASES[r.table]:
            base = m[(m.table == r.table) & (m.configuration == r.configuration)
                     & (m.value.astype(str) == BASES[r.table])].iloc[0]
            paper_base, model_base = base.paper, base.model
        else:
            continue
        paper, model = r.paper / paper_base - 1, r.model / model_base - 1
        rows.append({"table": r.table, "configuration": r.configuration, "mapping": r.mapping, "value": r.value,
                     "paper": paper, "model": model,
                     "within": bool(paper * model > 0 and 0.5 * abs(paper) <= abs(model) <= 1.5 * abs(paper))})
    return pd.DataFrame(rows)


def what_if_summary(rows: pd.DataFrame) -> str:
    """``what-if rows within +-50% of the paper's effect: K of N (p%)`` and one count per table."""
    per = rows.groupby("table").within.agg(["sum", "count"])
    parts = ", ".join(f"Table {t} {int(r['sum'])}/{int(r['count'])}" for t, r in per.iterrows())
    return (f"what-if rows within +-50% of the paper's effect: {int(rows.within.sum())} of {len(rows)} "
            f"({rows.within.mean():.0%}); {parts}")


def machine_accuracy(values: dict, events: int = 400_000, seed: int = 1, precision: float = 0.01) \
        -> tuple[float, pd.DataFrame]:
    """The model's tpmC against its simulated machine on C1-C9 (48 terminals), each run to
    ``precision`` (relative 95% half-width; ``events`` per run at least): the largest
    |model / machine - 1| and the table (:func:`models.tpcc_smp.validation.validate`)."""
    from models.tpcc_smp.validation import validate

    rows = validate(overrides=values, precision=precision, seed=seed, events=events).query("output == 'tpmC'")
    frame = pd.DataFrame({"configuration": rows.configuration, "model": rows.model, "machine": rows.simulation,
                          "half_width": rows.half_width, "model/machine - 1": rows.error}).reset_index(drop=True)
    return float(np.abs(frame["model/machine - 1"]).max()), frame


def _report(cal: TPCCCalibration, rows: list, what_ifs: pd.DataFrame, machine: pd.DataFrame | None) -> str:
    from models.tpcc_smp.report import budget_of_effects

    e = cal.errors()
    lines = [f"TPC-C model (Du, Zhang, Dong & Zhang, 2001) fitted on Table{'s' if len(cal.tables) > 1 else ''} "
             f"{', '.join(map(str, cal.tables))} ({cal.fit.errors['train']['values']} values), "
             "predicting Tables 11-18", "", "Fitted unknowns (95% intervals from the Jacobian):"]
    for name, row in cal.fit.estimates.iterrows():
        lines.append(f"  {name:<28} {row.value:.6g}  [{row.low:.6g}, {row.high:.6g}]")
    pct = lambda s: f"mean {100 * s['mean']:.1f}%, max {100 * s['max']:.1f}% ({s['values']} values)"  # noqa: E731
    pts = lambda s: f"mean {s['mean']:.1f}, max {s['max']:.1f} points ({s['values']} values)"  # noqa: E731
    lines += ["", f"tpmC, Table 10 (fitted):                  {pct(e['tpmc_train'])}",
              f"tpmC, Tables 11, 13-17 (held out):        {pct(e['tpmc_heldout'])}",
              f"utilisations, Tables 11, 12, 18 (held out): {pts(e['utilization_heldout_points'])}"]
    t10 = cal.tpmc[cal.tpmc.table == 10]
    lines += ["", "Table 10: " + ", ".join(f"{r.configuration} paper {r.paper:.1f} model {r.model:.1f}"
                                           for r in t10.itertuples()), ""]
    lines.append(format_findings(rows, "Findings against the paper (the fitted model)"))
    lines += ["", what_if_summary(what_ifs),
              "  (each row of Tables 11, 13-16 against its table's base, Table 17 against C2; rows: "
              "python -m models.tpcc_smp.report)"]
    if machine is not None:
        lines += ["", "The model against its simulated machine (the paper's Fig. 6 check, restated), tpmC:",
                  machine.to_string(index=False, float_format=lambda v: f"{v:.3f}")]
    lines += ["", "What the paper's tables ask that no model consistent in its time unit can give:"]
    lines += [f"  - {text}" for text in budget_of_effects()]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m calibration.studies.tpcc", description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="append", metavar="NAME=LOW:HIGH",
                        help=f"an unknown to fit (repeatable; default: {' '.join(UNKNOWNS)})")
    parser.add_argument("--tables", default=",".join(map(str, FIT_TABLES)),
                        help="the published tables fitted, comma-separated: 10 and/or 12 (default 10)")
    parser.add_argument("--loss", default="linear", choices=("linear", "soft_l1", "huber", "cauchy", "arctan"))
    parser.add_argument("--loss-scale", type=positive_float, default=0.1)
    parser.add_argument("--cpu-centre", choices=("stalling", "paper"), default="stalling",
                        help="the model's CPU centre (model.cpu_centre; default stalling)")
    parser.add_argument("--events", type=int, default=400_000,
                        help="events of each simulated-machine run for the accuracy check (0: skip it)")
    add_study_options(parser, runs=False)

    def check(args):
        from mva.errors import ModelError
        try:
            tables = tuple(int(t) for t in args.tables.split(",") if t.strip())
        except ValueError:
            raise ModelError("--tables", f"must be table numbers (10, 12), got {args.tables!r}") from None
        if not tables or set(tables) - {10, 12}:
            raise ModelError("--tables", f"must be 10 and/or 12, got {args.tables!r}")
        if args.events < 0 or 0 < args.events < 20_000:
            raise ModelError("--events", f"must be 0 (skip the machine) or at least 20000, got {args.events}")
        args.fit_tables = tables

    def body(args, _):
        start = CALIBRATED_PAPER_CENTRE if args.cpu_centre == "paper" else CALIBRATED
        cal = calibrate(tuple(args.fit or UNKNOWNS), loss=args.loss, loss_scale=args.loss_scale,
                        fixed={"model.cpu_centre": args.cpu_centre, **start}, tables=args.fit_tables)
        values = {"model.cpu_centre": args.cpu_centre, **start, **cal.fit.values}
        accuracy, machine = (None, None) if args.events == 0 else machine_accuracy(values, args.events)
        rows = findings(cal, accuracy)
        what_ifs = what_if_rows(cal.tpmc)
        print(_report(cal, rows, what_ifs, machine))
        from models.tpcc_smp.report import budget_of_effects
        appendix = [("What-if rows of Tables 11 and 13-17, by effect", what_if_summary(what_ifs) + "\n\n"
                     + what_ifs.to_string(index=False, float_format=lambda v: f"{v:+.4f}")),
                    ("What no model consistent in its time unit can give", "\n".join(budget_of_effects()))]
        if machine is not None:
            appendix.insert(1, ("The model against its simulated machine, tpmC (C1-C9)",
                                machine.to_string(index=False, float_format=lambda v: f"{v:.3f}")))
        write_outputs(rows, args, "TPC-C on an SMP (Du, Zhang, Dong & Zhang, JPDC 2001): findings of the model "
                                  "fitted on Table 10", appendix)

    return run_study(parser, argv, (), body, files=("findings", "results"), check=check)


if __name__ == "__main__":
    from mva.output import exit_with

    exit_with(main, "python -m calibration.studies.tpcc")
