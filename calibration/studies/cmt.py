"""The chip-multithreading study (Fedorova, Seltzer, Small & Nussbaum, "Throughput-oriented
scheduling on chip multithreading systems", Harvard TR-17-04, 2004, §5-§6) on our
simulator, reuse-distance models and MVA model.

An eight-thread mix (four real programs traced with valgrind's lackey, four synthetic
programs from very poor to very good locality) runs on one core of four contexts with
an 8 KiB 4-way L1 and a 12-way L2 of 48-384 KiB:

* :func:`prediction_table`: for every group of four threads and L2 size, the simulated
  L2 miss rate (misses per L2 access) against COMB and AVG predictions from each
  thread's reuse profile measured alone, and the simulated IPC against the CMT core
  model (:class:`models.cmt_core.CMTCore`) fed with predicted and with measured miss
  rates;
* :func:`scheduling_table`: round-robin against the balance-set PERF and FAIR schedules
  (:mod:`calibration.scheduling`): IPC, L2 miss rate, and the standard deviation of the
  threads' CPU shares.

``python -m calibration.studies.cmt --traces DIR`` prints both (DIR from
``data/traces/record-cmt.sh DIR``); ``--small`` runs the stored excerpts in seconds.
"""
from __future__ import annotations

import sys
from dataclasses import replace
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from mva.arguments import OneLineParser
from mva.errors import ModelError
from mva.output import refuse_overwrite

from ..profiles.cmt_core import core_model, group_prediction, predict_groups, thread_profiles
from ..scheduling import balance_set_schedule
from ..sim.cmt import CMTConfig, load_threads, simulate_cmt
from ..sim.synthetic import locality_thread
from ..sim.traces import read_trace
from ..sim.workload import Process, Workload
from .cli import add_study_options, report_findings, run_study
from .findings import Claim, judge

__all__ = ["mix_workload", "prediction_table", "scheduling_table", "L2_SIZES", "REAL_PROGRAMS", "CLAIMS", "findings", "main"]

L2_SIZES = (48 << 10, 96 << 10, 192 << 10, 384 << 10)
REAL_PROGRAMS = ("xz", "perl", "sqlite", "mawk")
SAMPLES = Path(__file__).resolve().parents[2] / "data" / "traces"
SYNTHETIC = (("random-2M", "random", 2 << 20), ("stream-512K", "stream", 512 << 10), ("hot-256K", "hot", 256 << 10),
             ("random-16K", "random", 16 << 10))


def mix_workload(traces=None, synthetic_instructions: int = 2_000_000) -> Workload:
    """The eight-thread mix: ``REAL_PROGRAMS`` from ``traces`` (a directory of .npz; the
    stored excerpts ``data/traces/<name>-excerpt.npz`` by default) and the four synthetic
    threads of ``SYNTHETIC`` with ``synthetic_instructions`` each."""
    procs = []
    for name in REAL_PROGRAMS:
        path = Path(traces) / f"{name}.npz" if traces else SAMPLES / f"{name}-excerpt.npz"
        read_trace(path)          # a missing file is named now
        procs.append(Process(name, (lambda p=path: read_trace(p)), None))
    for k, (name, pattern, footprint) in enumerate(SYNTHETIC):
        procs.append(locality_thread(name, pattern, footprint, synthetic_instructions, seed=k + 1,
                                     base=0x10000000 * (k + 1)))
    return Workload("cmt-mix", tuple(procs), description="four traced programs and four synthetic ones")


