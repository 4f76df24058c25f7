"""Reproduction of Du & Zhang (2001)'s Tables 10-18 by the TPC-C SMP model.

``python -m models.tpcc_smp.report`` prints, for every published value, the paper's number,
ours and the relative difference; the mean and max tpmC error; whether each of the paper's
qualitative conclusions holds in our model; the paper's internal inconsistencies, measured;
and the five-class variant against the single-class model.  ``reproduce()`` returns the
same content as data for notebooks and tests.

Options: ``--set NAME=VALUE`` (any model parameter, applied to every case, e.g.
``--set io.disk_parallelism=serial``), ``--inputs FILE`` (a model file's inputs applied to
every case, its configuration left to each table: ``--inputs data/tpcc/c2-postgres.toml``
reproduces the tables with the inputs traced from PostgreSQL) and ``--format text|json``.
"""
from __future__ import annotations

from mva.arguments import OneLineParser
import json
import sys
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from mva.errors import ModelError
from mva.modelkind import parse_assignments, resolve_values

from . import data
from .ceiling import one_cpu_bound
from .model import CALIBRATED, PARAMETERS, TPCCSMP, disk_visit_scale_from_table12

__all__ = ["Reproduction", "reproduce", "case_values", "file_inputs", "main", "CONFIGURATION_KEYS"]

#: What a published case sets itself (Table 9 and the mappings): a file's values for
#: these are not inputs.
CONFIGURATION_KEYS = ("cpus", "io_buses", "disks", "mapping.table_to_disk", "mapping.disk_to_bus", "terminals")


def file_inputs(path) -> dict:
    """A model file's values other than the configuration (:data:`CONFIGURATION_KEYS`)."""
    from mva.files import read_document
    from mva.modelkind import flatten_document

    try:
        doc = read_document(str(path))
    except OSError as exc:
        raise ModelError("--inputs", f"cannot read {path} ({exc.strerror})") from None
    if doc.get("kind") != "tpcc_smp":
        raise ModelError("--inputs", f"{path} is not a tpcc_smp model file (kind = {doc.get('kind')!r})")
    values = flatten_document({k: v for k, v in doc.items() if k not in ("kind", "name")})
    return {k: v for k, v in values.items() if k not in CONFIGURATION_KEYS}

def case_values(row, base: dict | None = None) -> dict:
    """Model parameters of one published case (a row of the published CSVs)."""
    values = dict(base or {})
    values.update(cpus=int(row.cpus), io_buses=int(row.io_buses), disks=int(row.disks))
    values["mapping.table_to_disk"] = data.mapping(row.mapping)
    if isinstance(row.parameter, str) and row.parameter:
        for name, value in zip(row.parameter.split(";"), str(row.value).split(";"), strict=False):
            values[name] = float(value)
    return values


@dataclass
class Reproduction:
    """Everything the report prints, as data."""

    tpmc: pd.DataFrame                     # table, configuration, parameter, value, paper, model, rel_diff
    utilization: pd.DataFrame              # table, configuration, ..., device, paper, model, diff (points)
    conclusions: list = field(default_factory=list)    # (claim, holds, evidence, why)
    inconsistencies: list = field(default_factory=list)  # (what, numbers)
    classes: pd.DataFrame | None = None    # configuration, single, transaction, rel_diff
    access: pd.DataFrame | None = None     # table, name, table5, from_table4, diff
    base: dict = field(default_factory=dict)

    @property
    def tpmc_error(self) -> tuple[float, float]:
        """Mean and max |relative tpmC difference| over Tables 10, 11, 13-17."""
        err = self.tpmc["rel_diff"].abs()
        return float(err.mean()), float(err.max())


class _Solver:
    """Solves cases once each (many published rows share a case)."""

    def __init__(self, base):
        self.base = base
        self.cache = {}

    def __call__(self, values):
        key = tuple(sorted((k, tuple(v) if isinstance(v, (list, tuple)) else v) for k, v in values.items()))
        if key not in self.cache:
            self.cache[key] = TPCCSMP.from_values({**self.base, **values}).solve()
        return self.cache[key]


def _tpmc_rows(solve, base):
    rows = []
    for row in data.published_tpmc().itertuples():
        sol = solve(case_values(row))
        rows.append({"table": row.table, "configuration": row.configuration, "mapping": row.mapping,
                     "parameter": row.parameter if isinstance(row.parameter, str) else "",
                     "value": row.value if isinstance(row.value, str) or not np.isnan(row.value) else "",
                     "paper": row.tpmC, "model": sol.outputs["tpmC"],
                     "rel_diff": sol.outputs["tpmC"] / row.tpmC - 1.0})
    return pd.DataFrame(rows)


