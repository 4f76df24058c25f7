"""The service-demand equations of Du & Zhang (2001), section 3.2 (eq. 3.1, 3.5-3.10), as pure functions.

Arrays carry a leading class axis ``c`` (one class for the paper's single-class model,
five for the per-transaction variant); devices follow.  Times are in seconds, throughputs
in transactions per second, utilisations are fractions.  Nothing here iterates: the
contention terms take utilisations as inputs and :mod:`models.tpcc_smp.model` solves the
fixed point.

The device equations (3.5-3.9) are numba-compiled: the same code serves the Python API,
a single solve and the batch solver of sweeps (:mod:`models.tpcc_smp._kernels`).  They take
float64 arrays (``reads``/``writes`` 2-D, utilisations 1-D).
"""
from __future__ import annotations

import numpy as np
from mva.jit import jit

__all__ = ["mean_think_time", "table_access_distribution", "memory_bus_demand", "memory_demand",
           "io_bus_demand", "io_bus_contention", "disk_demand", "parallel_disk_time",
           "DISK_PARALLELISM", "tpmc"]

DISK_PARALLELISM = ("paper", "conditional", "serial")

# compiled under the project's numba policy (mva.jit): x / 0 is inf, as the contention
# terms of a saturated device should be


def mean_think_time(mix, keying, think, menu=0.0):
    """Mean think time per interaction, eq. 3.1: ``Z = sum_i P_i Z_i`` (s).

    ``Z_i = min(menu response time) + min(keying time) + min(mean think time)``; the paper
    takes the menu response time as 0.  With Table 2 this is 9.63 s + 11.36 s = 20.99 s
    (eq. 3.1 states it as ``9.63 - 11.36 ln r``, whose mean is 20.99 s).
    """
    return float(np.dot(mix, np.asarray(keying) + np.asarray(think) + menu))


def table_access_distribution(counts, weights=None):
    """Probability that a database access goes to each table (section 3.2, end).

    ``counts`` (C, T): mean accesses per transaction of type c to table t (Table 4).  With
    ``weights`` (the mix), the result is "the ratio of the number of accesses of the table
    to the number of accesses of all tables", shape (T,); without, one row per type.
    """
    counts = np.asarray(counts, dtype=float)
    if weights is None:
        return counts / counts.sum(axis=1, keepdims=True)
    total = np.asarray(weights) @ counts
    return total / total.sum()


@jit
def memory_bus_demand(cpu_visits, disk_visits, request, reply):
    """Eq. 3.5: ``D_MBus = (V_CPU-Mem + V_Disk-Mem)(S_MBusRequest + S_MBusReply)`` (s)."""
    return (cpu_visits + disk_visits) * (request + reply)


@jit
def memory_demand(cpu_visits, disk_visits, latency, request, reply, u_bus, u_bus_memory):
    """Eq. 3.6: memory demand with the split-transaction bus's second acquisition (s).

    ``D_Mem = (V_CPU-Mem + V_Disk-Mem) (S_Mem + (S_Req + S_Rep)/2 * (U_MBus - U_MBus(Mem)) / (1 - U_MBus))``

    ``u_bus_memory`` is ``U_MBus(Mem)``, the part of the bus utilisation caused by memory
    (CPU) traffic, so the contention counts the other source, disk transfers, as the paper
    writes it.  A saturated bus (``u_bus >= 1``) gives an infinite demand.
    """
    if u_bus >= 1.0:
        return (cpu_visits + disk_visits) * np.inf
    contention = 0.5 * (request + reply) * (u_bus - u_bus_memory) / (1.0 - u_bus)
    return (cpu_visits + disk_visits) * (latency + contention)


@jit
def io_bus_demand(reads, writes, bus_of_disk, n_buses, request, reply, bus_latency, disk_time):
    """Eq. 3.7: I/O bus demand per bus, and each disk's share of it (s).

    A read holds the bus for ``S_IOBusReq + S_IOBusRep`` (the disk releases the bus while
    it seeks); a write holds it for ``S_IOBus + S_seek + S_latency + S_transfer``
    (``disk_time`` is the last three summed: no immediate reporting).

    Parameters
    ----------
    reads, writes : (C, D) float arrays, visits per transaction to each disk.
    bus_of_disk : (D,) int array, 0-based bus of each disk (the mapping F).

    Returns
    -------
    per_bus : (C, B);  per_disk : (C, D), the bus time caused by each disk.
    """
    per_disk = reads * (request + reply) + writes * (bus_latency + disk_time)
    per_bus = np.zeros((per_disk.shape[0], n_buses))
    for d in range(per_disk.shape[1]):
        per_bus[:, bus_of_disk[d]] += per_disk[:, d]
    return per_bus, per_disk


