"""Compiled kernel of the cc-NUMA machine (private to :mod:`calibration.sim`).

An event-driven simulation: one heap of timed events (a processor resuming, a message
reaching a node controller), one FCFS non-pipelined server per node controller, LogP
latencies and gaps.  One call runs until a processor needs its reference buffer
refilled (returns its id), the tables need room (``GROW``), a barrier released
(``INIT_END`` for the first, ending the initialisation phase, else ``PHASE_END``, so
the driver can close the phase's counts), every processor has finished and the
network drained (``DONE``), nothing can run (``DEADLOCK``) or, in
checking mode, the protocol let a read see an old value or two nodes hold a line
writable (``STALE_READ``, ``TWO_WRITABLE``).  See :mod:`calibration.sim.ccnuma`.

Coherence state changes are applied when the home serialises a request (the sharers'
copies are invalidated, the owner's downgraded); the messages then carry the timing.
A fill installs its line only if no write was serialised since the data left (the
line's ``epoch``), so an invalidation that overtakes a reply cannot leave a stale copy.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from mva.jit import jit as _mva_jit

from ._blockmap_kernel import _lookup
from .directory import EXCLUSIVE, FORWARD, INVALIDATE, MEMORY, READ, SHARED, UNCACHED, UPGRADE, WRITE, I, M, S
from .traces import ACQUIRE, BARRIER, IFETCH, RELEASE, STORE

# nothing here allocates, so it runs without numba's reference counting (2-3x faster)
jit = partial(_mva_jit, refcounts=False)

DONE, GROW, DEADLOCK, STALE_READ, TWO_WRITABLE, BARRIER_RELEASE, INIT_END, PHASE_END = range(-1, -9, -1)
RUN, WAIT_MEM, WAIT_LOCK, WAIT_BARRIER, FINISHED = range(5)
NO_PROXY, BASIC, REACTIVE = range(3)
LINE_SHIFT = 6                      # 64-byte lines
PAGE_SHIFT = 13 - LINE_SHIFT        # 8 KiB pages, in lines
PRIVATE_LINE = 1 << (48 - LINE_SHIFT)   # lines from here up are private (machine.PRIVATE_SHIFT)

# node-controller occupancies, cycles (Talbot & Kelly 1999, Table 1.2; sums are ours [REC])
SLC_BUS, SLC_RELEASE, SLC_LOOKUP, SLC_LINE = 2, 1, 6, 18
MEM_BUS, MEM_RELEASE, DRAM_LOOKUP, DRAM_LINE = 3, 2, 20, 24
SEND = 5
DRAM_READ = MEM_BUS + DRAM_LOOKUP + DRAM_LINE + MEM_RELEASE          # 49: a line from memory
DIRECTORY_ONLY = MEM_BUS + DRAM_LOOKUP + MEM_RELEASE                  # 25: directory lookup, no data
SLC_READ = SLC_BUS + SLC_LOOKUP + SLC_LINE + SLC_RELEASE              # 27: a line from the SLC
SLC_FILL = SLC_BUS + SLC_LINE + SLC_RELEASE                           # 21: a line into the SLC
SLC_INVALIDATE = SLC_BUS + SLC_LOOKUP + SLC_RELEASE                   # 9
ACK_HANDLING = 1
LATENCY_DATA, LATENCY_SHORT, GAP = 10, 5, 5                           # LogP L and g (Table 1.1, §1.4)
QUANTUM = 100     # a processor runs at most this many cycles past the next event [REC]

# messages
(K_PROC, K_ISSUE, K_RD, K_WR, K_PRD, K_DATA, K_FWD, K_INV, K_ACK, K_WB, K_BOUNCE, K_NACK, K_PDATA,
 K_CHAIN) = range(14)
# event fields: who pays (``REQ``, the transaction's requester, -1 none), who gets the
# data (``ASK``: the requester, or a proxy fetching for itself), the request (``WHAT``:
# READ/WRITE/UPGRADE, or the bounced message's kind), ``FLAG`` 1 for a proxy's fetch
(E_TIME, E_SEQ, E_KIND, E_DEST, E_SRC, E_LINE, E_REQ, E_ASK, E_WHAT, E_FLAG, E_EPOCH, E_VER, E_ACKS,
 E_ARRIVED) = range(14)
N_EFIELDS = 14

# per-node registers (``node[p, ...]``)
(N_CLOCK, N_STATUS, N_PKIND, N_PLINE, N_PSTART, N_ACKS, N_GOTDATA, N_NC_FREE, N_SEND_FREE, N_RECV_FREE,
 N_LOCK, N_WAIT_SINCE, N_CHAIN, N_RING_HEAD, N_RING_N, N_QACC, N_FINISH, N_CPR) = range(18)
N_NODE = 18

# per-node counters (``stats[p, ...]``), the public names are in ccnuma.COUNTERS
(C_REFERENCES, C_WORK, C_READ_MISSES, C_WRITE_MISSES, C_UPGRADES, C_REMOTE_READS, C_RR_CYCLES, C_RR_QUEUE,
 C_MESSAGES, C_BOUNCES, C_PROXY_READS, C_NACKS, C_HOME_REQUESTS, C_NC_BUSY, C_BUFFERED, C_QUEUE_CYCLES,
 C_STALL, C_TRANSACTIONS, C_COMBINED, C_PROXY_HITS, C_INVALIDATIONS, C_WRITEBACKS, C_BARRIER_WAIT,
 C_LOCAL_READS, C_TXN_QUEUE) = range(25)
N_STATS = 25

# scalars (``glob``)
(G_SEQ, G_HEAP_N, G_LINES, G_PAGES, G_LOCKS, G_ARRIVED, G_RR_NEXT, G_INIT_DONE, G_START, G_ACTIVE,
 G_FREE_N, G_CHECK_FAIL) = range(12)
N_GLOB = 12


@jit(inline=True)
def _before(ev, a, b):
    ta, tb = ev[a, E_TIME], ev[b, E_TIME]
    return ta < tb or (ta == tb and ev[a, E_SEQ] < ev[b, E_SEQ])


@jit
def _push(ev, heap, free, glob, kind, time, dest, src, line, req, ask, what, flag, epoch, ver, acks):
    glob[G_FREE_N] -= 1
    slot = free[glob[G_FREE_N]]
    ev[slot, E_TIME] = time
    ev[slot, E_KIND] = kind
    ev[slot, E_DEST] = dest
    ev[slot, E_SRC] = src
    ev[slot, E_LINE] = line
    ev[slot, E_REQ] = req
    ev[slot, E_ASK] = ask
    ev[slot, E_WHAT] = what
    ev[slot, E_FLAG] = flag
    ev[slot, E_EPOCH] = epoch
    ev[slot, E_VER] = ver
    ev[slot, E_ACKS] = acks
    ev[slot, E_ARRIVED] = 0
    _reinsert(ev, heap, glob, slot)


@jit
def _reinsert(ev, heap, glob, slot):
    """Put a popped event back with a later time (its fields already set)."""
    ev[slot, E_SEQ] = glob[G_SEQ]
    glob[G_SEQ] += 1
    i = glob[G_HEAP_N]
    glob[G_HEAP_N] += 1
    heap[i] = slot
    while i > 0:
        parent = (i - 1) >> 1
        if _before(ev, heap[i], heap[parent]):
            heap[i], heap[parent] = heap[parent], heap[i]
            i = parent
        else:
            break


@jit
def _pop(ev, heap, glob):
    top = heap[0]
    glob[G_HEAP_N] -= 1
    n = glob[G_HEAP_N]
    heap[0] = heap[n]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        child = left
        if left + 1 < n and _before(ev, heap[left + 1], heap[left]):
            child = left + 1
        if _before(ev, heap[child], heap[i]):
            heap[i], heap[child] = heap[child], heap[i]
            i = child
        else:
            break
    return top


@jit
def _send(ev, heap, free, glob, node, stats, kind, now, src, dest, line, req, ask, what, flag, epoch, ver, acks,
          data):
    """A message from ``src``'s node controller, leaving at ``now`` (after the previous
    send's gap) and arriving ``L`` later; to itself it arrives at once."""
    if src == dest:
        _push(ev, heap, free, glob, kind, now, dest, src, line, req, ask, what, flag, epoch, ver, acks)
        return now
    depart = max(now, node[src, N_SEND_FREE])
    node[src, N_SEND_FREE] = depart + GAP
    stats[src, C_MESSAGES] += 1
    _push(ev, heap, free, glob, kind, depart + (LATENCY_DATA if data else LATENCY_SHORT), dest, src, line, req,
          ask, what, flag, epoch, ver, acks)
    return depart


