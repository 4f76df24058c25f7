"""Model kinds: parameterised models built on `mva`, found by name through entry points.

A *model file* is a TOML or JSON document with a top-level ``kind`` (and optional
``name``); every other key is a parameter, nested tables giving dotted names::

    kind = "tpcc_smp"
    name = "C2"
    cpus = 2
    [disk]
    rotation_latency = 1.5e6      # the parameter "disk.rotation_latency"

A network file (``[network]`` and ``[[station]]`` tables, see :mod:`mva.files`) is the
built-in kind ``network`` (:mod:`mva.network_kind`), the default when a file has no
``kind``.  Every command (``--list-parameters``, ``--set``, ``--sweep``, ``calibrate
--fit``) goes through the same interface whatever the kind.

Other kinds are looked up in the entry-point group ``mva.models`` (``name =
module:Class``), so the library never imports a model and any installed package can add
one.  A model class declares its :class:`Parameter` list (dotted names, units, defaults,
checks), is built from a complete, checked set of values, and returns a
:class:`ModelSolution`.  A kind whose parameters depend on the file (like ``network``,
whose stations are the file's) offers ``for_document(doc, solver)`` returning an object
with the same interface, bound to that file; ``solver`` holds ``--method`` and the
solver options, which only such kinds accept.

A list parameter's element is named ``NAME[k]`` (0-based; negative from the end) in
``--set``, ``--sweep`` and ``--fit`` alike: ``station.cpu.demand[1]=0.3``.
"""
from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import numbers
import warnings
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, ClassVar
from collections.abc import Callable

from .errors import ModelError, NumericalWarning
from .network import LARGEST_VALUE, SMALLEST_VALUE
from .tomlcompat import tomllib
from .jit import clock, seconds_since


__all__ = ["Parameter", "ParameterisedModel", "ModelKind", "ModelSolution", "model_kinds", "load_model_kind",
           "document_kind", "bind_kind", "model_from_document", "split_element", "with_element", "parse_assignments", "resolve_values", "check_names",
           "flatten", "flatten_document", "hashable", "parse_value", "resolve_document",
           "integer", "real", "choice", "real_list", "integer_list", "table_list", "timed"]

ENTRY_POINT_GROUP = "mva.models"
RESERVED_KEYS = ("kind", "name")
BUILTIN_KINDS = {"network": ("mva.network_kind", "NetworkKind")}


@dataclass(frozen=True)
class Parameter:
    """One settable input of a model kind.

    ``check(field, value)`` returns the normalised value or raises :class:`ModelError`
    naming ``field``.  ``role`` is ``"input"`` for what describes the system and
    ``"solver"`` for numerical settings (tolerances), which sensitivities leave out.
    """

    name: str
    default: Any
    unit: str
    description: str
    check: Callable[[str, Any], Any] = field(repr=False, default=lambda f, v: v)
    role: str = "input"


@dataclass(frozen=True)
class ModelSolution:
    """Named outputs of a solved model.

    ``outputs`` holds scalars and, under ``"utilization"``, a ``{device: value}`` dict.
    A fixed point that did not converge has ``converged=False`` and a ``message``.  An
    answer the model doubts although it converged (a solver flagged its network
    ``unreliable:``) has ``doubted=True``, and the message says why; a sweep's row shows
    it as ``unreliable``.
    ``units`` gives the unit of an output or group by its name (``{"tpmC": "tpmC",
    "response_time": "s"}``), for the headers of reports; a name without one is a pure
    number (utilisations are fractions).  A simulation's solution also has
    ``half_width``, nested like ``outputs``: the half-width of each output's interval at
    ``confidence_level`` (infinite where unknown).
    """

    model: str
    kind: str
    outputs: dict
    converged: bool = True
    iterations: int = 0
    solve_seconds: float = 0.0
    message: str = ""
    extras: dict = field(default_factory=dict, repr=False)
    units: dict = field(default_factory=dict)
    half_width: dict = field(default_factory=dict, repr=False)
    confidence_level: float = 0.0
    doubted: bool = False

    def flat(self) -> dict:
        """The outputs by dotted name (``utilization.cpu``), a simulation's half-widths as
        ``NAME_half_width`` (NaN where unknown), then ``converged`` and ``unreliable``
        (``doubted``): one row of a sweep, which says which of its rows to doubt."""
        row = flatten(self.outputs)
        if self.half_width:
            row.update({f"{name}_half_width": (h if math.isfinite(h) else math.nan)
                        for name, h in flatten(self.half_width).items()})
        return {**row, "converged": bool(self.converged), "unreliable": bool(self.doubted)}

    def to_dict(self) -> dict:
        """JSON-ready ``{"model", "kind", "outputs", "units", "converged", ...}``."""
        record = {"model": self.model, "kind": self.kind, "outputs": self.outputs, "units": self.units,
                  "converged": self.converged, "iterations": self.iterations,
                  "solve_seconds": self.solve_seconds, "message": self.message, "doubted": self.doubted}
        if self.half_width:       # JSON has no infinity: an unknown half-width is null
            record["confidence_level"] = self.confidence_level
            from .result import finite_or_none      # numpy: imported only when needed
            record["half_width"] = finite_or_none(self.half_width)
        return record


