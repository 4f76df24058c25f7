"""Compiled kernels of the TPC-C SMP model: device demands at a throughput, and the
single-class MVA with the contention fixed point, over a batch of cases.

Private: :mod:`models.tpcc_smp.model` prepares and checks the inputs.  A single solve is a
batch of one, so sweeps reproduce single solves bit for bit.

Times (the ``times`` vector, seconds): 0 S_MBusRequest, 1 S_MBusReply, 2 S_Mem,
3 S_IOBusReq, 4 S_IOBusRep, 5 S_IOBus, 6 disk access (seek + latency + transfer),
7 S_Dcache, 8 a write's bus hold in the read contention term, 9 the variance of a disk
access (s^2), or -1 for the product form (``disk.access_time = "exponential"``).
"""
from __future__ import annotations

import numpy as np
from mva.jit import jit, prange

from .equations import (disk_visit_time, disks_time, io_bus_demand, memory_bus_demand, memory_demand,
                        read_wait)

#: ``mode`` of the kernels for ``io.centre = "separate"`` (0-2 are eq. 3.9's disk parallelism)
SEPARATE = 3



@jit
def _weighted(x, matrix):
    """``x @ matrix`` for a short class vector, without a BLAS call (hot path)."""
    out = np.zeros(matrix.shape[1])
    for c in range(matrix.shape[0]):
        for j in range(matrix.shape[1]):
            out[j] += x[c] * matrix[c, j]
    return out


@jit
def device_static(cpu_memory, disk_memory, reads, writes, weight, bus_of_disk, n_buses, times):
    """The parts of the device demands that do not depend on the throughput (eq. 3.5, 3.7):
    ``memory_bus (C,), io_bus (C, B), io_bus_by_disk (C, D), read_share, io_bus summed (C,)``."""
    mbus = memory_bus_demand(cpu_memory, disk_memory, times[0], times[1])
    per_bus, bus_by_disk = io_bus_demand(reads, writes, bus_of_disk, n_buses, times[3], times[4], times[5],
                                         times[6])
    total_reads = np.sum(_weighted(weight, reads))
    total = total_reads + np.sum(_weighted(weight, writes))
    read_share = total_reads / total if total > 0.0 else 1.0
    return mbus, per_bus, bus_by_disk, read_share, per_bus.sum(axis=1)


@jit
def workspace(n_classes, n_buses, n_disks):
    """Scratch arrays of :func:`device_dynamic`: memory (C,), disk (C, D), io (C,),
    u_bus (B,), u_disk (D,), wait (D,), order (D,) int."""
    return (np.empty(n_classes), np.empty((n_classes, n_disks)), np.empty(n_classes), np.empty(n_buses),
            np.empty(n_disks), np.empty(n_disks), np.empty(n_disks, dtype=np.int64))


