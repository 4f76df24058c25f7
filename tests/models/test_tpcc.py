"""The TPC-C SMP model of Du & Zhang (2001): equations by hand, the whole model against an independent
re-computation, Norton aggregation against the full network, invariants, files and errors."""
import json
import math
import re
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mva import Network, Station, exact_mva
from mva.aggregation import flow_equivalent_station, norton_throughputs
from mva.cli import main
from mva.errors import ModelError
from models.tpcc_smp import TPCCSMP, class_populations, data, disk_visit_scale_from_table12
from models.tpcc_smp import equations as eq
from models.tpcc_smp.model import PARAMETERS
from mva.files import read_document
from mva.modelkind import model_from_document

import references.reference_tpcc as reference_tpcc

TPCC = os.path.join(os.path.dirname(__file__), "..", "..", "data", "tpcc")


# --- inputs (eq. 3.1, Table 2, Table 4) ---------------------------------------------------

def test_mix_and_think_time_match_the_papers_eq_3_1():
    mix = data.mix()
    assert mix == pytest.approx([0.45, 0.43, 0.04, 0.04, 0.04])
    keying, think = data.think_components()
    assert mix @ keying == pytest.approx(9.63)          # "9.63 s for the minimum keying time"
    assert mix @ think == pytest.approx(11.36)          # "-11.36 ln(r)"
    assert eq.mean_think_time(mix, keying, think) == pytest.approx(20.99)


def test_table4_counts_by_hand():
    counts = data.operation_counts()
    # New-Order: J(5,1) + S(2) + U(2) + I(6) + I(7) + 10 (S(4) + S(3) + U(3) + I(8))
    assert counts[0] == pytest.approx([1, 2, 20, 10, 1, 1, 1, 10, 0])
    # Payment with P_name 0.6, name_cnt 3, P_id 0.4, P_BC 0.1, P_GC 0.9:
    # customer: 0.6 (1 + 1.5) + 0.4 + 0.1 * 2 + 0.9 = 3.0
    assert counts[1] == pytest.approx([2, 2, 0, 0, 3.0, 0, 0, 0, 1])
    # Delivery: 10 x (S(7) + D(7) + S(6) + U(6) + U(8) + S(8) + U(5))
    assert counts[3] == pytest.approx([0, 0, 0, 0, 10, 20, 20, 20, 0])
    dist = eq.table_access_distribution(counts, data.mix())
    assert dist.sum() == pytest.approx(1.0)
    total = data.mix() @ counts.sum(axis=1)
    assert dist[2] == pytest.approx((0.45 * 20 + 0.04 * 1) / total)   # Stock: New-Order and the join of Stock-Level


def test_mappings_and_configurations_transcribed():
    assert data.mapping("f2") == (1, 2, 1, 2, 1, 2, 1, 2, 1)
    assert data.mapping("f4") == (1, 2, 1, 2, 3, 4, 3, 3, 4)
    assert data.mapping("E") == (4, 4, 4, 1, 4, 3, 4, 1, 2)
    assert data.configuration("C9") == {"cpus": 4, "io_buses": 2, "disks": 4, "note": "2 disks on each I/O bus"}
    assert data.table5_access().sum() == pytest.approx(1.0)
    published = data.published_tpmc()
    assert len(published) == 4 + 6 + 4 * 25 + 5


def test_disk_visit_scale_by_the_utilisation_law():
    # 63.4% / (47.2 / 60 / 0.45 per s) * 200e6 cycles / (132.86 (2.54215e6) + 300.52 (2.542e6))
    reads = 0.45 * 150 + 0.43 * 116 + 0.04 * (105 + 183 + 99)
    writes = 0.45 * 570 + 0.43 * 38 + 0.04 * 692
    expected = 0.634 / (47.2 / 60 / 0.45) * 200e6 / (reads * 2542150 + writes * 2542000)
    assert disk_visit_scale_from_table12() == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(0.06584, abs=1e-5)


# --- equations 3.5-3.9 by hand ------------------------------------------------------------

def test_memory_bus_and_memory_demands():
    assert eq.memory_bus_demand(1000.0, 24.0, 2.0, 10.0) == pytest.approx(1024 * 12)
    assert eq.memory_bus_demand(np.array([1.0, 2.0]), np.array([0.0, 1.0]), 2.0, 10.0) == pytest.approx([12, 36])
    # contention: 6 cycles x (0.5 - 0.3) / (1 - 0.5) = 2.4 cycles per visit
    assert eq.memory_demand(1000.0, 24.0, 100.0, 2.0, 10.0, 0.5, 0.3) == pytest.approx(1024 * 102.4)
    assert eq.memory_demand(10.0, 0.0, 100.0, 2.0, 10.0, 0.4, 0.4) == pytest.approx(1000.0)
    assert eq.memory_demand(10.0, 0.0, 100.0, 2.0, 10.0, 1.0, 0.4) == np.inf       # saturated bus