def model_device(device: str, disks: int, io_buses: int) -> str:
    """Our name of a device the paper names.  The paper numbers disks by its K x L layout,
    two per bus (disks 1, 2 on bus 1; 3, 4 on bus 2), so C4's two disks are its disks 1
    and 3; our model numbers disks consecutively, spread evenly over the buses."""
    if io_buses > 1 and device.startswith("disk_"):
        d = int(device[len("disk_"):])
        bus, position = (d - 1) // 2, (d - 1) % 2
        return f"disk_{bus * (disks // io_buses) + position + 1}"
    return device


def _utilization_rows(solve):
    rows = []
    for row in data.published_utilization().itertuples():
        sol = solve(case_values(row))
        device = model_device(row.device, int(row.disks), int(row.io_buses))
        if device not in sol.outputs["utilization"]:
            raise KeyError(f"Table {row.table} {row.configuration}: no device {device} in the model")
        model = sol.outputs["utilization"][device] * 100.0
        rows.append({"table": row.table, "configuration": row.configuration, "mapping": row.mapping,
                     "parameter": row.parameter if isinstance(row.parameter, str) else "",
                     "value": row.value if isinstance(row.value, str) else "",
                     "device": row.device, "paper": row.utilization_percent, "model": model,
                     "diff_points": model - row.utilization_percent})
    return pd.DataFrame(rows)


def _conclusions(solve):
    """The paper's five qualitative claims, tested on our model.

    Each entry is ``(claim, holds, evidence, why)``; ``why`` is empty when the claim holds,
    otherwise the numbers (from the paper's own tables and equations) that explain it.
    """
    t = lambda values: solve(values).outputs["tpmC"]        # noqa: E731
    return [claim(solve, t) for claim in (_disk_parameters_ranked, _bus_beats_disks, _memory_latency_gains,
                                          _allocation_e_best, _cpu_steps)]


def _disk_parameters_ranked(solve, t):
    """Claim: disk rotation, seek and transfer time ranked by their impact; (claim, holds, evidence, why)."""
    cuts = {"disk.rotation_latency": 0.9e6, "disk.seek_time": 0.6e6, "disk.transfer_time": 25200.0}
    gains = {}
    for cfg in ("C2", "C3", "C5", "C4", "C6"):
        base = data.configuration_values(cfg)
        gains[cfg] = {k: t({**base, k: v}) / t(base) - 1.0 for k, v in cuts.items()}
    holds = all(g["disk.rotation_latency"] > g["disk.seek_time"] > g["disk.transfer_time"] for g in gains.values())
    evidence = "; ".join(f"{c}: rotation {g['disk.rotation_latency']:+.1%}, seek {g['disk.seek_time']:+.1%}, "
                         f"transfer {g['disk.transfer_time']:+.1%}" for c, g in gains.items())
    return ("rotation latency > seek time > transfer time in impact (each cut by 40%)", holds, evidence,
                "" if holds else "see the per-configuration gains")


def _bus_beats_disks(solve, t):
    """Claim: a second I/O bus against more disks; (claim, holds, evidence, why)."""
    c2t, c3, c4, c5, c6 = (t(data.configuration_values(c)) for c in ("C2", "C3", "C4", "C5", "C6"))
    bus_gain = [c4 / c3 - 1, c6 / c5 - 1]
    disk_gain = [c3 / c2t - 1, c5 / c3 - 1]
    holds = min(bus_gain) > max(disk_gain)
    u12 = data.published_utilization().query("table == 12")
    u = {(r.configuration, r.device): r.utilization_percent for r in u12.itertuples()}
    why = "" if holds else (
        "eq. 3.9 puts every bus in one I/O centre, D_I/O = sum of the D_IOBus + D_Disk ('an I/O bus cannot be "
        "in operation in parallel with other I/O buses'), so a second bus lowers only the read-contention term. "
        f"The paper's own Table 12 gives C3 one bus at {u[('C3', 'io_bus_1')]:.1f}% and C4 two at "
        f"{u[('C4', 'io_bus_1')]:.1f}% + {u[('C4', 'io_bus_2')]:.1f}% = "
        f"{u[('C4', 'io_bus_1')] + u[('C4', 'io_bus_2')]:.1f}% (the same bus demand), and identical disk "
        f"utilisations ({u[('C3', 'disk_1')]:.1f}%, {u[('C3', 'disk_2')]:.1f}%), so eq. 3.9 gives C4 and C3 "
        "the same D_I/O; yet Tables 14-16 report C3 48.7 -> C4 56.3 tpmC (+15.6%)")
    return ("a second I/O bus helps more than more disks", holds,
                f"adding a bus: C3->C4 {bus_gain[0]:+.1%}, C5->C6 {bus_gain[1]:+.1%}; adding disks on one bus: "
                f"C2->C3 {disk_gain[0]:+.1%}, C3->C5 {disk_gain[1]:+.1%}", why)