@jit(inline=True)
def _is_sharer(sharers, x, n):
    return (sharers[x, n >> 6] >> np.uint64(n & 63)) & np.uint64(1)


@jit
def _drop_copy(p, line_addr, slc_tag, slc_state, flc_tag):
    """Invalidate ``p``'s copy of line address ``line_addr`` (both cache levels)."""
    s = line_addr & (slc_tag.shape[1] - 1)
    if slc_tag[p, s] == line_addr:
        slc_state[p, s] = I
    f = line_addr & (flc_tag.shape[1] - 1)
    if flc_tag[p, f] == line_addr:
        flc_tag[p, f] = -1


@jit
def _install(p, x, state, ver, Q, node, stats, lines, caches, check, now):
    """Put line ``x`` in ``p``'s SLC in ``state``; a modified victim is written back to
    its home (the directory learns at once, the message carries the cost)."""
    ev, heap, free, glob = Q
    line_addr, line_home, line_marked, dir_state, dir_owner, dir_sharers, busy, epoch, ver_latest, ver_mem = lines
    slc_tag, slc_state, slc_line, slc_ver, flc_tag = caches
    la = line_addr[x]
    s = la & (slc_tag.shape[1] - 1)
    old_tag = slc_tag[p, s]
    if old_tag != la and old_tag >= 0:
        f = old_tag & (flc_tag.shape[1] - 1)
        if flc_tag[p, f] == old_tag:
            flc_tag[p, f] = -1
        if slc_state[p, s] == M:
            v = slc_line[p, s]
            dir_state[v] = UNCACHED
            dir_owner[v] = -1
            if check:
                ver_mem[v] = slc_ver[p, s]
            stats[p, C_WRITEBACKS] += 1
            _send(ev, heap, free, glob, node, stats, K_WB, now, p, line_home[v], v, p, p, 0, 0, 0, 0, 0, True)
    slc_tag[p, s] = la
    slc_state[p, s] = state
    slc_line[p, s] = x
    if check:
        slc_ver[p, s] = ver


