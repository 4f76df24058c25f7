"""The chip-multithreading machine: fine-grained multithreaded cores sharing an L2 cache
(Fedorova, Seltzer, Small & Nussbaum, "Throughput-oriented scheduling on chip
multithreading systems", Harvard TR-17-04, 2004, §2 and §5).

:func:`simulate_cmt` runs a :class:`~calibration.sim.workload.Workload` whose processes are
the software threads on ``cores`` cores of ``contexts`` hardware contexts each.  Each
core issues one instruction per cycle, switching among its ready contexts every cycle
(Laudon, Gupta & Horowitz, "Interleaving", ASPLOS 1994); each core has a private L1 data
cache shared by its contexts; all cores share one L2; L2 misses queue FCFS for a memory
channel of ``bandwidth`` bytes per cycle.  Defaults are the paper's: 4 contexts, 8 KiB
4-way L1, 12-way L2, latencies 2 / 22 / 120 cycles (L1 hit, L1 to L2, L2 to memory).

What is reconstructed [REC], since the paper's simulator (Simics with Sun's CMT
extensions) is not public: instruction fetches always hit (the paper saw I-cache hit
rates above 97% and left the I-cache out of its study); stores stall like loads and no
write-back traffic is modelled; an instruction with several data accesses waits for
the slowest; caches are updated when the access issues (no miss merging); the
crossbar between L1 and L2 has no bandwidth limit; a descheduled thread keeps its
caches' contents and its place in its trace.  Sequential virtual pages of every thread
land on scattered physical pages (a seeded permutation), so threads running copies of
one program do not collide in the same sets.

Threads run in time slices of ``time_slice`` cycles.  ``schedule``: ``all`` runs every
thread throughout (at most cores x contexts threads); ``round-robin`` runs a window of
cores x contexts consecutive threads, advancing one thread per slice, so every thread
gets an equal share and meets every neighbour; or an explicit sequence of groups
(tuples of thread indices), run cyclically one per slice (the balance-set schedules of
:mod:`calibration.scheduling`).  Traces loop when they end.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from mva.errors import ModelError

from . import _cmt_kernel as K
from .machine import check_cache_memory
from .options import MAX_COUNT, option, parse_size, size_label
from .traces import IFETCH, limited
from .workload import PAGE, Workload
from mva.jit import clock, seconds_since

__all__ = ["CMTConfig", "CMTResult", "ThreadTraces", "load_threads", "simulate_cmt", "round_robin_groups", "POLICIES"]

#: Schedules that are predicted from the threads' reuse profiles (balance-set scheduling,
#: :func:`calibration.scheduling.resolve_schedule`), not known to the machine itself.
POLICIES = ("perf", "fair")
#: Bounds of the L2-memory bandwidth (bytes per cycle): below the lower one a line holds the
#: channel for millions of cycles; the option says the same.
MIN_BANDWIDTH, MAX_BANDWIDTH = 1e-3, 1e6
#: Most cores and contexts per core (a core of 10^6 contexts ran unbounded).
MAX_CORES, MAX_CONTEXTS = 256, 64
#: Bounds of the integer fields.
_INTEGER_BOUNDS = {"cores": (1, MAX_CORES), "contexts": (1, MAX_CONTEXTS), "l1_assoc": (1, MAX_COUNT), "l2_assoc": (1, MAX_COUNT),
                   "l1_latency": (1, MAX_COUNT), "l2_latency": (1, MAX_COUNT), "memory_latency": (1, MAX_COUNT),
                   "time_slice": (1, MAX_COUNT), "cycles": (1, MAX_COUNT), "warmup": (0, MAX_COUNT),
                   "seed": (0, 2 ** 32 - 1), "l1": (1, MAX_COUNT), "l2": (1, MAX_COUNT)}


@dataclass(frozen=True)
class CMTConfig:
    """One CMT machine.  Sizes in bytes (``"48KiB"`` accepted), times in cycles,
    ``bandwidth`` in bytes per cycle between the L2 and memory."""

    cores: int = option(1, f"cores (default 1, at most {MAX_CORES})", "cores", high=MAX_CORES)
    contexts: int = option(4, f"hardware contexts per core (default 4, at most {MAX_CONTEXTS})", "contexts",
                           high=MAX_CONTEXTS)
    l1: int = option(8 << 10, "L1 data cache per core (default 8KiB)", "bytes", "size")
    l1_assoc: int = option(4, "L1 associativity (default 4)", "ways")
    l2: int = option(384 << 10, "shared L2 (default 384KiB)", "bytes", "size")
    l2_assoc: int = option(12, "L2 associativity (default 12)", "ways")
    block: int = option(64, "block size (default 64)", "bytes", "size")
    l1_latency: int = option(2, "L1 hit (default 2)", "cycles")
    l2_latency: int = option(22, "L1 to L2 (default 22)", "cycles")
    memory_latency: int = option(120, "L2 to memory (default 120)", "cycles")
    bandwidth: float = option(8.0, "L2-memory bandwidth (default 8)", "bytes per cycle", "float",
                              low=MIN_BANDWIDTH, high=MAX_BANDWIDTH)
    time_slice: int = option(1_000_000, "time slice of round-robin and balance-set schedules (default 1000000)",
                             "cycles")
    cycles: int = option(10_000_000, "measured cycles (default 10000000)", "cycles")
    warmup: int = option(1_000_000, "cycles before measuring (default 1000000)", "cycles")
    schedule: object = option("all", "all threads at once (default), round-robin windows, or balance-set PERF/FAIR "
                                     "groups predicted from each thread's reuse profile", kind="choice",
                              choices=("all", "round-robin", "perf", "fair"))
    seed: int = option(1, "seed of the trace starting points (default 1)", low=0, high=2 ** 32 - 1)
    references: int | None = option(None, "references kept of each thread's trace (default: all)", "references")

    def __post_init__(self):
        for name in ("l1", "l2", "block"):
            object.__setattr__(self, name, parse_size(getattr(self, name), name))
        for name, (low, high) in _INTEGER_BOUNDS.items():
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not low <= v <= high:
                raise ModelError(name, f"must be an integer from {low:,} to {high:,}, got {v!r}")
        if self.block < 4 or self.block & (self.block - 1):
            raise ModelError("block", f"must be a power of two of at least 4 bytes, got {self.block}")
        for name, assoc in (("l1", self.l1_assoc), ("l2", self.l2_assoc)):
            size = getattr(self, name)
            if size < self.block * assoc or size % (self.block * assoc):
                raise ModelError(name, f"{size} bytes is not a whole number of sets of {assoc} x "
                                       f"{self.block}-byte blocks")
        if not MIN_BANDWIDTH <= self.bandwidth <= MAX_BANDWIDTH:
            raise ModelError("bandwidth", f"must be from {MIN_BANDWIDTH:g} to {MAX_BANDWIDTH:g} bytes per cycle, "
                                          f"got {self.bandwidth!r}")
        check_cache_memory("l2", (self.cores * self.l1 + self.l2) // self.block,
                           f"{self.cores} L1 caches of {self.l1:,} bytes and an L2 of {self.l2:,}")
        if isinstance(self.schedule, str) and self.schedule not in ("all", "round-robin", *POLICIES):
            raise ModelError("schedule", f"unknown schedule {self.schedule!r}; choose all, round-robin, perf, fair "
                                         "or give groups of thread indices")
        if self.references is not None and (not isinstance(self.references, (int, np.integer))
                                            or self.references < 1):
            raise ModelError("references", f"must be a positive integer, got {self.references!r}")

    @property
    def line_cycles(self) -> int:
        """Cycles the memory channel is held per line."""
        return max(int(math.ceil(self.block / self.bandwidth)), 1)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["schedule"] = self.schedule if isinstance(self.schedule, str) else [list(g) for g in self.schedule]
        return d


@dataclass(frozen=True)
class ThreadTraces:
    """Every thread's data-block stream, concatenated: ``gap`` (instructions up to and
    including the data instruction, 0 = same instruction as the previous reference),
    ``block`` (physical block numbers), per thread ``start`` and ``length``."""

    names: tuple
    gap: np.ndarray = field(repr=False)
    block: np.ndarray = field(repr=False)
    start: np.ndarray = field(repr=False)
    length: np.ndarray = field(repr=False)
    instructions: np.ndarray = field(repr=False)

    @staticmethod
    def of(names, gaps, blocks) -> ThreadTraces:
        """Concatenate per-thread ``gaps`` and ``blocks`` arrays."""
        length = np.array([g.shape[0] for g in gaps], np.int64)
        return ThreadTraces(tuple(names), np.concatenate(gaps), np.concatenate(blocks),
                            np.concatenate([[0], np.cumsum(length)[:-1]]).astype(np.int64), length,
                            np.array([g.sum(dtype=np.int64) for g in gaps], np.int64))

    def subset(self, threads) -> ThreadTraces:
        """The traces of ``threads`` (indices) only, in that order."""
        cut = [slice(self.start[t], self.start[t] + self.length[t]) for t in threads]
        return ThreadTraces.of([self.names[t] for t in threads], [self.gap[c] for c in cut],
                               [self.block[c] for c in cut])


def load_threads(workload: Workload, block: int = 64, references: int | None = None, seed: int = 1) -> ThreadTraces:
    """Read every process of ``workload`` into memory as a data-block stream (at most
    ``references`` block references each), with virtual pages scattered over physical
    pages by a seeded permutation."""
    log_block = int(math.log2(block))
    gaps, blocks = [], []
    for p in workload.processes:
        cap = references if references is not None else (p.length or 1 << 20)
        gap, vblock = np.zeros(cap + 64, np.int32), np.zeros(cap + 64, np.uint64)
        chunks = list(limited(p.open(), references))
        has_ifetch = any(bool(np.any(c.op == IFETCH)) for c in chunks)
        state = np.zeros(2, np.int64)
        for c in chunks:
            pos = 0
            while pos < len(c):
                pos += K.data_stream(c.op[pos:], c.addr[pos:], c.size[pos:], log_block, has_ifetch, gap, vblock,
                                     state)
                if pos < len(c):
                    gap, vblock = (np.concatenate([a, np.zeros(a.shape[0], a.dtype)]) for a in (gap, vblock))
        n = int(state[0])
        if n == 0:
            raise ModelError(f"process[{p.name}]", "trace holds no data references")
        gap, vblock = gap[:n], vblock[:n]
        gap[0] += int(state[1])            # the instructions after the last access run before the loop's first
        gaps.append(gap)
        blocks.append(vblock)
    # physical pages: one seeded permutation over every thread's distinct virtual pages
    per_page = max(PAGE // block, 1)
    pages, inverse = [], []
    for vb in blocks:
        u, inv = np.unique(vb // np.uint64(per_page), return_inverse=True)
        pages.append(u.shape[0])
        inverse.append(inv)
    phys = np.random.default_rng(seed).permutation(int(sum(pages)))
    offset = np.cumsum([0] + pages)
    phys_blocks = [phys[offset[k] + inverse[k]].astype(np.int64) * per_page + (vb % np.uint64(per_page)).astype(np.int64)
                   for k, vb in enumerate(blocks)]
    return ThreadTraces.of([p.name for p in workload.processes], gaps, phys_blocks)


def round_robin_groups(threads: int, slots: int) -> list:
    """Windows of ``slots`` consecutive threads, advancing one thread per slice."""
    if threads <= slots:
        return [tuple(range(threads))]
    return [tuple((k + j) % threads for j in range(slots)) for k in range(threads)]


@dataclass(frozen=True)
class CMTResult:
    """Totals over the measured cycles (after ``warmup``) and per-thread rows.

    ``ipc``: instructions per cycle of the whole chip; ``core_ipc``: per core;
    ``l2_miss_ratio``: L2 misses per L2 access (the paper's L2 miss rate);
    ``l2_misses_per_reference``: per data reference; ``l1_miss_ratio`` per data
    reference; ``memory_utilization``: busy fraction of the memory channel;
    ``share_std``: standard deviation of the threads' shares of the scheduled context
    cycles (0 = equal shares; the paper's fairness measure, §6.5).  ``threads``: per
    thread name, instructions, scheduled_cycles, memory_instructions, references (data
    block references), l1_misses, l2_misses,
    memory_wait (cycles) and passes (times its trace ran to the end).
    """

    workload: str
    config: dict
    cycles: int
    instructions: int
    ipc: float
    core_ipc: list
    l1_miss_ratio: float
    l2_miss_ratio: float
    l2_misses_per_reference: float
    memory_utilization: float
    share_std: float
    threads: list
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def simulate_cmt(workload: Workload, config: CMTConfig | None = None, traces: ThreadTraces | None = None,
                 **overrides) -> CMTResult:
    """Run ``workload`` (or its preloaded ``traces``) on the machine ``config``
    (fields of :class:`CMTConfig` may be given as keywords instead)."""
    cfg = CMTConfig(**{**(asdict(config) if config else {}), **overrides})
    t0 = clock()
    tr = traces if traces is not None else load_threads(workload, cfg.block, references=cfg.references,
                                                        seed=cfg.seed)
    n = len(tr.names)
    slots = cfg.cores * cfg.contexts
    if cfg.schedule == "all":
        if n > slots:
            raise ModelError("schedule", f"'all' runs every thread at once: {n} threads need {n} contexts, the "
                                         f"machine has {slots}; use round-robin or give groups")
        groups = [tuple(range(n))]
    elif cfg.schedule == "round-robin":
        groups = round_robin_groups(n, slots)
    elif cfg.schedule in POLICIES:
        raise ModelError("schedule", f"{cfg.schedule} groups are predicted from reuse profiles: resolve them with "
                                     "calibration.scheduling.resolve_schedule first")
    else:
        groups = [tuple(int(t) for t in g) for g in cfg.schedule]
        for g in groups:
            if not g or len(g) > slots or len(set(g)) != len(g) or min(g) < 0 or max(g) >= n:
                raise ModelError("schedule", f"group {g} must be 1 to {slots} distinct thread indices below {n}")
    l1_sets = cfg.l1 // (cfg.block * cfg.l1_assoc)
    l2_sets = cfg.l2 // (cfg.block * cfg.l2_assoc)
    l1_tags = np.full(cfg.cores * l1_sets * cfg.l1_assoc, -1, np.int64)
    l2_tags = np.full(l2_sets * cfg.l2_assoc, -1, np.int64)
    l1_stamps, l2_stamps = np.zeros_like(l1_tags), np.zeros_like(l2_tags)
    pos = np.zeros(n, np.int64)
    pending = tr.gap[tr.start].astype(np.int64)
    ready = np.zeros(n, np.int64)
    counts = np.zeros((n, K.N_COUNTS), np.int64)
    latency = np.array([cfg.l1_latency, cfg.l2_latency, cfg.memory_latency], np.int64)
    last_ctx = np.full(cfg.cores, cfg.contexts - 1, np.int64)
    state = np.zeros(3, np.int64)
    total = cfg.warmup + cfg.cycles
    core_instr = np.zeros(cfg.cores, np.int64)
    base = (counts.copy(), state.copy(), core_instr.copy()) if cfg.warmup == 0 else None
    k = 0
    while state[0] < total:
        group = groups[k % len(groups)]
        k += 1
        ctx = np.full((cfg.cores, cfg.contexts), -1, np.int64)
        ctx.reshape(-1)[: len(group)] = group
        end = min(int(state[0]) + cfg.time_slice, total)
        # a slice that crosses the end of the warm-up is run in two parts
        for stop in ([cfg.warmup, end] if base is None and state[0] < cfg.warmup < end else [end]):
            begin = int(state[0])
            K.run_slice(stop, ctx, tr.gap, tr.block, tr.start, tr.length, pos, pending, ready, counts, core_instr,
                        l1_tags, l1_stamps, l1_sets, cfg.l1_assoc, l2_tags, l2_stamps, l2_sets, cfg.l2_assoc, latency,
                        cfg.line_cycles, last_ctx, state)
            counts[list(group), K.SCHEDULED] += int(state[0]) - begin
            if base is None and state[0] >= cfg.warmup:
                base = counts.copy(), state.copy(), core_instr.copy()
    base_counts, base_state, base_core = base
    c = counts - base_counts
    cycles = int(state[0] - base_state[0])
    refs = int(c[:, K.L1_ACC].sum())
    l2_acc = int(c[:, K.L1_MISS].sum())              # every L1 miss is an L2 access
    l2_misses = int(c[:, K.L2_MISS].sum())
    shares = c[:, K.SCHEDULED] / max(c[:, K.SCHEDULED].sum(), 1)
    instructions = int(c[:, K.INSTR].sum())
    rows = [{"name": tr.names[t], "instructions": int(c[t, K.INSTR]), "scheduled_cycles": int(c[t, K.SCHEDULED]),
             "memory_instructions": int(c[t, K.MEM_INSTR]), "references": int(c[t, K.L1_ACC]),
             "l1_misses": int(c[t, K.L1_MISS]), "l2_misses": int(c[t, K.L2_MISS]),
             "memory_wait": int(c[t, K.MEM_WAIT]), "passes": int(counts[t, K.PASSES])} for t in range(n)]
    return CMTResult(workload=workload.name if workload is not None else "", config=cfg.to_dict(), cycles=cycles,
                     instructions=instructions, ipc=instructions / max(cycles, 1),
                     core_ipc=[float(v) / max(cycles, 1) for v in core_instr - base_core],
                     l1_miss_ratio=int(c[:, K.L1_MISS].sum()) / max(refs, 1),
                     l2_miss_ratio=l2_misses / max(l2_acc, 1),
                     l2_misses_per_reference=l2_misses / max(refs, 1),
                     memory_utilization=l2_misses * cfg.line_cycles / max(cycles, 1),
                     share_std=float(np.std(shares)), threads=rows, seconds=seconds_since(t0))


def format_result(d: dict) -> str:
    """The table of ``mva simulate --machine cmt`` from a run's :meth:`CMTResult.to_dict`."""
    c = d["config"]
    schedule = c["schedule"] if isinstance(c["schedule"], str) else f"{len(c['schedule'])}-group"
    lines = [f"{d['workload']}: {c['cores']} core(s) x {c['contexts']} contexts, L1 {size_label(c['l1'])} "
             f"{c['l1_assoc']}-way, L2 {size_label(c['l2'])} {c['l2_assoc']}-way, {c['block']}-byte blocks, "
             f"{schedule} schedule",
             f"  cycles {d['cycles']:,} (after {c['warmup']:,} of warm-up), instructions {d['instructions']:,}",
             f"  IPC {d['ipc']:.4f}" + (f"  (cores: {', '.join(f'{v:.3f}' for v in d['core_ipc'])})"
                                        if len(d['core_ipc']) > 1 else ""),
             f"  L1 miss ratio {d['l1_miss_ratio']:.4f} per data reference; L2 miss ratio "
             f"{d['l2_miss_ratio']:.4f} per L2 access ({d['l2_misses_per_reference']:.5f} per reference)",
             f"  memory channel utilisation {d['memory_utilization']:.3f}; CPU share std {d['share_std']:.4f}",
             f"  {'thread':<16} {'instructions':>13} {'share':>7} {'IPC':>7} {'L1 miss':>8} {'L2 miss':>8}"]
    scheduled = max(sum(t["scheduled_cycles"] for t in d["threads"]), 1)
    for t in d["threads"]:
        refs = max(t["references"], 1)
        lines.append(f"  {t['name']:<16} {t['instructions']:>13,} {t['scheduled_cycles'] / scheduled:>7.3f} "
                     f"{t['instructions'] / max(t['scheduled_cycles'], 1):>7.4f} {t['l1_misses'] / refs:>8.4f} "
                     f"{t['l2_misses'] / max(t['l1_misses'], 1):>8.4f}")
    return "\n".join(lines)


def summary_row(d: dict) -> dict:
    """One row of a sweep's table: the headline numbers of a run's :meth:`CMTResult.to_dict`."""
    return {k: d[k] for k in ("ipc", "l1_miss_ratio", "l2_miss_ratio", "l2_misses_per_reference",
                              "memory_utilization", "share_std")}