def test_io_bus_demand_read_write_asymmetry():
    reads = np.array([[2.0, 1.0, 0.0]])
    writes = np.array([[1.0, 0.0, 3.0]])
    per_bus, per_disk = eq.io_bus_demand(reads, writes, np.array([0, 0, 1]), 2, 120.0, 4850.0, 5120.0, 2.542e6)
    assert per_disk[0] == pytest.approx([2 * 4970 + 2547120, 4970, 3 * 2547120])
    assert per_bus[0] == pytest.approx([2 * 4970 + 2547120 + 4970, 3 * 2547120])


def test_io_bus_contention_and_disk_demand():
    # (0.25 x 5120 + 0.75 x 4970) x (0.6 - 0.2) / (1 - 0.6)
    wait = eq.io_bus_contention(0.75, 120.0, 4850.0, 5120.0, np.array([0.6, 1.0]), np.array([0.2, 0.5]))
    assert wait == pytest.approx([(0.25 * 5120 + 0.75 * 4970) * 1.0, np.inf])
    d = eq.disk_demand(np.array([[3.0, 0.0]]), np.array([[2.0, 1.0]]), 2.542e6, 150.0, wait)
    assert d[0, 1] == pytest.approx(2.542e6)        # no reads: no wait, even on a saturated bus
    assert d[0, 0] == pytest.approx(3 * (2.542e6 + 150 + wait[0]) + 2 * 2.542e6)


def test_parallel_disks_reduce_to_the_printed_two_disk_formula():
    d1, d2, u1, u2 = 3.0, 5.0, 0.4, 0.7
    printed = u1 * u2 * max(d1, d2) + u1 * (1 - u2) * d1 + u2 * (1 - u1) * d2
    paper, conditional, serial = (eq.DISK_PARALLELISM.index(m) for m in ("paper", "conditional", "serial"))
    demand, util = np.array([[d1, d2]]), np.array([u1, u2])
    assert eq.parallel_disk_time(demand, util, paper)[0] == pytest.approx(printed)
    busy = 1 - (1 - u1) * (1 - u2)
    assert eq.parallel_disk_time(demand, util, conditional)[0] == pytest.approx(printed / busy)
    assert eq.parallel_disk_time(demand, util, serial)[0] == pytest.approx(d1 + d2)
    assert eq.parallel_disk_time(np.array([[d1]]), np.array([u1]), conditional)[0] == pytest.approx(d1)


@settings(max_examples=60)
@given(st.lists(st.tuples(st.floats(0, 10), st.floats(0, 1)), min_size=1, max_size=6))
def test_parallel_disk_time_is_the_expected_max_over_busy_disks(disks):
    demand = [d for d, _ in disks]
    util = [u for _, u in disks]
    brute = reference_tpcc.expected_max_busy(demand, util)
    got = eq.parallel_disk_time(np.array([demand]), np.array(util), 0)[0]
    assert got == pytest.approx(brute, rel=1e-9, abs=1e-12)
    # and it never exceeds the slowest disk or the serial sum
    assert brute <= max(demand) + 1e-12 <= sum(demand) + 1e-12


def test_tpmc_is_new_order_per_minute():
    assert eq.tpmc(0.5) == pytest.approx(30.0)


# --- the whole model against the independent re-computation ------------------------------

def _model(**values):
    values = {k.replace("__", "."): v for k, v in values.items()}
    return TPCCSMP.from_values(values)


@pytest.mark.parametrize("terminals,centre,cpus", [(1, "paper", 1), (2, "paper", 1), (5, "paper", 1),
                                                   (1, "stalling", 1), (5, "stalling", 1), (5, "stalling", 2),
                                                   (9, "stalling", 4)])
def test_c1_matches_the_independent_recomputation(terminals, centre, cpus):
    """Both CPU centres (each with its I/O centre: the paper's, or separate disks) against
    the plain-Python recomputation; the stalling one's rates are a hand-built MVA of the
    processors, bus and memory for each busy-processor count."""
    scale = disk_visit_scale_from_table12()
    io = "paper" if centre == "paper" else "separate"
    ref = reference_tpcc.solve(terminals, [1] * 9, 1, [1], 1, scale, centre=centre, cpus=cpus, io=io)
    # the recomputation follows the paper's printed inputs (Table 7's CPI of 1)
    sol = _model(terminals=terminals, model__inputs="table6", model__cpu_centre=centre, cpus=cpus).solve()
    assert sol.outputs["tpmC"] == pytest.approx(ref["tpmC"], rel=1e-9)
    assert sol.outputs["response_time"] == pytest.approx(ref["response_time"], rel=1e-8)
    for device, value in ref["utilization"].items():
        assert sol.outputs["utilization"][device] == pytest.approx(value, rel=1e-8), device