@jit
def _proxy_of(x, client, home, nodes):
    """Proxy node of line ``x`` for ``client``: nodes form three clusters, each using a
    different proxy for a line, consecutive lines going to different proxies (Talbot &
    Kelly §1.3); a proxy equal to the client or the home moves on to the next node [REC].
    -1 if no node qualifies."""
    if nodes < 3:
        return -1
    cluster = (3 * client) // nodes
    stride = (nodes + 2) // 3
    q = (x + cluster * stride) % nodes
    for _ in range(3):
        if q != client and q != home:
            return q
        q = (q + 1) % nodes
    return -1


@jit
def _check_store(p, x, la, slc_tag, slc_state, slc_ver, ver_latest, nodes):
    """Checking mode at a store: the writer's copy is the latest version and no other
    node holds the line."""
    s = la & (slc_tag.shape[1] - 1)
    if slc_ver[p, s] != ver_latest[x]:
        return STALE_READ
    for q in range(nodes):
        if q != p and slc_tag[q, s] == la and slc_state[q, s] != I:
            return TWO_WRITABLE
    ver_latest[x] += 1
    slc_ver[p, s] = ver_latest[x]
    return DONE


@jit
def _pending_slot(pend_line, n, x):
    """Slot of line ``x`` among proxy ``n``'s pending fetches (``x = -1``: a free slot)."""
    for k in range(pend_line.shape[1]):
        if pend_line[n, k] == x:
            return k
    return -1


@jit
def _finish(p, when, Q, node, stats, lines, caches, check, nodes):
    """``p``'s transaction is complete (data and every acknowledgement in): a write
    performs its store, the line is no longer busy, the processor resumes at ``when``."""
    ev, heap, free, glob = Q
    line_addr, line_home, line_marked, dir_state, dir_owner, dir_sharers, busy, epoch, ver_latest, ver_mem = lines
    slc_tag, slc_state, slc_line, slc_ver, flc_tag = caches
    x = node[p, N_PLINE]
    what = node[p, N_PKIND]
    if what != READ and check:
        status = _check_store(p, x, line_addr[x], slc_tag, slc_state, slc_ver, ver_latest, nodes)
        if status != DONE:
            glob[G_CHECK_FAIL] = p
            return status
    if busy[x] == p + 1:
        busy[x] = 0
    stall = when - node[p, N_PSTART]
    stats[p, C_STALL] += stall
    if what == READ and line_home[x] != p:
        stats[p, C_RR_CYCLES] += stall
        stats[p, C_RR_QUEUE] += node[p, N_QACC]
    node[p, N_STATUS] = RUN
    _push(ev, heap, free, glob, K_PROC, when, p, p, 0, -1, p, 0, 0, 0, 0, 0)
    return DONE


@jit
def _arrive_data(p, x, ver, ep, when, Q, node, stats, lines, caches, check, nodes, fill_state):
    """Data (or a grant, ``ver`` -1) for ``p``'s pending request has arrived: install
    the line unless a write was serialised since it left (a read then uses it once),
    and finish if no acknowledgement is outstanding."""
    line_addr, line_home, line_marked, dir_state, dir_owner, dir_sharers, busy, epoch, ver_latest, ver_mem = lines
    slc_tag, slc_state, slc_line, slc_ver, flc_tag = caches
    ev, heap, free, glob = Q
    what = node[p, N_PKIND]
    node[p, N_GOTDATA] = 1
    if ep == epoch[x]:
        la = line_addr[x]
        s = la & (slc_tag.shape[1] - 1)
        if ver < 0:                                  # a grant: the shared copy becomes writable
            ver = slc_ver[p, s] if check else 0
        _install(p, x, fill_state[what], ver, Q, node, stats, lines, caches, check, when)
        if fill_state[what] == S:
            dir_sharers[x, p >> 6] |= np.uint64(1) << np.uint64(p & 63)
    if node[p, N_ACKS] == 0:
        return _finish(p, when, Q, node, stats, lines, caches, check, nodes)
    return DONE


@jit
def _release_barrier(Q, node, stats, nodes):
    """Everyone still running has arrived: all leave at the last arrival."""
    ev, heap, free, glob = Q
    release = 0
    for q in range(nodes):
        if node[q, N_STATUS] == WAIT_BARRIER:
            release = max(release, node[q, N_CLOCK])
    for q in range(nodes):
        if node[q, N_STATUS] == WAIT_BARRIER:
            stats[q, C_BARRIER_WAIT] += release - node[q, N_CLOCK]
            node[q, N_STATUS] = RUN
            _push(ev, heap, free, glob, K_PROC, release, q, q, 0, -1, q, 0, 0, 0, 0, 0)
    glob[G_ARRIVED] = 0
    return release


