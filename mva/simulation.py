"""Discrete-event simulation of a network file: ``solve(network, method="simulation")``.

The ground truth the analytic methods are checked against (as JMT's JSIM is for JMVA).
Each interaction of a class visits the stations where it has a demand, in file order,
once, with a service time whose mean is the demand (exponential unless the station's
``scv`` says otherwise: deterministic, gamma or hyperexponential), then thinks (closed
classes, exponential think time) or leaves (open classes, Poisson arrivals).  A station
with ``visits`` V is visited floor(V) times and once more with probability V - floor(V),
each visit a service of mean demand / V.  By the BCMP theorem (Baskett, Chandy, Muntz &
Palacios 1975) the product-form measures depend on the demands alone, so this routing
has the same means as any other with the same demands; with FCFS stations and
class-dependent demands the network is not product form and the simulation measures
what MVA only approximates.

Stations: ``queue`` (one server), ``delay`` (infinite servers), ``multi`` (``servers``),
``ld`` (rate ``capacity[j-1]`` times the one-customer rate with j present).  Queues and
multi-servers share by processor sharing unless the station's ``discipline`` is
``fcfs``, or ``priority`` (preemptive-resume by the station's per-class ``priority``,
lower first; FCFS within a class); exponential service makes each an exact CTMC draw,
other service a scheduled completion from the customers' remaining work
(:mod:`mva._simulation_kernel`).

Output analysis: batch means (Law & Kelton, *Simulation Modeling and Analysis*, 3rd ed.,
§9.5.3) after a warm-up that is discarded; the half-width of the ``confidence`` interval
of every measure is Student's t over the batch means.  With ``precision`` the run
continues, doubling its batches' length, until every class's throughput is known within
that relative half-width (or ``max_events`` is spent, which the result then says).
Deterministic for a given ``seed``.  Queue lengths are estimated indirectly, by Little's
law from the completed visits' sojourn times, and utilisations by the utilisation law
(X D / servers), both consistent and often of lower variance than time averages (Carson
& Law, "Conservation equations and variance reduction in queueing simulations",
*Operations Research* 28(3), 1980); only ``ld`` stations integrate their busy time.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from . import _simulation_kernel as kernel
from .errors import ModelError
from .network import Network, require_network
from .plan import check_open_saturation, pack_capacities
from .result import Result
from .simulation_output import analyse
from .simulation_settings import NETWORK_SIMULATION, SimulationSettings, chosen_settings
from .variates import seed as seed_stream
from .jit import clock, seconds_since

__all__ = ["simulate_network", "MEASURES"]

#: The measures that carry half-widths, by :class:`~mva.result.Result` field.
MEASURES = ("throughput", "response_time", "residence_time", "queue_length", "utilization")

OPEN_POOL = 100_000          # most open customers in the system at once


class _Chain:
    """The simulated network's state and the arrays the kernel works on."""

    def __init__(self, network: Network, seed: int):
        m, c = network.n_stations, network.n_classes
        demands = network.demands
        self.kind = np.array([kernel.KIND_CODES[s.kind] for s in network.stations], dtype=np.int64)
        self.disc = np.array([kernel.DISCIPLINE_CODES[s.discipline] for s in network.stations], dtype=np.int64)
        scv = np.array([s.scv for s in network.stations])
        self.general = scv != 1.0
        self.scv = scv
        self.ordered = self.general | (self.disc == kernel.FCFS) | (self.disc == kernel.PRIORITY)
        self.rank = np.zeros((m, c), dtype=np.int64)
        for k, s in enumerate(network.stations):
            if s.priority is not None:
                self.rank[k] = s.priority
        self.servers = np.array([s.servers if s.kind == "multi" else 1 for s in network.stations], dtype=np.int64)
        # alpha(1..J) padded with alpha(J), as the analytic kernels take it (read for ld only)
        _, self.capacity, _ = pack_capacities([s.capacity_function() for s in network.stations])
        visits = network.visits
        service = demands / visits            # one visit's mean service
        with np.errstate(divide="ignore"):
            self.mu = np.where(demands > 0, 1.0 / np.where(demands > 0, service, 1.0), 0.0)
        # each interaction visits a station floor(V) times and once more with probability
        # V - floor(V): the mean V, and exactly once where no visits are given
        self.visit_whole = np.floor(visits).astype(np.int64)
        self.visit_part = visits - self.visit_whole
        routes = [[k for k in range(m) if demands[k, cls] > 0] for cls in range(c)]
        self.route_len = np.array([len(r) for r in routes], dtype=np.int64)
        self.route = np.zeros((c, max(1, m)), dtype=np.int64)
        for cls, r in enumerate(routes):
            self.route[cls, :len(r)] = r
        think = np.asarray(network.think_time, dtype=float)
        population = np.asarray(network.population, dtype=np.int64)
        self.arrival_rate = np.asarray(network.arrival_rate, dtype=float)
        self.think_rate = np.where(think > 0, 1.0 / np.where(think > 0, think, 1.0), 0.0)
        self.think_rate[self.arrival_rate > 0] = 0.0
        closed = int(population.sum())
        pool = closed + (OPEN_POOL if self.arrival_rate.sum() > 0 else 0)
        self.clock = np.zeros(1)
        self.cust_class = np.full(pool, -1, dtype=np.int64)
        self.cust_pos = np.full(pool, -1, dtype=np.int64)
        self.cust_arrive = np.zeros(pool)
        self.cust_start = np.zeros(pool)
        self.cust_slot = np.zeros(pool, dtype=np.int64)
        self.cust_left = np.zeros(pool, dtype=np.int64)
        self.free = np.arange(pool - 1, closed - 1, -1, dtype=np.int64)
        self.n_free = np.array([pool - closed], dtype=np.int64)
        self.n_kc = np.zeros((m, c), dtype=np.int64)
        self.n_k = np.zeros(m, dtype=np.int64)
        self.bag = np.zeros((m, c, pool), dtype=np.int64)
        self.fifo_id = np.zeros((m, pool), dtype=np.int64)
        self.fifo_cls = np.zeros((m, pool), dtype=np.int64)
        self.head = np.zeros(m, dtype=np.int64)
        self.last_change = np.zeros(m)
        self.station_rate = np.zeros(m)
        self.cust_work = np.zeros(pool)
        self.next_done = np.full(m, np.inf)
        self.done_pos = np.zeros(m, dtype=np.int64)
        self.work_clock = np.zeros(m)
        # utilisation law: U_kc = X_c D_kc / servers (each visit's service S_kc = D_kc / V_kc),
        # except at ld stations, whose busy time the kernel integrates
        self.work_per_visit = service / self.servers[:, None]
        self.is_ld = self.kind == kernel.KIND_LD
        self.thinking = np.zeros(c, dtype=np.int64)
        self.think_bag = np.zeros((c, max(1, int(population.max(initial=0)))), dtype=np.int64)
        # closed customers start at their terminals; those without think time enter their
        # first station as the kernel's first steps
        self.entering = np.zeros(max(1, closed), dtype=np.int64)
        self.n_entering = np.zeros(1, dtype=np.int64)
        cust = 0
        for cls in range(c):
            for _ in range(population[cls]):
                self.cust_class[cust] = cls
                if self.think_rate[cls] > 0:
                    self.think_bag[cls, self.thinking[cls]] = cust
                    self.thinking[cls] += 1
                else:
                    self.entering[self.n_entering[0]] = cust
                    self.n_entering[0] += 1
                cust += 1
        seed_stream(seed)

    def run(self, events: int) -> dict:
        """Advance ``events`` events; the batch's measures (rates per time unit)."""
        m, c = self.mu.shape
        acc = {"busy": np.zeros((m, c)), "visits": np.zeros((m, c)),
               "sojourn": np.zeros((m, c)), "done": np.zeros(c), "response": np.zeros(c)}
        start = self.clock[0]
        status = kernel.run(events, self.kind, self.disc, self.servers, self.capacity, self.mu, self.route,
                            self.route_len, self.think_rate, self.arrival_rate, self.clock, self.cust_class,
                            self.cust_pos, self.cust_arrive, self.cust_start, self.cust_slot, self.free, self.n_free,
                            self.n_kc, self.n_k, self.bag, self.fifo_id, self.fifo_cls, self.head, self.last_change,
                            self.station_rate, acc["busy"], acc["visits"], acc["sojourn"], acc["done"],
                            acc["response"], self.thinking, self.think_bag, self.rank, self.entering, self.n_entering,
                            self.general, self.ordered, self.scv, self.cust_work, self.next_done, self.done_pos,
                            self.work_clock, self.visit_whole, self.visit_part, self.cust_left)
        if status == 1:
            raise ModelError("network.arrival_rate", f"more than {OPEN_POOL:,} open customers at once: the open "
                                                     "load saturates a station (no steady state)")
        kernel.flush(self.clock[0], self.kind, self.n_kc, self.n_k, self.last_change, acc["busy"])
        acc["busy"] = np.where(self.is_ld[:, None], acc["busy"], acc["visits"] * self.work_per_visit)
        acc["time"] = self.clock[0] - start
        return acc


