"""The companion trace-driven cache and coherence simulator (seed 000) and, later, the
fitting of model parameters.

Layout (one concept per module):

* :mod:`calibration.traces`: lackey, din and npz readers (streamed), the npz writer;
* :mod:`calibration.workload`: processes plus shared address ranges; manifests;
* :mod:`calibration.synthetic`: workloads with requested seed-000 statistics, presets;
* :mod:`calibration.stats`: seed 000 Table 1-3 statistics of a trace or workload;
* :mod:`calibration.protocols`: MESI, AMSD and PSCR as state tables;
* :mod:`calibration.blockmap`: dense block ids, virtual-to-physical pages;
* :mod:`calibration.simulator`: the machine, the run, the result (GSP, breakdowns);
* :mod:`calibration._simkernel`: the compiled kernels;
* :mod:`calibration.report`: seed 000's findings on the EC-server preset;
* :mod:`calibration.cli`: ``mva trace`` and ``mva simulate``.
"""
from .simulator import CoherenceViolation, SimulationResult, SimulatorConfig, bus_costs, scalability, simulate
from .synthetic import PRESETS, Application, Request, generate
from .traces import Chunk, read_trace, write_npz
from .workload import Process, SharedRange, Workload, load_workload

__all__ = ["simulate", "SimulatorConfig", "SimulationResult", "CoherenceViolation", "bus_costs", "scalability",
           "generate", "PRESETS", "Request", "Application", "Chunk", "read_trace", "write_npz", "Workload",
           "Process", "SharedRange", "load_workload"]
