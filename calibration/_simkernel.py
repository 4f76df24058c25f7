"""Compiled kernels of the trace-driven simulator (private to :mod:`calibration`).

Two kernels:

* :func:`map_chunk` turns raw references of one process (op, byte address, size,
  kernel flag) into dense block ids and packed per-reference info, doing the
  virtual-to-physical translation (sequential virtual pages to scattered physical pages;
  declared shared ranges map to the same physical pages in every process) and splitting
  an access that spans blocks into one reference per block (as Dinero IV counts).
* :func:`run` simulates P private caches on a shared bus under a protocol given as
  tables (:mod:`calibration.protocols`), schedules processes on processors in time
  slices, times every bus transaction, and classifies misses and coherence
  transactions.  It stops when the reference budget is spent or when a running
  process's buffer is empty (the driver refills it and calls again), so memory stays
  bounded whatever the trace length.

Packed reference info (uint16): bits 0-1 access (0 instruction fetch, 1 load, 2 store),
bits 2-7 first word in the block, bits 8-13 number of words minus one.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .protocols import I, INV, INV_COHERENCE, INV_SELECTIVE, NONE, RB, RB_WR, RIB, WR, DI, SH

IFETCH, LOAD, STORE = 0, 1, 2

# --- counters (one int64 array; indices are compile-time constants) -------------------
# references by access and user/kernel: C_REFS + 2*access + kernel
C_REFS = 0
# misses by kind and user/kernel: C_MISS + 2*kind + kernel
K_COLD, K_CONTEXT_SWITCH, K_REPLACEMENT, K_SELECTIVE, K_TRUE, K_FALSE, K_PASSIVE = range(7)
MISS_KINDS = ("cold", "context_switch", "replacement", "selective_reload",
              "true_sharing", "false_sharing", "passive_sharing")
C_MISS = 6
# coherence transactions: C_COH + 2*(3*type + class) + kernel
T_INV, T_RIB, T_WR = range(3)
COH_TYPES = ("invalidate", "read_and_invalidate", "write")
CL_TRUE, CL_FALSE, CL_PASSIVE = range(3)
COH_CLASSES = ("true_sharing", "false_sharing", "passive_sharing")
C_COH = C_MISS + 14
# bus transactions
C_RB_MEM = C_COH + 18
C_RB_C2C = C_RB_MEM + 1
C_RIB_MEM = C_RB_MEM + 2
C_RIB_C2C = C_RB_MEM + 3
C_INV = C_RB_MEM + 4
C_WR = C_RB_MEM + 5
C_UB = C_RB_MEM + 6
C_MIGRATIONS = C_RB_MEM + 7
C_DISPATCHES = C_RB_MEM + 8
C_PENDING = C_RB_MEM + 9          # invalidation misses on shared blocks not yet split true/false
# bus work that stalls a processor (load and fetch misses) and that does not (stores through
# the store buffer, write-backs): count, cycles, squared cycles (for the shared-bus model)
C_SYNC = C_RB_MEM + 10
C_ASYNC = C_SYNC + 3
# cycles processors stood still: for their stalling transactions (waiting and service) and
# for a free store-buffer entry
C_SYNC_STALL = C_ASYNC + 3
C_STORE_STALL = C_SYNC_STALL + 1
N_COUNTERS = C_STORE_STALL + 1

# global scalars (int64 array)
G_REFS, G_BUS_FREE, G_BUS_BUSY, G_SLICES, G_OUT, G_STAMP, G_ERROR_REF = range(7)
N_GLOBALS = 7

# cost vector (cycles): CPU operation, RB/RIB memory-to-cache, RB/RIB cache-to-cache, UB, INV, WR
COST_CPU, COST_MEM, COST_C2C, COST_UB, COST_INV, COST_WR = range(6)

RUN_DONE, RUN_REFILL, RUN_STALE_READ, RUN_TWO_WRITABLE = 0, 1, -1, -2

_FULL = np.uint64(0xFFFFFFFFFFFFFFFF)
MEMO = 16384


@njit(cache=True, inline="always")
def _mix64(x):
    """splitmix64 finaliser (a bijection on 64-bit words)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, inline="always")