def _batch_measures(acc: dict, visits: np.ndarray) -> dict:
    """Per-batch estimates of every measure from its accumulators: the queue length by
    Little's law from the visits' sojourn times, the utilisation from the busy time (the
    utilisation law's, but at ``ld`` stations); ``visits`` (M, C) per interaction."""
    span = acc["time"]
    with np.errstate(invalid="ignore", divide="ignore"):
        throughput = acc["done"] / span
        return {"throughput": throughput,
                "response_time": np.where(acc["done"] > 0, acc["response"] / np.maximum(acc["done"], 1), np.nan),
                # the residence time per interaction: a visit's mean sojourn times the visits
                "residence_time": np.where(acc["visits"] > 0,
                                           acc["sojourn"] / np.maximum(acc["visits"], 1) * visits, np.nan),
                "queue_length": acc["sojourn"] / span,
                "utilization": acc["busy"] / span}


def _auto_measure(network: Network, c: int) -> str:
    """The measure of class ``c`` a simulation must estimate (``target = "auto"``): the
    response time of an open class, whose throughput is its arrival rate, known before
    the run; the throughput of a closed one."""
    return "response_time" if network.is_open[c] else "throughput"


def _unknown_in_advance(network: Network, mean: dict, half: dict) -> tuple:
    """(estimates, half-widths) of :func:`_auto_measure` over the classes."""
    picked = [_auto_measure(network, c) for c in range(network.n_classes)]
    return (np.array([mean[m][c] for c, m in enumerate(picked)], float),
            np.array([half[m][c] for c, m in enumerate(picked)], float))


