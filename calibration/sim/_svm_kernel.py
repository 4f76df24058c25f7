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
# WAIT_DATA: only inside a transaction (the processor idles until the data arrives)
RUN, WAIT_LOCK, WAIT_BARRIER, FINISHED, WAIT_DATA = 0, 1, 2, 3, 4
QUANTUM = 256
PAGE_WORDS = 1024          # 4-byte words in a 4 KiB page
HEADER = 16                # bytes of a message header (requests, acks, notices)
PACKET = 4096              # the NI sends a message's data in packets of up to 4 KiB
CALENDAR = 64              # booked intervals remembered per resource

# cost vector (``cost``, cycles; transfer in cycles per byte): Bilas et al. Tables 2 and 3,
# and whether a message crosses the receiver's I/O bus into memory (1) or not (0: a what-if)
(C_OVERHEAD, C_OCCUPANCY, C_TRANSFER, C_LINK, C_HANDLING, C_PROTECTION, C_COMPARE, C_DIFF_WORD, C_APPLY, C_TWIN,
 C_HANDLER, C_NOTICE, C_RECEIVE_BUS) = range(13)
N_COSTS = 13
# resources of a node booked in ``cal`` (processor time of handlers, I/O bus, NI), and the
# handlers booked on its processor at times its program has not reached yet (pending:
# charged to the program or absorbed by a wait when it gets there)
R_CPU, R_BUS, R_NI, R_PENDING = range(4)
# not a resource: ``cal[node, R_QUEUED, res]`` sums the cycles the bookings of ``node``'s
# resource ``res`` waited for it (column 0) and counts them (column 1)
R_QUEUED = 4
# not a resource either: ``cal[node, R_GAPS, b]`` counts the node's requests to remote
# servers whose window in :func:`_meet` (the clock since its last one of the phase) is in
# [2^b, 2^(b+1)) (b = 0: below 2), column 0, and sums those cycles, column 1
R_GAPS = 5
# nor this: ``cal[node, R_BUS_KINDS, k]`` splits the waits at ``node``'s I/O bus by what
# waited (k in :data:`BUS_KINDS` order: sending a header alone, sending data, taking a
# header in, taking data in), the cycles (column 0) and the messages (column 1)
R_BUS_KINDS = 6
N_CALENDARS = 7
BUS_SEND_HEADER, BUS_SEND_DATA, BUS_RECEIVE_HEADER, BUS_RECEIVE_DATA = range(4)
# and ``cal[node, R_BUS_KINDS, BUS_BUSY + k, 0]`` the cycles the bus carried kind k
BUS_BUSY = 4
# per-process times (``times``, cycles): the breakdown, the last data wait (when the
# processor idled), the time a blocked lock request reached the holder, the finish
(T_DATA, T_LOCK, T_BARRIER, T_PROTOCOL, T_HANDLER, T_DIFF, T_IDLE_FROM, T_IDLE_TO, T_LOCK_REQUEST,
 T_FINISH) = range(10)
# and SC's last fetch forwarded to a dirty owner, while no other request has travelled
# since (its unit + 1, 0: none) and the node's busy cycles when its data arrived
T_FORWARDED_UNIT, T_FORWARDED_BUSY = 10, 11
# and the node's last request to a remote server (its clock then; NEVER: none)
T_LAST_REQUEST = 12
N_TIMES = 13
NEVER = -(1 << 62)

# per-process counters (columns of ``stats``)
(BUSY, REFERENCES, SHARED_REFERENCES, READ_FAULTS, WRITE_FAULTS, REQUESTS, REPLY_BYTES, SERVED, ONEWAY,
 ONEWAY_BYTES, RECEIVED, APPLIED_WORDS, PROTECTIONS, TWINS, DIFFS, COMPARED_WORDS, DIFF_WORDS, NOTICES,
 INVALIDATIONS, ACQUIRES, LOCK_MESSAGES, CS_BUSY, CS_REQUESTS, BARRIERS, MESSAGES, ACKS, CS_PROTECTIONS, CS_TWINS,
 CS_COMPARED_WORDS, CS_DIFF_WORDS, CS_NOTICES, CS_LOCK_MESSAGES, FORWARDED, LOCAL_REQUESTS, CS_ACKS, CS_FORWARDED,
 CS_LOCAL_REQUESTS, BURST_AHEAD, CS_SERVED, ACK_WRITES, MIGRATORY, CS_MIGRATORY, MIGRATORY_GAP, CONCURRENT,
 COLLIDING, FIRST_ACQUIRES, BURST_BUSY, BURST_REQUESTS) = range(48)
N_STATS = 48
# CS_SERVED is counted on the server (of SERVED), the other CS_ columns on the requester
# the protocol counters whose share inside critical sections is counted too (the CS_
# columns, in this order): the lock holder's protocol work dilates the critical section
CS_PROTOCOL = (PROTECTIONS, TWINS, COMPARED_WORDS, DIFF_WORDS, NOTICES)
# what each lock's critical sections hold, counted to the outermost lock held (a nested
# acquire's section holds the outer lock too): the columns of ``lock_content`` after the
# first, which counts the outermost sections
LOCK_CONTENT = (CS_BUSY, CS_REQUESTS, CS_FORWARDED, CS_LOCAL_REQUESTS, CS_ACKS, CS_LOCK_MESSAGES, CS_PROTECTIONS,
                CS_TWINS, CS_COMPARED_WORDS, CS_DIFF_WORDS, CS_NOTICES)
