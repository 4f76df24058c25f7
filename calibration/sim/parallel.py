"""Generated parallel kernels with locks and barriers, one process per node, for the
distributed-memory machines (``mva simulate fft --machine svm``).

Three access patterns of the SPLASH-2 programs that the layered study of software shared
memory uses (Bilas, Jiang, Zhou & Singh, HPCA 1999, Table 1; restructured versions after
Jiang, Shan & Singh, PPoPP 1997), each in an original and a restructured version:

``fft``
    regular and coarse-grained: each process owns a band of rows of two n x n matrices
    (8-byte elements) and sweeps them ``passes`` times (the butterflies), then a
    transpose between barriers.  *Original*: the transpose pushes, each process writing
    the transposed patches column by column into the other processes' rows (many writers
    per page, word-grain remote writes); *restructured*: it pulls, reading each remote
    patch row by row and writing only its own rows.
``barnes``
    irregular, fine-grained, lock-intensive: a tree of 64-byte cells built by inserting
    each body under the lock of a (skewed, random) cell, then a force phase reading
    random cells.  *Restructured*: each process builds in its own part of the cell array
    without locks and merges once per batch of 32 bodies under one lock; its force phase
    reads mostly its own region (spatial locality).
``water``
    migratory writes: molecules of 64 bytes; every pair (i, j) with i owned, j among the
    next half of the molecules, reads j and accumulates j's force privately; then each
    touched molecule's force is added under its own lock, so the force words migrate
    from writer to writer (SPLASH-2 Water-Nsquared).  *Restructured*: one lock per
    owner's block of molecules, the owners visited in a staggered order (coarser remote
    access, 16 times fewer locks).

Work: ``cycles_per_reference`` cycles of computation per data reference (the workload's
``meta``), the kernels' traces having no instruction fetches.  Shared data lives in one
range at :data:`SHARED_BASE` shared by every process; private accumulators elsewhere.
"""
from __future__ import annotations

import math
from functools import partial
from collections.abc import Callable

import numpy as np

from mva.errors import ModelError

from .traces import ACQUIRE, BARRIER, CHUNK_REFERENCES, LOAD, RELEASE, STORE, Chunk
from .workload import Process, SharedRange, Workload

__all__ = ["KERNELS", "CCNUMA_KERNELS", "SVM_KERNELS", "parallel_kernel", "SHARED_BASE"]

SHARED_BASE = 0x1000_0000
PRIVATE_BASE = 0x7000_0000
ELEMENT = 8
CELL = 64


# Each kernel is a generator of (op, address) segments, so a process's trace is made as
# the simulator reads it: memory stays bounded by one chunk and one loop step however
# long the run.

def _segment(op, addr):
    """One segment: ``op`` (a code or an array of codes) for each address."""
    addr = np.atleast_1d(np.asarray(addr, np.uint64))
    return (np.full(addr.shape[0], op, np.uint8) if np.isscalar(op) else np.asarray(op, np.uint8)), addr


def _pairs(loads, stores):
    """Load ``loads[k]`` then store ``stores[k]``, for each k."""
    ads = np.empty(2 * len(loads), np.uint64)
    ads[0::2], ads[1::2] = loads, stores
    return _segment(np.tile(np.array([LOAD, STORE], np.uint8), len(loads)), ads)


def _rmw(addr):
    """Load then store each address."""
    return _pairs(addr, addr)


def _sync(op, ident):
    return _segment(op, [ident])


def _locked_rmw(locks, addrs, words):
    """For each k: acquire ``locks[k]``, read-modify-write ``words`` words at ``addrs[k]``,
    release."""
    n = len(locks)
    per = 2 + 2 * words
    op = np.empty((n, per), np.uint8)
    ad = np.empty((n, per), np.uint64)
    op[:, 0], op[:, -1] = ACQUIRE, RELEASE
    ad[:, 0] = ad[:, -1] = np.asarray(locks, np.uint64)
    op[:, 1:-1] = np.tile([LOAD, STORE], words)
    ad[:, 1:-1] = (np.asarray(addrs, np.uint64)[:, None]
                   + np.repeat(np.arange(words, dtype=np.uint64) * ELEMENT, 2)[None, :])
    return _segment(op.ravel(), ad.ravel())


