"""Mean-value analysis of a chip-multithreading processor.

Each hardware thread is one customer of its own class circulating through the
instructions it retires (closed network, population 1 per class; Laudon, Gupta &
Horowitz's interleaved processor, ASPLOS 1994, as a queueing model).  Per instruction,
thread i visits

* its core's pipeline: 1 cycle of service, shared round-robin among the ready threads
  every cycle, i.e. processor sharing;
* a delay, its stall beyond the issue cycle: f_i (l1 - 1) + m1_i (l2 - l1)
  + m2_i (memory - line), with f_i memory instructions, m1_i L1 misses and m2_i L2
  misses per instruction and the latencies of the shared-L2 machine (L1 hit, L1 to L2,
  L2 to memory; Fedorova, Seltzer, Small & Nussbaum, Harvard TR-17-04, 2004, §4-§5:
  2, 22 and 120 cycles);
* the memory channel: m2_i x ``line_cycles`` (block / bandwidth) of service.  Every
  class needs the same ``line_cycles`` per visit, so FCFS and PS have the same MVA
  (BCMP), and the channel is solved as a queue.

IPC of a core = the sum of its threads' throughputs (instructions per cycle).  The
miss rates come from the simulator (measured) or from reuse-distance predictions
(:func:`calibration.profiles.cmt_core.group_prediction`).  Reconstruction [REC]: the paper has
no analytical model of the core; this one is ours, and the deterministic 1-cycle issue
and fixed latencies are taken as exponential, which MVA's product form needs.

References
----------
J. Laudon, A. Gupta and M. Horowitz, "Interleaving: a multithreading technique targeting
multiprocessors and workstations", ASPLOS VI (1994); A. Fedorova, M. Seltzer, C. Small
and D. Nussbaum, "Throughput-oriented scheduling on chip multithreading systems", Harvard
TR-17-04 (2004).

See Also
--------
:mod:`calibration.sim.cmt` (the simulated chip), :mod:`calibration.profiles.cmt_core`
(values from reuse profiles), :mod:`calibration.scheduling` (balance-set schedules),
:mod:`calibration.studies.cmt` (the findings against the paper).
"""
from __future__ import annotations

import numpy as np

from mva.errors import ModelError
from mva.modelkind import ModelSolution, Parameter, ParameterisedModel, integer, integer_list, real, real_list, timed

__all__ = ["CMTCore", "PARAMETERS", "cmt_network"]

PARAMETERS = (
    Parameter("cores", 1, "cores", "processor cores on the chip", integer(1, 256)),
    Parameter("latency.l1", 2.0, "cycles", "L1 hit latency (issue to ready)", real(1.0)),
    Parameter("latency.l2", 22.0, "cycles", "L1 miss that hits the L2", real(1.0)),
    Parameter("latency.memory", 120.0, "cycles", "L2 to memory, beyond the L2 latency", real(0.0)),
    Parameter("line_cycles", 8.0, "cycles", "memory channel time per line (block / bandwidth)", real(0.0)),
    Parameter("threads.core", [0, 0, 0, 0], "core", "the core of each hardware thread", integer_list(0)),
    Parameter("threads.memory_instructions", [0.3, 0.3, 0.3, 0.3], "1/instruction",
              "instructions with a data access, per instruction", real_list(0.0)),
    Parameter("threads.l1_misses", [0.03, 0.03, 0.03, 0.03], "1/instruction", "L1 data misses per instruction",
              real_list(0.0)),
    Parameter("threads.l2_misses", [0.01, 0.01, 0.01, 0.01], "1/instruction", "L2 misses per instruction",
              real_list(0.0)),
)

OUTPUT_UNITS = {"ipc": "instructions/cycle", "core_ipc": "instructions/cycle", "thread_ipc": "instructions/cycle",
                "memory_wait": "cycles/miss"}
THREAD_LISTS = ("memory_instructions", "l1_misses", "l2_misses")