def prediction_table(workload: Workload, config: CMTConfig, sizes=L2_SIZES, group_size: int = 4,
                     profiles=None, progress: bool = False) -> pd.DataFrame:
    """One row per (L2 size, group): simulated and predicted (AVG, COMB) L2 miss rates
    per L2 access and per data reference, their error factors max(p/s, s/p) (rates
    below one miss of the run raised to it, see :func:`_factor`), and IPC:
    simulated, and of the CMT core model with predicted and with measured miss rates."""
    traces = load_threads(workload, config.block, seed=config.seed)
    profiles = profiles or thread_profiles(workload, config.block)
    rows = []
    groups = list(combinations(range(len(profiles)), group_size))
    for size in sizes:
        cfg = replace(config, l2=size, schedule="all")
        for g in _progress(groups, progress, f"L2 {size >> 10} KiB"):
            sim = simulate_cmt(None, cfg, traces=traces.subset(g))
            ps = [profiles[i] for i in g]
            row = {"l2_kib": size >> 10, "group": "+".join(workload.processes[i].name for i in g),
                   "sim_l2_miss_ratio": sim.l2_miss_ratio, "sim_l2_per_reference": sim.l2_misses_per_reference,
                   "sim_l1_miss_ratio": sim.l1_miss_ratio, "sim_ipc": sim.ipc,
                   "sim_l2_accesses": sum(t["l1_misses"] for t in sim.threads),
                   "sim_references": sum(t["references"] for t in sim.threads)}
            for method in ("avg", "comb"):
                pr = group_prediction(ps, cfg, method)
                row[f"{method}_l2_miss_ratio"] = pr["l2_miss_ratio"]
                row[f"{method}_l2_per_reference"] = pr["l2_misses_per_reference"]
                row[f"{method}_l1_miss_ratio"] = pr["l1_miss_ratio"]
                row[f"model_ipc_{method}"] = pr["ipc"]
            measured = [(t["memory_instructions"] / t["instructions"], t["l1_misses"] / t["instructions"],
                         t["l2_misses"] / t["instructions"]) for t in sim.threads]
            row["model_ipc_measured"] = core_model(*zip(*measured, strict=False), cfg).solve().outputs["ipc"]
            rows.append(row)
    df = pd.DataFrame(rows)
    for method in ("avg", "comb"):
        df[f"{method}_error_factor"] = _factor(df[f"{method}_l2_miss_ratio"], df["sim_l2_miss_ratio"],
                                               1.0 / np.maximum(df["sim_l2_accesses"], 1))
        df[f"{method}_per_reference_factor"] = _factor(df[f"{method}_l2_per_reference"], df["sim_l2_per_reference"],
                                                       1.0 / np.maximum(df["sim_references"], 1))
    for how in ("avg", "comb", "measured"):
        df[f"model_ipc_{how}_error"] = df[f"model_ipc_{how}"] / df["sim_ipc"] - 1
    return df


def _factor(a, b, resolution):
    """The error factor max(a/b, b/a) of rates measured to ``resolution`` (one miss in
    the simulated run's accesses): a rate below it, zero included, is raised to it first,
    since a run that saw no miss says only "fewer than one".  Always finite, and 1 when
    both are below the resolution."""
    floor = np.asarray(resolution, float)
    a, b = np.maximum(np.asarray(a, float), floor), np.maximum(np.asarray(b, float), floor)
    return np.maximum(a / b, b / a)


def _progress(items, show, label):
    if not show:
        return items
    from tqdm import tqdm

    return tqdm(items, desc=label, file=sys.stderr, leave=False)


def scheduling_table(workload: Workload, config: CMTConfig, sizes=L2_SIZES, method: str = "avg",
                     profiles=None) -> pd.DataFrame:
    """Round-robin, PERF and FAIR on one core of ``config.contexts`` contexts for every
    L2 size: IPC, L2 miss rate, share standard deviation, and the gains over round-robin."""
    traces = load_threads(workload, config.block, seed=config.seed)
    profiles = profiles or thread_profiles(workload, config.block)
    n = len(profiles)
    rows = []
    for size in sizes:
        predicted = predict_groups(profiles, replace(config, l2=size), method)
        schedules = {"round-robin": "round-robin"}
        for policy in ("perf", "fair"):
            groups, threshold = balance_set_schedule(predicted, n, policy)
            schedules[policy] = groups
        for name, schedule in schedules.items():
            sim = simulate_cmt(None, replace(config, l2=size, schedule=schedule), traces=traces)
            rows.append({"l2_kib": size >> 10, "scheduler": name, "ipc": sim.ipc, "l2_miss_ratio": sim.l2_miss_ratio,
                         "share_std": sim.share_std, "threshold": threshold if name != "round-robin" else np.nan})
    df = pd.DataFrame(rows)
    base = df[df.scheduler == "round-robin"].set_index("l2_kib")
    df["ipc_gain"] = df.ipc / df.l2_kib.map(base.ipc) - 1
    df["l2_miss_reduction"] = 1 - df.l2_miss_ratio / df.l2_kib.map(base.l2_miss_ratio)
    return df


