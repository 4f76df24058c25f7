"""Compiled kernel of the shared-bus machine (private to :mod:`calibration.sim.bus`).

:func:`run` simulates P private caches on a shared bus under a protocol given as tables
(:mod:`calibration.sim.protocols`), schedules processes on processors in time slices,
times every bus transaction, and classifies misses and coherence transactions.  It
stops when the reference budget is spent or when a running process's buffer is empty
(the driver refills it and calls again), so memory stays bounded whatever the trace
length.  Its main loop calls named steps that numba inlines (:func:`_next_turn`,
:func:`_classify_miss`, :func:`_allocate_line`, :func:`_check_access`, the bus
helpers) and two compiled calls, :func:`_snoop` and
:func:`dispatch`.

The machine's arrays reach :func:`run` in named bundles (:class:`Buffers`, :class:`Caches`,
...), which it unpacks in Python: inside the compiled loop every array is a plain
argument (a loop reading arrays out of the bundles measured 6-9 times slower, and one
called from a compiled unpacker twice as slow).  The counters are one int64 array whose layout is
generated from :data:`COUNTER_NAMES`.
References arrive as dense block ids with packed info (:mod:`calibration.sim._blockmap_kernel`).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from mva.jit import jit

from ._rng import next_random
from .protocols import DI, INV, INV_COHERENCE, INV_SELECTIVE, NONE, RB, RB_WR, RIB, SH, WR, I
from .traces import IFETCH, STORE

# --- counters: one list of names; the kernel's indices are derived from it ---------------
ACCESSES = ("ifetch", "load", "store")
MODES = ("user", "kernel")
MISS_KINDS = ("cold", "context_switch", "replacement", "selective_reload",
              "true_sharing", "false_sharing", "passive_sharing")
COH_TYPES = ("invalidate", "read_and_invalidate", "write")
COH_CLASSES = ("true_sharing", "false_sharing", "passive_sharing")
BUS_WORK = ("count", "cycles", "cycles_squared")
COUNTER_NAMES = tuple(
    [f"refs.{a}.{m}" for a in ACCESSES for m in MODES]
    + [f"miss.{k}.{m}" for k in MISS_KINDS for m in MODES]
    + [f"coherence.{t}.{c}.{m}" for t in COH_TYPES for c in COH_CLASSES for m in MODES]
    + ["bus.read_block_memory", "bus.read_block_cache", "bus.read_invalidate_memory",
       "bus.read_invalidate_cache", "bus.invalidate", "bus.write", "bus.update_block",
       "migrations", "dispatches",
       "pending"]        # invalidation misses on shared blocks not yet split true/false
    # bus work that stalls a processor (load and fetch misses) and that does not (stores
    # through the store buffer, write-backs): count, cycles, squared cycles
    + [f"bus_sync.{w}" for w in BUS_WORK] + [f"bus_async.{w}" for w in BUS_WORK]
    # cycles processors stood still: for their stalling transactions (waiting and
    # service) and for a free store-buffer entry
    + ["bus_sync.stall_cycles", "bus_async.stall_cycles"])
_AT = {name: i for i, name in enumerate(COUNTER_NAMES)}
N_COUNTERS = len(COUNTER_NAMES)
C_REFS = _AT["refs.ifetch.user"]                 # + 2*access + kernel
C_MISS = _AT["miss.cold.user"]                   # + 2*kind + kernel
C_COH = _AT["coherence.invalidate.true_sharing.user"]     # + 2*(3*type + class) + kernel
C_RB_MEM, C_RB_C2C = _AT["bus.read_block_memory"], _AT["bus.read_block_cache"]
C_RIB_MEM, C_RIB_C2C = _AT["bus.read_invalidate_memory"], _AT["bus.read_invalidate_cache"]
C_INV, C_WR, C_UB = _AT["bus.invalidate"], _AT["bus.write"], _AT["bus.update_block"]
C_MIGRATIONS, C_DISPATCHES, C_PENDING = _AT["migrations"], _AT["dispatches"], _AT["pending"]
C_SYNC, C_ASYNC = _AT["bus_sync.count"], _AT["bus_async.count"]      # + what
C_SYNC_STALL, C_STORE_STALL = _AT["bus_sync.stall_cycles"], _AT["bus_async.stall_cycles"]
K_COLD, K_CONTEXT_SWITCH, K_REPLACEMENT, K_SELECTIVE, K_TRUE, K_FALSE, K_PASSIVE = range(len(MISS_KINDS))
T_INV, T_RIB, T_WR = range(len(COH_TYPES))
CL_TRUE, CL_FALSE, CL_PASSIVE = range(len(COH_CLASSES))

# global scalars (int64 array)
GLOBAL_NAMES = ("refs", "bus_free", "bus_busy", "slices", "out", "stamp", "error_ref")
G_REFS, G_BUS_FREE, G_BUS_BUSY, G_SLICES, G_OUT, G_STAMP, G_ERROR_REF = range(len(GLOBAL_NAMES))
N_GLOBALS = len(GLOBAL_NAMES)

# cost vector (cycles): CPU operation, RB/RIB memory-to-cache, RB/RIB cache-to-cache, UB, INV, WR
COST_CPU, COST_MEM, COST_C2C, COST_UB, COST_INV, COST_WR = range(6)

RUN_DONE, RUN_REFILL, RUN_STALE_READ, RUN_TWO_WRITABLE = 0, 1, -1, -2

_FULL = np.uint64(0xFFFFFFFFFFFFFFFF)

# --- the machine's arrays, bundled by what they describe -----------------------------------
Buffers = namedtuple("Buffers", "block info length cursor")             # per process: mapped references
Blocks = namedtuple("Blocks", "set_of owner is_kernel")                  # per block, from the block map
Caches = namedtuple("Caches", "block state inv stamp")                   # per processor and line
Sharing = namedtuple("Sharing", "where newv used pending last_slice")   # per block and processor/process
Processors = namedtuple("Processors", "clock running slice_left stall refs store_buffer")
Scheduler = namedtuple("Scheduler", "ready ready_since last_cpu cur_slice rng policy slice_refs affinity")
ProtocolTables = namedtuple("ProtocolTables", "proc_txn proc_next snoop_next snoop_resp snoop_supply "
                                              "snoop_memupd snoop_invkind writable dirty uses_private_line")
Checker = namedtuple("Checker", "on version memory copy")   # word versions: latest, memory, every copy


@jit(inline=True)
def _word_mask(info):
    w0 = np.uint64((info >> 2) & 63)
    nw = np.uint64(((info >> 8) & 63) + 1)
    if nw >= np.uint64(64):
        return _FULL
    return ((np.uint64(1) << nw) - np.uint64(1)) << w0


@jit(inline=True)
def _bus(glob, t, cost):
    """Hold the bus for ``cost`` cycles from the first free moment at or after ``t``
    (FCFS); returns the completion time."""
    start = max(t, glob[G_BUS_FREE])
    glob[G_BUS_FREE] = start + cost
    glob[G_BUS_BUSY] += cost
    return start + cost


@jit
def _end_lifetime(b, q, pending, is_kernel, counts):
    """A copy's lifetime ended; an unresolved invalidation miss was false sharing."""
    if pending[b, q]:
        pending[b, q] = 0
        counts[C_PENDING] -= 1
        counts[C_MISS + 2 * K_FALSE + is_kernel[b]] += 1


