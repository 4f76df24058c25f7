"""An independent re-computation of the TPC-C model of Du & Zhang (2001), for the tests.

Plain Python (no numpy, no `mva`, no `models`): reads the CSVs with the csv module, works
in cycles (the model works in seconds), combines disks by enumerating the 2^D busy sets
(the model uses a sorted closed form), and solves each population's fixed point by damped
successive substitution (the model brackets the root).  It follows section 3.2 of the
paper step by step, for the single-class model with the 'paper' disk parallelism, with
the paper's CPU centre or the stalling one (``centre="stalling"``: the processors, bus and
memory solved together by plain MVA for each number of busy processors), and the paper's
I/O centre or separate disks (``io="separate"``).

The reading of Tables 6-8 is a choice here too: ``block``, ``sector`` and ``bus_unit``
bytes (a disk access moves ``block`` bytes, in ``block / sector`` of Table 7's transfer
times and ``block / bus_unit`` of its I/O bus latencies; 256, 256, 256 is one sector a
visit, as Table 8 prints it), ``speed`` (the processors' relative speed of computing, dividing the
cycles between misses) and ``mechanical`` (separate disks whose seek and rotation are uniform: a
bus wait by the Pollaczek-Khinchine residual of the other disks' holds, and a disk's queue
as FCFS with the variance of its holding time, the term fading with its idle share).
"""
import csv
import itertools
import os

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "models", "tpcc_smp", "tables")


def _rows(name):
    with open(os.path.join(DATA, name + ".csv"), newline="") as fh:
        return list(csv.DictReader(fh))


def inputs():
    mix_rows = _rows("table2_mix")
    mix = [float(r["min_mix_percent"]) / 100 if r["min_mix_percent"] else None for r in mix_rows]
    mix[0] = 1 - sum(m for m in mix[1:])
    think = sum(p * (float(r["min_keying_time_s"]) + float(r["min_mean_think_time_s"])) for p, r in zip(mix, mix_rows, strict=False))
    t6 = _rows("table6_visits")
    avg = {k: sum(p * float(r[k]) for p, r in zip(mix, t6, strict=False))
           for k in ("cpu", "memory_read", "memory_write", "disk_read", "disk_write")}
    t5 = [float(r["probability"]) for r in _rows("table5_access")]
    return mix, think, avg, t5


def rates_by_mva(cpu_cycles, bus_cycles, n_max):
    """Throughput (per cycle) of a CPU queue plus a bus queue, j = 1..n_max, plain MVA."""
    q_cpu = q_bus = 0.0
    out = []
    for j in range(1, n_max + 1):
        r_cpu, r_bus = cpu_cycles * (1 + q_cpu), bus_cycles * (1 + q_bus)
        x = j / (r_cpu + r_bus)
        q_cpu, q_bus = x * r_cpu, x * r_bus
        out.append(x)
    return out


def rates_stalling(compute_cycles, bus_cycles, memory_cycles, cpus):
    """Transactions per cycle with m = 1..cpus busy processors: each computes (its own
    processor, a delay) and stalls at the bus and the memory (queues), plain MVA."""
    q_bus = q_mem = 0.0
    out = []
    for m in range(1, cpus + 1):
        r_bus, r_mem = bus_cycles * (1 + q_bus), memory_cycles * (1 + q_mem)
        x = m / (compute_cycles + r_bus + r_mem)
        q_bus, q_mem = x * r_bus, x * r_mem
        out.append(x)
    return out


def expected_max_busy(demands, utils):
    total = 0.0
    for busy in itertools.product((0, 1), repeat=len(demands)):
        p = 1.0
        for b, u in zip(busy, utils, strict=False):
            p *= u if b else 1 - u
        chosen = [d for b, d in zip(busy, demands, strict=False) if b]
        total += p * (max(chosen) if chosen else 0.0)
    return total