@jit
def _new_line(p, la, a, first_touch, nodes, tab, lines, page_home, mark, glob):
    """Dense id of line address ``la`` (first touched by ``p`` at byte ``a``), making its
    entry (and its page's home) on first touch; -1 if the tables need room."""
    tab_tag, tab_key, tab_val = tab
    line_addr, line_home, line_marked, dir_state, dir_owner, dir_sharers, busy, epoch, ver_latest, ver_mem = lines
    j = _lookup(tab_tag, tab_key, tab_val, 0, np.uint64(la))     # keys are unsigned everywhere (rehash)
    if tab_val[j] >= 0:
        return tab_val[j]
    if (glob[G_LINES] >= line_addr.shape[0] or glob[G_PAGES] >= page_home.shape[0]
            or 2 * (glob[G_LINES] + glob[G_PAGES] + glob[G_LOCKS] + 2) > tab_val.shape[0]):
        return -1
    pg = np.uint64(la >> PAGE_SHIFT)
    jp = _lookup(tab_tag, tab_key, tab_val, 1, pg)
    if tab_val[jp] < 0:
        tab_tag[jp] = 1
        tab_key[jp] = pg
        tab_val[jp] = glob[G_PAGES]
        # round-robin deals shared pages to nodes in the order they are first touched;
        # first touch gives a page to its toucher (provisionally until the
        # initialisation phase ends, when the table is cleared); a private page (tagged
        # with its process from PRIVATE_LINE up) is its own process's, as an operating
        # system places a process's private memory on its node under either policy
        if first_touch or la >= PRIVATE_LINE:
            page_home[glob[G_PAGES]] = p
        else:
            page_home[glob[G_PAGES]] = glob[G_RR_NEXT] % nodes
            glob[G_RR_NEXT] += 1
        glob[G_PAGES] += 1
        j = _lookup(tab_tag, tab_key, tab_val, 0, np.uint64(la))
    x = glob[G_LINES]
    glob[G_LINES] += 1
    tab_tag[j] = 0
    tab_key[j] = np.uint64(la)
    tab_val[j] = x
    line_addr[x] = la
    line_home[x] = page_home[tab_val[jp]]
    dir_state[x] = UNCACHED
    dir_owner[x] = -1
    dir_sharers[x, :] = np.uint64(0)
    busy[x] = 0
    epoch[x] = 0
    ver_latest[x] = 0
    ver_mem[x] = 0
    mark_start, mark_end = mark
    marked = 0
    for k in range(mark_start.shape[0]):
        if mark_start[k] <= a < mark_end[k]:
            marked = 1
    line_marked[x] = marked
    return x


