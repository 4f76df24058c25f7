"""Compiled kernels of the reuse-distance pass (private to :mod:`calibration.sim.reuse`).

Both kernels read raw references (op, byte address, size) and split an access that
spans blocks into one reference per block, as the simulator's block map does.

:func:`exact_pass` computes every reference's LRU stack distance (Mattson, Gecsei, Slutz
& Traiger, "Evaluation techniques for storage hierarchies", IBM Systems Journal 9(2),
1970) with a Fenwick tree over time (Bennett & Kruskal, "LRU stack processing", IBM J.
R&D 19(4), 1975, in the binary-indexed form of Fenwick, Software P&E 24(3), 1994): each
block holds one mark at the position of its latest reference, and the stack distance of
a re-reference is the number of marks after the block's previous position, an
O(log W) prefix sum.  Marks are bits, 64 to a word, and the tree counts marks per word,
so it is 64 times smaller than the positions and stays in cache.  Positions are renumbered (compacted) when they run out, so the
tree has W = O(distinct blocks) entries and memory does not grow with trace length.

:func:`sampled_pass` is StatCache's sampler (Berg & Hagersten, "StatCache: a
probabilistic approach to efficient and accurate data locality analysis", ISPASS 2004):
references picked at random (geometric gaps of mean 1/rate) set a watchpoint on their
block; the next reference to a watched block records the reuse distance in references
and clears the watch.  Watches live in the same linear-probing table layout as the
exact pass's blocks, with backward-shift deletion.

Reuse (time) distances are binned in :data:`TIME_BINS` bins: exact below 16, then 8
bins per octave (:func:`time_bin`).
"""
from __future__ import annotations

import numpy as np

from mva.jit import jit

from ._blockmap_kernel import block_range
from ._rng import mix64, next_random
from .traces import IFETCH, STORE

EXACT_SMALL = 16
PER_OCTAVE = 8
TIME_BINS = EXACT_SMALL + (64 - 4) * PER_OCTAVE


@jit(inline=True)
def time_bin(r):
    """Bin of a reuse distance ``r`` >= 1 (references): r itself below 16, then eight
    bins per octave."""
    if r < EXACT_SMALL:
        return r
    e = _floor_log2(np.uint64(r))
    return EXACT_SMALL + (e - 4) * PER_OCTAVE + np.int64((np.uint64(r) >> np.uint64(e - 3)) & np.uint64(7))


@jit(inline=True)
def _floor_log2(x):
    """floor(log2 x) of a uint64 x > 0, by binary search (six steps)."""
    e = 0
    for shift in (32, 16, 8, 4, 2, 1):
        if x >> np.uint64(shift):
            x = x >> np.uint64(shift)
            e += shift
    return e


def time_bin_edges() -> np.ndarray:
    """Lower edge (references) of every time bin, and the upper edge of the last: an
    array of TIME_BINS + 1 values (bin k holds distances in [edges[k], edges[k+1]))."""
    edges = list(range(EXACT_SMALL))
    for e in range(4, 64):
        for s in range(PER_OCTAVE):
            edges.append((8 + s) << (e - 3))
    edges.append(1 << 64)
    return np.array(edges, dtype=float)


