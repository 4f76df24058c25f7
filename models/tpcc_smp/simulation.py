"""Discrete-event simulation of the machine the TPC-C model approximates:
``TPCCSMP.simulate()`` and ``mva solve FILE --method simulation``.

Du & Zhang (JPDC 2001) checked their model against a simulation of the machine (within
11.2%, section 4); this is ours, from the same parameters, so the model's approximations
(the CPU centre as a flow-equivalent server, the contention terms of eq. 3.6 and 3.8, the
disk-parallelism formula of eq. 3.9, product form itself) can be measured.  What is
simulated, per terminal (N of them):

- **Think**: a transaction type drawn with the mix (Table 2), then its keying time
  (fixed) plus an exponential think time of the type's mean (the TPC-C rules).
- **Transaction**: the type's Table 6 visits scaled as the model scales them (its
  instruction count, and disk operations on each disk by the f mapping); the number of
  disk operations is the mean's integer part plus one with the fractional part's
  probability, each operation's disk and direction drawn with the type's proportions.
  The transaction computes in ``operations + 1`` equal CPU bursts with one disk
  operation after each but the last, in sequence (section 3.2: "requested after the
  previous operation has finished").
- **CPUs** (``cpus`` processors, FCFS): a burst of ``instructions x cpu.cpi / cpu.clock``
  seconds of computing.  Between cache misses a processor computes for an exponential
  time (the mix's instructions per miss times the CPI); each miss stalls it through the
  split-transaction bus (request ``memory_bus.request_latency``, the memory
  ``memory.latency``, then the reply after regaining the bus), every one FCFS and fixed
  in length.  With hundreds of thousands of misses per transaction (617,000 for C2)
  this is simulated separately for each number of busy processors j (:mod:`models.bus_simulation`),
  giving their compute progress alpha(j); the transactions' CPU bursts then run at
  alpha(j)/j each.  That is near-complete decomposability (Courtois, *Decomposability*,
  1977): a miss takes about a hundred cycles, a burst tens of milliseconds, so the
  memory system reaches its steady state thousands of times within one burst.  The
  synchronisation loss ``cpu.sync_efficiency`` scales the progress as in the model.
  With ``cpu.rate`` given (measured rates that include every stall, the paper's Fig. 5)
  the CPU centre is instead a load-dependent server of those rates shared by all present.
- **I/O** (section 2.2 and eq. 3.7-3.8): a read sends its request over its I/O bus
  (``io_bus.request_latency``), queues FCFS at its disk, is accessed (seek and rotation
  uniform on [0, twice the mean], transfer fixed: ``disks = "mechanical"``; or one
  exponential time of the same mean: ``"exponential"``) into the disk cache
  (``disk.cache_latency``), then waits, still holding the disk, to regain the bus for the
  reply (``io_bus.reply_latency``).  A write queues at its disk, then holds its bus for
  ``io_bus.latency`` plus the whole access.  I/O buses work in parallel.  Each
  operation moves ``disk.block_size / cache.block_size`` cache blocks between memory and
  the disk, each taking the miss latency the memory system has at that moment's number
  of busy processors (after a read, before a write).

Outputs as :meth:`TPCCSMP.solve`, each with the half-width of its confidence interval:
``tpmC``, ``throughput``, ``response_time``; ``utilization`` of ``cpu`` (the fraction of
time the CPU centre has work, as the model's P(busy)), ``processors`` (mean fraction of
processors busy), ``memory_bus`` and ``memory`` (explicit CPUs only: from the memory
simulation at each busy-processor count, weighted by the time at that count, plus the
disk transfers), each ``io_bus_b`` and ``disk_d`` (the time it is held: a disk from the
start of its access to the end of the reply or write); ``residence_time`` of ``cpu``
and ``io`` per transaction.  The model's separate ``memory_bus``/``memory`` residences
and its ``io_system`` have no counterpart here (the memory delays are inside the CPU
time).  The memory simulation's own uncertainty is reported in the extras and the
message, not folded into the intervals.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
from mva.errors import ModelError
from mva.modelkind import ModelSolution, flatten
from mva.simulation_output import analyse
from mva.simulation_settings import SimulationSettings, chosen_settings
from mva.variates import seed as seed_stream

from ..bus_simulation import BusMachine, simulate_bus_machine
from . import _simulation_kernel as kernel
from .equations import tpmc
from .reading import access_times, processor_speed
from .outputs import OUTPUT_UNITS
from mva.jit import clock, seconds_since

__all__ = ["simulate", "Architecture", "architecture", "DISK_MODELS"]

DISK_MODELS = ("mechanical", "exponential")


@dataclass(frozen=True)
class Architecture:
    """Everything the event loop needs, in seconds (built by :func:`architecture`)."""

    terminals: int
    mix_cumulative: np.ndarray      # (T,)
    keying: np.ndarray              # (T,) s, fixed part of the think time
    think_mean: np.ndarray          # (T,) s, exponential part
    cpu_work: np.ndarray            # (T,) s of CPU work per transaction at rate 1
    ops_mean: np.ndarray            # (T,) disk operations per transaction
    op_cumulative: np.ndarray       # (T, 2D) running sum over (disk d read, disk d write)
    bus_of_disk: np.ndarray         # (D,)
    n_buses: int
    times: np.ndarray               # see the kernel's T_ indices
    cpu_servers: int                # bursts that run at once
    cpu_rate: np.ndarray            # (cpu_servers + 1,) progress of each running burst
    dma_blocks: float               # cache blocks moved per disk operation
    dma_latency: np.ndarray         # (cpu_servers + 1,) s per block at j busy processors
    memory_utilization: np.ndarray  # (cpu_servers + 1, 2) memory bus, memory at j busy
    memory_block_time: np.ndarray   # (2,) s of bus and of memory per moved block
    exponential_disks: bool
    explicit_cpus: bool
    memory_note: str


def architecture(model, disks: str = "mechanical", memory_precision: float = 0.001, seed: int = 1) -> Architecture:
    """The simulated machine of ``model`` (a :class:`~models.tpcc_smp.TPCCSMP`), its memory
    system's progress rates simulated to ``memory_precision`` (relative, 95%)."""
    if disks not in DISK_MODELS:
        raise ModelError("disks", f"must be one of {', '.join(DISK_MODELS)}, got {disks!r}")
    v = model.values
    clock = v["cpu.clock"]
    w = model.workload(per_transaction=True)
    keying = np.asarray(v["workload.keying_time"], dtype=float) + v["workload.menu_time"]
    think = np.asarray(v["workload.think_time"], dtype=float)
    reads, writes = np.asarray(w.reads), np.asarray(w.writes)
    n_types, n_disks = reads.shape
    pairs = np.empty((n_types, 2 * n_disks))
    pairs[:, 0::2], pairs[:, 1::2] = reads, writes
    ops_mean = pairs.sum(axis=1)
    # a type without disk operations never draws one: any cumulative row will do
    op_cumulative = np.cumsum(np.where(ops_mean[:, None] > 0, pairs, 1.0), axis=1)
    per_access = access_times(v)
    times = np.array([per_access["request"], per_access["reply"], per_access["write_bus"],
                      v["disk.seek_time"], v["disk.rotation_latency"], per_access["transfer"],
                      v["disk.cache_latency"]]) / clock
    miss_cycles = v["memory_bus.request_latency"] + v["memory.latency"] + v["memory_bus.reply_latency"]
    block_time = np.array([v["memory_bus.request_latency"] + v["memory_bus.reply_latency"], v["memory.latency"]]) / clock
    k, n = v["cpus"], v["terminals"]
    if v["cpu.rate"]:
        # the CPU centre as the load-dependent server of the given rates, shared by all present
        mu = np.asarray(v["cpu.rate"], dtype=float)
        servers = n
        present = np.arange(1, n + 1)
        relative = mu[np.minimum(present, len(mu)) - 1] / mu[0]
        cpu_rate = np.concatenate([[0.0], relative / present])
        cpu_work = w.cpu_instructions / (mu[0] * clock)
        dma_latency = np.full(servers + 1, miss_cycles / clock)
        memory = np.full((servers + 1, 2), np.nan)
        note = "CPU centre: the given cpu.rate, shared by the transactions present"
        explicit = False
    else:
        servers = min(k, n)
        speed = processor_speed(v)               # a lone processor's computing runs slower
        instructions_per_miss = float(w.weight @ w.cpu_instructions / (w.weight @ w.cpu_memory_visits))
        compute = instructions_per_miss * v["cpu.cpi"] / speed             # cycles between misses
        phases = ((0, v["memory_bus.request_latency"], 0.0), (1, v["memory.latency"], 0.0),
                  (0, v["memory_bus.reply_latency"], 0.0))
        eta = v["cpu.sync_efficiency"]
        cpu_rate = np.zeros(servers + 1)
        dma_latency = np.zeros(servers + 1)
        memory = np.zeros((servers + 1, 2))
        worst = 0.0
        for j in range(1, servers + 2):
            est = simulate_bus_machine(BusMachine(j, compute, phases, 2), seed=seed + j, precision=memory_precision)
            worst = max(worst, float(est.half["progress"][0] / est.mean["progress"][0]))
            if j <= servers:
                sync = np.sum(eta ** np.arange(j)) / j
                cpu_rate[j] = float(est.mean["progress"][0]) / j * sync
                memory[j] = est.mean["utilization"]
            # a transfer when j - 1 processors are busy sees what a miss of j processors sees
            dma_latency[j - 1] = float(est.mean["latency"][0]) / clock
        cpu_work = w.cpu_instructions * v["cpu.cpi"] / (clock * speed)
        note = (f"CPUs: {k} processors, {compute:.4g} cycles between misses, memory system simulated for 1-"
                f"{servers + 1} busy processors (progress within ±{100 * worst:.2g}%)")
        explicit = True
    return Architecture(terminals=n, mix_cumulative=np.cumsum(w.weight), keying=keying, think_mean=think,
                        cpu_work=np.asarray(cpu_work, dtype=float), ops_mean=ops_mean, op_cumulative=op_cumulative,
                        bus_of_disk=model.bus_of_disk().astype(np.int64), n_buses=v["io_buses"], times=times,
                        cpu_servers=servers, cpu_rate=cpu_rate,
                        dma_blocks=v["disk.block_size"] / v["cache.block_size"], dma_latency=dma_latency,
                        memory_utilization=memory, memory_block_time=block_time,
                        exponential_disks=disks == "exponential", explicit_cpus=explicit, memory_note=note)


