"""The companion trace-driven simulator and the fitting that turns simulated or measured
outputs into model parameters.

Layout (each layer imports only the ones below it):

* :mod:`calibration.sim`: the simulator, a package of its own (traces, workloads and
  generator, block map, protocol tables, one module per machine with its kernel);
* :mod:`calibration.fit`: least-squares fitting of model parameters to observations;
* :mod:`calibration.tpcc`, :mod:`calibration.cpu_centre`, :mod:`calibration.sharedbus`:
  model parameters from measurements or from simulation (TPC-C SMP, the FESC CPU
  centre, the shared-bus model);
* :mod:`calibration.report`: the TPC-W paper's findings reproduced on its preset;
* :mod:`calibration.cli`: ``mva trace``, ``mva simulate`` and ``mva calibrate``.

The simulator's public names are re-exported here (``from calibration import simulate``).
"""
from .sim import (PRESETS, Application, Chunk, CoherenceViolation, Process, Request, SharedRange,
                  SimulationResult, SimulatorConfig, Workload, bus_costs, generate, load_workload, read_trace,
                  scalability, simulate, write_npz)

__all__ = ["simulate", "SimulatorConfig", "SimulationResult", "CoherenceViolation", "bus_costs", "scalability",
           "generate", "PRESETS", "Request", "Application", "Chunk", "read_trace", "write_npz", "Workload",
           "Process", "SharedRange", "load_workload"]
