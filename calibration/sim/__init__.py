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
* :mod:`~calibration.sim.options`: what a configuration field means to a user (help,
  unit, kind, choices), sizes;
* the machines, each a configuration, a ``simulate_*`` function and a result with
  ``to_dict()`` plus its formatters, with its kernel beside it:
  :mod:`~calibration.sim.bus` (shared-bus SMP), :mod:`~calibration.sim.cmt` (chip
  multithreading), :mod:`~calibration.sim.svm` (software shared memory),
  :mod:`~calibration.sim.ccnuma` (cc-NUMA, with :mod:`~calibration.sim.directory`);
  :mod:`~calibration.sim.parallel` generates their parallel kernels and
  :mod:`~calibration.sim.reuse` measures reuse distances;
* :mod:`~calibration.sim.registry`: :data:`MACHINES`, the machines by name.

A new machine is one module beside ``bus`` plus its kernel, reusing the readers,
manifests, block map, protocol-table compiler and streams, and one
:func:`~calibration.sim.registry.register` call: ``mva simulate`` derives its options from
the registry.
"""
from .._moved import moved_attributes
from .bus import BusConfig, BusResult, bus_costs, simulate_bus
from .loading import load_workload
from .machine import CoherenceViolation, scalability
from .registry import MACHINES, Machine, register
from .synthetic import PRESETS, Application, Request, generate
from .traces import Chunk, read_trace, write_npz
from .workload import Process, SharedRange, Workload

__all__ = ["MACHINES", "Machine", "register", "simulate_bus", "BusConfig", "BusResult", "CoherenceViolation",
           "bus_costs", "scalability", "generate", "PRESETS", "Request", "Application", "Chunk", "read_trace",
           "write_npz", "Workload", "Process", "SharedRange", "load_workload"]

#: The bus machine's names of before the registry (0.2), served with a warning until 0.3
#: here and in :mod:`calibration`.
MOVED_NAMES = {"simulate": "calibration.sim.bus.simulate_bus", "SimulatorConfig": "calibration.sim.bus.BusConfig",
               "SimulationResult": "calibration.sim.bus.BusResult"}
__getattr__ = moved_attributes(__name__, MOVED_NAMES)