@jit
def device_dynamic(x, static, cpu_memory, disk_memory, reads, writes, bus_of_disk, times, mode, work):
    """Demands (s per transaction of each class) and utilisations at class throughputs ``x``.

    Eq. 3.6 and 3.8-3.9 evaluated into the scratch arrays ``work`` (:func:`workspace`),
    so the solver's inner loop allocates nothing.  Returns ``memory_bus (C,), memory (C,),
    io_bus (C, B), disk (C, D), io (C,), u_memory_bus, u_memory, u_io_bus (B,), u_disk (D,),
    u_io`` (views of ``work``: copy them to keep them).

    ``mode`` :data:`SEPARATE` (``io.centre = "separate"``): a disk's demand is the time the
    machine holds it, a read's access, cache and reply (after regaining the bus) and a
    write's bus hold with its access; ``io`` is that plus the reads' requests on the bus
    (a request is not queued at a centre: it waits for the bus by the contention term),
    and ``u_io`` the chance some disk is busy (disks independent).
    """
    mbus, per_bus, bus_by_disk, read_share, bus_total = static
    mem, disk, io, u_bus, u_disk, wait, order = work
    n_classes, n_disks = reads.shape
    req, rep = times[0], times[1]
    u_mbus = 0.0
    u_mbus_memory = 0.0
    for c in range(n_classes):
        u_mbus += x[c] * mbus[c]
        u_mbus_memory += x[c] * cpu_memory[c]
    u_mbus_memory *= req + rep
    u_mem = 0.0
    for c in range(n_classes):
        mem[c] = memory_demand(cpu_memory[c], disk_memory[c], times[2], req, rep, u_mbus, u_mbus_memory)
        u_mem += x[c] * mem[c]
    for b in range(u_bus.shape[0]):
        u_bus[b] = 0.0
        for c in range(n_classes):
            u_bus[b] += x[c] * per_bus[c, b]
    for d in range(n_disks):
        u_own = 0.0
        for c in range(n_classes):
            u_own += x[c] * bus_by_disk[c, d]
        if mode == SEPARATE and times[9] >= 0.0:
            wait[d] = residual_read_wait(read_share, times[3], times[4], times[8], times[9], u_bus[bus_of_disk[d]],
                                         u_own)
        else:
            wait[d] = read_wait(read_share, times[3], times[4], times[8], u_bus[bus_of_disk[d]], u_own)
        u_disk[d] = 0.0
        for c in range(n_classes):
            if mode == SEPARATE:
                disk[c, d] = held_disk_time(reads[c, d], writes[c, d], times[6], times[7], times[4], times[5],
                                            wait[d])
            else:
                disk[c, d] = disk_visit_time(reads[c, d], writes[c, d], times[6], times[7], wait[d])
            u_disk[d] += x[c] * disk[c, d]
    u_io = 0.0
    if mode == SEPARATE:
        idle = 1.0
        for d in range(n_disks):
            idle *= 1.0 - min(max(u_disk[d], 0.0), 1.0)
        u_io = 1.0 - idle
        for c in range(n_classes):
            io[c] = 0.0
            for d in range(n_disks):
                io[c] += disk[c, d] + reads[c, d] * (times[3] + wait[d])
        return (mbus, mem, per_bus, disk, io, u_mbus, u_mem, u_bus, u_disk, u_io)
    for c in range(n_classes):
        io[c] = bus_total[c] + disks_time(disk[c], u_disk, mode, order)
        u_io += x[c] * io[c]
    return (mbus, mem, per_bus, disk, io, u_mbus, u_mem, u_bus, u_disk, u_io)


@jit
def residual_read_wait(read_share, request, reply, write_hold, access_variance, u_bus, u_own):
    """The wait of an access for its bus when the holds are not exponential (s): the
    Pollaczek-Khinchine form ``U_o R / (1 - U_o)`` over the other disks' traffic ``U_o =
    U_bus - U_own`` (the disk's own accesses cannot be ahead of one that holds the disk),
    ``R = E[H^2] / (2 E[H])`` the residual of the holds (a read's request and reply, fixed;
    a write's bus time and access, whose variance is ``access_variance``), in place of the
    paper's mean hold over ``1 - U_bus`` (Kleinrock, *Queueing Systems* I, 1975, eq. 5.65)."""
    others = u_bus - u_own
    if others >= 1.0:
        return np.inf
    mean_hold = (1.0 - read_share) * write_hold + read_share * (request + reply)
    if mean_hold <= 0.0:
        return 0.0
    second = (1.0 - read_share) * (write_hold * write_hold + access_variance) \
        + read_share * (request * request + reply * reply)
    return second / (2.0 * mean_hold) * others / (1.0 - others)


@jit
def disk_hold_scv(reads, writes, times, wait):
    """The squared coefficient of variation of the time a disk is held per access (its
    reads' access, cache, wait and reply; its writes' wait, bus time and access), the
    variance being the access's (``times[9]``); 1 for a disk with no accesses."""
    total = reads + writes
    if total <= 0.0:
        return 1.0
    read_hold = times[6] + times[7] + wait + times[4]
    write_hold = wait + times[5] + times[6]
    mean = (reads * read_hold + writes * write_hold) / total
    second = (reads * read_hold * read_hold + writes * write_hold * write_hold) / total + times[9]
    return second / (mean * mean) - 1.0


@jit
def held_disk_time(reads, writes, access, cache_latency, reply, write_bus, wait):
    """The time the machine holds a disk per transaction (s): each read's access, disk
    cache, wait to regain the bus and reply; each write's wait for the bus, bus time and
    access (section 2.2: a write holds its bus through the access).  Scalars."""
    out = 0.0
    if reads > 0.0:
        out += reads * (access + cache_latency + wait + reply)
    if writes > 0.0:
        out += writes * (wait + write_bus + access)
    return out


