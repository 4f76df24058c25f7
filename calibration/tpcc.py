"""The TPC-C model of Du & Zhang (2001), calibrated on the paper's Tables 10 and 12, judged on the rest.

:func:`calibrate` fits named unknowns of the model (:mod:`models.tpcc_smp`) to
:func:`observations` (Table 10: tpmC of C1 with 1-4 CPUs; Table 12: device utilisations of
C2-C6, read from the model's packaged tables; ``data/tpcc/calibration_observations.csv``
is the same table for ``mva calibrate``) with :func:`calibration.fit.fit`, then solves every
published case with the fitted values and reports the held-out errors: tpmC of Tables 11
and 13-17 (relative) and utilisations of Tables 11 and 18 (percentage points), plus the
paper's five qualitative conclusions (:func:`models.tpcc_smp.report.reproduce`).

:func:`one_cpu_bound` shows why no fit of this model class can meet a tight held-out
target while it also fits Table 10: the paper's one-CPU system delivers 24.6 tpmC with
48 terminals, which saturates the CPU centre (the repairman network below gives its
capacity as 24.6 tpmC to within 0.01%), so two CPUs give at most twice that, 49.2 tpmC,
while 96 of the 111 held-out tpmC values, all at two CPUs, are higher (up to 63.3).  The
bound rests on three assumptions, each true of the model: the 1- and 2-CPU cases differ
only in the CPU centre; the time spent outside it does not grow when it is slowed
(product-form monotonicity; the contention terms fall with throughput); and k CPUs have
at most k times the capacity of one (the Norton aggregate shares one memory bus).

``python -m calibration.tpcc [--fit NAME=LOW:HIGH ...] [--loss cauchy]`` prints both.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np
import pandas as pd

from models.tpcc_smp.ceiling import HELD_OUT_TPMC, _repairman_capacity, one_cpu_bound  # noqa: F401 (re-exported)

from .fit import FitResult, fit

__all__ = ["observations", "UNKNOWNS", "TPCCCalibration", "calibrate", "one_cpu_bound", "main"]


#: The default unknowns and their bounds: the cycles per instruction (the speed of the CPU
#: centre, which Table 10 measures) and the effective disk visits per transaction (the disk
#: load, which Table 12 measures).  Adding the cache hit rate, the synchronisation
#: efficiency (the CPU centre's shape in k) or the memory-bus latency fits Tables 10 and 12
#: better and predicts the rest worse (table in docs/calibration.md); a robust loss
#: trades Table 10's one-CPU value for the rest.
UNKNOWNS = ("cpu.cpi=0.2:20", "workload.disk_visit_scale=0.001:1")

HELD_OUT_UTILIZATION = (11, 18)


@dataclass
class TPCCCalibration:
    """A fit on Tables 10 and 12 and its predictions of the held-out tables."""

    fit: FitResult
    tpmc: pd.DataFrame                 # every Table 10-17 case: paper, model, rel_diff
    utilization: pd.DataFrame          # every Table 11, 12, 18 device: paper, model, diff_points
    conclusions: list                  # (claim, holds, evidence, why)

    def errors(self) -> dict:
        """Mean and max |error|: tpmC relative (fractions) on Table 10 and on the held-out
        tables, utilisations in percentage points on Table 12 and on the held-out tables."""
        def stats(values):
            values = np.abs(np.asarray(values, dtype=float))
            return {"mean": float(values.mean()), "max": float(values.max()), "values": int(values.size)}

        t, u = self.tpmc, self.utilization
        return {"tpmc_train": stats(t[t.table == 10].rel_diff),
                "tpmc_heldout": stats(t[t.table.isin(HELD_OUT_TPMC)].rel_diff),
                "utilization_train_points": stats(u[u.table == 12].diff_points),
                "utilization_heldout_points": stats(u[u.table.isin(HELD_OUT_UTILIZATION)].diff_points),
                "conclusions_holding": sum(bool(c[1]) for c in self.conclusions),
                "conclusions": len(self.conclusions)}


def observations() -> tuple[pd.DataFrame, dict]:
    """Tables 10 and 12 as a calibration table and its model documents.

    One row per operating point: ``file`` names a configuration (C1..C6), ``cpus`` is
    Table 10's CPU count, and the observed columns are ``tpmC`` and ``utilization.DEVICE``
    (fractions; the paper's disk numbers renamed to the model's by
    :func:`models.tpcc_smp.report.model_device`).  The documents are the configurations'
    model files (``{name: document}``), built from Table 9 and the mappings.
    """
    from models.tpcc_smp import data
    from models.tpcc_smp.report import model_device

    tpmc = data.published_tpmc().query("table == 10")
    rows = [{"file": "C1", "cpus": float(r.cpus), "tpmC": float(r.tpmC)} for r in tpmc.itertuples()]
    utilization = data.published_utilization().query("table == 12")
    for name, group in utilization.groupby("configuration", sort=False):
        row = {"file": name}
        for r in group.itertuples():
            device = model_device(r.device, int(r.disks), int(r.io_buses))
            row[f"utilization.{device}"] = float(r.utilization_percent) / 100.0
        rows.append(row)
    frame = pd.DataFrame(rows)
    documents = {name: {"kind": "tpcc_smp", "name": name, **data.configuration_values(name)}
                 for name in dict.fromkeys(frame["file"])}
    return frame, documents


def calibrate(unknowns=UNKNOWNS, loss: str = "linear", loss_scale: float = 0.1,
              observed=None) -> TPCCCalibration:
    """Fit ``unknowns`` (``NAME=LOW:HIGH`` strings) on Tables 10 and 12, then solve every
    published case with the fitted values.  ``loss`` is scipy's (``linear`` = least
    squares; ``soft_l1``, ``huber``, ``cauchy``, ``arctan`` down-weight rows the model
    cannot meet), ``loss_scale`` the relative residual where that starts.  ``observed``
    is a calibration table (a CSV path whose ``file`` column names model files) to use
    instead of :func:`observations`."""
    from models.tpcc_smp.report import reproduce

    frame, documents = observations() if observed is None else (observed, None)
    result = fit(None, frame, list(unknowns), loss=loss, loss_scale=loss_scale, documents=documents)
    rep = reproduce(result.values, classes=False)
    return TPCCCalibration(result, rep.tpmc, rep.utilization, rep.conclusions)


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
              f"paper's conclusions holding: {e['conclusions_holding']} of {e['conclusions']}"]
    for claim, holds, evidence, _ in cal.conclusions:
        lines.append(f"  [{'holds' if holds else 'fails'}] {claim}: {evidence}")
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
    parser = argparse.ArgumentParser(prog="python -m calibration.tpcc", description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="append", metavar="NAME=LOW:HIGH",
                        help=f"an unknown to fit (repeatable; default: {' '.join(UNKNOWNS)})")
    parser.add_argument("--loss", default="linear", choices=("linear", "soft_l1", "huber", "cauchy", "arctan"))
    parser.add_argument("--loss-scale", type=float, default=0.1)
    args = parser.parse_args(argv)
    cal = calibrate(tuple(args.fit or UNKNOWNS), loss=args.loss, loss_scale=args.loss_scale)
    print(_report(cal, one_cpu_bound()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
