"""The cc-NUMA machine: P nodes, each a processor with a write-through first-level cache,
a large direct-mapped second-level cache (SLC), memory and a non-pipelined node
controller, on a crossbar; an invalidation-based directory protocol keeps the SLCs
coherent (``mva simulate WORKLOAD --machine ccnuma``).

The machine of Talbot & Kelly, "Stable performance for cc-NUMA using first-touch page
placement and reactive proxies" (1999), §1.3-1.4, Tables 1.1-1.2:

* one node per process of the workload (``--nodes`` sets a generated kernel's
  processes, 64 by default); CPI 1, instruction fetches always hit, data references
  through an 8 KiB direct-mapped write-through first level (a miss there that hits the
  SLC costs an SLC access, 27 cycles [REC]) and a 4 MiB direct-mapped write-back SLC of
  64-byte lines; 8 KiB pages;
* private memory: an address outside every shared range of its process is that
  process's own (forked processes reuse one another's virtual addresses), so two
  processes' private data never share a line, a directory entry or a home; a private
  page is homed on its process's node under either policy;
* homes of shared pages: ``first-touch`` (the first node to touch a page after the
  initialisation phase, which ends at the workload's first barrier: until then pages
  are placed provisionally and everything is flushed when it ends, so the statistics
  cover the parallel phase) or ``round-robin`` (pages dealt to the nodes in turn, in
  the order they are first touched);
* the directory protocol of :mod:`calibration.sim.directory` (a full-map directory in
  place of the seed's singly-linked Stanford lists);
* node controllers serve one message at a time (FCFS) for the occupancies of Table 1.2
  (a line from DRAM 49 cycles, directory lookup 25, a line from the SLC 27, a fill 21,
  each message sent 5 [REC sums]); the network is LogP: latency 10 cycles for a
  message with a line, 5 otherwise, a gap of 5 cycles between a node's sends and
  between its receives; a crossbar, so no link contention;
* finite input buffers (``buffer``): a read request that finds more than ``buffer``
  messages waiting at a node goes back to its sender, which sends it again;
* proxies (``proxies``): ``basic`` sends every read of a marked range (the structures
  ``proxied`` names, else the workload's ``meta["proxied"]``, else all its shared
  ranges) to the line's proxy, ``reactive``
  only a read that bounced.  A proxy holding the line replies; otherwise it fetches the
  line from the home as a reader, keeps it in its SLC and passes it down the chain of
  clients whose requests it combined meanwhile (the first client gets it last);
  nodes form three proxy clusters, each with its own proxy for a line [REC mapping].

Processors run in simulated-time order (each at most 100 cycles past the next event).
Locks and barriers are trace markers (:data:`calibration.sim.traces.ACQUIRE` ...); a
barrier releases when every running processor has arrived.  ``check`` carries a
version per line and stops at the first read of an old value or the first store while
another node holds the line (:class:`~calibration.sim.machine.CoherenceViolation`).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from mva.errors import ModelError

from . import _ccnuma_kernel as K
from .directory import DIRECTORY, DirectoryProtocol
from .machine import (MAX_CYCLES_PER_REFERENCE, PRIVATE_SHIFT, CoherenceViolation, RawReferences, check_cache_memory,
                      check_run_options)
from .options import option, split_names
from .workload import Workload
from mva.jit import clock, seconds_since

__all__ = ["CCNUMAConfig", "CCNUMAResult", "simulate_ccnuma", "COUNTERS", "PLACEMENTS", "PROXIES"]

PLACEMENTS = ("first-touch", "round-robin")
PROXIES = ("none", "basic", "reactive")
COUNTERS = ("references", "work", "read_misses", "write_misses", "upgrades", "remote_reads",
            "remote_read_cycles", "remote_read_queueing", "messages", "bounces", "proxy_reads", "nacks",
            "requests", "nc_busy", "buffered", "queueing_cycles", "stall", "transactions", "combined",
            "proxy_hits", "invalidations", "writebacks", "barrier_wait", "local_reads", "transaction_queueing")
assert len(COUNTERS) == K.N_STATS
assert K.PRIVATE_LINE == 1 << (PRIVATE_SHIFT - K.LINE_SHIFT)


@dataclass(frozen=True)
class CCNUMAConfig:
    """``placement`` first-touch or round-robin; ``proxies`` none, basic or reactive;
    ``buffer`` read requests bounce once more than this many messages wait at a node
    (None: infinite); ``slc``/``flc`` cache sizes in bytes (powers of two, 64-byte lines);
    ``initialisation`` "first-barrier" (the phase before the workload's first barrier
    places pages provisionally and is not measured) or "none"; ``check`` the coherence
    checker; ``cycles_per_reference`` work per data reference of a trace without
    instruction fetches (None: the workload's, else 1); ``references`` caps each trace;
    ``proxied`` the structures (names of the workload's :class:`~calibration.sim.workload.Structure`
    pieces, comma-separated) whose reads basic proxies route (None: every shared range,
    or the workload's own choice)."""

    placement: str = option("first-touch", "home of each page (default first-touch, after the phase before the "
                                           "first barrier)", kind="choice", choices=PLACEMENTS)
    proxies: str = option("none", "route reads via proxy nodes: basic for marked ranges, reactive for bounced "
                                  "reads (default none)", kind="choice", choices=PROXIES)
    buffer: int | None = option(None, "input buffer: reads bounce when more than N messages wait (default "
                                      "infinite)", "messages")
    slc: int = option(4 << 20, "second-level cache per node (default 4MiB, direct mapped)", "bytes", "size")
    flc: int = option(8 << 10, "first-level cache per node (default 8KiB, write-through)", "bytes", "size")
    initialisation: str = option("first-barrier", "phase before the first barrier: unmeasured, pages placed afresh "
                                                  "after it (default first-barrier)", kind="choice",
                                 choices=("first-barrier", "none"))
    check: bool = option(False, "check coherence with the protocol tables' checker (slow)", kind="flag")
    cycles_per_reference: int | None = option(None, "work per data reference of a trace without instruction "
                                                    "fetches (default: the kernel's, else 1; at most 1,000,000)", "cycles",
                                              low=0, high=MAX_CYCLES_PER_REFERENCE)
    references: int | None = option(None, "references kept of each process's trace (default: all)", "references")
    proxied: str | None = option(None, "structures whose reads basic proxies route, comma-separated names of the "
                                       "manifest's [[structure]] tables (default: every shared range)", kind="names")

    def __post_init__(self):
        if self.proxied is not None:
            split_names("proxied", self.proxied)
        if self.placement not in PLACEMENTS:
            raise ModelError("placement", f"must be first-touch or round-robin, got {self.placement!r}")
        if self.proxies not in PROXIES:
            raise ModelError("proxies", f"must be none, basic or reactive, got {self.proxies!r}")
        if self.buffer is not None and (not isinstance(self.buffer, int) or self.buffer < 0):
            raise ModelError("buffer", f"must be a non-negative integer (messages) or None, got {self.buffer!r}")
        if self.proxies == "reactive" and self.buffer is None:
            raise ModelError("proxies", "reactive proxies act on bounced reads: give a finite --buffer (e.g. 8)")
        for name in ("slc", "flc"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 64 or v & (v - 1):
                raise ModelError(name, f"must be a power of two of at least 64 bytes, got {v!r}")
        if self.flc > self.slc:
            raise ModelError("flc", "must not be larger than the slc (the SLC includes the first level)")
        if self.initialisation not in ("first-barrier", "none"):
            raise ModelError("initialisation", f"must be first-barrier or none, got {self.initialisation!r}")
        check_run_options(self.cycles_per_reference, self.references)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class CCNUMAResult:
    """Per-node counters (``processes``: name and :data:`COUNTERS`), totals, the parallel
    phase's length (``execution_cycles``), and per requester x node matrices of
    node-controller services (``visits``), their cycles (``demand``) and the services on
    remote reads' paths (``read_visits``); ``phase_*`` are the same summed phase by
    phase with each barrier phase's busiest controller in column 0 (:class:`_Phases`),
    and ``phase_groups`` the same per group of phases of like intensity, each with the
    nodes' counters (visits, demand, read visits, counters by :data:`COUNTERS`): the
    queueing model's inputs."""

    workload: str
    config: dict
    processes: tuple
    totals: dict
    execution_cycles: int
    visits: np.ndarray
    demand: np.ndarray
    read_visits: np.ndarray
    phase_visits: np.ndarray
    phase_demand: np.ndarray
    phase_read_visits: np.ndarray
    lines: int
    pages: int
    seconds: float
    phase_groups: tuple = ()

    def counter(self, name: str) -> np.ndarray:
        """One counter as an array over nodes."""
        return np.array([p[name] for p in self.processes], dtype=np.int64)

    @property
    def nodes(self) -> int:
        return len(self.processes)

    @property
    def remote_read_response_cycles(self) -> float:
        """Mean cycles from sending a remote read to receiving its data (bounces,
        retries and proxies included)."""
        t = self.totals
        return t["remote_read_cycles"] / t["remote_reads"] if t["remote_reads"] else 0.0

    @property
    def input_buffer_queueing_cycles(self) -> float:
        """Mean cycles a network message waits in a node's input buffer."""
        t = self.totals
        return t["queueing_cycles"] / t["buffered"] if t["buffered"] else 0.0

    @property
    def nc_utilization(self) -> np.ndarray:
        return self.counter("nc_busy") / max(self.execution_cycles, 1)

    def to_dict(self) -> dict:
        t = self.totals
        util = self.nc_utilization
        return {"workload": self.workload, "machine": "ccnuma", "config": self.config, "nodes": self.nodes,
                "execution_cycles": self.execution_cycles, "messages": t["messages"],
                "remote_reads": t["remote_reads"], "remote_read_response_cycles": self.remote_read_response_cycles,
                "input_buffer_queueing_cycles": self.input_buffer_queueing_cycles, "bounces": t["bounces"],
                "proxy_reads": t["proxy_reads"], "references": t["references"],
                "requests": self.counter("requests").tolist(), "nc_utilization": util.tolist(),
                "hot_node": int(np.argmax(util)) if util.size else 0, "lines": self.lines, "pages": self.pages,
                "totals": t, "processes": list(self.processes), "seconds": self.seconds}


class _Tables:
    """Growable line, page and lock arrays and their one hash table."""

    def __init__(self, nodes: int):
        self.nodes = nodes
        self.tab = self._table(1 << 14)
        self.lines = self._lines(1 << 12)
        self.page_home = np.zeros(1 << 10, np.int64)
        self.lock_holder = np.full(1 << 6, -1, np.int64)

    @staticmethod
    def _table(size):
        return np.zeros(size, np.int64), np.zeros(size, np.uint64), np.full(size, -1, np.int64)

    def _lines(self, cap):
        W = (self.nodes + 63) // 64
        return (np.zeros(cap, np.int64), np.zeros(cap, np.int64), np.zeros(cap, np.int8), np.zeros(cap, np.int8),
                np.full(cap, -1, np.int64), np.zeros((cap, W), np.uint64), np.zeros(cap, np.int64),
                np.zeros(cap, np.int64), np.zeros(cap, np.int64), np.zeros(cap, np.int64))

    def grow(self, glob):
        from ._blockmap_kernel import rehash

        used = int(glob[K.G_LINES] + glob[K.G_PAGES] + glob[K.G_LOCKS]) + 4
        if 2 * used > self.tab[2].shape[0] // 2:
            new = self._table(1 << int(math.ceil(math.log2(8 * used))))
            rehash(*self.tab, *new)
            self.tab = new
        if glob[K.G_LINES] + 2 > self.lines[0].shape[0]:
            new = self._lines(2 * self.lines[0].shape[0])
            for a, b in zip(self.lines, new, strict=False):
                b[: a.shape[0]] = a
            self.lines = new
        if glob[K.G_PAGES] + 2 > self.page_home.shape[0]:
            self.page_home = np.concatenate([self.page_home, np.zeros_like(self.page_home)])
        if glob[K.G_LOCKS] + 2 > self.lock_holder.shape[0]:
            self.lock_holder = np.concatenate([self.lock_holder, np.full_like(self.lock_holder, -1)])

    def forget_lines(self, keep_pages: bool, glob):
        new = self._table(self.tab[2].shape[0])
        K.keep_entries(*self.tab, *new, keep_pages)
        self.tab = new
        glob[K.G_LINES] = 0
        if not keep_pages:
            glob[K.G_PAGES] = 0


#: Barrier phases share a group (_Phases) when their transaction intensities
#: (transactions per cycle of the processors' own time) and their concentrations (the
#: busiest controller's share of the phase's controller cycles) fall in the same bins
#: of this factor.
PHASE_GROUP_FACTOR = 1.5


def _bin(x: float) -> int:
    """The logarithmic bin of ``x`` > 0 at :data:`PHASE_GROUP_FACTOR`."""
    return int(math.floor(math.log(x) / math.log(PHASE_GROUP_FACTOR)))


class _Phases:
    """The requester x controller matrices summed over barrier phases, each phase's
    busiest controller (by the cycles the phase asked of it) swapped into column 0
    [REC]: barriers keep phases apart in time, so requests queue only with those of
    their own phase, and a hot spot that moves from phase to phase (GE's pivot row)
    stays one hot spot instead of being averaged away over the run.

    The same sums are also kept per group of like phases (transactions per cycle of own
    time, and the busiest controller's share of the phase's controller cycles, each in
    bins of :data:`PHASE_GROUP_FACTOR`), with each node's counters (``groups``: {group:
    [visits, demand, read visits, counters]}): a program whose transposes come in bursts
    between quiet phases queues in the bursts, which one sum over the run averages away
    (FFT's remote reads at 64 nodes: MVA 65% low on the run's sums, 1% on its groups),
    and a phase that loads one home apart from phases that spread their load (FMM under
    first-touch: 21% high on intensity alone, 4% with the share too)."""

    def __init__(self, vis, demand, rvis, stats):
        self.live = (vis, demand, rvis, stats)
        self.last = tuple(a.copy() for a in self.live)
        self.groups = {}

    @property
    def sums(self) -> tuple:
        """The three matrices summed over every phase (the groups' sums)."""
        return tuple(sum((g[i] for g in self.groups.values()), np.zeros_like(self.live[i])) for i in range(3))

    def fold(self):
        """Add the phase that ends now."""
        phase = tuple(a - b for a, b in zip(self.live, self.last, strict=False))
        order = np.arange(phase[1].shape[1])
        hot = int(np.argmax(phase[1].sum(axis=0)))
        order[0], order[hot] = hot, 0
        aligned = tuple(a[:, order] for a in phase[:3]) + (phase[3],)
        counts = phase[3]
        own = counts[:, K.C_WORK].sum() + counts[:, K.C_STALL].sum()
        transactions = counts[:, K.C_TRANSACTIONS].sum()
        self.last = tuple(a.copy() for a in self.live)
        if own == 0 and not any(a.any() for a in aligned):
            return                              # an empty phase (e.g. two barriers in a row)
        per_node = phase[1].sum(axis=0)
        share = per_node.max() / per_node.sum() if per_node.sum() > 0 else 1.0
        key = (-1, 0) if transactions == 0 or own == 0 else (_bin(transactions / own), _bin(share))
        group = self.groups.setdefault(key, [np.zeros_like(a) for a in aligned])
        for total, a in zip(group, aligned, strict=True):
            total += a


def _caches(config: CCNUMAConfig, P: int) -> tuple:
    """Per node: SLC tags, states, stamps, checker versions (checking mode only) and FLC tags."""
    check_cache_memory("slc", P * (config.slc + config.flc) // 64, f"{P} nodes with an SLC of {config.slc:,} bytes "
                                                                   f"and an FLC of {config.flc:,}")
    slc_sets, flc_sets = config.slc // 64, config.flc // 64
    return (np.full((P, slc_sets), -1, np.int64), np.zeros((P, slc_sets), np.int8),
            np.zeros((P, slc_sets), np.int64),
            np.zeros((P, slc_sets) if config.check else (1, 1), np.int64), np.full((P, flc_sets), -1, np.int64))


def _event_queue(P: int) -> tuple:
    """The kernel's event pool, heap, free list and globals, and each node's ring of
    waiting messages, sized for ``P`` nodes."""
    cap = 4 * P * (P + 8) + 1024
    glob = np.zeros(K.N_GLOB, np.int64)
    glob[K.G_FREE_N] = cap
    glob[K.G_ACTIVE] = P
    glob[K.G_CHECK_FAIL] = -1
    queue = (np.zeros((cap, K.N_EFIELDS), np.int64), np.zeros(cap, np.int64), np.arange(cap, dtype=np.int64), glob)
    return queue, np.zeros((P, 1 << int(math.ceil(math.log2(cap)))), np.int64)


def _deadlock(workload: Workload, node, cut: bool = False) -> ModelError:
    """Why the processes cannot all finish, naming those that wait (``cut``: the
    traces were cut by ``references``, which may end a process inside a critical section)."""
    stuck = [p.name for q, p in enumerate(workload.processes) if node[q, K.N_STATUS] in (K.WAIT_LOCK, K.WAIT_BARRIER)]
    return ModelError("workload", "the processes cannot all finish: "
                      + (f"{', '.join(stuck[:4])} wait for a lock never released or a barrier others skip"
                         if stuck else "a lock released by a process that does not hold it")
                      + ("; --references may have cut a process's trace inside a critical section" if cut else ""))


def _proxied_ranges(workload: Workload, config: CCNUMAConfig) -> list:
    """The byte ranges whose reads basic proxies route: the structures ``config.proxied``
    names, else the workload's own choice (``meta["proxied"]``), else every shared range."""
    if config.proxied is not None:
        return workload.structure_ranges(split_names("proxied", config.proxied), "proxied")
    marked = workload.meta.get("proxied")
    return [(r.start, r.end) for r in workload.shared] if marked is None else marked


def simulate_ccnuma(workload: Workload, config: CCNUMAConfig = CCNUMAConfig(),
                    protocol: DirectoryProtocol = DIRECTORY) -> CCNUMAResult:
    """Run every process of ``workload`` on its own node to the end of its trace (or
    ``references``); see the module docstring.  ``protocol`` replaces the directory
    tables (a test breaks one to see the checking mode catch it).

    Examples
    --------
    >>> from calibration.sim.parallel import parallel_kernel
    >>> r = simulate_ccnuma(parallel_kernel("ge", processes=4, size=32), CCNUMAConfig())
    >>> r.execution_cycles, r.totals["remote_reads"]
    (106463, 621)
    """
    t0 = clock()
    P = len(workload.processes)
    cpr = config.cycles_per_reference
    if cpr is None:
        cpr = int(workload.meta.get("cycles_per_reference", 1))
    refs = RawReferences(workload, config.references, cpr, private=True)
    marked = _proxied_ranges(workload, config)
    mark = (np.array([m[0] for m in marked], np.uint64), np.array([m[1] for m in marked], np.uint64))
    tables = _Tables(P)
    caches = _caches(config, P)
    Q, ring = _event_queue(P)
    ev, heap, free, glob = Q
    pend_line = np.full((P, P), -1, np.int64)
    pend_head = np.full((P, P), -1, np.int64)
    node = np.zeros((P, K.N_NODE), np.int64)
    stats = np.zeros((P, K.N_STATS), np.int64)
    vis, demand, rvis = (np.zeros((P, P), np.int64) for _ in range(3))
    phases = _Phases(vis, demand, rvis, stats)
    init = config.initialisation == "first-barrier"
    first_touch = config.placement == "first-touch"
    buffer_limit = -1 if config.buffer is None else config.buffer
    for p in range(P):
        node[p, K.N_CPR] = refs.cycles[p]
        K._push(ev, heap, free, glob, K.K_PROC, 0, p, p, 0, -1, p, 0, 0, 0, 0, 0)
    while True:
        code = K.run(refs.op, refs.addr, refs.length, refs.cursor, refs.ended, P, buffer_limit,
                     PROXIES.index(config.proxies), first_touch, config.check, init, mark, tables.tab,
                     tables.lines, tables.page_home, tables.lock_holder, caches, Q, ring, pend_line, pend_head, node,
                     stats, vis, demand, rvis, protocol.arrays())
        if code == K.DONE:
            phases.fold()
            break
        if code >= 0:
            refs.refill(code)
            node[code, K.N_CPR] = refs.cycles[code]
        elif code == K.PHASE_END:
            phases.fold()
        elif code == K.GROW:
            tables.grow(glob)
        elif code == K.INIT_END:
            # the parallel phase starts: caches flushed, pages placed anew (first touch)
            glob[K.G_INIT_DONE] = 1
            glob[K.G_START] = int(node[:, K.N_CLOCK].max())
            caches[0][:] = -1                 # SLC and FLC tags; line entries are made afresh
            caches[4][:] = -1
            tables.forget_lines(not first_touch, glob)
            for a in (stats, vis, demand, rvis):
                a[:] = 0
            phases = _Phases(vis, demand, rvis, stats)
        elif code in (K.STALE_READ, K.TWO_WRITABLE):
            what = "read an old value" if code == K.STALE_READ else "stored while another node held the line"
            raise CoherenceViolation(f"protocol {protocol.name}: node {int(glob[K.G_CHECK_FAIL])} {what}")
        else:
            raise _deadlock(workload, node, config.references is not None)
    refs.check_barriers()
    start = int(glob[K.G_START])
    execution = int(node[:, K.N_FINISH].max(initial=0)) - start
    procs = tuple({"name": p.name, **{c: int(stats[i, k]) for k, c in enumerate(COUNTERS)}}
                  for i, p in enumerate(workload.processes))
    totals = {c: int(stats[:, k].sum()) for k, c in enumerate(COUNTERS)}
    groups = tuple(tuple(phases.groups[k]) for k in sorted(phases.groups))
    return CCNUMAResult(workload.name, config.to_dict(), procs, totals, execution, vis, demand, rvis,
                        *phases.sums, int(glob[K.G_LINES]), int(glob[K.G_PAGES]), seconds_since(t0), groups)


TABLE_COLUMNS = ("references", "read_misses", "remote_reads", "requests", "messages", "bounces", "proxy_reads")


def format_result(d: dict) -> str:
    """The table of ``mva simulate --machine ccnuma`` from a run's :meth:`CCNUMAResult.to_dict`."""
    c, t = d["config"], d["totals"]
    buf = "infinite" if c["buffer"] is None else f"{c['buffer']} messages"
    lines = [f"{d['workload']}: cc-NUMA, {d['nodes']} nodes, {c['placement']} pages, proxies {c['proxies']}, "
             f"input buffers {buf}",
             f"  execution {d['execution_cycles']:,} cycles (parallel phase); references {d['references']:,}; "
             f"messages {d['messages']:,}",
             f"  remote reads {d['remote_reads']:,}, mean response {d['remote_read_response_cycles']:.1f} cycles; "
             f"input buffer queueing {d['input_buffer_queueing_cycles']:.1f} cycles per message",
             f"  bounces {d['bounces']:,}; proxy reads {d['proxy_reads']:,} (combined {t['combined']:,}, served "
             f"from a proxy's cache {t['proxy_hits']:,}); hot node {d['hot_node']}",
             f"  {'node':<14}" + "".join(f"{k:>14}" for k in TABLE_COLUMNS) + f"{'NC util':>9}"]
    for p, u in zip(d["processes"], d["nc_utilization"], strict=True):
        lines.append(f"  {p['name']:<14}" + "".join(f"{p[k]:>14,}" for k in TABLE_COLUMNS) + f"{u:>9.3f}")
    lines.append(f"  {'total':<14}" + "".join(f"{t[k]:>14,}" for k in TABLE_COLUMNS))
    return "\n".join(lines)


def summary_row(d: dict) -> dict:
    """One row of a sweep's table: the headline numbers of a run's :meth:`CCNUMAResult.to_dict`."""
    return {k: d[k] for k in ("execution_cycles", "messages", "remote_reads", "remote_read_response_cycles",
                              "input_buffer_queueing_cycles", "bounces", "proxy_reads", "hot_node")}