@jit(inline=True)
def _popcount(x):
    """Set bits of a uint64 (SWAR)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@jit(inline=True)
def _marks_through(tree, bits, p):
    """Marks at positions 0..p: the Fenwick sum of the 64-position words before p's word
    plus the bits of its own word up to p."""
    w = p >> 6
    s = 0
    i = w
    while i > 0:
        s += tree[i]
        i -= i & -i
    # bits 0..p&63 of the word (for p&63 = 63, 2 << 63 wraps to 0 and the mask is all ones)
    return s + _popcount(bits[w] & ((np.uint64(2) << np.uint64(p & 63)) - np.uint64(1)))


@jit(inline=True)
def _mark(tree, bits, p, delta):
    """Set (delta 1) or clear (-1) the mark at p; the tree counts marks per word."""
    w = p >> 6
    if delta > 0:
        bits[w] |= np.uint64(1) << np.uint64(p & 63)
    else:
        bits[w] &= ~(np.uint64(1) << np.uint64(p & 63))
    i = w + 1
    n = tree.shape[0] - 1
    while i <= n:
        tree[i] += delta
        i += i & -i


@jit(inline=True)
def _find(table, key):
    """Row of ``key`` (a block number + 1) in an open-addressing table of (key, dense id)
    rows, or of the empty row (key 0) where it would go: one cache line per probe."""
    mask = np.uint64(table.shape[0] - 1)
    h = mix64(np.uint64(key)) & mask
    while True:
        i = np.int64(h)
        k = table[i, 0]
        if k == key or k == 0:
            return i
        h = (h + np.uint64(1)) & mask


@jit
def rehash(table, new_table):
    """Move every row of a full table into a larger empty one."""
    for i in range(table.shape[0]):
        if table[i, 0] != 0:
            j = _find(new_table, table[i, 0])
            new_table[j, 0] = table[i, 0]
            new_table[j, 1] = table[i, 1]


@jit
def rebuild(tree, bits, live):
    """Marks at positions 0..live-1 only, and the tree over them, in O(W)."""
    bits[:] = 0
    for w in range(live >> 6):
        bits[w] = np.uint64(0xFFFFFFFFFFFFFFFF)
    if live & 63:
        bits[live >> 6] = (np.uint64(1) << np.uint64(live & 63)) - np.uint64(1)
    n = tree.shape[0] - 1
    tree[:] = 0
    for w in range(n):          # marks per word, then the linear-time Fenwick construction
        tree[w + 1] = _popcount(bits[w])
    for i in range(1, n + 1):
        q = i + (i & -i)
        if q <= n:
            tree[q] += tree[i]


@jit
def compact(tree, bits, id_at, per_block, state):
    """Renumber the live positions 0..D-1 in time order and rebuild the marks."""
    j = 0
    for k in range(state[1]):
        if bits[k >> 6] & (np.uint64(1) << np.uint64(k & 63)):
            b = id_at[k]
            id_at[j] = b
            per_block[b, 0] = j
            j += 1
    rebuild(tree, bits, j)
    state[1] = j


@jit
def exact_pass(op, addr, size, log_block, data_only, table, per_block, tree, bits, id_at, stack_counts, time_counts,
               state):
    """Stack and reuse distances of ``op/addr/size``; returns raw references consumed.

    Marks are bits of ``bits`` (64 positions a word) and ``tree`` is a Fenwick tree of
    marks per word, so the tree is 64 times smaller than the positions and stays in
    cache.  ``state`` = [distinct blocks D, next position, block references t, cold
    references]; ``per_block[b]`` = (position, time of the latest reference).  Stops
    early (the driver grows the arrays and calls again) when the hash table would pass
    half full or the per-block arrays are full; compacts positions itself while D stays
    at most half of them.
    """
    cap_blocks = per_block.shape[0]
    half_table = table.shape[0] // 2
    width = id_at.shape[0]
    for i in range(op.shape[0]):
        if (data_only and op[i] == IFETCH) or op[i] > STORE:
            continue
        first, last = block_range(addr[i], size[i], log_block)
        span = np.int64(last - first) + 1
        if state[0] + span > min(half_table, cap_blocks) or 2 * (state[0] + span) > width:
            return i
        vb = first
        while vb <= last:
            key = np.int64(vb) + 1
            row = _find(table, key)
            t = state[2]
            if table[row, 0] == 0:
                b = state[0]
                state[0] += 1
                table[row, 0] = key
                table[row, 1] = b
                state[3] += 1
            else:
                b = table[row, 1]
                p = per_block[b, 0]
                stack_counts[state[0] - _marks_through(tree, bits, p)] += 1
                time_counts[time_bin(t - per_block[b, 1])] += 1
                _mark(tree, bits, p, -1)
            if state[1] == width:
                compact(tree, bits, id_at, per_block, state)
            p = state[1]
            per_block[b, 0] = p
            per_block[b, 1] = t
            id_at[p] = b
            _mark(tree, bits, p, 1)
            state[1] = p + 1
            state[2] = t + 1
            vb += np.uint64(1)
    return op.shape[0]


@jit(inline=True)
def sample_gap(rng, rate):
    """References to skip before the next sample: geometric with mean 1/rate - 1 (0 at rate 1)."""
    if rate >= 1.0:
        return 0
    u = (np.float64(next_random(rng) >> np.uint64(11)) + 0.5) / 9007199254740992.0     # 53 bits, in (0, 1)
    return np.int64(np.floor(np.log(u) / np.log1p(-rate)))


@jit
def first_sample(rng, rate):
    """Index of the first sampled reference."""
    return sample_gap(rng, rate)


@jit(inline=True)
def _unwatch(table, row):
    """Empty ``row`` of a linear-probing table by backward-shift deletion, which keeps
    every probe chain unbroken (no tombstones)."""
    mask = np.uint64(table.shape[0] - 1)
    hole = row
    j = row
    while True:
        j = np.int64((np.uint64(j) + np.uint64(1)) & mask)
        if table[j, 0] == 0:
            break
        home = np.int64(mix64(np.uint64(table[j, 0])) & mask)
        if (j > hole and (home <= hole or home > j)) or (j < hole and (home <= hole and home > j)):
            table[hole, 0] = table[j, 0]
            table[hole, 1] = table[j, 1]
            hole = j
    table[hole, 0] = 0


@jit
def sampled_pass(op, addr, size, log_block, data_only, rate, rng, watches, time_counts, state):
    """StatCache sampling of ``op/addr/size``; returns raw references consumed.

    ``watches`` rows are (watched block + 1, reference index of the watch), key 0 empty,
    in the table layout of :func:`_find`; ``state`` = [block references t, next sampled
    reference, watches, samples drawn, samples resolved].  Stops early when the watch
    table passes a quarter full.
    """
    for i in range(op.shape[0]):
        if (data_only and op[i] == IFETCH) or op[i] > STORE:
            continue
        if 4 * (state[2] + 1) > watches.shape[0]:
            return i
        first, last = block_range(addr[i], size[i], log_block)
        vb = first
        while vb <= last:
            t = state[0]
            key = np.int64(vb) + 1
            row = _find(watches, key)
            if watches[row, 0] == key:
                time_counts[time_bin(t - watches[row, 1])] += 1
                state[4] += 1
                state[2] -= 1
                _unwatch(watches, row)
                row = _find(watches, key)
            if t == state[1]:
                if watches[row, 0] == 0:          # a block already watched keeps its older watch
                    watches[row, 0] = key
                    watches[row, 1] = t
                    state[2] += 1
                state[3] += 1
                state[1] = t + 1 + sample_gap(rng, rate)
            state[0] = t + 1
            vb += np.uint64(1)
    return op.shape[0]
