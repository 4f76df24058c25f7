"""The trace-driven shared-bus multiprocessor simulator (Foglia et al. 2004, §4).

:func:`simulate_bus` runs a :class:`~calibration.workload.Workload` on P processors with
private caches (size, block, associativity; LRU; write-back; write-allocate) kept
coherent by MESI, AMSD or PSCR (:mod:`calibration.protocols`) over a shared bus with
Foglia et al. 2004, Table 4 costs, schedules processes in time slices (random or cache-affinity),
translates virtual to physical pages, and classifies every miss and coherence
transaction (docs/coherence.md §5).  It returns a :class:`BusResult`: miss rate and
breakdown, coherence transactions per 100 references, bus and processor utilisation and
the global system power GSP = sum of processor utilisations (Foglia et al. 2004, §4).

The hot loop is compiled (:mod:`calibration.sim._bus_kernel`); traces are streamed
through per-process buffers (:class:`~calibration.sim.machine.ReferenceStream`), so a run
of any length uses bounded memory.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import numpy as np

from mva.errors import ModelError

from .._moved import moved_attributes

from . import _bus_kernel as K
from .blockmap import BlockMap
from .machine import CoherenceViolation, ReferenceStream, check_cache_memory, run_length, scalability
from .options import option, parse_size, size_label

#: Most processors on one bus (the paper studies up to 32).
MAX_CPUS = 1024
from .protocols import DIRTY, WRITABLE, protocol
from .workload import Workload
from mva.jit import clock, seconds_since

__all__ = ["BusConfig", "BusResult", "simulate_bus", "format_result", "summary_row", "bus_costs", "CoherenceViolation",
           "scalability"]

def bus_costs(block: int) -> dict:
    """Costs in CPU cycles for a block of ``block`` bytes.

    Bus transactions: Foglia et al. 2004, Table 4 (32-256 bytes), extended by its exact linear fit
    (memory-to-cache 64 + B/8, cache-to-cache 8 + B/8, update-block 4 + B/8;
    docs/coherence.md §1.3).  ``cpu``: processor cycles per reference when it hits.  Table 4
    gives 2 cycles for the read/write operation itself; the default 5 [REC] also counts
    the work between references and is derived from the seed's own operating point
    (§5.1.3: 8 processors, 2 MiB, 128-byte blocks: GSP 7, bus utilisation 43%, miss rate
    0.39% at about 80 bus cycles a miss give about 1.4 references a cycle machine-wide,
    i.e. about 5 useful cycles per reference and processor).  Pass ``costs={"cpu": 2}``
    for the literal Table 4 value."""
    return {"cpu": 5, "memory_to_cache": 64 + block // 8, "cache_to_cache": 8 + block // 8,
            "update_block": 4 + block // 8, "invalidate": 5, "write": 5}


@dataclass(frozen=True)
class BusConfig:
    """One machine.  Sizes in bytes (``cache`` also accepts ``"2MiB"``), times in CPU
    cycles, ``time_slice`` in references (Foglia et al. (2004): about 200,000).

    ``affinity`` is the cache-affinity scheduler's preference for a process that last
    ran on the free processor, in time slices of waiting it is worth.  ``references``:
    run length (default: the workload's).  ``check`` turns on the coherence checker.
    ``pages``: ``random`` maps sequential virtual pages to scattered physical pages
    (Foglia et al. 2004, §4); ``identity`` uses virtual addresses as physical ones.
    ``costs`` overrides :func:`bus_costs` entries.
    """

    cpus: int = option(8, f"processors (default 8, at most {MAX_CPUS})", "processors", high=MAX_CPUS)
    cache: int = option(2 << 20, "cache size per processor, e.g. 2MiB (default 2MiB)", "bytes", "size")
    block: int = option(128, "block size (default 128)", "bytes", "size")
    assoc: int = option(2, "associativity (default 2)", "ways")
    protocol: str = option("mesi", "coherence protocol (default mesi)", kind="choice",
                           choices=("mesi", "amsd", "pscr"))
    scheduler: str = option("random", "process scheduling (default random)", kind="choice",
                            choices=("random", "affinity"))
    time_slice: int = option(200_000, "time slice (default 200000)", "references")
    data_only: bool = option(False, "simulate data references only (the cache is unified by default)",
                             kind="flag")
    word: int = option(4, "word size of the coherence checker and the sharing classification (default 4)",
                       "bytes", "size")
    references: int | None = option(None, "run length (default: the workload's; presets: generated length too)",
                                    "references")
    seed: int = option(1, "seed of scheduling and page placement (default 1)", low=0, high=2 ** 32 - 1)
    affinity: float = option(1.0, "affinity scheduler's preference (default 1)", "time slices", "float")
    check: bool = option(False, "check coherence (versions per word; slow)", kind="flag")
    pages: str = option("random", "virtual-to-physical page mapping (default random)", kind="choice",
                        choices=("random", "identity"))
    costs: dict = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self):
        object.__setattr__(self, "cache", parse_size(self.cache, "cache"))
        object.__setattr__(self, "block", parse_size(self.block, "block"))
        object.__setattr__(self, "protocol", str(self.protocol).lower())
        object.__setattr__(self, "scheduler", str(self.scheduler).lower())
        for name in ("cpus", "assoc", "time_slice", "word"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or v < 1:
                raise ModelError(name, f"must be a positive integer, got {v!r}")
        if self.block < 4 or self.block > 4096 or self.block & (self.block - 1):
            raise ModelError("block", f"must be a power of two from 4 to 4096 bytes, got {self.block}")
        if self.word & (self.word - 1) or self.word > self.block:
            raise ModelError("word", f"must be a power of two no larger than the block, got {self.word}")
        if self.block // self.word > 64:
            raise ModelError("word", f"a block may hold at most 64 words ({self.block} / {self.word} = "
                                     f"{self.block // self.word}); use a larger word")
        if self.cache < self.block * self.assoc or self.cache % (self.block * self.assoc):
            raise ModelError("cache", f"{self.cache} bytes is not a whole number of sets of {self.assoc} x "
                                      f"{self.block}-byte blocks")
        if self.cpus > MAX_CPUS:
            raise ModelError("cpus", f"must be at most {MAX_CPUS} processors on one bus, got {self.cpus}")
        check_cache_memory("cache", self.cpus * (self.cache // self.block), f"{self.cpus} caches of {self.cache:,} "
                                                                             "bytes")
        if not isinstance(self.seed, (int, np.integer)) or not 0 <= self.seed < 2 ** 32:
            raise ModelError("seed", f"must be an integer in [0, 2^32), got {self.seed!r}")
        protocol(self.protocol)
        if self.scheduler not in ("random", "affinity"):
            raise ModelError("scheduler", f"unknown scheduler {self.scheduler!r}; choose random or affinity")
        if self.references is not None and (not isinstance(self.references, (int, np.integer))
                                            or self.references < 1):
            raise ModelError("references", f"must be a positive integer, got {self.references!r}")
        if self.pages not in ("random", "identity"):
            raise ModelError("pages", f"unknown page mapping {self.pages!r}; choose random or identity")
        if self.affinity < 0:
            raise ModelError("affinity", "must be non-negative")
        bad = set(self.costs) - set(bus_costs(32))
        if bad:
            raise ModelError("costs", f"unknown cost(s) {', '.join(sorted(bad))}; known: "
                                      f"{', '.join(bus_costs(32))}")

    @property
    def sets(self) -> int:
        return self.cache // (self.block * self.assoc)

    def cost_vector(self) -> np.ndarray:
        c = {**bus_costs(self.block), **self.costs}
        return np.array([c["cpu"], c["memory_to_cache"], c["cache_to_cache"], c["update_block"], c["invalidate"],
                         c["write"]], dtype=np.int64)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["costs"] = {**bus_costs(self.block), **self.costs}
        return d


@dataclass(frozen=True)
class BusResult:
    """Counts and timing of one run; :meth:`to_dict` gives the JSON of ``mva simulate``.

    ``counts``: the kernel's counters by name; ``processor_cycles``: total simulated
    cycles T; ``busy`` / ``stall`` per processor (cycles); ``bus_busy`` (cycles).
    """

    workload: str
    config: BusConfig
    counts: dict
    cycles: int
    busy: np.ndarray
    stall: np.ndarray
    references_by_cpu: np.ndarray
    bus_busy: int
    blocks: int
    seconds: float

    @property
    def references(self) -> int:
        return int(sum(v for k, v in self.counts.items() if k.startswith("refs.")))

    def misses_by_kind(self, kernel: bool | None = None) -> dict:
        out = {}
        for kind in K.MISS_KINDS:
            u, k = self.counts[f"miss.{kind}.user"], self.counts[f"miss.{kind}.kernel"]
            out[kind] = u + k if kernel is None else (k if kernel else u)
        return out

    @property
    def misses(self) -> int:
        return int(sum(self.misses_by_kind().values()))

    @property
    def processor_utilization(self) -> np.ndarray:
        """U_i = (T - T_delay,i) / T, with idle time counted as not useful (Foglia et al. 2004, §4)."""
        return self.busy / max(self.cycles, 1)

    @property
    def gsp(self) -> float:
        """Global system power: the sum of processor utilisations (Foglia et al. 2004, §4)."""
        return float(self.processor_utilization.sum())

    @property
    def bus_utilization(self) -> float:
        return self.bus_busy / max(self.cycles, 1)

    def bus_work(self) -> dict:
        """Bus transactions per reference that stall their processor (``sync``: load and
        fetch misses) and that do not (``async``: stores through the store buffer,
        write-backs), with their mean and second moment of cost (cycles, cycles^2) and the
        processor cycles they stall per reference (sync: bus waiting plus service; async:
        waiting for a free store-buffer entry); ``stall_per_reference`` is the total."""
        refs = max(self.references, 1)
        out = {}
        for label in ("sync", "async"):
            n = self.counts[f"bus_{label}.count"]
            out[label] = {"per_reference": n / refs,
                          "mean_cycles": self.counts[f"bus_{label}.cycles"] / n if n else 0.0,
                          "second_moment": self.counts[f"bus_{label}.cycles_squared"] / n if n else 0.0,
                          "stall_per_reference": self.counts[f"bus_{label}.stall_cycles"] / refs}
        out["stall_per_reference"] = float(self.stall.sum()) / refs
        return out

    def coherence(self) -> dict:
        """Coherence transactions by type and class and user/kernel (counts)."""
        out = {}
        for t in K.COH_TYPES:
            for c in K.COH_CLASSES:
                for uk in ("user", "kernel"):
                    out[(t, c, uk)] = self.counts[f"coherence.{t}.{c}.{uk}"]
        return out

    def to_dict(self) -> dict:
        refs = max(self.references, 1)
        kinds = self.misses_by_kind()
        other = kinds["cold"] + kinds["context_switch"] + kinds["replacement"] + kinds["selective_reload"]
        coh = self.coherence()
        per100 = lambda n: 100.0 * n / refs  # noqa: E731
        by_type = {t: per100(sum(v for (tt, _, _), v in coh.items() if tt == t)) for t in K.COH_TYPES}
        by_class = {c: per100(sum(v for (_, cc, _), v in coh.items() if cc == c)) for c in K.COH_CLASSES}
        by_uk = {uk: per100(sum(v for (_, _, u), v in coh.items() if u == uk)) for uk in ("user", "kernel")}
        bus = {name: self.counts[f"bus.{name}"] for name in ("read_block_memory", "read_block_cache",
                                                              "read_invalidate_memory", "read_invalidate_cache",
                                                              "invalidate", "write", "update_block")}
        return {
            "workload": self.workload,
            "config": self.config.to_dict(),
            "references": self.references,
            "misses": self.misses,
            "miss_rate": self.misses / refs,
            "misses_by_kind": {"other": other, "true_sharing": kinds["true_sharing"],
                               "false_sharing": kinds["false_sharing"],
                               "passive_sharing": kinds["passive_sharing"]},
            "other_misses": {k: kinds[k] for k in ("cold", "context_switch", "replacement", "selective_reload")},
            "misses_user": self.misses_by_kind(kernel=False),
            "misses_kernel": self.misses_by_kind(kernel=True),
            "coherence_transactions_per_100_refs": {"total": sum(by_type.values()), "by_type": by_type,
                                                    "by_class": by_class, "by_mode": by_uk},
            "bus_transactions": bus,
            "bus_utilization": self.bus_utilization,
            "processor_utilization": [float(u) for u in self.processor_utilization],
            "gsp": self.gsp,
            "cycles": self.cycles,
            "bus_work": self.bus_work(),
            "migrations": self.counts["migrations"],
            "dispatches": self.counts["dispatches"],
            "blocks": self.blocks,
            "references_by_access": {a: self.counts[f"refs.{a}.user"] + self.counts[f"refs.{a}.kernel"]
                                     for a in ("ifetch", "load", "store")},
            "kernel_references": sum(self.counts[f"refs.{a}.kernel"] for a in ("ifetch", "load", "store")),
            "seconds": self.seconds,
        }


COUNTER_NAMES = K.COUNTER_NAMES


class _Machine:
    """All arrays of one run, in the kernel's bundles; per-block arrays grow with the
    block map."""

    def __init__(self, workload: Workload, cfg: BusConfig, to_end: bool):
        self.wl = workload
        self.cfg = cfg
        pr = protocol(cfg.protocol)
        P = cfg.cpus
        n_proc = len(workload.processes)
        lines = cfg.sets * cfg.assoc
        self.words = cfg.block // cfg.word
        self.caches = K.Caches(block=np.full((P, lines), -1, dtype=np.int32), state=np.zeros((P, lines), np.int8),
                               inv=np.zeros((P, lines), np.int8), stamp=np.zeros((P, lines), np.int64))
        self.per_block = {}
        self.blocks = BlockMap(workload, cfg.block, cfg.word, cfg.sets, cfg.pages, cfg.seed, cfg.data_only,
                               on_grow=self._grow)
        self.blocks.reserve(1 << 14)
        self.stream = ReferenceStream(workload, self.blocks, to_end)
        self.cpus = K.Processors(clock=np.zeros(P, np.int64), running=np.full(P, -1, np.int64),
                                 slice_left=np.zeros(P, np.int64), stall=np.zeros(P, np.int64),
                                 refs=np.zeros(P, np.int64), store_buffer=np.zeros((P, 2), np.int64))
        rng = np.array([((cfg.seed * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF) | 1], dtype=np.uint64)
        self.sched = K.Scheduler(ready=np.ones(n_proc, np.uint8), ready_since=np.zeros(n_proc, np.int64),
                                 last_cpu=np.full(n_proc, -1, np.int64), cur_slice=np.zeros(n_proc, np.int32),
                                 rng=rng, policy=0 if cfg.scheduler == "random" else 1,
                                 slice_refs=int(cfg.time_slice), affinity=float(cfg.affinity))
        self.proto = K.ProtocolTables(pr.proc_txn, pr.proc_next, pr.snoop_next, pr.snoop_resp, pr.snoop_supply,
                                      pr.snoop_memupd, pr.snoop_invkind, WRITABLE, DIRTY, bool(pr.uses_private_line))
        self.glob = np.zeros(K.N_GLOBALS, dtype=np.int64)
        self.counts = np.zeros(K.N_COUNTERS, dtype=np.int64)
        self.costs = cfg.cost_vector()

    def _grow(self, cap):
        P = self.cfg.cpus
        n_proc = len(self.wl.processes)
        spec = {"where": ((cap, P), np.int32, -1), "newv": ((cap, P), np.uint64, 0),
                "used": ((cap, P), np.uint64, 0), "pending": ((cap, P), np.uint8, 0),
                "last_slice": ((cap, n_proc), np.int32, -1)}
        if self.cfg.check:
            spec.update({"version": ((cap, self.words), np.int64, 0), "memory": ((cap, self.words), np.int64, 0),
                         "copy": ((cap, P, self.words), np.int64, 0)})
        for name, (shape, dtype, fill) in spec.items():
            new = np.full(shape, fill, dtype=dtype)
            old = self.per_block.get(name)
            if old is not None:
                new[: old.shape[0]] = old
            self.per_block[name] = new
        if not self.cfg.check:
            self.per_block.update(version=np.zeros((1, 1), np.int64), memory=np.zeros((1, 1), np.int64),
                                  copy=np.zeros((1, 1, 1), np.int64))

    def run(self, budget):
        pb, at, st = self.per_block, self.blocks.attrs, self.stream
        return K.run(budget, K.Buffers(st.block, st.info, st.length, st.cursor),
                     K.Blocks(at["set_of"], at["owner"], at["is_kernel"]), self.caches,
                     K.Sharing(pb["where"], pb["newv"], pb["used"], pb["pending"], pb["last_slice"]),
                     self.cpus, self.sched, self.proto,
                     K.Checker(bool(self.cfg.check), pb["version"], pb["memory"], pb["copy"]),
                     self.cfg.assoc, self.costs, self.glob, self.counts)

    def dispatch_all(self):
        for p in range(self.cfg.cpus):
            K.dispatch_bundled(p, 0, self.cpus, self.sched, 0, self.glob, self.counts)


def simulate_bus(workload: Workload, config: BusConfig | None = None, progress: bool = False,
             **options) -> BusResult:
    """Run ``workload`` on the machine ``config`` (or ``BusConfig(**options)``).

    The run lasts ``config.references`` block references (an access spanning two blocks
    counts twice); by default a one-process workload runs to the end of its trace and a
    multi-process one for the workload's length (the sum of its trace lengths, or the
    generator's run length); processes whose trace ends start it again.  Raises
    :class:`CoherenceViolation` in checking mode if the protocol ever lets a read see an
    old value.

    Examples
    --------
    >>> from calibration.sim.synthetic import generate
    >>> r = simulate_bus(generate("ec-server", references=100_000), cpus=2)
    >>> r.references, round(r.gsp, 3)
    (99996, 1.545)
    """
    
    from tqdm.auto import tqdm

    cfg = replace(config, **options) if config is not None else BusConfig(**options)
    started = clock()
    budget, to_end = run_length(workload, cfg.references)
    m = _Machine(workload, cfg, to_end)
    for pid in range(len(workload.processes)):
        m.stream.refill(pid)
    m.dispatch_all()
    bar = tqdm(total=None if to_end else budget, disable=None if progress else True, unit="ref", unit_scale=True,
               desc=f"{workload.name} {cfg.protocol} x{cfg.cpus}", leave=False)
    shown = 0
    try:
        while True:
            status = m.run(budget)
            bar.update(int(m.glob[K.G_REFS]) - shown)
            shown = int(m.glob[K.G_REFS])
            if status == K.RUN_DONE:
                break
            if status == K.RUN_REFILL:
                if not m.stream.refill(int(m.glob[K.G_OUT])):
                    break
                continue
            what = "a read saw an old value" if status == K.RUN_STALE_READ else \
                "a copy writable without a bus transaction coexists with another valid copy"
            raise CoherenceViolation(f"{cfg.protocol}: {what} at reference {int(m.glob[K.G_ERROR_REF])}")
    finally:
        bar.close()
    counts = dict(zip(COUNTER_NAMES, (int(c) for c in m.counts), strict=False))
    # lifetimes still open at the end: their invalidation misses were false sharing
    nb = m.blocks.count
    open_pending = m.per_block["pending"][:nb].astype(np.int64)
    kern = m.blocks.attrs["is_kernel"][:nb].astype(bool)
    counts["miss.false_sharing.user"] += int(open_pending[~kern].sum())
    counts["miss.false_sharing.kernel"] += int(open_pending[kern].sum())
    assert counts["pending"] == int(open_pending.sum())
    counts["pending"] = 0
    refs_by_cpu = m.cpus.refs
    cycles = int(max(m.cpus.clock.max(), m.glob[K.G_BUS_FREE]))    # the run ends when the bus is quiet too
    busy = refs_by_cpu * m.costs[K.COST_CPU]      # every reference's own cycles
    counts["hits"] = int(refs_by_cpu.sum()) - sum(v for k, v in counts.items() if k.startswith("miss."))
    return BusResult(workload.name, cfg, counts, cycles, busy, m.cpus.stall.copy(),
                            refs_by_cpu.copy(), int(m.glob[K.G_BUS_BUSY]), nb, seconds_since(started))


def format_result(d: dict) -> str:
    """The table of ``mva simulate`` from a run's :meth:`BusResult.to_dict`."""
    cfg = d["config"]
    refs = max(d["references"], 1)
    mk = d["misses_by_kind"]
    om = d["other_misses"]
    coh = d["coherence_transactions_per_100_refs"]
    pu = d["processor_utilization"]
    size = size_label(cfg["cache"])
    lines = [
        f"{d['workload']}: {cfg['protocol'].upper()}, {cfg['cpus']} processors, {size} {cfg['assoc']}-way "
        f"{cfg['block']}-byte blocks, {cfg['scheduler']} scheduling",
        f"  references                 {d['references']:>14,}",
        f"  misses                     {d['misses']:>14,}   miss rate {100 * d['miss_rate']:.3f}%",
        f"    other                    {mk['other']:>14,}   (cold {om['cold']:,}, context switch "
        f"{om['context_switch']:,}, replacement {om['replacement']:,}, selective reload {om['selective_reload']:,})",
        f"    true sharing             {mk['true_sharing']:>14,}",
        f"    false sharing            {mk['false_sharing']:>14,}",
        f"    passive sharing          {mk['passive_sharing']:>14,}",
        f"  coherence transactions per 100 references: {coh['total']:.4f}",
        "    by type   " + ", ".join(f"{k} {v:.4f}" for k, v in coh["by_type"].items()),
        "    by class  " + ", ".join(f"{k} {v:.4f}" for k, v in coh["by_class"].items()),
        "    by mode   " + ", ".join(f"{k} {v:.4f}" for k, v in coh["by_mode"].items()),
        f"  bus utilisation            {100 * d['bus_utilization']:>13.1f}%",
        f"  processor utilisation      {sum(pu) / len(pu):>14.3f} mean  ({min(pu):.3f} - {max(pu):.3f})",
        f"  GSP                        {d['gsp']:>14.3f}",
        f"  migrations {d['migrations']:,} in {d['dispatches']:,} dispatches; {d['blocks']:,} blocks; "
        f"{d['seconds']:.2f} s ({refs / max(d['seconds'], 1e-9) / 1e6:.1f} M references/s)",
    ]
    return "\n".join(lines)


def summary_row(d: dict) -> dict:
    """One row of a sweep's table: the headline numbers of a run's :meth:`BusResult.to_dict`."""
    mk = d["misses_by_kind"]
    refs = max(d["references"], 1)
    coh = d["coherence_transactions_per_100_refs"]
    return {"miss_rate": d["miss_rate"], "other": mk["other"] / refs, "true_sharing": mk["true_sharing"] / refs,
            "false_sharing": mk["false_sharing"] / refs, "passive_sharing": mk["passive_sharing"] / refs,
            "coherence_per_100": coh["total"], "passive_coherence_per_100": coh["by_class"]["passive_sharing"],
            "bus_utilization": d["bus_utilization"], "gsp": d["gsp"]}


# the names of before the machine registry (0.2); served with a warning until 0.3
__getattr__ = moved_attributes(__name__, {"SimulatorConfig": f"{__name__}.BusConfig",
                                          "SimulationResult": f"{__name__}.BusResult",
                                          "simulate": f"{__name__}.simulate_bus"})
