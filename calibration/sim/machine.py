"""What every simulated machine shares: reference streams with bounded buffers, the run
length, sizes with units, the checking mode's error, and the scalability search.

A machine module (today :mod:`calibration.sim.bus`; next cc-NUMA, shared L2, SVM) owns
its configuration, its compiled kernel and its result; it feeds the kernel from a
:class:`ReferenceStream`, which reads every process's trace chunk by chunk, maps it to
dense blocks (:class:`~calibration.sim.blockmap.BlockMap`) and refills a process's
buffer when the kernel has used it up, so a run of any length uses bounded memory.
"""
from __future__ import annotations

import numpy as np

from mva.errors import ModelError

from .blockmap import BlockMap
from .workload import Workload

__all__ = ["BUFFER_REFERENCES", "CoherenceViolation", "ReferenceStream", "RawReferences", "PRIVATE_SHIFT",
           "run_length", "check_run_options", "scalability"]

BUFFER_REFERENCES = 1 << 16


class CoherenceViolation(AssertionError):
    """The checking mode saw a read of an old value or two writable copies."""


def run_length(workload: Workload, references: int | None) -> tuple[int, bool]:
    """(reference budget, whether the run goes to the end of the trace): a one-process
    workload runs to the end of its trace, a multi-process one for the workload's length
    (looping traces), unless ``references`` says otherwise."""
    n_proc = len(workload.processes)
    budget = references if references is not None else (None if n_proc == 1 else workload.references)
    if budget is None and n_proc > 1:
        raise ModelError("references", "required: the workload's traces have no known length")
    if budget is None:
        return int(np.iinfo(np.int64).max), True
    return budget, False


class ReferenceStream:
    """Per-process buffers of mapped block references (``block``, ``info``, ``length``,
    ``cursor``), refilled from the processes' traces on demand.

    ``to_end``: an exhausted trace ends the run (one process); otherwise a trace that
    ends starts again, and one that holds no references is an error.
    """

    def __init__(self, workload: Workload, blocks: BlockMap, to_end: bool):
        n_proc = len(workload.processes)
        self.workload = workload
        self.blocks = blocks
        self.to_end = to_end
        self.block = np.zeros((n_proc, BUFFER_REFERENCES), dtype=np.int32)
        self.info = np.zeros((n_proc, BUFFER_REFERENCES), dtype=np.uint16)
        self.length = np.zeros(n_proc, dtype=np.int64)
        self.cursor = np.zeros(n_proc, dtype=np.int64)
        self._sources = [p.open() for p in workload.processes]
        self._leftovers = [None] * n_proc
        self._empty_reopens = [0] * n_proc

    def refill(self, pid: int) -> bool:
        """Fill ``pid``'s buffer; False when a run-to-end trace is exhausted."""
        filled = 0
        leftovers = self._leftovers
        while filled < BUFFER_REFERENCES - 64:
            chunk = leftovers[pid]
            leftovers[pid] = None
            if chunk is None:
                chunk = next(self._sources[pid], None)
                if chunk is None:
                    if self.to_end:
                        break
                    if self._empty_reopens[pid] > 1:
                        raise ModelError(f"process[{self.workload.processes[pid].name}]",
                                         "trace holds no references")
                    self._sources[pid] = self.workload.processes[pid].open()
                    self._empty_reopens[pid] += 1
                    continue
                self._empty_reopens[pid] = 0
                if len(chunk) > BUFFER_REFERENCES:
                    leftovers[pid] = chunk.slice(BUFFER_REFERENCES)
                    chunk = chunk.slice(0, BUFFER_REFERENCES)
            consumed, written = self.blocks.map(pid, chunk, self.block[pid, filled:], self.info[pid, filled:])
            filled += written
            if consumed < len(chunk):
                rest = chunk.slice(consumed)
                leftovers[pid] = rest if leftovers[pid] is None else type(chunk).concat([rest, leftovers[pid]])
                break
        self.length[pid] = filled
        self.cursor[pid] = 0
        return filled > 0


#: Most memory the simulated caches' tables of one run may take (bytes), and what a cache
#: line costs in them (tag, state, LRU stamp and slack): a 512 GiB cache asked for 128 GiB
#: of numpy arrays and ended in a MemoryError traceback.
MEMORY_BUDGET = 4 << 30
BYTES_PER_LINE = 32


