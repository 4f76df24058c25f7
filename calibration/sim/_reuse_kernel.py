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
and clears the watch.  Watches live in a linear-probing table with backward-shift
deletion.

Reuse (time) distances are binned in :data:`TIME_BINS` bins: exact below 16, then 8
bins per octave (:func:`time_bin`).
"""
from __future__ import annotations

import numpy as np

from mva.jit import jit

from ._rng import mix64
from .traces import IFETCH

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
    low = bits[w] & ((np.uint64(2) << np.uint64(p & 63)) - np.uint64(1)) if (p & 63) < 63 else bits[w]
    return s + _popcount(low)


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
def compact(tree, bits, id_at, per_block, state):
    """Renumber the live positions 0..D-1 in time order and rebuild the marks in O(W)."""
    top = state[1]
    j = 0
    for k in range(top):
        if bits[k >> 6] & (np.uint64(1) << np.uint64(k & 63)):
            b = id_at[k]
            id_at[j] = b
            per_block[b, 0] = j
            j += 1
    bits[:] = 0
    for w in range(j >> 6):
        bits[w] = np.uint64(0xFFFFFFFFFFFFFFFF)
    if j & 63:
        bits[j >> 6] = (np.uint64(1) << np.uint64(j & 63)) - np.uint64(1)
    n = tree.shape[0] - 1
    tree[:] = 0
    for w in range(n):          # marks per word, then the linear-time Fenwick construction
        tree[w + 1] = _popcount(bits[w])
    for i in range(1, n + 1):
        q = i + (i & -i)
        if q <= n:
            tree[q] += tree[i]
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
        if data_only and op[i] == IFETCH:
            continue
        s = np.uint64(max(np.int64(size[i]), 1))
        first = addr[i] >> np.uint64(log_block)
        last = (addr[i] + s - np.uint64(1)) >> np.uint64(log_block)
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
def _watch_slot(keys, block):
    mask = np.uint64(keys.shape[0] - 1)
    return np.int64((block * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32) & mask)


@jit
def sampled_pass(op, addr, size, log_block, data_only, rate, seed, keys, start, time_counts, state):
    """StatCache sampling of ``op/addr/size``; returns raw references consumed.

    ``keys`` holds watched block + 1 (0 empty) and ``start`` the reference index of the
    watch; ``state`` = [block references t, next sampled reference, watches, samples
    drawn, samples resolved].  Stops early when the watch table passes a quarter full.
    """
    n_keys = keys.shape[0]
    mask = np.uint64(n_keys - 1)
    for i in range(op.shape[0]):
        if data_only and op[i] == IFETCH:
            continue
        if 4 * (state[2] + 1) > n_keys:
            return i
        s = np.uint64(max(np.int64(size[i]), 1))
        first = addr[i] >> np.uint64(log_block)
        last = (addr[i] + s - np.uint64(1)) >> np.uint64(log_block)
        vb = first
        while vb <= last:
            t = state[0]
            key = vb + np.uint64(1)
            h = _watch_slot(keys, vb)
            while keys[h] != 0 and keys[h] != key:
                h = np.int64((np.uint64(h) + np.uint64(1)) & mask)
            if keys[h] == key:
                time_counts[time_bin(t - start[h])] += 1
                state[4] += 1
                state[2] -= 1
                # backward-shift deletion keeps every probe chain unbroken
                hole = h
                j = h
                while True:
                    j = np.int64((np.uint64(j) + np.uint64(1)) & mask)
                    if keys[j] == 0:
                        break
                    home = _watch_slot(keys, keys[j] - np.uint64(1))
                    if (j > hole and (home <= hole or home > j)) or (j < hole and (home <= hole and home > j)):
                        keys[hole] = keys[j]
                        start[hole] = start[j]
                        hole = j
                keys[hole] = 0
                h = _watch_slot(keys, vb)
                while keys[h] != 0:
                    h = np.int64((np.uint64(h) + np.uint64(1)) & mask)
            if t == state[1]:
                if keys[h] == 0:          # a block already watched keeps its older watch
                    keys[h] = key
                    start[h] = t
                    state[2] += 1
                state[3] += 1
                u = (np.float64(mix64(np.uint64(seed) ^ mix64(np.uint64(state[3])))) + 0.5) / 18446744073709551616.0
                state[1] = t + 1 + np.int64(np.floor(np.log(u) / np.log1p(-rate))) if rate < 1.0 else t + 1
            state[0] = t + 1
            vb += np.uint64(1)
    return op.shape[0]


@jit
def rehash_watches(keys, start, new_keys, new_start):
    """Move every watch into a larger empty table."""
    mask = np.uint64(new_keys.shape[0] - 1)
    for i in range(keys.shape[0]):
        if keys[i] != 0:
            h = _watch_slot(new_keys, keys[i] - np.uint64(1))
            while new_keys[h] != 0:
                h = np.int64((np.uint64(h) + np.uint64(1)) & mask)
            new_keys[h] = keys[i]
            new_start[h] = start[i]
