"""The command lines' argument parser: a usage error is one line naming the option and
exit status 2 (argparse prints its whole usage block and the message below it).

Shared by ``mva`` and every ``python -m`` study and report of the project.
"""
from __future__ import annotations

import argparse
import math

__all__ = ["OneLineParser", "INPUT_ERROR", "positive_int", "nonnegative_int", "finite_float", "positive_float",
           "open_fraction", "count_range", "count_list"]

#: Exit status of bad input: a file, field, option or usage the user gave.
INPUT_ERROR = 2


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2."""

    def error(self, message):
        from .errors import printable      # a control character the user typed stays one line

        self.exit(INPUT_ERROR, printable(f"{self.prog}: {message} (see {self.prog} --help)") + "\n")


# --- option types: a bad value is argparse's one line naming the option -----------------
def _number(text: str, kind, what: str):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if kind is float and not math.isfinite(value):         # nan, inf
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1 (a count of processors, references, jobs, nodes)."""
    value = _number(text, int, "a positive integer")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def nonnegative_int(text: str) -> int:
    """An integer >= 0."""
    value = _number(text, int, "an integer >= 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


def finite_float(text: str) -> float:
    """A finite number (no nan or inf)."""
    return _number(text, float, "a finite number")


def positive_float(text: str) -> float:
    """A finite number > 0."""
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def open_fraction(text: str) -> float:
    """A number strictly between 0 and 1 (a confidence level, a share)."""
    value = finite_float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (exclusive), got {text!r}")
    return value


def count_range(text: str) -> range:
    """``FIRST:LAST`` (or one count): the counts FIRST..LAST, 1 <= FIRST <= LAST."""
    parts = text.split(":")
    if len(parts) not in (1, 2):
        raise argparse.ArgumentTypeError(f"expected FIRST:LAST, got {text!r}")
    first, last = (positive_int(p) for p in (parts if len(parts) == 2 else parts * 2))
    if first > last:
        raise argparse.ArgumentTypeError(f"FIRST must not exceed LAST, got {text!r}")
    return range(first, last + 1)


def count_list(text: str) -> tuple[int, ...]:
    """``A,B,...``: positive integers, at least one."""
    parts = [p.strip() for p in text.split(",")]
    if not any(parts):
        raise argparse.ArgumentTypeError(f"expected counts like 2,8, got {text!r}")
    return tuple(positive_int(p) for p in parts)