class _Chain:
    """The simulated machine's state."""

    def __init__(self, arch: Architecture, stream: int):
        n, d = arch.terminals, len(arch.bus_of_disk)
        self.arch = arch
        self.clock = np.zeros(1)
        self.timer = np.full(n, np.inf)
        self.stage = np.zeros(n, dtype=np.int64)
        self.kind = np.zeros(n, dtype=np.int64)
        self.ops_left = np.zeros(n, dtype=np.int64)
        self.burst = np.zeros(n)
        self.burst_work = np.zeros(n)
        self.disk_of = np.zeros(n, dtype=np.int64)
        self.is_write = np.zeros(n, dtype=np.int64)
        self.tx_start = np.zeros(n)
        self.tx_cpu = np.zeros(n)                  # the transaction's CPU-centre time so far
        self.tx_io = np.zeros(n)                   # and its I/O time
        self.phase_start = np.zeros(n)
        self.cpu_queue = np.zeros(n, dtype=np.int64)
        self.cpu_n = np.zeros(1, dtype=np.int64)
        self.cpu_last = np.zeros(1)
        self.bus_holder = np.full(arch.n_buses, -1, dtype=np.int64)
        self.bus_queue = np.zeros((arch.n_buses, n), dtype=np.int64)
        self.bus_head = np.zeros(arch.n_buses, dtype=np.int64)
        self.bus_n = np.zeros(arch.n_buses, dtype=np.int64)
        self.disk_holder = np.full(d, -1, dtype=np.int64)
        self.disk_queue = np.zeros((d, n), dtype=np.int64)
        self.disk_head = np.zeros(d, dtype=np.int64)
        self.disk_n = np.zeros(d, dtype=np.int64)
        self.held_since = np.zeros(n + d)
        seed_stream(stream)
        kernel.start(self.timer, self.stage, self.kind, arch.mix_cumulative, arch.keying, arch.think_mean)

    def run(self, events: int) -> dict:
        a = self.arch
        types = len(a.cpu_work)
        acc = {"done": np.zeros(types), "response": np.zeros(types), "scalars": np.zeros(4),
               "busy_bus": np.zeros(a.n_buses), "busy_disk": np.zeros(len(a.bus_of_disk)),
               "time_at": np.zeros(a.cpu_servers + 1)}
        start = self.clock[0]
        kernel.run(events, self.clock, self.timer, self.stage, self.kind, self.ops_left, self.burst, self.burst_work,
                   self.disk_of, self.is_write, self.tx_start, self.tx_cpu, self.tx_io, self.phase_start, self.cpu_queue, self.cpu_n,
                   self.cpu_last, self.bus_holder, self.bus_queue, self.bus_head, self.bus_n, self.disk_holder,
                   self.disk_queue, self.disk_head, self.disk_n, self.held_since, a.mix_cumulative, a.keying,
                   a.think_mean, a.cpu_work, a.ops_mean, a.op_cumulative, a.bus_of_disk, a.times, a.cpu_servers,
                   a.cpu_rate, a.dma_blocks, a.dma_latency, a.exponential_disks, acc["done"], acc["response"],
                   acc["scalars"], acc["busy_bus"], acc["busy_disk"], acc["time_at"])
        acc["time"] = self.clock[0] - start
        return acc


