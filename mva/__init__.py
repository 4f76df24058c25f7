"""mva: exact and approximate Mean Value Analysis of product-form queueing networks.

Public API
----------
Descriptions: :class:`Network`, :class:`Station`.
Solving: :func:`solve` (dispatch by method name), :func:`exact_mva`, the approximate
:func:`schweitzer` (Bard-Schweitzer) and :func:`linearizer`, and :func:`auto` (exact when
affordable, else the best approximation that is).
Bounds: :func:`asymptotic_bounds`, :func:`balanced_job_bounds`.
Aggregation: :func:`flow_equivalent_station`, :func:`norton_throughputs` (Norton / FESC).
Batches and sweeps: :func:`batch_exact_single_class`; :mod:`mva.grid`, :mod:`mva.sweep`,
:mod:`mva.analysis` (grids, what-if sweeps, targets, elasticities); model kinds:
:mod:`mva.modelkind`.
Results: :class:`Result`.  Errors: :class:`ModelError`, :class:`SaturationError`,
:class:`NumericalWarning`.  Files: :func:`load_network`, :func:`load_model` (any model file).
"""
from .aggregation import flow_equivalent_station, norton_throughputs
from .approximate import linearizer, schweitzer
from .auto import auto
from .batch import batch_exact_single_class
from .bounds import Bounds, asymptotic_bounds, balanced_job_bounds
from .errors import ModelError, NumericalWarning, SaturationError
from .exact import closed_throughput_curve, exact_mva
from .files import load_network
from .targets import load_model
from .network import Network, Station
from .result import Result
from .simulation import simulate_network
from .simulation_settings import SETTING_NAMES, SimulationSettings
from .decomposition import decomposition
from .solve import METHODS, register_method, solve

register_method("exact", exact_mva)
register_method("schweitzer", schweitzer)
register_method("linearizer", linearizer)
register_method("auto", auto)
register_method("decomposition", decomposition)
register_method("simulation", simulate_network, ("settings", *SETTING_NAMES))

__all__ = [
    "Network", "Station", "Result", "solve", "register_method", "METHODS", "exact_mva", "schweitzer", "linearizer",
    "decomposition",
    "auto", "simulate_network", "SimulationSettings",
    "closed_throughput_curve", "asymptotic_bounds", "balanced_job_bounds", "Bounds",
    "ModelError", "SaturationError", "NumericalWarning", "load_network", "load_model",
    "flow_equivalent_station", "norton_throughputs", "batch_exact_single_class",
]
__version__ = "0.1.0"


def __getattr__(name):
    # mva.simulate was renamed simulate_network in 0.2 (the simulator package has its own
    # simulate functions); the old name is served with a warning until 0.3
    if name == "simulate":
        import warnings

        warnings.warn("mva.simulate is deprecated and will be removed in 0.3; use mva.simulate_network",
                      DeprecationWarning, stacklevel=2)
        return simulate_network
    raise AttributeError(f"module 'mva' has no attribute {name!r}")