def check_cache_memory(field: str, lines: int, what: str) -> None:
    """A :class:`ModelError` naming ``field`` when ``lines`` simulated cache lines (all
    processors' together) would take more than :data:`MEMORY_BUDGET` of tables."""
    need = int(lines) * BYTES_PER_LINE
    if need > MEMORY_BUDGET:
        raise ModelError(field, f"{what}: {int(lines):,} cache lines need about {need / 2 ** 30:,.0f} GiB of "
                                f"tables, more than the simulators' bound of {MEMORY_BUDGET >> 30} GiB")


#: Most cycles of work per data reference: with more, a trace's run time overflows the
#: machines' 64-bit cycle counts (4 x 10^12 printed a negative execution time).
MAX_CYCLES_PER_REFERENCE = 1_000_000


def check_run_options(cycles_per_reference, references) -> None:
    """The run options every parallel machine takes: ``cycles_per_reference`` an integer
    from 0 to :data:`MAX_CYCLES_PER_REFERENCE` or None, ``references`` a positive integer
    or None."""
    if cycles_per_reference is not None and (not isinstance(cycles_per_reference, int)
                                             or not 0 <= cycles_per_reference <= MAX_CYCLES_PER_REFERENCE):
        raise ModelError("cycles_per_reference", f"must be an integer from 0 to {MAX_CYCLES_PER_REFERENCE:,}, "
                                                 f"got {cycles_per_reference!r}")
    if references is not None and (not isinstance(references, int) or references <= 0):
        raise ModelError("references", "must be a positive integer")


#: Bit from which a private address carries its process number + 1 (RawReferences).
PRIVATE_SHIFT = 48


