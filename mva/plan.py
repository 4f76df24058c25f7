"""What every solver derives from a network before it iterates, and how it turns the
closed-class solution back into a :class:`~mva.result.Result`.

A solver only ever solves the *closed* part of a network: open classes are summed out
exactly beforehand (:mod:`mva.open`), which leaves every station as load-dependent with an
effective capacity function seen by the closed classes.  The closed solution (throughput,
residence times, total queue lengths and the head of each station's marginal queue-length
distribution) then gives the open classes' measures and the utilisations in one place,
:func:`assemble_result`, whatever method produced it (exact or approximate).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ._approximate_kernels import PREEMPT_BLEND
from .errors import ModelError, NumericalWarning, SaturationError
from .network import Network
from .nonproduct import approximation_note, open_residence
from .open import open_load_effect
from .result import Result

__all__ = ["SolverPlan", "assemble_result", "pack_capacities", "open_load", "check_open_saturation"]


def pack_capacities(capacities):
    """(M, Jmax) padded capacity table, J per station, delay mask."""
    M = len(capacities)
    is_delay = np.array([c is None for c in capacities], dtype=np.bool_)
    cap_len = np.array([1 if c is None else len(c) for c in capacities], dtype=np.int64)
    jmax = int(cap_len.max()) if M else 1
    table = np.ones((M, jmax))
    for k, c in enumerate(capacities):
        if c is not None:
            table[k, :len(c)] = c
            table[k, len(c):] = c[-1]
    return is_delay, table, cap_len


def open_load(network: Network) -> np.ndarray:
    """Open load a_k = sum over open classes of lambda_c D_kc at each station (M,)."""
    mask = network.is_open
    if not mask.any():
        return np.zeros(network.n_stations)
    return network.demands[:, mask] @ np.asarray(network.arrival_rate, dtype=float)[mask]


def check_open_saturation(network: Network, capacities=None, load=None) -> None:
    """SaturationError naming the first station whose open load reaches its full capacity
    alpha(J) (no steady state); ``capacities`` and ``load`` are derived when not given."""
    capacities = [s.capacity_function() for s in network.stations] if capacities is None else capacities
    load = open_load(network) if load is None else load
    for k, (station, cap) in enumerate(zip(network.stations, capacities, strict=False)):
        if cap is None or load[k] == 0:
            continue
        limit = cap[-1]
        if load[k] >= limit:
            what = {"multi": f" on {station.servers} servers", "ld": f" at full capacity {limit:g}"}
            raise SaturationError(
                f"station[{station.name}]",
                f"open traffic saturates the station: utilisation {load[k] / limit:.4g} >= 1 "
                f"(open load {load[k]:.4g}{what.get(station.kind, '')}); no steady state exists")


class SolverPlan:
    """The closed part of a network as flat arrays, with open traffic summed out.

    Built once per (immutable) network and cached on it (:meth:`of`).

    Attributes
    ----------
    capacities : list of ndarray or None
        Each station's own capacity function (None for a delay).
    effects : list of OpenLoadEffect or None
        What open traffic does to each station (None: no open load there).
    closed : ndarray of int
        Indices of the closed classes.
    population, think : ndarray (C_closed,)
        Closed populations and think times.
    closed_demand : ndarray (M, C_closed)
    closed_visits : ndarray (M, C_closed)
        Visits per interaction (1 where the network gives none).
    is_delay, table, cap_len : the effective capacity functions seen by closed classes,
        packed as in :mod:`mva._exact_kernels` (delay mask, (M, Jmax) table, J per station).
    tracked : ndarray (M,)
        J - 1 for non-delay stations: marginal probabilities p(0..J-2) a solver carries.
    """

    def __init__(self, network: Network):
        demand = network.demands
        M, C = demand.shape
        self.capacities = [s.capacity_function() for s in network.stations]
        load = open_load(network)
        self._non_product_form(network, demand, load)
        self.open_mask = network.is_open
        self.rate = np.asarray(network.arrival_rate, dtype=float)
        self.open_classes = np.flatnonzero(self.open_mask)
        self.open_load = load
        check_open_saturation(network, self.capacities, self.open_load)
        self.effects = [None if cap is None or self.open_load[k] == 0 else
                        open_load_effect(cap, float(self.open_load[k]))
                        for k, cap in enumerate(self.capacities)]
        closed_caps = [cap if e is None else e.capacity for cap, e in zip(self.capacities, self.effects, strict=False)]
        self.closed = np.flatnonzero(~self.open_mask)
        self.closed_level = np.ascontiguousarray(self.level[:, self.closed])
        self.population = np.asarray(network.population, dtype=np.int64)[self.closed]
        self.think = np.asarray(network.think_time, dtype=float)[self.closed]
        self.closed_demand = np.ascontiguousarray(demand[:, self.closed])
        #: (M, C_closed) visits per interaction: at a station that is not product form an
        #: arrival waits for each customer found for that class's service per visit.
        self.closed_visits = np.ascontiguousarray(network.visits[:, self.closed])
        self.is_delay, self.table, self.cap_len = pack_capacities(closed_caps)
        self.tracked = np.where(self.is_delay, 0, self.cap_len - 1)
        #: True when some station carries marginals (and so needs a complement network).
        self.needs_marginals = bool(self.tracked.any())
        #: Population vectors of the exact lattice, prod_c (N_c + 1).
        self.lattice_points = math.prod(int(n) + 1 for n in self.population)
        # For assemble_result, once: stations with open load, utilisation divisors, and the
        # load-dependent stations whose utilisation comes from p(0).
        self.open_stations = np.flatnonzero(self.open_load > 0)
        self.all_closed = len(self.open_classes) == 0
        self.util_divisor = np.ones(M)
        self.busy_from_marginal = []
        for k, station in enumerate(network.stations):
            if station.kind == "multi":
                self.util_divisor[k] = station.servers
            elif station.kind == "ld":
                if len(self.capacities[k]) == 1:
                    self.util_divisor[k] = self.capacities[k][0]
                else:
                    no_open = 1.0 if self.effects[k] is None else self.effects[k].p_no_open_when_empty
                    self.busy_from_marginal.append((k, no_open))
        self.exact_choice = None      # (algorithm, cost), filled by mva.exact on first use
        self.lattice_checked = False  # mva.exact refused or accepted the lattice size

    def _non_product_form(self, network: Network, demand, load) -> None:
        """The stations that are not product form and how the solvers treat them.

        BCMP product form (Baskett, Chandy, Muntz & Palacios 1975) needs one exponential
        service time for every class at an FCFS station and has no priorities.  Elsewhere
        the approximate methods use the non-product-form residence time of
        :func:`mva._approximate_kernels.nonproduct_residence` (``backlog``), and the exact
        method refuses them where its lattice cannot carry them (:func:`mva.exact_mva`).
        """
        M, C = demand.shape
        #: (scv - 1) / 2 at FCFS and priority stations with non-exponential service, the
        #: residual-time term the kernels add (0 elsewhere: PS and delay
        #: stations are insensitive to the service distribution, BCMP).
        self.residual = np.zeros(M)
        #: Stations that are not product form (FCFS with class-dependent demands or
        #: non-exponential service, priority levels), where the approximate methods use
        #: :func:`mva._approximate_kernels.nonproduct_residence`.
        self.backlog = np.zeros(M, dtype=np.bool_)
        #: Priority level of each class at each station (0 except at priority stations).
        self.level = np.zeros((M, C), dtype=np.int64)
        #: One phrase per station not solved as product form, for the accuracy note.
        self.non_product = []
        #: Stations the exact lattice cannot carry (all but a single server whose only
        #: departure from product form is its service's scv, which takes Reiser's term).
        self.beyond_lattice = []
        #: True when some station serves classes of different demands or levels.
        self.mixed_classes = False
        for k, s in enumerate(network.stations):
            if s.discipline == "ps":
                continue
            visiting = demand[k] > 0
            multi = s.kind == "multi" and s.servers > 1
            levels = np.unique(np.asarray(s.priority)[visiting]).size if s.priority is not None else 1
            # product form needs one service time per visit (BCMP), not one demand
            unequal = np.unique(demand[k][visiting] / network.visits[k][visiting]).size > 1
            what = []
            if levels > 1:
                what.append(f"{levels} priority levels")
                self.level[k] = s.priority
            if unequal:
                what.append("class-dependent demands" if (network.visits[k][visiting] == 1.0).all()
                            else "class-dependent service per visit")
            if s.scv != 1.0:
                what.append(f"scv {s.scv:g}" + (f" on {s.servers} servers" if multi else ""))
                self.residual[k] = (s.scv - 1.0) / 2.0
            if not what:
                continue
            self.backlog[k] = True
            if levels > 1 or unequal or multi:
                self.beyond_lattice.append(k)
            if levels > 1 or unequal:
                self.mixed_classes = True
            self.non_product.append(f"{s.name} ({s.discipline}: {', '.join(what)})")
            if load[k] > 0 and (~network.is_open).any() and np.asarray(network.population).sum() > 0:
                raise ModelError(f"station[{s.name}].discipline",
                                 f"{s.discipline} with {', '.join(what)} and open traffic beside closed classes has "
                                 "no analytic solution here: solve it with method simulation")
        #: Stations solved by the residual-time approximation (non-exponential single servers).
        self.non_exponential = [s.name for k, s in enumerate(network.stations) if self.residual[k] != 0.0]
        #: How priority levels preempt in the approximate methods (see
        #: :func:`mva._approximate_kernels.nonproduct_residence`).
        self.preemption = PREEMPT_BLEND
        #: Whether an arrival finds fewer customers of other classes than the time
        #: average (the blocking correction of :func:`mva._approximate_kernels.nonproduct_residence`).
        self.blocking = True

    @classmethod
    def of(cls, network: Network) -> SolverPlan:
        plan = network._derived.get("solver_plan")
        if plan is None:
            plan = network._derived["solver_plan"] = cls(network)
        return plan


def assemble_result(network: Network, plan: SolverPlan, method: str, closed_throughput, closed_residence,
                    closed_total_queue, marginal, **status) -> Result:
    """The :class:`Result` of a network from the solution of its closed part.

    Parameters
    ----------
    closed_throughput : ndarray (C_closed,) or None
        X_c of the closed classes (1/time unit); None when there are none (or all are
        empty).
    closed_residence : ndarray (M, C_closed)
        Residence times of the closed classes (time unit).
    closed_total_queue : ndarray (M,)
        Mean closed customers at each station, all classes.
    marginal : ndarray (M, T)
        p_k(j) for j < T_k (at least p_k(0); rows of stations without marginals unused).
    **status
        ``converged``, ``iterations``, ``solve_seconds``, ``message``, ``extras`` of the
        Result.

    Notes
    -----
    Open customers at a station split among open classes in proportion to lambda_c D_kc;
    their mean number comes from the closed customers they meet (:mod:`mva.open`).
    """
    demand = network.demands
    M, C = demand.shape
    if closed_throughput is not None and plan.all_closed:   # the common case, without copies
        throughput = np.asarray(closed_throughput, dtype=float)
        residence = closed_residence
        queue = closed_residence * closed_throughput
    else:
        throughput = np.zeros(C)
        residence = np.zeros((M, C))
        queue = np.zeros((M, C))
        if closed_throughput is not None:
            throughput[plan.closed] = closed_throughput
            residence[:, plan.closed] = closed_residence
            queue[:, plan.closed] = closed_residence * closed_throughput
        else:
            closed_total_queue = np.zeros(M)
            marginal = np.zeros((M, max(int(plan.tracked.max()), 1)))
            marginal[:, 0] = 1.0  # no closed customer anywhere
    rate = plan.rate
    throughput[plan.open_classes] = rate[plan.open_classes]
    for k in plan.open_stations:
        a = plan.open_load[k]
        if plan.backlog[k]:
            # only open classes here (SolverPlan refuses a mixed one): closed forms per class
            rates = np.where(plan.open_mask, rate, 0.0)
            station = network.stations[k]
            residence[k] = open_residence(demand[k], rates, plan.level[k], station.servers, station.scv,
                                          network.visits[k])
            queue[k] = rates * residence[k]
            continue
        if plan.capacities[k] is None:
            open_queue = a
        else:
            open_queue = plan.effects[k].open_queue_length(closed_total_queue[k], marginal[k])
        for c in plan.open_classes:
            queue[k, c] = open_queue * rate[c] * demand[k, c] / a
            residence[k, c] = open_queue * demand[k, c] / a
    utilization = _utilization(network, plan, throughput, marginal)
    status = _with_approximation_note(plan, method, status)
    over = [f"{network.stations[k].name} at {utilization[k].sum():.4g}" for k in np.flatnonzero(plan.backlog)
            if utilization[k].sum() > 1.0 + 1e-9]
    if over:
        # the residual-time and priority terms can shorten residence below what the
        # bottleneck allows
        how = "residual-time MVA" if method == "exact" else "non-product-form MVA"
        doubt = (f"unreliable: {how} puts the utilisation of {', '.join(over)} above 1, an "
                 "impossible state: simulate it (--method simulation)")
        warnings.warn(f"{method}: {doubt}", NumericalWarning, stacklevel=3)
        status = {**status, "accuracy": doubt,
                  "message": "; ".join(filter(None, [status.get("message", ""), doubt]))}
    return Result(method=method, classes=network.classes, stations=network.station_names,
                  throughput=throughput, response_time=residence.sum(axis=0), residence_time=residence,
                  queue_length=queue, utilization=utilization, **status)


def _with_approximation_note(plan: SolverPlan, method: str, status: dict) -> dict:
    """``status`` with the accuracy marked approximate where a station is not product form
    (:mod:`mva.nonproduct`): the stations, the method, and its measured error."""
    if not plan.non_product:
        return status
    note = approximation_note(plan.non_product, "open" if plan.population.sum() == 0 else method)
    accuracy = status.get("accuracy", "")
    return {**status, "accuracy": note if accuracy in ("", "exact") else f"{accuracy}; {note}"}


def _utilization(network, plan, throughput, marginal):
    """Utilisation per station and class, as defined in :class:`~mva.result.Result`."""
    return utilization(plan, network.demands * throughput[None, :], marginal)


def utilization(plan, work, marginal):
    """Utilisation per station and class from the work ``X_c D_kc`` (``(..., M, C)``, any
    leading batch axes) and the marginals ``p_k(j)`` (``(..., M, J)``): work over the
    divisor (servers, a constant capacity), or for a load-dependent station ``1 - p_k(0)``
    split over the classes by their work (the one rule of every exact solver and the
    batch path)."""
    util = work / plan.util_divisor[:, None]
    for k, no_open in plan.busy_from_marginal:
        total = work[..., k, :].sum(axis=-1, keepdims=True)
        busy = total > 0
        share = (1.0 - marginal[..., k, 0:1] * no_open) * work[..., k, :] / np.where(busy, total, 1.0)
        util[..., k, :] = np.where(busy, share, util[..., k, :])
    return util
