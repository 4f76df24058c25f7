"""The companion trace-driven simulator, the model values drawn from its runs, the
fitting, and the studies of the papers, as layers by role (each imports only the ones
above it in this list):

* :mod:`calibration.sim`: the simulated machines and what they share (traces,
  workloads and generators, block map, protocol tables, one module per machine with its
  kernel beside it);
* :mod:`calibration.missratio`, :mod:`calibration.scheduling`: cache models from reuse
  profiles, balance-set scheduling;
* :mod:`calibration.fit`: least-squares fitting of model parameters to observations;
* :mod:`calibration.profiles`: one module per model kind, turning simulator runs (or
  measurements) into that kind's values;
* :mod:`calibration.studies`: one ``python -m`` driver per paper;
* :mod:`calibration.cli`: ``mva trace``, ``mva simulate`` and ``mva calibrate``.

The simulator's public names are re-exported here (``from calibration import simulate_bus, MACHINES``).
Modules of the old flat layout (``calibration.ccnuma_study``, ``calibration.sharedbus``,
...) still import for one release, with a DeprecationWarning (``CHANGELOG.md``).
"""
from ._moved import moved_attributes
from .sim import (MACHINES, PRESETS, Application, BusConfig, BusResult, Chunk, CoherenceViolation, Machine, Process,
                  Request, SharedRange, Workload, bus_costs, generate, load_workload, read_trace, register,
                  scalability, simulate_bus, write_npz)

__all__ = ["MACHINES", "Machine", "register", "simulate_bus", "BusConfig", "BusResult", "CoherenceViolation",
           "bus_costs", "scalability", "generate", "PRESETS", "Request", "Application", "Chunk", "read_trace",
           "write_npz", "Workload", "Process", "SharedRange", "load_workload"]

# the bus machine's names of before the registry (0.2); served with a warning until 0.3
__getattr__ = moved_attributes(__name__, {"simulate": "calibration.sim.bus.simulate_bus",
                                          "SimulatorConfig": "calibration.sim.bus.BusConfig",
                                          "SimulationResult": "calibration.sim.bus.BusResult"})