def _memory_latency_gains(solve, t):
    """Claim: memory latency halved until the I/O bus saturates (Table 11 sweep); (claim, holds, evidence, why)."""
    c2 = solve(data.configuration_values("C2"))
    x_paper = 47.2 / 60 / data.mix()[0]
    sweep = [solve({**data.configuration_values("C2"), "memory.latency": float(m), "memory_bus.reply_latency": float(m) / 10})
             for m in (100, 90, 80, 70, 60, 50)]
    tp = np.array([s.outputs["tpmC"] for s in sweep])
    bus = np.array([s.outputs["utilization"]["io_bus_1"] for s in sweep])
    steps = np.diff(tp)
    holds = bool(np.all(steps >= -1e-9) and tp[-1] / tp[0] - 1 >= 0.05 and steps[-1] < steps[0]
                 and bus[-1] > bus[0])
    z = TPCCSMP.from_values({}).mean_think_time()
    x_fast = 59.6 / 60 / data.mix()[0]
    why = "" if holds else (
        f"Table 11 (47.2 -> 59.6 tpmC) means the response time falls from {48 / x_paper - z:.2f} s to "
        f"{48 / x_fast - z:.2f} s when memory and bus reply latency halve, so memory would have to account for "
        f"over {48 / x_paper - 48 / x_fast:.1f} s per transaction; by eq. 3.6 with Table 6 and the 90% hit "
        f"rate its demand is {sweep[0].extras.get('memory_demand', float('nan')):.3f} s and in our model its "
        f"whole residence time is {sweep[0].outputs['residence_time']['memory']:.2f} s, while the I/O centre "
        f"of eq. 3.9 is {c2.outputs['utilization']['io_system']:.0%} busy (Table 12: disk 63.4%, I/O bus "
        "40.3%, memory bus 58.7% at C2: the disk, not memory, is the busiest device)")
    return ("halving memory latency helps (>= 5%), with shrinking gains as the I/O bus fills", holds,
                "tpmC " + ", ".join(f"{v:.1f}" for v in tp) + "; I/O bus " + ", ".join(f"{u:.0%}" for u in bus), why)


def _allocation_e_best(solve, t):
    """Claim: allocation E the best of A-E; (claim, holds, evidence, why)."""
    alloc = {a: t({**data.configuration_values("C6"), "mapping.table_to_disk": data.mapping(a)}) for a in "ABCDE"}
    best = max(alloc, key=alloc.get)
    t5 = data.table5_access() / data.table5_access().sum()
    loads = {a: [sum(t5[i] for i in range(9) if data.mapping(a)[i] == d) for d in (1, 2, 3, 4)] for a in "ABCDE"}
    why = "" if best == "E" else (
        "the model spreads disk visits by Table 5; E puts " + ", ".join(f"{x:.1%}" for x in loads["E"])
        + " of accesses on disks 1-4 (disk 4 carries Warehouse, District, Stock, Customer and New-Order), "
        "against B's " + ", ".join(f"{x:.1%}" for x in loads["B"]) + "; Table 18 instead shows E's four "
        "disks 38-54% busy, which no Table 5 split of E can produce (disk 2 holds only History, 0.36%)")
    return ("allocation E is the best of A-E", best == "E",
                ", ".join(f"{a} {v:.1f}" for a, v in alloc.items()) + f" (best: {best})", why)