def cmt_network(core, memory_instructions, l1_misses, l2_misses, cores=1, l1=2.0, l2=22.0, memory=120.0,
                line_cycles=8.0):
    """The closed network of the module docstring (one class per thread; demands in
    cycles per instruction)."""
    from mva import Network, Station

    core = np.asarray(core, int)
    f, m1, m2 = (np.asarray(v, float) for v in (memory_instructions, l1_misses, l2_misses))
    n = core.shape[0]
    stations = [Station(f"pipeline{c}", "queue", tuple(float(core[i] == c) for i in range(n))) for c in range(cores)]
    stations.append(Station("memory", "queue", tuple(m2 * line_cycles)))
    delay = f * (l1 - 1) + m1 * (l2 - l1) + m2 * max(memory - line_cycles, 0.0)
    return Network(tuple(stations), classes=tuple(f"thread{i}" for i in range(n)), population=(1,) * n,
                   think_time=tuple(float(d) for d in delay))


class CMTCore(ParameterisedModel):
    """Model kind ``cmt_core`` (see the module docstring).  Outputs: ``ipc`` (chip),
    ``core_ipc`` {core: IPC}, ``thread_ipc`` {thread: IPC}, ``utilization``
    {pipeline<c>, memory}, ``memory_wait`` (cycles an L2 miss queues for the channel)."""

    kind = "cmt_core"
    main_output = "ipc"

    PARAMETERS = PARAMETERS

    def check(self) -> None:
        n = len(self.values["threads.core"])
        if n == 0:
            raise ModelError("threads.core", "the chip needs at least one thread")
        for key in THREAD_LISTS:
            if len(self.values[f"threads.{key}"]) != n:
                raise ModelError(f"threads.{key}", f"needs one value per thread ({n}), got "
                                                   f"{len(self.values[f'threads.{key}'])}")
        if max(self.values["threads.core"]) >= self.values["cores"]:
            raise ModelError("threads.core", f"a thread is on core {max(self.values['threads.core'])}, the chip "
                                             f"has cores 0..{self.values['cores'] - 1}")
        v = self.values
        for i, (f, m1, m2) in enumerate(zip(*(v[f"threads.{k}"] for k in THREAD_LISTS), strict=False)):
            if f > 1.0:
                raise ModelError(f"threads.memory_instructions[{i}]", f"{f:g} per instruction is more than one: an "
                                                                      "instruction makes at most one data access")
            if m1 > f + 1e-12:
                raise ModelError(f"threads.l1_misses[{i}]", f"{m1:g} exceeds the thread's memory instructions {f:g}: "
                                                            "an L1 miss is a data access first")
            if m2 > m1 + 1e-12:
                raise ModelError(f"threads.l2_misses[{i}]", f"{m2:g} exceeds the thread's L1 misses {m1:g}: an L2 "
                                                            "miss is an L1 miss first")

    def network(self):
        v = self.values
        return cmt_network(v["threads.core"], *(v[f"threads.{k}"] for k in THREAD_LISTS), cores=v["cores"],
                           l1=v["latency.l1"], l2=v["latency.l2"], memory=v["latency.memory"],
                           line_cycles=v["line_cycles"])

    @timed
    def solve(self) -> ModelSolution:
        from mva import solve

        v = self.values
        net = self.network()
        r = solve(net, method="exact")
        x = np.asarray(r.throughput, float)
        core = np.asarray(v["threads.core"], int)
        core_ipc = {str(c): float(x[core == c].sum()) for c in range(v["cores"])}
        util = np.asarray(r.station_utilization(), float)
        names = [s.name for s in net.stations]
        m2 = np.asarray(v["threads.l2_misses"], float)
        misses = float(np.dot(x, m2))
        mem = names.index("memory")
        queue = np.asarray(r.queue_length, float)[mem].sum() if misses > 0 else 0.0
        wait = queue / misses - v["line_cycles"] if misses > 0 else 0.0
        outputs = {"ipc": float(x.sum()), "core_ipc": core_ipc,
                   "thread_ipc": {f"thread{i}": float(x[i]) for i in range(x.shape[0])},
                   "memory_wait": max(wait, 0.0),
                   "utilization": {name: float(u) for name, u in zip(names, util, strict=False)}}
        return ModelSolution(model=self.name or "cmt_core", kind=self.kind, outputs=outputs, units=OUTPUT_UNITS)
