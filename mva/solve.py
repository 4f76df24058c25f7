"""One calling convention for every solver: ``solve(network, method=..., **options)``.

Methods register themselves in :data:`METHODS` with the options they accept; an unknown
method or option is an error that lists the valid ones (nothing is silently dropped).
"""
from __future__ import annotations

import inspect
from typing import Callable

from .errors import ModelError
from .network import Network
from .result import Result

__all__ = ["solve", "register_method", "METHODS"]

#: name -> solver function ``f(network, **options) -> Result``
METHODS: dict[str, Callable[..., Result]] = {}
_OPTIONS: dict[str, tuple[str, ...]] = {}


def register_method(name: str, func: Callable[..., Result]) -> None:
    """Make ``func(network, **options)`` available as ``solve(network, method=name)``;
    its keyword parameters after the network are the method's options."""
    METHODS[name] = func
    _OPTIONS[name] = tuple(p.name for p in list(inspect.signature(func).parameters.values())[1:])


def solve(network: Network, method: str = "exact", **options) -> Result:
    """Solve ``network`` with ``method`` (see :data:`METHODS`).

    Parameters
    ----------
    network : Network
    method : str, default "exact"
    **options
        Options of the method (e.g. ``tol``, ``max_iter`` for iterative methods).

    Raises
    ------
    ModelError
        Unknown method or option, or invalid input.
    """
    if not isinstance(network, Network):
        raise ModelError("network", f"expected a Network, got {type(network).__name__}")
    try:
        func = METHODS[method]
    except KeyError:
        raise ModelError("method", f"unknown method {method!r}; valid: {', '.join(sorted(METHODS))}") from None
    valid = _OPTIONS[method]
    unknown = sorted(set(options) - set(valid)) if options else ()
    if unknown:
        raise ModelError("options", f"method {method!r} has no option(s) {', '.join(unknown)}; "
                                    f"valid: {', '.join(valid) if valid else 'none'}")
    if method == "simulation":
        return func(network, **options)
    result = func(network, **options)        # a priority station is refused by the solver plan
    return _flag_fcfs(network, result)


def _flag_fcfs(network: Network, result: Result) -> Result:
    """Mark a result approximate when an FCFS station has class-dependent demands: BCMP
    product form needs one exponential service time for every class at an FCFS station
    (Baskett, Chandy, Muntz & Palacios 1975); MVA then solves it as processor sharing, the
    usual approximation (Lazowska, Zahorjan, Graham & Sevcik, *Quantitative System
    Performance*, 1984, ch. 7), whose error the simulation measures."""
    import dataclasses

    import numpy as np

    mixed = [s.name for k, s in enumerate(network.stations) if s.discipline == "fcfs"
             and np.ptp(network.demands[k][network.demands[k] > 0]) > 0 if np.any(network.demands[k] > 0)]
    if not mixed:
        return result
    note = (f"approximate: FCFS with class-dependent demands at {', '.join(mixed)} is not product form; "
            "solved as processor sharing (--method simulation measures the difference)")
    accuracy = note if result.accuracy in ("", "exact") else f"{result.accuracy}; {note}"
    return dataclasses.replace(result, accuracy=accuracy)