@jit
def _processor(p, t, op, addr, length, cursor, ended, Q, node, stats, lines, caches, tab, page_home, lock_holder,
               mark, first_touch, check, nodes):
    """Run processor ``p`` from ``t`` through its cache hits, at most ``QUANTUM`` cycles
    past the next event; stop at a miss (handed to its controller), a barrier, a lock
    held elsewhere, or the end of its buffer.  Returns DONE, ``p`` (refill), GROW,
    BARRIER_RELEASE (everyone arrived), DEADLOCK or a checking failure."""
    ev, heap, free, glob = Q
    line_addr, line_home, line_marked, dir_state, dir_owner, dir_sharers, busy, epoch, ver_latest, ver_mem = lines
    slc_tag, slc_state, slc_line, slc_ver, flc_tag = caches
    tab_tag, tab_key, tab_val = tab
    slc_mask = slc_tag.shape[1] - 1
    flc_mask = flc_tag.shape[1] - 1
    clock = max(t, node[p, N_CLOCK])
    horizon = (ev[heap[0], E_TIME] if glob[G_HEAP_N] > 0 else clock) + QUANTUM
    cpr = node[p, N_CPR]
    while True:
        c = cursor[p]
        if c >= length[p]:
            node[p, N_CLOCK] = clock
            if ended[p]:
                node[p, N_STATUS] = FINISHED
                node[p, N_FINISH] = clock
                glob[G_ACTIVE] -= 1
                if glob[G_ACTIVE] > 0 and glob[G_ARRIVED] == glob[G_ACTIVE]:
                    return BARRIER_RELEASE
                return DONE
            _push(ev, heap, free, glob, K_PROC, clock, p, p, 0, -1, p, 0, 0, 0, 0, 0)
            return p
        o = op[p, c]
        if o == IFETCH:
            clock += 1
            stats[p, C_WORK] += 1
            cursor[p] = c + 1
            continue
        if o > STORE:
            if o == BARRIER:
                cursor[p] = c + 1
                node[p, N_STATUS] = WAIT_BARRIER
                node[p, N_CLOCK] = clock
                glob[G_ARRIVED] += 1
                return BARRIER_RELEASE if glob[G_ARRIVED] == glob[G_ACTIVE] else DONE
            j = _lookup(tab_tag, tab_key, tab_val, 2, addr[p, c])
            if tab_val[j] < 0:
                if glob[G_LOCKS] >= lock_holder.shape[0] or 2 * (glob[G_LINES] + glob[G_PAGES]
                                                                + glob[G_LOCKS] + 2) > tab_val.shape[0]:
                    node[p, N_CLOCK] = clock
                    _push(ev, heap, free, glob, K_PROC, clock, p, p, 0, -1, p, 0, 0, 0, 0, 0)
                    return GROW
                tab_tag[j] = 2
                tab_key[j] = addr[p, c]
                tab_val[j] = glob[G_LOCKS]
                lock_holder[glob[G_LOCKS]] = -1
                glob[G_LOCKS] += 1
            lk = tab_val[j]
            cursor[p] = c + 1
            if o == ACQUIRE:
                if lock_holder[lk] < 0:
                    lock_holder[lk] = p
                    continue
                node[p, N_STATUS] = WAIT_LOCK
                node[p, N_LOCK] = lk
                node[p, N_CLOCK] = clock
                node[p, N_WAIT_SINCE] = clock
                return DONE
            if o != RELEASE or lock_holder[lk] != p:
                return DEADLOCK
            lock_holder[lk] = -1
            best = -1
            for q in range(nodes):       # the longest waiter takes the lock
                if node[q, N_STATUS] == WAIT_LOCK and node[q, N_LOCK] == lk and (
                        best < 0 or node[q, N_WAIT_SINCE] < node[best, N_WAIT_SINCE]):
                    best = q
            if best >= 0:
                lock_holder[lk] = best
                node[best, N_STATUS] = RUN
                _push(ev, heap, free, glob, K_PROC, clock, best, best, 0, -1, best, 0, 0, 0, 0, 0)
            continue
        la = np.int64(addr[p, c] >> np.uint64(LINE_SHIFT))
        s = la & slc_mask
        hit = slc_tag[p, s] == la and slc_state[p, s] != I
        if hit and (o != STORE or slc_state[p, s] == M):
            if check:
                if o == STORE:
                    status = _check_store(p, slc_line[p, s], la, slc_tag, slc_state, slc_ver, ver_latest, nodes)
                    if status != DONE:
                        glob[G_CHECK_FAIL] = p
                        return status
                elif slc_ver[p, s] != ver_latest[slc_line[p, s]]:
                    glob[G_CHECK_FAIL] = p
                    return STALE_READ
            clock += cpr
            stats[p, C_WORK] += cpr
            stats[p, C_REFERENCES] += 1
            f = la & flc_mask
            if o != STORE and flc_tag[p, f] != la:      # the write-through first level missed
                flc_tag[p, f] = la
                clock += SLC_READ
            cursor[p] = c + 1
            if clock > horizon:
                node[p, N_CLOCK] = clock
                _push(ev, heap, free, glob, K_PROC, clock, p, p, 0, -1, p, 0, 0, 0, 0, 0)
                return DONE
            continue
        # a miss or an upgrade: the processor stalls until its controller completes it
        x = _new_line(p, la, addr[p, c], first_touch, nodes, tab, lines, page_home, mark, glob)
        if x < 0:
            node[p, N_CLOCK] = clock
            _push(ev, heap, free, glob, K_PROC, clock, p, p, 0, -1, p, 0, 0, 0, 0, 0)
            return GROW
        if o == STORE:
            what = UPGRADE if hit else WRITE
            stats[p, C_UPGRADES if hit else C_WRITE_MISSES] += 1
        else:
            what = READ
            stats[p, C_READ_MISSES] += 1
            stats[p, C_REMOTE_READS if line_home[x] != p else C_LOCAL_READS] += 1
        stats[p, C_TRANSACTIONS] += 1
        clock += cpr
        stats[p, C_WORK] += cpr
        stats[p, C_REFERENCES] += 1
        cursor[p] = c + 1
        node[p, N_STATUS] = WAIT_MEM
        node[p, N_PKIND] = what
        node[p, N_PLINE] = x
        node[p, N_PSTART] = clock
        node[p, N_ACKS] = 0
        node[p, N_GOTDATA] = 0
        node[p, N_QACC] = 0
        node[p, N_CLOCK] = clock
        _push(ev, heap, free, glob, K_ISSUE, clock, p, p, x, p, p, what, 0, 0, 0, 0)
        return DONE


