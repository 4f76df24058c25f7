"""The TPC-C architecture simulator (``TPCCSMP.simulate``, ``--method simulation``) and the
bus-machine simulator under it, against methods that share no code with them: exact MVA
of a product-form special case, hand-worked no-contention cases, and invariants."""
from __future__ import annotations

import json

import numpy as np
import pytest

from models.bus_simulation import BusMachine, simulate_bus_machine
from models.tpcc_smp import TPCCSMP
from models.tpcc_smp.simulation import architecture
from mva import ModelError, Network, Station, exact_mva
from mva.cli import main


def test_one_processor_on_the_bus_progresses_as_computed_by_hand():
    # nobody to contend with: each miss cycle is compute + request + memory + reply
    machine = BusMachine(1, 312.0, ((0, 2.0, 0.0), (1, 100.0, 0.0), (0, 10.0, 0.0)), 2)
    est = simulate_bus_machine(machine, precision=0.001)
    assert est.reached
    assert abs(est.mean["progress"][0] - 312 / 424) <= est.half["progress"][0]
    assert est.mean["latency"][0] == pytest.approx(112.0)           # fixed phases, no queue
    assert est.mean["utilization"] == pytest.approx([12 / 424, 100 / 424], rel=0.01)


@pytest.mark.parametrize("processors", [2, 5])
def test_exponential_bus_machine_matches_exact_mva(processors):
    # exponential phases of equal mean on the bus: product form (a delay, the bus visited
    # twice, the memory), so exact MVA gives the stall rate
    machine = BusMachine(processors, 50.0, ((0, 10.0, 1.0), (1, 30.0, 1.0), (0, 10.0, 1.0)), 2)
    est = simulate_bus_machine(machine, seed=3, precision=0.003, events=200_000)
    net = Network([Station("compute", "delay", [50.0]), Station("bus", "queue", [20.0]),
                   Station("memory", "queue", [30.0])], population=[processors])
    exact = exact_mva(net)
    x = exact.throughput[0]
    assert abs(est.mean["stalls"][0] - x) <= 1.5 * est.half["stalls"][0]
    assert abs(est.mean["progress"][0] - 50.0 * x) <= 1.5 * est.half["progress"][0]
    assert est.mean["utilization"] == pytest.approx(exact.utilization[1:, 0], rel=0.02)


def test_posted_transactions_load_the_bus_without_stalling():
    machine = BusMachine(1, 100.0, ((0, 10.0, 0.0),), 1, posted_rate=0.002, posted_station=0, posted_mean=20.0,
                         posted_scv=0.0)
    est = simulate_bus_machine(machine, precision=0.002)
    # posted work arrives at 0.002 per computing cycle; the bus's utilisation is both kinds' work
    computing = est.mean["progress"][0]
    assert est.mean["posted"][0] == pytest.approx(0.002 * computing, rel=0.02)
    assert est.mean["utilization"][0] == pytest.approx(est.mean["stalls"][0] * 10 + est.mean["posted"][0] * 20,
                                                       rel=1e-6)


def _product_form_case():
    # one disk per bus, no bus, cache or memory time, exponential accesses, the CPU centre
    # as given rates: terminals, a load-dependent CPU and FCFS exponential disks
    values = {"cpus": 2, "terminals": 12, "disks": 3, "io_buses": 3, "cpu.rate": [1.0, 1.8, 2.4],
              "mapping.table_to_disk": [1, 2, 3, 1, 2, 3, 1, 2, 3], "io_bus.latency": 0.0,
              "io_bus.request_latency": 0.0, "io_bus.reply_latency": 0.0, "disk.cache_latency": 0.0,
              "memory.latency": 1e-6, "memory_bus.request_latency": 0.0, "memory_bus.reply_latency": 0.0,
              "cpu.clock": 2.0e6, "disk.seek_time": 5.0e4, "workload.disk_visit_scale": 0.02}
    return TPCCSMP.from_values(values)


def test_product_form_special_case_matches_exact_mva():
    model = _product_form_case()
    # eight comparisons at 99.9% each: all hold with probability >= 99.2% (Bonferroni)
    sim = model.simulate(disks="exponential", events=300_000, seed=5, confidence=0.999)
    # the same machine written as a network by hand, demands per mix-weighted transaction
    w = model.workload(per_transaction=True)
    v = model.values
    mix = np.asarray(v["workload.mix"])
    mu = np.asarray(v["cpu.rate"])
    cpu = mix @ w.cpu_instructions / (mu[0] * v["cpu.clock"])
    # an access moves a page: seek, rotation and disk.block_size / disk.sector_size transfers
    access = (v["disk.seek_time"] + v["disk.rotation_latency"]
              + v["disk.block_size"] / v["disk.sector_size"] * v["disk.transfer_time"]) / v["cpu.clock"]
    disks = mix @ (w.reads + w.writes) * access
    net = Network([Station("cpu", "ld", [cpu], capacity=mu / mu[0])]
                  + [Station(f"disk_{d + 1}", "queue", [disks[d]]) for d in range(3)],
                  population=[v["terminals"]], think_time=[model.mean_think_time()])
    exact = exact_mva(net)
    h = sim.half_width
    assert abs(sim.outputs["throughput"] - exact.throughput[0]) <= h["throughput"]
    assert abs(sim.outputs["response_time"] - exact.response_time[0]) <= h["response_time"]
    for d in range(3):
        name = f"disk_{d + 1}"
        assert abs(sim.outputs["utilization"][name] - exact.utilization[d + 1, 0]) <= h["utilization"][name]
    # the CPU centre is busy whenever it holds a transaction: 1 - P(0 there)
    assert abs(sim.outputs["residence_time"]["cpu"] - exact.residence_time[0, 0]) <= h["residence_time"]["cpu"]