N_LOCK_CONTENT = 1 + len(LOCK_CONTENT)
# per lock in ``lock_burst``: the phase of its last first-of-the-phase acquire, how many
# such acquires it has met in that phase, and their sum over the run of those ahead
B_PHASE, B_FIRSTS, B_AHEAD = range(3)
# columns of each lock's times (``lock_wait``): its acquirers' wait, the start of the
# current hold, the held cycles, the handoffs' cycles and their number
L_WAIT, L_SINCE, L_HELD, L_HANDOFF, L_HANDOFFS = range(5)
N_LOCK_TIMES = 5

# scalars in ``glob``: [units, locks, arrived at the barrier, barrier release time,
# sum over closed phases of the slowest process's busy cycles, closed phases]
G_UNITS, G_LOCKS, G_ARRIVED, G_BARRIER_TIME, G_PHASE_MAX, G_PHASES = range(6)
N_GLOB = 6


@jit
def _served(stats, server, in_cs):
    """Count one request ``server`` serves, and of those served for a process inside a
    critical section (``in_cs``: the requester's nesting depth) one more."""
    stats[server, SERVED] += 1
    if in_cs > 0:
        stats[server, CS_SERVED] += 1


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
def _cycles(x):
    """A cost in whole cycles (rounded to nearest)."""
    return np.int64(x + 0.5)


@jit
def _drop(cal, node, res, n, k):
    """Drop the first ``n`` of the ``k`` intervals of ``node``'s ``res`` (the rest move up)."""
    for j in range(n, k):
        cal[node, res, j - n, 0] = cal[node, res, j, 0]
        cal[node, res, j - n, 1] = cal[node, res, j, 1]


@jit
def _book(cal, cal_n, node, res, t, d):
    """Book ``d`` cycles of resource ``res`` of ``node`` at the earliest start >= ``t``
    that overlaps no booked interval (served in the order bookings are made, which the
    scheduler keeps close to time order); returns the start, and adds its wait (start -
    ``t``) to ``cal[node, R_QUEUED, res]``.  The calendar keeps the latest
    :data:`CALENDAR` intervals, sorted and disjoint."""
    if d <= 0:
        return t
    s = _earliest(cal, cal_n, node, res, t, d)
    cal[node, R_QUEUED, res, 0] += s - t
    cal[node, R_QUEUED, res, 1] += 1
    return s


@jit
def _earliest(cal, cal_n, node, res, t, d):
    """:func:`_book` without the count of waits."""
    k = cal_n[node, res]
    s = t
    i = 0
    while i < k:
        a = cal[node, res, i, 0]
        b = cal[node, res, i, 1]
        if b <= s:
            i += 1
            continue
        if a >= s + d:
            break
        s = b
        i += 1
    if k == CALENDAR:                 # forget the oldest interval
        if i == 0:
            return s
        _drop(cal, node, res, 1, k)
        i -= 1
        k -= 1
    for j in range(k, i, -1):
        cal[node, res, j, 0] = cal[node, res, j - 1, 0]
        cal[node, res, j, 1] = cal[node, res, j - 1, 1]
    cal[node, res, i, 0] = s
    cal[node, res, i, 1] = s + d
    cal_n[node, res] = k + 1
    return s


@jit
def _sent(t, s, r, cost):
    """When a message ``s``'s program starts at ``t`` leaves its processor: after the
    host overhead, or at once when ``r`` is ``s`` (no message)."""
    return t + (_cycles(cost[C_OVERHEAD]) if s != r else 0)