@jit
def dispatch(p, t, running, slice_left, ready, ready_since, last_cpu, cur_slice, rng, policy, slice_refs,
             affinity_bonus, glob, counts):
    """Give processor ``p`` a ready process: random (uniform) or cache-affinity (the
    longest-waiting ready process, where a process that last ran on ``p`` counts as
    having waited ``affinity_bonus`` cycles longer; Squillante & Lazowska 1993)."""
    n = ready.shape[0]
    chosen = -1
    if policy == 0:
        n_ready = 0
        for k in range(n):
            n_ready += ready[k]
        if n_ready > 0:
            pick = np.int64(next_random(rng) % np.uint64(n_ready))
            for k in range(n):
                if ready[k]:
                    if pick == 0:
                        chosen = k
                        break
                    pick -= 1
    else:
        best = np.int64(0)
        for k in range(n):
            if ready[k]:
                score = t - ready_since[k]
                if last_cpu[k] == p:
                    score += affinity_bonus
                if chosen < 0 or score > best:
                    best = score
                    chosen = k
    previous = running[p]
    running[p] = chosen
    if chosen < 0:
        return
    ready[chosen] = 0
    if chosen != previous:     # a real context switch: a new slice for the process
        if last_cpu[chosen] >= 0 and last_cpu[chosen] != p:
            counts[C_MIGRATIONS] += 1
        counts[C_DISPATCHES] += 1
        glob[G_SLICES] += 1
        cur_slice[chosen] = np.int32(glob[G_SLICES])
    last_cpu[chosen] = p
    jitter = np.int64(next_random(rng) % np.uint64(slice_refs // 2 + 1))
    slice_left[p] = slice_refs - slice_refs // 4 + jitter     # about slice_refs, +-25%


def dispatch_bundled(p, t, cpus, sched, affinity_bonus, glob, counts):
    """:func:`dispatch` on the bundles (for the driver)."""
    dispatch(p, t, cpus.running, cpus.slice_left, sched.ready, sched.ready_since, sched.last_cpu, sched.cur_slice,
             sched.rng, sched.policy, sched.slice_refs, affinity_bonus, glob, counts)


@jit
def _snoop(b, p, txn, priv, mask, stamp, where, line_state, line_inv, used, pending, is_kernel, counts,
           snoop_next, snoop_resp, snoop_supply, snoop_memupd, snoop_invkind, check, ver_mem, ver_copy):
    """Every other cache with a valid copy of ``b`` snoops ``txn`` from processor ``p``:
    state transitions, response lines, the supplier, memory update and the removal of
    copies (tag kept for classification).  Returns (responses, supplier or -1, copies the
    transaction acted on as a coherence transaction, whether any of them had used a word
    in ``mask`` in its current lifetime).  A write (update) transaction also writes its
    words into the receivers' copies (checking mode)."""
    resp = 0
    supplier = -1
    affected = 0
    useful = False
    for q in range(where.shape[1]):
        if q == p:
            continue
        sq = where[b, q]
        if sq < 0 or line_state[q, sq] == I:
            continue
        st_q = line_state[q, sq]
        resp |= snoop_resp[st_q, txn, priv]
        if snoop_supply[st_q, txn, priv]:
            supplier = q
            if check and snoop_memupd[st_q, txn, priv]:
                for w in range(ver_copy.shape[2]):
                    ver_mem[b, w] = ver_copy[b, q, w]
        nxt = snoop_next[st_q, txn, priv]
        if txn == WR or (nxt == I and (txn == INV or txn == RIB)):
            affected += 1
            if used[b, q] & mask:
                useful = True
        if nxt == I:
            line_inv[q, sq] = snoop_invkind[st_q, txn, priv]
            _end_lifetime(b, q, pending, is_kernel, counts)
        line_state[q, sq] = nxt
        if check and txn == WR:
            for w in range(ver_copy.shape[2]):
                if mask & (np.uint64(1) << np.uint64(w)):
                    ver_copy[b, q, w] = stamp
    return resp, supplier, affected, useful


@jit(inline=True)
def _count_coherence(counts, ctype, affected, useful, private, kern):
    """Classify a coherence transaction that reached ``affected`` copies (docs/coherence.md
    §5, the a-priori rule): passive on a private block; true if a reached copy had used
    one of the written words in its current lifetime; else false."""
    if affected > 0:
        cls = CL_PASSIVE if private else (CL_TRUE if useful else CL_FALSE)
        counts[C_COH + 2 * (3 * ctype + cls) + kern] += 1


@jit(inline=True)
def _tally(counts, base, cost):
    counts[base] += 1
    counts[base + 1] += cost
    counts[base + 2] += cost * cost


@jit(inline=True)
def _store_through_buffer(store_buffer, p, t, glob, counts, bus_cost):
    """A store's bus transaction goes through the 2-entry store buffer: the processor
    stalls only until an entry is free.  Returns the stall (cycles)."""
    k = 0 if store_buffer[p, 0] <= store_buffer[p, 1] else 1
    delay = store_buffer[p, k] - t if store_buffer[p, k] > t else np.int64(0)
    counts[C_STORE_STALL] += delay
    _tally(counts, C_ASYNC, bus_cost)
    store_buffer[p, k] = _bus(glob, t + delay, bus_cost)
    return delay


@jit(inline=True)
def _next_turn(clock, n_active):
    """The processor with the smallest clock (lowest index on ties), and the next one
    (its clock and index, -1 if none): the first keeps the turn while it stays ahead."""
    p = 0
    for q in range(1, n_active):
        if clock[q] < clock[p]:
            p = q
    bound = np.int64(0)
    bound_cpu = -1
    for q in range(n_active):
        if q != p and (bound_cpu < 0 or clock[q] < bound):
            bound = clock[q]
            bound_cpu = q
    return p, bound, bound_cpu


@jit(inline=True)
def _classify_miss(b, p, pid, slot, kern, owner, line_inv, newv, last_slice, cur_slice, counts):
    """Count a miss by cause (docs/coherence.md §5): a copy invalidated by coherence is a
    passive-sharing miss on a private block and otherwise left pending until its
    lifetime shows true or false sharing (returns True then); a selective invalidation
    is a selective reload; else cold, context switch or replacement, from the slice in
    which the process last touched the block."""
    had_tag = slot >= 0
    inv_kind = line_inv[p, slot] if had_tag else 0
    if had_tag and inv_kind == INV_COHERENCE:
        if owner[b] >= 0:
            counts[C_MISS + 2 * K_PASSIVE + kern] += 1
            return False
        return True
    if had_tag and inv_kind == INV_SELECTIVE:
        counts[C_MISS + 2 * K_SELECTIVE + kern] += 1
    else:
        seen = last_slice[b, pid]
        if seen < 0 and slot == -1:
            # first reference of the process and first time in this cache
            counts[C_MISS + 2 * K_COLD + kern] += 1
        elif seen < 0:
            counts[C_MISS + 2 * K_REPLACEMENT + kern] += 1
        elif seen != cur_slice[pid]:
            counts[C_MISS + 2 * K_CONTEXT_SWITCH + kern] += 1
        else:
            counts[C_MISS + 2 * K_REPLACEMENT + kern] += 1
    newv[b, p] = 0
    return False


@jit(inline=True)
def _allocate_line(b, p, t, assoc, set_of, is_kernel, line_block, line_state, line_stamp, where, pending, dirty,
                   check, ver_mem, ver_copy, cost, glob, counts):
    """A line for ``b`` in ``p``'s cache: an empty way, else an invalid way, else the
    LRU way, whose dirty copy is written back (UB, not stalling).  Returns the line."""
    base = set_of[b] * assoc
    victim = -1
    for wy in range(base, base + assoc):
        if line_block[p, wy] < 0:
            victim = wy
            break
    if victim < 0:
        for wy in range(base, base + assoc):
            if line_state[p, wy] == I:
                victim = wy
                break
    if victim < 0:
        victim = base
        for wy in range(base + 1, base + assoc):
            if line_stamp[p, wy] < line_stamp[p, victim]:
                victim = wy
    old = line_block[p, victim]
    if old >= 0:
        old_state = line_state[p, victim]
        if old_state != I:
            _end_lifetime(old, p, pending, is_kernel, counts)
        if dirty[old_state]:   # M, MD, SO: write back
            counts[C_UB] += 1
            _tally(counts, C_ASYNC, cost[COST_UB])
            _bus(glob, t, cost[COST_UB])
            if check:
                for w in range(ver_copy.shape[2]):
                    ver_mem[old, w] = ver_copy[old, p, w]
        where[old, p] = -2        # -2: was cached here once (-1: never)
    line_block[p, victim] = b
    where[b, p] = victim
    return victim


@jit(inline=True)
def _check_access(b, p, is_write, mask, stamp, n_cpus, where, line_state, writable, ver_global, ver_copy):
    """Checking mode: a read must see the latest version of every word it reads, and a
    copy writable without a bus transaction must be the only valid copy.  Returns
    RUN_DONE if both hold, else RUN_STALE_READ or RUN_TWO_WRITABLE."""
    for w in range(ver_copy.shape[2]):
        if mask & (np.uint64(1) << np.uint64(w)):
            if is_write:
                ver_global[b, w] = stamp
                ver_copy[b, p, w] = stamp
            elif ver_copy[b, p, w] != ver_global[b, w]:
                return RUN_STALE_READ
    n_valid = 0
    n_writable = 0
    for q in range(n_cpus):
        sq = where[b, q]
        if sq >= 0 and line_state[q, sq] != I:
            n_valid += 1
            if writable[line_state[q, sq]]:
                n_writable += 1
    if n_writable > 1 or (n_writable == 1 and n_valid > 1):
        return RUN_TWO_WRITABLE
    return RUN_DONE


def run(budget, buffers, blocks, caches, sharing, cpus, sched, proto, checker, assoc, cost, glob, counts):
    """Simulate until ``glob[G_REFS] == budget`` (returns RUN_DONE) or a running process
    needs more references (returns RUN_REFILL with the process in ``glob[G_OUT]``).

    Timing (docs/coherence.md §1.4): every reference costs ``cost[COST_CPU]`` cycles; a
    load or instruction-fetch miss stalls its processor until its bus transaction ends
    (FCFS bus, held for the transaction's full cost, Foglia, Giorgi & Prete Table 4); a
    store that needs the bus goes through a 2-entry store buffer and stalls only when
    both entries are busy; write-backs (UB) occupy the bus without stalling.  The next
    reference is always taken from the processor with the smallest clock.

    With ``checker.on`` the kernel carries a version number per word (global latest,
    memory, every cached copy) and returns RUN_STALE_READ if a read sees an old version
    or RUN_TWO_WRITABLE if a copy writable without a bus transaction coexists with
    another valid copy (``glob[G_ERROR_REF]`` = the reference number).

    A Python function: it unpacks the bundles and calls the compiled loop, whose arrays
    then arrive as separate arguments (a compiled caller passing them out of tuples made
    the loop reload them from memory and run twice as slowly).
    """
    return _loop(budget, buffers.block, buffers.info, buffers.length, buffers.cursor,
                 blocks.set_of, blocks.owner, blocks.is_kernel,
                 caches.block, caches.state, caches.inv, caches.stamp,
                 sharing.where, sharing.newv, sharing.used, sharing.pending, sharing.last_slice,
                 cpus.clock, cpus.running, cpus.slice_left, cpus.stall, cpus.refs, cpus.store_buffer,
                 sched.ready, sched.ready_since, sched.last_cpu, sched.cur_slice, sched.rng,
                 sched.policy, sched.slice_refs, sched.affinity,
                 proto.proc_txn, proto.proc_next, proto.snoop_next, proto.snoop_resp, proto.snoop_supply,
                 proto.snoop_memupd, proto.snoop_invkind, proto.writable, proto.dirty, proto.uses_private_line,
                 checker.on, checker.version, checker.memory, checker.copy, assoc, cost, glob, counts)


@jit
def _loop(budget, buf_block, buf_info, buf_len, cursor,
          set_of, owner, is_kernel,
          line_block, line_state, line_inv, line_stamp,
          where, newv, used, pending, last_slice,
          clock, running, slice_left, stall, refs_by_cpu, store_buffer,
          ready, ready_since, last_cpu, cur_slice, rng, policy, slice_refs, affinity_factor,
          proc_txn, proc_next, snoop_next, snoop_resp, snoop_supply, snoop_memupd, snoop_invkind, writable, dirty,
          uses_private_line, check, ver_global, ver_mem, ver_copy, assoc, cost, glob, counts):
    """:func:`run` on the unpacked bundles (argument groups in the bundles' order)."""
    n_cpus = clock.shape[0]
    # processors beyond the number of processes never get one (a process whose slice
    # ends goes straight back to the ready queue), so only the first ones take part
    n_active = min(n_cpus, ready.shape[0])
    cpu_op = cost[COST_CPU]
    p = -1
    bound = np.int64(0)
    bound_cpu = 0
    refs_done = glob[G_REFS]       # kept in locals in the hot loop, written back on return
    stamp = glob[G_STAMP]
    while refs_done < budget:
        if p < 0:
            p, bound, bound_cpu = _next_turn(clock, n_active)
        pid = running[p]
        c = cursor[pid]
        if c >= buf_len[pid]:
            glob[G_OUT] = pid
            glob[G_REFS] = refs_done
            glob[G_STAMP] = stamp
            return RUN_REFILL
        b = buf_block[pid, c]
        info = buf_info[pid, c]
        cursor[pid] = c + 1
        access = np.int64(info & 3)
        is_write = 1 if access == STORE else 0
        mask = _word_mask(info)
        kern = np.int64(is_kernel[b])
        # owner[b] is read only where needed: one more random read per reference costs
        # about a third of the loop's time
        priv = 1 if (uses_private_line and owner[b] >= 0 and access != IFETCH) else 0
        t = clock[p]
        counts[C_REFS + 2 * access + kern] += 1
        stamp += 1
        slot = where[b, p]
        state = line_state[p, slot] if slot >= 0 else I
        delay = np.int64(0)
        if state != I:
            # hit: the protocol's transition, and the INV (MESI/AMSD) or WR (PSCR) a write
            # hit may need, through the store buffer
            txn = proc_txn[state, is_write, priv]
            resp = 0
            if txn != NONE:
                resp, _, affected, useful = _snoop(
                    b, p, txn, priv, mask, stamp, where, line_state, line_inv, used, pending, is_kernel, counts,
                    snoop_next, snoop_resp, snoop_supply, snoop_memupd, snoop_invkind, check, ver_mem, ver_copy)
                ctype, counter, bus_cost = (T_INV, C_INV, cost[COST_INV]) if txn == INV else \
                    (T_WR, C_WR, cost[COST_WR])
                counts[counter] += 1
                _count_coherence(counts, ctype, affected, useful, owner[b] >= 0, kern)
                delay = _store_through_buffer(store_buffer, p, t, glob, counts, bus_cost)
            line_state[p, slot] = proc_next[state, is_write, priv, resp]
        else:
            open_pending = _classify_miss(b, p, pid, slot, kern, owner, line_inv, newv, last_slice, cur_slice,
                                          counts)
            if slot < 0:
                slot = _allocate_line(b, p, t, assoc, set_of, is_kernel, line_block, line_state, line_stamp, where,
                                      pending, dirty, check, ver_mem, ver_copy, cost, glob, counts)
            # the miss's bus transaction: RB or RIB; under PSCR a write miss on a shared
            # page adds a WR
            txn = proc_txn[I, is_write, priv]
            snoop_txn = RB if txn == RB_WR else txn
            resp, supplier, affected, useful = _snoop(
                b, p, snoop_txn, priv, mask, stamp, where, line_state, line_inv, used, pending, is_kernel, counts,
                snoop_next, snoop_resp, snoop_supply, snoop_memupd, snoop_invkind, check, ver_mem, ver_copy)
            if check:
                for w in range(ver_copy.shape[2]):
                    ver_copy[b, p, w] = ver_copy[b, supplier, w] if supplier >= 0 else ver_mem[b, w]
            c2c = (resp & DI) != 0
            bus_cost = cost[COST_C2C] if c2c else cost[COST_MEM]
            if snoop_txn == RB:
                counts[C_RB_C2C if c2c else C_RB_MEM] += 1
            else:
                counts[C_RIB_C2C if c2c else C_RIB_MEM] += 1
                _count_coherence(counts, T_RIB, affected, useful, owner[b] >= 0, kern)
            if txn == RB_WR and (resp & SH):
                resp_wr, _, affected, useful = _snoop(
                    b, p, WR, priv, mask, stamp, where, line_state, line_inv, used, pending, is_kernel, counts,
                    snoop_next, snoop_resp, snoop_supply, snoop_memupd, snoop_invkind, check, ver_mem, ver_copy)
                resp |= resp_wr
                counts[C_WR] += 1
                bus_cost += cost[COST_WR]
                _count_coherence(counts, T_WR, affected, useful, owner[b] >= 0, kern)
            line_state[p, slot] = proc_next[I, is_write, priv, resp]
            line_inv[p, slot] = 0
            used[b, p] = 0
            if open_pending:
                pending[b, p] = 1
                counts[C_PENDING] += 1
            if is_write:     # through the store buffer; a load or fetch waits for the bus
                delay = _store_through_buffer(store_buffer, p, t, glob, counts, bus_cost)
            else:
                _tally(counts, C_SYNC, bus_cost)
                delay = _bus(glob, t, bus_cost) - t
                counts[C_SYNC_STALL] += delay
        line_stamp[p, slot] = stamp
        if n_cpus > 1:
            # sharing bookkeeping (nothing is shared on one processor): words this lifetime
            # used, words written elsewhere since, and a pending invalidation miss resolved
            # as true sharing when the lifetime reads such a word (Dubois et al. 1993).
            # Written out here: as an inlined step it made the whole loop twice as slow.
            used[b, p] |= mask
            if is_write:
                for q in range(n_cpus):
                    if q != p and where[b, q] >= 0:
                        newv[b, q] |= mask
            elif pending[b, p] and (newv[b, p] & mask):
                pending[b, p] = 0
                counts[C_PENDING] -= 1
                counts[C_MISS + 2 * K_TRUE + kern] += 1
                newv[b, p] = 0
        if check:
            status = _check_access(b, p, is_write, mask, stamp, n_cpus, where, line_state, writable, ver_global,
                                   ver_copy)
            if status != RUN_DONE:
                glob[G_ERROR_REF] = refs_done
                glob[G_REFS] = refs_done
                return status
        last_slice[b, pid] = cur_slice[pid]
        clock[p] = t + delay + cpu_op
        stall[p] += delay
        refs_by_cpu[p] += 1
        refs_done += 1
        slice_left[p] -= 1
        if bound_cpu >= 0 and (clock[p] > bound or (clock[p] == bound and p > bound_cpu)):
            p_next = -1
        else:
            p_next = p
        if slice_left[p] <= 0:
            # time slice over: back to the ready queue, then dispatch (maybe the same one);
            # the affinity bonus is the slice's length in cycles
            now = clock[p]
            ready[pid] = 1
            ready_since[pid] = now
            bonus = np.int64(affinity_factor * slice_refs * now / max(refs_by_cpu[p], 1))
            dispatch(p, now, running, slice_left, ready, ready_since, last_cpu, cur_slice, rng, policy, slice_refs,
                     bonus, glob, counts)
        p = p_next
    glob[G_REFS] = refs_done
    glob[G_STAMP] = stamp
    return RUN_DONE