SECTORS = dict(block=256, sector=256, bus_unit=256)       # one 256-byte sector a visit (Table 8 as printed)
PAGES = dict(block=8192, sector=512, bus_unit=256)        # the default reading: an 8 KB page a visit


def _reading(reading: dict) -> dict:
    return {"disk.block_size": float(reading["block"]), "disk.sector_size": float(reading["sector"]),
            "io_bus.transfer_size": float(reading["bus_unit"])}


@pytest.mark.parametrize("io, reading, mechanical", [("paper", SECTORS, False), ("separate", SECTORS, False),
                                                      ("paper", PAGES, False), ("separate", PAGES, False),
                                                      ("separate", PAGES, True), ("separate", SECTORS, True)])
def test_multi_disk_multi_bus_with_a_rate_table_matches_the_recomputation(io, reading, mechanical):
    """Four disks on two buses (contention and the 4-disk parallelism, or four disk
    centres), CPU rates as a table; each reading of Tables 6-8, exponential or mechanical
    disks (the residual bus waits and the FCFS disk queues)."""
    scale = 0.05 if reading is SECTORS else 0.004
    rates = [0.08, 0.15, 0.19, 0.2]
    f = data.mapping("B")
    ref = reference_tpcc.solve(6, list(f), 4, [1, 1, 2, 2], 2, scale, cpu_rate=rates, io=io, mechanical=mechanical,
                               **reading)
    sol = TPCCSMP.from_values({"terminals": 6, "cpus": 2, "io_buses": 2, "disks": 4, "mapping.table_to_disk": f,
                               "workload.disk_visit_scale": scale, "cpu.rate": rates, "model.cpu_centre": "paper",
                               "io.centre": io, "disk.access_time": "mechanical" if mechanical else "exponential",
                               **_reading(reading)}).solve()
    assert sol.outputs["tpmC"] == pytest.approx(ref["tpmC"], rel=1e-9)
    for device, value in ref["utilization"].items():
        assert sol.outputs["utilization"][device] == pytest.approx(value, rel=1e-8), device


@pytest.mark.parametrize("config, terminals", [("C1", 12), ("C2", 20), ("C3", 48), ("C4", 48), ("C6", 30)])
def test_default_reading_matches_the_recomputation(config, terminals):
    """The defaults (an 8 KB page an access, the stalling centre with one CPU's speed
    from cpu.speed_by_cpus, separate mechanical disks) against the recomputation."""
    values = {**data.configuration_values(config), "terminals": terminals}
    model = TPCCSMP.from_values(values)
    v = model.values
    disks = v["disks"]
    ref = reference_tpcc.solve(terminals, list(v["mapping.table_to_disk"]), disks, list(model.bus_of_disk() + 1),
                               v["io_buses"], v["workload.disk_visit_scale"], centre="stalling", cpus=v["cpus"],
                               io="separate", mechanical=True, speed=v["cpu.speed_by_cpus"][min(v["cpus"], 2) - 1],
                               **PAGES)
    sol = model.solve()
    assert sol.outputs["tpmC"] == pytest.approx(ref["tpmC"], rel=1e-9)
    for device, value in ref["utilization"].items():
        assert sol.outputs["utilization"][device] == pytest.approx(value, rel=1e-8), device


def test_what_ifs_of_the_disks_and_buses_are_not_flat():
    """The default model answers the paper's I/O what-ifs with a visible effect (the
    model of Tables 10 and 12 gave a 40% faster rotation +0.3% and a second bus +0.1%):
    at C2, where the disk holds the transactions up, each 40% cut of a disk time gains."""
    c2, c3, c4 = (data.configuration_values(c) for c in ("C2", "C3", "C4"))
    t = lambda values: TPCCSMP.from_values(values).solve().outputs["tpmC"]   # noqa: E731
    base = t(c2)
    assert t({**c2, "disk.rotation_latency": 0.9e6}) / base - 1 > 0.05
    assert t({**c2, "disk.seek_time": 0.6e6}) / base - 1 > 0.03
    assert t({**c2, "disk.transfer_time": 25200.0}) / base - 1 > 0.02
    assert t(c4) / t(c3) - 1 > 0.02                       # a second I/O bus
    # one CPU to two: Table 10's big step, then flat (the disk saturates)
    cpu = [t({**data.configuration_values("C1"), "cpus": k}) for k in (1, 2, 4)]
    assert cpu[1] / cpu[0] - 1 > 0.6 and cpu[2] / cpu[1] - 1 < 0.05