PAPER = "Fedorova, Seltzer, Small & Nussbaum, throughput-oriented scheduling on CMT, 2004"

#: An error factor is never below 1, so "the same direction" for an accuracy finding is
#: measured against the working-set model's factor of 2 that the paper sets it against.
#: The paper's findings (§3-§6: a 4-context core, 8 threads) and the bands that count as
#: the same magnitude, written before any run; the ones this study does not measure stay,
#: with verdict no.
CLAIMS = (
    Claim("reuse-model-accuracy", PAPER, "§6.2", "The reuse-distance model predicts co-scheduled L2 miss rates "
          "within a factor of 1.06 on average", "mean error factor max(pred/sim, sim/pred) per L2 access, COMB, "
          "every 4-thread group and L2 size", 1.06, (1.0, 1.09), "the paper's factor +-50% of its excess over 1; "
          "'accurate' means better than the working-set model's factor of 2 (§6.1), so a factor above 2 is no",
          neutral=2.0, direction=-1),
    Claim("balance-set-ipc", PAPER, "§6.5, Fig. 13", "Balance-set scheduling raises IPC over the default scheduler "
          "by 16-32%", "median over L2 sizes of PERF's IPC gain over round-robin", 0.24, (0.16, 0.32),
          "the paper's own range"),
    Claim("balance-set-misses", PAPER, "§6.5, Fig. 14", "Balance-set scheduling cuts L2 miss rates by 20-40%",
          "median over L2 sizes of PERF's L2 miss-rate reduction against round-robin", 0.30, (0.20, 0.40),
          "the paper's own range"),
    Claim("pipeline-coscheduling", PAPER, "§3, Fig. 2", "Co-scheduling compute- and memory-bound threads on the "
          "pipeline can change throughput by a factor of two", "IPC(best schedule) / IPC(worst)", 2.0, (1.5, 2.5),
          "the paper's value +-50% of the effect", neutral=1.0),
    Claim("l1-size", PAPER, "§4", "A 16x larger L1 data cache raises throughput by only about 7%",
          "IPC(128 KiB L1) / IPC(8 KiB L1) - 1", 0.07, (0.035, 0.105), "the paper's value +-50% of the effect"),
    Claim("working-set-model", PAPER, "§6.1", "The working-set model mispredicts co-scheduled miss rates by about "
          "a factor of two", "mean error factor of a working-set prediction", 2.0, (1.5, 2.5),
          "the paper's value +-50% of the effect", neutral=1.0),
)


def findings(pred: pd.DataFrame, sched: pd.DataFrame) -> list:
    """The paper's findings with our measured values and verdicts."""
    perf = sched[sched.scheduler == "perf"]
    missing = "not measured by this study (the simulator can run it; see the CMT issue)"
    factor = float(pred.comb_error_factor.mean())
    return judge(CLAIMS, {
        "reuse-model-accuracy": factor,
        "balance-set-ipc": float(perf.ipc_gain.median()),
        "balance-set-misses": float(perf.l2_miss_reduction.median()),
        "pipeline-coscheduling": (None, missing), "l1-size": (None, missing),
        "working-set-model": (None, "not measured: the study has no working-set model"),
    })


def main(argv=None) -> int:
    p = OneLineParser(prog="python -m calibration.studies.cmt", description=__doc__.split("\n\n")[0])
    p.add_argument("--traces", metavar="DIR", help="directory of xz/perl/sqlite/mawk .npz traces "
                                                   "(data/traces/record-cmt.sh DIR); default: the stored excerpts")
    p.add_argument("--small", action="store_true", help="short runs (seconds): the stored excerpts, 2 sizes")
    p.add_argument("--cycles", type=int, help="measured cycles per group (default 20,000,000; small 400,000; at most "
                                              f"{MAX_CYCLES:,})")
    p.add_argument("--slice", type=int, help="time slice of the schedules in cycles (default 5,000,000; small 100,000)")
    p.add_argument("--method", choices=("avg", "comb"), default="avg", help="prediction of the balance-set "
                                                                            "scheduler (default avg)")
    p.add_argument("--csv", metavar="PREFIX", help="also write PREFIX-predictions.csv and PREFIX-scheduling.csv")
    add_study_options(p, runs=False)
    return run_study(p, argv, (), _report, files=("findings", "results"), check=_check)