def _cpu_steps(solve, t):
    """Claim: 1 -> 2 CPUs the big step, flat after; (claim, holds, evidence, why)."""
    cpus = [t({**data.configuration_values("C1"), "cpus": k}) for k in (1, 2, 3, 4)]
    g = [cpus[i + 1] / cpus[i] - 1 for i in range(3)]
    holds = g[0] >= 0.10 and g[0] > 2 * g[1] and g[0] > 2 * g[2]
    one_cpu = solve({**data.configuration_values("C1"), "cpus": 1})
    vis = data.visits()
    cpu_s = data.mix() @ vis["cpu"] / data.CLOCK_HZ
    why = "" if holds else (
        f"with Table 6 (mix-weighted {data.mix() @ vis['cpu'] / 1e6:.1f} M instructions per transaction), "
        f"CPI 1 at 200 MHz and a 90% hit rate, one CPU is {one_cpu.outputs['utilization']['cpu']:.0%} busy at "
        f"N = 48 and the I/O centre saturates first; Table 10's 24.6 tpmC for one CPU needs "
        f"{1 / (24.6 / 60 / data.mix()[0]):.2f} s of CPU per transaction, {1 / (24.6 / 60 / data.mix()[0]) / cpu_s:.0f} "
        "times the instruction count (the paper's Fig. 5 rates are not printed; cpu.rate takes them)")
    return ("1 -> 2 CPUs is the big step (>= 10%, over twice each later step), flat after", holds,
                "tpmC " + ", ".join(f"{v:.1f}" for v in cpus) + " for 1-4 CPUs; steps "
                + ", ".join(f"{x:+.1%}" for x in g), why)


def _inconsistencies(model: TPCCSMP) -> list:
    """Where the paper's tables contradict each other, each (title, numbers)."""
    inputs = (model.values, data.mix(), data.visits(), data.service_times(), model.values["cpu.clock"])
    return _table_inconsistencies(model, *inputs) + _derived_inconsistencies(model, *inputs)


def _table_inconsistencies(model: TPCCSMP, v, mix, vis, t7, clock) -> list:
    """The inconsistencies between printed tables, each (title, numbers); ``v`` the model's
    values, ``mix``, ``vis``, ``t7`` the paper's mix, Table 6 visits and Table 7 times."""
    out = []
    reads, writes = mix @ vis["disk_read"], mix @ vis["disk_write"]
    out.append(("Table 6 disk visits vs Table 12 utilisations",
                f"Table 6: {reads:.1f} reads + {writes:.1f} writes per transaction = "
                f"{(reads + writes) * (t7['S_seek'] + t7['S_latency'] + t7['S_transfer']) / clock:.2f} s of disk "
                f"time, capping one disk at {60 * mix[0] * clock / ((reads + writes) * (t7['S_seek'] + t7['S_latency'] + t7['S_transfer'])):.1f} tpmC; "
                f"Table 12 (C2: 63.4% at 47.2 tpmC) implies {disk_visit_scale_from_table12():.4f} of them "
                f"(model.inputs = table6); read as sectors, 16 to an 8 KB page access, they are "
                f"{(reads + writes) / 16:.1f} accesses, and the fit on Table 10 gives "
                f"{CALIBRATED['workload.disk_visit_scale'] * (reads + writes):.1f} "
                f"(workload.disk_visit_scale {CALIBRATED['workload.disk_visit_scale']})"))
    t1 = data.table("table1_access")
    no_sum = t1[t1.transaction == "I"]["probability"].sum()
    out.append(("Table 1 vs Table 4",
                f"the New-Order column of Table 1 sums to {no_sum:.2f}, and lists History (0.09), which "
                f"Table 4's New-Order never touches"))
    from .equations import table_access_distribution
    derived = table_access_distribution(data.operation_counts(), mix)
    t5 = data.table5_access()
    worst = np.argsort(-np.abs(derived - t5))[:3]
    out.append(("Table 5 vs Table 4 and the mix",
                "largest gaps: " + ", ".join(f"table {i + 1} ({derived[i]:.3f} derived vs {t5[i]:.3f})" for i in worst)
                + "; the whole comparison is the table above (workload.access_distribution=table4 uses the "
                  "derived one)"))
    tp = data.published_tpmc()
    base13 = tp.query("table == 13 and value == '5120'")
    base14 = tp.query("table == 14 and value == '1000000'")
    diffs = [f"{c}: {a:.1f} vs {b:.1f}" for c, a, b in zip(base13.configuration, base13.tpmC, base14.tpmC, strict=False) if a != b]
    out.append(("the same baseline case differs between tables",
                "Table 13 at 5120 cycles vs Tables 14-16 at the Table 7 values: " + "; ".join(diffs)))
    z = model.mean_think_time()
    bound = 60 * mix[0] * v["terminals"] / z
    over = tp[tp.tpmC > bound]
    out.append(("tpmC above the think-time bound",
                f"N P_I 60 / Z = 48 x 0.45 x 60 / {z:.2f} s = {bound:.2f} tpmC at zero response time; "
                f"published values above it: " + ", ".join(f"Table {r.table} {r.configuration} {r.value}: {r.tpmC}"
                                                          for r in over.itertuples())))
    out.append(("Table 12 C2 I/O system over 100% busy",
                "U_IOBus + U_Disk = 40.3% + 63.4% = 103.7%, but eq. 3.9 serialises bus and disk time in one "
                "I/O centre; only the printed parallelism formula (D_Disk = U D for one disk) leaves room"))
    return out