@jit
def device_state(x, cpu_memory, disk_memory, reads, writes, weight, bus_of_disk, n_buses, times, mode):
    """:func:`device_dynamic` after :func:`device_static`: everything at throughputs ``x``
    (fresh arrays)."""
    static = device_static(cpu_memory, disk_memory, reads, writes, weight, bus_of_disk, n_buses, times)
    work = workspace(reads.shape[0], n_buses, reads.shape[1])
    return device_dynamic(x, static, cpu_memory, disk_memory, reads, writes, bus_of_disk, times, mode, work)


@jit
def _io_residence(state, queue, mode, r):
    """The I/O residence (s) at queue lengths ``queue``; under :data:`SEPARATE` each disk's
    (``queue[2 + d]``) is written to ``r[2 + d]``, else the one I/O centre's to ``r[2]``."""
    if mode != SEPARATE:
        r[2] = state[4][0] * (1.0 + queue[2])
        return r[2]
    disk = state[3]
    requests = state[4][0]
    total = 0.0
    for d in range(disk.shape[1]):
        r[2 + d] = disk[0, d] * (1.0 + queue[2 + d])
        requests -= disk[0, d]
        total += r[2 + d]
    return total + requests


@jit
def _excess(x, n, base, queue, ctx):
    """g(x) of :func:`solve_one`; ``ctx`` packs the case's fixed arguments of
    :func:`device_dynamic`, a 1-entry rate buffer, the memory share and a scratch vector."""
    static, cpu_memory, disk_memory, reads, writes, bus_of_disk, times, mode, work, rate, share, scratch = ctx
    rate[0] = x
    state = device_dynamic(rate, static, cpu_memory, disk_memory, reads, writes, bus_of_disk, times, mode, work)
    total = base + (share * state[0][0] * (1.0 + queue[0]) + share * state[1][0] * (1.0 + queue[1])
                    + _io_residence(state, queue, mode, scratch))
    # a saturated device (U >= 1 at this trial rate) has infinite demand: the rate is too high
    return n / total - x if np.isfinite(total) else -x


