"""Synthetic multi-process workloads with requested statistics (Foglia et al. 2004, Tables 1-3).

A request gives what Foglia et al.'s (2004) Tables 1-3 give (processes, distinct 32-byte blocks,
code/data shares, data-write share, shared blocks, shared-data access and write shares)
plus the kernel share that the paper does not tabulate.  The generator builds every
process from regions and streams (our reconstruction, marked [REC] in
``docs/coherence.md`` §11):

* code: a program counter that runs sequentially (4-byte instructions) and jumps with
  probability ``jump`` to a target drawn from a power law over the region (hot code at
  low addresses); one code region per application, shared by its processes;
* private data, the application's shared segment, kernel data: a word drawn either
  next to the previous one (spatial locality, probability ``sequential``) or from a
  power law over the region; hot blocks of the kernel's common data are written at
  random words by every process, which is where false sharing comes from;
* a scan pointer per stream visits the region's blocks in order at the rate that covers
  the whole region once over the run, so the distinct-block count is the one asked for;
* kernel activity comes in bursts (system calls) of mean ``kernel_burst`` references,
  in kernel code, the kernel's common data and a per-process kernel area (kernel stack,
  u-area).

The mix of fetches, loads, stores and shared references is drawn per reference with
the requested probabilities, so measured shares match the request to sampling error.
Every process is a re-openable stream produced chunk by chunk (bounded memory).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from mva.errors import ModelError

from ._synthetic_kernel import (HISTORY, N_PARAMS, N_STREAMS, P_CODE, P_JUMP, P_KERNEL_BURST, P_KHOT_SHARE,
                                P_KPROC_SHARE, P_OTHER_WRITE, P_P_KERNEL_ENTER, P_PART_SIZE, P_PART_START, P_REUSE,
                                P_RMW, P_SEQ, P_SHARED, P_SHARED_LOCAL, P_SHARED_WRITE, P_SKEW, S_SHARED, fill_references)
from .traces import CHUNK_REFERENCES, LOAD, STORE, Chunk
from .workload import Process, SharedRange, Workload

__all__ = ["Request", "Application", "PRESETS", "generate", "preset_request", "locality_thread", "cpi_thread",
           "LOCALITY_PATTERNS"]

UNIT = 32                       # the block size of Foglia et al.'s (2004) statistics (bytes)
CODE_BASE = 0x0040_0000
PRIVATE_BASE = 0x1000_0000
SHARED_BASE = 0x4000_0000
KERNEL_CODE_BASE = 0xC000_0000
KERNEL_DATA_BASE = 0xD000_0000


@dataclass(frozen=True)
class Application:
    """``count`` processes of one program: ``footprint`` = its distinct 32-byte blocks
    (Tables 1-2; all its processes together), ``shares_data`` = it has a shared segment."""

    name: str
    count: int
    footprint: int
    shares_data: bool = False


@dataclass(frozen=True)
class Request:
    """Requested statistics (fractions of all references, blocks of 32 bytes) and the
    generator's locality knobs.  ``shared_blocks`` are user data blocks referenced by
    two or more processes; ``kernel`` is the share of operating-system references."""

    name: str
    applications: tuple
    distinct_blocks: int
    code: float
    data_write: float
    shared_blocks: int = 0
    shared_access: float = 0.0
    shared_write: float = 0.0
    kernel: float = 0.0
    references: int = 26_000_000
    kernel_footprint: float = 0.2       # share of the distinct blocks in kernel space [REC]
    code_footprint: float = 0.3         # share of an application's blocks that are code [REC]
    kernel_hot: float = 0.03            # share of kernel data references to its hot blocks [REC]
    kernel_burst: float = 400.0
    jump: float = 0.15
    sequential: float = 0.5
    skew: float = 8.0                   # power-law exponent: rank = n * u**skew [REC]
    reuse: float = 0.75                 # probability of going back to a recently used address [REC]
    shared_local: float = 0.8           # shared-segment references to the process's own part [REC]
    read_modify_write: float = 0.7      # shared and kernel stores preceded by a load of the word [REC]
    seed: int = 1
    description: str = ""

    @property
    def processes(self) -> int:
        return sum(a.count for a in self.applications)

    def check(self):
        for name in ("code", "data_write", "shared_access", "shared_write", "kernel"):
            v = getattr(self, name)
            if not 0.0 <= v < 1.0:
                raise ModelError(f"request.{name}", f"must be a fraction in [0, 1), got {v}")
        if self.code + self.data_write >= 1.0:
            raise ModelError("request.data_write", "code and data-write shares leave no loads")
        if self.shared_write > self.shared_access:
            raise ModelError("request.shared_write", "cannot exceed shared_access")
        if self.shared_access > (1 - self.code) * (1 - self.kernel) * self._sharing_share():
            raise ModelError("request.shared_access", "more shared references than the sharing processes' "
                                                      "user data references")
        if self.references < self.processes:
            raise ModelError("request.references", "fewer references than processes")
        if self.distinct_blocks < 8 * self.processes:
            raise ModelError("request.distinct_blocks", "too small for the number of processes")

    def _sharing_share(self):
        sharing = sum(a.count for a in self.applications if a.shares_data)
        return sharing / self.processes


# Foglia et al. (2004) Table 1 (single-process utilities) and Tables 2-3 (workloads), 32-byte blocks.
_UTILITIES = {  # distinct blocks, code %, data %, data write %
    "awk": (9876, 76.23, 23.77, 8.83),
    "cp": (5432, 77.21, 22.79, 8.88),
    "gzip": (7123, 82.32, 17.68, 2.77),
    "rm": (2655, 86.18, 13.82, 2.11),
    "ls": (5860, 80.23, 19.77, 5.79),
}


def _workload_request(name, apps, row, kernel=0.15, description=""):
    processes, distinct, code, data, write, shared_blocks, shared_access, shared_write = row
    return Request(name, tuple(apps), distinct, code / 100, write / 100, shared_blocks, shared_access / 100,
                   shared_write / 100, kernel=kernel, description=description)


def _utility_apps():
    return [Application(u, 1, v[0]) for u, v in _UTILITIES.items()]


PRESETS = {
    "ec-server": _workload_request(
        "ec-server", [Application("apache", 13, 34311, True), Application("postgresql", 8, 24141, True)]
        + _utility_apps(), (26, 112183, 75.49, 24.51, 7.39, 6101, 1.68, 0.54),
        description="Foglia et al. (2004) EC-server: 13 Apache + 8 PostgreSQL + 5 UNIX utilities (Table 3)"),
    "db": _workload_request(
        "db", [Application("postgresql", 21, 259023, True)] + _utility_apps(),
        (26, 330279, 74.59, 25.41, 9.15, 10516, 1.77, 0.53),
        description="Foglia et al. (2004) DB: 21 PostgreSQL + 5 UNIX utilities (Table 3)"),
    "web-server": _workload_request(
        "web-server", [Application("apache", 26, 72550, True)], (26, 72550, 73.94, 26.06, 6.92, 1108, 1.54, 0.49),
        description="Foglia et al. (2004) Web-server: 26 Apache processes (Table 3)"),
}
for _u, (_blocks, _code, _data, _write) in _UTILITIES.items():
    PRESETS[_u] = Request(_u, (Application(_u, 1, _blocks),), _blocks, _code / 100, _write / 100,
                          references=2_000_000, kernel_footprint=0.0,
                          description=f"Foglia et al. 2004, Table 1: {_u} alone (user references only)")


def preset_request(name: str, **overrides) -> Request:
    """The request of a preset with fields replaced (e.g. ``references=2_000_000``)."""
    try:
        base = PRESETS[name.lower()]
    except KeyError:
        raise ModelError("workload", f"unknown preset {name!r}; presets: {', '.join(PRESETS)}") from None
    bad = set(overrides) - set(Request.__dataclass_fields__)
    if bad:
        raise ModelError("preset option", f"unknown field(s) {', '.join(sorted(bad))}")
    return replace(base, **overrides)


@dataclass
class _ProcessPlan:
    name: str
    params: np.ndarray
    base: np.ndarray
    units: np.ndarray
    scan_rate: np.ndarray
    scan_start: np.ndarray
    references: int
    seed: int


def _stream(plan: _ProcessPlan, chunk: int):
    rng = np.array([((plan.seed * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF) | 1], dtype=np.uint64)
    pos = np.full(N_STREAMS, -1, dtype=np.int64)
    hist = np.repeat(plan.base[:, None], HISTORY, axis=1).copy()    # recent addresses, start at the bases
    scan = plan.scan_start.copy()
    mode = np.array([0, -1, 0], dtype=np.int64)    # kernel burst left, pending store, its mode
    done = 0
    while done < plan.references:
        n = min(chunk, plan.references - done)
        op = np.empty(n, np.uint8)
        addr = np.empty(n, np.uint64)
        size = np.empty(n, np.uint16)
        kernel = np.empty(n, np.bool_)
        fill_references(n, plan.params, plan.base, plan.units, plan.scan_rate, rng, pos, hist, scan, mode, op, addr,
                  size, kernel)
        done += n
        yield Chunk(op, addr, size, kernel)


def _plans(req: Request):
    """Per-process parameters from the request (see the module docstring)."""
    req.check()
    n_proc = req.processes
    refs = req.references // n_proc
    kernel_units = int(round(req.distinct_blocks * req.kernel_footprint)) if req.kernel > 0 else 0
    kcode = max(kernel_units * 2 // 5, 1)
    kproc = max(kernel_units // (5 * n_proc), 1)
    kdata = max(kernel_units - kcode - kproc * n_proc, 1)
    user_units = req.distinct_blocks - (kcode + kdata + kproc * n_proc if req.kernel > 0 else 0)
    sharing = [a for a in req.applications if a.shares_data]
    n_sharing = sum(a.count for a in sharing)
    total_fp = sum(a.footprint for a in req.applications)
    shared_units = {a.name: 0 for a in req.applications}
    if sharing and req.shared_blocks:
        fp_sharing = sum(a.footprint for a in sharing)
        for a in sharing:
            shared_units[a.name] = max(int(round(req.shared_blocks * a.footprint / fp_sharing)), 1)
    code, p_kernel, p_other_write, p_shared, p_shared_write = _mix(req, n_sharing / n_proc)
    user_data = (1 - code) * (1 - p_kernel)
    plans = []
    pid = 0
    for app in req.applications:
        app_units = user_units * app.footprint / total_fp
        code_units = max(int(round(app_units * req.code_footprint)), 1)
        private_units = max(int(round((app_units - code_units - shared_units[app.name]) / app.count)), 1)
        for k in range(app.count):
            params = np.zeros(N_PARAMS)
            burst = req.kernel_burst
            params[P_KERNEL_BURST] = burst
            params[P_P_KERNEL_ENTER] = p_kernel / ((1 - p_kernel) * burst) if p_kernel > 0 else 0.0
            params[P_CODE] = code
            params[P_SHARED] = p_shared if app.shares_data else 0.0
            params[P_SHARED_WRITE] = p_shared_write
            params[P_OTHER_WRITE] = p_other_write
            params[P_JUMP] = req.jump
            params[P_SEQ] = req.sequential
            params[P_SKEW] = req.skew
            params[P_KHOT_SHARE] = req.kernel_hot
            params[P_KPROC_SHARE] = 0.3
            params[P_REUSE] = req.reuse
            params[P_RMW] = req.read_modify_write
            units = np.array([code_units, private_units, max(shared_units[app.name], 1), kcode, kdata, kproc],
                             dtype=np.int64)
            params[P_SHARED_LOCAL] = req.shared_local
            params[P_PART_SIZE] = max(units[S_SHARED] // app.count, 1)
            params[P_PART_START] = k * params[P_PART_SIZE]
            base = np.array([CODE_BASE, PRIVATE_BASE, SHARED_BASE, KERNEL_CODE_BASE, KERNEL_DATA_BASE,
                             KERNEL_DATA_BASE + (kdata + pid * kproc) * UNIT], dtype=np.int64)
            # expected references of each stream over the run -> scan rate covering the region once
            code_refs = refs * code
            expected = np.array([code_refs * (1 - p_kernel), refs * user_data * (1 - params[P_SHARED]),
                                 refs * user_data * params[P_SHARED], code_refs * p_kernel,
                                 refs * (1 - code) * p_kernel * 0.7,
                                 refs * (1 - code) * p_kernel * 0.3])
            sharers = np.array([app.count, 1, app.count, n_proc, n_proc, 1], dtype=np.float64)
            # each sharer scans its share of a region, except the shared segment, which every
            # sharer scans whole (so its blocks are referenced by two or more processes)
            share = np.where(np.arange(N_STREAMS) == S_SHARED, 1.0, 1.0 / sharers)
            scan_rate = np.minimum(units / np.maximum(expected, 1.0) * share, 1.0)
            member = np.array([k, 0, k, pid, pid, 0], dtype=np.float64)
            scan_start = (units * member / np.maximum(sharers, 1)).astype(np.int64) % units
            plans.append(_ProcessPlan(f"{app.name}-{k + 1}" if app.count > 1 else app.name, params, base, units,
                                      scan_rate, scan_start, refs, req.seed * 1_000_003 + pid))
            pid += 1
    return plans


def _expected_mix(x, req: Request, sharing: float, kproc_share: float = 0.3):
    """Expected workload shares (code, data write, shared access, shared write, kernel)
    of the generator's draw probabilities ``x`` = (code, kernel, other-write, shared,
    shared-write); ``sharing`` = fraction of processes with a shared segment.  A store to
    shared or kernel-common data drawn as a read-modify-write adds its load as one more
    reference."""
    code, kern, w_other, p_sh, w_sh = x
    rmw = req.read_modify_write
    kdata = (1 - code) * kern * (1 - kproc_share)              # kernel common-data draws
    user = (1 - code) * (1 - kern)
    shared = user * p_sh * sharing                               # averaged over all processes
    extra = kdata * w_other * rmw + shared * w_sh * rmw
    n = 1 + extra
    stores = (1 - code) * kern * w_other + shared * w_sh + (user - shared) * w_other
    return np.array([code / n, stores / n, (shared + shared * w_sh * rmw) / n, shared * w_sh / n,
                     (kern + kdata * w_other * rmw) / n])


def _mix(req: Request, sharing: float):
    """Draw probabilities that give the requested shares exactly in expectation
    (solved with scipy's bounded least squares from the naive values)."""
    from scipy.optimize import least_squares

    target = np.array([req.code, req.data_write, req.shared_access, req.shared_write, req.kernel])
    user_data = (1 - req.code) * (1 - req.kernel)
    x0 = np.array([req.code, req.kernel, (req.data_write - req.shared_write) / (1 - req.code - req.shared_access),
                   min(req.shared_access / sharing / user_data, 1.0) if sharing else 0.0,
                   req.shared_write / req.shared_access if req.shared_access else 0.0])
    active = np.array([True, req.kernel > 0, True, sharing > 0 and req.shared_access > 0, req.shared_write > 0])
    if not active[3]:
        active[4] = False

    def residual(z):
        x = x0.copy()
        x[active] = z
        return (_expected_mix(x, req, sharing) - target)[active]

    fit = least_squares(residual, x0[active], bounds=(0.0, 1.0), xtol=1e-14, ftol=1e-14, gtol=1e-14)
    x = x0.copy()
    x[active] = fit.x
    if np.abs(fit.fun).max() > 1e-6 * max(target.max(), 1e-12):
        raise ModelError("request", "the requested shares cannot be generated together "
                                    f"(closest mix misses by {np.abs(fit.fun).max():.3g})")
    return tuple(float(v) for v in x)


def generate(name_or_request, chunk_references: int = CHUNK_REFERENCES, **overrides) -> Workload:
    """A synthetic workload: a preset name (with optional field overrides such as
    ``references=2_000_000`` or ``seed=3``) or a :class:`Request`."""
    req = name_or_request if isinstance(name_or_request, Request) else preset_request(name_or_request, **overrides)
    if isinstance(name_or_request, Request) and overrides:
        req = replace(req, **overrides)
    plans = _plans(req)
    procs = tuple(Process(pl.name, (lambda pl=pl: _stream(pl, chunk_references)), pl.references) for pl in plans)
    names = tuple(p.name for p in procs)
    shared = []
    for app in req.applications:
        members = tuple(pl.name for pl in plans if pl.name == app.name or pl.name.startswith(app.name + "-"))
        if app.count > 1:
            shared.append(SharedRange(f"{app.name}.code", CODE_BASE, PRIVATE_BASE, members))
            if app.shares_data:
                shared.append(SharedRange(f"{app.name}.shm", SHARED_BASE, SHARED_BASE + (1 << 28), members))
    if req.kernel > 0:
        shared.append(SharedRange("kernel", KERNEL_CODE_BASE, KERNEL_DATA_BASE + (1 << 28), names, kernel=True))
    return Workload(req.name, procs, tuple(shared), req.processes * (req.references // req.processes),
                    req.description, meta={"request": req})


LOCALITY_PATTERNS = ("stream", "random", "hot")


def locality_thread(name: str, pattern: str, footprint: int, instructions: int = 1_000_000,
                    memory_fraction: float = 0.3, seed: int = 1, base: int = 0x10000000,
                    chunk_instructions: int = 1 << 15) -> Process:
    """A single-threaded program with a chosen cache behaviour, for the chip-multithreading
    study (Fedorova et al. 2004, §5, mix four synthetic programs "from very poor to very
    good" with SPEC ones; ours [REC]).  Each of ``instructions`` instruction fetches (a
    1 KiB code loop) is followed, with probability ``memory_fraction``, by an 8-byte
    access (70% loads) to a ``footprint``-byte region at ``base``:

    * ``stream``: the region's words in order, again and again (every block reused at a
      distance of the whole region: all misses in a smaller LRU cache, all hits in a
      larger one);
    * ``random``: uniform words of the region;
    * ``hot``: 90% uniform in its first sixteenth, 10% uniform in the rest.
    """
    if pattern not in LOCALITY_PATTERNS:
        raise ModelError("pattern", f"unknown pattern {pattern!r}; choose {', '.join(LOCALITY_PATTERNS)}")
    if footprint < 64 or instructions < 1 or not 0 <= memory_fraction <= 1:
        raise ModelError("footprint", "needs footprint >= 64 bytes, instructions >= 1, memory_fraction in [0, 1]")
    words = footprint // 8

    def chunks():
        rng = np.random.default_rng(seed)
        cursor = 0
        done = 0
        while done < instructions:
            n = min(chunk_instructions, instructions - done)
            memory = rng.random(n) < memory_fraction
            m = int(memory.sum())
            if pattern == "stream":
                word = (cursor + np.arange(m)) % words
                cursor = (cursor + m) % words
            elif pattern == "random":
                word = rng.integers(0, words, m)
            else:
                hot = max(words // 16, 1)
                word = np.where(rng.random(m) < 0.9, rng.integers(0, hot, m), rng.integers(0, words, m))
            where = np.flatnonzero(memory) + np.arange(m) + 1       # after its instruction fetch
            total = n + m
            op = np.zeros(total, np.uint8)
            addr = np.empty(total, np.uint64)
            size = np.full(total, 4, np.uint16)
            fetch = np.ones(total, bool)
            fetch[where] = False
            addr[fetch] = (0x400000 + 4 * ((done + np.arange(n)) % 256)).astype(np.uint64)
            op[where] = np.where(rng.random(m) < 0.7, LOAD, STORE)
            addr[where] = (base + 8 * word).astype(np.uint64)
            size[where] = 8
            done += n
            yield Chunk(op, addr, size, np.zeros(total, bool))

    return Process(name, chunks, None)


def cpi_thread(name: str, cpi: float, l2_latency: int = 22, ops: int = 64, blocks: int = 256, base: int = 0x10000000,
               block: int = 64) -> Process:
    """A microbenchmark of single-threaded CPI ``cpi`` on the CMT machine (Fedorova,
    Seltzer, Small & Nussbaum 2004, §3: threads of CPI 1, 6, 11 and 16; ours [REC]): an
    op is a loop of 1024 instructions of which k = round(1024 (cpi - 1) / (l2_latency - 1))
    are loads spread evenly over it, each to the next of ``blocks`` blocks in turn, more
    than an 8 KiB L1 holds and little of an L2: alone, each load misses the L1 and hits
    the L2, costing ``l2_latency`` cycles instead of one.  With k = 0 (CPI 1) an op makes
    one load, always to the same block (an L1 hit: the machine needs a data reference).
    ``ops`` loops are one pass."""
    if not 1.0 <= cpi <= l2_latency or l2_latency < 2:
        raise ModelError("cpi", f"must be from 1 to the L2 latency {l2_latency}, got {cpi!r}")
    loads = int(round(1024 * (cpi - 1) / (l2_latency - 1)))
    at = set((np.arange(loads) * 1024) // max(loads, 1)) if loads else set()

    def chunks():
        op, addr = [], []
        j = 0
        for _ in range(ops):
            for i in range(1024):
                op.append(0)
                addr.append(0x400000 + 4 * i)
                if i in at:
                    op.append(LOAD)
                    addr.append(base + block * (j % blocks))
                    j += 1
                elif not loads and i == 0:
                    op.append(LOAD)
                    addr.append(base)
        n = len(op)
        yield Chunk(np.array(op, np.uint8), np.array(addr, np.uint64), np.full(n, 8, np.uint16), np.zeros(n, bool))

    return Process(name, chunks, None)