def test_processor_speed_stretches_the_computing_of_its_cpu_count():
    """cpu.speed_by_cpus divides a transaction's computing for its CPU count, not its stalls."""
    def station(cpus, speeds):
        return TPCCSMP.from_values({"cpus": cpus, "cpu.speed_by_cpus": speeds}).cpu_station()

    model = TPCCSMP.from_values({"cpus": 1})
    w, v = model.workload(), model.values
    compute = w.cpu_instructions[0] * v["cpu.cpi"] / 200e6
    stalls = w.cpu_memory_visits[0] * (2 + 100 + 10) / 200e6
    assert station(1, (1.0,)).demand[0] == pytest.approx(compute + stalls, rel=1e-12)
    assert station(1, (0.25, 1.0)).demand[0] == pytest.approx(4 * compute + stalls, rel=1e-12)
    assert station(2, (0.25, 1.0)).demand[0] == pytest.approx(station(2, (1.0,)).demand[0], rel=1e-12)


def test_page_reading_costs_by_hand():
    """One access of the default reading: seek + rotation + 16 sector transfers; a read's
    reply and a write's data each 32 bus transfers of 256 bytes."""
    from models.tpcc_smp.reading import access_times

    t = access_times(TPCCSMP.from_values({}).values)
    assert t["access"] == pytest.approx(1e6 + 1.5e6 + 16 * 42000)
    assert t["reply"] == pytest.approx(32 * 4850) and t["write_bus"] == pytest.approx(32 * 5120)
    assert t["request"] == 120


# --- Norton aggregation (a general mva feature) ------------------------------------------

def test_flow_equivalent_station_reproduces_the_full_network():
    """Norton's theorem is exact for product form: the aggregate in place of the subnetwork
    gives the same throughput as the full network (Chandy, Herzog & Woo 1975)."""
    cpus = Station("cpus", "multi", [0.4], servers=3)
    bus = Station("bus", "queue", [0.1])
    mem = Station("mem", "queue", [0.25])
    disk = Station("disk", "queue", [0.3])
    full = exact_mva(Network([cpus, bus, mem, disk], population=[12], think_time=[2.0]))
    fesc = flow_equivalent_station("cpu", Network([cpus, bus, mem], population=[1]), 12)
    reduced = exact_mva(Network([fesc, disk], population=[12], think_time=[2.0]))
    assert reduced.throughput[0] == pytest.approx(full.throughput[0], rel=1e-12)
    assert reduced.queue_length[0, 0] == pytest.approx(full.queue_length[:3, 0].sum(), rel=1e-10)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_sub=st.integers(1, 3), n_rest=st.integers(1, 3),
       population=st.integers(1, 15), think=st.one_of(st.just(0.0), st.floats(1e-6, 5.0)))
def test_norton_aggregation_is_exact_for_any_subnetwork(seed, n_sub, n_rest, population, think):
    """Any stations (queue, delay, multi, ld) in the subnetwork, any in the rest."""
    from mva.random_networks import random_station
    rng = np.random.default_rng(seed)
    sub = [random_station(rng, f"s{i}", 1, skip_probability=0.0) for i in range(n_sub)]
    rest = [random_station(rng, f"r{i}", 1, skip_probability=0.0) for i in range(n_rest)]
    if all(s.kind == "delay" for s in sub):
        sub[0] = Station("s0", "queue", sub[0].demand)
    full = exact_mva(Network(sub + rest, population=[population], think_time=[think]))
    fesc = flow_equivalent_station("agg", Network(sub, population=[1]), population)
    reduced = exact_mva(Network([fesc] + rest, population=[population], think_time=[think]))
    assert reduced.throughput[0] == pytest.approx(full.throughput[0], rel=1e-10)
    assert reduced.queue_length[1:, 0] == pytest.approx(full.queue_length[n_sub:, 0], rel=1e-9, abs=1e-12)


def test_norton_throughputs_by_hand_and_errors():
    # one queue of demand 2: X(j) = 1/2 for every j
    x = norton_throughputs(Network([Station("q", "queue", [2.0])], population=[1]), 4)
    assert x == pytest.approx([0.5] * 4)
    with pytest.raises(ModelError, match="max_population"):
        norton_throughputs(Network([Station("q", "queue", [2.0])], population=[1]), 0)
    two = Network([Station("q", "queue", [1.0, 1.0])], population=[1, 1])
    with pytest.raises(ModelError, match="one closed class"):
        norton_throughputs(two, 3)


