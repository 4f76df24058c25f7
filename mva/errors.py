"""The one exception family of `mva` and the warning category for numerical trouble.

Input is checked once, at the boundary (network construction, file loading, `solve`);
numeric kernels assume valid input.  Every error names the offending field so the
command line can print one line (``field: problem``) and exit with status 2.
"""
from __future__ import annotations

import numpy as np

__all__ = ["ModelError", "SaturationError", "NumericalWarning", "check_positive_integer"]


class ModelError(ValueError):
    """Invalid model input.

    Parameters
    ----------
    field : str
        Dotted name of the offending input, e.g. ``"station[cpu].demand"``.
    problem : str
        What is wrong with it, in words a user can act on.
    """

    def __init__(self, field: str, problem: str):
        self.field = field
        self.problem = problem
        super().__init__(printable(f"{field}: {problem}"))

    def __reduce__(self):
        # pickled with both arguments, so an error raised in a study's worker process
        # reaches the command line as itself (not as a broken process pool)
        return type(self), (self.field, self.problem)


def printable(text: str) -> str:
    """``text`` with control and other non-printing characters escaped (``\\x1e``), so a
    message quoting a user's file stays one line whatever bytes the file held."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def check_positive_integer(field: str, value) -> int:
    """``value`` if it is an integer >= 1 (not a bool), else a :class:`ModelError` naming
    ``field``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ModelError(field, f"must be an integer >= 1, got {value!r}")
    return int(value)


class SaturationError(ModelError):
    """Open traffic saturates a station (utilisation >= 1): no steady state exists."""


class NumericalWarning(RuntimeWarning):
    """A result lost precision or did not converge; filter with ``warnings`` by category."""