def _derived_inconsistencies(model: TPCCSMP, v, mix, vis, t7, clock) -> list:
    """The inconsistencies that follow from the paper's equations: CPU demand, memory bus, I/O-bus
    sensitivity and allocation E, each (title, numbers); arguments as :func:`_table_inconsistencies`."""
    out = []
    z = model.mean_think_time()
    tp = data.published_tpmc()
    t5 = data.table5_access()
    cpu_s = mix @ vis["cpu"] * t7["S_CPU"] / clock
    out.append(("Table 10 vs Tables 6-7 (CPU demand)",
                f"Table 6 x CPI 1 at 200 MHz is {cpu_s * 1e3:.0f} ms of CPU per transaction (one CPU could carry "
                f"{60 * mix[0] / cpu_s:.0f} tpmC); Table 10's 24.6 tpmC for one CPU at N = 48 needs the CPU "
                f"centre to take about {1 / (24.6 / 60 / mix[0]) :.2f} s per transaction (effective CPI "
                f"{1 / (24.6 / 60 / mix[0]) / cpu_s:.1f}); with a 90% hit rate and Table 7's miss costs it is "
                f"{(cpu_s * clock + 0.1 * (mix @ (vis['memory_read'] + vis['memory_write'])) * (t7['S_Mem'] + t7['S_MBusRequest'] + t7['S_MBusReply'])) / clock:.2f} s"))
    misses = 0.1 * (mix @ (vis["memory_read"] + vis["memory_write"]))
    x_c2 = 47.2 / 60 / mix[0]
    out.append(("Table 12 memory bus vs eq. 3.5",
                f"at 47.2 tpmC eq. 3.5 with a 90% hit rate gives U_MBus = {x_c2 * misses * 12 / clock:.1%} "
                f"(plus disk transfers); Table 12 says 58.7%, which needs about "
                f"{0.587 / x_c2 * clock / 12 / 1e6:.1f} M bus visits per transaction, "
                f"{0.587 / x_c2 * clock / 12 / (misses / 0.1):.0%} of all Table 6 memory references"))
    # Table 13: a shorter write hold on the I/O bus (S_IOBus) speeds C2 up far more than the
    # disk operations Table 12 allows can explain
    c2 = tp.query("table == 13 and configuration == 'C2'").set_index("value")["tpmC"]
    fast, slow = sorted(c2.index, key=float)[0], sorted(c2.index, key=float)[-1]
    r_fast, r_slow = (v["terminals"] / (c2[k] / 60 / mix[0]) - z for k in (fast, slow))
    hold_cut = (float(slow) - float(fast)) / clock
    # FCFS: a hold shorter by d shortens one operation's response by at most N d (itself and
    # the N - 1 that can be ahead of it)
    ops_needed = (r_slow - r_fast) / (v["terminals"] * hold_cut)
    disk_s = (t7["S_seek"] + t7["S_latency"] + t7["S_transfer"]) / clock
    ops_allowed = 0.634 / x_c2 / disk_s
    out.append(("Table 13 I/O-bus sensitivity vs Table 12 disk utilisation",
                f"C2 goes from {c2[slow]:.1f} to {c2[fast]:.1f} tpmC when S_IOBus falls from {slow} to {fast} "
                f"cycles: the response time falls from {r_slow:.2f} s to {r_fast:.2f} s; each I/O operation can gain "
                f"at most N x {hold_cut * 1e6:.2f} us from that, so it takes at least {ops_needed:,.0f} I/O "
                f"operations per transaction, while Table 12's disk (63.4% at 47.2 tpmC) allows at most "
                f"{ops_allowed:.1f} ({disk_s * 1e3:.1f} ms of disk each)"))
    t5n = t5 / t5.sum()
    e = data.mapping("E")
    share = [sum(t5n[t] for t in range(9) if e[t] == d) for d in (1, 2, 3, 4)]
    out.append(("Table 18 allocation E vs Table 5",
                "disks 1-4 of allocation E receive " + ", ".join(f"{s:.1%}" for s in share)
                + " of database accesses by Table 5, yet Table 18 shows them 54.2%, 47.3%, 38.6%, 46.1% busy: "
                  "disk 2 holds only History (table 9), 0.36% of accesses"))
    return out