def _measures(a: Architecture, acc: dict) -> dict:
    """Flat estimates (``tpmC``, ``utilization.disk_1``, ...) from accumulators."""
    span = acc["time"]
    done = acc["done"].sum()
    s = acc["scalars"]
    with np.errstate(invalid="ignore", divide="ignore"):
        per_tx = 1.0 / done if done > 0 else np.nan
        out = {"tpmC": tpmc(acc["done"][0] / span), "throughput": done / span,
               "response_time": acc["response"].sum() * per_tx,
               "utilization.cpu": s[kernel.A_CPU_BUSY] / span}
        if a.explicit_cpus:
            busy = np.arange(a.cpu_servers + 1) @ acc["time_at"]
            out["utilization.processors"] = busy / (a.cpu_servers * span)
            moved = s[kernel.A_DMA] * a.memory_block_time / span
            memory = acc["time_at"] @ a.memory_utilization / span + moved
            out["utilization.memory_bus"], out["utilization.memory"] = memory[0], memory[1]
        for b, busy in enumerate(acc["busy_bus"]):
            out[f"utilization.io_bus_{b + 1}"] = busy / span
        for d, busy in enumerate(acc["busy_disk"]):
            out[f"utilization.disk_{d + 1}"] = busy / span
        out["residence_time.cpu"] = s[kernel.A_CPU_RESIDENCE] * per_tx
        out["residence_time.io"] = s[kernel.A_IO_RESIDENCE] * per_tx
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}