class RawReferences:
    """Per-process buffers of raw references (``op``, ``addr``, ``size``, ``length``,
    ``cursor``, ``ended``) for the machines that keep their own address tables (SVM,
    cc-NUMA): each process runs to the end of its trace (or ``references``).
    ``cycles[pid]`` is the work per data reference: 0 for a trace with instruction
    fetches (they time it), else ``cycles_per_reference``.

    Every process must reach every barrier: the machines release a barrier when all
    *running* processes have arrived, so a process that ends without reaching one would
    let the others pass it unmatched (on the cc-NUMA machine its whole trace then fell in
    the unmeasured initialisation).  The barrier markers are counted as the buffers fill,
    and a mismatch is a :class:`ModelError` as soon as a process's trace ends with fewer
    barriers than another has reached, and at the latest by :meth:`check_barriers`.  A
    trace cut by ``references`` counts as a prefix: its barriers may fall short of the
    others' (the cut is the user's), but not exceed those of a complete trace.

    ``private``: an address outside every shared range of its process is that process's
    own (forked processes use the same virtual addresses for their own stacks, heaps and
    copy-on-write data), so it is made distinct by the process number + 1 in bits 48 and
    up (:data:`PRIVATE_SHIFT`; user-space addresses of x86-64 and AArch64 stay below
    2^48, and a private address above it is refused).  For machines that key lines by
    address alone (cc-NUMA); the SVM kernel tags ranges itself."""

    def __init__(self, workload: Workload, references: int | None, cycles_per_reference: int, buffer: int = 1 << 16,
                 private: bool = False):
        from .traces import limited

        P = len(workload.processes)
        self.buffer = buffer
        self.op = np.zeros((P, buffer), np.uint8)
        self.addr = np.zeros((P, buffer), np.uint64)
        self.size = np.zeros((P, buffer), np.uint16)
        self.length = np.zeros(P, np.int64)
        self.cursor = np.zeros(P, np.int64)
        self.ended = np.zeros(P, np.bool_)
        self.cycles = np.full(P, -1, np.int64)
        self._cpr = cycles_per_reference
        self.names = [p.name for p in workload.processes]
        self.barriers = np.zeros(P, np.int64)
        self.delivered = np.zeros(P, np.int64)        # references read, to tell a cut trace
        self.has_data = np.zeros(P, np.bool_)         # a load or store read yet (looked for until found)
        self._limit = references
        self._ranges = [workload.ranges_for(pid)[:2] for pid in range(P)] if private else None
        self._sources = [limited(p.open(), references) for p in workload.processes]
        self._leftover = [None] * P
        for pid in range(P):
            self.refill(pid)
        if self.ended.all() and not self.has_data.any():      # the whole of every trace is read
            raise ModelError("workload", f"{workload.name}: its traces hold no data references (this machine "
                                         "simulates loads and stores; instruction fetches only time them)")

    def refill(self, pid: int) -> None:
        from .traces import BARRIER, IFETCH, LOAD, STORE

        filled = 0
        while filled < self.buffer:
            chunk = self._leftover[pid]
            self._leftover[pid] = None
            if chunk is None:
                chunk = next(self._sources[pid], None)
                if chunk is None:
                    self.ended[pid] = True
                    if self.barriers.max() > self.barriers[pid] and not self._cut(pid):
                        self.check_barriers()
                    break
            if self.cycles[pid] < 0:
                self.cycles[pid] = 0 if np.any(chunk.op == IFETCH) else self._cpr
            take = min(len(chunk), self.buffer - filled)
            self.op[pid, filled:filled + take] = chunk.op[:take]
            self.addr[pid, filled:filled + take] = (chunk.addr[:take] if self._ranges is None
                                                    else self._tag_private(pid, chunk.op[:take], chunk.addr[:take]))
            self.size[pid, filled:filled + take] = chunk.size[:take]
            self.barriers[pid] += int(np.count_nonzero(chunk.op[:take] == BARRIER))
            if not self.has_data[pid]:
                self.has_data[pid] = bool(np.any((chunk.op[:take] == LOAD) | (chunk.op[:take] == STORE)))
            self.delivered[pid] += take
            if take < len(chunk):
                self._leftover[pid] = chunk.slice(take)
            filled += take
        self.length[pid], self.cursor[pid] = filled, 0

    def _tag_private(self, pid: int, op: np.ndarray, addr: np.ndarray) -> np.ndarray:
        """``addr`` with process ``pid``'s private data references tagged (see the class)."""
        from .traces import LOAD, STORE

        starts, ends = self._ranges[pid]
        private = (op == LOAD) | (op == STORE)
        for start, end in zip(starts, ends, strict=True):
            private &= (addr < start) | (addr >= end)
        if not private.any():
            return addr
        if np.any(addr[private] >> np.uint64(PRIVATE_SHIFT)):
            bad = int(addr[private][np.argmax(addr[private] >> np.uint64(PRIVATE_SHIFT) > 0)])
            raise ModelError(f"process[{self.names[pid]}]", f"private address {bad:#x} is above 2^{PRIVATE_SHIFT}: "
                                                            "declare its range shared in the manifest, or it cannot "
                                                            "be told from other processes' private data")
        return np.where(private, addr | np.uint64((pid + 1) << PRIVATE_SHIFT), addr)

    def _cut(self, pid: int) -> bool:
        """Whether ``references`` cut process ``pid``'s trace (it read exactly that many)."""
        return self._limit is not None and self.delivered[pid] >= self._limit

    def check_barriers(self) -> None:
        """A :class:`ModelError` naming the processes whose barrier counts differ: complete
        traces must agree, and a cut one may not exceed them."""
        counts = self.barriers
        complete = np.array([not self._cut(q) for q in range(len(counts))])
        if not complete.any():
            return
        expected = counts[complete].max()
        whole = self.names[int(np.argmax(np.where(complete, counts, -1)))]
        short = np.flatnonzero(complete & (counts < expected))
        if short.size:
            few = ", ".join(f"{self.names[q]} {int(counts[q])}" for q in short[:4])
            raise ModelError("workload", f"unmatched barriers: {whole} reaches {int(expected)}, but {few}; every "
                                         "process must reach every barrier")
        over = np.flatnonzero(counts > expected)
        if over.size:
            q = int(over[0])
            raise ModelError("workload", f"unmatched barriers: {self.names[q]} reaches {int(counts[q])} before "
                                         f"--references cuts its trace, more than {whole}'s {int(expected)} in "
                                         "its whole trace")


def scalability(run, start: int = 1, limit: int = 64, threshold: float = 0.5):
    """The processor count N where GSP stops growing by at least ``threshold`` per added
    processor: the smallest N with GSP(N+1) - GSP(N) < threshold (Foglia, Giorgi &
    Prete, TPC-W on shared-bus SMPs, §4 and §5.2.2).

    ``run(n)`` returns the GSP with n processors.  Evaluates n = start, start+1, ...
    (no interpolation); returns (N, {n: GSP}) or (None, ...) if the limit is reached.
    """
    gsp = {}
    n = start
    gsp[n] = run(n)
    while n < limit:
        gsp[n + 1] = run(n + 1)
        if gsp[n + 1] - gsp[n] < threshold:
            return n, gsp
        n += 1
    return None, gsp
