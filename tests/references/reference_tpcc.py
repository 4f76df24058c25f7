"""An independent re-computation of the TPC-C model of Du & Zhang (2001), for the tests.

Plain Python (no numpy, no `mva`, no `models`): reads the CSVs with the csv module, works
in cycles (the model works in seconds), combines disks by enumerating the 2^D busy sets
(the model uses a sorted closed form), and solves each population's fixed point by damped
successive substitution (the model brackets the root).  It follows section 3.2 of the
paper step by step, for the single-class model with the 'paper' disk parallelism, with
the paper's CPU centre or the stalling one (``centre="stalling"``: the processors, bus and
memory solved together by plain MVA for each number of busy processors), and the paper's
I/O centre or separate disks (``io="separate"``).
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


def solve(terminals, table_to_disk, n_disks, disk_to_bus, n_buses, scale, cpu_rate=None, hit=0.9,
          centre="paper", cpus=1, cpi=1.0, io="paper"):
    """tpmC and the utilisations for one configuration (the paper's Table 7 times)."""
    mix, think_s, avg, t5 = inputs()
    clock = 200e6
    z = think_s * clock                                   # cycles
    s_req, s_rep, s_mem = 2.0, 10.0, 100.0
    io_req, io_rep, io_lat = 120.0, 4850.0, 5120.0
    seek, lat, tr, dcache = 1e6, 1.5e6, 42000.0, 150.0
    disk_time = seek + lat + tr
    v_cpu_mem = (1 - hit) * (avg["memory_read"] + avg["memory_write"])
    share = [0.0] * n_disks
    total_p = sum(t5)
    for t, d in enumerate(table_to_disk):
        share[d - 1] += t5[t] / total_p
    reads = [scale * avg["disk_read"] * s for s in share]
    writes = [scale * avg["disk_write"] * s for s in share]
    v_disk_mem = 256 / 32 * (sum(reads) + sum(writes))
    p_r = sum(reads) / (sum(reads) + sum(writes))
    # CPU centre: mu(j) per cycle, in instructions
    if cpu_rate is None and centre == "paper":
        assert cpus == 1, "the paper's centre is recomputed here for one CPU"
        per_tx = rates_by_mva(avg["cpu"] * cpi, v_cpu_mem * (s_req + s_rep), terminals)
        cpu_rate = [x * avg["cpu"] for x in per_tx]
    elif cpu_rate is None:
        per_tx = rates_stalling(avg["cpu"] * cpi, v_cpu_mem * (s_req + s_rep), v_cpu_mem * s_mem, cpus)
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
            # each disk holds what the machine holds it for: a read's reply, a write's bus time
            waits = []
            for d in range(n_disks):
                ub = u_bus[disk_to_bus[d] - 1]
                waits.append(((1 - p_r) * (io_lat + disk_time) + p_r * (io_req + io_rep))
                             * (ub - x * bus_by_disk[d]) / (1 - ub))
            held = [reads[d] * (disk_time + dcache + waits[d] + io_rep) + writes[d] * (waits[d] + io_lat + disk_time)
                    for d in range(n_disks)]
            requests = sum(reads[d] * (io_req + waits[d]) for d in range(n_disks))
            return d_mbus, d_mem, (held, requests), u_mbus, x * d_mem, u_bus, [x * h for h in held]
        u_disk = [min(1.0, x * d) for d in d_disk]
        d_io = sum(d_bus) + expected_max_busy(d_disk, u_disk)
        return d_mbus, d_mem, d_io, u_mbus, x * d_mem, u_bus, [x * d for d in d_disk]

    def residences(d, q):
        """Memory bus, memory, then the I/O centre's (one) or each disk's and the requests'."""
        out = [d[0] * kept * (1 + q[0]), d[1] * kept * (1 + q[1])]
        if io == "separate":
            held, requests = d[2]
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
        r, requests = residences(demands(x), q)
        q = [x * ri for ri in r]
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
