"""The chip-multithreading paper's pipeline and L1 experiments on our CMT machine
(Fedorova, Seltzer, Small & Nussbaum, "Throughput-oriented scheduling on chip
multithreading systems", Harvard TR-17-04, 2004, §3 and §4).

* :func:`pipeline_table` (§3, Table 1, Fig. 5): sixteen microbenchmark threads, four
  each of single-threaded CPI 1, 6, 11 and 16 (:func:`calibration.sim.synthetic.cpi_thread`),
  on four cores of four contexts under the paper's schedules (a)-(d);
* :func:`real_pipeline_table` (§3, the SPEC case): sixteen real threads placed on the
  four cores mixed by single-threaded CPI (each core one of every CPI quartile) and
  sorted by it (the lowest four CPIs on core 0, ...), which the paper found to differ
  little;
* :func:`l1_table` (§4, Tables 3 and 4, Fig. 7): four copies of one program on one core,
  L1 hit rates and IPC as the L1 grows from 8 to 128 KiB, beside the program alone.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..sim.cmt import CMTConfig, ThreadTraces, load_threads, simulate_cmt
from ..sim.synthetic import cpi_thread
from ..sim.workload import Process, Workload

__all__ = ["PIPELINE_SCHEDULES", "PIPELINE_CPIS", "pipeline_table", "real_pipeline_table", "l1_table", "L1_SIZES"]

PIPELINE_CPIS = (1, 6, 11, 16)
#: Table 1: the single-threaded CPIs of the threads on cores 0-3 under schedules (a)-(d).
PIPELINE_SCHEDULES = {
    "a": ((1, 6, 11, 16), (1, 6, 11, 16), (1, 6, 11, 16), (1, 6, 11, 16)),
    "b": ((1, 6, 6, 6), (1, 6, 11, 11), (1, 11, 11, 16), (1, 16, 16, 16)),
    "c": ((1, 1, 6, 6), (1, 1, 6, 6), (11, 11, 11, 11), (16, 16, 16, 16)),
    "d": ((1, 1, 1, 1), (6, 6, 6, 6), (11, 11, 11, 11), (16, 16, 16, 16)),
}
#: An L2 that holds all sixteen microbenchmark loops (16 x 16 KiB), so that only the
#: pipeline differs between the schedules.
PIPELINE_L2 = 1536 << 10
L1_SIZES = (8 << 10, 32 << 10, 64 << 10, 128 << 10)


def _assign(schedule, labels) -> list:
    """Thread indices, core by core, for a schedule of per-core labels: each label takes
    the next unused thread that carries it."""
    free = {lab: [i for i, x in enumerate(labels) if x == lab] for lab in set(labels)}
    return [free[lab].pop(0) for core in schedule for lab in core]


def pipeline_table(config: CMTConfig | None = None, cycles: int = 2_000_000) -> pd.DataFrame:
    """Schedules (a)-(d) of the paper's Table 1 on 4 cores x 4 contexts: chip IPC, ops
    (1024-instruction loops) per 1000 cycles, and the ratio to the worst schedule."""
    cfg = replace(config or CMTConfig(), cores=4, contexts=4, l2=PIPELINE_L2, cycles=cycles, warmup=cycles // 10)
    labels = [c for c in PIPELINE_CPIS for _ in range(4)]
    procs = tuple(cpi_thread(f"cpi{c}-{k}", c, l2_latency=cfg.l2_latency, base=0x10000000 * (k + 1) + (c << 20))
                  for k, c in enumerate(labels))
    traces = load_threads(Workload("cpi-threads", procs), cfg.block, seed=cfg.seed)
    rows = []
    for name, schedule in PIPELINE_SCHEDULES.items():
        sim = simulate_cmt(None, replace(cfg, schedule=[tuple(_assign(schedule, labels))]), traces=traces)
        rows.append({"schedule": name, "cores": " | ".join(", ".join(map(str, c)) for c in schedule),
                     "ipc": sim.ipc, "ops_per_kcycle": 1000 * sim.ipc / 1024})
    df = pd.DataFrame(rows)
    df["vs_worst"] = df.ipc / df.ipc.min()
    return df


def single_thread_cpi(traces: ThreadTraces, config: CMTConfig, cycles: int) -> np.ndarray:
    """Each thread's CPI alone on a one-context core of ``config``."""
    cfg = replace(config, cores=1, contexts=1, schedule="all", cycles=cycles, warmup=cycles // 4)
    return np.array([1.0 / simulate_cmt(None, cfg, traces=traces.subset([t])).ipc for t in range(len(traces.names))])


def real_pipeline_table(traces: ThreadTraces, config: CMTConfig, cycles: int) -> pd.DataFrame:
    """Sixteen real threads (``traces``) on 4 cores x 4 contexts, mixed by
    single-threaded CPI against sorted by it: chip IPC of each, the threads' CPI range,
    and the ratio mixed / sorted."""
    n = len(traces.names)
    if n != 16:
        raise ValueError(f"needs 16 threads, got {n}")
    cpi = single_thread_cpi(traces, config, cycles)
    rank = np.argsort(cpi)
    sorted_cores = [tuple(int(t) for t in rank[4 * c: 4 * c + 4]) for c in range(4)]
    mixed_cores = [tuple(int(rank[q * 4 + c]) for q in range(4)) for c in range(4)]
    cfg = replace(config, cores=4, contexts=4, cycles=cycles, warmup=cycles // 4)
    rows = []
    for name, cores in (("mixed", mixed_cores), ("sorted", sorted_cores)):
        sim = simulate_cmt(None, replace(cfg, schedule=[tuple(t for c in cores for t in c)]), traces=traces)
        rows.append({"schedule": name, "ipc": sim.ipc, "cpi_min": float(cpi.min()), "cpi_max": float(cpi.max()),
                     "core_cpis": " | ".join(", ".join(f"{cpi[t]:.1f}" for t in c) for c in cores)})
    df = pd.DataFrame(rows)
    df["vs_sorted"] = df.ipc / float(df.loc[df.schedule == "sorted", "ipc"].iloc[0])
    return df


def l1_table(programs: dict, config: CMTConfig, cycles: int, sizes=L1_SIZES) -> pd.DataFrame:
    """For every program (``{name: Process}``): its L1 hit rate alone on a one-context
    core with the smallest L1, and with four copies on one core at every L1 size of
    ``sizes`` (bytes), the L1 hit rate and IPC; ``ipc_gain`` is against the smallest L1."""
    rows = []
    for name, proc in programs.items():
        alone = simulate_cmt(Workload(name, (proc,)), replace(config, l1=sizes[0], contexts=1, cycles=cycles,
                                                              warmup=cycles // 4, schedule="all"))
        copies = Workload(f"4x{name}", tuple(Process(f"{name}{k}", proc.open, proc.length) for k in range(4)))
        traces = load_threads(copies, config.block, seed=config.seed)
        for size in sizes:
            sim = simulate_cmt(None, replace(config, l1=size, contexts=4, cycles=cycles, warmup=cycles // 4,
                                             schedule="all"), traces=traces)
            rows.append({"program": name, "l1_kib": size >> 10, "alone_hit_rate": 1 - alone.l1_miss_ratio,
                         "hit_rate": 1 - sim.l1_miss_ratio, "ipc": sim.ipc})
    df = pd.DataFrame(rows)
    base = df[df.l1_kib == sizes[0] >> 10].set_index("program").ipc
    df["ipc_gain"] = df.ipc / df.program.map(base) - 1
    return df