@jit
def solve_one(terminals, think, cpu_demand, inv_alpha, cpu_memory, disk_memory, reads, writes, bus_of_disk,
              n_buses, times, mode, share, tol, max_iter, servers):
    """Section 3.2's MVA over n = 1..N for one case, the fixed point solved at each n.

    ``share`` is the part of the memory bus's and memory's demands that resides at
    those centres (1 for the paper's structure; the disk transfers' part when the CPU
    centre holds the processors' miss stalls); utilisations count the whole demand.

    At population n, ``g(x) = f(x) - x`` with ``f(x) = n / (Z + R_cpu(n) + sum_i D_i(x)
    (1 + Q_i(n-1)))``.  Demands grow with load, so f decreases, g' = f' - 1 <= -1, and the
    root x* is unique with ``|x - x*| <= |g(x)|`` (mean value theorem).  The search stops
    when ``|g(x)| <= tol x``: a guaranteed relative error below ``tol``.  It starts from
    the last two populations' rates extrapolated, then one substitution step; these
    usually meet the tolerance or bracket the root tightly, and the Illinois variant of
    regula falsi (Dowell & Jarratt, BIT 11, 1971) finishes, keeping the bracket.  If
    substitution does not bracket, the bracket is ``[0, g(0)]``.  (scipy's Brent cannot
    be called from compiled code.)

    Returns
    -------
    out : (9,) x (1/s), R_cpu, R_memory_bus, R_memory, R_io (s), P(CPU centre busy),
          evaluations of g, populations whose root search hit ``max_iter``, and the mean
          fraction of the ``servers`` processors busy (sum_j min(j, k) P(j) / k)
    state : the device state (see :func:`device_dynamic`) at the solution
    lowest_p0 : the smallest P(0|n) of eq. 3.4 (negative: precision lost)
    """
    weight = np.ones(1)
    static = device_static(cpu_memory, disk_memory, reads, writes, weight, bus_of_disk, n_buses, times)
    marginal = np.zeros(terminals + 1)
    marginal[0] = 1.0
    new = np.zeros(terminals + 1)
    queue = np.zeros(3 + reads.shape[1])        # memory bus, memory, then the I/O centre or each disk
    x = 0.0
    x_before = 0.0
    work = workspace(1, n_buses, reads.shape[1])
    rate = np.zeros(1)
    r = np.zeros(3 + reads.shape[1])
    ctx = (static, cpu_memory, disk_memory, reads, writes, bus_of_disk, times, mode, work, rate, share,
           np.zeros(3 + reads.shape[1]))
    state = device_dynamic(rate, static, cpu_memory, disk_memory, reads, writes, bus_of_disk, times, mode, work)
    evaluations = 0
    unsolved = 0
    lowest = 1.0
    io_residence = 0.0
    for n in range(1, terminals + 1):
        r_cpu = 0.0
        for j in range(1, n + 1):
            r_cpu += j * inv_alpha[j - 1] * marginal[j - 1]
        r_cpu *= cpu_demand
        base = think + r_cpu
        # start from the last rate extrapolated linearly (rates grow smoothly with n)
        x0 = x + (x - x_before) if n > 2 else x
        x_before = x
        g0 = _excess(x0, n, base, queue, ctx)
        evaluations += 1
        done = abs(g0) <= tol * x0
        x = x0
        if not done:
            x1 = x0 + g0
            g1 = _excess(x1, n, base, queue, ctx)
            evaluations += 1
            done = abs(g1) <= tol * x1
            x = x1
        if not done:
            if g0 > 0.0 and g1 < 0.0:
                lo, g_lo, hi, g_hi = x0, g0, x1, g1
            elif g0 < 0.0 and g1 > 0.0:
                lo, g_lo, hi, g_hi = x1, g1, x0, g0
            else:
                # substitution did not bracket: the bracket is [0, g(0)]
                lo = 0.0
                g_lo = _excess(0.0, n, base, queue, ctx)
                hi = g_lo
                g_hi = _excess(hi, n, base, queue, ctx)
                evaluations += 2
                x = hi
                done = g_hi >= 0.0        # demands do not grow with load: g(0) is the root
            side = 0
            for _ in range(max_iter):
                if done:
                    break
                x = (lo * g_hi - hi * g_lo) / (g_hi - g_lo)
                g = _excess(x, n, base, queue, ctx)
                evaluations += 1
                if abs(g) <= tol * x:
                    done = True
                elif g > 0.0:
                    lo, g_lo = x, g
                    if side == 1:
                        g_hi *= 0.5
                    side = 1
                else:
                    hi, g_hi = x, g
                    if side == -1:
                        g_lo *= 0.5
                    side = -1
            if not done:
                unsolved += 1
        rate[0] = x
        state = device_dynamic(rate, static, cpu_memory, disk_memory, reads, writes, bus_of_disk, times, mode, work)
        r[0] = share * state[0][0] * (1.0 + queue[0])
        r[1] = share * state[1][0] * (1.0 + queue[1])
        io_residence = _io_residence(state, queue, mode, r)
        for i in range(r.shape[0]):
            queue[i] = x * r[i]
        if mode == SEPARATE and times[9] >= 0.0:
            # FCFS with non-exponential service: the access in progress at an arrival has
            # (1 + scv) / 2 of a mean access left, not a whole one (Reiser 1979), a term that
            # fades with the disk's idle share as mva.nonproduct's does (a saturated disk's
            # throughput does not depend on its service distribution):
            # R = D (1 + Q - U (1 - U) (1 - scv) / 2), folded into Q
            for d in range(reads.shape[1]):
                scv = disk_hold_scv(reads[0, d], writes[0, d], times, work[5][d])
                u = min(x * state[3][0, d], 1.0)
                queue[2 + d] -= u * (1.0 - u) * (1.0 - scv) / 2.0
        new[:] = 0.0
        for j in range(1, n + 1):
            new[j] = x * cpu_demand * inv_alpha[j - 1] * marginal[j - 1]          # eq. 3.4
        new[0] = 1.0 - new[1:].sum()
        if new[0] < lowest:
            lowest = new[0]
        marginal[:] = new
    out = np.empty(9)
    busy = 0.0
    for j in range(1, terminals + 1):
        busy += min(j, servers) * marginal[j]
    out[8] = busy / servers
    out[0] = x
    out[2] = r[0]
    out[3] = r[1]
    out[4] = io_residence
    out[1] = terminals / x - think - (r[0] + r[1] + io_residence)
    out[5] = 1.0 - marginal[0]
    out[6] = evaluations
    out[7] = unsolved
    return out, state, lowest


