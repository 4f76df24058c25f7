"""What a machine's configuration fields mean to a user: each field of a machine's frozen
configuration dataclass that a user may set carries an :class:`Option` (help, unit, kind,
choices) in its metadata, from which ``mva simulate`` derives its options, its refusals
of another machine's options and its ``--sweep`` (:mod:`calibration.sim.registry`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from mva.errors import ModelError

__all__ = ["Option", "option", "options", "parse_size", "size_label", "MAX_COUNT"]

KINDS = ("int", "float", "size", "choice", "flag", "names")

#: Largest integer or size any option takes unless it says otherwise (2^40: a TiB, or
#: 10^12 references or cycles, far beyond a run on one machine), so that no count the
#: simulators multiply can overflow their 64-bit integers.
MAX_COUNT = 1 << 40


def parse_size(text, label: str = "size") -> int:
    """Bytes from ``4096``, ``"2MiB"``, ``"64k"`` (binary units); anything else is a
    :class:`ModelError` naming ``label`` (the field or option it was given for).

    >>> parse_size("2MiB"), parse_size("64k"), size_label(49152)
    (2097152, 65536, '48 KiB')
    """
    if isinstance(text, (int, np.integer)) and not isinstance(text, bool):
        return int(text)
    s = str(text).strip()
    units = {"kib": 1 << 10, "kb": 1 << 10, "k": 1 << 10, "mib": 1 << 20, "mb": 1 << 20, "m": 1 << 20,
             "gib": 1 << 30, "gb": 1 << 30, "g": 1 << 30, "b": 1}
    low = s.lower()
    number, scale = low, 1
    for suffix in sorted(units, key=len, reverse=True):
        if low.endswith(suffix):
            number, scale = low[: -len(suffix)], units[suffix]
            break
    try:
        value = float(number) * scale
        if not np.isfinite(value):
            raise ValueError
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(label, f"expected a size like 4096 or 2MiB, got {text!r}") from None


@dataclass(frozen=True)
class Option:
    """One user-settable field: ``help`` (one line, with the default), ``unit`` (bytes,
    cycles, references, ...; empty for a pure number or a name), ``kind`` (int, float,
    size: bytes written ``"2MiB"`` or ``4096``, choice, flag, names: a comma-separated
    list kept as one string), ``choices``, and the
    bounds ``low`` and ``high`` of a number (``high`` defaults to :data:`MAX_COUNT` for
    integers and sizes; the machine's configuration checks the rest)."""

    help: str
    unit: str = ""
    kind: str = "int"
    choices: tuple = ()
    low: float | None = None
    high: float | None = None

    def __post_init__(self):
        if self.kind not in KINDS or (self.kind == "choice") != bool(self.choices):
            raise ValueError(f"option kind {self.kind!r} with choices {self.choices!r}")

    def parse(self, label: str, value):
        """``value`` (text from the command line, or a number or name from a sweep) as the
        field's type; a :class:`ModelError` naming ``label`` (the option the user wrote)
        otherwise."""
        if value is None:
            return None
        if self.kind == "flag":
            if str(value).lower() in ("true", "1", "yes", "on", "false", "0", "no", "off"):
                return str(value).lower() in ("true", "1", "yes", "on")
            raise ModelError(label, f"expected true or false, got {value!r}")
        if self.kind in ("size", "float", "int"):
            return self._number(label, value)
        if self.kind == "names":
            return ",".join(split_names(label, value))
        text = str(value).lower()
        for choice in self.choices:              # any case; the choice as spelled (A, B+, hlrc)
            if text == choice.lower():
                return choice
        raise ModelError(label, f"choose {', '.join(self.choices)}, not {value!r}")


    def _number(self, label: str, value):
        """An int, size or float within the bounds; the message quotes ``value`` as given."""
        try:
            if self.kind == "size":
                number = parse_size(value)
            elif self.kind == "float":
                number = float(value)
                if not np.isfinite(number):
                    raise ValueError
            else:
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError
                number = int(value) if isinstance(value, (int, np.integer, float)) else int(str(value), 10)
        except (TypeError, ValueError, OverflowError):
            what = {"size": "a size like 4096 or 2MiB", "float": "a finite number", "int": "an integer"}[self.kind]
            raise ModelError(label, f"expected {what}, got {value!r}") from None
        high = self.high if self.high is not None else (None if self.kind == "float" else MAX_COUNT)
        if (self.low is not None and number < self.low) or (high is not None and number > high):
            unit = f" {self.unit}" if self.unit else ""
            show = lambda x: f"{x:,}" if float(x).is_integer() else f"{x:g}"   # noqa: E731
            bound = (f"from {show(self.low)} to {show(high)}" if self.low is not None and high is not None
                     else f"at least {show(self.low)}" if self.low is not None else f"at most {show(high)}")
            raise ModelError(label, f"must be {bound}{unit}, got {value!r}")
        return number


def split_names(label: str, value) -> list:
    """The names of a comma-separated list (spaces around them dropped); a
    :class:`ModelError` naming ``label`` for an empty name or a value that is no text."""
    names = [n.strip() for n in value.split(",")] if isinstance(value, str) else []
    if not names or not all(names):
        raise ModelError(label, f"expected comma-separated names, got {value!r}")
    return names


def option(default, help: str, unit: str = "", kind: str = "int", choices: tuple = (), low=None, high=None):
    """A dataclass field with ``default`` and its :class:`Option` in the metadata."""
    return dataclasses.field(default=default, metadata={"option": Option(help, unit, kind, tuple(choices), low, high)})


def options(config_type) -> dict:
    """``{field name: Option}`` of a configuration dataclass, in field order."""
    return {f.name: f.metadata["option"] for f in dataclasses.fields(config_type) if "option" in f.metadata}


def size_label(n: int) -> str:
    """``n`` bytes as ``"2 MiB"``, ``"48 KiB"`` or ``"64 B"``: :func:`parse_size` reads it back."""
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else f"{n / 1024:g} KiB" if n >= 1024 else f"{n} B"
