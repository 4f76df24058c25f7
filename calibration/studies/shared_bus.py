"""The shared-bus model (:mod:`models.shared_bus`) against the simulator it is calibrated
from (Foglia, Giorgi & Prete, "Simulation study of memory performance of SMP
multiprocessors running a TPC-W workload", IEE Proc. Computers and Digital Techniques,
2004, whose three workloads it runs).

``python -m calibration.studies.shared_bus [--traces DIR] [--workload ec-server] [--references N] [--calibrate-at 2,8] [--cpus 1:16]``
simulates a workload of a TPC-W recording (``mva trace tpcw``; by default the stored
excerpts, ``--synthetic`` the generated preset) for every protocol and scheduler at the calibration
processor counts, builds the model's bus-work profile from those runs only
(:func:`calibration.profiles.shared_bus.profile_from_runs`), predicts GSP at every
processor count, simulates those too, and prints the errors.
"""
from __future__ import annotations

from mva.arguments import OneLineParser, count_list, count_range, positive_int
from mva.errors import ModelError
import json
import sys
import time

import pandas as pd

from ..profiles.shared_bus import profile_from_runs
from ..sim.bus import BusResult, BusConfig, simulate_bus
from ..sim.synthetic import generate
from .cli import check_synthetic_workload, run_study
from .tpcw import TIERS, load_workloads

__all__ = ["validate", "summary", "main"]


def validate(workload, protocols=("mesi", "amsd", "pscr"), schedulers=("random", "affinity"),
             calibrate_at=(2, 8), cpus=range(1, 17), progress=False, model_values=None,
             **config) -> pd.DataFrame:
    """Simulated vs predicted GSP (and bus utilisation) for every protocol, scheduler and
    processor count; the model sees only the runs at ``calibrate_at``."""
    from models.shared_bus import SharedBus

    rows = []
    for protocol in protocols:
        for scheduler in schedulers:
            sims: dict[int, BusResult] = {}

            def run(n, sims=sims, protocol=protocol, scheduler=scheduler):
                if n not in sims:
                    sims[n] = simulate_bus(workload, BusConfig(cpus=n, protocol=protocol, scheduler=scheduler,
                                                                 **config), progress=progress)
                return sims[n]

            profile = profile_from_runs({n: run(n) for n in calibrate_at}, **(model_values or {}))
            for n in cpus:
                sim = run(n)
                model = SharedBus.from_values({**profile, "cpus": n, **(model_values or {})}).solve().outputs
                rows.append({"protocol": protocol, "scheduler": scheduler, "cpus": n,
                             "calibration_point": n in calibrate_at, "gsp_simulated": sim.gsp,
                             "gsp_model": model["gsp"], "gsp_error": model["gsp"] / sim.gsp - 1,
                             "bus_simulated": sim.bus_utilization, "bus_model": model["bus_utilization"]})
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> dict:
    """Mean and max absolute relative GSP error, over all rows and per series."""
    err = frame["gsp_error"].abs()
    per = frame.assign(abs_error=err).groupby(["protocol", "scheduler"])["abs_error"].agg(["mean", "max"])
    return {"mean": float(err.mean()), "max": float(err.max()), "rows": len(frame),
            "per_series": {f"{p} {s}": {"mean": float(r["mean"]), "max": float(r["max"])}
                           for (p, s), r in per.iterrows()}}


def _check(args) -> None:
    """The options against each other and the workload, before any simulation."""
    if args.synthetic:
        check_synthetic_workload(args)
    else:
        if args.workload not in TIERS:
            raise ModelError("--workload", f"unknown workload {args.workload!r}; a recording has {', '.join(TIERS)}")
        args.loaded = load_workloads(args.traces, references=args.references)[args.workload]
        if args.references < len(args.loaded.processes):
            raise ModelError("--references", f"{args.workload} runs {len(args.loaded.processes)} processes: give at "
                                             f"least {len(args.loaded.processes)} references, got {args.references}")
    if len(args.calibrate_at) < 2:
        raise ModelError("--calibrate-at", "the profile is fitted on at least two processor counts, e.g. 2,8")
    if len(set(args.calibrate_at)) < len(args.calibrate_at):
        raise ModelError("--calibrate-at", f"repeats a processor count: {args.calibrate_at}")


def _report(args, _chosen) -> None:
    started = time.perf_counter()
    workload = generate(args.workload, references=args.references) if args.synthetic else args.loaded
    frame = validate(workload, calibrate_at=args.calibrate_at,
                     cpus=args.cpus, progress=sys.stderr.isatty(),
                     model_values={"service": args.service, "profile.scale": args.scale, "profile.costs": args.costs})
    s = summary(frame)
    if args.format == "json":
        print(json.dumps({"summary": s, "rows": frame.to_dict("records")}))
        return
    table = frame.pivot_table(index="cpus", columns=["protocol", "scheduler"], values="gsp_error")
    print(f"Shared-bus model vs the simulator, {args.workload} ({'generated' if args.synthetic else 'recorded'}), {args.references:,} references; calibrated at "
          f"{','.join(map(str, args.calibrate_at))} processors; GSP relative error (model / simulated - 1):")
    print((100 * table).round(2).to_string())
    print(f"\nGSP error over {s['rows']} cases: mean {100 * s['mean']:.2f}%, max {100 * s['max']:.2f}% "
          f"({time.perf_counter() - started:.0f} s)")
    for k, v in s["per_series"].items():
        print(f"  {k:<16} mean {100 * v['mean']:.2f}%  max {100 * v['max']:.2f}%")


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m calibration.studies.shared_bus", description=__doc__.splitlines()[0])
    parser.add_argument("--traces", metavar="DIR", help="a recording of mva trace tpcw (default: the stored "
                                                        "excerpts, data/traces/tpcw)")
    parser.add_argument("--synthetic", action="store_true", help="a generated preset (--workload) instead")
    parser.add_argument("--workload", default="ec-server", help="ec-server, db or web-server (default ec-server)")
    parser.add_argument("--references", type=positive_int, default=26_000_000)
    parser.add_argument("--calibrate-at", type=count_list, default=(2, 8), metavar="N,M",
                        help="processor counts the model is calibrated at (2,8)")
    parser.add_argument("--cpus", type=count_range, default=range(1, 17), metavar="FIRST:LAST",
                        help="processor counts predicted and simulated (1:16)")
    parser.add_argument("--service", choices=("exponential", "measured"), default="exponential")
    parser.add_argument("--scale", choices=("linear", "log", "power"), default="linear")
    parser.add_argument("--costs", choices=("mix", "held"), default="mix")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    return run_study(parser, argv, (), _report, files=(), check=_check)


if __name__ == "__main__":
    from mva.output import exit_with

    exit_with(main, "python -m calibration.studies.shared_bus")


