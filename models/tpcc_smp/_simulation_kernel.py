"""The compiled event loop of the TPC-C architecture simulator (private; see
:mod:`models.tpcc_smp.simulation` for the machine it simulates).

Every terminal is at one place at a time (thinking, at the CPU centre, at an I/O bus or
a disk, or moving a block to or from memory), so each has at most one timer
(``timer``); the CPU centre's next completion follows from the remaining work of the
bursts it runs.  The next event is the earliest of these, found by a scan (terminals are
tens to hundreds).  Queues are FIFO: the CPU centre's in arrival order (the first
``cpu_servers`` run), each bus's and disk's a ring buffer.
"""
from __future__ import annotations

import numpy as np
from mva.jit import jit
from mva.variates import exponential

# where a terminal is (``stage``)
THINK, CPU, READ_REQUEST, DISK_QUEUE, READ_ACCESS, READ_REPLY, WRITE_BUS, DMA_IN, DMA_OUT = range(9)
# accumulators (``acc``), besides the per-type, per-device and per-CPU-count arrays
A_CPU_RESIDENCE, A_IO_RESIDENCE, A_DMA, A_CPU_BUSY = range(4)
# the service times (``times``, seconds)
T_IO_REQUEST, T_IO_REPLY, T_IO_WRITE, T_SEEK, T_ROTATION, T_TRANSFER, T_DCACHE = range(7)


@jit(inline=True)
def _access(times, exponential_disks):
    """A disk access: seek and rotation uniform on [0, twice the mean], transfer fixed
    (``mechanical``), or exponential with the same mean."""
    mean = times[T_SEEK] + times[T_ROTATION] + times[T_TRANSFER]
    if exponential_disks:
        return exponential(mean)
    return 2.0 * times[T_SEEK] * np.random.random() + 2.0 * times[T_ROTATION] * np.random.random() \
        + times[T_TRANSFER]


@jit(inline=True)
def _choose(cumulative):
    """An index drawn with the probabilities whose running sum is ``cumulative``."""
    u = np.random.random() * cumulative[cumulative.shape[0] - 1]
    for k in range(cumulative.shape[0]):
        if u < cumulative[k]:
            return k
    return cumulative.shape[0] - 1


@jit(inline=True)
def _begin_think(i, t, kind, stage, timer, mix_cumulative, keying, think_mean):
    """Terminal ``i`` picks its next transaction type and thinks (keying plus an
    exponential think time of the type's mean)."""
    c = _choose(mix_cumulative)
    kind[i] = c
    stage[i] = THINK
    timer[i] = t + keying[c] + exponential(think_mean[c])


@jit
def start(timer, stage, kind, mix_cumulative, keying, think_mean):
    """Every terminal starts thinking before its first transaction."""
    for i in range(timer.shape[0]):
        _begin_think(i, 0.0, kind, stage, timer, mix_cumulative, keying, think_mean)


@jit(inline=True)
def _work_off(t, running, rate, cpu_queue, burst, cpu_last):
    """The running bursts' progress since the CPU centre last changed."""
    for q in range(running):
        burst[cpu_queue[q]] -= (t - cpu_last[0]) * rate
    cpu_last[0] = t


@jit(inline=True)
def _bus_hold(s, times, exponential_disks):
    """How long a terminal at stage ``s`` holds its bus: a read's request or reply, or a
    write's bus time plus the whole access (eq. 3.7)."""
    if s == READ_REQUEST:
        return times[T_IO_REQUEST]
    if s == READ_REPLY:
        return times[T_IO_REPLY]
    return times[T_IO_WRITE] + _access(times, exponential_disks)


@jit(inline=True)
def _want_bus(i, b, t, stage, timer, bus_holder, bus_queue, bus_head, bus_n, held_since, times, exponential_disks):
    """Terminal ``i`` takes bus ``b`` if it is free, else queues for it."""
    if bus_holder[b] < 0:
        bus_holder[b] = i
        held_since[i] = t
        timer[i] = t + _bus_hold(stage[i], times, exponential_disks)
    else:
        bus_queue[b, (bus_head[b] + bus_n[b]) % bus_queue.shape[1]] = i
        bus_n[b] += 1
        timer[i] = np.inf


@jit(inline=True)
def _queue_disk(i, d, stage, disk_queue, disk_head, disk_n):
    stage[i] = DISK_QUEUE
    disk_queue[d, (disk_head[d] + disk_n[d]) % disk_queue.shape[1]] = i
    disk_n[d] += 1


