"""Reuse distances and LRU stack distances of a trace, in one streamed pass.

:func:`reuse_profile` reads a trace (or any stream of :class:`~calibration.sim.traces.Chunk`)
and returns a :class:`ReuseProfile`:

* exact (the default): every block reference's LRU stack distance (distinct blocks
  referenced since the block's previous reference; Mattson et al. 1970) and reuse
  distance (references since then), in O(n log D) time and O(D) memory for n references
  to D distinct blocks (:mod:`~calibration.sim._reuse_kernel`).  The stack distances
  give the misses of a fully-associative LRU cache of every size from the one pass:
  ``cold + #{d >= C}`` for C blocks.
* sampled (``sample=rate``): StatCache's watchpoint sampling (Berg & Hagersten, ISPASS
  2004): about ``rate x n`` references have their reuse distance measured; references
  whose block is not used again before the end are *dangling* (they estimate the cold
  misses).  Cache models turn the distribution into miss ratios
  (:mod:`calibration.missratio`).

An access spanning blocks is one reference to each block, as in the simulator.  Reuse
distances count block references (the paper's "time measured in memory references",
Fedorova, Seltzer, Small & Nussbaum, "Throughput-oriented scheduling on chip
multithreading systems", Harvard TR-17-04, 2004, §6.2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Iterable

import numpy as np

from mva.errors import ModelError

from . import _reuse_kernel as K
from .traces import IFETCH, Chunk, read_trace

__all__ = ["ReuseProfile", "reuse_profile", "TIME_BIN_EDGES"]

TIME_BIN_EDGES = K.time_bin_edges()


@dataclass(frozen=True)
class ReuseProfile:
    """The reuse behaviour of one reference stream.

    ``references``: block references seen; ``instructions``: instruction fetches in the
    trace (0 if it has none); ``accesses``: data accesses (before splitting into
    blocks); ``block``: bytes.  Exact profiles (``sample_rate`` None)
    have ``cold`` first references, ``distinct`` blocks and ``stack_counts[d]``, the
    re-references at stack distance d.  Sampled profiles have ``samples`` drawn and
    ``dangling`` samples never re-referenced.  Both have ``time_counts``: reuse
    distances binned on :data:`TIME_BIN_EDGES` (all re-references when exact, the
    resolved samples when sampled).
    """

    references: int
    block: int
    time_counts: np.ndarray = field(repr=False)
    instructions: int = 0
    accesses: int = 0
    sample_rate: float | None = None
    cold: int = 0
    distinct: int = 0
    stack_counts: np.ndarray | None = field(default=None, repr=False)
    samples: int = 0
    dangling: int = 0
    name: str = ""

    @property
    def exact(self) -> bool:
        return self.sample_rate is None

    @property
    def references_per_instruction(self) -> float:
        """Block references per instruction; without instruction fetches in the trace
        every data access is its own instruction (as the CMT machine counts)."""
        return self.references / max(self.instructions or self.accesses, 1)

    @property
    def memory_instructions_per_instruction(self) -> float:
        """Data accesses per instruction, at most 1 (an instruction with two accesses,
        lackey's M, counts once); 1 without instruction fetches."""
        return min(self.accesses / self.instructions, 1.0) if self.instructions else 1.0

    def lru_misses(self, cache_bytes: int) -> int:
        """Misses of a fully-associative LRU cache of ``cache_bytes`` (exact profiles):
        cold misses plus re-references at stack distance >= the cache's blocks."""
        if not self.exact:
            raise ModelError("sample", "exact LRU misses need an exact profile; use calibration.missratio."
                                       "statstack_miss_ratio for a sampled one")
        lines = cache_bytes // self.block
        return int(self.cold + self.stack_counts[lines:].sum())

    def reuse_distribution(self):
        """(distance, weight, cold): representative reuse distance of every non-empty
        time bin (references; the bin's mean for the exact bins below 16, its geometric
        middle above), the fraction of references in it, and the fraction with no
        previous (exact) or next (sampled) reference."""
        counts = self.time_counts.astype(float)
        total = self.references if self.exact else self.samples
        cold = self.cold if self.exact else self.dangling
        if total <= 0:
            return np.zeros(0), np.zeros(0), 1.0
        lo, hi = TIME_BIN_EDGES[:-1], TIME_BIN_EDGES[1:]
        middle = np.where(hi - lo <= 1, lo, np.sqrt(lo * np.maximum(hi - 1, lo)))
        keep = counts > 0
        return middle[keep], counts[keep] / total, cold / total

    def histogram(self, buckets: int = 20) -> dict:
        """At most ``buckets`` buckets with power-of-two edges: stack distances when exact
        (blocks), reuse distances when sampled (references, counts scaled by 1/rate);
        ``edges[k]`` is bucket k's lower edge, the last bucket is open-ended."""
        if self.exact:
            counts, unit = self.stack_counts.astype(float), "stack distance (blocks)"
            lower = np.arange(counts.shape[0], dtype=float)
        else:
            counts, unit = self.time_counts / self.sample_rate, "reuse distance (references)"
            lower = TIME_BIN_EDGES[:-1]
        edges = [0] + [1 << k for k in range(buckets - 1)]
        out = np.zeros(buckets)
        idx = np.searchsorted(np.array(edges, dtype=float), lower, side="right") - 1
        np.add.at(out, np.clip(idx, 0, buckets - 1), counts)
        return {"distance": unit, "edges": edges, "counts": [float(c) if not self.exact else int(c) for c in out]}

    def to_dict(self) -> dict:
        d = {"name": self.name, "references": self.references, "instructions": self.instructions,
             "accesses": self.accesses,
             "block": self.block, "exact": self.exact}
        if self.exact:
            d.update(cold=self.cold, distinct=self.distinct)
        else:
            d.update(sample_rate=self.sample_rate, samples=self.samples, dangling=self.dangling,
                     cold=self.dangling / self.sample_rate)
        d["histogram"] = self.histogram()
        return d


def _chunks(source, fmt=None) -> Iterable[Chunk]:
    if callable(source):
        return source()
    if isinstance(source, Chunk):
        return [source]
    if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        return read_trace(source, fmt)
    return source


def reuse_profile(source, block: int = 64, data_only: bool = False, sample: float | None = None, seed: int = 1,
                  fmt: str | None = None, name: str = "", looped: bool = False) -> ReuseProfile:
    """Reuse and stack distances of ``source``: a trace path (lackey, din, npz), a
    :class:`Chunk`, a list of chunks or a callable returning an iterator of chunks;
    ``block`` in bytes (a power of two); ``data_only`` leaves instruction fetches out;
    ``sample`` in (0, 1] samples at that rate instead of measuring every reference
    (``seed`` picks the samples).

    ``looped`` (exact only): the steady state of the trace run in a loop, as the
    simulators run it: the distances of a second pass after a first, so a block's first
    reference in the trace has the distance back to its last one instead of being cold.
    """
    if not isinstance(block, (int, np.integer)) or block < 1 or block & (block - 1):
        raise ModelError("block", f"must be a power of two in bytes, got {block!r}")
    if sample is not None and not (0 < sample <= 1):
        raise ModelError("sample", f"must be a rate in (0, 1], got {sample!r}")
    log_block = int(math.log2(block))
    if looped and not (callable(source) or isinstance(source, (Chunk, list, tuple, str, bytes))
                       or hasattr(source, "__fspath__")):
        raise ModelError("looped", "needs a source that can be read twice: a path, chunks or a callable")
    if sample is None:
        passes = [_chunks(source, fmt)] if not looped else [_chunks(source, fmt), _chunks(source, fmt)]
        return _exact(passes, log_block, bool(data_only), block, name)
    if looped:
        raise ModelError("looped", "applies to exact profiles only")
    return _sampled(_chunks(source, fmt), log_block, bool(data_only), float(sample), int(seed), block, name)


def _exact(passes, log_block, data_only, block, name) -> ReuseProfile:
    table = np.zeros((1 << 16, 2), np.int64)
    cap = 1 << 15
    per_block, stack_counts = np.zeros((cap, 2), np.int64), np.zeros(cap, np.int64)
    width = 1 << 16
    tree, bits, id_at = _marks(width)
    time_counts = np.zeros(K.TIME_BINS, np.int64)
    state = np.zeros(4, np.int64)
    for chunks in passes:           # a looped profile keeps the last pass's counts only
        instructions = accesses = 0
        time_counts[:] = 0
        stack_counts[:] = 0
        first = state.copy()
        for c in chunks:
            fetches, data = _counts(c)
            instructions += fetches
            accesses += data
            per_block, stack_counts, tree, bits, id_at, table, width = _exact_chunk(
                c, log_block, data_only, block, per_block, stack_counts, tree, bits, id_at, table, width, time_counts,
                state)
    distinct = int(state[0])
    return ReuseProfile(references=int(state[2] - first[2]), block=block, time_counts=time_counts,
                        instructions=instructions, accesses=accesses, cold=int(state[3] - first[3]),
                        distinct=distinct,
                        stack_counts=stack_counts[: max(distinct, 1)].copy(), name=name)


def _marks(width):
    """Fenwick tree over 64-position words, the mark bits, and the block at each position."""
    return np.zeros(width // 64 + 1, np.int32), np.zeros(width // 64, np.uint64), np.full(width, -1, np.int64)


def _exact_chunk(c, log_block, data_only, block, per_block, stack_counts, tree, bits, id_at, table, width,
                 time_counts, state):
    """Feed one chunk to the kernel, growing the tables as it asks; returns the arrays."""
    pos, n = 0, len(c)
    while pos < n:
        pos += K.exact_pass(c.op[pos:], c.addr[pos:], c.size[pos:], log_block, data_only, table, per_block, tree,
                            bits, id_at, stack_counts, time_counts, state)
        if pos >= n:
            break
        span = 1 + ((int(c.size[pos]) + block - 2) >> log_block) + 1
        need = int(state[0]) + span
        if 2 * need > table.shape[0]:
            new = np.zeros((1 << math.ceil(math.log2(4 * need)), 2), np.int64)
            K.rehash(table, new)
            table = new
        if need > per_block.shape[0]:
            cap = max(2 * per_block.shape[0], need)
            per_block = np.concatenate([per_block, np.zeros((cap - per_block.shape[0], 2), np.int64)])
            stack_counts = np.concatenate([stack_counts, np.zeros(cap - stack_counts.shape[0], np.int64)])
        if 2 * need > width:
            K.compact(tree, bits, id_at, per_block, state)      # positions 0..D-1, then wider arrays
            width = 1 << math.ceil(math.log2(4 * need))
            live = id_at[: state[1]].copy()
            tree, bits, id_at = _marks(width)
            id_at[: live.shape[0]] = live
            K.rebuild(tree, bits, live.shape[0])
    return per_block, stack_counts, tree, bits, id_at, table, width


def _sampled(chunks, log_block, data_only, rate, seed, block, name) -> ReuseProfile:
    watches = np.zeros((1 << 12, 2), np.int64)
    time_counts = np.zeros(K.TIME_BINS, np.int64)
    rng = np.array([(seed * 0x9E3779B97F4A7C15 + 1) & 0xFFFFFFFFFFFFFFFF or 1], np.uint64)
    state = np.zeros(5, np.int64)
    state[1] = K.first_sample(rng, rate)
    instructions = accesses = 0
    for c in chunks:
        fetches, data = _counts(c)
        instructions += fetches
        accesses += data
        pos, n = 0, len(c)
        while pos < n:
            pos += K.sampled_pass(c.op[pos:], c.addr[pos:], c.size[pos:], log_block, data_only, rate, rng, watches,
                                  time_counts, state)
            if pos < n:
                new = np.zeros((2 * watches.shape[0], 2), np.int64)
                K.rehash(watches, new)
                watches = new
    return ReuseProfile(references=int(state[0]), block=block, time_counts=time_counts, instructions=instructions,
                        accesses=accesses, sample_rate=rate, samples=int(state[3]), dangling=int(state[2]), name=name)


def _counts(chunk) -> tuple[int, int]:
    """(instruction fetches, data accesses) of a chunk."""
    fetches = int(np.count_nonzero(chunk.op == IFETCH))
    return fetches, len(chunk) - fetches
