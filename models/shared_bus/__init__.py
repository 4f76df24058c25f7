"""A shared-bus multiprocessor as a queueing model (model kind ``shared_bus``): the
analytical counterpart of the Foglia et al. (2004) simulator, fed with per-reference bus work that a
simulator run (or a measurement) provides."""
from .model import PARAMETERS, SharedBus, solve_shared_bus

__all__ = ["SharedBus", "PARAMETERS", "solve_shared_bus"]
