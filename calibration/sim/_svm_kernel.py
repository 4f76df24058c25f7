"""Compiled kernel of the SVM cluster machine (private to :mod:`calibration.sim`).

One call runs the processes of a parallel program, always advancing the runnable
process with the smallest PRAM clock, until a process needs its reference buffer
refilled (returns its id), the tables need room (``GROW``), every process has finished
(``DONE``) or nothing can run (``DEADLOCK``: a lock never released or barriers that do
not match).  See :mod:`calibration.sim.svm` for the protocols and the counters.
"""
from __future__ import annotations

import numpy as np

from mva.jit import jit

from ._blockmap_kernel import _lookup, block_range
from ._reuse_kernel import _popcount
from .traces import ACQUIRE, BARRIER, IFETCH, RELEASE, STORE

DONE, GROW, DEADLOCK = -1, -2, -3
RUN, WAIT_LOCK, WAIT_BARRIER, FINISHED = 0, 1, 2, 3
QUANTUM = 256
PAGE_WORDS = 1024          # 4-byte words in a 4 KiB page
HEADER = 16                # bytes of a message header (requests, acks, notices)

# per-process counters (columns of ``stats``)
(BUSY, REFERENCES, SHARED_REFERENCES, READ_FAULTS, WRITE_FAULTS, REQUESTS, REPLY_BYTES, SERVED, ONEWAY,
 ONEWAY_BYTES, RECEIVED, APPLIED_WORDS, PROTECTIONS, TWINS, DIFFS, COMPARED_WORDS, DIFF_WORDS, NOTICES,
 INVALIDATIONS, ACQUIRES, LOCK_MESSAGES, CS_BUSY, CS_REQUESTS, BARRIERS, MESSAGES) = range(25)
N_STATS = 25

# scalars in ``glob``: [units, locks, arrived at the barrier, barrier release time,
# sum over closed phases of the slowest process's busy cycles]
G_UNITS, G_LOCKS, G_ARRIVED, G_BARRIER_TIME, G_PHASE_MAX = range(5)


@jit
def _send(stats, sender, receiver, nbytes, oneway):
    """Count one message from ``sender`` to ``receiver``; 0 (nothing sent) when they are
    one node, else 1."""
    if sender == receiver:
        return 0
    stats[sender, MESSAGES] += 1
    if oneway:
        stats[sender, ONEWAY] += 1
        stats[sender, ONEWAY_BYTES] += nbytes
        stats[receiver, RECEIVED] += 1
    return 1


