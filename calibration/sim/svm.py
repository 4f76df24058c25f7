"""The SVM cluster machine: software shared memory across uniprocessor nodes, as page-
based home-based lazy release consistency (HLRC) or fine-grained sequential consistency
(SC), simulating the time each process's references cost the protocol and the
communication (``mva simulate WORKLOAD --machine svm --protocol hlrc|sc --granularity
64B --communication A --protocol-costs O``).

The machine the layered study of software shared memory simulates in detail (Bilas,
Jiang, Zhou & Singh, "Limits to the Performance of Software Shared Memory: A Layered
Approach", HPCA 1999, §2-§3): it counts protocol events per process and simulates the
time they cost, with contention at the network interfaces, I/O buses and the processors
that run handlers (below).  The layered model (:mod:`models.svm_cluster`) prices the
counts of a run without costs at any costs, without re-running the trace.  One node per
process; addresses in the workload's shared ranges are shared (keyed by virtual
address, as a shared segment mapped at one address in every process), the rest private
and free.

HLRC (Zhou, Iftode & Li, OSDI 1996) at 4 KiB pages:

* every page has a home (``home``: the first process to touch it, or round-robin over
  the range's pages); the home's copy is always valid;
* a read or write of an invalid page is a **page fault**: request to the home, the page
  back (4 KiB), protection changed (an ``mprotect``);
* the first write to a page in an interval is a **write fault** (protection) and, off
  the home, a **twin**; the writer marks the 4-byte words it writes;
* an interval ends at every synchronisation marker (acquire, release, barrier) and at
  the end of the trace [REC: LRC ends intervals at acquires and releases; we also flush
  diffs at an acquire, which HLRC defers to the next release].  Then each written page
  is write-protected again, gets a **write notice**, and, off the home, a **diff**: all
  1024 words compared with the twin, the changed words sent to the home and applied
  there (one message each);
* lock acquires carry the last releaser's knowledge (vector clocks over intervals); a
  barrier carries everyone's (through the manager, node 0).  Each notice received is a
  list element processed; a notice for a valid non-home copy **invalidates** it.

SC (Stache-like, Reinhardt, Larus & Wood, ISCA 1994) at ``granularity`` bytes: a full-map
directory at the block's home (first touch or round-robin pages) [REC: the paper's SC
protocol is directory-based like hardware; ours keeps owner and sharer bits per block];
a read miss is a request to the home (forwarded to a dirty owner, who replies and writes
back: three hops), a write miss or upgrade invalidates the sharers (invalidation plus
acknowledgement each) and takes ownership.

Synchronisation (trace markers, :data:`calibration.sim.traces.ACQUIRE` ...): a lock's
manager is node ``lock mod P``; an acquire is a request to the manager, a forward to the
last holder and its grant.  A barrier is a message to the manager and one back.

Time (Bilas et al. §3.2-3.3; ``communication`` a set of Table 2, ``protocol_costs`` one
of Table 3, or ``ideal`` and ``B``: every cost zero).  Each node is a processor (1 IPC:
one cycle per instruction fetch, or ``cycles_per_reference`` per data reference of a
trace without them), an I/O bus and a network interface; the runnable process with the
smallest clock runs next.

* A message costs its sender's processor the **host overhead** (asynchronous send), then
  crosses the sender's I/O bus (header of 16 bytes and data at the **I/O bus
  bandwidth**), the sender's NI (**NI occupancy** per packet of up to 4 KiB), the link
  (20 cycles; 0 in B+) and the receiver's I/O bus, which streams the data into memory as
  it arrives [REC: cut-through, so an unloaded message pays one crossing, as the layered
  model's formula does; a busy receiving bus delays it; the paper does not say;
  ``receive_without_bus`` takes the data into memory past it, a what-if that tells the
  buses' contention for what the nodes send from that for what they take in, the
  layered model's ``receive_load`` 0].  I/O buses, NIs and each processor's handler time are FCFS
  resources booked in the order the scheduler meets them, which it keeps close to time
  order (a process that sent a message yields) [REC: bookings, not an event queue; a
  booking may fill an earlier idle gap].
* A **request** (page or block fetch, forward, invalidation, lock request, diff, barrier
  arrival) runs a handler at the receiver: **message handling** + the **handler**'s
  basic cost + its own work (diff application per word) + the host overhead of what it
  sends.  Handlers interrupt the node's program, as the paper's simulator does with the
  handling cost set to that of polling: the program is delayed by the handler unless
  its processor idles then (waiting for data, at a lock or a barrier, or finished).  A
  handler booked at a time the node's program has not reached yet waits until it gets
  there: charged in full if the program runs then, and only for the part past a wait's
  end if it falls in one (the machine advances one process at a time; charging such a
  handler at once, as it did before, delayed programs by handlers that ran while they
  waited: on Barnes under SC at AO, 13.7 M cycles a node, most of its 18 M of protocol time).
  Data replies and acknowledgements are deposited in memory without a handler.
* HLRC: a page fault waits for the page, then pays **page protection**; the first write
  in an interval pays protection and, off the home, a **twin** (per page
  [REC: Table 3 prints 10,000 cycles per word; a 1024-word page copied at about 10 cycles
  a word is 10,000 per page]); at a synchronisation point each written page pays
  protection and, off the home, **diff creation** (per word compared and per word in
  the diff) and the diff's send, applied by the home's handler; the writer does not wait
  for it [REC: nor does a later fetch of that page].  Each write notice received costs
  20 cycles and each invalidation a protection.
* SC: a miss waits for the data, and a write for every invalidation's acknowledgement;
  the home's handler forwards to a dirty owner.  SC has no protection, twin or diff
  costs (the paper does not simulate access control).
* Locks: the request goes to the manager and is forwarded to the holder; if the lock
  is free the last holder's handler grants it, else the holder grants it at its release
  (waiters in order of their requests).  Barriers: a message to the manager (node 0),
  which after the last arrival sends the releases one by one.

Critical sections are counted too: the work (``cs_busy``), fetches (``cs_requests``),
protocol counts (``cs_protections``, ``cs_twins``, ``cs_compared_words``, ``cs_diff_words``,
``cs_notices``), SC acknowledgements awaited (``cs_acks``) and the messages of acquires
nested inside (``cs_lock_messages``) between a lock's grant (the notices it brings
included) and its release (the release's diffs included), outermost lock only.  SC
requests are told apart by what travels: ``forwarded`` (the home forwards to a dirty
owner: three hops) and ``local_requests`` (at the requester's own home with no dirty
owner: no request message, only invalidations); the rest are round trips; inside
critical sections ``cs_forwarded`` and ``cs_local_requests``.  ``cs_served`` counts, on
the serving node, the requests it serves for a process inside a critical section (of
``served``): the homes of what locks protect are seldom those of the rest.
``ack_writes`` counts the SC writes that waited for acknowledgements (of ``acks``): a
write's invalidations leave its home one after another and the sharers acknowledge
them at once, so each sharer more adds one invalidation's sending, not a round trip.
``migratory`` counts the SC writes right after the writer's read of the same block was
forwarded to its dirty owner, with no other request of the writer travelling and no
synchronisation between (read-modify-write data migrating from node to node; inside
critical sections ``cs_migratory``), and ``migratory_gap`` the writer's busy cycles
between each such read's data and its write, summed: the owner sends the write-back to
the home right after the data, so a write soon after finds the home's I/O bus still
taking it in.  ``concurrent`` counts, summed over a node's requests to remote servers,
the other nodes (not the server) that requested near it in time (within the node's time
since its last request of the phase, before or after), and ``colliding`` those of them
that requested the same server then: on the machine without costs, the program's own
schedule.  A staggered all-to-all exchange (Splash's transposes: node i fetches from
i + 1, i + 2, ... in turn) has every server fetched from by one node at a time, so
``colliding`` stays near 0 where independent routing would give about ``concurrent`` /
(nodes - 1).  The same windows, binned by powers of two, are ``SVMResult.request_gaps``:
the recorded programs fetch in streams (without costs, 79% of Ocean's remote requests
under SC come within 16 cycles of the node's last one, 99% of FFT's within 256), which
load a server's bus and NI in bursts a run-long utilisation does not show.
Per lock (``SVMResult.lock_content``, :data:`LOCK_CONTENT`): its outermost critical sections and
what they held, each section counted to the outermost lock held; and ``lock_wait``, the
cycles its acquirers waited for it (summed, the breakdown's lock wait), and
``lock_hold``, the cycles it was held and the time and number of its handoffs (a release
to the grant's arrival at a waiting acquirer).  Bursts: a
process's first acquire after a barrier (or the start) counts in ``burst_ahead`` the
first acquires of the same lock in the same phase before it (the k-th to come counts
k - 1; per lock the last column of ``lock_content``): all the processes leave a
barrier together, so these are the critical sections it waits behind when they reach
their first lock together, the model's lock bursts.  How far into its phase each such
first acquire comes: ``first_acquires`` counts them, ``burst_busy`` sums the process's
work since it left the barrier (or started) and ``burst_requests`` its requests then,
by which the model tells whether the nodes reach the lock together or apart.

Outputs: the execution time (the last node to finish), speedup = the work of all nodes
(the one-processor run: no protocol traffic) over it, and per node the breakdown busy /
data wait / lock wait / barrier wait (the wait after finishing included) / protocol (its
own protocol work and the handlers it ran), which sums to the execution time; Table 4's
split of protocol time into handlers and diff creation; and where the queues are
(``queue_waits``: per node and resource, the cycles what was booked there waited; at
the I/O buses split by what waited, ``bus_waits``).  Protocol state changes when a
transaction starts [REC: no transient states; a transaction is priced through the
resources but takes effect at once].  With every cost zero the run is the PRAM
schedule: ``execution_cycles`` is the ideal parallel time (every memory access free,
only the work, its imbalance and lock serialisation left), and the counts are those the
layered model prices (:func:`calibration.profiles.svm_cluster.simulate_pair`).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from mva.errors import ModelError

from . import _svm_kernel as K
from .machine import MAX_CYCLES_PER_REFERENCE, RawReferences, check_run_options
from .options import option, size_label
from .workload import PAGE, Workload
from mva.jit import clock as wall_clock, seconds_since

__all__ = ["SVMConfig", "SVMResult", "simulate_svm", "lock_concentration", "COUNTERS", "TIMES", "BREAKDOWN",
           "COMMUNICATION_SETS", "LOCK_CONTENT", "RESOURCES", "BUS_KINDS"]

BUFFER = 1 << 16
#: communication sets: Table 2's, and ``ideal`` (no communication cost at all)
COMMUNICATION_SETS = ("A", "H", "B", "W", "B+", "ideal")
#: protocol sets: Table 3's
PROTOCOL_SETS = ("O", "H", "B")
#: the breakdown of each node's time (cycles; they sum to the execution time)
BREAKDOWN = ("busy", "data_wait", "lock_wait", "barrier_wait", "protocol")
COUNTERS = ("busy", "references", "shared_references", "read_faults", "write_faults", "requests", "reply_bytes",
            "served", "oneway", "oneway_bytes", "received", "applied_words", "protections", "twins", "diffs",
            "compared_words", "diff_words", "notices", "invalidations", "acquires", "lock_messages", "cs_busy",
            "cs_requests", "barriers", "messages", "acks", "cs_protections", "cs_twins", "cs_compared_words",
            "cs_diff_words", "cs_notices", "cs_lock_messages", "forwarded", "local_requests", "cs_acks",
            "cs_forwarded", "cs_local_requests", "burst_ahead", "cs_served", "ack_writes", "migratory",
            "cs_migratory", "migratory_gap", "concurrent", "colliding", "first_acquires", "burst_busy",
            "burst_requests")
assert len(COUNTERS) == K.N_STATS
#: each node's resources whose queues :attr:`SVMResult.queue_waits` reports: its
#: processor's handlers, its I/O bus and its NI
RESOURCES = ("handler", "io_bus", "ni")
#: what waits at an I/O bus, the columns of :attr:`SVMResult.bus_waits`: a message
#: leaving the node with a header alone (requests, invalidations, acknowledgements, lock
#: and barrier messages) or with data (replies, diffs, write-backs), and one taken in
BUS_KINDS = ("send_header", "send_data", "receive_header", "receive_data")
assert len(BUS_KINDS) == K.BUS_RECEIVE_DATA + 1
#: each process's times (cycles): the breakdown's waits, ``protocol`` (its own protocol
#: work and the handlers it ran for others), ``handler`` and ``diff`` (diff creation) of
#: it, and when it finished
TIMES = ("data_wait", "lock_wait", "barrier_wait", "protocol", "handler", "diff", "finish")
#: the columns of :attr:`SVMResult.lock_content`: each lock's outermost critical sections,
#: then what they held (the ``cs_`` counters, counted to the outermost lock held), then
#: ``burst_ahead``: over the phases, the acquires of the lock that were their process's
#: first of the phase and came before another such acquire of it (counted to the lock
#: acquired)
LOCK_CONTENT = ("sections", *(COUNTERS[k] for k in K.LOCK_CONTENT), "burst_ahead")


def lock_concentration(counts) -> float:
    """The chance two acquires (or sections) name the same lock, from each lock's
    ``counts``: sum of squared shares (0 without any)."""
    counts = np.asarray(counts, float)
    total = counts.sum()
    return float((counts ** 2).sum() / total ** 2) if total > 0 else 0.0


@dataclass(frozen=True)
class SVMConfig:
    """``protocol`` hlrc (4 KiB pages) or sc (``granularity`` bytes, a power of two from
    64 B to 4 KiB; None: the protocol's own unit, the page for hlrc and 64 B for sc);
    ``home`` first-touch or round-robin; ``cycles_per_reference`` (cycles of work per
    data reference when a trace has no instruction fetches; None: the workload's own
    figure, else 1); ``references`` caps each process's trace."""

    protocol: str = option("hlrc", "coherence protocol (default hlrc)", kind="choice", choices=("hlrc", "sc"))
    granularity: int | None = option(None, "coherence unit: 4KiB for hlrc, 64B to 4KiB for sc (default: 4KiB for "
                                           "hlrc, 64B for sc)", "bytes", "size")
    home: str = option("first-touch", "home of each page or block (default first-touch)", kind="choice",
                       choices=("first-touch", "round-robin"))
    cycles_per_reference: int | None = option(None, "work per data reference of a trace without instruction "
                                                    "fetches (default: the kernel's, else 1; at most 1,000,000)", "cycles",
                                              low=0, high=MAX_CYCLES_PER_REFERENCE)
    references: int | None = option(None, "references kept of each process's trace (default: all)", "references")
    communication: str = option("A", "communication costs (Bilas et al. Table 2): A achievable, H halfway, B best, "
                                     "W worse, B+ better than best, ideal none at all (default A)",
                                kind="choice", choices=COMMUNICATION_SETS)
    protocol_costs: str = option("O", "protocol costs (Table 3): O original, H halfway, B best (default O)",
                                 kind="choice", choices=PROTOCOL_SETS)
    host_overhead: float | None = option(None, "processor cycles to send a message (default: the communication "
                                               "set's)", "cycles", kind="float", low=0.0, high=1e9)
    ni_occupancy: float | None = option(None, "NI cycles per packet of up to 4 KiB (default: the set's)", "cycles",
                                        kind="float", low=0.0, high=1e9)
    io_bandwidth: float | None = option(None, "I/O bus bandwidth (default: the set's; B+ 4, ideal unlimited)",
                                        "bytes/cycle", kind="float", low=1e-6, high=1e9)
    message_handling: float | None = option(None, "cycles from a message at the head of the NI's queue to its "
                                                  "handler (default: the set's)", "cycles", kind="float", low=0.0,
                                            high=1e9)
    receive_without_bus: bool = option(False, "messages go into the receiver's memory past its I/O bus, which "
                                              "then carries only what its node sends (a what-if: the layered "
                                              "model's receive_load 0)", kind="flag")

    def __post_init__(self):
        if self.protocol not in ("hlrc", "sc"):
            raise ModelError("protocol", f"must be hlrc or sc for the SVM machine, got {self.protocol!r}")
        if self.granularity is None:
            object.__setattr__(self, "granularity", PAGE if self.protocol == "hlrc" else 64)
        g = self.granularity
        if not isinstance(g, int) or g < 64 or g > PAGE or g & (g - 1):
            raise ModelError("granularity", f"must be a power of two from 64 to {PAGE} bytes, got {g!r}")
        if self.protocol == "hlrc" and g != PAGE:
            raise ModelError("granularity", f"HLRC is page-based: its granularity is the {PAGE}-byte page, got {g}")
        if self.home not in ("first-touch", "round-robin"):
            raise ModelError("home", f"must be first-touch or round-robin, got {self.home!r}")
        check_run_options(self.cycles_per_reference, self.references)
        if not isinstance(self.receive_without_bus, bool):
            raise ModelError("receive_without_bus", f"must be true or false, got {self.receive_without_bus!r}")
        if self.communication not in COMMUNICATION_SETS:
            raise ModelError("communication", f"must be one of {', '.join(COMMUNICATION_SETS)}, "
                                              f"got {self.communication!r}")
        if self.protocol_costs not in PROTOCOL_SETS:
            raise ModelError("protocol_costs", f"must be O, H or B, got {self.protocol_costs!r}")
        for name in ("host_overhead", "ni_occupancy", "io_bandwidth", "message_handling"):
            v = getattr(self, name)
            if v is not None and not (math.isfinite(v) and v >= 0 and (v > 0 or name != "io_bandwidth")):
                raise ModelError(name, f"must be a finite number {'above' if name == 'io_bandwidth' else 'at least'}"
                                       f" 0, got {v!r}")

    def costs(self) -> dict:
        """Every cost of the run (cycles; ``transfer`` in cycles per byte), from the sets
        and the overrides: the keys of :data:`models.svm_cluster.COMMUNICATION` and
        :data:`models.svm_cluster.PROTOCOL`."""
        from models.svm_cluster import COMMUNICATION, PROTOCOL

        comm = dict.fromkeys(COMMUNICATION["A"], 0.0) if self.communication == "ideal" else \
            dict(COMMUNICATION[self.communication])
        for name in ("host_overhead", "ni_occupancy", "message_handling"):
            if getattr(self, name) is not None:
                comm[name] = float(getattr(self, name))
        if self.io_bandwidth is not None:
            comm["transfer"] = 1.0 / self.io_bandwidth
        return {**comm, **PROTOCOL[self.protocol_costs]}

    def cost_vector(self) -> np.ndarray:
        """:meth:`costs` in the kernel's order (:data:`calibration.sim._svm_kernel.N_COSTS`)."""
        c = self.costs()
        return np.array([c["host_overhead"], c["ni_occupancy"], c["transfer"], c["link_latency"],
                         c["message_handling"], c["page_protection"], c["diff_compare"], c["diff_word"],
                         c["diff_apply"], c["twin"], c["handler"], c["notice"],
                         0.0 if self.receive_without_bus else 1.0], np.float64)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class SVMResult:
    """Counters per process (``processes``: name, :data:`COUNTERS` and the times of
    :data:`TIMES`), their totals, the simulated ``execution_cycles`` (the last node to
    finish; the PRAM time when every cost is zero), the sum over barrier phases of the
    slowest process's work (``phase_max_cycles``), locks (``locks``,
    ``lock_concentration`` = the chance two acquires name the same lock), shared
    ``units`` (pages or blocks) and run time."""

    workload: str
    config: dict
    processes: tuple
    totals: dict
    execution_cycles: int
    phase_max_cycles: int
    locks: int
    lock_concentration: float
    units: int
    seconds: float
    #: phases x processes x :data:`COUNTERS`: each barrier phase's counts
    phase_counts: np.ndarray = field(default=None, repr=False, compare=False)
    #: locks x :data:`LOCK_CONTENT`: each lock's outermost critical sections and
    #: what they held (counted to the outermost lock held), over the run
    lock_content: np.ndarray = field(default=None, repr=False, compare=False)
    #: each lock's acquirers' wait for it (cycles, summed over processes): the per-lock
    #: split of the breakdown's ``lock_wait``
    lock_wait: np.ndarray = field(default=None, repr=False, compare=False)
    #: phases x processes x :data:`BREAKDOWN` (cycles): each barrier phase's time per
    #: node, from the node's release from the barrier before it to its release from the
    #: one after it (the manager releases the nodes one after another), the last phase to
    #: the run's end, a node's wait after it finished counted as barrier wait
    phase_times: np.ndarray = field(default=None, repr=False, compare=False)
    #: 2 x processes x :data:`RESOURCES`: the cycles the messages and handlers booked on
    #: each node's resources waited for them (summed), then how many were booked: where
    #: the queueing behind the data wait happens (a fetch waits at its server's bus, not
    #: at its own node's)
    queue_waits: np.ndarray = field(default=None, repr=False, compare=False)
    #: processes x 64 x 2: each node's requests to remote servers by the clock since its
    #: last one of the barrier phase (the phase's first: since the latest arrival at a
    #: barrier, ``concurrent``'s window, which a node still working when others reach
    #: the next barrier sees shortened), in bins of
    #: powers of two (bin b: [2^b, 2^(b+1)) cycles, bin 0 below 2), how many (column 0)
    #: and those cycles summed (column 1): on the machine without costs the work between
    #: (a node's fetches come in streams, one right after another, or apart)
    request_gaps: np.ndarray = field(default=None, repr=False, compare=False)
    #: 2 x processes x :data:`BUS_KINDS`: the ``io_bus`` column of :attr:`queue_waits`
    #: split by what waited, the cycles (summed) then the messages: a request waits at
    #: its server's bus behind the server's own transfers (``receive_header``), a reply
    #: behind the server's other replies (``send_data``)
    bus_waits: np.ndarray = field(default=None, repr=False, compare=False)
    #: processes x :data:`BUS_KINDS`: the cycles each node's I/O bus carried of each kind
    #: (its busy time, split as :attr:`bus_waits`), to set beside a model's bus load
    bus_busy: np.ndarray = field(default=None, repr=False, compare=False)
    #: locks x 3: each lock's held time (cycles, summed over its holders: from the grant's
    #: arrival, or the acquire where the grant came first, to the release), its handoffs'
    #: time (cycles, summed: from a release, or the waiting request's handling where it came
    #: later, to the grant's arrival at the next holder) and their number, to set beside a
    #: model's critical sections and grants
    lock_hold: np.ndarray = field(default=None, repr=False, compare=False)

    @property
    def sequential_cycles(self) -> int:
        """The one-processor run's time: all the work, no protocol traffic (cycles)."""
        return int(self.totals["busy"])

    @property
    def speedup(self) -> float:
        return self.sequential_cycles / max(self.execution_cycles, 1)

    def counter(self, name: str) -> np.ndarray:
        """One counter or time (:data:`COUNTERS`, :data:`TIMES`) as an array over processes."""
        return np.array([p[name] for p in self.processes], dtype=np.int64)

    def breakdown(self) -> dict:
        """:data:`BREAKDOWN` per node (cycles, arrays over processes): each node's time
        to the end of the run, the wait after it finished counted as barrier wait."""
        out = {k: self.counter(k).astype(float) for k in BREAKDOWN}
        out["barrier_wait"] += self.execution_cycles - self.counter("finish")
        return out

    def protocol_share(self) -> dict:
        """Bilas et al.'s Table 4: the percentage of the processors' time spent in
        protocol activity, and the shares (%) of it in diff computation and in handlers."""
        t = self.totals
        total = t["protocol"]
        return {"protocol": 100.0 * total / max(self.execution_cycles * len(self.processes), 1),
                "handler": 100.0 * t["handler"] / total if total else 0.0,
                "diff": 100.0 * t["diff"] / total if total else 0.0}

    def to_dict(self) -> dict:
        b = self.breakdown()
        return {"workload": self.workload, "machine": "svm", "config": self.config,
                "nodes": len(self.processes), "sequential_cycles": self.sequential_cycles,
                "execution_cycles": self.execution_cycles, "speedup": self.speedup,
                "breakdown": {k: float(v.mean()) for k, v in b.items()}, "protocol_share": self.protocol_share(),
                "phase_max_cycles": self.phase_max_cycles, "locks": self.locks,
                "lock_concentration": self.lock_concentration, "units": self.units, "totals": self.totals,
                "processes": list(self.processes), "seconds": self.seconds}


class _State:
    """Growable arrays of one run (units, locks, interval lists, notice logs)."""

    def __init__(self, nprocs: int, hlrc: bool):
        self.P, self.hlrc = nprocs, hlrc
        self.tab = self._table(1 << 12)
        self.lock_tab = self._table(1 << 6)
        self.units = self._units(1 << 10)
        self.locks = self._locks(1 << 5)
        self.wlist = np.zeros((nprocs, 1 << 10), np.int64)
        self.log_page = np.zeros((nprocs, 1 << 12), np.int64)
        self.log_int = np.zeros((nprocs, 1 << 12), np.int64)

    @staticmethod
    def _table(size):
        return np.zeros(size, np.int64), np.zeros(size, np.uint64), np.full(size, -1, np.int32)

    def _units(self, cap):
        P, h = self.P, self.hlrc
        return {"home": np.full(cap, -1, np.int64),
                "valid": np.zeros(cap * P if h else 1, np.uint8), "writable": np.zeros(cap * P if h else 1, np.uint8),
                "dirty": np.zeros((cap * P if h else 1, K.PAGE_WORDS // 64), np.uint64),
                "owner": np.full(1 if h else cap, -1, np.int64), "sharers": np.zeros(1 if h else cap, np.uint64)}

    def _locks(self, cap):
        return {"holder": np.full(cap, -1, np.int64), "last": np.full(cap, -1, np.int64),
                "free": np.zeros(cap, np.int64), "vc": np.zeros((cap, self.P), np.int64),
                "acquires": np.zeros(cap, np.int64), "content": np.zeros((cap, K.N_LOCK_CONTENT), np.int64),
                "wait": np.zeros((cap, K.N_LOCK_TIMES), np.int64), "burst": np.repeat([[-1, 0, 0]], cap, axis=0).astype(np.int64)}

    @staticmethod
    def _grown(arrays: dict, new: dict) -> dict:
        for k, a in arrays.items():
            new[k][: a.shape[0]] = a
        return new

    def _rehash(self, tab, used):
        from ._blockmap_kernel import rehash

        if 2 * used <= tab[2].shape[0]:
            return tab
        new = self._table(1 << int(math.ceil(math.log2(4 * used))))
        rehash(*tab, *new)
        return new

    def grow(self, glob, wn, log_n, log_base, pos, status):
        units, locks = int(glob[K.G_UNITS]) + 64, int(glob[K.G_LOCKS]) + 1
        if units > self.units["home"].shape[0]:
            self.units = self._grown(self.units, self._units(2 * units))
        self.tab = self._rehash(self.tab, units)
        if locks > self.locks["holder"].shape[0]:
            self.locks = self._grown(self.locks, self._locks(2 * locks))
        self.lock_tab = self._rehash(self.lock_tab, locks)
        if int(wn.max()) + 64 > self.wlist.shape[1]:
            self.wlist = np.concatenate([self.wlist, np.zeros_like(self.wlist)], axis=1)
        # notice logs: drop what every running process has read, then widen if still tight
        for q in range(self.P):
            readers = [int(pos[p, q]) for p in range(self.P) if status[p] != K.FINISHED and p != q]
            seen = (min(readers) if readers else int(log_base[q] + log_n[q])) - int(log_base[q])
            if seen > 0:
                n = int(log_n[q])
                for arr in (self.log_page, self.log_int):
                    arr[q, : n - seen] = arr[q, seen:n]
                log_n[q] -= seen
                log_base[q] += seen
        need = int((log_n + wn).max()) + 64
        if 2 * need > self.log_page.shape[1]:
            width = 2 * max(need, self.log_page.shape[1])
            self.log_page, self.log_int = (np.concatenate([a, np.zeros((self.P, width - a.shape[1]), np.int64)],
                                                          axis=1) for a in (self.log_page, self.log_int))


def simulate_svm(workload: Workload, config: SVMConfig = SVMConfig()) -> SVMResult:
    """Run every process of ``workload`` to the end of its trace (or ``references``) on
    one node each, under ``config.protocol``; see the module docstring."""
    t0 = wall_clock()
    P = len(workload.processes)
    if P > 64:
        raise ModelError("nodes", f"the SVM machine has at most 64 nodes (one per process), got {P}")
    hlrc = config.protocol == "hlrc"
    cpr = config.cycles_per_reference
    if cpr is None:
        cpr = int(workload.meta.get("cycles_per_reference", 1))
    refs = RawReferences(workload, config.references, cpr, BUFFER)
    op, addr, size, length, cursor, ended, cycles = (refs.op, refs.addr, refs.size, refs.length, refs.cursor,
                                                     refs.ended, refs.cycles)
    ranges = [workload.ranges_for(pid) for pid in range(P)]
    R = max(1, max(r[0].shape[0] for r in ranges))
    range_start = np.zeros((P, R), np.uint64)
    range_end = np.zeros((P, R), np.uint64)
    range_tag = np.zeros((P, R), np.int64)
    range_count = np.zeros(P, np.int64)
    for pid, (s, e, t) in enumerate(ranges):
        n = s.shape[0]
        range_start[pid, :n], range_end[pid, :n], range_tag[pid, :n], range_count[pid] = s, e, t, n
    st = _State(P, hlrc)
    glob = np.zeros(K.N_GLOB, np.int64)
    wn, log_n, log_base = (np.zeros(P, np.int64) for _ in range(3))
    pos = np.zeros((P, P), np.int64)
    vc = np.zeros((P, P), np.int64)
    status = np.zeros(P, np.int64)
    clock, waiting, wait_since, in_cs, phase_busy = (np.zeros(P, np.int64) for _ in range(5))
    first_phase = np.full(P, -1, np.int64)
    cs_mark = np.zeros((P, K.N_STATS + 1), np.int64)
    stats = np.zeros((P, K.N_STATS), np.int64)
    snapshots = np.zeros((64, P, K.N_STATS), np.int64)
    phase_times = np.zeros((64, P, K.N_TIMES + 1), np.int64)
    cost = config.cost_vector()
    cal = np.zeros((P, K.N_CALENDARS, K.CALENDAR, 2), np.int64)
    cal_n = np.zeros((P, K.N_CALENDARS), np.int64)
    times = np.zeros((P, K.N_TIMES), np.int64)
    times[:, K.T_LAST_REQUEST] = K.NEVER
    requested = np.full((P, P), K.NEVER, np.int64)      # each node's last request to each server
    while True:
        u, lk = st.units, st.locks
        code = K.run(op, addr, size, length, cursor, ended, cycles, P, hlrc, int(math.log2(config.granularity)),
                     config.home == "first-touch", range_start, range_end, range_tag, range_count,
                     *st.tab, *st.lock_tab, glob, u["home"], u["valid"], u["writable"], u["dirty"], u["owner"],
                     u["sharers"], st.wlist, wn, st.log_page, st.log_int, log_n, log_base, pos, vc, lk["holder"],
                     lk["last"], lk["free"], lk["vc"], lk["acquires"], lk["content"], lk["wait"], lk["burst"], status, clock, waiting, wait_since, in_cs,
                     first_phase, cs_mark,
                     phase_busy, stats, snapshots, phase_times, cost, cal, cal_n, times, requested)
        if code == K.DONE:
            break
        if code == K.GROW:
            st.grow(glob, wn, log_n, log_base, pos, status)
            if glob[K.G_PHASES] + 1 >= snapshots.shape[0]:
                snapshots = np.concatenate([snapshots, np.zeros_like(snapshots)])
                phase_times = np.concatenate([phase_times, np.zeros_like(phase_times)])
        elif code == K.DEADLOCK:
            stuck = [workload.processes[q].name for q in range(P) if status[q] in (K.WAIT_LOCK, K.WAIT_BARRIER)]
            raise ModelError("workload", "the processes cannot all finish: "
                             + (f"{', '.join(stuck)} wait for a lock never released or a barrier others skip"
                                if stuck else "a lock released by a process that does not hold it"))
        else:
            refs.refill(code)
    refs.check_barriers()
    phase_max = int(glob[K.G_PHASE_MAX] + phase_busy.max(initial=0))
    locks = int(glob[K.G_LOCKS])
    concentration = lock_concentration(st.locks["acquires"][:locks])
    timed = {"data_wait": times[:, K.T_DATA], "lock_wait": times[:, K.T_LOCK], "barrier_wait": times[:, K.T_BARRIER],
             "protocol": times[:, K.T_PROTOCOL] + times[:, K.T_HANDLER], "handler": times[:, K.T_HANDLER],
             "diff": times[:, K.T_DIFF], "finish": times[:, K.T_FINISH]}
    procs = tuple({"name": p.name, **{c: int(stats[i, k]) for k, c in enumerate(COUNTERS)},
                   **{c: int(v[i]) for c, v in timed.items()}} for i, p in enumerate(workload.processes))
    totals = {**{c: int(stats[:, k].sum()) for k, c in enumerate(COUNTERS)},
              **{c: int(v.sum()) for c, v in timed.items() if c != "finish"}}
    # each barrier phase's counts, the last one (after the last barrier) included
    cumulative = np.concatenate([np.zeros((1, P, K.N_STATS), np.int64), snapshots[:int(glob[K.G_PHASES])], stats[None]])
    execution = int(times[:, K.T_FINISH].max(initial=0))
    return SVMResult(workload.name, config.to_dict(), procs, totals, execution,
                     phase_max, locks, concentration, int(glob[K.G_UNITS]), seconds_since(t0),
                     np.diff(cumulative, axis=0),
                     np.column_stack([st.locks["content"][:locks], st.locks["burst"][:locks, K.B_AHEAD]]),
                     st.locks["wait"][:locks, K.L_WAIT].copy(),
                     _phase_times(phase_times[:int(glob[K.G_PHASES])], times, execution),
                     cal[:, K.R_QUEUED, [K.R_CPU, K.R_BUS, K.R_NI]].transpose(2, 0, 1).copy(),
                     cal[:, K.R_GAPS].copy(),
                     cal[:, K.R_BUS_KINDS, :len(BUS_KINDS)].transpose(2, 0, 1).copy(),
                     cal[:, K.R_BUS_KINDS, K.BUS_BUSY:K.BUS_BUSY + len(BUS_KINDS), 0].copy(),
                     st.locks["wait"][:locks, K.L_HELD:].copy())


def _phase_times(released, times, execution) -> np.ndarray:
    """Phases x processes x :data:`BREAKDOWN` from the times at each barrier's release
    (``released``: phases x processes x ``times`` and the clock) and at the end."""
    P = times.shape[0]
    columns = [K.T_DATA, K.T_LOCK, K.T_BARRIER, K.T_PROTOCOL, K.T_HANDLER]
    end = np.concatenate([times[:, columns], np.full((P, 1), execution)], axis=1)
    end[:, 2] += execution - times[:, K.T_FINISH]           # the wait after finishing
    marks = np.concatenate([np.zeros((1, P, len(columns) + 1), np.int64),
                            released[:, :, columns + [K.N_TIMES]], end[None]])
    step = np.diff(marks, axis=0)
    # data, lock and barrier wait, then protocol (its own and the handlers', as in the
    # breakdown); busy is the elapsed time less them
    waits = np.concatenate([step[..., :3], step[..., 3:5].sum(axis=-1, keepdims=True)], axis=-1)
    return np.concatenate([step[..., 5:] - waits.sum(axis=-1, keepdims=True), waits], axis=-1)


TABLE_COLUMNS = ("busy", "read_faults", "write_faults", "requests", "twins", "diff_words", "notices",
                 "invalidations", "acquires", "barriers", "messages")


def format_result(d: dict) -> str:
    """The table of ``mva simulate --machine svm`` from a run's :meth:`SVMResult.to_dict`."""
    c, t = d["config"], d["totals"]
    unit = "page" if c["protocol"] == "hlrc" else f"{c['granularity']}-byte block"
    execution = d["execution_cycles"]
    share = d["protocol_share"]
    lines = [f"{d['workload']}: {c['protocol'].upper()} at {size_label(c['granularity'])}, {d['nodes']} nodes, "
             f"homes {c['home']}, communication {c['communication']}, protocol costs {c['protocol_costs']}"
             + (", messages taken in past the receiving I/O bus" if c.get("receive_without_bus") else ""),
             f"  work {d['sequential_cycles']:,} cycles; execution {execution:,} cycles (speedup {d['speedup']:.2f})",
             "  time per node (mean): " + ", ".join(f"{k.replace('_', ' ')} {100 * v / max(execution, 1):.1f}%"
                                                    for k, v in d["breakdown"].items()),
             f"  protocol activity {share['protocol']:.1f}% of the processors' time: handlers {share['handler']:.0f}%,"
             f" diff computation {share['diff']:.0f}% of it",
             f"  shared {unit}s {d['units']:,}; locks {d['locks']:,} (concentration {d['lock_concentration']:.3f})",
             f"  {'node':<10}" + "".join(f"{k:>15}" for k in TABLE_COLUMNS)]
    for p in d["processes"] + [{"name": "total", **t}]:
        lines.append(f"  {p['name']:<10}" + "".join(f"{p[k]:>15,}" for k in TABLE_COLUMNS))
    lines.append(f"  {'node':<10}" + "".join(f"{k:>15}" for k in (*BREAKDOWN, "finish")))
    for p in d["processes"]:
        lines.append(f"  {p['name']:<10}" + "".join(f"{p[k]:>15,}" for k in (*BREAKDOWN, "finish")))
    return "\n".join(lines)


def summary_row(d: dict) -> dict:
    """One row of a sweep's table: the headline numbers of a run's :meth:`SVMResult.to_dict`."""
    t, e = d["totals"], max(d["execution_cycles"], 1)
    return {"execution_cycles": d["execution_cycles"], "speedup": d["speedup"],
            **{f"{k}%": 100 * v / e for k, v in d["breakdown"].items() if k != "busy"},
            "read_faults": t["read_faults"], "write_faults": t["write_faults"], "diff_words": t["diff_words"],
            "messages": t["messages"]}