def first_step_elasticities() -> dict:
    """The C2 elasticities of tpmC the paper's first steps imply, ``ln(tpmC'/tpmC) /
    -ln(t'/t)`` for each of Tables 11 and 13-16 (the smallest cut of each), by name."""
    tp = data.published_tpmc()
    out = {}
    for table, name, base, first, ratio in ((11, "memory and memory-bus reply latency", "100;10", "90;9", 0.9),
                                           (13, "I/O bus latency", "5120", "4608", 4608 / 5120),
                                           (14, "seek time", "1000000", "900000", 0.9),
                                           (15, "rotation latency", "1500000", "1350000", 0.9),
                                           (16, "transfer time", "42000", "37800", 0.9)):
        rows = tp.query(f"table == {table} and configuration == 'C2'").set_index("value")["tpmC"]
        out[name] = float(np.log(rows[first] / rows[base]) / -np.log(ratio))
    return out


def limits(values: dict | None = None) -> dict:
    """The numbers behind :func:`budget_of_effects`: the paper's first-step elasticities at
    C2 (``elasticities``, their ``sum``), the terminals' ``ceiling`` (tpmC at zero response
    time), the I/O bus latencies' ``bus_share`` of a disk access's hold under the model's
    reading and the most a 40% cut of them can gain (``bus_gain_max``), the ``bus_needed``
    share C2's Table 13 gain asks, and Table 5's shares of accesses on allocation E's disks
    (``e_shares``)."""
    from .reading import access_times

    model = TPCCSMP.from_values(values or {})
    v, mix = model.values, data.mix()
    elasticities = first_step_elasticities()
    t = access_times(v)
    reads, writes = float(mix @ data.visits()["disk_read"]), float(mix @ data.visits()["disk_write"])
    p_read = reads / (reads + writes)
    held = p_read * (t["access"] + t["reply"] + t["request"]) + (1 - p_read) * (t["write_bus"] + t["access"])
    share = (p_read * (t["reply"] + t["request"]) + (1 - p_read) * t["write_bus"]) / held
    c2 = data.published_tpmc().query("table == 13 and configuration == 'C2'").set_index("value")["tpmC"]
    gain = c2["3072"] / c2["5120"] - 1
    t5 = data.table5_access() / data.table5_access().sum()
    e = data.mapping("E")
    return {"elasticities": elasticities, "sum": sum(elasticities.values()),
            "ceiling": 60 * mix[0] * v["terminals"] / model.mean_think_time(), "think_time": model.mean_think_time(),
            "bus_share": share, "bus_gain_max": 1 / (1 - 0.4 * share) - 1, "bus_gain_paper": gain,
            "bus_needed": (1 - 1 / (1 + gain)) / 0.4,
            "e_shares": [float(sum(t5[i] for i in range(9) if e[i] == d)) for d in (1, 2, 3, 4)]}