def _bound_by(network: Network, target: str, mean: dict, half: dict) -> str:
    """Which entry of the precision target bound the run: ``"response_time of web
    ±0.36%"`` (the largest relative half-width among the target's positive entries)."""
    rows = []
    for c, cls in enumerate(network.classes):
        names = [target] if target != "auto" else [_auto_measure(network, c)]
        for name in names:
            x, h = np.asarray(mean[name]), np.asarray(half[name])
            for index in np.ndindex(x.shape):
                if index[-1] == c and x[index] > 0:
                    where = cls if x.ndim == 1 else f"{network.station_names[index[0]]}, {cls}"
                    rows.append((h[index] / x[index], f"{name} of {where}"))
    if not rows:
        return f"{target}: no positive estimate"
    worst, label = max(rows)
    return f"{label} ±{100 * worst:.3g}%"


#: Fewest long-branch services of a hyperexponential station a batch should see for its
#: interval to be trusted (fewer, and a batch's mean depends on a handful of them).
MIN_LONG_SERVICES = 30


def _rare_long_services(network: Network, visits: np.ndarray, settings: SimulationSettings) -> str:
    """An ``unreliable: ...`` accuracy when a station's hyperexponential service (scv > 1)
    draws its long branch (probability (1 - sqrt((scv-1)/(scv+1)))/2, see
    :func:`mva.variates.service_time`) fewer than :data:`MIN_LONG_SERVICES` times a
    batch; empty when every batch saw enough."""
    samples = settings.replications if settings.replications > 1 else settings.batches
    for k, station in enumerate(network.stations):
        if station.scv > 1.0:
            long = (1.0 - np.sqrt((station.scv - 1.0) / (station.scv + 1.0))) / 2.0
            per_batch = visits[k].sum() * long / samples
            if per_batch < MIN_LONG_SERVICES:
                need = int(np.ceil(settings.events * MIN_LONG_SERVICES / max(per_batch, 1e-9)))
                return (f"unreliable: station {station.name}'s service (scv {station.scv:g}) drew its long branch "
                        f"about {per_batch:.3g} times a batch, too few for an interval; give about {need:,} events")
    return ""


