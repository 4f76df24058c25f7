"""One calling convention for every solver: ``solve(network, method=..., **options)``.

Methods register themselves in :data:`METHODS` with the options they accept; an unknown
method or option is an error that lists the valid ones (nothing is silently dropped).
"""
from __future__ import annotations

import inspect
from collections.abc import Callable

from .errors import ModelError
from .network import Network, require_network
from .result import Result

__all__ = ["solve", "register_method", "METHODS"]

#: name -> solver function ``f(network, **options) -> Result``
METHODS: dict[str, Callable[..., Result]] = {}
_OPTIONS: dict[str, tuple[str, ...]] = {}


def register_method(name: str, func: Callable[..., Result], options: tuple[str, ...] | None = None) -> None:
    """Make ``func(network, **options)`` available as ``solve(network, method=name)``;
    its options are ``options``, by default its keyword parameters after the network."""
    METHODS[name] = func
    _OPTIONS[name] = tuple(options) if options is not None else tuple(
        p.name for p in list(inspect.signature(func).parameters.values())[1:])


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
    require_network(network)
    try:
        func = METHODS[method]
    except KeyError:
        raise ModelError("method", f"unknown method {method!r}; valid: {', '.join(sorted(METHODS))}") from None
    valid = _OPTIONS[method]
    unknown = sorted(set(options) - set(valid)) if options else ()
    if unknown:
        raise ModelError("options", f"method {method!r} has no option(s) {', '.join(unknown)}; "
                                    f"valid: {', '.join(valid) if valid else 'none'}")
    return func(network, **options)
