"""Dense block ids for a workload's references (shared by the simulator and the trace
statistics).

Every (process or shared range, virtual block) gets a dense id the first time it is
seen, so per-block state lives in flat arrays.  Private addresses are keyed by process,
addresses in a process's shared ranges by range, so sharers meet on one block and
copy-on-write look-alikes (the same virtual address in two processes, outside any shared
range) stay apart.  Physical pages: a seeded scatter of first-touch order (Foglia et al. 2004, §4:
sequential virtual pages on non-sequential physical pages) or the identity.
"""
from __future__ import annotations

import math

import numpy as np

from . import _blockmap_kernel as K
from .traces import Chunk
from .workload import Workload

__all__ = ["BlockMap"]


class BlockMap:
    """Map chunks of process references to (block id, packed info) for one geometry.

    Per-block attributes (arrays indexed by block id, valid up to :attr:`count`):
    ``set_of`` (cache set), ``owner`` (process id for private blocks, -1 shared),
    ``is_kernel`` and ``is_code`` (1 if any reference said so).  ``on_grow(capacity)``
    is called whenever the per-block capacity grows, so users can grow their own arrays.
    """

    def __init__(self, workload: Workload, block: int, word: int = 4, sets: int = 1, pages: str = "random",
                 seed: int = 1, data_only: bool = False, on_grow=None):
        self.log_block = int(math.log2(block))
        self.log_word = int(math.log2(word))
        self.sets = sets
        self.identity = pages == "identity"
        self.data_only = data_only
        self.page_seed = np.uint64((seed * 0xD1B54A32D192ED03) & 0xFFFFFFFFFFFFFFFF)
        self.ranges = [workload.ranges_for(pid) for pid in range(len(workload.processes))]
        self.kernel_ranges = [workload.kernel_ranges_for(pid) for pid in range(len(workload.processes))]
        self.counts = np.zeros(2, dtype=np.int64)          # blocks, pages
        self.tables = {t: self._table(1 << 20) for t in ("block", "page")}
        self.capacity = 0
        self.attrs = {}
        self.on_grow = on_grow

    @staticmethod
    def _table(size):
        return np.zeros(size, np.int64), np.zeros(size, np.uint64), np.full(size, -1, np.int32)

    @property
    def count(self) -> int:
        return int(self.counts[0])

    def reserve(self, need: int):
        """Room for ``need`` blocks in the attributes and the hash tables."""
        if need > self.capacity:
            cap = max(need, 2 * self.capacity, 1 << 14)
            for name, dtype, fill in (("set_of", np.int32, 0), ("owner", np.int32, -1), ("is_kernel", np.uint8, 0),
                                      ("is_code", np.uint8, 0)):
                new = np.full(cap, fill, dtype=dtype)
                old = self.attrs.get(name)
                if old is not None:
                    new[: old.shape[0]] = old
                self.attrs[name] = new
            self.capacity = cap
            if self.on_grow is not None:
                self.on_grow(cap)
        for t in ("block", "page"):
            tag, key, val = self.tables[t]
            if 2 * need > val.shape[0]:
                new = self._table(1 << int(math.ceil(math.log2(4 * need))))
                K.rehash(tag, key, val, *new)
                self.tables[t] = new

    def map(self, pid: int, chunk: Chunk, out_block: np.ndarray, out_info: np.ndarray):
        """Write the block references of ``chunk`` into ``out_block``/``out_info``;
        returns (raw references consumed, block references written)."""
        # at most this many new blocks: every reference spanning its largest possible extent
        span = 1 + (int(chunk.size.max(initial=1)) + (1 << self.log_block) - 2 >> self.log_block)
        self.reserve(self.count + len(chunk) * span + 1)
        kernel = chunk.kernel
        for lo, hi in self.kernel_ranges[pid]:
            kernel = kernel | ((chunk.addr >= np.uint64(lo)) & (chunk.addr < np.uint64(hi)))
        start, end, tag = self.ranges[pid]
        a = self.attrs
        return K.map_chunk(chunk.op, chunk.addr, chunk.size, kernel, pid, start, end, tag, *self.tables["block"],
                           *self.tables["page"], self.counts, a["set_of"], a["owner"], a["is_kernel"], a["is_code"],
                           self.log_block, self.log_word, self.sets, self.page_seed, self.identity, self.data_only,
                           out_block, out_info)