def _nest(flat: dict) -> dict:
    """Dotted names back to the outputs' groups (``utilization.cpu`` under ``utilization``)."""
    out = {}
    for name, value in flat.items():
        group, _, key = name.partition(".")
        if key:
            out.setdefault(group, {})[key] = value
        else:
            out[name] = value
    return out


#: Run settings of :func:`simulate` (``precision`` on tpmC when given).
SIMULATION = SimulationSettings(events=400_000, max_events=50_000_000, target="tpmC")


def simulate(model, settings: SimulationSettings | None = None, disks: str | None = None,
             memory_precision: float = 0.001, **options) -> ModelSolution:
    """Simulate the machine of ``model`` (see the module) and estimate its outputs.

    ``settings`` default to :data:`SIMULATION` and ``options`` change its fields (events
    are the architecture's: think, burst, bus, disk and transfer completions;
    ``precision`` is on ``tpmC``, the main output); ``disks`` chooses the access-time distribution
    (default the model's ``disk.access_time``); ``memory_precision`` the
    relative precision of the memory system's progress rates.

    Returns
    -------
    ModelSolution
        The outputs of :meth:`TPCCSMP.solve` that the machine has (see the module), with
        ``half_width`` (same nesting) and ``confidence_level``; ``converged`` is False
        when ``precision`` was not reached.
    """
    started = clock()
    settings = chosen_settings(settings, SIMULATION, **{**options, "target": "tpmC"})
    seed, precision, confidence = settings.seed, settings.precision, settings.confidence
    if not 0.0 < memory_precision < 1.0:
        raise ModelError("memory_precision", f"must be a fraction between 0 and 1, got {memory_precision!r}")
    arch = architecture(model, disks or model.values["disk.access_time"], memory_precision, int(seed))
    run = analyse(partial(_Chain, arch), partial(_measures, arch), settings)
    outputs = _nest({k: float(v) for k, v in run.mean.items()})
    half = _nest({k: float(v) for k, v in run.half.items()})
    message = f"simulation: {run.how}; {arch.memory_note}"
    reached = run.reached
    if run.total["done"].sum() == 0:
        reached = False
        message += "; no transaction completed: run more events"
    elif not reached:
        message += f"; precision {precision:g} not reached (tpmC ±{half['tpmC'] / outputs['tpmC']:.3g})"
    return ModelSolution(model=model.name or "tpcc_smp", kind=model.kind, outputs=outputs, converged=reached,
                         iterations=run.spent, solve_seconds=seconds_since(started), message=message,
                         units=OUTPUT_UNITS, half_width=half, confidence_level=confidence,
                         extras={"events": run.spent, "simulated_time": float(run.total["time"]), "seed": int(seed),
                                 "transactions": float(run.total["done"].sum()), "method": run.method,
                                 "memory": arch.memory_note, "flat": flatten(outputs)})