def budget_of_effects(values: dict | None = None) -> list:
    """Why some of the paper's what-ifs are out of reach of any model consistent in its time
    unit (a list of sentences with the numbers of :func:`limits`): the elasticity budget,
    the think-time bound, and the I/O bus's share of a disk access under the model's
    reading (``values``)."""
    n = limits(values)
    v = TPCCSMP.from_values(values or {}).values
    mix = data.mix()
    out = [("Scaling every time of a model by c scales its throughput by 1/c, so the elasticities of throughput "
            "to all its times add up to -1 + |elasticity to the think time|: at most 1 in size. The paper's "
            "first steps at C2 imply " + ", ".join(f"{k} {e:.2f}" for k, e in n["elasticities"].items())
            + f", {n['sum']:.2f} in all, before the CPU's share: no one model gives Tables 11 "
            "and 13-16 their C2 effects together; a model near an I/O bottleneck (their disk rows) leaves "
            "memory little (Table 11), and the reverse")]
    tp = data.published_tpmc()
    for c in ("C4", "C6"):
        base = float(tp.query(f"table == 15 and configuration == '{c}' and value == '1500000'").tpmC.iloc[0])
        cut = float(tp.query(f"table == 15 and configuration == '{c}' and value == '900000'").tpmC.iloc[0])
        r_base = v["terminals"] / (base / 60 / mix[0]) - n["think_time"]
        bound = n["ceiling"]
        out.append(f"{c}: the think-time bound is {bound:.2f} tpmC (Z = {n['think_time']:.2f} s); Table 15 takes {c} "
                   f"from {base} tpmC (response time {r_base:.2f} s) to {cut} (+{100 * (cut / base - 1):.1f}%), "
                   f"{'above the bound' if cut > bound else 'within ' + format(bound - cut, '.1f') + ' tpmC of it'}: "
                   f"the two-bus columns of Tables 13-16 leave a model at most +{100 * (bound / base - 1):.1f}% "
                   "from its base, at zero response time")
    out.append(f"Table 13: the I/O bus latencies are {n['bus_share']:.1%} of the time a disk access holds its disk "
               f"here ({v['disk.block_size']:.0f} bytes over the bus in "
               f"{v['disk.block_size'] / v['io_bus.transfer_size']:.0f} transfers of {v['io_bus.transfer_size']:.0f}); "
               f"cutting them by 40% shortens a saturated disk's accesses by {40 * n['bus_share']:.1f}%, at most "
               f"+{100 * n['bus_gain_max']:.1f}% tpmC; C2's +{100 * n['bus_gain_paper']:.1f}% needs the bus to hold "
               f"{n['bus_needed']:.0%} of an access, a bus {n['bus_needed'] / n['bus_share']:.0f} times slower than "
               "SCSI-2's 10 MB/s")
    return out


def _classes(solve):
    rows = []
    for cfg in [f"C{i}" for i in range(1, 10)]:
        values = data.configuration_values(cfg)
        single = solve(values).outputs["tpmC"]
        multi = solve({**values, "model.classes": "transaction"})
        rows.append({"configuration": cfg, "single": single, "transaction": multi.outputs["tpmC"],
                     "rel_diff": multi.outputs["tpmC"] / single - 1.0, "converged": multi.converged})
    return pd.DataFrame(rows)


def reproduce(overrides: dict | None = None, classes: bool = True) -> Reproduction:
    """Solve every published case with the documented defaults (plus ``overrides``)."""
    base = dict(overrides or {})
    resolve_values(PARAMETERS, base)        # bad names or values: one clear error, early
    solve = _Solver(base)
    rep = Reproduction(tpmc=_tpmc_rows(solve, base), utilization=_utilization_rows(solve), base=base)
    rep.conclusions = _conclusions(solve)
    rep.inconsistencies = _inconsistencies(TPCCSMP.from_values(base))
    if classes:
        rep.classes = _classes(solve)
    rep.access = _access()
    return rep


def _access() -> pd.DataFrame:
    """Table 5 next to the distribution derived from Table 4 and the mix (section 3.2)."""
    from .equations import table_access_distribution
    derived = table_access_distribution(data.operation_counts(), data.mix())
    t5 = data.table("table5_access")
    return pd.DataFrame({"table": t5["table_id"], "name": t5["table_name"], "table5": t5["probability"],
                         "from_table4": derived, "diff": derived - t5["probability"].to_numpy()})


def _by_table(frame, what, columns, formatters):
    """One block per published table: a title line, the rows, a blank line."""
    formatters = {"paper": "{:.1f}".format, "model": "{:.1f}".format, **formatters}
    lines = []
    for table, group in frame.groupby("table", sort=True):
        lines += [f"Table {table}: {what}", group[columns].to_string(index=False, formatters=formatters), ""]
    return lines