def test_cpu_rate_function_is_the_subnetwork_throughput():
    # the paper's centre: the subnetwork with j = 1..N transactions
    m = _model(cpus=2, terminals=10, model__cpu_centre="paper")
    x = norton_throughputs(m.cpu_subnetwork(), 10)
    instr = m.workload().cpu_instructions[0]
    assert m.cpu_rate_function() == pytest.approx(x * instr / 200e6, rel=1e-12)
    assert np.all(np.diff(m.cpu_rate_function()) >= -1e-15)
    # the stalling centre: one customer per busy processor, then flat (the rest wait)
    m = _model(cpus=3, terminals=10)
    sub = m.cpu_subnetwork()
    assert [st.kind for st in sub.stations] == ["delay", "queue", "queue"]
    x = norton_throughputs(sub, 3)
    expected = np.concatenate([x, np.full(7, x[-1])]) * instr / 200e6
    assert m.cpu_rate_function() == pytest.approx(expected, rel=1e-12)
    # one processor: its rate is one transaction's compute plus every stall, no overlap, at
    # one processor's own speed (cpu.speed_by_cpus)
    one = _model(cpus=1)
    w, v = one.workload(), one.values
    per_tx = (w.cpu_instructions[0] * v["cpu.cpi"] / v["cpu.speed_by_cpus"][0]
              + w.cpu_memory_visits[0] * (2 + 100 + 10)) / 200e6
    assert one.cpu_station().demand[0] == pytest.approx(per_tx, rel=1e-12)
    assert one.cpu_rate_function() == pytest.approx(np.full(48, instr / (per_tx * 200e6)), rel=1e-12)


@pytest.mark.parametrize("cpus", [1, 2, 3, 4])
def test_stalling_centre_equals_a_hand_built_mva_of_processors_bus_and_memory(cpus):
    """The stalling CPU centre's rates are the plain-Python MVA of k busy processors (each
    a delay of its computing between misses) and the bus and memory queues, with the
    transactions beyond k waiting for a processor."""
    m = _model(cpus=cpus, terminals=12)
    w, v = m.workload(), m.values
    misses = w.cpu_memory_visits[0]
    speed = v["cpu.speed_by_cpus"][min(cpus, len(v["cpu.speed_by_cpus"])) - 1]
    per_cycle = reference_tpcc.rates_stalling(w.cpu_instructions[0] * v["cpu.cpi"] / speed, misses * 12.0,
                                              misses * 100.0, cpus)
    expected = [per_cycle[min(j, cpus) - 1] * w.cpu_instructions[0] for j in range(1, 13)]
    assert m.cpu_rate_function() == pytest.approx(expected, rel=1e-12)


# --- invariants ---------------------------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(cpus=st.integers(1, 4), buses=st.integers(1, 2), disk_power=st.integers(0, 2),
       terminals=st.integers(1, 30), seek=st.floats(2e5, 2e6), mode=st.sampled_from(eq.DISK_PARALLELISM))
def test_invariants(cpus, buses, disk_power, terminals, seek, mode):
    disks = 2 ** disk_power
    mapping = data.mapping({1: "f1", 2: "f2", 4: "f4"}[disks])
    m = _model(cpus=cpus, io_buses=min(buses, disks), disks=disks, terminals=terminals,
               mapping__table_to_disk=mapping, disk__seek_time=seek, io__disk_parallelism=mode)
    sol = m.solve()
    o = sol.outputs
    assert sol.converged
    z = m.mean_think_time()
    # interactive response time law and the think-time bound
    assert o["throughput"] * (o["response_time"] + z) == pytest.approx(terminals, rel=1e-9)
    assert o["throughput"] <= terminals / z
    assert o["tpmC"] == pytest.approx(60 * 0.45 * o["throughput"], rel=1e-12)
    assert sum(o["residence_time"].values()) == pytest.approx(o["response_time"], rel=1e-9)
    for device, u in o["utilization"].items():
        assert 0 <= u < 1, device
    # a faster disk never lowers throughput
    faster = m.replace(disk__seek_time=seek / 2).solve()
    assert faster.outputs["throughput"] >= o["throughput"] * (1 - 1e-9)


def test_more_terminals_more_throughput_and_slower_response():
    x = [_model(cpus=2, terminals=n).solve().outputs for n in (8, 16, 32, 48)]
    assert all(b["throughput"] > a["throughput"] for a, b in zip(x, x[1:], strict=False))
    assert all(b["response_time"] > a["response_time"] for a, b in zip(x, x[1:], strict=False))


# --- five transaction classes --------------------------------------------------------------

def test_class_populations():
    mix, think = data.mix(), np.array([30.0, 15.0, 12.0, 7.0, 7.0])
    pop = class_populations(48, mix, think)
    assert sum(pop) == 48 and min(pop) >= 1
    assert pop[0] > pop[1] > pop[2]
    assert class_populations(5, mix, think) == (1, 1, 1, 1, 1)


def test_transaction_classes_converge_and_stay_close_to_one_class():
    single = _model(cpus=2).solve()
    multi = _model(cpus=2, model__classes="transaction").solve()
    assert multi.converged
    x = multi.extras["class_throughput"]
    assert 60 * x["new_order"] == pytest.approx(multi.outputs["tpmC"])
    assert multi.outputs["tpmC"] == pytest.approx(single.outputs["tpmC"], rel=0.05)