def simulate_network(network: Network, settings: SimulationSettings | None = None, **options) -> Result:
    """Simulate ``network`` and estimate its measures with confidence intervals.

    Parameters
    ----------
    settings : SimulationSettings, optional
        Run settings (default :data:`~mva.simulation_settings.NETWORK_SIMULATION`: seed 1,
        2,000,000 events after a warm-up of a tenth of that, 20 batch means, 95%
        intervals, at most 200,000,000 events in precision mode); ``precision`` is on
        ``target``: by default (``"auto"``) the throughput of closed classes and the
        response time of open ones (their throughput is the arrival rate); or
        ``"throughput"``, ``"response_time"``, ... for every entry of that measure.  The
        result's message says which measure bound the run and its relative half-width.
    **options
        Fields of :class:`~mva.simulation_settings.SimulationSettings` to change (``seed``,
        ``events``, ``replications``, ``precision``, ``workers``, ...).  Replications on
        a Dask cluster give the result a serial run gives (the same seeds, taken in
        order; in precision mode replications beyond the first that reaches the
        precision are computed and discarded).

    Returns
    -------
    Result
        Means as MVA gives them (time in the network's unit) with ``half_width`` holding
        the interval half-widths of each measure and ``confidence_level`` the level;
        ``converged`` is False when ``precision`` was not reached.
    """
    require_network(network)
    started = clock()
    settings = chosen_settings(settings, NETWORK_SIMULATION, **options)
    if settings.target not in ("auto", *MEASURES):
        raise ModelError("target", f"no measure {settings.target!r}; measures: auto, {', '.join(MEASURES)}")
    if not network.is_open.any() and not np.any(np.asarray(network.population) > 0):
        raise ModelError("network.population", "every class is closed and empty: nothing to simulate")
    check_open_saturation(network)
    run = analyse(partial(_Chain, network), partial(_batch_measures, visits=network.visits), settings, partial(_unknown_in_advance, network))
    seed, precision, confidence = settings.seed, settings.precision, settings.confidence
    mean, half, total, spent, how, reached = run.mean, run.half, run.total, run.spent, run.how, run.reached
    # a class that never visits a station has residence time 0 there, exactly
    never = total["visits"] == 0
    mean["residence_time"] = np.where(never, 0.0, mean["residence_time"])
    half["residence_time"] = np.where(never, 0.0, half["residence_time"])

    throughput = mean["throughput"]
    message = f"simulation: {how}"
    empty = (np.asarray(network.population) == 0) & ~network.is_open
    silent = (total["done"] == 0) & ~empty
    if np.any(silent):
        reached = False
        message += "; no interaction completed for class(es) " + ", ".join(
            network.classes[c] for c in np.flatnonzero(silent)) + ": run more events"
    for name in ("throughput", "response_time"):
        mean[name] = np.where(empty, 0.0, mean[name])
        half[name] = np.where(empty, 0.0, half[name])
    half["throughput"] = np.where(silent, np.inf, half["throughput"])
    if precision is not None:
        verb = "reached" if reached else "not reached after max_events"
        message += f"; precision {precision:g} {verb}: {_bound_by(network, settings.target, mean, half)}"
    unknown = sorted({name for name in MEASURES if np.any(np.isinf(half[name]))})
    if unknown:
        message += "; no interval for some " + ", ".join(unknown) + " (fewer than two batches saw them)"
    caution = _rare_long_services(network, total["visits"], settings)
    return Result(method="simulation", classes=network.classes, stations=network.station_names,
                  throughput=throughput, response_time=mean["response_time"],
                  residence_time=mean["residence_time"], queue_length=mean["queue_length"],
                  utilization=mean["utilization"], converged=reached, iterations=spent,
                  solve_seconds=seconds_since(started), message=message,
                  accuracy=caution or f"{100 * confidence:g}% confidence intervals from {run.method}",
                  half_width=half, confidence_level=confidence,
                  extras={"events": spent, "simulated_time": float(total["time"]), "seed": int(seed)})
