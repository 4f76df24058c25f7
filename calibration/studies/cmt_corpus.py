"""The chip-multithreading study's program corpus and its leave-programs-out evaluation.

Seventeen real programs (compressors, interpreters, a database, two chess engines, a
compiler, a sort, a calculator and a JSON processor), each traced with valgrind's lackey
at two phases of one run (``data/traces/record-cmt.sh DIR`` writes ``NAME-a.npz`` and
``NAME-b.npz``).  The programs are split once, before any evaluation:

* :data:`TUNING`: the four programs the study used before (xz, perl, sqlite, mawk) and
  two more (bzip2, python).  Every choice of the prediction (the L2 stream, the
  co-scheduling method, the L1 share) is made on groups of these only;
* :data:`HELD_OUT`: the other eleven, on whose groups the chosen prediction is judged.

Groups are four threads of four different programs (as the paper's mix has), drawn at
random with a fixed seed from one side of the split; every group is simulated at every
L2 size in steady state (:func:`calibration.profiles.cmt_core.steady_run`) and
predicted by every :data:`VARIANTS` entry.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from mva.errors import ModelError

from ..missratio import working_set_miss_ratio
from ..profiles.cmt_core import DEFAULT_METHOD, core_model, group_prediction, l1_partition, steady_run
from ..sim.cmt import simulate_cmt
from ..sim.traces import read_trace
from ..sim.workload import Process, Workload

__all__ = ["PROGRAMS", "TUNING", "HELD_OUT", "PHASES", "VARIANTS", "CHOSEN", "corpus_workload", "draw_groups",
           "evaluate_groups", "accuracy_summary", "error_factor", "WINDOWS"]

#: Every program of ``record-cmt.sh`` (its own names).
PROGRAMS = ("xz", "bzip2", "gzip", "zstd", "perl", "python", "lua", "tcl", "mawk", "gawk", "sqlite", "sort", "bc",
            "jq", "cc1", "stockfish", "gnuchess")
TUNING = ("xz", "perl", "sqlite", "mawk", "bzip2", "python")
HELD_OUT = tuple(p for p in PROGRAMS if p not in TUNING)
PHASES = ("a", "b")

#: The predictions compared: (label, L2 stream, method).  ``whole-*`` take the L2 as a
#: larger cache of the whole stream (the study's prediction before the corpus), the
#: others the stream of each thread's L1 misses.
VARIANTS = (("whole-avg", "whole", "avg"), ("whole-comb", "whole", "comb"),
            ("misses-avg", "l1-misses", "avg"), ("misses-comb", "l1-misses", "comb"),
            ("misses-rate", "l1-misses", "rate"))
#: Windows of the working-set model (L2 accesses of the group), one chosen on the tuning
#: programs as the paper tried several ("experimenting with different time intervals
#: did not help", §6.1).
WINDOWS = (1_000, 10_000, 100_000, 1_000_000)
#: The variant the scheduler uses, chosen on the tuning programs' groups (see the guide).
CHOSEN = f"misses-{DEFAULT_METHOD}"


def corpus_workload(directory, programs=PROGRAMS, phases=PHASES) -> Workload:
    """One process per program and phase, ``NAME-PHASE``, from ``directory``'s .npz
    traces; a missing file is named before any work."""
    procs = []
    for name in programs:
        for phase in phases:
            path = Path(directory) / f"{name}-{phase}.npz"
            if not path.is_file():
                raise ModelError("--traces", f"{path} is missing (data/traces/record-cmt.sh DIR records it)")
            procs.append(Process(f"{name}-{phase}", (lambda p=path: read_trace(p)), None))
    return Workload("cmt-corpus", tuple(procs), description="the CMT study's program corpus, two phases each")


def _program(thread: str) -> str:
    return thread.rsplit("-", 1)[0]


def draw_groups(names, count: int, size: int = 4, seed: int = 1) -> list:
    """``count`` distinct groups of ``size`` thread indices whose programs differ
    (``names`` are ``PROGRAM-PHASE``), drawn with ``seed``; all of them if fewer exist."""
    rng = np.random.default_rng(seed)
    programs = sorted({_program(n) for n in names})
    if len(programs) < size:
        raise ModelError("groups", f"{len(programs)} programs cannot make groups of {size} different ones")
    by_program = {p: [i for i, n in enumerate(names) if _program(n) == p] for p in programs}
    seen, out = set(), []
    for _ in range(50 * count):
        chosen = rng.choice(len(programs), size, replace=False)
        g = tuple(sorted(int(rng.choice(by_program[programs[k]])) for k in chosen))
        if g not in seen:
            seen.add(g)
            out.append(g)
            if len(out) == count:
                break
    return out


def error_factor(predicted, simulated, resolution):
    """max(p/s, s/p) of rates measured to ``resolution`` (one event in the simulated
    run): a rate below it, zero included, is raised to it first, since a run that saw
    no miss says only "fewer than one".  Always finite, 1 when both are below it."""
    floor = np.asarray(resolution, float)
    a, b = np.maximum(np.asarray(predicted, float), floor), np.maximum(np.asarray(simulated, float), floor)
    return np.maximum(a / b, b / a)


def evaluate_groups(traces, localities, groups, sizes, config, variants=VARIANTS, label: str = "",
                    cycles: int | None = None, warmup: int | None = None, progress=None) -> pd.DataFrame:
    """One row per (L2 size, group): the simulated L2 miss ratio (per L2 access and per
    data reference) and IPC, and for every variant its predicted ratios, error factors
    and the CMT core model's IPC with its predicted miss rates (``<variant>_ipc_error``,
    relative); also the model's IPC with the measured miss rates.  The run is the
    steady-state one of :func:`~calibration.profiles.cmt_core.steady_run` unless
    ``cycles``/``warmup`` are given; ``steady`` says whether the run was at least that
    long.  ``label`` fills the ``set`` column (e.g. held-out)."""
    rows = []
    for size in sizes:
        cfg = replace(config, l2=size, schedule="all")
        for g in (progress(groups, f"{label} L2 {size >> 10} KiB") if progress else groups):
            threads = [localities[i] for i in g]
            predictions = {v: group_prediction(threads, cfg, method, stream=stream) for v, stream, method in variants}
            need_warm, need_cycles = steady_run(threads, cfg, predictions.get(CHOSEN))
            run_warm = need_warm if warmup is None else warmup
            run_cycles = need_cycles if cycles is None else cycles
            sim = simulate_cmt(None, replace(cfg, warmup=run_warm, cycles=run_cycles), traces=traces.subset(g))
            l2_accesses = sum(t["l1_misses"] for t in sim.threads)
            refs = sum(t["references"] for t in sim.threads)
            row = {"set": label, "l2_kib": size >> 10, "group": "+".join(traces.names[i] for i in g),
                   "warmup": run_warm, "cycles": run_cycles,
                   "steady": bool(run_warm >= need_warm and run_cycles >= need_cycles),
                   "sim_l2_miss_ratio": sim.l2_miss_ratio, "sim_l2_per_reference": sim.l2_misses_per_reference,
                   "sim_l1_miss_ratio": sim.l1_miss_ratio, "sim_ipc": sim.ipc}
            for v, pr in predictions.items():
                row[f"{v}_l2_miss_ratio"] = pr["l2_miss_ratio"]
                row[f"{v}_factor"] = float(error_factor(pr["l2_miss_ratio"], sim.l2_miss_ratio,
                                                        1.0 / max(l2_accesses, 1)))
                row[f"{v}_per_reference_factor"] = float(error_factor(pr["l2_misses_per_reference"],
                                                                      sim.l2_misses_per_reference,
                                                                      1.0 / max(refs, 1)))
                row[f"{v}_ipc_error"] = pr["ipc"] / sim.ipc - 1
            # the working-set model on the same L2 streams, weighted by the chosen variant's access rates
            pr = predictions[CHOSEN] if CHOSEN in predictions else next(iter(predictions.values()))
            ways = l1_partition(cfg, len(g))
            reach = [pr["thread_ipc"][k] * t.misses[ways].references_per_instruction for k, t in enumerate(threads)]
            for window in WINDOWS:
                ws = working_set_miss_ratio([t.misses[ways] for t in threads], cfg.l2, window, cfg.l2_assoc, reach)
                row[f"ws-{window}_l2_miss_ratio"] = ws
                row[f"ws-{window}_factor"] = float(error_factor(ws, sim.l2_miss_ratio, 1.0 / max(l2_accesses, 1)))
            measured = [(t["memory_instructions"] / t["instructions"], t["l1_misses"] / t["instructions"],
                         t["l2_misses"] / t["instructions"]) for t in sim.threads]
            row["measured_ipc_error"] = core_model(*zip(*measured, strict=True), cfg).solve().outputs["ipc"] / sim.ipc - 1
            rows.append(row)
    return pd.DataFrame(rows)


def accuracy_summary(df: pd.DataFrame, variants=VARIANTS) -> pd.DataFrame:
    """Per set, L2 size (and ``all``) and variant: groups, mean and largest error factor
    per L2 access, mean factor per data reference, mean |IPC error| and the share of
    groups whose model IPC is within 10%."""
    rows = []
    for (label, size), part in [*df.groupby(["set", "l2_kib"]), *(((s, "all"), p) for s, p in df.groupby("set"))]:
        for v, *_ in variants:
            e = part[f"{v}_ipc_error"].abs()
            rows.append({"set": label, "l2_kib": size, "variant": v, "groups": len(part),
                         "mean_factor": part[f"{v}_factor"].mean(), "max_factor": part[f"{v}_factor"].max(),
                         "mean_factor_per_reference": part[f"{v}_per_reference_factor"].mean(),
                         "ipc_mean_error": e.mean(), "ipc_within_10": (e <= 0.10).mean()})
    return pd.DataFrame(rows)
