"""The trace-driven cache and coherence simulator (Foglia, Giorgi & Prete, "Simulation
study of memory performance of SMP multiprocessors running a TPC-W workload", IEE
Proceedings - Computers and Digital Techniques, 2004).

Layers, bottom up (each module imports only those above it in this list):

* :mod:`~calibration.sim.traces`: lackey, din and npz readers (streamed), the npz writer;
* :mod:`~calibration.sim.workload`: processes plus shared address ranges; manifests;
* :mod:`~calibration.sim.synthetic`: workloads with requested statistics, presets;
* :mod:`~calibration.sim.loading`: a workload by name (manifest, trace or preset);
* :mod:`~calibration.sim.protocols`: MESI, AMSD and PSCR compiled from state tables;
* :mod:`~calibration.sim.blockmap`: dense block ids, virtual-to-physical pages
  (kernel: :mod:`~calibration.sim._blockmap_kernel`);
* :mod:`~calibration.sim.stats`: trace statistics (the paper's Tables 1-3);
* :mod:`~calibration.sim.machine`: what every machine shares: reference streams with
  bounded buffers, the run length, the scalability search;
* :mod:`~calibration.sim.bus`: the shared-bus machine, its configuration and result
  (kernel: :mod:`~calibration.sim._bus_kernel`).

A new machine (cc-NUMA, shared L2, SVM) is one module beside ``bus`` plus its kernel,
reusing the readers, manifests, block map, protocol-table compiler and stream.
"""
from .bus import SimulationResult, SimulatorConfig, bus_costs, simulate
from .loading import load_workload
from .machine import CoherenceViolation, scalability
from .synthetic import PRESETS, Application, Request, generate
from .traces import Chunk, read_trace, write_npz
from .workload import Process, SharedRange, Workload

__all__ = ["simulate", "SimulatorConfig", "SimulationResult", "CoherenceViolation", "bus_costs", "scalability",
           "generate", "PRESETS", "Request", "Application", "Chunk", "read_trace", "write_npz", "Workload",
           "Process", "SharedRange", "load_workload"]
