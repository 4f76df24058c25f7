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
from . import sim
from ._moved import moved_attributes
from .sim import *  # noqa: F403 (the simulator's public names)

__all__ = list(sim.__all__)
__getattr__ = moved_attributes(__name__, sim.MOVED_NAMES)