@jit
def _end_interval(p, nprocs, home, writable, dirty, wlist, wn, log_page, log_int, log_n, vc, stats):
    """Close ``p``'s interval (HLRC, at every synchronisation point): write-protect the
    pages it wrote, log one write notice per page, and send each non-home page's diff
    (words compared against the twin, words changed) to the page's home."""
    if wn[p] == 0:
        return
    vc[p, p] += 1
    k = vc[p, p]
    for j in range(wn[p]):
        u = wlist[p, j]
        idx = u * nprocs + p
        writable[idx] = 0
        stats[p, PROTECTIONS] += 1
        log_page[p, log_n[p]] = u
        log_int[p, log_n[p]] = k
        log_n[p] += 1
        h = home[u]
        if h != p:
            words = 0
            for w in range(PAGE_WORDS // 64):
                words += _popcount(dirty[idx, w])
                dirty[idx, w] = np.uint64(0)
            stats[p, DIFFS] += 1
            stats[p, COMPARED_WORDS] += PAGE_WORDS
            stats[p, DIFF_WORDS] += words
            stats[h, APPLIED_WORDS] += words
            _send(stats, p, h, HEADER + 4 * words, True)
    wn[p] = 0


@jit
def _learn(p, q, upto, nprocs, home, valid, log_page, log_int, log_n, log_base, pos, vc, stats):
    """Apply the write notices of ``q``'s intervals up to ``upto`` to ``p``: each is a
    list element processed, and a valid non-home copy is invalidated (protection off)."""
    if upto <= vc[p, q]:
        return
    j = pos[p, q] - log_base[q]
    while j < log_n[q] and log_int[q, j] <= upto:
        u = log_page[q, j]
        stats[p, NOTICES] += 1
        idx = u * nprocs + p
        if home[u] != p and valid[idx]:
            valid[idx] = 0
            stats[p, INVALIDATIONS] += 1
            stats[p, PROTECTIONS] += 1
        j += 1
    pos[p, q] = j + log_base[q]
    vc[p, q] = upto


@jit
def _grant(p, lock, nprocs, hlrc, holder, lock_last, lock_free, lock_vc, in_cs, clock, home, valid,
           log_page, log_int, log_n, log_base, pos, vc, stats):
    """``p`` takes ``lock``: request to the lock's manager, forward to the last holder,
    grant (with the holder's write notices under HLRC) to ``p``."""
    holder[lock] = p
    if lock_free[lock] > clock[p]:
        clock[p] = lock_free[lock]
    manager = lock % nprocs
    last = lock_last[lock]
    sent = _send(stats, p, manager, HEADER, False)
    if last >= 0 and last != manager:
        sent += _send(stats, manager, last, HEADER, False)      # forward to the last holder
        sent += _send(stats, last, p, HEADER, False)            # its grant
    else:
        sent += _send(stats, manager, p, HEADER, False)
    stats[p, LOCK_MESSAGES] += sent
    if hlrc:
        for q in range(nprocs):
            if lock_vc[lock, q] > vc[p, q]:
                _learn(p, q, lock_vc[lock, q], nprocs, home, valid, log_page, log_int, log_n, log_base, pos, vc,
                       stats)
    in_cs[p] += 1


@jit
def _sc_access(p, u, store, nprocs, home, owner, sharers, unit_bytes, in_cs, stats):
    """One access under SC to block ``u`` (home ``home[u]``): a full-map directory
    (owner or sharer bits per block), invalidation-based, three hops to a dirty owner."""
    bit = np.uint64(1) << np.uint64(p)
    h = home[u]
    o = owner[u]
    had = False
    if not store:
        if o == p or (sharers[u] & bit):
            return
        stats[p, READ_FAULTS] += 1
        remote = h != p or o >= 0
        _send(stats, p, h, HEADER, False)
        if o >= 0:
            _send(stats, h, o, HEADER, False)                     # forward to the dirty owner
            _send(stats, o, p, HEADER + unit_bytes, False)        # data from the owner
            _send(stats, o, h, HEADER + unit_bytes, True)         # sharing write-back to the home
            if o != h:
                stats[o, SERVED] += 1
            sharers[u] |= np.uint64(1) << np.uint64(o)
            owner[u] = -1
        else:
            _send(stats, h, p, HEADER + unit_bytes, False)
        if h != p:
            stats[h, SERVED] += 1
        sharers[u] |= bit
    else:
        if o == p:
            return
        stats[p, WRITE_FAULTS] += 1
        had = (sharers[u] & bit) != 0
        remote = h != p or o >= 0 or (sharers[u] & ~bit) != 0
        _send(stats, p, h, HEADER, False)
        if h != p:
            stats[h, SERVED] += 1
        others = sharers[u] & ~bit
        for q in range(nprocs):
            if (others >> np.uint64(q)) & np.uint64(1):
                _send(stats, h, q, HEADER, True)                  # invalidation
                _send(stats, q, p, HEADER, True)                  # acknowledgement
                stats[q, INVALIDATIONS] += 1
        if o >= 0:
            _send(stats, h, o, HEADER, False)
            _send(stats, o, p, HEADER + unit_bytes, False)
            if o != h:
                stats[o, SERVED] += 1
            stats[o, INVALIDATIONS] += 1
        elif had:
            _send(stats, h, p, HEADER, False)                     # ownership without data
        else:
            _send(stats, h, p, HEADER + unit_bytes, False)
        owner[u] = p
        sharers[u] = np.uint64(0)
    if remote:
        stats[p, REQUESTS] += 1
        if in_cs[p] > 0:
            stats[p, CS_REQUESTS] += 1
        if (not store) or not had or o >= 0:
            stats[p, REPLY_BYTES] += unit_bytes


@jit
def run(op, addr, size, length, cursor, ended, cycles_per_reference, nprocs, hlrc, log_unit, first_touch,
        range_start, range_end, range_tag, range_count,
        tab_tag, tab_key, tab_val, lock_tag, lock_key, lock_val, glob,
        home, valid, writable, dirty, owner, sharers, wlist, wn, log_page, log_int, log_n, log_base, pos, vc,
        holder, lock_last, lock_free, lock_vc, lock_acquires,
        status, clock, waiting, wait_since, in_cs, phase_busy, stats):
    """Run until a refill, growth, the end or a deadlock (see the module docstring)."""
    unit_bytes = np.int64(1) << np.int64(log_unit)
    cap_units = home.shape[0]
    cap_locks = holder.shape[0]
    while True:
        p = -1
        best = np.int64(0)
        for q in range(nprocs):
            if status[q] == RUN and (p < 0 or clock[q] < best):
                p = q
                best = clock[q]
        if p < 0:
            for q in range(nprocs):
                if status[q] != FINISHED:
                    return DEADLOCK
            return DONE
        steps = 0
        while steps < QUANTUM and status[p] == RUN:
            steps += 1
            c = cursor[p]
            if glob[G_UNITS] + 64 > cap_units or 2 * (glob[G_UNITS] + 64) > tab_val.shape[0] \
                    or glob[G_LOCKS] + 1 > cap_locks or 2 * (glob[G_LOCKS] + 1) > lock_val.shape[0] \
                    or wn[p] + 64 > wlist.shape[1] or log_n[p] + wn[p] + 64 > log_page.shape[1]:
                return GROW
            if c >= length[p]:
                if not ended[p]:
                    return p
                if hlrc:
                    _end_interval(p, nprocs, home, writable, dirty, wlist, wn, log_page, log_int, log_n, vc, stats)
                status[p] = FINISHED         # a barrier others wait at may now be complete without p
                _release_if_all_arrived(nprocs, hlrc, home, valid, log_page, log_int, log_n, log_base, pos, vc,
                                        status, clock, glob, phase_busy, stats)
                break
            o = op[p, c]
            cursor[p] = c + 1
            if o == IFETCH:
                clock[p] += 1
                phase_busy[p] += 1
                stats[p, BUSY] += 1
                if in_cs[p] > 0:
                    stats[p, CS_BUSY] += 1
                continue
            if o <= STORE:
                work = cycles_per_reference[p]
                clock[p] += work
                phase_busy[p] += work
                stats[p, BUSY] += work
                stats[p, REFERENCES] += 1
                if in_cs[p] > 0:
                    stats[p, CS_BUSY] += work
                a = addr[p, c]
                tag = np.int64(-1)
                base = np.uint64(0)
                for r in range(range_count[p]):
                    if range_start[p, r] <= a < range_end[p, r]:
                        tag = range_tag[p, r]
                        base = range_start[p, r]
                if tag < 0:
                    continue                      # private: no protocol action
                stats[p, SHARED_REFERENCES] += 1
                store = o == STORE
                first, last = block_range(a, size[p, c], log_unit)
                vu = first
                while vu <= last:
                    # written out, as for the locks below: a shared helper measured 2.5x slower
                    # here, inlined or not
                    slot = _lookup(tab_tag, tab_key, tab_val, tag, vu)
                    if tab_val[slot] < 0:
                        tab_tag[slot] = tag
                        tab_key[slot] = vu
                        tab_val[slot] = glob[G_UNITS]
                        glob[G_UNITS] += 1
                    u = np.int64(tab_val[slot])
                    if home[u] < 0:
                        if first_touch:
                            home[u] = p
                        else:          # round-robin over the range's pages
                            home[u] = np.int64(((vu << np.uint64(log_unit)) - base) >> np.uint64(12)) % nprocs
                    if hlrc:
                        h = home[u]
                        idx = u * nprocs + p
                        fetched = False
                        if h != p and valid[idx] == 0:           # page fault: fetch the page from its home
                            fetched = True
                            if store:
                                stats[p, WRITE_FAULTS] += 1
                            else:
                                stats[p, READ_FAULTS] += 1
                            _send(stats, p, h, HEADER, False)
                            _send(stats, h, p, HEADER + unit_bytes, False)
                            stats[p, REQUESTS] += 1
                            stats[p, REPLY_BYTES] += unit_bytes
                            stats[h, SERVED] += 1
                            stats[p, PROTECTIONS] += 1
                            if in_cs[p] > 0:
                                stats[p, CS_REQUESTS] += 1
                            valid[idx] = 1
                        if store:
                            if writable[idx] == 0:                   # first write in the interval
                                if not fetched:
                                    stats[p, WRITE_FAULTS] += 1
                                    stats[p, PROTECTIONS] += 1
                                writable[idx] = 1
                                wlist[p, wn[p]] = u
                                wn[p] += 1
                                if h != p:
                                    stats[p, TWINS] += 1
                            if h != p:
                                lo = a if vu == first else (vu << np.uint64(log_unit))
                                hi = a + np.uint64(max(np.int64(size[p, c]), 1)) - np.uint64(1)
                                top = ((vu + np.uint64(1)) << np.uint64(log_unit)) - np.uint64(1)
                                if hi > top:
                                    hi = top
                                w0 = np.int64((lo & np.uint64(unit_bytes - 1)) >> np.uint64(2))
                                w1 = np.int64((hi & np.uint64(unit_bytes - 1)) >> np.uint64(2))
                                for w in range(w0, w1 + 1):
                                    dirty[idx, w >> 6] |= np.uint64(1) << np.uint64(w & 63)
                    else:
                        _sc_access(p, u, store, nprocs, home, owner, sharers, unit_bytes, in_cs, stats)
                    vu += np.uint64(1)
                continue
            # synchronisation: every marker closes the HLRC interval
            if hlrc:
                _end_interval(p, nprocs, home, writable, dirty, wlist, wn, log_page, log_int, log_n, vc, stats)
            ident = addr[p, c]
            if o == ACQUIRE or o == RELEASE:
                slot = _lookup(lock_tag, lock_key, lock_val, np.int64(0), ident)
                if lock_val[slot] < 0:
                    lock_tag[slot] = 0
                    lock_key[slot] = ident
                    lock_val[slot] = glob[G_LOCKS]
                    glob[G_LOCKS] += 1
                lock = np.int64(lock_val[slot])
                if o == ACQUIRE:
                    stats[p, ACQUIRES] += 1
                    lock_acquires[lock] += 1
                    if holder[lock] < 0:
                        _grant(p, lock, nprocs, hlrc, holder, lock_last, lock_free, lock_vc, in_cs, clock, home,
                               valid, log_page, log_int, log_n, log_base, pos, vc, stats)
                    else:
                        status[p] = WAIT_LOCK
                        waiting[p] = lock
                        wait_since[p] = clock[p]
                else:
                    if holder[lock] != p:
                        return DEADLOCK                # releasing a lock it does not hold
                    holder[lock] = -1
                    lock_last[lock] = p
                    lock_free[lock] = clock[p]
                    for q in range(nprocs):
                        lock_vc[lock, q] = vc[p, q]
                    in_cs[p] -= 1
                    nxt = -1
                    for q in range(nprocs):
                        if status[q] == WAIT_LOCK and waiting[q] == lock and (nxt < 0 or wait_since[q] < wait_since[nxt]):
                            nxt = q
                    if nxt >= 0:
                        status[nxt] = RUN
                        _grant(nxt, lock, nprocs, hlrc, holder, lock_last, lock_free, lock_vc, in_cs, clock, home,
                               valid, log_page, log_int, log_n, log_base, pos, vc, stats)
                break
            if o == BARRIER:
                stats[p, BARRIERS] += 1
                _send(stats, p, 0, HEADER, False)
                status[p] = WAIT_BARRIER
                glob[G_ARRIVED] += 1
                if clock[p] > glob[G_BARRIER_TIME]:
                    glob[G_BARRIER_TIME] = clock[p]
                _release_if_all_arrived(nprocs, hlrc, home, valid, log_page, log_int, log_n, log_base, pos, vc,
                                        status, clock, glob, phase_busy, stats)
                break
            return DEADLOCK                            # unknown marker (checked by the loader)


@jit
def _release_if_all_arrived(nprocs, hlrc, home, valid, log_page, log_int, log_n, log_base, pos, vc, status, clock,
                            glob, phase_busy, stats):
    """If every process still running waits at the barrier, release it: merge every
    arrival's knowledge (HLRC write notices through the manager, node 0) and restart
    them at the latest arrival's clock."""
    active = 0
    for q in range(nprocs):
        if status[q] != FINISHED:
            active += 1
    if active == 0 or glob[G_ARRIVED] != active:
        return
    top = np.int64(0)
    for q in range(nprocs):
        if phase_busy[q] > top:
            top = phase_busy[q]
        phase_busy[q] = 0
    glob[G_PHASE_MAX] += top
    for p in range(nprocs):
        if status[p] != WAIT_BARRIER:
            continue
        if hlrc:
            for q in range(nprocs):
                _learn(p, q, vc[q, q], nprocs, home, valid, log_page, log_int, log_n, log_base, pos, vc, stats)
        _send(stats, 0, p, HEADER, False)
        clock[p] = glob[G_BARRIER_TIME]
        status[p] = RUN
    glob[G_ARRIVED] = 0