@jit
def io_bus_contention(read_share, request, reply, write_hold, u_bus, u_bus_by_disk):
    """Waiting time of a read to regain its I/O bus, per disk (s), section 3.2:

    ``Contention_i = (P_w S_IOBus + P_r (S_IOBusReq + S_IOBusRep)) (U_i - U_i(j)) / (1 - U_i)``

    The bracket is the mean time the bus is held per operation (the MVA residual-service
    approximation, as for the memory bus); ``write_hold`` is a write's share of it, printed
    as ``S_IOBus`` although eq. 3.7 makes a write hold the bus for
    ``S_IOBus + S_seek + S_latency + S_transfer`` (the model's ``io.write_bus_hold`` picks).
    ``u_bus`` (D,) is the utilisation of each disk's bus, ``u_bus_by_disk`` (D,) the part
    of it caused by the disk itself; ``read_share`` is P_r (P_w = 1 - P_r).  A saturated
    bus gives an infinite wait.
    """
    out = np.empty(u_bus.shape[0])
    for d in range(u_bus.shape[0]):
        out[d] = read_wait(read_share, request, reply, write_hold, u_bus[d], u_bus_by_disk[d])
    return out


@jit
def read_wait(read_share, request, reply, write_hold, u_bus, u_own):
    """One disk's term of :func:`io_bus_contention` (scalars, s)."""
    if u_bus >= 1.0:
        return np.inf
    mean_hold = (1.0 - read_share) * write_hold + read_share * (request + reply)
    return mean_hold * (u_bus - u_own) / (1.0 - u_bus)


@jit
def disk_demand(reads, writes, disk_time, cache_latency, contention):
    """Eq. 3.8: ``D_Disk = V_read (S_seek + S_latency + S_transfer + S_Dcache + Contention)
    + V_write (S_seek + S_latency + S_transfer)`` per disk (s); arrays (C, D), contention (D,).
    A disk without reads has no contention term (even on a saturated bus)."""
    out = np.empty(reads.shape)
    for c in range(reads.shape[0]):
        for d in range(reads.shape[1]):
            out[c, d] = disk_visit_time(reads[c, d], writes[c, d], disk_time, cache_latency, contention[d])
    return out


@jit
def disk_visit_time(reads, writes, disk_time, cache_latency, wait):
    """One disk's eq. 3.8 for one class (scalars, s); no reads, no wait term."""
    out = writes * disk_time
    if reads > 0.0:
        out += reads * (disk_time + cache_latency + wait)
    return out


@jit
def parallel_disk_time(demand, utilization, mode):
    """``D_Disk`` of eq. 3.9: the disks' contribution to the I/O system's demand (s).

    Parameters
    ----------
    demand : (C, D) per-disk demands of each class;  utilization : (D,) disk utilisations.
    mode : int, index in :data:`DISK_PARALLELISM` (0 "paper", 1 "conditional", 2 "serial")

    Notes
    -----
    The paper gives the two-disk case only,
    ``U1 U2 max(D1, D2) + U1 (1 - U2) D1 + U2 (1 - U1) D2``,
    and says "a similar computation is employed" for more disks.  That expression is the
    expectation of ``max_{i busy} D_i`` when each disk is busy independently with
    probability ``U_i`` (an empty busy set contributes 0).  We generalise it as exactly
    that expectation, the only extension that treats every pair of disks as the paper
    treats two and reduces to the printed formula for ``D = 2``.  Sorting the disks by
    demand, ``D_(1) >= D_(2) >= ...``, it has the closed form
    ``sum_i D_(i) U_(i) prod_{j<i} (1 - U_(j))`` (disk i is the slowest busy one), O(D log D)
    instead of 2^D terms.

    The printed formula is not consistent with the bounds the paper states just above it
    (``max_i D_i <= D_Disk <= sum_i D_i``): for one disk it gives ``U1 D1``, less than
    ``D1``.  So two alternatives are offered:

    - ``"conditional"``: the same expectation given that at least one disk is busy
      (divided by ``1 - prod (1 - U_i)``); one disk gives ``D1``.
    - ``"serial"``: ``sum_i D_i``, the standard MVA treatment (a transaction's disk
      operations are sequential; overlap across transactions is what the queueing
      model already captures), the paper's upper bound.
    """
    out = np.empty(demand.shape[0])
    order = np.empty(demand.shape[1], dtype=np.int64)
    for c in range(demand.shape[0]):
        out[c] = disks_time(demand[c], utilization, mode, order)
    return out


@jit
def disks_time(demand, utilization, mode, order):
    """One class's :func:`parallel_disk_time` (s); ``order`` is a scratch int array of D
    entries (allocation-free, for the solver's inner loop)."""
    n = demand.shape[0]
    if mode == 2:
        return demand.sum()
    for i in range(n):           # insertion sort by decreasing demand, stable (D is small)
        j = i
        while j > 0 and demand[order[j - 1]] < demand[i]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i
    total = 0.0
    idle_before = 1.0
    for k in range(n):
        i = order[k]
        u = min(max(utilization[i], 0.0), 1.0)
        total += demand[i] * u * idle_before
        idle_before *= 1.0 - u
    if mode == 1:
        if idle_before < 1.0:
            total /= 1.0 - idle_before
        elif demand.sum() > 0.0:
            # no disk busy (no load yet): the limit U -> 0 with U_i proportional to D_i
            total = (demand * demand).sum() / demand.sum()
    return total


def tpmc(new_order_throughput_per_s):
    """Eq. 3.10: tpmC = New-Order completions per minute = ``60 P_I X`` (X in 1/s)."""
    return 60.0 * new_order_throughput_per_s