@jit
def _home(h, x, ask, r, what, flag, now, Q, node, stats, lines, caches, check, nodes, table):
    """Home ``h`` serialises ``ask``'s request ``what`` for line ``x`` (``flag`` 1: a
    proxy's fetch); returns the controller's occupancy, or a negative checking code."""
    ev, heap, free, glob = Q
    line_addr, line_home, line_marked, dir_state, dir_owner, dir_sharers, busy, epoch, ver_latest, ver_mem = lines
    slc_tag, slc_state, slc_line, slc_ver, flc_tag = caches
    home_action, home_next, owner_next, fill_state = table
    stats[h, C_HOME_REQUESTS] += 1
    if busy[x]:
        # a transaction is under way: negative acknowledgement, the asker retries; the
        # NACK carries the message kind to resend in WHAT and the request in EPOCH
        stats[ask, C_NACKS] += 1
        _send(ev, heap, free, glob, node, stats, K_NACK, now + DIRECTORY_ONLY + SEND, h, ask, x, r, ask,
              K_RD if what == READ else K_WR, flag, what, 0, 0, False)
        return DIRECTORY_ONLY + SEND
    la = line_addr[x]
    s = la & (slc_tag.shape[1] - 1)
    if what == UPGRADE and not (slc_tag[ask, s] == la and slc_state[ask, s] == S):
        what = WRITE                                  # the shared copy was lost meanwhile
    st = dir_state[x]
    owner = dir_owner[x]
    if what == READ and st == EXCLUSIVE and owner == ask:
        # a proxy fetching a line it has since come to own: its copy is written back
        # and shared, then served like any shared line [REC]
        if slc_tag[ask, s] == la and slc_state[ask, s] == M:
            slc_state[ask, s] = S
            if check:
                ver_mem[x] = slc_ver[ask, s]
        st = SHARED
        dir_state[x] = SHARED
        dir_owner[x] = -1
        owner = -1
        dir_sharers[x, ask >> 6] |= np.uint64(1) << np.uint64(ask & 63)
    act = home_action[st, what]
    if what != READ:
        epoch[x] += 1
    service = 0
    acks = 0
    if act & INVALIDATE:
        service += DIRECTORY_ONLY
        for q in range(nodes):
            if q != ask and _is_sharer(dir_sharers, x, q):
                _drop_copy(q, la, slc_tag, slc_state, flc_tag)
                acks += 1
                service += SEND
                stats[h, C_INVALIDATIONS] += 1
                _send(ev, heap, free, glob, node, stats, K_INV, now + service, h, q, x, r, ask, 0, 0, 0, 0, 0, False)
        dir_sharers[x, :] = np.uint64(0)
    if act & FORWARD and owner >= 0 and owner != ask:
        # the owner supplies; its copy changes now, the forward carries the time
        ver = ver_mem[x]
        if slc_tag[owner, s] == la and slc_state[owner, s] != I:
            if check:
                ver = slc_ver[owner, s]
            if owner_next[what] == I:
                _drop_copy(owner, la, slc_tag, slc_state, flc_tag)
            else:
                slc_state[owner, s] = owner_next[what]
        if check and ver != ver_latest[x]:
            glob[G_CHECK_FAIL] = owner
            return STALE_READ
        if owner_next[what] != I:
            dir_sharers[x, owner >> 6] |= np.uint64(1) << np.uint64(owner & 63)
            ver_mem[x] = ver                          # the sharing write-back
        busy[x] = ask + 1 + flag * nodes           # a proxy's fetch and its processor's own request differ
        service += DIRECTORY_ONLY + SEND
        _send(ev, heap, free, glob, node, stats, K_FWD, now + service, h, owner, x, r, ask, what, flag, epoch[x],
              ver, acks, False)
    elif act & (MEMORY | FORWARD):
        if check and ver_mem[x] != ver_latest[x]:
            glob[G_CHECK_FAIL] = ask
            return STALE_READ
        service += DRAM_READ
        if what != READ:
            busy[x] = ask + 1
        if ask == h:
            node[h, N_ACKS] += acks
            service += SLC_FILL
            status = _arrive_data(h, x, ver_mem[x], epoch[x], now + service, Q, node, stats, lines, caches, check,
                                  nodes, fill_state)
            if status != DONE:
                return status
        else:
            service += SEND
            _send(ev, heap, free, glob, node, stats, K_PDATA if flag else K_DATA, now + service, h, ask, x, r, ask,
                  what, flag, epoch[x], ver_mem[x], acks, True)
    else:
        # a grant without data: the upgrader's shared copy is current
        service += DIRECTORY_ONLY
        busy[x] = ask + 1
        if ask == h:
            node[h, N_ACKS] += acks
            status = _arrive_data(h, x, -1, epoch[x], now + service, Q, node, stats, lines, caches, check, nodes,
                                  fill_state)
            if status != DONE:
                return status
        else:
            service += SEND
            _send(ev, heap, free, glob, node, stats, K_DATA, now + service, h, ask, x, r, ask, what, 0, epoch[x], -1,
                  acks, False)
    nxt = home_next[st, what]
    dir_state[x] = nxt
    if nxt == EXCLUSIVE:
        dir_owner[x] = ask
    else:
        dir_owner[x] = -1
    return service