def test_transaction_classes_are_a_fixed_point_of_exact_mva():
    """The converged class throughputs reproduce themselves: demands from eq. 3.5-3.9 at
    those throughputs, solved by exact multi-class MVA, give the same throughputs."""
    m = _model(cpus=2, disks=2, terminals=12, mapping__table_to_disk=data.mapping("f2"),
               model__classes="transaction", solver__tol=1e-13)
    sol = m.solve()
    assert sol.converged
    w = m.workload(per_transaction=True)
    x = np.array(list(sol.extras["class_throughput"].values()))
    dem = m.device_demands(w, x)
    cpu = m.cpu_station()
    per_instruction = cpu.demand[0] / m.workload().cpu_instructions[0]
    # the stalling centre holds the processors' misses: the bus and memory keep the transfers'
    kept = w.disk_memory_visits / (w.disk_memory_visits + w.cpu_memory_visits)
    net = Network([Station("cpu", "ld", w.cpu_instructions * per_instruction, capacity=cpu.capacity_function()),
                   Station("mb", "queue", kept * dem["memory_bus"]), Station("mem", "queue", kept * dem["memory"]),
                   # separate disks, each holding its reads' replies and its writes; the requests a delay
                   Station("d1", "queue", dem["disk"][:, 0]), Station("d2", "queue", dem["disk"][:, 1]),
                   Station("requests", "delay", dem["io"] - dem["disk"].sum(axis=1))],
                  population=sol.extras["populations"], think_time=w.think)
    assert exact_mva(net).throughput == pytest.approx(x, rel=1e-10)


def test_per_transaction_visits_by_hand():
    m = _model(disks=2, mapping__table_to_disk=data.mapping("f2"))
    w = m.workload(per_transaction=True)
    scale = m.values["workload.disk_visit_scale"]
    t5 = data.table5_access()
    on_disk_1 = t5[[0, 2, 4, 6, 8]].sum()
    # New-Order: 150 reads, 570 writes (Table 6), disk 1 holds tables 1, 3, 5, 7, 9
    assert w.reads[0, 0] == pytest.approx(scale * 150 * on_disk_1)
    assert w.writes[0, 1] == pytest.approx(scale * 570 * (1 - on_disk_1))
    assert w.cpu_memory_visits[3] == pytest.approx(0.1 * (8469415 + 5874990))
    assert w.disk_memory_visits[4] == pytest.approx(8192 / 32 * scale * 99)     # an 8 KB page, 256 cache blocks
    assert w.think == pytest.approx([30, 15, 12, 7, 7])


# --- model files and the command line ------------------------------------------------------