#: Most measured cycles of a group (and a slice): 10^11 cycles run for hours per group.
MAX_CYCLES = 100_000_000_000


def _check(args) -> None:
    """The study's options, before any work: positive bounded cycles and slice, the
    traces' directory, the CSV files."""
    for option, value in (("--cycles", args.cycles), ("--slice", args.slice)):
        if value is not None and not 1 <= value <= MAX_CYCLES:
            raise ModelError(option, f"must be from 1 to {MAX_CYCLES:,} cycles, got {value:,}")
    if args.traces is not None and not Path(args.traces).is_dir():
        raise ModelError("--traces", f"{args.traces} is not a directory (data/traces/record-cmt.sh DIR writes one)")
    if args.csv:
        for suffix in ("predictions", "scheduling"):
            refuse_overwrite(f"{args.csv}-{suffix}.csv", args.force, "--csv")


def _report(args, _) -> None:
    small = args.small
    cycles = args.cycles if args.cycles is not None else (400_000 if small else 20_000_000)
    time_slice = args.slice if args.slice is not None else (100_000 if small else 5_000_000)
    sizes = L2_SIZES[::3] if small else L2_SIZES
    wl = mix_workload(args.traces, synthetic_instructions=200_000 if small else 2_000_000)
    profiles = thread_profiles(wl)
    base = CMTConfig(cycles=cycles, warmup=cycles // 5)
    pred = prediction_table(wl, base, sizes, profiles=profiles, progress=sys.stderr.isatty())
    sched = scheduling_table(wl, replace(base, time_slice=time_slice, cycles=max(cycles, 16 * time_slice)), sizes,
                             args.method, profiles=profiles)
    pd.set_option("display.width", 160)
    print("Predicted vs simulated L2 miss rate (misses per L2 access) of every 4-thread group, and IPC:")
    summary = pred.groupby("l2_kib").agg(
        sim_l2_miss_ratio=("sim_l2_miss_ratio", "mean"), avg_factor=("avg_error_factor", "mean"),
        comb_factor=("comb_error_factor", "mean"), sim_l2_per_ref=("sim_l2_per_reference", "mean"),
        avg_factor_per_ref=("avg_per_reference_factor", "mean"), comb_factor_per_ref=("comb_per_reference_factor", "mean"),
        sim_ipc=("sim_ipc", "mean"), model_ipc_avg_error=("model_ipc_avg_error", lambda e: np.abs(e).mean()),
        model_ipc_measured_error=("model_ipc_measured_error", lambda e: np.abs(e).mean()))
    print(summary.to_string(float_format=lambda v: f"{v:.4f}"))
    print(f"mean error factor per L2 access: AVG {pred.avg_error_factor.mean():.3f}, COMB "
          f"{pred.comb_error_factor.mean():.3f}; per data reference: AVG {pred.avg_per_reference_factor.mean():.3f}, "
          f"COMB {pred.comb_per_reference_factor.mean():.3f}")
    for how, label in (("avg", "AVG-predicted"), ("comb", "COMB-predicted"), ("measured", "measured")):
        e = pred[f"model_ipc_{how}_error"].abs()
        print(f"CMT core model IPC with {label} miss rates: mean |error| {100 * e.mean():.1f}%, max "
              f"{100 * e.max():.1f}%, within 10% for {100 * (e <= 0.10).mean():.0f}% of the groups")
    print()
    print("Balance-set scheduling (8 threads, one 4-context core):")
    print(sched.to_string(index=False, float_format=lambda v: f"{v:.4f}", na_rep="-"))
    print()
    report_findings(findings(pred, sched), args, "Findings against the paper",
                    "Chip multithreading (Fedorova, Seltzer, Small & Nussbaum 2004): findings on our machine")
    if args.csv:
        pred.to_csv(f"{args.csv}-predictions.csv", index=False)
        sched.to_csv(f"{args.csv}-scheduling.csv", index=False)


if __name__ == "__main__":
    sys.exit(main())