def warn_unreliable_cases(count: int, total: int, first: str, stacklevel: int = 3) -> None:
    """One warning for a sweep's doubted rows (column ``unreliable``): how many of the
    ``total`` cases, and why the ``first`` is."""
    warnings.warn(f"{count} of {total} cases are unreliable (column unreliable); the first: {first}",
                  NumericalWarning, stacklevel=stacklevel)


class ModelKind:
    """The contract of a model kind: what ``mva solve``, sweeps, sensitivities and
    ``mva calibrate`` use.  Every kind subclasses it (through :class:`ParameterisedModel`
    or directly) and is registered by name in the ``mva.models`` entry-point group.

    Required:

    * ``kind``: the name a model file gives in ``kind = "..."``;
    * ``parameters()`` (classmethod): the :class:`Parameter` list, dotted names;
    * ``from_values(values, name="")`` (classmethod): a model from a complete, checked
      set of values (a :class:`ModelError` naming the field for a cross-field problem);
    * ``solve()`` on a model: its :class:`ModelSolution`.

    Optional, ``None`` (or the default below) where a kind has none:

    * ``main_output``: the output sweeps plot and targets search (``"throughput"``);
    * ``not_bottlenecks``: devices whose "utilisation" is no fraction of a capacity;
    * ``simulate(settings=None, **options)`` on a model: a simulation of the machine the
      model approximates, a :class:`ModelSolution` with ``half_width``
      (``--method simulation`` on a model file);
    * ``solve_batch(base, cases)`` (classmethod): flat outputs of many cases at once, a
      DataFrame (the vectorised sweep path);
    * ``solve_columns(base, columns, count)``: the same from one array per parameter,
      or None to fall back to ``solve_batch``;
    * ``sweep_note(base, count)``: a sentence the command line prints before a sweep of
      ``count`` cases (a faster way to run it), or "";
    * ``for_document(doc, solver)`` (classmethod): a kind whose parameters depend on the
      file returns an object with this interface bound to it (``network``), taking the
      solver options (``--method`` ...) that only such kinds accept;
    * ``values_in(doc)``: the file's values by dotted name, where they are not its
      nested tables;
    * ``what_if_hint(name, values)`` (classmethod): for a ``--set name`` that changes no
      output, what would make it matter (``"no disk is on I/O bus 2: set
      mapping.disk_to_bus"``), or "";
    * ``display_units``: ``{unit: (shown unit, parameter, scale)}``: tables and plots show
      a value in ``unit`` as ``value * scale / values[parameter]`` in the shown unit
      (cycles as ms by the clock), files and CSV keep the unit;
    * ``document(values)``: the file with ``values`` written in, where that is not the
      nested tables.
    """

    kind: ClassVar[str] = ""
    name: str = ""
    main_output: ClassVar[str] = "throughput"
    not_bottlenecks: tuple = ()
    simulate: Callable | None = None
    solve_batch: Callable | None = None
    solve_columns: Callable | None = None
    sweep_note: Callable | None = None
    for_document: Callable | None = None
    values_in: Callable | None = None
    document: Callable | None = None
    what_if_hint: Callable | None = None
    display_units: ClassVar[dict] = {}

    @classmethod
    def parameters(cls) -> tuple[Parameter, ...]:
        raise NotImplementedError(f"model kind {cls.kind!r} declares no parameters()")

    @classmethod
    def from_values(cls, values: dict, name: str = "") -> ModelKind:
        raise NotImplementedError(f"model kind {cls.kind!r} has no from_values()")

    def solve(self) -> ModelSolution:
        raise NotImplementedError(f"model kind {self.kind!r} has no solve()")