def _next_random(rng):
    """xorshift64* step on ``rng[0]``; returns a uint64."""
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return x * np.uint64(2685821657736338717)


@njit(cache=True)
def _lookup(tab_tag, tab_key, tab_val, tag, key):
    """Slot of (tag, key) in an open-addressing table (value -1 marks an empty slot)."""
    mask = np.uint64(tab_val.shape[0] - 1)
    h = _mix64(key ^ (np.uint64(tag) * np.uint64(0x9E3779B97F4A7C15))) & mask
    while True:
        i = np.int64(h)
        if tab_val[i] < 0 or (tab_tag[i] == tag and tab_key[i] == key):
            return i
        h = (h + np.uint64(1)) & mask


@njit(cache=True)
def rehash(tab_tag, tab_key, tab_val, new_tag, new_key, new_val):
    """Move every entry of a full table into a larger empty one."""
    for i in range(tab_val.shape[0]):
        if tab_val[i] >= 0:
            j = _lookup(new_tag, new_key, new_val, tab_tag[i], tab_key[i])
            new_tag[j] = tab_tag[i]
            new_key[j] = tab_key[i]
            new_val[j] = tab_val[i]


@njit(cache=True)
def map_chunk(op, addr, size, kernel, pid, range_start, range_end, range_tag,
              blk_tag, blk_key, blk_val, pg_tag, pg_key, pg_val, counts,
              set_of, owner, is_kernel, is_code, log_block, log_word, n_sets, page_seed, identity_pages,
              data_only, out_block, out_info):
    """Translate raw references into (dense block id, packed info); returns how many
    raw references were consumed and how many block references were written.

    Private addresses are keyed by (pid, virtual page); an address inside one of this
    process's shared ranges by (range tag, offset page), so every sharer reaches the same
    physical page.  The first touch of a page draws its physical page number from a
    seeded bijection of the page's first-touch index (sequential virtual pages land on
    non-sequential physical pages, seed 000 §4); with ``identity_pages`` physical = virtual
    (to compare with uniprocessor simulators).  ``counts`` = [blocks, pages] so far.
    Tables and per-block arrays must have room (the driver grows them).
    """
    block_bytes = np.uint64(1) << np.uint64(log_block)
    log_page = np.uint64(12)
    blocks_per_page = np.uint64(1) << (log_page - np.uint64(log_block))
    words_per_block = np.int64(1) << (log_block - log_word)
    out = 0
    cap = out_block.shape[0]
    memo_tag = np.full(MEMO, -1, dtype=np.int64)
    memo_key = np.zeros(MEMO, dtype=np.uint64)
    memo_val = np.zeros(MEMO, dtype=np.int32)
    for i in range(op.shape[0]):
        a = op[i]
        if data_only and a == IFETCH:
            continue
        s = np.uint64(max(np.int64(size[i]), 1))
        base = addr[i]
        last_byte = base + s - np.uint64(1)
        first_blk = base >> np.uint64(log_block)
        last_blk = last_byte >> np.uint64(log_block)
        if out + np.int64(last_blk - first_blk) + 1 > cap:
            return i, out
        tag = np.int64(pid)
        offset = np.uint64(0)
        for r in range(range_start.shape[0]):
            if range_start[r] <= base and base < range_end[r]:
                tag = range_tag[r]
                offset = range_start[r]
                break
        vb = first_blk
        while vb <= last_blk:
            rel = vb - (offset >> np.uint64(log_block))
            # a small direct-mapped memo of recent blocks saves most hash probes
            memo = np.int64((rel ^ (rel >> np.uint64(10))) & np.uint64(MEMO - 1))
            if memo_tag[memo] == tag and memo_key[memo] == rel:
                b = memo_val[memo]
            else:
                slot = _lookup(blk_tag, blk_key, blk_val, tag, rel)
                b = blk_val[slot]
            if b < 0:
                vpage = rel >> (log_page - np.uint64(log_block))
                ps = _lookup(pg_tag, pg_key, pg_val, tag, vpage)
                if pg_val[ps] < 0:
                    pg_tag[ps] = tag
                    pg_key[ps] = vpage
                    pg_val[ps] = counts[1]
                    counts[1] += 1
                if identity_pages:
                    phys_block = vb
                else:
                    ppage = _mix64(np.uint64(pg_val[ps]) ^ np.uint64(page_seed)) & np.uint64(0xFFFFFFFF)
                    phys_block = ppage * blocks_per_page + (rel & (blocks_per_page - np.uint64(1)))
                b = counts[0]
                counts[0] += 1
                blk_tag[slot] = tag
                blk_key[slot] = rel
                blk_val[slot] = b
                set_of[b] = np.int32(phys_block % np.uint64(n_sets))
                owner[b] = pid if tag == pid else -1
                is_kernel[b] = 0
                is_code[b] = 0
            memo_tag[memo] = tag
            memo_key[memo] = rel
            memo_val[memo] = b
            if kernel[i]:
                is_kernel[b] = 1
            if a == IFETCH and is_code[b] == 0:
                is_code[b] = 1
            lo = base if vb == first_blk else vb << np.uint64(log_block)
            hi = last_byte if vb == last_blk else ((vb + np.uint64(1)) << np.uint64(log_block)) - np.uint64(1)
            w0 = np.int64((lo & (block_bytes - np.uint64(1))) >> np.uint64(log_word))
            w1 = np.int64((hi & (block_bytes - np.uint64(1))) >> np.uint64(log_word))
            if w1 >= words_per_block:
                w1 = words_per_block - 1
            out_block[out] = b
            out_info[out] = np.uint16(np.int64(a) | (w0 << 2) | ((w1 - w0) << 8))
            out += 1
            vb += np.uint64(1)
    return op.shape[0], out


