"""Processors stalling on a shared bus and memory: a compiled discrete-event simulation.

The machine both bus models approximate, simulated directly: ``processors`` processors
each compute for an exponential time of mean ``compute`` (a geometric number of
instructions between misses), then stall while a bus transaction passes through a fixed
sequence of *phases*, each a visit to one FCFS single-server station (the bus, the
memory) with its own mean and scv.  A split-transaction bus is three phases (request on
the bus, memory, reply on the bus: the bus is released while the memory works); an
atomic bus one.  While computing, a processor also posts non-stalling transactions
(stores through a store buffer, write-backs) at rate ``posted_rate``; they queue FCFS at
``posted_station`` and nobody waits for them.

Estimates (:mod:`mva.simulation_output`, batch means): ``progress``, the processors'
compute progress per unit time in processors' worth (the effective processing power:
``processors`` when no processor ever stalls; the global system power of Foglia et al.
2004 when one compute time is one memory reference's cycles); ``stalls``, stalling
transactions completed per unit time; ``latency``, their mean time from issue to the
last phase's end; ``utilization`` of each station; ``posted``, posted transactions per
unit time.  Times in any one unit (cycles, say); rates per that unit.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
from mva.errors import ModelError
from mva.simulation_output import Estimate, analyse
from mva.simulation_settings import SimulationSettings, chosen_settings
from mva.variates import seed

from . import _bus_simulation_kernel as kernel

__all__ = ["BusMachine", "simulate_bus_machine"]

POSTED_POOL = 1 << 16     # most posted transactions waiting at once


@dataclass(frozen=True)
class BusMachine:
    """The simulated machine (times in one unit, e.g. cycles).

    ``phases`` is a tuple of ``(station, mean, scv)``, the stations numbered from 0 to
    ``stations - 1``.
    """

    processors: int
    compute: float
    phases: tuple
    stations: int
    posted_rate: float = 0.0
    posted_station: int = 0
    posted_mean: float = 0.0
    posted_scv: float = 1.0

    def __post_init__(self):
        if self.processors < 1:
            raise ModelError("processors", f"must be >= 1, got {self.processors}")
        if not self.compute > 0:
            raise ModelError("compute", f"must be > 0, got {self.compute}")
        if not self.phases:
            raise ModelError("phases", "a stalling transaction needs at least one phase")
        for station, mean, scv in self.phases:
            if not 0 <= station < self.stations or mean < 0 or scv < 0:
                raise ModelError("phases", f"bad phase ({station}, {mean}, {scv}): station in "
                                           f"0..{self.stations - 1}, mean and scv >= 0")


class _Chain:
    """One simulated machine's state (see :func:`models._bus_simulation_kernel.run`)."""

    def __init__(self, machine: BusMachine, stream: int):
        p, s = machine.processors, machine.stations
        self.machine = machine
        self.phase_station = np.array([ph[0] for ph in machine.phases], dtype=np.int64)
        self.phase_mean = np.array([ph[1] for ph in machine.phases], dtype=float)
        self.phase_scv = np.array([ph[2] for ph in machine.phases], dtype=float)
        size = p + (POSTED_POOL if machine.posted_rate > 0 else 0)
        self.clock = np.zeros(1)
        self.phase = np.full(p, -1, dtype=np.int64)        # -1 computing, else the phase it is in
        self.compute_end = np.empty(p)
        self.posted_next = np.full(p, np.inf)
        self.mark = np.zeros(p)                          # when its compute or stall began
        self.fifo = np.zeros((s, size), dtype=np.int64)     # processor ids; -1 a posted transaction
        self.head = np.zeros(s, dtype=np.int64)
        self.count = np.zeros(s, dtype=np.int64)
        self.done = np.full(s, np.inf)
        self.started = np.zeros(s)
        seed(stream)
        kernel.start(self.compute_end, self.posted_next, machine.compute, machine.posted_rate)

    def run(self, events: int) -> dict:
        m = self.machine
        acc = np.zeros(5)
        busy = np.zeros(m.stations)
        start = self.clock[0]
        status = kernel.run(events, self.clock, self.phase, self.compute_end, self.posted_next, self.mark,
                      self.fifo, self.head, self.count, self.done, self.started, self.phase_station,
                      self.phase_mean, self.phase_scv, m.compute, m.posted_rate, m.posted_station, m.posted_mean,
                      m.posted_scv, acc, busy)
        if status == 1:
            raise ModelError("posted_rate", f"more than {POSTED_POOL:,} posted transactions wait at once "
                                            "(the simulator's limit)")
        return {"time": self.clock[0] - start, "compute": acc[0], "stalls": acc[1], "latency": acc[2],
                "posted": acc[3], "busy": busy}


def _measures(acc: dict) -> dict:
    span = acc["time"]
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"progress": np.array([acc["compute"] / span]), "stalls": np.array([acc["stalls"] / span]),
                "latency": np.array([acc["latency"] / acc["stalls"] if acc["stalls"] > 0 else np.nan]),
                "posted": np.array([acc["posted"] / span]), "utilization": acc["busy"] / span}


#: Run settings of :func:`simulate_bus_machine`: precision 0.2% on the processors' compute
#: progress, at most 40 M events.
BUS_MACHINE_SIMULATION = SimulationSettings(events=400_000, precision=0.002, max_events=40_000_000,
                                            target="progress")


def simulate_bus_machine(machine: BusMachine, settings: SimulationSettings | None = None, **options) -> Estimate:
    """Simulate ``machine`` until its compute ``progress`` is known within ``precision``
    (relative half-width at ``confidence``), or ``max_events`` are spent (``reached``
    then False).  ``settings`` default to :data:`BUS_MACHINE_SIMULATION`; ``options``
    change its fields.  Measures as the module says, each a 1-element array but
    ``utilization`` (one per station)."""
    settings = chosen_settings(settings, BUS_MACHINE_SIMULATION, **{**options, "target": "progress"})
    return analyse(partial(_Chain, machine), _measures, settings)