class ParameterisedModel(ModelKind):
    """Base of a model kind whose parameters are the class's ``PARAMETERS``: built from
    values (checked and completed with defaults by :func:`resolve_values`, then by the
    subclass's :meth:`check`), with the ``parameters()`` and ``from_values()`` that
    ``mva solve`` calls."""

    PARAMETERS: ClassVar[tuple] = ()

    def __init__(self, values: dict | None = None, name: str = ""):
        self.values = resolve_values(self.PARAMETERS, values or {})
        self.name = name
        self.check()

    def check(self) -> None:
        """Checks across parameters (ModelError naming the field); none by default."""

    @classmethod
    def parameters(cls):
        return cls.PARAMETERS

    @classmethod
    def from_values(cls, values: dict, name: str = ""):
        return cls(values, name)


def timed(func):
    """Decorator for ``solve``: fills ``solve_seconds`` of the returned solution."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        start = clock()
        try:
            solution = func(*args, **kwargs)
        except (OverflowError, FloatingPointError, ZeroDivisionError) as exc:
            raise ModelError("model", f"a value left double precision ({exc}): the inputs' magnitudes are too far "
                                      "apart; change their units") from None
        infinite = [k for k, v in flatten(solution.outputs).items() if isinstance(v, float) and math.isinf(v)]
        if infinite and solution.converged:      # numerical honesty: never a converged infinite answer
            why = f"{', '.join(infinite[:3])} infinite: the inputs' magnitudes left double precision"
            solution = dataclasses.replace(solution, converged=False,
                                           message="; ".join(m for m in (solution.message, why) if m))
        return dataclasses.replace(solution, solve_seconds=seconds_since(start))
    return wrapper


# --- checks ------------------------------------------------------------------------------

def _is_number(value) -> bool:
    # numbers.Real takes numpy scalars too; bool (and numpy.bool_, not Real) is refused
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def integer(minimum: int = 0, maximum: int | None = None):
    """Check: an integer in ``[minimum, maximum]``."""
    def check(name, value):
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            value = int(value)                     # numpy integers too
        elif isinstance(value, numbers.Real) and float(value).is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ModelError(name, f"must be an integer, got {value!r}")
        if value < minimum or (maximum is not None and value > maximum):
            bound = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
            raise ModelError(name, f"must be an integer {bound}, got {value}")
        return value
    return check


def real(minimum: float = 0.0, maximum: float | None = None, strict: bool = False):
    """Check: a finite number ``>= minimum`` (``> minimum`` if ``strict``), ``<= maximum``,
    and 0 or of a size from :data:`~mva.network.SMALLEST_VALUE` to
    :data:`~mva.network.LARGEST_VALUE` (as a network's times)."""
    def check(name, value):
        if not _is_number(value) or value != value or value in (float("inf"), float("-inf")):
            raise ModelError(name, f"must be a finite number, got {value!r}")
        if value < minimum or (strict and value == minimum):
            raise ModelError(name, f"must be {'>' if strict else '>='} {minimum:g}, got {value:g}")
        if maximum is not None and value > maximum:
            raise ModelError(name, f"must be <= {maximum:g}, got {value:g}")
        if value and not SMALLEST_VALUE <= abs(value) <= LARGEST_VALUE:
            raise ModelError(name, f"{value:g} is outside {SMALLEST_VALUE:g} to {LARGEST_VALUE:g} in size, where "
                                   "the models keep double precision: change the unit")
        return float(value)
    return check


def choice(*options: str):
    """Check: one of ``options``."""
    def check(name, value):
        if value not in options:
            raise ModelError(name, f"must be one of {', '.join(options)}; got {value!r}")
        return value
    return check


def _list(name, value, length, allow_empty=False):
    if not isinstance(value, (list, tuple)):
        raise ModelError(name, f"must be a list, got {value!r}")
    if length is not None and len(value) != length and not (allow_empty and len(value) == 0):
        raise ModelError(name, f"must have {length} entries{' (or none)' if allow_empty else ''}, got {len(value)}")
    return list(value)


def real_list(minimum: float = 0.0, maximum: float | None = None, strict: bool = False, length: int | None = None,
              allow_empty: bool = False, min_length: int = 0):
    """Check: a list of finite numbers, each ``>= minimum`` (``>`` if ``strict``) and
    ``<= maximum``; ``length`` entries if given (or none, with ``allow_empty``), at least
    ``min_length`` in any case."""
    element = real(minimum, maximum, strict=strict)

    def check(name, value):
        values = _list(name, value, length, allow_empty)
        if len(values) < min_length:
            raise ModelError(name, f"needs at least {min_length} entr{'y' if min_length == 1 else 'ies'}, got "
                                   f"{len(values)}")
        return tuple(element(f"{name}[{i}]", v) for i, v in enumerate(values))
    return check


def integer_list(minimum: int = 0, length: int | None = None):
    """Check: a list of integers, each ``>= minimum``."""
    element = integer(minimum)

    def check(name, value):
        return tuple(element(f"{name}[{i}]", v) for i, v in enumerate(_list(name, value, length)))
    return check


def table_list(keys: tuple, what: str, optional: tuple = ()):
    """Check: a list of tables (dicts), each with exactly ``keys``, of which those in
    ``optional`` may be left out (``what`` one table is, for the message: e.g. "group of
    phases"); returns a tuple of dicts."""
    required = [k for k in keys if k not in optional]

    def check(name, value):
        if not isinstance(value, (list, tuple)) or not all(isinstance(p, dict) for p in value):
            raise ModelError(name, f"must be a list of tables, one per {what}")
        for k, table in enumerate(value):
            if not set(required) <= set(table) <= set(keys):
                extra = f" (optional: {', '.join(optional)})" if optional else ""
                raise ModelError(f"{name}[{k}]", f"needs exactly {', '.join(required)}{extra}")
        return tuple(dict(p) for p in value)
    return check


# --- registry and documents -------------------------------------------------------------

def model_kinds() -> dict:
    """``{kind: loader}`` of every model kind: the built-in ``network`` and every
    installed entry point (an entry point's ``load()`` gives the class)."""
    kinds = {name: _Builtin(module, attr) for name, (module, attr) in BUILTIN_KINDS.items()}
    kinds.update({ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in kinds})
    return kinds


@dataclass(frozen=True)
class _Builtin:
    module: str
    attr: str

    def load(self):
        import importlib
        return getattr(importlib.import_module(self.module), self.attr)


def load_model_kind(kind: str):
    """The model class registered as ``kind`` (built in, or in the ``mva.models`` entry points)."""
    kinds = model_kinds()
    if kind not in kinds:
        raise ModelError("kind", f"unknown model kind {kind!r}; valid: {', '.join(sorted(kinds))}")
    cls = kinds[kind].load()
    if not (isinstance(cls, type) and issubclass(cls, ModelKind)):
        raise ModelError("kind", f"the model kind {kind!r} ({cls!r}) is not a mva.modelkind.ModelKind")
    return cls


def document_kind(doc: dict) -> str:
    """The kind a parsed file names: its ``kind``, else ``network`` (a network file)."""
    if not isinstance(doc, dict):
        raise ModelError("file", "the top level must be a table")
    kind = doc.get("kind", "network")
    if not isinstance(kind, str):
        raise ModelError("kind", f"must be a string naming a model kind, got {kind!r}")
    return kind


def bind_kind(doc: dict, solver: dict | None = None):
    """The kind of ``doc``, bound to the file when the kind's parameters depend on it
    (``for_document``); ``solver`` (``method`` and solver options) only for such kinds."""
    kind = document_kind(doc)
    cls = load_model_kind(kind)
    if cls.for_document is not None:
        return cls.for_document(doc, solver or {})
    if solver and solver.get("method") == "simulation" and cls.simulate is not None:
        return Simulating(cls, {k: v for k, v in solver.items() if k != "method"})
    if solver:
        flag = "--method" if "method" in solver else f"--{next(iter(solver)).replace('_', '-')}"
        simulated = " (or --method simulation)" if cls.simulate is not None else ""
        raise ModelError(flag, f"is a model file (kind {kind}), solved by its model kind{simulated}; --method and "
                               "solver options apply to network files")
    return cls


#: Solver options a model kind's ``simulate`` takes from the command line.
SIMULATION_OPTIONS = ("seed", "events", "replications", "precision", "target", "confidence", "workers", "scheduler")


class Simulating(ModelKind):
    """A model kind solved by its ``simulate(**options)`` instead of ``solve()``
    (``--method simulation`` on a model file whose kind offers it).  Sweeps then simulate
    case by case."""

    def __init__(self, cls, options: dict):
        unknown = sorted(set(options) - set(SIMULATION_OPTIONS))
        if unknown:
            raise ModelError(f"--{unknown[0].replace('_', '-')}", f"is not an option of a model's simulation; "
                                                                  f"valid: {', '.join(SIMULATION_OPTIONS)}")
        self.cls = cls
        self.options = options
        self.kind = cls.kind
        self.main_output = cls.main_output
        self.not_bottlenecks = cls.not_bottlenecks

    def parameters(self):
        return self.cls.parameters()

    def from_values(self, values: dict, name: str = ""):
        return _SimulatedModel(self.cls.from_values(values, name), self.options)


class _SimulatedModel(ModelKind):
    def __init__(self, model, options: dict):
        self.model = model
        self.options = options

    def solve(self) -> ModelSolution:
        return self.model.simulate(**self.options)


def flatten(table: dict, prefix: str = "") -> dict:
    """Nested tables to dotted names: ``{"disk": {"seek_time": 1}}`` to ``{"disk.seek_time": 1}``
    (model files, and model outputs such as ``utilization.cpu``)."""
    flat = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def flatten_document(doc: dict) -> dict:
    """A model file's parameters by dotted name (everything but ``kind`` and ``name``)."""
    return flatten({k: v for k, v in doc.items() if k not in RESERVED_KEYS})


def hashable(value):
    """A hashable stand-in for a parameter value (lists become tuples, recursively)."""
    return tuple(hashable(v) for v in value) if isinstance(value, (list, tuple)) else value


def parse_value(text: str):
    """A command-line value in TOML syntax (``4``, ``0.9e6``, ``[1, 2]``, ``"x"``); anything
    that is not a TOML value is a bare string, so ``serial`` works unquoted."""
    text = text.strip()
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _unknown(name: str, valid) -> ModelError:
    close = difflib.get_close_matches(name, valid, n=3)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return ModelError(name, f"unknown parameter; {hint}valid: {', '.join(valid)}")


def split_element(name: str) -> tuple[str, int | None]:
    """``"station.cpu.demand[1]"`` to ``("station.cpu.demand", 1)``; a plain name to ``(name, None)``."""
    if name.endswith("]") and "[" in name:
        base, _, index = name[:-1].rpartition("[")
        try:
            return base, int(index)
        except ValueError:
            raise ModelError(name, "the element index must be an integer, as in NAME[0]") from None
    return name, None


def with_element(name: str, current, index: int, value):
    """``current`` (a list) with element ``index`` set to ``value``; ModelError naming
    ``name`` if ``current`` has no such element."""
    base = split_element(name)[0]
    if not isinstance(current, (list, tuple)) or not -len(current) <= index < len(current):
        size = f"a list of {len(current)}" if isinstance(current, (list, tuple)) else f"not a list ({current!r})"
        raise ModelError(name, f"{base} has no element {index}: it is {size}")
    out = list(current)
    out[index] = value
    return out


def check_names(parameters, names) -> None:
    """ModelError for the first of ``names`` that is not a parameter or ``NAME[k]`` of
    one (with close matches)."""
    valid = [p.name for p in parameters]
    for name in names:
        if split_element(name)[0] not in valid:
            raise _unknown(name, valid)


def resolve_values(parameters, given: dict) -> dict:
    """Every parameter's checked value: ``given`` (dotted names, ``NAME[k]`` for one
    element of a list) over the defaults."""
    check_names(parameters, given)
    by_name = {p.name: p for p in parameters}
    values = {p.name: given[p.name] if p.name in given else p.default for p in parameters}
    changed = {name for name in given if name in by_name}
    for name, value in given.items():
        base, index = split_element(name)
        if index is not None:
            values[base] = with_element(name, values[base], index, value)
            changed.add(base)
    return {name: by_name[name].check(name, v) if name in changed else v for name, v in values.items()}


def split_assignment(text: str, flag: str, what: str) -> tuple[str, str]:
    """``"NAME=..."`` to ``(NAME, ...)``; a ModelError naming ``flag`` otherwise."""
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or not name:
        raise ModelError(flag, f"expected NAME={what}, got {text!r}")
    return name, raw


def parse_assignments(assignments) -> dict:
    """``["cpus=4", "disk.seek_time=0.9e6"]`` to ``{"cpus": 4, ...}``.

    Values use TOML syntax (numbers, ``true``, ``[1, 2]``, ``"text"``); anything that is
    not a TOML value is taken as a bare string, so ``io.disk_parallelism=serial`` works.
    """
    values = {}
    for text in assignments:
        name, raw = split_assignment(text, "--set", "VALUE")
        values[name] = parse_value(raw)
    return values


def resolve_document(doc: dict, overrides: dict | None = None, solver: dict | None = None):
    """A file's kind (class, or the kind bound to the file), name and every parameter's
    checked value, with ``overrides`` (dotted names) on top of the file."""
    cls = bind_kind(doc, solver)
    name = doc.get("name", "")
    if not isinstance(name, str):
        raise ModelError("name", f"must be a string, got {name!r}")
    given = cls.values_in(doc) if cls.values_in is not None else flatten_document(doc)
    given.update(overrides or {})
    return cls, name or cls.name, resolve_values(cls.parameters(), given)


def model_from_document(doc: dict, overrides: dict | None = None, solver: dict | None = None):
    """Build the model a file describes, with ``overrides`` applied on top."""
    cls, name, values = resolve_document(doc, overrides, solver)
    return cls.from_values(values, name=name)
