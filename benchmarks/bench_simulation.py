"""Speed of the discrete-event simulation (``method="simulation"``, issue #20), against SimPy.

Run: python benchmarks/bench_simulation.py [--events 5000000] [--simpy-events 300000] [--tpcc-events 5000000]

(a) events per second on the ten-station closed network of data/examples/ten-stations.toml
    (48 terminals, 5 s think time), ours and a SimPy model of the same network (SimPy is
    Python's reference DES library: each customer a process, each station a Resource,
    exponential times from ``random``), counting the same events: service and think
    completions;
(b) the time to know every class's throughput within ±1% at 95% confidence
    (``precision=0.01``) on a 3-class network of 10 stations with 30 customers per class,
    and the events that took;
(c) events per second of the TPC-C architecture simulator (models.tpcc_smp.simulation) on
    configurations C2 and C9 of data/tpcc, the event loop alone (think, CPU-burst, bus,
    disk and memory-transfer completions) and the whole simulate() call to tpmC within
    ±1% (which includes simulating the memory system for each busy-processor count).
All simulations run on one core; ours are timed after a compile warm-up.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from mva import Network, Station, exact_mva, solve  # noqa: E402
from mva.files import load_network  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def simpy_events_per_second(net: Network, events: int, seed: int = 1) -> tuple[float, float]:
    """Events/s of a SimPy model of the single-class closed network ``net`` (FCFS queues,
    which for one class have the same queue-length process as PS), and its throughput."""
    import simpy

    rng = random.Random(seed)
    env = simpy.Environment()
    demands = [float(s.demand[0]) for s in net.stations]
    resources = [simpy.Resource(env, capacity=1) for _ in demands]
    think = float(net.think_time[0])
    count = {"events": 0, "done": 0}

    def customer():
        while True:
            yield env.timeout(rng.expovariate(1.0 / think))
            count["events"] += 1
            for resource, demand in zip(resources, demands, strict=False):
                with resource.request() as request:
                    yield request
                    yield env.timeout(rng.expovariate(1.0 / demand))
                count["events"] += 1
            count["done"] += 1

    for _ in range(net.population[0]):
        env.process(customer())
    started = time.perf_counter()
    horizon = 1.0
    while count["events"] < events:
        env.run(until=horizon)
        horizon *= 1.5
    seconds = time.perf_counter() - started
    return count["events"] / seconds, count["done"] / env.now


def ours(net: Network, events: int, **options):
    started = time.perf_counter()
    result = solve(net, method="simulation", events=events, **options)
    return result, time.perf_counter() - started


def three_class_network(seed: int = 20) -> Network:
    rng = np.random.default_rng(seed)
    stations = [Station(f"s{k + 1}", "queue", rng.uniform(0.005, 0.05, 3).round(4)) for k in range(10)]
    return Network(stations, population=[30, 30, 30], think_time=[1.0, 2.0, 0.5])


#: the compile warm-ups' events: the fewest the simulation settings accept for an interval
WARM_UP_EVENTS = 20_000


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5_000_000)
    parser.add_argument("--simpy-events", type=int, default=300_000)
    parser.add_argument("--tpcc-events", type=int, default=5_000_000)
    args = parser.parse_args(argv)

    ten = load_network(str(ROOT / "data" / "examples" / "ten-stations.toml"))
    ours(ten, WARM_UP_EVENTS)                                  # compile
    result, seconds = ours(ten, args.events)
    rate = result.extras["events"] / seconds
    simpy_rate, simpy_x = simpy_events_per_second(ten, args.simpy_events)
    exact = exact_mva(ten).throughput[0]
    print("(a) ten-station closed network, 48 terminals (events/s, one core)")
    print(f"{'simulator':<12} {'events':>12} {'seconds':>9} {'events/s':>12} {'throughput':>11} {'exact MVA':>10}")
    print(f"{'mva':<12} {result.extras['events']:>12,} {seconds:>9.2f} {rate:>12,.0f} "
          f"{result.throughput[0]:>11.4f} {exact:>10.4f}")
    print(f"{'SimPy':<12} {args.simpy_events:>12,} {args.simpy_events / simpy_rate:>9.2f} {simpy_rate:>12,.0f} "
          f"{simpy_x:>11.4f} {exact:>10.4f}")
    print(f"speed-up: {rate / simpy_rate:.1f}x")

    net = three_class_network()
    ours(net, WARM_UP_EVENTS)
    result, seconds = ours(net, 200_000, precision=0.01, confidence=0.95)
    exact = exact_mva(net).throughput
    rel = result.half_width["throughput"] / result.throughput
    print("\n(b) 3 classes x 30 customers, 10 stations: throughput within ±1% at 95% confidence")
    print(f"reached: {result.converged}; {result.extras['events']:,} events in {seconds:.2f} s; "
          f"half-widths {', '.join(f'{100 * r:.2f}%' for r in rel)}; "
          f"|sim/exact - 1| {', '.join(f'{100 * abs(s / e - 1):.2f}%' for s, e in zip(result.throughput, exact, strict=False))}")

    tpcc_events_per_second(args.tpcc_events)
    return 0


def tpcc_events_per_second(events: int) -> None:
    from models.tpcc_smp import TPCCSMP
    from models.tpcc_smp.simulation import _Chain, architecture
    from mva.files import read_document
    from mva.modelkind import flatten_document

    print("\n(c) TPC-C architecture (48 terminals; events/s, one core)")
    print(f"{'config':<7} {'events':>11} {'seconds':>8} {'events/s':>12} {'transactions':>13} "
          f"{'simulate() to ±1% tpmC':>24}")
    for cfg in ("c2", "c9"):
        doc = read_document(str(ROOT / "data" / "tpcc" / f"{cfg}.toml"))
        model = TPCCSMP.from_values(flatten_document(doc), name=doc["name"])
        chain = _Chain(architecture(model), 1)
        chain.run(10_000)                                      # compile
        started = time.perf_counter()
        acc = chain.run(events)
        seconds = time.perf_counter() - started
        started = time.perf_counter()
        sim = model.simulate(precision=0.01)
        whole = time.perf_counter() - started
        print(f"{doc['name']:<7} {events:>11,} {seconds:>8.2f} {events / seconds:>12,.0f} "
              f"{int(acc['done'].sum()):>13,} {whole:>9.2f} s, {sim.extras['events']:>10,} events")


if __name__ == "__main__":
    sys.exit(main())
