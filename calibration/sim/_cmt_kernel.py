"""Compiled kernels of the chip-multithreading machine (private to :mod:`calibration.sim.cmt`).

:func:`data_stream` turns a thread's raw references into its data-block stream with
instruction gaps; :func:`run_slice` runs the cores cycle by cycle for one time slice.
"""
from __future__ import annotations

import numpy as np

from mva.jit import jit

from ._blockmap_kernel import block_range
from .traces import IFETCH, STORE

# per-thread counters (columns of ``counts``)
INSTR, L1_ACC, L1_MISS, L2_MISS, MEM_WAIT, SCHEDULED, PASSES, MEM_INSTR = range(8)
N_COUNTS = 8


@jit
def data_stream(op, addr, size, log_block, has_ifetch, gap, vblock, state):
    """Append the data references of one chunk to ``gap``/``vblock`` (from ``state[0]``).

    ``gap`` of a reference: the instructions from the previous data instruction to this
    one, counting this one (>= 1), or 0 when it belongs to the same instruction (a
    second access of one instruction, or the next block of an access spanning blocks).
    Without instruction fetches in the trace every access is its own instruction.
    ``state`` = [references written, instruction fetches since the last data access].
    Returns raw references consumed (stops when the output is full).
    """
    out = state[0]
    cap = gap.shape[0]
    for i in range(op.shape[0]):
        if op[i] == IFETCH:
            state[1] += 1
            continue
        if op[i] > STORE:           # synchronisation marker
            continue
        first, last = block_range(addr[i], size[i], log_block)
        if out + np.int64(last - first) + 1 > cap:
            state[0] = out
            return i
        g = state[1] if has_ifetch else 1
        if out == 0 and g == 0:
            g = 1
        state[1] = 0
        vb = first
        while vb <= last:
            gap[out] = g
            vblock[out] = vb
            g = 0
            out += 1
            vb += np.uint64(1)
    state[0] = out
    return op.shape[0]


@jit(inline=True)
def _touch(tags, stamps, base, ways, block, clock):
    """Look ``block`` up in the set whose ways start at ``base``; on a miss install it in
    the LRU way.  Returns True on a hit."""
    victim = base
    for w in range(base, base + ways):
        if tags[w] == block:
            stamps[w] = clock
            return True
        if stamps[w] < stamps[victim]:
            victim = w
    tags[victim] = block
    stamps[victim] = clock
    return False


@jit
def run_slice(until, ctx_thread, gap, block, start, length, pos, pending, ready, counts, core_instr, l1_tags, l1_stamps,
              l1_sets, l1_ways, l2_tags, l2_stamps, l2_sets, l2_ways, latency, line_cycles, last_ctx, state):
    """Run every core until cycle ``until`` with the threads of ``ctx_thread`` (cores x
    contexts, -1 idle).  ``latency`` = [L1 hit, L2 hit, memory] cycles; ``state`` =
    [now, memory channel free at, LRU clock].

    Fine-grained multithreading (Laudon, Gupta & Horowitz, ASPLOS 1994): each cycle a
    core issues one instruction from the next ready context after the one that issued
    last.  A non-memory instruction makes its thread ready the next cycle; a memory
    instruction after the longest latency of its accesses: the L1 hit latency, the L2
    hit latency on an L1 miss, or on an L2 miss the L2 latency plus the wait for the
    memory channel plus the memory latency (the channel is held ``line_cycles`` per
    line, FCFS).  Caches are LRU, allocate on every miss, and are updated at issue.
    """
    cores, contexts = ctx_thread.shape
    now = state[0]
    while now < until:
        issued = False
        soonest = until
        for c in range(cores):
            for step in range(1, contexts + 1):
                ctx = (last_ctx[c] + step) % contexts
                t = ctx_thread[c, ctx]
                if t < 0:
                    continue
                if ready[t] > now:
                    if ready[t] < soonest:
                        soonest = ready[t]
                    continue
                last_ctx[c] = ctx
                issued = True
                counts[t, INSTR] += 1
                core_instr[c] += 1
                if pending[t] > 1:
                    pending[t] -= 1
                    ready[t] = now + 1
                    break
                wait = 1
                counts[t, MEM_INSTR] += 1
                while True:
                    j = start[t] + pos[t]
                    b = block[j]
                    counts[t, L1_ACC] += 1
                    state[2] += 1
                    lat = latency[0]
                    if not _touch(l1_tags, l1_stamps, (c * l1_sets + b % l1_sets) * l1_ways, l1_ways, b, state[2]):
                        counts[t, L1_MISS] += 1
                        lat = latency[1]
                        if not _touch(l2_tags, l2_stamps, (b % l2_sets) * l2_ways, l2_ways, b, state[2]):
                            counts[t, L2_MISS] += 1
                            begin = max(now + latency[1], state[1])
                            counts[t, MEM_WAIT] += begin - (now + latency[1])
                            state[1] = begin + line_cycles
                            lat = begin + latency[2] - now
                    if lat > wait:
                        wait = lat
                    pos[t] += 1
                    if pos[t] == length[t]:
                        pos[t] = 0
                        counts[t, PASSES] += 1
                    g = gap[start[t] + pos[t]]
                    if g != 0:
                        pending[t] = g
                        break
                ready[t] = now + wait
                break
        if issued:
            now += 1
        else:
            now = max(now + 1, soonest)
    state[0] = now


@jit
def l1_miss_mask(block, sets, ways, miss):
    """Run one thread's block stream ``block`` through an LRU cache of ``sets`` x ``ways``
    (set = block mod sets, as :func:`run_slice` places it) twice, the stream looped, and
    set ``miss[i]`` when reference i misses in the second pass: the steady-state stream
    a cache behind this one sees.  Returns the second pass's misses."""
    tags = np.full(sets * ways, -1, np.int64)
    stamps = np.zeros(sets * ways, np.int64)
    clock = 0
    n = block.shape[0]
    count = 0
    for sweep in range(2):
        for i in range(n):
            clock += 1
            b = block[i]
            hit = _touch(tags, stamps, (b % sets) * ways, ways, b, clock)
            if sweep == 1:
                miss[i] = not hit
                if not hit:
                    count += 1
    return count