@jit
def _solve_case(b, terminals, think, cpu_demand, inv_alpha, cpu_memory, disk_memory, reads, writes, n_disks,
                bus_of_disk, n_buses, times, mode, share, tol, max_iter, servers, out, util, demand, lowest):
    """Case ``b`` of a batch, written into row ``b`` of the outputs."""
    d = n_disks[b]
    max_buses = util.shape[1] - 3 - reads.shape[1]
    res, state, low = solve_one(terminals[b], think[b], cpu_demand[b], inv_alpha[b], cpu_memory[b:b + 1],
                                disk_memory[b:b + 1], reads[b:b + 1, :d], writes[b:b + 1, :d],
                                bus_of_disk[b, :d], n_buses[b], times[b], mode[b], share[b], tol[b], max_iter,
                                servers[b])
    out[b] = res
    util[b, 0] = state[5]
    util[b, 1] = state[6]
    util[b, 2] = state[9]
    for i in range(n_buses[b]):
        util[b, 3 + i] = state[7][i]
    for i in range(d):
        util[b, 3 + max_buses + i] = state[8][i]
    demand[b, 0] = state[1][0]
    demand[b, 1] = state[4][0]
    lowest[b] = low


@jit
def _outputs(n_buses, n_disk_columns):
    """Zeroed batch outputs: out (B, 9), util (B, 3 + L + D), demand (B, 2), lowest_p0 (B,)."""
    n_cases = n_buses.shape[0]
    max_buses = 0
    for b in range(n_cases):
        max_buses = max(max_buses, n_buses[b])
    return (np.zeros((n_cases, 9)), np.zeros((n_cases, 3 + max_buses + n_disk_columns)), np.zeros((n_cases, 2)),
            np.zeros(n_cases))


@jit
def solve_batch(terminals, think, cpu_demand, inv_alpha, cpu_memory, disk_memory, reads, writes, n_disks,
                bus_of_disk, n_buses, times, mode, share, tol, max_iter, servers):
    """:func:`solve_one` for B cases in one compiled loop; device arrays padded to the
    largest case (``n_disks``, ``n_buses`` say how much of each row is real).  One thread:
    single solves and small batches (and it compiles in seconds).

    Returns
    -------
    out : (B, 9) as :func:`solve_one`
    util : (B, 3 + L + D) U_memory_bus, U_memory, U_io, then U_io_bus_1..L, U_disk_1..D (0-padded)
    demand : (B, 2) D_memory, D_io (s) at the solution
    lowest_p0 : (B,)
    """
    out, util, demand, lowest = _outputs(n_buses, reads.shape[1])
    for b in range(terminals.shape[0]):
        _solve_case(b, terminals, think, cpu_demand, inv_alpha, cpu_memory, disk_memory, reads, writes,
                    n_disks, bus_of_disk, n_buses, times, mode, share, tol, max_iter, servers, out, util, demand,
                    lowest)
    return out, util, demand, lowest


@jit(parallel=True)
def solve_batch_parallel(terminals, think, cpu_demand, inv_alpha, cpu_memory, disk_memory, reads, writes, n_disks,
                         bus_of_disk, n_buses, times, mode, share, tol, max_iter, servers):
    """:func:`solve_batch` on every core (numba ``prange``), for sweeps; the cases are
    independent and each runs :func:`_solve_case`, so the numbers are the same."""
    out, util, demand, lowest = _outputs(n_buses, reads.shape[1])
    for b in prange(terminals.shape[0]):
        _solve_case(b, terminals, think, cpu_demand, inv_alpha, cpu_memory, disk_memory, reads, writes,
                    n_disks, bus_of_disk, n_buses, times, mode, share, tol, max_iter, servers, out, util, demand,
                    lowest)
    return out, util, demand, lowest