def test_one_terminal_alone_takes_the_sum_of_its_service_times():
    # N = 1: no queue anywhere, so the mean response is the visits times the service times
    model = TPCCSMP.from_values({"terminals": 1, "cpus": 2})
    sim = model.simulate(events=300_000, seed=2)
    v, w = model.values, model.workload(per_transaction=True)
    clock = v["cpu.clock"]
    mix = np.asarray(v["workload.mix"])
    misses = mix @ w.cpu_memory_visits
    miss = v["memory_bus.request_latency"] + v["memory.latency"] + v["memory_bus.reply_latency"]
    cpu = mix @ w.cpu_instructions * v["cpu.cpi"] / clock + misses * miss / clock   # every miss stalls alone
    # a page of 8 KB: 16 sector transfers of the disk, 32 bus transfers of 256 bytes each way
    sectors, transfers = v["disk.block_size"] / v["disk.sector_size"], v["disk.block_size"] / v["io_bus.transfer_size"]
    access = (v["disk.seek_time"] + v["disk.rotation_latency"] + sectors * v["disk.transfer_time"]) / clock
    blocks = v["disk.block_size"] / v["cache.block_size"] * miss / clock
    read = (v["io_bus.request_latency"] + transfers * v["io_bus.reply_latency"] + v["disk.cache_latency"]) / clock \
        + access
    write = transfers * v["io_bus.latency"] / clock + access
    io = mix @ (w.reads.sum(axis=1) * (read + blocks) + w.writes.sum(axis=1) * (write + blocks))
    h = sim.half_width
    # the memory system's progress at one processor is simulated (±0.1%): allow for it
    assert abs(sim.outputs["residence_time"]["cpu"] - cpu) <= h["residence_time"]["cpu"] + 0.002 * cpu
    assert abs(sim.outputs["residence_time"]["io"] - io) <= h["residence_time"]["io"]
    x = 1.0 / (model.mean_think_time() + cpu + io)
    assert abs(sim.outputs["throughput"] - x) <= h["throughput"] + 0.002 * x


def test_littles_law_and_the_response_time_split_hold():
    model = TPCCSMP.from_values({"cpus": 2, "terminals": 30, "disks": 2, "io_buses": 1,
                                 "mapping.table_to_disk": [1, 2, 1, 2, 1, 2, 1, 2, 1]})
    sim = model.simulate(events=200_000, seed=4)
    o, h = sim.outputs, sim.half_width
    # every transaction is CPU bursts and disk operations, nothing else
    assert o["response_time"] == pytest.approx(o["residence_time"]["cpu"] + o["residence_time"]["io"], rel=1e-9)
    # terminals = X (Z + R), within the estimates' uncertainty
    z = model.mean_think_time()
    slack = h["throughput"] * (z + o["response_time"]) + o["throughput"] * h["response_time"]
    assert abs(o["throughput"] * (z + o["response_time"]) - 30) <= slack
    assert o["tpmC"] == pytest.approx(60 * o["throughput"] * model.values["workload.mix"][0], rel=0.05)
    for name, u in o["utilization"].items():
        assert 0.0 <= u <= 1.0, name
    # one bus for two disks: the bus is held at most as long as the disks together are
    assert o["utilization"]["io_bus_1"] <= o["utilization"]["disk_1"] + o["utilization"]["disk_2"]


def test_same_seed_same_numbers_and_another_seed_others():
    model = TPCCSMP.from_values({"cpus": 1, "terminals": 8})
    a, b = model.simulate(events=40_000, seed=7), model.simulate(events=40_000, seed=7)
    c = model.simulate(events=40_000, seed=8)
    assert a.outputs == b.outputs and a.half_width == b.half_width
    assert a.outputs["throughput"] != c.outputs["throughput"]


def test_faster_disks_never_slow_the_machine():
    base = TPCCSMP.from_values({"cpus": 4, "terminals": 20})
    slow = base.simulate(events=150_000, seed=1)
    fast = base.replace(disk__rotation_latency=2e5, disk__seek_time=2e5).simulate(events=150_000, seed=1)
    assert fast.outputs["throughput"] + fast.half_width["throughput"] >= slow.outputs["throughput"] \
        - slow.half_width["throughput"]
    assert fast.outputs["utilization"]["disk_1"] < slow.outputs["utilization"]["disk_1"]