def _chunks(segments, chunk_references=CHUNK_REFERENCES):
    """Chunks of exactly ``chunk_references`` references (the last one shorter) cut from
    a stream of segments."""
    ops, addrs, held = [], [], 0
    for op, addr in segments:
        ops.append(op)
        addrs.append(addr)
        held += op.shape[0]
        if held < chunk_references:
            continue
        op, addr = np.concatenate(ops), np.concatenate(addrs)
        full = held - held % chunk_references
        for s in range(0, full, chunk_references):
            yield _chunk(op[s:s + chunk_references], addr[s:s + chunk_references])
        ops, addrs, held = [op[full:]], [addr[full:]], held - full
    if held:
        yield _chunk(np.concatenate(ops), np.concatenate(addrs))


def _chunk(op, addr):
    n = op.shape[0]
    return Chunk(op, addr, np.full(n, ELEMENT, np.uint16), np.zeros(n, np.bool_))


def _fft(pid, P, restructured, size, rng, iterations=2, passes=8):
    n = size
    rows = n // P
    src, dst = SHARED_BASE, SHARED_BASE + n * n * ELEMENT
    own = np.arange(pid * rows, (pid + 1) * rows, dtype=np.uint64)
    barrier = 0
    for _ in range(iterations):
        for matrix in (src, dst):
            band = matrix + (own[:, None] * n + np.arange(n, dtype=np.uint64)[None, :]).ravel() * ELEMENT
            for _ in range(passes):
                yield _rmw(band)
            yield _sync(BARRIER, barrier)
            barrier += 1
            other = dst if matrix == src else src
            for step in range(P):
                q = (pid + step) % P      # staggered, as SPLASH-2's Transpose: no convoy at one owner
                # patch (rows of q) x (columns of pid) of ``matrix`` -> (rows of pid) x (columns of q) of ``other``
                r = np.arange(rows, dtype=np.uint64)
                if restructured:    # pull: read q's patch row by row, write own rows
                    read = matrix + ((q * rows + r[:, None]) * n + pid * rows + r[None, :]).ravel() * ELEMENT
                    write = other + ((pid * rows + r[None, :]) * n + q * rows + r[:, None]).ravel() * ELEMENT
                else:               # push: read own rows, write q's rows column by column
                    read = matrix + ((pid * rows + r[:, None]) * n + q * rows + r[None, :]).T.ravel() * ELEMENT
                    write = other + ((q * rows + r[None, :]) * n + pid * rows + r[:, None]).T.ravel() * ELEMENT
                yield _pairs(read, write)
            yield _sync(BARRIER, barrier)
            barrier += 1