@jit
def _deliver(t, s, r, nbytes, cost, cal, cal_n):
    """Time a message of ``nbytes`` data bytes leaving ``s``'s processor at ``t`` is in
    ``r``'s memory: the header and data over ``s``'s I/O bus, NI occupancy per packet of
    up to 4 KiB at ``s``, the link, and ``r``'s I/O bus, which streams the data into
    memory as it arrives (cut-through: an idle bus adds no time, a busy one delays the
    end); each bus and NI a FCFS resource of its node.  ``t`` itself when ``s`` is ``r``.
    Without ``cost[C_RECEIVE_BUS]`` the data goes into memory as it arrives, past ``r``'s bus."""
    if s == r:
        return t
    x = _cycles((HEADER + nbytes) * cost[C_TRANSFER])
    t = _book_bus(cal, cal_n, s, t, x, BUS_SEND_DATA if nbytes > 0 else BUS_SEND_HEADER) + x
    occ = _cycles(cost[C_OCCUPANCY] * max(1, (nbytes + PACKET - 1) // PACKET))
    t = _book(cal, cal_n, s, R_NI, t, occ) + occ
    t += _cycles(cost[C_LINK])
    if cost[C_RECEIVE_BUS] == 0:
        return t
    return _book_bus(cal, cal_n, r, t - x, x, BUS_RECEIVE_DATA if nbytes > 0 else BUS_RECEIVE_HEADER) + x


@jit
def _book_bus(cal, cal_n, node, t, d, kind):
    """:func:`_book` on ``node``'s I/O bus, its wait also counted under ``kind``
    (``cal[node, R_BUS_KINDS]``: the bus's waits in :data:`R_QUEUED` split by what
    waited, and the cycles it carried of each kind; as there, a transfer of no cycles
    books and counts nothing)."""
    start = _book(cal, cal_n, node, R_BUS, t, d)
    if d > 0:
        cal[node, R_BUS_KINDS, kind, 0] += start - t
        cal[node, R_BUS_KINDS, kind, 1] += 1
        cal[node, R_BUS_KINDS, BUS_BUSY + kind, 0] += d
    return start


@jit
def _steal(r, start, d, status, clock, times, cal, cal_n):
    """A handler on ``r``'s processor from ``start`` for ``d`` cycles delays ``r``'s
    program by as much, unless the processor idles then: the program waits at a lock or
    a barrier, has finished, or the handler falls in its last data wait.  One at a time
    ahead of ``r``'s clock waits until ``r`` gets there (:func:`_pend`): it runs while
    ``r`` waits or delays it, whichever ``r`` does then."""
    if d <= 0 or status[r] != RUN:
        return
    if start >= clock[r]:
        _pend(r, start, d, clock, times, cal, cal_n)
        return
    lo = max(start, times[r, T_IDLE_FROM])
    hi = min(start + d, times[r, T_IDLE_TO])
    _delayed(r, d - max(hi - lo, 0), clock, times)


@jit
def _delayed(r, d, clock, times):
    """``r``'s program delayed ``d`` cycles by handlers on its processor."""
    clock[r] += d
    times[r, T_HANDLER] += d


@jit
def _pend(r, start, d, clock, times, cal, cal_n):
    """Keep the handler ``start``, ``d`` ahead of ``r``'s clock, in start order (the
    earliest charged at once when :data:`CALENDAR` are pending)."""
    k = cal_n[r, R_PENDING]
    if k == CALENDAR:
        _delayed(r, cal[r, R_PENDING, 0, 1], clock, times)
        _drop(cal, r, R_PENDING, 1, k)
        k -= 1
    i = k
    while i > 0 and cal[r, R_PENDING, i - 1, 0] > start:
        cal[r, R_PENDING, i, 0] = cal[r, R_PENDING, i - 1, 0]
        cal[r, R_PENDING, i, 1] = cal[r, R_PENDING, i - 1, 1]
        i -= 1
    cal[r, R_PENDING, i, 0] = start
    cal[r, R_PENDING, i, 1] = d
    cal_n[r, R_PENDING] = k + 1


@jit
def _due(p, clock, times, cal, cal_n):
    """Charge ``p`` the pending handlers its clock has reached: its program ran then."""
    k = cal_n[p, R_PENDING]
    n = 0
    while n < k and cal[p, R_PENDING, n, 0] <= clock[p]:
        _delayed(p, cal[p, R_PENDING, n, 1], clock, times)
        n += 1
    if n > 0:
        _drop(cal, p, R_PENDING, n, k)
        cal_n[p, R_PENDING] = k - n


@jit
def _waited(p, start, end, clock, times, cal, cal_n):
    """``p`` waited (for data, a lock or a barrier) from ``start`` to ``end``: its clock
    goes to ``end``, plus what the pending handlers before ``end`` cost it: those that
    started before the wait in full (it ran then), those within it the part beyond
    ``end`` (the processor was idle until then)."""
    k = cal_n[p, R_PENDING]
    extra = np.int64(0)
    keep = 0
    for j in range(k):
        a = cal[p, R_PENDING, j, 0]
        d = cal[p, R_PENDING, j, 1]
        if a >= end:
            cal[p, R_PENDING, keep, 0] = a
            cal[p, R_PENDING, keep, 1] = d
            keep += 1
        elif a < start:
            extra += d
        else:
            extra += max(a + d - end, 0)
    cal_n[p, R_PENDING] = keep
    clock[p] = end
    _delayed(p, extra, clock, times)


@jit
def _request(t, s, r, nbytes, extra, nout, cost, cal, cal_n, status, clock, times):
    """A request of ``nbytes`` data bytes leaving ``s``'s processor at ``t`` and handled
    at ``r``: message handling, the handler (``extra`` cycles of its own work beside the
    basic cost) and the host overhead of the ``nout`` messages it sends, on ``r``'s
    processor after the handlers booked before it.  Returns when the handler ends (the
    sends leave then).  A request to oneself is a procedure call: ``extra`` and the sends."""
    if s == r:
        return t + _cycles(extra + nout * cost[C_OVERHEAD])
    arrive = _deliver(t, s, r, nbytes, cost, cal, cal_n)
    work = _cycles(cost[C_HANDLING] + cost[C_HANDLER] + extra + nout * cost[C_OVERHEAD])
    start = _book(cal, cal_n, r, R_CPU, arrive, work)
    _steal(r, start, work, status, clock, times, cal, cal_n)
    return start + work


@jit
def _charge(p, d, clock, times):
    """``d`` cycles of protocol work on ``p``'s own processor (protection, twins, diffs,
    notices, the overhead of one-way sends)."""
    clock[p] += d
    times[p, T_PROTOCOL] += d


@jit
def _wait_data(p, start, end, clock, times, cal, cal_n):
    """``p`` blocked from ``start`` until its data arrived at ``end``."""
    _waited(p, start, end, clock, times, cal, cal_n)
    times[p, T_DATA] += end - start
    times[p, T_IDLE_FROM] = start
    times[p, T_IDLE_TO] = end


@jit
def _end_interval(p, nprocs, home, writable, dirty, wlist, wn, log_page, log_int, log_n, vc, stats,
                  cost, cal, cal_n, status, clock, times):
    """Close ``p``'s interval (HLRC, at every synchronisation point): write-protect the
    pages it wrote, log one write notice per page, and send each non-home page's diff
    (words compared against the twin, words changed) to the page's home, where a
    handler applies it; the sender does not wait for it."""
    if wn[p] == 0:
        return
    vc[p, p] += 1
    k = vc[p, p]
    for j in range(wn[p]):
        u = wlist[p, j]
        idx = u * nprocs + p
        writable[idx] = 0
        stats[p, PROTECTIONS] += 1
        _charge(p, _cycles(cost[C_PROTECTION]), clock, times)
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
            create = _cycles(PAGE_WORDS * cost[C_COMPARE] + words * cost[C_DIFF_WORD])
            _charge(p, create, clock, times)
            times[p, T_DIFF] += create
            if _send(stats, p, h, HEADER + 4 * words, True):
                _charge(p, _cycles(cost[C_OVERHEAD]), clock, times)
                _request(clock[p], p, h, 4 * words, words * cost[C_APPLY], 0, cost, cal, cal_n, status, clock,
                         times)
    wn[p] = 0


@jit
def _learn(p, q, upto, nprocs, home, valid, log_page, log_int, log_n, log_base, pos, vc, stats, cost, clock, times):
    """Apply the write notices of ``q``'s intervals up to ``upto`` to ``p``: each is a
    list element processed, and a valid non-home copy is invalidated (protection off),
    on ``p``'s processor."""
    if upto <= vc[p, q]:
        return
    j = pos[p, q] - log_base[q]
    while j < log_n[q] and log_int[q, j] <= upto:
        u = log_page[q, j]
        stats[p, NOTICES] += 1
        _charge(p, _cycles(cost[C_NOTICE]), clock, times)
        idx = u * nprocs + p
        if home[u] != p and valid[idx]:
            valid[idx] = 0
            stats[p, INVALIDATIONS] += 1
            stats[p, PROTECTIONS] += 1
            _charge(p, _cycles(cost[C_PROTECTION]), clock, times)
        j += 1
    pos[p, q] = j + log_base[q]
    vc[p, q] = upto


@jit
def _lock_request(t, p, lock, to, nout, nprocs, cost, cal, cal_n, status, clock, times):
    """``p``'s acquire of ``lock`` at ``t``: to the lock's manager and, forwarded, to node
    ``to`` (the holder, or the last holder; -1: none), whose handler sends ``nout``
    messages (none to ``p`` itself).  Returns when the last handler ends and the node
    that answers."""
    manager = lock % nprocs
    t = _sent(t, p, manager, cost)
    if to >= 0 and to != manager:
        t = _request(t, p, manager, 0, 0.0, 1, cost, cal, cal_n, status, clock, times)
        return _request(t, manager, to, 0, 0.0, nout if to != p else 0, cost, cal, cal_n, status, clock, times), to
    return _request(t, p, manager, 0, 0.0, nout if manager != p else 0, cost, cal, cal_n, status, clock,
                    times), manager


@jit
def _grant(p, lock, arrive, nprocs, hlrc, holder, lock_last, lock_vc, lock_wait, in_cs, cs_mark, clock, home, valid,
           log_page, log_int, log_n, log_base, pos, vc, stats, cost, times, cal, cal_n):
    """``p`` takes ``lock`` when its grant arrives at ``arrive`` (its wait until then is
    lock wait): request to the lock's manager, forward to the last holder, grant (with
    the holder's write notices under HLRC, processed by ``p`` while it holds the lock:
    inside the critical section, whose counts start at ``cs_mark``: ``p``'s counters
    when its outermost section began, and that section's lock)."""
    holder[lock] = p
    # the hold begins when p has the grant, summed at the release
    lock_wait[lock, L_SINCE] = max(arrive, clock[p])
    if in_cs[p] == 0:
        for k in range(N_STATS):
            cs_mark[p, k] = stats[p, k]
        cs_mark[p, N_STATS] = lock
    if arrive > clock[p]:
        times[p, T_LOCK] += arrive - clock[p]
        lock_wait[lock, L_WAIT] += arrive - clock[p]
        _waited(p, clock[p], arrive, clock, times, cal, cal_n)
    manager = lock % nprocs
    last = lock_last[lock]
    sent = _send(stats, p, manager, HEADER, False)
    if last >= 0 and last != manager:
        sent += _send(stats, manager, last, HEADER, False)      # forward to the last holder
        sent += _send(stats, last, p, HEADER, False)            # its grant
    else:
        sent += _send(stats, manager, p, HEADER, False)
    stats[p, LOCK_MESSAGES] += sent
    if in_cs[p] > 0:              # a nested acquire: its messages lengthen the outer critical section
        stats[p, CS_LOCK_MESSAGES] += sent
    if hlrc:
        for q in range(nprocs):
            if lock_vc[lock, q] > vc[p, q]:
                _learn(p, q, lock_vc[lock, q], nprocs, home, valid, log_page, log_int, log_n, log_base, pos, vc,
                       stats, cost, clock, times)
    in_cs[p] += 1


@jit
def _meet(p, h, t, nprocs, requested, times, stats, glob, cal):
    """Count, for ``p``'s request to remote server ``h`` at clock ``t``, the other nodes
    (not ``h``) that requested near it (``CONCURRENT``: within ``p``'s time since its
    last request of the phase, before or after) and those of them that requested ``h``
    then (``COLLIDING``), and note the request.  A pair is counted once, by whichever
    of the two the kernel reaches second, for both nodes.  On the machine without costs
    these are the program's own schedule: a staggered all-to-all exchange (Splash's transposes) has
    every server fetched from by one node at a time, where independent routing would
    have them meet.  The window goes into ``cal[p, R_GAPS]`` (a node's requests come in
    streams, one right after the other, or apart)."""
    since = max(times[p, T_LAST_REQUEST], glob[G_BARRIER_TIME])
    window = t - since
    b = 0
    w = window
    while w > 1 and b < CALENDAR - 1:
        w >>= 1
        b += 1
    cal[p, R_GAPS, b, 0] += 1
    cal[p, R_GAPS, b, 1] += window
    for q in range(nprocs):
        if q != p and q != h:
            near = abs(requested[q, h] - t) < window
            if near or abs(times[q, T_LAST_REQUEST] - t) < window:
                stats[p, CONCURRENT] += 1
                stats[q, CONCURRENT] += 1
                if near:
                    stats[p, COLLIDING] += 1
                    stats[q, COLLIDING] += 1
    requested[p, h] = t
    times[p, T_LAST_REQUEST] = t


@jit
def _sc_access(p, u, store, nprocs, home, owner, sharers, unit_bytes, in_cs, stats, cost, cal, cal_n, status, clock,
               times, requested, glob):
    """One access under SC to block ``u`` (home ``home[u]``): a full-map directory
    (owner or sharer bits per block), invalidation-based, three hops to a dirty owner.
    A miss blocks ``p`` until its data, and under a write every acknowledgement, arrive."""
    bit = np.uint64(1) << np.uint64(p)
    h = home[u]
    o = owner[u]
    had = False
    start = clock[p]
    status[p] = WAIT_DATA
    t = _sent(start, p, h, cost)
    if not store:
        if o == p or (sharers[u] & bit):
            status[p] = RUN
            return
        stats[p, READ_FAULTS] += 1
        remote = h != p or o >= 0
        _send(stats, p, h, HEADER, False)
        if o >= 0:
            _send(stats, h, o, HEADER, False)                     # forward to the dirty owner
            _send(stats, o, p, HEADER + unit_bytes, False)        # data from the owner
            _send(stats, o, h, HEADER + unit_bytes, True)         # sharing write-back to the home
            if o != h:
                _served(stats, o, in_cs[p])
            sharers[u] |= np.uint64(1) << np.uint64(o)
            owner[u] = -1
            t = _request(t, p, h, 0, 0.0, 1 if o != h else 0, cost, cal, cal_n, status, clock, times)
            t = _request(t, h, o, 0, 0.0, (o != p) + (o != h), cost, cal, cal_n, status, clock, times)
            done = _deliver(t, o, p, unit_bytes, cost, cal, cal_n)
            _request(t, o, h, unit_bytes, 0.0, 0, cost, cal, cal_n, status, clock, times)
        else:
            _send(stats, h, p, HEADER + unit_bytes, False)
            t = _request(t, p, h, 0, 0.0, h != p, cost, cal, cal_n, status, clock, times)
            done = _deliver(t, h, p, unit_bytes, cost, cal, cal_n)
        if h != p:
            _served(stats, h, in_cs[p])
        sharers[u] |= bit
    else:
        if o == p:
            status[p] = RUN
            return
        stats[p, WRITE_FAULTS] += 1
        had = (sharers[u] & bit) != 0
        remote = h != p or o >= 0 or (sharers[u] & ~bit) != 0
        _send(stats, p, h, HEADER, False)
        if h != p:
            _served(stats, h, in_cs[p])
        others = sharers[u] & ~bit
        to = o if o >= 0 else p                                   # the home's answer goes to the owner or to p
        nout = np.int64(to != h)
        for q in range(nprocs):
            if q != h and (others >> np.uint64(q)) & np.uint64(1):
                nout += 1
        t = _request(t, p, h, 0, 0.0, nout, cost, cal, cal_n, status, clock, times)
        done = t
        awaited = 0
        for q in range(nprocs):
            if (others >> np.uint64(q)) & np.uint64(1):
                _send(stats, h, q, HEADER, True)                  # invalidation
                if _send(stats, q, p, HEADER, True):              # acknowledgement, awaited by p
                    awaited += 1
                    stats[p, ACKS] += 1
                    if in_cs[p] > 0:
                        stats[p, CS_ACKS] += 1
                stats[q, INVALIDATIONS] += 1
                tq = _request(t, h, q, 0, 0.0, q != p, cost, cal, cal_n, status, clock, times)
                done = max(done, _deliver(tq, q, p, 0, cost, cal, cal_n))
        if awaited > 0:
            stats[p, ACK_WRITES] += 1        # the writes that wait for acknowledgements (of ACKS)
        if o >= 0:
            _send(stats, h, o, HEADER, False)
            _send(stats, o, p, HEADER + unit_bytes, False)
            if o != h:
                _served(stats, o, in_cs[p])
            stats[o, INVALIDATIONS] += 1
            to = _request(t, h, o, 0, 0.0, 1, cost, cal, cal_n, status, clock, times)
            done = max(done, _deliver(to, o, p, unit_bytes, cost, cal, cal_n))
        elif had:
            _send(stats, h, p, HEADER, False)                     # ownership without data
            done = max(done, _deliver(t, h, p, 0, cost, cal, cal_n))
        else:
            _send(stats, h, p, HEADER + unit_bytes, False)
            done = max(done, _deliver(t, h, p, unit_bytes, cost, cal, cal_n))
        owner[u] = p
        sharers[u] = np.uint64(0)
    status[p] = RUN
    _wait_data(p, start, done, clock, times, cal, cal_n)
    if remote:
        stats[p, REQUESTS] += 1
        if in_cs[p] > 0:
            stats[p, CS_REQUESTS] += 1
        if h != p:
            _meet(p, h, start, nprocs, requested, times, stats, glob, cal)
        forwarded = h != p and o >= 0 and o != h and o != p
        if forwarded:
            stats[p, FORWARDED] += 1         # three hops: the home forwards to the dirty owner
            if in_cs[p] > 0:
                stats[p, CS_FORWARDED] += 1
        elif h == p and o < 0:
            stats[p, LOCAL_REQUESTS] += 1    # its own home: no request travels, only invalidations
            if in_cs[p] > 0:
                stats[p, CS_LOCAL_REQUESTS] += 1
        if (not store) or not had or o >= 0:
            stats[p, REPLY_BYTES] += unit_bytes
        if store and had and o < 0 and h != p and times[p, T_FORWARDED_UNIT] == u + 1:
            # a migratory write: the block p read from a dirty owner last (Stenstrom, Brorsson
            # & Sandberg, ISCA 1993), its home's bus perhaps still taking the write-back in
            stats[p, MIGRATORY] += 1
            stats[p, MIGRATORY_GAP] += stats[p, BUSY] - times[p, T_FORWARDED_BUSY]
            if in_cs[p] > 0:
                stats[p, CS_MIGRATORY] += 1
        times[p, T_FORWARDED_UNIT] = 0
        if forwarded and not store:
            times[p, T_FORWARDED_UNIT] = u + 1
            times[p, T_FORWARDED_BUSY] = stats[p, BUSY]


@jit
def run(op, addr, size, length, cursor, ended, cycles_per_reference, nprocs, hlrc, log_unit, first_touch,
        range_start, range_end, range_tag, range_count,
        tab_tag, tab_key, tab_val, lock_tag, lock_key, lock_val, glob,
        home, valid, writable, dirty, owner, sharers, wlist, wn, log_page, log_int, log_n, log_base, pos, vc,
        holder, lock_last, lock_free, lock_vc, lock_acquires, lock_content, lock_wait, lock_burst,
        status, clock, waiting, wait_since, in_cs, first_phase, cs_mark, phase_busy, stats, snapshots, phase_times, cost, cal, cal_n, times,
        requested):
    """Run until a refill, growth, the end or a deadlock (see the module docstring).
    ``snapshots[k]``: ``stats`` when the k-th barrier released (the phases' counts), and
    ``phase_times[k]``: ``times`` then, each node's clock in the last column (its release);
    ``cs_mark[p]``: ``p``'s counters when its outermost critical section began, and its
    lock (the last column); ``lock_content[lock]``: the outermost sections of ``lock`` and
    what they held (:data:`LOCK_CONTENT`); ``first_phase[p]``: the phase of ``p``'s last
    first acquire of a phase, and ``lock_burst`` (:data:`B_PHASE` ...) the bursts they make."""
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
            if cal_n[p, R_PENDING] > 0:
                _due(p, clock, times, cal, cal_n)
            c = cursor[p]
            if glob[G_UNITS] + 64 > cap_units or 2 * (glob[G_UNITS] + 64) > tab_val.shape[0] \
                    or glob[G_LOCKS] + 1 > cap_locks or 2 * (glob[G_LOCKS] + 1) > lock_val.shape[0] \
                    or wn[p] + 64 > wlist.shape[1] or log_n[p] + wn[p] + 64 > log_page.shape[1] \
                    or glob[G_PHASES] + 1 >= snapshots.shape[0]:
                return GROW
            if c >= length[p]:
                if not ended[p]:
                    return p
                if hlrc:
                    _end_interval(p, nprocs, home, writable, dirty, wlist, wn, log_page, log_int, log_n, vc, stats,
                                  cost, cal, cal_n, status, clock, times)
                status[p] = FINISHED         # a barrier others wait at may now be complete without p
                cal_n[p, R_PENDING] = 0      # handlers after its end cost it nothing
                times[p, T_FINISH] = clock[p]
                _release_if_all_arrived(nprocs, hlrc, home, valid, log_page, log_int, log_n, log_base, pos, vc,
                                        status, clock, glob, phase_busy, stats, snapshots, phase_times, cost, cal, cal_n, times)
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
                sent_before = stats[p, MESSAGES]
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
                            start = clock[p]
                            _meet(p, h, start, nprocs, requested, times, stats, glob, cal)
                            status[p] = WAIT_DATA
                            t = _request(_sent(start, p, h, cost), p, h, 0, 0.0, 1, cost, cal, cal_n,
                                         status, clock, times)
                            status[p] = RUN
                            _wait_data(p, start, _deliver(t, h, p, unit_bytes, cost, cal, cal_n), clock, times, cal, cal_n)
                            _charge(p, _cycles(cost[C_PROTECTION]), clock, times)
                            stats[p, REQUESTS] += 1
                            stats[p, REPLY_BYTES] += unit_bytes
                            _served(stats, h, in_cs[p])
                            stats[p, PROTECTIONS] += 1
                            if in_cs[p] > 0:
                                stats[p, CS_REQUESTS] += 1
                            valid[idx] = 1
                        if store:
                            if writable[idx] == 0:                   # first write in the interval
                                if not fetched:
                                    stats[p, WRITE_FAULTS] += 1
                                    stats[p, PROTECTIONS] += 1
                                    _charge(p, _cycles(cost[C_PROTECTION]), clock, times)
                                writable[idx] = 1
                                wlist[p, wn[p]] = u
                                wn[p] += 1
                                if h != p:
                                    stats[p, TWINS] += 1
                                    _charge(p, _cycles(cost[C_TWIN]), clock, times)
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
                        _sc_access(p, u, store, nprocs, home, owner, sharers, unit_bytes, in_cs, stats, cost, cal,
                                   cal_n, status, clock, times, requested, glob)
                    vu += np.uint64(1)
                if stats[p, MESSAGES] != sent_before:
                    # processes behind p's clock book the resources first; without costs,
                    # they request first (first touch, _meet's pairs go in time order)
                    break
                continue
            # synchronisation: every marker closes the HLRC interval
            times[p, T_FORWARDED_UNIT] = 0
            if hlrc:
                _end_interval(p, nprocs, home, writable, dirty, wlist, wn, log_page, log_int, log_n, vc, stats,
                              cost, cal, cal_n, status, clock, times)
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
                    if first_phase[p] != glob[G_PHASES]:
                        # p's first acquire since the barrier: those that took this lock
                        # first in this phase before it are ahead of it in a burst
                        first_phase[p] = glob[G_PHASES]
                        if lock_burst[lock, B_PHASE] != glob[G_PHASES]:
                            lock_burst[lock, B_PHASE] = glob[G_PHASES]
                            lock_burst[lock, B_FIRSTS] = 0
                        stats[p, BURST_AHEAD] += lock_burst[lock, B_FIRSTS]
                        # and how far into the phase it comes: the work and the requests
                        # since p left the barrier (or started)
                        stats[p, FIRST_ACQUIRES] += 1
                        stats[p, BURST_BUSY] += phase_busy[p]
                        stats[p, BURST_REQUESTS] += stats[p, REQUESTS] - (
                            snapshots[glob[G_PHASES] - 1, p, REQUESTS] if glob[G_PHASES] > 0 else 0)
                        lock_burst[lock, B_AHEAD] += lock_burst[lock, B_FIRSTS]
                        lock_burst[lock, B_FIRSTS] += 1
                    status[p] = WAIT_DATA
                    if holder[lock] < 0:
                        t, giver = _lock_request(clock[p], p, lock, lock_last[lock], 1, nprocs, cost, cal, cal_n,
                                                 status, clock, times)
                        status[p] = RUN
                        arrive = _deliver(max(t, lock_free[lock]), giver, p, 0, cost, cal, cal_n)
                        _grant(p, lock, arrive, nprocs, hlrc, holder, lock_last, lock_vc, lock_wait, in_cs, cs_mark, clock, home,
                               valid, log_page, log_int, log_n, log_base, pos, vc, stats, cost, times, cal, cal_n)
                    else:                              # queued at the holder, who grants at its release
                        times[p, T_LOCK_REQUEST] = _lock_request(clock[p], p, lock, holder[lock], 0, nprocs, cost,
                                                                 cal, cal_n, status, clock, times)[0]
                        status[p] = WAIT_LOCK
                        waiting[p] = lock
                        wait_since[p] = clock[p]
                else:
                    if holder[lock] != p:
                        return DEADLOCK                # releasing a lock it does not hold
                    holder[lock] = -1
                    lock_wait[lock, L_HELD] += clock[p] - lock_wait[lock, L_SINCE]
                    lock_last[lock] = p
                    lock_free[lock] = clock[p]
                    for q in range(nprocs):
                        lock_vc[lock, q] = vc[p, q]
                    in_cs[p] -= 1
                    if in_cs[p] == 0:        # the release's diffs (above) were inside it
                        for k in range(len(CS_PROTOCOL)):
                            stats[p, CS_PROTECTIONS + k] += stats[p, CS_PROTOCOL[k]] - cs_mark[p, CS_PROTOCOL[k]]
                        outer = cs_mark[p, N_STATS]
                        lock_content[outer, 0] += 1
                        for k in range(len(LOCK_CONTENT)):
                            lock_content[outer, 1 + k] += stats[p, LOCK_CONTENT[k]] - cs_mark[p, LOCK_CONTENT[k]]
                    nxt = -1
                    for q in range(nprocs):
                        if status[q] == WAIT_LOCK and waiting[q] == lock and (nxt < 0 or wait_since[q] < wait_since[nxt]):
                            nxt = q
                    if nxt >= 0:
                        status[nxt] = RUN
                        ov = _cycles(cost[C_OVERHEAD])
                        request = times[nxt, T_LOCK_REQUEST]
                        if request <= clock[p]:        # queued here before the release: p sends the grant
                            _charge(p, ov, clock, times)
                            leave = clock[p]
                        else:                          # it comes later: its handler grants at once
                            leave = _book(cal, cal_n, p, R_CPU, request, ov)
                            _steal(p, leave, ov, status, clock, times, cal, cal_n)
                            leave += ov
                        arrive = _deliver(leave, p, nxt, 0, cost, cal, cal_n)
                        # the handoff: from the release (or the request's handling, if later) to
                        # the grant's arrival, counted
                        lock_wait[lock, L_HANDOFF] += arrive - max(lock_free[lock], request)
                        lock_wait[lock, L_HANDOFFS] += 1
                        _grant(nxt, lock, arrive, nprocs, hlrc, holder, lock_last, lock_vc, lock_wait, in_cs, cs_mark, clock, home,
                               valid, log_page, log_int, log_n, log_base, pos, vc, stats, cost, times, cal, cal_n)
                break
            if o == BARRIER:
                stats[p, BARRIERS] += 1
                _send(stats, p, 0, HEADER, False)
                status[p] = WAIT_DATA
                t = _request(_sent(clock[p], p, 0, cost), p, 0, 0, 0.0, 0, cost, cal,
                             cal_n, status, clock, times)
                status[p] = WAIT_BARRIER
                glob[G_ARRIVED] += 1
                if t > glob[G_BARRIER_TIME]:
                    glob[G_BARRIER_TIME] = t
                _release_if_all_arrived(nprocs, hlrc, home, valid, log_page, log_int, log_n, log_base, pos, vc,
                                        status, clock, glob, phase_busy, stats, snapshots, phase_times, cost, cal, cal_n, times)
                break
            return DEADLOCK                            # unknown marker (checked by the loader)


@jit
def _release_if_all_arrived(nprocs, hlrc, home, valid, log_page, log_int, log_n, log_base, pos, vc, status, clock,
                            glob, phase_busy, stats, snapshots, phase_times, cost, cal, cal_n, times):
    """If every process still running waits at the barrier, release it: the manager
    (node 0) has handled the last arrival, then sends the release to each waiting node
    in turn (its host overhead each), and each merges every arrival's knowledge (HLRC
    write notices through the manager)."""
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
    snapshots[glob[G_PHASES]] = stats
    glob[G_PHASES] += 1
    t = glob[G_BARRIER_TIME]
    for k in range(1, nprocs + 1):
        p = k % nprocs                 # the manager leaves last, after its sends
        if status[p] != WAIT_BARRIER:
            continue
        if p != 0:
            t += _cycles(cost[C_OVERHEAD])
            release = _deliver(t, 0, p, 0, cost, cal, cal_n)
        else:
            release = t
        times[p, T_BARRIER] += release - clock[p]
        _waited(p, clock[p], release, clock, times, cal, cal_n)
        status[p] = RUN
        if hlrc:
            for q in range(nprocs):
                _learn(p, q, vc[q, q], nprocs, home, valid, log_page, log_int, log_n, log_base, pos, vc, stats, cost,
                       clock, times)
        _send(stats, 0, p, HEADER, False)
    k = glob[G_PHASES] - 1
    for q in range(nprocs):
        for c in range(N_TIMES):
            phase_times[k, q, c] = times[q, c]
        phase_times[k, q, N_TIMES] = clock[q]
    glob[G_ARRIVED] = 0
