"""Compiled kernels of the block map (private to :mod:`calibration.sim`).

:func:`map_chunk` turns raw references of one process (op, byte address, size, kernel
flag) into dense block ids and packed per-reference info, doing the virtual-to-physical
translation (sequential virtual pages to scattered physical pages; declared shared
ranges map to the same physical pages in every process) and splitting an access that
spans blocks into one reference per block (as Dinero IV counts).  Every machine's
kernel reads the packed info below.

Packed reference info (uint16): bits 0-1 access (0 instruction fetch, 1 load, 2 store),
bits 2-7 first word in the block, bits 8-13 number of words minus one.
"""
from __future__ import annotations

import numpy as np

from mva.jit import jit

from ._rng import mix64
from .traces import IFETCH, STORE

MEMO = 16384


@jit
def _lookup(tab_tag, tab_key, tab_val, tag, key):
    """Slot of (tag, key) in an open-addressing table (value -1 marks an empty slot)."""
    mask = np.uint64(tab_val.shape[0] - 1)
    h = mix64(key ^ (np.uint64(tag) * np.uint64(0x9E3779B97F4A7C15))) & mask
    while True:
        i = np.int64(h)
        if tab_val[i] < 0 or (tab_tag[i] == tag and tab_key[i] == key):
            return i
        h = (h + np.uint64(1)) & mask


@jit(inline=True)
def block_range(addr, size, log_block):
    """First and last block an access of ``size`` bytes (0 counts as 1) at ``addr``
    touches: an access spanning blocks is one reference to each (as Dinero IV counts)."""
    last_byte = addr + np.uint64(max(np.int64(size), 1)) - np.uint64(1)
    return addr >> np.uint64(log_block), last_byte >> np.uint64(log_block)


@jit
def rehash(tab_tag, tab_key, tab_val, new_tag, new_key, new_val):
    """Move every entry of a full table into a larger empty one."""
    for i in range(tab_val.shape[0]):
        if tab_val[i] >= 0:
            j = _lookup(new_tag, new_key, new_val, tab_tag[i], tab_key[i])
            new_tag[j] = tab_tag[i]
            new_key[j] = tab_key[i]
            new_val[j] = tab_val[i]


@jit
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
    non-sequential physical pages, Foglia et al. 2004, §4); with ``identity_pages`` physical = virtual
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
        if (data_only and a == IFETCH) or a > STORE:     # synchronisation markers are not references
            continue
        base = addr[i]
        last_byte = base + np.uint64(max(np.int64(size[i]), 1)) - np.uint64(1)
        first_blk, last_blk = block_range(base, size[i], log_block)
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
                    ppage = mix64(np.uint64(pg_val[ps]) ^ np.uint64(page_seed)) & np.uint64(0xFFFFFFFF)
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