def _barnes(pid, P, restructured, size, rng, iterations=2, bodies=None, reads=48):
    cells = size
    bodies = bodies or max(cells // P, 32)
    tree = SHARED_BASE
    body_base = SHARED_BASE + cells * CELL
    own_bodies = body_base + (pid * bodies + np.arange(bodies, dtype=np.uint64)) * CELL
    region = cells // P
    barrier = 0
    for _ in range(iterations):
        if restructured:
            local = pid * region + rng.integers(0, region, bodies)
            yield _rmw(tree + local.astype(np.uint64) * CELL)        # own subtree, no locks
            yield _rmw(tree + local.astype(np.uint64) * CELL + 8)
            batches = max(bodies // 32, 1)
            top = rng.integers(0, 8, batches)                 # merge into the top cells
            yield _locked_rmw(1_000_000 + top, tree + top.astype(np.uint64) * CELL, 4)
        else:
            # skewed insertion points: the top of the tree is hot
            cell = np.minimum((rng.pareto(1.2, bodies) * cells / 64).astype(np.int64), cells - 1)
            yield _locked_rmw(cell, tree + cell.astype(np.uint64) * CELL, 2)
        yield _sync(BARRIER, barrier)
        barrier += 1
        if restructured:
            near = pid * region + rng.integers(0, region, (bodies, reads))
            cell = np.where(rng.random((bodies, reads)) < 0.8, near, rng.integers(0, cells, (bodies, reads)))
        else:
            cell = rng.integers(0, cells, (bodies, reads))
        ops = np.full((bodies, reads + 2), LOAD, np.uint8)
        ops[:, -1] = STORE
        ads = np.empty((bodies, reads + 2), np.uint64)
        ads[:, :reads] = tree + cell.astype(np.uint64) * CELL
        ads[:, reads:] = own_bodies[:, None]
        yield _segment(ops.ravel(), ads.ravel())
        yield _sync(BARRIER, barrier)
        barrier += 1


def _water(pid, P, restructured, size, rng, iterations=2):
    M = size
    per = M // P
    mol = SHARED_BASE
    mine = np.arange(pid * per, (pid + 1) * per)
    force = 8 * 3                               # position at +0, force at +24 (3 words)
    acc = PRIVATE_BASE + np.arange(M, dtype=np.uint64) * 24
    barrier = 0
    for _ in range(iterations):
        touched = np.zeros(M, bool)
        for i in mine:                          # interactions: read j, accumulate privately
            js = (i + 1 + np.arange(M // 2)) % M
            yield _segment(LOAD, mol + np.repeat(js.astype(np.uint64) * CELL, 3)
                           + np.tile(np.arange(3, dtype=np.uint64) * 8, js.shape[0]))
            yield _rmw(acc[js])
            touched[js] = True
        js = np.flatnonzero(touched)
        if restructured:                        # one lock per owner's block of molecules, owners staggered
            for q in ((pid + 1 + np.arange(P)) % P):
                block = js[js // per == q]
                if block.size:
                    yield _sync(ACQUIRE, 2_000_000 + q)
                    yield _rmw((mol + block.astype(np.uint64)[:, None] * CELL + force
                                + np.arange(3, dtype=np.uint64)[None, :] * 8).ravel())
                    yield _sync(RELEASE, 2_000_000 + q)
        else:                                   # one lock per molecule (SPLASH-2 Water-Nsquared)
            yield _locked_rmw(js, mol + js.astype(np.uint64) * CELL + force, 3)
        yield _sync(BARRIER, barrier)
        barrier += 1
        yield _rmw(mol + mine.astype(np.uint64) * CELL)        # move own molecules
        yield _sync(BARRIER, barrier)
        barrier += 1


def _initialise(pid, nbytes):
    """Process 0 writes every shared line once, then everyone meets at barrier 0: the
    initialisation phase that first-touch-after-initialisation placement skips."""
    if pid == 0:
        yield _segment(STORE, SHARED_BASE + np.arange(0, nbytes, CELL, dtype=np.uint64))
    yield _sync(BARRIER, 0)


def _ge(pid, P, restructured, size, rng, iterations=1, element=16):
    """Gaussian elimination on an n x n matrix (rows of 16-byte complex elements, so a
    row at the default n = 256 is half a page): at step k every
    process reads pivot row k (widely shared) and updates its share of the rows below,
    the remaining rows dealt out anew each step in contiguous blocks, so each process's
    rows move down the matrix and, at the end, into few pages (after Bianchini &
    LeBlanc 1994)."""
    n = size
    yield from _initialise(pid, n * n * element)
    barrier = 1
    for k in range(n - 1):
        share, extra = divmod(n - 1 - k, P)         # np.array_split's deal, without its 64 views
        first = k + 1 + pid * share + min(pid, extra)
        mine = np.arange(first, first + share + (pid < extra))
        if mine.size:
            cols = np.arange(k, n, dtype=np.uint64)
            pivot = SHARED_BASE + (np.uint64(k) * np.uint64(n) + cols) * np.uint64(element)
            target = SHARED_BASE + (mine.astype(np.uint64)[:, None] * np.uint64(n) + cols[None, :]) * np.uint64(element)
            ops = np.empty((mine.size, 3 * cols.size), np.uint8)
            ads = np.empty((mine.size, 3 * cols.size), np.uint64)
            ops[:, 0::3], ops[:, 1::3], ops[:, 2::3] = LOAD, LOAD, STORE
            ads[:, 0::3], ads[:, 1::3], ads[:, 2::3] = pivot[None, :], target, target
            yield _segment(ops.ravel(), ads.ravel())
        yield _sync(BARRIER, barrier)
        barrier += 1


def _ocean(pid, P, restructured, size, rng, iterations=4, contiguous=True):
    """A five-point stencil (Jacobi sweeps between two n x n grids) on a sqrt(P) x sqrt(P)
    grid of square blocks, one per process.  ``contiguous`` lays each block out in one
    piece of memory (SPLASH-2 Ocean-Contiguous: a process's pages hold only its own
    points); otherwise the grids are row-major 2-D arrays, so a page row is shared by
    the blocks side by side (Ocean-Non-Contiguous)."""
    n = size
    side = int(round(math.sqrt(P)))        # checked by parallel_kernel
    b = n // side
    grid_bytes = n * n * ELEMENT
    yield from _initialise(pid, 2 * grid_bytes)
    by, bx = divmod(pid, side)

    def offset(i, j):
        if contiguous:
            owner = (i // b) * side + (j // b)
            return ((owner * b + i % b) * b + j % b) * ELEMENT
        return (i * n + j) * ELEMENT

    ii, jj = np.meshgrid(np.arange(by * b, (by + 1) * b), np.arange(bx * b, (bx + 1) * b), indexing="ij")
    ii, jj = ii.ravel(), jj.ravel()
    neighbours = [(ii, jj), (np.maximum(ii - 1, 0), jj), (np.minimum(ii + 1, n - 1), jj),
                  (ii, np.maximum(jj - 1, 0)), (ii, np.minimum(jj + 1, n - 1))]
    reads = np.stack([np.asarray(offset(a, c), np.uint64) for a, c in neighbours], axis=1)
    writes = np.asarray(offset(ii, jj), np.uint64)
    barrier = 1
    for it in range(iterations):
        src, dst = (SHARED_BASE, SHARED_BASE + grid_bytes) if it % 2 == 0 else (SHARED_BASE + grid_bytes,
                                                                                 SHARED_BASE)
        ops = np.full((writes.size, 6), LOAD, np.uint8)
        ops[:, 5] = STORE
        ads = np.empty((writes.size, 6), np.uint64)
        ads[:, :5] = np.uint64(src) + reads
        ads[:, 5] = np.uint64(dst) + writes
        yield _segment(ops.ravel(), ads.ravel())
        yield _sync(BARRIER, barrier)
        barrier += 1


def _transpose(pid, P, restructured, size, rng, iterations=2, passes=2):
    """All-to-all transpose between two n x n matrices, each process owning a band of
    rows: local passes over its rows, then it reads its column patch of every other
    process's rows and writes its own rows (the FFT's communication), between barriers."""
    n = size
    rows = n // P
    yield from _initialise(pid, 2 * n * n * ELEMENT)
    a, b = SHARED_BASE, SHARED_BASE + n * n * ELEMENT
    own = np.arange(pid * rows, (pid + 1) * rows, dtype=np.uint64)
    r = np.arange(rows, dtype=np.uint64)
    barrier = 1
    for _ in range(iterations):
        for src, dst in ((a, b), (b, a)):
            band = src + (own[:, None] * n + np.arange(n, dtype=np.uint64)[None, :]).ravel() * ELEMENT
            for _ in range(passes):
                yield _rmw(band)
            yield _sync(BARRIER, barrier)
            barrier += 1
            for q in (pid + 1 + np.arange(P)) % P:
                read = src + ((q * rows + r[:, None]) * n + pid * rows + r[None, :]).ravel() * ELEMENT
                write = dst + ((pid * rows + r[None, :]) * n + q * rows + r[:, None]).ravel() * ELEMENT
                yield _pairs(read, write)
            yield _sync(BARRIER, barrier)
            barrier += 1


# name: (generator, default size, shared bytes for a size, cycles of work per data reference)
KERNELS: dict[str, tuple[Callable, int, Callable, int]] = {
    "fft": (_fft, 256, lambda n: 2 * n * n * ELEMENT, 20),
    "barnes": (_barnes, 4096, lambda n: 2 * n * CELL + 64 * CELL, 30),
    "water": (_water, 512, lambda n: n * CELL, 40),
    # the cc-NUMA study's (Talbot & Kelly 1999): each starts with an initialisation phase
    "ge": (_ge, 256, lambda n: n * n * 16, 2),
    "ocean-contig": (_ocean, 384, lambda n: 2 * n * n * ELEMENT, 2),
    "ocean-noncontig": (partial(_ocean, contiguous=False), 384, lambda n: 2 * n * n * ELEMENT, 2),
    "transpose": (_transpose, 512, lambda n: 2 * n * n * ELEMENT, 2),
}
CCNUMA_KERNELS = ("ge", "ocean-contig", "ocean-noncontig", "transpose")
SVM_KERNELS = tuple(k for k in KERNELS if k not in CCNUMA_KERNELS)       # each also NAME-restructured


def parallel_kernel(name: str, processes: int = 16, size: int | None = None, seed: int = 1,
                    iterations: int = 2) -> Workload:
    """The generated kernel ``name`` (``fft``, ``barnes``, ``water``, each also as
    ``NAME-restructured``) for ``processes`` nodes; ``size`` is the matrix order (fft),
    cells (barnes) or molecules (water)."""
    base, _, variant = name.lower().partition("-")
    if name.lower() in KERNELS:
        base, variant = name.lower(), ""
    if base not in KERNELS or variant not in ("", "restructured", "original") or (
            variant and base in CCNUMA_KERNELS):
        raise ModelError("workload", f"unknown kernel {name!r}; kernels: "
                                     + ", ".join(f"{k}, {k}-restructured" for k in SVM_KERNELS) + ", "
                                     + ", ".join(CCNUMA_KERNELS))
    gen, default, shared_bytes, cpr = KERNELS[base]
    size = default if size is None else size
    if not isinstance(processes, int) or not 1 <= processes <= 64:
        raise ModelError("nodes", f"must be an integer from 1 to 64, got {processes!r}")
    if size < processes or size % processes:
        raise ModelError("size", f"must be a positive multiple of the {processes} processes, got {size}")
    restructured = variant == "restructured"
    side = int(round(math.sqrt(processes)))
    if base.startswith("ocean") and (side * side != processes or size % side):
        raise ModelError("nodes", f"ocean needs a square number of processes whose root divides the grid side "
                                  f"{size}, got {processes}")

    def opener(pid):
        def open_():
            rng = np.random.default_rng([seed, pid])
            return _chunks(gen(pid, processes, restructured, size, rng, iterations=iterations))
        return open_

    names = tuple(f"{base}{pid}" for pid in range(processes))
    procs = tuple(Process(names[pid], opener(pid)) for pid in range(processes))
    shared = (SharedRange("shared", SHARED_BASE, SHARED_BASE + shared_bytes(size), names),)
    label = base if base in CCNUMA_KERNELS else f"{base}-{'restructured' if restructured else 'original'}"
    return Workload(label, procs, shared,
                    description=__doc__.split("\n\n")[0], meta={"cycles_per_reference": cpr})