@njit(cache=True, inline="always")
def _word_mask(info):
    w0 = np.uint64((info >> 2) & 63)
    nw = np.uint64(((info >> 8) & 63) + 1)
    if nw >= np.uint64(64):
        return _FULL
    return ((np.uint64(1) << nw) - np.uint64(1)) << w0


@njit(cache=True, inline="always")
def _bus(glob, t, cost):
    """Hold the bus for ``cost`` cycles from the first free moment at or after ``t``
    (FCFS); returns the completion time."""
    start = max(t, glob[G_BUS_FREE])
    glob[G_BUS_FREE] = start + cost
    glob[G_BUS_BUSY] += cost
    return start + cost


@njit(cache=True)
def _end_lifetime(b, q, pending, is_kernel, counts):
    """A copy's lifetime ended; an unresolved invalidation miss was false sharing."""
    if pending[b, q]:
        pending[b, q] = 0
        counts[C_PENDING] -= 1
        counts[C_MISS + 2 * K_FALSE + is_kernel[b]] += 1


@njit(cache=True)
def _dispatch(p, t, running, ready, ready_since, last_cpu, cur_slice, slice_left, policy, slice_refs,
              affinity_bonus, rng, glob, counts):
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
            pick = np.int64(_next_random(rng) % np.uint64(n_ready))
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
    jitter = np.int64(_next_random(rng) % np.uint64(slice_refs // 2 + 1))
    slice_left[p] = slice_refs - slice_refs // 4 + jitter     # about slice_refs, +-25%


@njit(cache=True)
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


@njit(cache=True, inline="always")
def _count_coherence(counts, ctype, affected, useful, private, kern):
    """Classify a coherence transaction that reached ``affected`` copies (COHERENCE_SPEC
    §5.4, the a-priori rule): passive on a private block; true if a reached copy had used
    one of the written words in its current lifetime; else false."""
    if affected > 0:
        cls = CL_PASSIVE if private else (CL_TRUE if useful else CL_FALSE)
        counts[C_COH + 2 * (3 * ctype + cls) + kern] += 1


@njit(cache=True, inline="always")
def _tally(counts, base, cost):
    counts[base] += 1
    counts[base + 1] += cost
    counts[base + 2] += cost * cost


@njit(cache=True, inline="always")
def _store_through_buffer(store_buffer, p, t, glob, counts, bus_cost):
    """A store's bus transaction goes through the 2-entry store buffer: the processor
    stalls only until an entry is free.  Returns the stall (cycles)."""
    k = 0 if store_buffer[p, 0] <= store_buffer[p, 1] else 1
    delay = store_buffer[p, k] - t if store_buffer[p, k] > t else np.int64(0)
    counts[C_STORE_STALL] += delay
    _tally(counts, C_ASYNC, bus_cost)
    store_buffer[p, k] = _bus(glob, t + delay, bus_cost)
    return delay


@njit(cache=True)
def run(budget, buf_block, buf_info, buf_len, cursor,
        set_of, owner, is_kernel,
        line_block, line_state, line_inv, line_stamp, where, newv, used, pending, last_slice,
        clock, running, slice_left, stall, refs_by_cpu, store_buffer,
        ready, ready_since, last_cpu, cur_slice,
        proc_txn, proc_next, snoop_next, snoop_resp, snoop_supply, snoop_memupd, snoop_invkind,
        uses_private_line, assoc, cost, policy, slice_refs, affinity_factor, rng, glob, counts,
        check, ver_global, ver_mem, ver_copy, writable, dirty):
    """Simulate until ``glob[G_REFS] == budget`` (returns RUN_DONE) or a running process
    needs more references (returns RUN_REFILL with the process in ``glob[G_OUT]``).

    Timing (COHERENCE_SPEC §1.4): every reference costs ``cost[COST_CPU]`` cycles; a
    load or instruction-fetch miss stalls its processor until its bus transaction ends
    (FCFS bus, held for the transaction's full cost, seed 000 Table 4); a store that
    needs the bus goes through a 2-entry store buffer and stalls only when both entries
    are busy; write-backs (UB) occupy the bus without stalling.  The next reference is
    always taken from the processor with the smallest clock.

    With ``check`` the kernel carries a version number per word (global latest, memory,
    every cached copy) and returns RUN_STALE_READ if a read sees an old version or
    RUN_TWO_WRITABLE if a copy writable without a bus transaction coexists with another
    valid copy (``glob[G_ERROR_REF]`` = the reference number).
    """
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
            # processor with the smallest clock (lowest index on ties), and the next one:
            # p keeps the turn while it stays ahead of it (nothing else moves meanwhile)
            p = 0
            for q in range(1, n_active):
                if clock[q] < clock[p]:
                    p = q
            bound_cpu = -1
            for q in range(n_active):
                if q != p and (bound_cpu < 0 or clock[q] < bound):
                    bound = clock[q]
                    bound_cpu = q
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
        priv = 1 if (uses_private_line and owner[b] >= 0 and access != IFETCH) else 0
        t = clock[p]
        counts[C_REFS + 2 * access + kern] += 1
        stamp += 1
        slot = where[b, p]
        state = line_state[p, slot] if slot >= 0 else I
        delay = np.int64(0)
        if state != I:
            # ---- hit ---------------------------------------------------------------
            txn = proc_txn[state, is_write, priv]
            resp = 0
            if txn != NONE:   # a write hit that needs the bus: INV (MESI/AMSD) or WR (PSCR)
                resp, _, affected, useful = _snoop(
                    b, p, txn, priv, mask, stamp, where, line_state, line_inv, used, pending, is_kernel,
                    counts, snoop_next, snoop_resp, snoop_supply, snoop_memupd, snoop_invkind, check, ver_mem,
                    ver_copy)
                if txn == INV:
                    counts[C_INV] += 1
                    _count_coherence(counts, T_INV, affected, useful, owner[b] >= 0, kern)
                    delay = _store_through_buffer(store_buffer, p, t, glob, counts, cost[COST_INV])
                else:
                    counts[C_WR] += 1
                    _count_coherence(counts, T_WR, affected, useful, owner[b] >= 0, kern)
                    delay = _store_through_buffer(store_buffer, p, t, glob, counts, cost[COST_WR])
            line_state[p, slot] = proc_next[state, is_write, priv, resp]
        else:
            # ---- miss: classify ----------------------------------------------------
            had_tag = slot >= 0
            inv_kind = line_inv[p, slot] if had_tag else 0
            open_pending = False
            if had_tag and inv_kind == INV_COHERENCE:
                if owner[b] >= 0:
                    counts[C_MISS + 2 * K_PASSIVE + kern] += 1
                else:
                    open_pending = True
            elif had_tag and inv_kind == INV_SELECTIVE:
                counts[C_MISS + 2 * K_SELECTIVE + kern] += 1
                newv[b, p] = 0
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
            if not had_tag:
                # victim: an empty way, else an invalid way, else the LRU way
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
                slot = victim
                line_block[p, slot] = b
                where[b, p] = slot
            # ---- miss: bus transaction ---------------------------------------------
            txn = proc_txn[I, is_write, priv]
            snoop_txn = RB if txn == RB_WR else txn
            resp, supplier, affected, useful = _snoop(
                b, p, snoop_txn, priv, mask, stamp, where, line_state, line_inv, used, pending, is_kernel,
                counts, snoop_next, snoop_resp, snoop_supply, snoop_memupd, snoop_invkind, check, ver_mem, ver_copy)
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
                # PSCR write miss on a shared page: the word goes out as a write transaction
                resp_wr, _, affected, useful = _snoop(
                    b, p, WR, priv, mask, stamp, where, line_state, line_inv, used, pending, is_kernel,
                    counts, snoop_next, snoop_resp, snoop_supply, snoop_memupd, snoop_invkind, check, ver_mem,
                    ver_copy)
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
            if is_write:
                delay = _store_through_buffer(store_buffer, p, t, glob, counts, bus_cost)
            else:
                _tally(counts, C_SYNC, bus_cost)
                delay = _bus(glob, t, bus_cost) - t
                counts[C_SYNC_STALL] += delay
        # ---- after the access: bookkeeping common to hits and misses -------------------
        line_stamp[p, slot] = stamp
        if n_cpus > 1:     # sharing bookkeeping (nothing is shared on one processor)
            used[b, p] |= mask
            if is_write:
                for q in range(n_cpus):
                    if q != p and where[b, q] >= 0:
                        newv[b, q] |= mask
            elif pending[b, p] and (newv[b, p] & mask):
                # Dubois et al. 1993: the lifetime consumed a value written elsewhere
                pending[b, p] = 0
                counts[C_PENDING] -= 1
                counts[C_MISS + 2 * K_TRUE + kern] += 1
                newv[b, p] = 0
        if check:
            for w in range(ver_copy.shape[2]):
                if mask & (np.uint64(1) << np.uint64(w)):
                    if is_write:
                        ver_global[b, w] = stamp
                        ver_copy[b, p, w] = stamp
                    elif ver_copy[b, p, w] != ver_global[b, w]:
                        glob[G_ERROR_REF] = refs_done
                        glob[G_REFS] = refs_done
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
                glob[G_ERROR_REF] = refs_done
                glob[G_REFS] = refs_done
                return RUN_TWO_WRITABLE
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
            # time slice over: back to the ready queue, then dispatch (maybe the same one)
            now = clock[p]
            ready[pid] = 1
            ready_since[pid] = now
            bonus = np.int64(affinity_factor * slice_refs * now / max(refs_by_cpu[p], 1))
            _dispatch(p, now, running, ready, ready_since, last_cpu, cur_slice, slice_left, policy,
                      slice_refs, bonus, rng, glob, counts)
        p = p_next
    glob[G_REFS] = refs_done
    glob[G_STAMP] = stamp
    return RUN_DONE