@jit
def run(op, addr, length, cursor, ended, nodes, buffer_limit, proxies, first_touch, check, init_at_barrier,
        mark, tab, lines, page_home, lock_holder, caches, Q, ring, pend_line, pend_head, node, stats, vis, demand,
        rvis, table):
    """Simulate until done or a processor's buffer is empty; see the module docstring."""
    ev, heap, free, glob = Q
    line_addr, line_home, line_marked, dir_state, dir_owner, dir_sharers, busy, epoch, ver_latest, ver_mem = lines
    slc_tag, slc_state, slc_line, slc_ver, flc_tag = caches
    fill_state = table[3]
    ring_mask = ring.shape[1] - 1
    while glob[G_HEAP_N] > 0:
        slot = _pop(ev, heap, glob)
        t = ev[slot, E_TIME]
        kind = ev[slot, E_KIND]
        n = ev[slot, E_DEST]
        src = ev[slot, E_SRC]
        if kind != K_PROC and src != n and ev[slot, E_ARRIVED] == 0:
            # LogP gap at the receiver: one message every GAP cycles
            arrive = max(t, node[n, N_RECV_FREE])
            node[n, N_RECV_FREE] = arrive + GAP
            if arrive > t:
                ev[slot, E_ARRIVED] = 1
                ev[slot, E_TIME] = arrive
                _reinsert(ev, heap, glob, slot)
                continue
        free[glob[G_FREE_N]] = slot
        glob[G_FREE_N] += 1
        if kind == K_PROC:
            status = _processor(n, t, op, addr, length, cursor, ended, Q, node, stats, lines, caches, tab, page_home,
                                lock_holder, mark, first_touch, check, nodes)
            if status == BARRIER_RELEASE:
                _release_barrier(Q, node, stats, nodes)
                if init_at_barrier and glob[G_INIT_DONE] == 0:
                    return INIT_END
                return PHASE_END
            elif status != DONE:
                return status
            continue
        x = ev[slot, E_LINE]
        r = ev[slot, E_REQ]
        ask = ev[slot, E_ASK]
        what = ev[slot, E_WHAT]
        flag = ev[slot, E_FLAG]
        network = src != n
        if network:
            while node[n, N_RING_N] > 0 and ring[n, node[n, N_RING_HEAD]] <= t:
                node[n, N_RING_HEAD] = (node[n, N_RING_HEAD] + 1) & ring_mask
                node[n, N_RING_N] -= 1
            if (kind == K_RD or kind == K_PRD) and 0 <= buffer_limit < node[n, N_RING_N]:
                # a read finding more than ``buffer`` messages waiting goes straight back
                if r >= 0:
                    stats[r, C_BOUNCES] += 1
                stats[n, C_MESSAGES] += 1
                _push(ev, heap, free, glob, K_BOUNCE, t + LATENCY_SHORT, ask, n, x, r, ask, kind, flag, 0, 0, 0)
                continue
        start = max(t, node[n, N_NC_FREE])
        if network:
            node[n, N_RING_N] += 1
            ring[n, (node[n, N_RING_HEAD] + node[n, N_RING_N] - 1) & ring_mask] = start
            stats[n, C_BUFFERED] += 1
            stats[n, C_QUEUE_CYCLES] += start - t
        waiting = r >= 0 and kind != K_WB and node[r, N_STATUS] == WAIT_MEM     # on the requester's path
        reading = waiting and node[r, N_PKIND] == READ
        if waiting:
            stats[r, C_TXN_QUEUE] += start - t
        if reading:
            node[r, N_QACC] += start - t
        now = start
        service = 0
        if kind == K_ISSUE:
            # the processor hands its miss to its own controller
            h = line_home[x]
            q = _proxy_of(x, n, h, nodes) if what == READ and h != n and proxies == BASIC and line_marked[x] else -1
            if q >= 0:
                service = SEND
                stats[n, C_PROXY_READS] += 1
                _send(ev, heap, free, glob, node, stats, K_PRD, now + service, n, q, x, n, n, READ, 0, 0, 0, 0, False)
            elif h == n:
                service = _home(n, x, n, n, what, 0, now, Q, node, stats, lines, caches, check, nodes, table)
            else:
                service = SEND
                _send(ev, heap, free, glob, node, stats, K_RD if what == READ else K_WR, now + service, n, h, x, n,
                      n, what, 0, 0, 0, 0, False)
        elif kind == K_RD or kind == K_WR:
            service = _home(n, x, ask, r, what, flag, now, Q, node, stats, lines, caches, check, nodes, table)
        elif kind == K_FWD:
            # the owner sends the line to the asker and, for a read, writes it back home
            service = SLC_READ + SEND
            _send(ev, heap, free, glob, node, stats, K_PDATA if flag else K_DATA, now + service, n, ask, x, r, ask,
                  what, flag, ev[slot, E_EPOCH], ev[slot, E_VER], ev[slot, E_ACKS], True)
            if what == READ:
                service += SEND
                _send(ev, heap, free, glob, node, stats, K_WB, now + service, n, line_home[x], x, r, n, 0, 0, 0, 0,
                      0, True)
        elif kind == K_INV:
            service = SLC_INVALIDATE + SEND
            _send(ev, heap, free, glob, node, stats, K_ACK, now + service, n, ask, x, r, ask, 0, 0, 0, 0, 0, False)
        elif kind == K_ACK:
            service = ACK_HANDLING
            node[n, N_ACKS] -= 1
            if node[n, N_GOTDATA] and node[n, N_ACKS] == 0 and node[n, N_STATUS] == WAIT_MEM:
                status = _finish(n, now + service, Q, node, stats, lines, caches, check, nodes)
                if status != DONE:
                    return status
        elif kind == K_WB:
            service = DRAM_READ
        elif kind == K_DATA:
            service = SLC_FILL
            node[n, N_ACKS] += ev[slot, E_ACKS]
            status = _arrive_data(n, x, ev[slot, E_VER], ev[slot, E_EPOCH], now + service, Q, node, stats, lines,
                                  caches, check, nodes, fill_state)
            if status != DONE:
                return status
        elif kind == K_PDATA:
            # the proxy's fetch is back: keep a copy, pass the line down the pending chain
            service = SLC_FILL
            k = _pending_slot(pend_line, n, x)
            head = -1
            if k >= 0:
                head = pend_head[n, k]
                pend_line[n, k] = -1
            # keep a copy, unless it would evict the line the proxy's own processor is
            # waiting on (a write collecting acknowledgements, an upgrade) [REC]
            sp = line_addr[x] & (slc_tag.shape[1] - 1)
            mine = node[n, N_STATUS] == WAIT_MEM and slc_tag[n, sp] == line_addr[node[n, N_PLINE]]
            if ev[slot, E_EPOCH] == epoch[x] and not mine:
                _install(n, x, S, ev[slot, E_VER], Q, node, stats, lines, caches, check, now + service)
                dir_sharers[x, n >> 6] |= np.uint64(1) << np.uint64(n & 63)
            if busy[x] == n + 1 + nodes:
                busy[x] = 0
            if head >= 0:
                service += SEND
                _send(ev, heap, free, glob, node, stats, K_CHAIN, now + service, n, head, x, head, head, READ, 0,
                      ev[slot, E_EPOCH], ev[slot, E_VER], 0, True)
        elif kind == K_CHAIN:
            # a client of a proxy gets the line and passes it on
            service = SLC_FILL
            nxt = node[n, N_CHAIN]
            status = _arrive_data(n, x, ev[slot, E_VER], ev[slot, E_EPOCH], now + service, Q, node, stats, lines,
                                  caches, check, nodes, fill_state)
            if status != DONE:
                return status
            if nxt >= 0:
                service += SEND
                _send(ev, heap, free, glob, node, stats, K_CHAIN, now + service, n, nxt, x, nxt, nxt, READ, 0,
                      ev[slot, E_EPOCH], ev[slot, E_VER], 0, True)
        elif kind == K_PRD:
            # at a proxy: supply from its SLC, join a pending fetch, or fetch from the home
            la = line_addr[x]
            s = la & (slc_tag.shape[1] - 1)
            client = ask
            upgrading = node[n, N_STATUS] == WAIT_MEM and node[n, N_PLINE] == x     # its copy is about to go
            if slc_tag[n, s] == la and slc_state[n, s] == S and not upgrading:
                if check and slc_ver[n, s] != ver_latest[x]:
                    glob[G_CHECK_FAIL] = n
                    return STALE_READ
                service = SLC_READ + SEND
                stats[n, C_PROXY_HITS] += 1
                node[client, N_CHAIN] = -1
                _send(ev, heap, free, glob, node, stats, K_CHAIN, now + service, n, client, x, client, client, READ,
                      0, epoch[x], slc_ver[n, s] if check else 0, 0, True)
            elif slc_tag[n, s] == la and slc_state[n, s] == M:
                # the proxy owns the line itself: the client's read goes on to the home
                service = SLC_LOOKUP + SEND
                _send(ev, heap, free, glob, node, stats, K_RD, now + service, n, line_home[x], x, client, client,
                      READ, 0, 0, 0, 0, False)
            else:
                k = _pending_slot(pend_line, n, x)
                service = SLC_LOOKUP
                if k >= 0:                            # combine: the client heads the chain
                    stats[n, C_COMBINED] += 1
                    node[client, N_CHAIN] = pend_head[n, k]
                    pend_head[n, k] = client
                else:
                    k = _pending_slot(pend_line, n, -1)
                    pend_line[n, k] = x
                    pend_head[n, k] = client
                    node[client, N_CHAIN] = -1
                    service += SEND
                    _send(ev, heap, free, glob, node, stats, K_RD, now + service, n, line_home[x], x, client, n,
                          READ, 1, 0, 0, 0, False)
        elif kind == K_BOUNCE or kind == K_NACK:
            # the request comes back and is sent again; with reactive proxies a read that
            # bounced off a full buffer goes via its proxy instead (Talbot & Kelly §1.3)
            service = SEND
            h = line_home[x]
            q = _proxy_of(x, n, h, nodes) if kind == K_BOUNCE and proxies == REACTIVE and flag == 0 else -1
            if kind == K_BOUNCE and what == K_PRD:
                _send(ev, heap, free, glob, node, stats, K_RD, now + service, n, h, x, r, n, READ, 0, 0, 0, 0, False)
            elif q >= 0:
                stats[n, C_PROXY_READS] += 1
                _send(ev, heap, free, glob, node, stats, K_PRD, now + service, n, q, x, n, n, READ, 0, 0, 0, 0, False)
            elif kind == K_BOUNCE:
                _send(ev, heap, free, glob, node, stats, K_RD, now + service, n, h, x, r, n, READ, flag, 0, 0, 0,
                      False)
            else:       # a NACK: resend its kind (WHAT) with its request (EPOCH), see _home
                _send(ev, heap, free, glob, node, stats, what, now + service, n, h, x, r, n, ev[slot, E_EPOCH], flag,
                      0, 0, 0, False)
        if service < 0:
            return service
        node[n, N_NC_FREE] = start + service
        stats[n, C_NC_BUSY] += service
        if r >= 0:
            vis[r, n] += 1
            demand[r, n] += service
            if reading:
                rvis[r, n] += 1
    for p in range(nodes):
        if node[p, N_STATUS] != FINISHED:
            return DEADLOCK
    return DONE


@jit
def keep_entries(tab_tag, tab_key, tab_val, new_tag, new_key, new_val, keep_pages):
    """Copy the locks (and, with ``keep_pages``, the page homes) of a table into an
    empty one: the line entries go when the initialisation phase ends."""
    for i in range(tab_val.shape[0]):
        if tab_val[i] >= 0 and (tab_tag[i] == 2 or (keep_pages and tab_tag[i] == 1)):
            j = _lookup(new_tag, new_key, new_val, tab_tag[i], tab_key[i])
            new_tag[j] = tab_tag[i]
            new_key[j] = tab_key[i]
            new_val[j] = tab_val[i]