def _bus_wait(p_r, hold, u_bus, u_own, mechanical):
    """A disk's wait to regain its bus: the paper's mean hold over 1 - U_bus, or (mechanical)
    the residual life E[H^2] / 2 E[H] of the holds over the other disks' traffic alone.
    ``hold``: a read's request and reply, a write's hold, the access's variance (cycles)."""
    req, rep, write, variance = hold
    others = u_bus - u_own
    mean_hold = (1 - p_r) * write + p_r * (req + rep)
    if not mechanical:
        return mean_hold * others / (1 - u_bus)
    second = (1 - p_r) * (write ** 2 + variance) + p_r * (req ** 2 + rep ** 2)
    return second / (2 * mean_hold) * others / (1 - others)


def _hold_scv(reads, writes, read_hold, write_hold, variance):
    """The squared coefficient of variation of a disk's holding time per access."""
    ops = reads + writes
    mean = (reads * read_hold + writes * write_hold) / ops
    second = (reads * read_hold ** 2 + writes * write_hold ** 2) / ops + variance
    return second / mean ** 2 - 1


def solve(terminals, table_to_disk, n_disks, disk_to_bus, n_buses, scale, cpu_rate=None, hit=0.9,
          centre="paper", cpus=1, cpi=1.0, io="paper", block=256, sector=256, bus_unit=256, speed=1.0,
          mechanical=False, seek=1e6, lat=1.5e6):
    """tpmC and the utilisations for one configuration (the paper's Table 7 times)."""
    mix, think_s, avg, t5 = inputs()
    clock = 200e6
    z = think_s * clock                                   # cycles
    s_req, s_rep, s_mem = 2.0, 10.0, 100.0
    units = block / bus_unit
    io_req, io_rep, io_lat = 120.0, 4850.0 * units, 5120.0 * units
    tr, dcache = 42000.0 * block / sector, 150.0
    disk_time = seek + lat + tr
    var_access = (seek * seek + lat * lat) / 3.0          # uniform seek and rotation, fixed transfer
    v_cpu_mem = (1 - hit) * (avg["memory_read"] + avg["memory_write"])
    share = [0.0] * n_disks
    total_p = sum(t5)
    for t, d in enumerate(table_to_disk):
        share[d - 1] += t5[t] / total_p
    reads = [scale * avg["disk_read"] * s for s in share]
    writes = [scale * avg["disk_write"] * s for s in share]
    v_disk_mem = block / 32 * (sum(reads) + sum(writes))
    p_r = sum(reads) / (sum(reads) + sum(writes))
    # CPU centre: mu(j) per cycle, in instructions
    if cpu_rate is None and centre == "paper":
        assert cpus == 1, "the paper's centre is recomputed here for one CPU"
        per_tx = rates_by_mva(avg["cpu"] * cpi, v_cpu_mem * (s_req + s_rep), terminals)
        cpu_rate = [x * avg["cpu"] for x in per_tx]
    elif cpu_rate is None:
        per_tx = rates_stalling(avg["cpu"] * cpi / speed, v_cpu_mem * (s_req + s_rep), v_cpu_mem * s_mem, cpus)
        cpu_rate = [x * avg["cpu"] for x in per_tx]
    # the memory bus's and memory's residences: all visits, or the disks' transfers only
    # when the processors' misses stall inside the CPU centre
    kept = 1.0 if centre == "paper" else v_disk_mem / (v_cpu_mem + v_disk_mem)
    mu = [cpu_rate[min(j, len(cpu_rate)) - 1] for j in range(1, terminals + 1)]

    def demands(x):
        d_mbus = (v_cpu_mem + v_disk_mem) * (s_req + s_rep)
        u_mbus = x * d_mbus
        u_mbus_mem = x * v_cpu_mem * (s_req + s_rep)
        d_mem = (v_cpu_mem + v_disk_mem) * (s_mem + (s_req + s_rep) / 2 * (u_mbus - u_mbus_mem) / (1 - u_mbus))
        bus_by_disk = [reads[d] * (io_req + io_rep) + writes[d] * (io_lat + disk_time) for d in range(n_disks)]
        d_bus = [sum(bus_by_disk[d] for d in range(n_disks) if disk_to_bus[d] == b + 1) for b in range(n_buses)]
        u_bus = [x * d for d in d_bus]
        d_disk = []
        for d in range(n_disks):
            ub = u_bus[disk_to_bus[d] - 1]
            wait = ((1 - p_r) * (io_lat + disk_time) + p_r * (io_req + io_rep)) * (ub - x * bus_by_disk[d]) / (1 - ub)
            d_disk.append(reads[d] * (disk_time + dcache + wait) + writes[d] * disk_time)
        if io == "separate":
            hold = (io_req, io_rep, io_lat + disk_time, var_access)
            waits = [_bus_wait(p_r, hold, u_bus[disk_to_bus[d] - 1], x * bus_by_disk[d], mechanical)
                     for d in range(n_disks)]
            # each disk holds what the machine holds it for: a read's reply, a write's bus time
            held = [reads[d] * (disk_time + dcache + waits[d] + io_rep) + writes[d] * (waits[d] + io_lat + disk_time)
                    for d in range(n_disks)]
            requests = sum(reads[d] * (io_req + waits[d]) for d in range(n_disks))
            scv = [_hold_scv(reads[d], writes[d], disk_time + dcache + waits[d] + io_rep,
                             waits[d] + io_lat + disk_time, var_access) for d in range(n_disks)]
            return d_mbus, d_mem, (held, requests, scv), u_mbus, x * d_mem, u_bus, [x * h for h in held]
        u_disk = [min(1.0, x * d) for d in d_disk]
        d_io = sum(d_bus) + expected_max_busy(d_disk, u_disk)
        return d_mbus, d_mem, d_io, u_mbus, x * d_mem, u_bus, [x * d for d in d_disk]

    def residences(d, q):
        """Memory bus, memory, then the I/O centre's (one) or each disk's and the requests'."""
        out = [d[0] * kept * (1 + q[0]), d[1] * kept * (1 + q[1])]
        if io == "separate":
            held, requests, _ = d[2]
            return out + [h * (1 + q[2 + k]) for k, h in enumerate(held)], requests
        return out + [d[2] * (1 + q[2])], 0.0

    q = [0.0] * (2 + max(1, n_disks))
    p = [1.0] + [0.0] * terminals
    x = 0.0
    for n in range(1, terminals + 1):
        r_cpu = avg["cpu"] * sum(j / mu[j - 1] * p[j - 1] for j in range(1, n + 1))
        for _ in range(100000):
            r, requests = residences(demands(x), q)
            new = n / (z + r_cpu + sum(r) + requests)
            if abs(new - x) <= 1e-15 * new:
                break
            x = 0.5 * (x + new)
        x = new
        d_now = demands(x)
        r, requests = residences(d_now, q)
        q = [x * ri for ri in r]
        if io == "separate" and mechanical:
            # the access in progress has (1 + scv) / 2 of a mean left, fading with the idle share
            held, _, scv = d_now[2]
            for k in range(n_disks):
                u = min(1.0, x * held[k])
                q[2 + k] -= u * (1 - u) * (1 - scv[k]) / 2
        new_p = [0.0] * (terminals + 1)
        for j in range(1, n + 1):
            new_p[j] = x * avg["cpu"] / mu[j - 1] * p[j - 1]
        new_p[0] = 1 - sum(new_p[1:])
        p = new_p
    d = demands(x)
    per_s = x * clock
    util = {"cpu": 1 - p[0], "memory_bus": d[3], "memory": d[4]}
    util.update({f"io_bus_{b + 1}": u for b, u in enumerate(d[5])})
    util.update({f"disk_{k + 1}": u for k, u in enumerate(d[6])})
    return {"tpmC": 60 * mix[0] * per_s, "throughput": per_s, "utilization": util,
            "response_time": terminals / per_s - think_s}