def test_explicit_cpus_saturate_at_the_memory_systems_progress():
    # far more terminals than the CPUs can serve: X = servers x alpha(k)/k / work per transaction
    model = TPCCSMP.from_values({"cpus": 2, "terminals": 200, "workload.disk_visit_scale": 0.001})
    sim = model.simulate(events=200_000, seed=3)
    arch = architecture(model)
    work = model.values["workload.mix"] @ arch.cpu_work
    assert sim.outputs["utilization"]["processors"] > 0.999
    assert sim.outputs["throughput"] == pytest.approx(2 * arch.cpu_rate[2] / work,
                                                      abs=sim.half_width["throughput"] * 1.5)


def test_bad_settings_are_named():
    model = TPCCSMP.from_values({})
    with pytest.raises(ModelError, match="disks"):
        model.simulate(disks="ssd")
    with pytest.raises(ModelError, match="events"):
        model.simulate(events=0)
    with pytest.raises(ModelError, match="memory_precision"):
        model.simulate(memory_precision=2.0)


def test_command_line_simulates_a_model_file(capsys, tmp_path):
    assert main(["solve", "data/tpcc/c2.toml", "--method", "simulation", "--events", "30000"]) == 0
    out = capsys.readouterr().out
    assert "confidence intervals" in out and "tpmC [New-Order/min]" in out and "±" in out
    assert main(["solve", "data/tpcc/c2.toml", "--method", "simulation", "--events", "30000",
                 "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["confidence_level"] == 0.95
    assert set(record["half_width"]["utilization"]) == set(record["outputs"]["utilization"])
    assert main(["solve", "data/tpcc/c2.toml", "--method", "simulation", "--tol", "1e-3"]) == 2
    assert "--tol" in capsys.readouterr().err
    assert main(["solve", "data/tpcc/c2.toml", "--method", "linearizer"]) == 2
    assert "--method simulation" in capsys.readouterr().err


def test_shared_bus_model_is_exact_where_the_simulated_machine_is_product_form():
    from models.shared_bus import SharedBus
    # exponential bus service, no non-stalling work, b = 1: the recursion is exact MVA of a
    # delay (computing) and a queue (the bus), the machine the simulator runs
    model = SharedBus.from_values({"cpus": 6, "cpu_cycles": 4.0, "profile.cpus": [6], "profile.sync_rate": [0.02],
                                   "profile.sync_cycles": [40.0], "profile.sync_second_moment": [3200.0],
                                   "profile.async_rate": [0.0], "profile.async_cycles": [0.0],
                                   "profile.async_second_moment": [0.0]})
    solved, sim = model.solve().outputs, model.simulate(seed=2, precision=0.003)
    assert sim.converged
    for name in ("gsp", "bus_utilization", "stall_per_reference"):
        assert abs(sim.outputs[name] - solved[name]) <= sim.half_width[name], name


def test_shared_bus_simulation_with_non_stalling_work_loads_the_bus():
    from models.shared_bus import SharedBus
    base = {"cpus": 4, "cpu_cycles": 5.0, "profile.cpus": [4], "profile.sync_rate": [0.01],
            "profile.sync_cycles": [50.0], "profile.sync_second_moment": [3000.0],
            "profile.async_rate": [0.005], "profile.async_cycles": [20.0], "profile.async_second_moment": [500.0],
            "service": "measured"}
    sim = SharedBus.from_values(base).simulate(seed=1, precision=0.005)
    alone = SharedBus.from_values({**base, "profile.async_rate": [0.0]}).simulate(seed=1, precision=0.005)
    # posted work takes bus time from the stalling transactions: less progress, more waiting
    assert sim.outputs["gsp"] + sim.half_width["gsp"] < alone.outputs["gsp"] - alone.half_width["gsp"]
    assert sim.outputs["stall_per_reference"] > alone.outputs["stall_per_reference"]


def test_validation_rows_compare_like_with_like():
    from models.tpcc_smp.validation import main as validation_main
    from models.tpcc_smp.validation import summary, validate
    frame = validate(["C1", "C4"], precision=0.05, events=40_000)
    assert set(frame.configuration) == {"C1", "C4"}
    c4 = set(frame[frame.configuration == "C4"].output)
    assert {"tpmC", "utilization.cpu", "utilization.memory", "utilization.io_bus_2", "utilization.disk_2"} <= c4
    assert "utilization.processors" in c4 and "utilization.io_system" not in c4      # the machine has no io_system
    assert np.allclose(frame.error, frame.model / frame.simulation - 1)
    assert (frame.within == ((frame.model - frame.simulation).abs() <= frame.half_width)).all()
    s = summary(frame)
    assert s["cases"] == 2 and s["tpmc_max_error"] >= s["tpmc_mean_error"] > 0
    with pytest.raises(ModelError, match="cpu_centre"):
        validate(["C1"], cpu_centre="fesc")
    assert validation_main(["--set", "cpus=0"]) == 2
