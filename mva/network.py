"""Immutable descriptions of a queueing network: stations, classes, populations.

A :class:`Network` is validated once, at construction; solvers trust it.  Units are the
user's, consistently: if demands are in seconds, throughputs come out per second.

Station kinds
-------------
``queue``
    One load-independent server (FCFS with class-independent demand, or PS/LCFS-PR with
    any demands: the product-form cases of BCMP).
``delay``
    Infinite server (IS): no queueing, residence time equals demand.
``multi``
    ``servers`` identical servers; exact, as a load-dependent station with capacity
    ``alpha(j) = min(j, servers)``.
``ld``
    Load-dependent (a flow-equivalent service centre, FESC): with ``j`` customers
    present the station completes work at ``capacity[j-1]`` times the rate of one
    customer alone, i.e. the service rate is ``alpha(j) / demand``.  Beyond the given
    list the last value holds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Sequence

import numpy as np

from .errors import ModelError, check_positive_integer

__all__ = ["Station", "Network", "STATION_KINDS"]

STATION_KINDS = ("queue", "delay", "multi", "ld")
DISCIPLINES = ("ps", "fcfs", "priority")
#: Largest population of a class: solvers count customers in 64-bit integers.
MAX_POPULATION = 2 ** 63 - 1
#: Most servers of a ``multi`` station: the solvers keep one entry per server, and a
#: station with more servers than customers is a delay station (use ``type = "delay"``).
MAX_SERVERS = 1_000_000
#: Largest service-time SCV: beyond it the two-phase hyperexponential's long branch is so
#: rare that no run of a feasible length sees enough of it (at 10^6 a 2 M-event run's
#: interval excluded the true mean).
MAX_SCV = 10_000.0


#: The range of a nonzero time or rate: beyond it the solvers' products and reciprocals
#: (1/D, D x N, X x D) leave double precision, so the answer would be 0, inf or NaN.
SMALLEST_VALUE, LARGEST_VALUE = 1e-150, 1e150


def _finite_nonnegative(values, where: str, what: str) -> tuple[float, ...]:
    if any(isinstance(v, (bool, np.bool_)) for v in values):      # float(True) would be 1
        raise ModelError(where, f"{what} must be a list of numbers, got {list(values)!r}")
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise ModelError(where, f"{what} must be a list of numbers, got {values!r}") from None
    for i, v in enumerate(out):
        if math.isnan(v):
            raise ModelError(where, f"{what}[{i}] is NaN")
        if math.isinf(v):
            raise ModelError(where, f"{what}[{i}] is infinite")
        if v < 0:
            raise ModelError(where, f"{what}[{i}] = {v:g} is negative")
        if v and not SMALLEST_VALUE <= v <= LARGEST_VALUE:
            raise ModelError(where, f"{what}[{i}] = {v:g} is outside {SMALLEST_VALUE:g} to {LARGEST_VALUE:g}, "
                                    "where the solvers keep double precision: change the time unit")
    return out


def _as_sequence(values, where: str) -> Sequence:
    if isinstance(values, (int, float, np.integer, np.floating)) and not isinstance(values, bool):
        return (values,)
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ModelError(where, f"expected a list, got {values!r}")
    return values


@dataclass(frozen=True)
class Station:
    """A service station.

    Parameters
    ----------
    name : str
        Unique, non-empty name.
    kind : {"queue", "delay", "multi", "ld"}
        See the module docstring.
    demand : sequence of float, one per class
        Service demand per interaction (visits x service time per visit), >= 0, in the
        network's time unit (e.g. seconds).  A scalar is accepted for one class.
    servers : int, default 1 (at most :data:`MAX_SERVERS`)
        Number of identical servers; ``kind="multi"`` only.
    capacity : sequence of float, optional
        Relative capacity ``alpha(1), alpha(2), ...`` (> 0); ``kind="ld"`` only.
    discipline : {"ps", "fcfs", "priority"}, default "ps"
        How a ``queue`` or ``multi`` station shares its servers.  ``ps`` is product form
        for any demands, ``fcfs`` only when every class has the same demand and service
        is exponential; ``priority`` (a single-server ``queue``) is preemptive-resume by
        ``priority`` levels.  Where a station is not product form the approximate methods
        (and ``auto``) carry its own residence time and say so (:mod:`mva.nonproduct`);
        exact MVA refuses it.
    priority : sequence of int, one per class
        ``discipline="priority"`` only: the class's priority, lower served first; equal
        values are one level, FCFS among themselves, not preempting each other.
    scv : float, default 1
        Squared coefficient of variation of the service time (variance / mean^2): 1
        exponential, 0 deterministic, between them gamma, above 1 two-phase
        hyperexponential (what the simulation draws); at most :data:`MAX_SCV`.  Means at
        ``ps`` and ``delay`` stations do not depend on it (BCMP insensitivity); at
        ``fcfs`` and ``priority`` stations the analytic methods add a residual-time term
        (:mod:`mva.nonproduct`) and flag the result.
    visits : sequence of float, one per class, optional
        Visits per interaction (> 0 where the class has a demand; 0 allowed where it has
        none): the class's service time per visit is ``demand / visits``.  The means of a
        product-form station depend on the demands alone, so only where the station is
        not product form (FCFS, priority) do the visits matter: an arrival waits for the
        customers it finds, each for its own class's *service per visit*, and an FCFS
        station is product form when every visiting class has the same service per
        visit, whatever its demand.  Default: one visit per interaction (the service is
        the demand).
    """

    name: str
    kind: str
    demand: tuple[float, ...]
    servers: int = 1
    capacity: tuple[float, ...] | None = None
    discipline: str = "ps"
    priority: tuple[int, ...] | None = None
    scv: float = 1.0
    visits: tuple[float, ...] | None = None

    def __post_init__(self):
        where = f"station[{self.name}]"
        if not isinstance(self.name, str) or not self.name.strip():
            raise ModelError("station.name", f"must be a non-empty string, got {self.name!r}")
        if self.kind not in STATION_KINDS:
            raise ModelError(f"{where}.kind",
                             f"unknown station type {self.kind!r}; valid: {', '.join(STATION_KINDS)}")
        demand = _finite_nonnegative(_as_sequence(self.demand, f"{where}.demand"),
                                     f"{where}.demand", "demand")
        object.__setattr__(self, "demand", demand)
        object.__setattr__(self, "servers", self._checked_servers(where))
        object.__setattr__(self, "capacity", self._checked_capacity(where))
        object.__setattr__(self, "priority", self._checked_discipline(where, len(demand)))
        scv = self.scv
        if isinstance(scv, bool) or not isinstance(scv, (int, float, np.integer, np.floating)):
            raise ModelError(f"{where}.scv", f"must be a number, got {scv!r}")
        if not math.isfinite(scv) or not 0 <= scv <= MAX_SCV:
            raise ModelError(f"{where}.scv", f"must be from 0 to {MAX_SCV:g} (1 = exponential), got {scv!r}")
        object.__setattr__(self, "scv", float(scv))
        object.__setattr__(self, "visits", self._checked_visits(where))

    def _checked_visits(self, where: str):
        """``visits``: one finite number per class, > 0 where the class has a demand."""
        if self.visits is None:
            return None
        visits = _finite_nonnegative(_as_sequence(self.visits, f"{where}.visits"), f"{where}.visits", "visits")
        if len(visits) != len(self.demand):
            raise ModelError(f"{where}.visits", f"has {len(visits)} entries, expected {len(self.demand)} "
                                                "(one per class, as the demand)")
        for i, (v, d) in enumerate(zip(visits, self.demand, strict=True)):
            if d > 0 and v == 0:
                raise ModelError(f"{where}.visits", f"visits[{i}] is 0 where demand[{i}] = {d:g} is not: a class "
                                                    "with a demand visits the station")
        return visits

    def _checked_servers(self, where: str) -> int:
        """``servers``: an integer >= 1 at a multi station, 1 elsewhere."""
        s = self.servers
        if self.kind == "multi":
            check_positive_integer(f"{where}.servers", s)
            if s > MAX_SERVERS:
                raise ModelError(f"{where}.servers", f"{s:,} is more than {MAX_SERVERS:,}; a station with more "
                                                     "servers than customers is a delay station (type = \"delay\")")
            return int(s)
        if s != 1:
            raise ModelError(f"{where}.servers", f"only a 'multi' station has servers (type is {self.kind!r})")
        return s

    def _checked_capacity(self, where: str):
        """``capacity``: positive finite alpha(1), alpha(2), ... at an ld station, None elsewhere."""
        if self.kind != "ld":
            if self.capacity is not None:
                raise ModelError(f"{where}.capacity",
                                 f"only an 'ld' station has a capacity list (type is {self.kind!r})")
            return None
        if self.capacity is None:
            raise ModelError(f"{where}.capacity", "an 'ld' station needs a capacity list alpha(1), alpha(2), ...")
        cap = _finite_nonnegative(_as_sequence(self.capacity, f"{where}.capacity"), f"{where}.capacity", "capacity")
        if len(cap) == 0:
            raise ModelError(f"{where}.capacity", "is empty")
        for i, c in enumerate(cap):
            if c == 0:
                raise ModelError(f"{where}.capacity", f"capacity[{i}] is zero: the station would never serve")
        return cap

    def _checked_discipline(self, where: str, classes: int):
        """The discipline checked; ``priority``: one integer per class at a priority queue, None elsewhere."""
        if self.discipline not in DISCIPLINES:
            raise ModelError(f"{where}.discipline",
                             f"unknown discipline {self.discipline!r}; valid: {', '.join(DISCIPLINES)}")
        if self.discipline != "ps" and self.kind not in ("queue", "multi"):
            raise ModelError(f"{where}.discipline", f"only queue and multi stations take a discipline "
                                                    f"(type is {self.kind!r})")
        if self.discipline != "priority":
            if self.priority is not None:
                raise ModelError(f"{where}.priority", "only a station with discipline = \"priority\" takes priorities")
            return None
        if self.kind != "queue":
            raise ModelError(f"{where}.discipline", "priority is implemented for single-server queues")
        if self.priority is None:
            raise ModelError(f"{where}.priority", "a priority station needs one priority per class "
                                                  "(lower served first)")
        prio = _as_sequence(self.priority, f"{where}.priority")
        if any(isinstance(p, bool) or not isinstance(p, (int, np.integer)) for p in prio):
            raise ModelError(f"{where}.priority", f"must be a list of integers, got {self.priority!r}")
        if len(prio) != classes:
            raise ModelError(f"{where}.priority", f"has {len(prio)} entries, expected {classes} (one per class)")
        return tuple(int(p) for p in prio)

    def capacity_function(self) -> np.ndarray | None:
        """``alpha(1..J)`` with ``alpha(j) = alpha(J)`` for ``j > J``; ``None`` for a delay.

        A queue is ``[1.0]``; ``m`` servers are ``[1, 2, ..., m]``.
        """
        if self.kind == "delay":
            return None
        if self.kind == "queue":
            return np.ones(1)
        if self.kind == "multi":
            return np.arange(1.0, self.servers + 1.0)
        cap = np.asarray(self.capacity, dtype=float)
        # Trailing repeats of the last value change nothing but cost work: drop them.
        last = len(cap)
        while last > 1 and cap[last - 2] == cap[-1]:
            last -= 1
        return cap[:last].copy()


@dataclass(frozen=True)
class Network:
    """A product-form queueing network with closed and/or open classes.

    Parameters
    ----------
    stations : sequence of Station
        At least one.  Each station's ``demand`` has one entry per class.
    classes : sequence of str, optional
        Class names; default ``("class1", ...)`` sized from the demands.
    population : sequence of int, optional
        Customers of each closed class (integers >= 0; 0 for an open class).
    think_time : sequence of float, optional
        Mean think time Z at the terminals, per class (>= 0; default 0).  Closed classes
        only.
    arrival_rate : sequence of float, optional
        Poisson arrival rate lambda per class (> 0 makes the class open; default 0).
    name : str, optional
        A label for reports.
    """

    stations: tuple[Station, ...]
    classes: tuple[str, ...] | None = None
    population: tuple[int, ...] | None = None
    think_time: tuple[float, ...] | None = None
    arrival_rate: tuple[float, ...] | None = None
    name: str = ""
    # Cached arrays, derived once at construction.
    demands: np.ndarray = field(init=False, repr=False, compare=False)
    #: (M, C) visits per interaction, 1 where a station gives none or the class has no demand.
    visits: np.ndarray = field(init=False, repr=False, compare=False)
    # Solver plans derived from this (immutable) network, keyed by solver.
    _derived: dict = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self):
        stations = self._checked_stations()
        classes = self._checked_classes(stations)
        n_classes = len(classes)
        pop_int = self._checked_population(n_classes)
        think = _finite_nonnegative(self._per_class(self.think_time, "network.think_time", n_classes, 0.0),
                                    "network.think_time", "think_time")
        rate = _finite_nonnegative(self._per_class(self.arrival_rate, "network.arrival_rate", n_classes, 0.0),
                                   "network.arrival_rate", "arrival_rate")
        for c in range(n_classes):
            if rate[c] > 0 and pop_int[c] > 0:
                raise ModelError("network.population",
                                 f"class {classes[c]!r} has both a population ({pop_int[c]}) and an arrival rate "
                                 f"({rate[c]:g}): a class is open (arrival_rate > 0, population 0) or closed")
            if rate[c] > 0 and think[c] > 0:
                raise ModelError("network.think_time",
                                 f"open class {classes[c]!r} has a think time; think time applies to closed classes")

        demands = np.array([s.demand for s in stations], dtype=float).reshape(len(stations), n_classes)
        demands.setflags(write=False)
        for c in range(n_classes):
            if pop_int[c] > 0 and think[c] == 0 and demands[:, c].sum() == 0:
                raise ModelError("network.population",
                                 f"closed class {classes[c]!r} has zero total demand and zero think time: "
                                 "its throughput would be infinite")
        object.__setattr__(self, "stations", stations)
        object.__setattr__(self, "classes", classes)
        object.__setattr__(self, "population", tuple(pop_int))
        object.__setattr__(self, "think_time", think)
        object.__setattr__(self, "arrival_rate", rate)
        object.__setattr__(self, "demands", demands)
        visits = np.ones_like(demands)
        for k, st in enumerate(stations):
            if st.visits is not None:
                visits[k] = np.where(demands[k] > 0, st.visits, 1.0)
        visits.setflags(write=False)
        object.__setattr__(self, "visits", visits)

    def _checked_stations(self) -> tuple[Station, ...]:
        """At least one :class:`Station`, names unique."""
        stations = tuple(self.stations) if self.stations is not None else ()
        if len(stations) == 0:
            raise ModelError("station", "the network has no stations")
        for s in stations:
            if not isinstance(s, Station):
                raise ModelError("station", f"expected Station objects, got {type(s).__name__}")
        names = [s.name for s in stations]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ModelError("station.name", f"duplicate station name(s): {', '.join(sorted(dup))}")
        return stations

    def _checked_classes(self, stations) -> tuple[str, ...]:
        """The class names; their count comes from the most explicit source given, and
        every station's demand must have that many entries."""
        n_classes, source = len(stations[0].demand), f"station[{stations[0].name}].demand"
        for values, where in ((self.arrival_rate, "network.arrival_rate"),
                              (self.population, "network.population")):
            if values is not None:
                n_classes, source = len(_as_sequence(values, where)), where
        if self.classes is not None:
            classes = tuple(_as_sequence(self.classes, "network.classes"))
            if not all(isinstance(c, str) and c for c in classes):
                raise ModelError("network.classes", f"class names must be non-empty strings, got {list(classes)!r}")
            if len(set(classes)) != len(classes):
                raise ModelError("network.classes", "duplicate class names")
            n_classes, source = len(classes), "network.classes"
        else:
            classes = tuple(f"class{i + 1}" for i in range(n_classes))
        if n_classes == 0:
            raise ModelError("network.classes", "the network has no classes")
        for s in stations:
            if len(s.demand) != n_classes:
                raise ModelError(f"station[{s.name}].demand",
                                 f"has {len(s.demand)} entries, expected {n_classes} (one per class, "
                                 f"as in {source})")
        return classes

    def _checked_population(self, n_classes: int) -> list[int]:
        """Closed populations: whole numbers from 0 to :data:`MAX_POPULATION`."""
        pop_int = []
        for i, p in enumerate(self._per_class(self.population, "network.population", n_classes, 0)):
            if isinstance(p, bool) or (isinstance(p, float) and not p.is_integer()) \
                    or not isinstance(p, (int, float, np.integer, np.floating)) or \
                    (isinstance(p, float) and not math.isfinite(p)):
                raise ModelError("network.population", f"population[{i}] = {p!r} is not an integer")
            if p < 0:
                raise ModelError("network.population", f"population[{i}] = {p!r} is negative")
            if p > MAX_POPULATION:     # every solver counts customers in 64-bit integers
                raise ModelError("network.population", f"population[{i}] = {p!r} exceeds {MAX_POPULATION:.3g}")
            pop_int.append(int(p))
        return pop_int

    @staticmethod
    def _per_class(values, where, n_classes, default):
        if values is None:
            return (default,) * n_classes
        seq = _as_sequence(values, where)
        if len(seq) != n_classes:
            raise ModelError(where, f"has {len(seq)} entries, expected {n_classes} (one per class)")
        return tuple(seq)

    # -- derived views ------------------------------------------------------------------
    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def n_stations(self) -> int:
        return len(self.stations)

    @property
    def is_open(self) -> np.ndarray:
        """Boolean mask of open classes (arrival rate > 0)."""
        return np.asarray(self.arrival_rate) > 0

    @property
    def station_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.stations)

    def replace(self, **changes) -> Network:
        """A copy with some fields changed (validated again)."""
        kwargs = dict(stations=self.stations, classes=self.classes, population=self.population,
                      think_time=self.think_time, arrival_rate=self.arrival_rate, name=self.name)
        kwargs.update(changes)
        return Network(**kwargs)


def require_network(network, name: str = "network") -> None:
    """A :class:`ModelError` naming ``name`` unless ``network`` is a :class:`Network`
    (the public solvers' first check: a wrong argument is one line, not an AttributeError)."""
    if not isinstance(network, Network):
        raise ModelError(name, f"expected a Network, got {type(network).__name__}")