def _text(rep: Reproduction) -> str:
    lines = ["TPC-C SMP model (Du & Zhang, 2001): reproduction of Tables 10-18",
             "overrides: " + (", ".join(f"{k}={v}" for k, v in rep.base.items()) or "none (documented defaults)"), ""]
    lines += _by_table(rep.tpmc, "tpmC", ["configuration", "mapping", "parameter", "value", "paper", "model",
                                          "rel_diff"], {"rel_diff": "{:+.1%}".format})
    lines += _by_table(rep.utilization, "utilisation (%)", ["configuration", "mapping", "value", "device", "paper",
                                                            "model", "diff_points"], {"diff_points": "{:+.1f}".format})
    mean, worst = rep.tpmc_error
    lines.append(f"tpmC relative error over Tables 10, 11, 13-17 ({len(rep.tpmc)} values): "
                 f"mean {mean:.1%}, max {worst:.1%}")
    for table, group in rep.tpmc.groupby("table", sort=True):
        err = group["rel_diff"].abs()
        lines.append(f"  Table {table}: mean {err.mean():.1%}, max {err.max():.1%}")
    for table, group in rep.utilization.groupby("table", sort=True):
        err = group["diff_points"].abs()
        lines.append(f"  Table {table} utilisations: mean {err.mean():.1f}, max {err.max():.1f} points")
    bound = one_cpu_bound()
    lines += ["", "The ceiling Table 10 puts on every model of this class (models.tpcc_smp.ceiling):",
              f"  one CPU at {bound['one_cpu_tpmc']:.1f} tpmC is saturated (capacity "
              f"{bound['one_cpu_capacity_tpmc']:.3f} tpmC), so two CPUs give at most "
              f"{bound['two_cpu_ceiling_tpmc']:.1f}; {bound['held_out_above_ceiling']} of the "
              f"{bound['held_out_rows']} values of Tables 11, 13-17 are higher, so a model exact on the one-CPU "
              f"value errs there by at least {bound['least_heldout_error']['mean']:.1%} mean, "
              f"{bound['least_heldout_error']['max']:.1%} max"]
    lines.append("")
    lines.append("The paper's conclusions in our model:")
    for claim, holds, evidence, why in rep.conclusions:
        lines.append(f"  [{'holds' if holds else 'FAILS'}] {claim}: {evidence}")
        if why:
            lines.append(f"      why: {why}")
    lines.append("")
    if rep.access is not None:
        lines.append("Table 5 (published) vs the access distribution derived from Table 4 and the mix:")
        lines.append(rep.access.to_string(index=False, formatters={"table5": "{:.4f}".format,
                                                                   "from_table4": "{:.4f}".format,
                                                                   "diff": "{:+.4f}".format}))
        lines.append("")
    lines.append("Inputs the paper leaves unknown or inconsistent:")
    for what, numbers in rep.inconsistencies:
        lines.append(f"  - {what}: {numbers}")
    if rep.classes is not None:
        lines.append("")
        lines.append("Five transaction classes vs one class (tpmC):")
        lines.append(rep.classes.to_string(index=False, formatters={"single": "{:.2f}".format,
                                                                    "transaction": "{:.2f}".format,
                                                                    "rel_diff": "{:+.2%}".format}))
    return "\n".join(lines) + "\n"


def _json(rep: Reproduction) -> str:
    mean, worst = rep.tpmc_error
    doc = {"overrides": rep.base, "tpmc": rep.tpmc.to_dict(orient="records"),
           "utilization": rep.utilization.to_dict(orient="records"),
           "tpmc_error": {"mean": mean, "max": worst},
           "conclusions": [{"claim": c, "holds": bool(h), "evidence": e, "why": w} for c, h, e, w in rep.conclusions],
           "inconsistencies": [{"what": w, "numbers": n} for w, n in rep.inconsistencies],
           "classes": None if rep.classes is None else rep.classes.to_dict(orient="records"),
           "access": None if rep.access is None else rep.access.to_dict(orient="records")}
    return json.dumps(doc, indent=1, default=float) + "\n"


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m models.tpcc_smp.report", description=__doc__.split("\n")[0])
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="model parameter applied to every case (repeatable)")
    parser.add_argument("--inputs", metavar="FILE", help="a model file whose inputs (all but the configuration) "
                                                         "apply to every case, e.g. data/tpcc/c2-postgres.toml")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--no-classes", action="store_true", help="skip the five-class comparison")
    args = parser.parse_args(argv)
    try:
        base = file_inputs(args.inputs) if args.inputs else {}
        rep = reproduce({**base, **parse_assignments(args.set)}, classes=not args.no_classes)
    except ModelError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(_json(rep) if args.format == "json" else _text(rep))
    return 0


if __name__ == "__main__":
    from mva.output import exit_with

    exit_with(main, "python -m models.tpcc_smp.report")
