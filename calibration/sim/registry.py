"""The simulated machines, by name: :data:`MACHINES`.

Each entry is a :class:`Machine`: a frozen configuration dataclass whose user-settable
fields carry an :class:`~calibration.sim.options.Option` (help, unit, kind, choices), a
``simulate(workload, config, progress)`` returning a result with ``to_dict()``, and the
two formatters of that dictionary (the run's table, and one row of a sweep's table).
``mva simulate`` (:mod:`calibration.cli`) derives from this registry its ``--machine``
choices, one option group per machine, the refusal of an option the chosen machine does
not have, and ``--sweep`` over any field: a new machine is one module plus one
:func:`register` call.

Example: every machine has a configuration with defaults and options

>>> sorted(MACHINES)
['bus', 'ccnuma', 'cmt', 'svm']
>>> MACHINES["bus"].config().cpus, MACHINES["bus"].options()["cache"].unit
(8, 'bytes')
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from collections.abc import Callable

from . import bus, ccnuma, cmt, svm
from .options import Option, options

__all__ = ["Machine", "MACHINES", "register"]


@dataclass(frozen=True)
class Machine:
    """One simulated machine.

    ``config``: its frozen configuration dataclass; ``simulate(workload, config,
    progress)``: one run, a result with ``to_dict()``; ``format_result(d)`` and
    ``summary_row(d)``: the table of one run and one row of a sweep, from ``to_dict()``;
    ``title``: one line for ``--help``.  ``parallel``: runs one process per node, so
    ``--nodes`` applies, with parallel kernels at ``default_nodes`` processes.
    ``prepare``: ``"module:function"`` of a step ``(workload, config) -> config`` run
    before the simulation, named rather than imported because it belongs to a layer
    above the simulator (the CMT machine's balance-set schedules are predicted from
    reuse profiles).  ``scaling``: ``(field, output)`` of ``--scalability`` (the bus's
    processors and GSP), or None."""

    name: str
    title: str
    config: type
    simulate: Callable
    format_result: Callable
    summary_row: Callable
    parallel: bool = False
    default_nodes: int = 16
    prepare: str | None = None
    scaling: tuple | None = None

    def options(self) -> dict[str, Option]:
        """``{field: Option}`` of the configuration's user-settable fields."""
        return options(self.config)

    def prepared(self, workload, config):
        """``config`` after the machine's ``prepare`` step, if it has one."""
        if self.prepare is None:
            return config
        module, _, function = self.prepare.partition(":")
        return getattr(importlib.import_module(module), function)(workload, config)


MACHINES: dict[str, Machine] = {}


def register(machine: Machine) -> Machine:
    """Add ``machine`` to :data:`MACHINES` (a name already there is an error)."""
    if machine.name in MACHINES:
        raise ValueError(f"machine {machine.name!r} is already registered")
    MACHINES[machine.name] = machine
    return machine


register(Machine(
    "bus", "the shared-bus SMP with MESI, AMSD or PSCR (Foglia, Giorgi & Prete 2004)", bus.BusConfig,
    lambda workload, config, progress=False: bus.simulate_bus(workload, config, progress=progress),
    bus.format_result, bus.summary_row, scaling=("cpus", "gsp")))
register(Machine(
    "cmt", "chip multithreading: fine-grained multithreaded cores sharing an L2 (Fedorova et al. 2004)",
    cmt.CMTConfig, lambda workload, config, progress=False: cmt.simulate_cmt(workload, config),
    cmt.format_result, cmt.summary_row, prepare="calibration.scheduling:resolve_schedule"))
register(Machine(
    "svm", "software shared memory on a cluster, HLRC or SC, one node per process (Bilas et al. 1999)",
    svm.SVMConfig, lambda workload, config, progress=False: svm.simulate_svm(workload, config),
    svm.format_result, svm.summary_row, parallel=True))
register(Machine(
    "ccnuma", "directory-based cc-NUMA with page placement and proxies (Talbot & Kelly 1999)",
    ccnuma.CCNUMAConfig, lambda workload, config, progress=False: ccnuma.simulate_ccnuma(workload, config),
    ccnuma.format_result, ccnuma.summary_row, parallel=True, default_nodes=64))