@pytest.mark.parametrize("config", [f"c{i}" for i in range(1, 10)])
def test_every_configuration_file_solves(config, capsys):
    path = os.path.join(TPCC, f"{config}.toml")
    assert main(["solve", path, "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    expected = data.configuration(config.upper())
    assert record["model"] == config.upper()
    util = record["outputs"]["utilization"]
    assert {"cpu", "memory_bus", "memory"} <= set(util)
    assert sum(k.startswith("disk_") for k in util) == expected["disks"]
    assert sum(k.startswith("io_bus_") for k in util) == expected["io_buses"]
    for key in ("tpmC", "throughput", "response_time"):
        assert math.isfinite(record["outputs"][key]) and record["outputs"][key] > 0


def test_set_overrides_match_the_api(capsys):
    path = os.path.join(TPCC, "c2.toml")
    assert main(["solve", path, "--set", "cpus=4", "--set", "disk.rotation_latency=0.9e6", "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    expected = _model(cpus=4, disk__rotation_latency=0.9e6).solve()
    assert record["outputs"]["tpmC"] == pytest.approx(expected.outputs["tpmC"], rel=1e-12)
    assert main(["solve", path, "--set", "cpus=4", "--set", "disk.rotation_latency=0.9e6"]) == 0
    out = capsys.readouterr().out
    assert "tpmC" in out and "disk_1" in out and "bottleneck" in out


def test_bottleneck_is_a_server_and_busy_shares_are_named(capsys):
    """The bottleneck line names the busiest server (a processor, a disk, a bus), not the
    CPU centre's busy share; the processors' load is an output beside that share."""
    path = os.path.join(TPCC, "c2.toml")
    assert main(["solve", path, "--set", "cpus=4"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("bottleneck:"))
    assert not line.startswith("bottleneck: cpu ") and "busy shares, not one server's load: cpu" in line
    o = TPCCSMP.from_values({**data.configuration_values("C2"), "cpus": 4}).solve().outputs["utilization"]
    assert 0 < o["processors"] < o["cpu"] <= 1            # 4 processors: less busy than "some of them busy"


@pytest.mark.parametrize("setting, warned, hint", [("io_buses=2", True, "mapping.table_to_disk"),
                                                  ("disks=2", True, "no table is on disk 2"),
                                                  ("cpus=4", False, ""), ("disk.seek_time=6e5", False, "")])
def test_a_set_that_changes_nothing_warns_and_names_the_fix(setting, warned, hint, capsys):
    assert main(["solve", os.path.join(TPCC, "c2.toml"), "--set", setting]) == 0
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if "changes nothing" in x]
    assert bool(lines) == warned
    if warned:
        assert len(lines) == 1 and setting.split("=")[0] in lines[0] and hint in lines[0]


def test_cycles_show_as_milliseconds_in_tables_and_stay_cycles_in_files(capsys, tmp_path):
    path = os.path.join(TPCC, "c2.toml")
    assert main(["solve", path, "--sweep", "disk.rotation_latency=1.5e6,0.9e6"]) == 0
    out = capsys.readouterr().out
    assert "disk.rotation_latency [ms]" in out and " 7.5" in out and "4.5" in out
    csv = tmp_path / "s.csv"
    assert main(["solve", path, "--sweep", "disk.rotation_latency=1.5e6,0.9e6", "--format", "csv", "-o", str(csv)]) == 0
    assert "1500000" in csv.read_text()
    assert main(["solve", path, "--list-parameters"]) == 0
    assert "1.5e+06 (7.5 ms)" in capsys.readouterr().out


def test_list_parameters_shows_units_defaults_and_file_values(capsys):
    assert main(["solve", os.path.join(TPCC, "c6.toml"), "--list-parameters"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines()[2:] if line.strip()}
    for p in TPCCSMP.parameters():
        assert p.name in lines
    assert lines["disks"].split()[1:3] == ["4", "1"]             # value from the file, default 1
    assert "cycles" in lines["disk.rotation_latency"]


@pytest.mark.parametrize("args, field", [
    (["--set", "cpu=4"], "cpu: unknown parameter; did you mean cpus"),
    (["--set", "cpus=0"], "cpus: must be an integer in 1..1024"),
    (["--set", "cpus=two"], "cpus: must be an integer"),
    (["--set", "disk.seek_time=-1"], "disk.seek_time: must be >= 0"),
    (["--set", "io.disk_parallelism=magic"], "io.disk_parallelism: must be one of"),
    (["--set", "mapping.table_to_disk=[1,2,1,2,1,2,1,2,1]"], "table 2 is on disk 2, but there are 1 disks"),
    (["--set", "nonsense"], "--set: expected NAME=VALUE"),
    (["--method", "schweitzer"], "is a model file"),
])
def test_bad_parameters_are_one_line_and_exit_2(args, field, capsys):
    assert main(["solve", os.path.join(TPCC, "c2.toml"), *args]) == 2
    err = capsys.readouterr().err
    assert field in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bad_model_files_are_one_line_and_exit_2(tmp_path, capsys):
    cases = {
        'kind = "nope"\n': "unknown model kind 'nope'; valid: ccnuma, cmt_core, network, shared_bus, svm_cluster, tpcc_smp",
        'kind = "tpcc_smp"\ncpus = 2.5\n': "cpus: must be an integer",
        'kind = "tpcc_smp"\n[disk]\nrotaton_latency = 1e6\n': "disk.rotaton_latency: unknown parameter; did you mean",
        'kind = "tpcc_smp"\nworkload.mix = [0.5, 0.5, 0.5, 0, 0]\n': "workload.mix: must sum to 1",
    }
    for text, message in cases.items():
        path = tmp_path / "m.toml"
        path.write_text(text)
        assert main(["solve", str(path)]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, (text, err)


def test_set_on_a_network_file_names_its_parameters(capsys):
    net = os.path.join(TPCC, "..", "examples", "two-class.toml")
    assert main(["solve", net, "--set", "cpus=2"]) == 2
    err = capsys.readouterr().err
    assert "cpus: unknown parameter" in err and "station.cpus.servers" in err and len(err.splitlines()) == 1


# --- the reproduction report ---------------------------------------------------------------

def test_report_covers_every_published_value(capsys):
    from models.tpcc_smp.report import main as report_main, reproduce
    rep = reproduce(classes=False)
    assert len(rep.tpmc) == len(data.published_tpmc())
    assert len(rep.utilization) == len(data.published_utilization())
    assert np.all(np.isfinite(rep.tpmc["model"]))
    mean, worst = rep.tpmc_error
    assert 0 <= mean <= worst
    assert len(rep.conclusions) == 5 and len(rep.inconsistencies) >= 8
    assert report_main(["--no-classes"]) == 0
    out = capsys.readouterr().out
    for table in (10, 11, 12, 13, 14, 15, 16, 17, 18):
        assert f"Table {table}:" in out
    assert report_main(["--set", "cpus=oops"]) == 2


def test_table13_sensitivity_is_out_of_reach_of_a_model_that_meets_table12():
    from models.tpcc_smp.report import reproduce
    rep = reproduce(classes=False)
    what = dict(rep.inconsistencies)["Table 13 I/O-bus sensitivity vs Table 12 disk utilisation"]
    needed = float(re.search(r"at least ([\d,]+) I/O", what).group(1).replace(",", ""))
    allowed = float(re.search(r"allows at most ([\d.]+)", what).group(1))
    assert needed > 100 * allowed
    # the model itself, whose disk visits come from Table 12, shows it: C2 barely moves with S_IOBus
    rows = rep.tpmc.query("table == 13 and configuration == 'C2'").set_index("value")
    paper_gain = rows.loc["3072", "paper"] / rows.loc["5120", "paper"] - 1
    model_gain = rows.loc["3072", "model"] / rows.loc["5120", "model"] - 1
    assert paper_gain > 0.15 and abs(model_gain) < 0.01


def test_paper_disk_names_map_to_model_disks():
    from models.tpcc_smp.report import model_device

    assert model_device("disk_3", disks=2, io_buses=2) == "disk_2"      # C4: the paper's K x L numbering
    assert [model_device(f"disk_{d}", 4, 2) for d in (1, 2, 3, 4)] == ["disk_1", "disk_2", "disk_3", "disk_4"]
    assert model_device("disk_3", disks=4, io_buses=1) == "disk_3"      # one bus: as numbered
    assert model_device("io_bus_2", disks=2, io_buses=2) == "io_bus_2"


# --- the shipped defaults (calibrated) and the paper's printed inputs -----------------------

def _tpmc_of(path, **values):
    return model_from_document(read_document(path), values).solve().outputs["tpmC"]


def test_shipped_configurations_reproduce_the_papers_cpu_scaling():
    """Table 10's headline: one CPU to two is the big step, then the curve flattens; no
    configuration passes the terminals' ceiling N P_I 60 / Z."""
    model = TPCCSMP.from_values({})
    ceiling = model.values["terminals"] * data.mix()[0] * 60 / model.mean_think_time()
    assert ceiling == pytest.approx(61.74, abs=0.01)
    tpmc = {i: _tpmc_of(os.path.join(TPCC, f"c{i}.toml")) for i in range(1, 10)}
    assert tpmc[2] >= 1.5 * tpmc[1]
    assert all(v < ceiling for v in tpmc.values())
    curve = [_tpmc_of(os.path.join(TPCC, "c1.toml"), cpus=k) for k in (1, 2, 3, 4)]
    steps = np.diff(curve)
    assert np.all(steps > 0) and steps[0] > 2 * steps[1] > 0 and steps[1] > steps[2]
    assert curve[3] / curve[2] - 1 < 0.02                  # flat after three CPUs


def test_table6_inputs_are_the_papers_printed_ones(capsys):
    """model.inputs = table6 is Table 7's CPI and the Table 12 disk scale, bit for bit;
    another value for either conflicts with a one-line error; sweeps apply it per case."""
    from models.tpcc_smp.model import CALIBRATED, PAPER_INPUTS

    assert PAPER_INPUTS == {"cpu.speed_by_cpus": (1.0,), "workload.disk_visit_scale": disk_visit_scale_from_table12(),
                            "disk.access_time": "exponential", "disk.block_size": 256.0, "disk.sector_size": 256.0,
                            "io_bus.transfer_size": 256.0}
    assert {p.name: p.default for p in PARAMETERS if p.name in CALIBRATED} == CALIBRATED
    named = _model(cpus=2, model__inputs="table6").solve().outputs
    explicit = TPCCSMP.from_values({"cpus": 2, "cpu.speed_by_cpus": (1.0,), "disk.access_time": "exponential",
                                    "disk.block_size": 256.0, "disk.sector_size": 256.0,
                                    "workload.disk_visit_scale": disk_visit_scale_from_table12()}).solve()
    assert named == explicit.outputs
    assert named["tpmC"] != _model(cpus=2).solve().outputs["tpmC"]
    c2 = os.path.join(TPCC, "c2.toml")
    assert main(["solve", c2, "--set", "model.inputs=table6", "--set", "workload.disk_visit_scale=0.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "workload.disk_visit_scale" in err and "table6" in err
    from mva.sweep import run_sweep
    swept = run_sweep(read_document(c2), [{"model.inputs": m, "cpus": k} for m in ("calibrated", "table6")
                                          for k in (1, 2)], progress=False)
    for row in swept.to_dict("records"):
        single = _tpmc_of(c2, **{"model.inputs": row["model.inputs"], "cpus": row["cpus"]})
        assert row["tpmC"] == pytest.approx(single, rel=1e-12)