@jit
def run(n_events, clock, timer, stage, kind, ops_left, burst, burst_work, disk_of, is_write, tx_start, tx_cpu,
        tx_io, phase_start, cpu_queue, cpu_n, cpu_last, bus_holder, bus_queue, bus_head, bus_n, disk_holder,
        disk_queue, disk_head, disk_n, held_since, mix_cumulative, keying, think_mean, cpu_work, ops_mean,
        op_cumulative, bus_of_disk, times, cpu_servers, cpu_rate, dma_blocks, dma_latency, exponential_disks, done,
        response, acc, busy_bus, busy_disk, time_at):
    """Advance ``n_events`` events.

    Accumulates per type ``done`` (completed transactions) and ``response`` (their summed
    response times, s); ``busy_bus``/``busy_disk`` (held time, s); ``time_at[j]`` (s with
    j bursts running on the CPUs); ``acc`` (see the ``A_`` indices: summed CPU-centre and
    I/O residence of completed transactions, cache blocks moved to or from memory, time
    with the CPU centre busy).
    """
    n_term = timer.shape[0]
    t = clock[0]
    for _ in range(n_events):
        # the CPU centre's next completion: the running burst with the least work left
        running = min(cpu_n[0], cpu_servers)
        rate = cpu_rate[running]
        cpu_next, cpu_pos = np.inf, -1
        for q in range(running):
            finish = cpu_last[0] + burst[cpu_queue[q]] / rate
            if finish < cpu_next:
                cpu_next, cpu_pos = finish, q
        best, who = cpu_next, -1
        for i in range(n_term):
            if timer[i] < best:
                best, who = timer[i], i
        elapsed = best - t
        time_at[running] += elapsed
        if cpu_n[0] > 0:
            acc[A_CPU_BUSY] += elapsed
        t = best
        to_cpu = False
        if who < 0:
            # a burst ends: work off the running bursts' progress, take it out of the queue
            _work_off(t, running, rate, cpu_queue, burst, cpu_last)
            i = cpu_queue[cpu_pos]
            for q in range(cpu_pos, cpu_n[0] - 1):
                cpu_queue[q] = cpu_queue[q + 1]
            cpu_n[0] -= 1
            tx_cpu[i] += t - phase_start[i]
            if ops_left[i] == 0:                       # the transaction completes
                c = kind[i]
                done[c] += 1.0
                response[c] += t - tx_start[i]
                acc[A_CPU_RESIDENCE] += tx_cpu[i]
                acc[A_IO_RESIDENCE] += tx_io[i]
                _begin_think(i, t, kind, stage, timer, mix_cumulative, keying, think_mean)
                continue
            # the next disk operation: which disk, read or write
            ops_left[i] -= 1
            phase_start[i] = t
            pick = _choose(op_cumulative[kind[i]])
            disk_of[i] = pick // 2
            is_write[i] = pick % 2
            if is_write[i]:                            # the block comes from memory first
                stage[i] = DMA_OUT
                acc[A_DMA] += dma_blocks
                timer[i] = t + dma_blocks * dma_latency[min(cpu_n[0], cpu_servers)]
            else:                                      # the read request on the bus
                stage[i] = READ_REQUEST
                _want_bus(i, bus_of_disk[disk_of[i]], t, stage, timer, bus_holder, bus_queue, bus_head, bus_n,
                          held_since, times, exponential_disks)
            continue
        i = who
        s = stage[i]
        d = disk_of[i]
        timer[i] = np.inf
        if s == THINK:                                 # a transaction begins
            c = kind[i]
            tx_start[i] = t
            tx_cpu[i] = 0.0
            tx_io[i] = 0.0
            m = ops_mean[c]
            whole = np.floor(m)
            ops_left[i] = int(whole) + (1 if np.random.random() < m - whole else 0)
            burst_work[i] = cpu_work[c] / (ops_left[i] + 1)
            to_cpu = True
        elif s == READ_REQUEST or s == READ_REPLY or s == WRITE_BUS:
            # a bus hold ends: the next in the bus's queue takes it
            b = bus_of_disk[d]
            busy_bus[b] += t - held_since[i]
            bus_holder[b] = -1
            if bus_n[b] > 0:
                j = bus_queue[b, bus_head[b]]
                bus_head[b] = (bus_head[b] + 1) % bus_queue.shape[1]
                bus_n[b] -= 1
                _want_bus(j, b, t, stage, timer, bus_holder, bus_queue, bus_head, bus_n, held_since, times,
                          exponential_disks)
            if s == READ_REQUEST:                      # on to the disk's queue
                _queue_disk(i, d, stage, disk_queue, disk_head, disk_n)
            else:                                      # the disk is free again
                busy_disk[d] += t - held_since[n_term + d]
                disk_holder[d] = -1
                if s == READ_REPLY:                    # the block goes to memory
                    stage[i] = DMA_IN
                    acc[A_DMA] += dma_blocks
                    timer[i] = t + dma_blocks * dma_latency[min(cpu_n[0], cpu_servers)]
                else:
                    tx_io[i] += t - phase_start[i]
                    to_cpu = True
        elif s == READ_ACCESS:                         # the read waits to regain its bus
            stage[i] = READ_REPLY
            _want_bus(i, bus_of_disk[d], t, stage, timer, bus_holder, bus_queue, bus_head, bus_n, held_since,
                      times, exponential_disks)
        elif s == DMA_IN:
            tx_io[i] += t - phase_start[i]
            to_cpu = True
        elif s == DMA_OUT:                             # a write queues for its disk
            _queue_disk(i, d, stage, disk_queue, disk_head, disk_n)
        # the disk this event touched, if free, takes the next in its queue (no other
        # disk changed, and a free disk never keeps a queue)
        if s != THINK and disk_holder[d] < 0 and disk_n[d] > 0:
            j = disk_queue[d, disk_head[d]]
            disk_head[d] = (disk_head[d] + 1) % disk_queue.shape[1]
            disk_n[d] -= 1
            disk_holder[d] = j
            held_since[n_term + d] = t
            if is_write[j]:                            # a write holds its bus through the access
                stage[j] = WRITE_BUS
                _want_bus(j, bus_of_disk[d], t, stage, timer, bus_holder, bus_queue, bus_head, bus_n, held_since,
                          times, exponential_disks)
            else:
                stage[j] = READ_ACCESS
                timer[j] = t + _access(times, exponential_disks) + times[T_DCACHE]
        if to_cpu:                                     # the next burst joins the CPU queue
            running = min(cpu_n[0], cpu_servers)
            _work_off(t, running, cpu_rate[running], cpu_queue, burst, cpu_last)
            stage[i] = CPU
            phase_start[i] = t
            burst[i] = burst_work[i]
            cpu_queue[cpu_n[0]] = i
            cpu_n[0] += 1
    clock[0] = t
