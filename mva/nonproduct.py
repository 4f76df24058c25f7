"""Stations that are not product form: priority scheduling, FCFS with class-dependent
service, non-exponential service at FCFS stations.

BCMP product form (Baskett, Chandy, Muntz & Palacios, JACM 22(2), 1975) needs, at an FCFS
station, one exponential service time for every class, and has no priorities.  Where a
network breaks that, the approximate methods (Bard-Schweitzer and Linearizer,
:mod:`mva.approximate`; ``auto`` picks them) replace the product-form residence time at
that station by one that follows the discipline
(:func:`mva._approximate_kernels.nonproduct_residence`), with one visit per interaction:

* **FCFS with class-dependent service** (single server): an arrival waits for the work of
  the customers it finds, each with its own class's demand,
  R_c = D_c + sum_j D_j Q_j(n - e_c) (Reiser, "A queueing network analysis of computer
  communication networks with window flow control", IEEE Trans. Commun. 27(8), 1979; the
  FCFS approximation of Lazowska, Zahorjan, Graham & Sevcik, *Quantitative System
  Performance*, 1984, sec. 7.4.2).  Exact MVA when the demands are equal.
* **Non-exponential service** (squared coefficient of variation ``scv``): at a single
  server the customer in service has mean residual life D (1 + scv) / 2, which adds
  sum_j U_j(n - e_c) D_j (scv - 1) / 2 (Reiser 1979; exact for M/G/1, the
  Pollaczek-Khinchine mean); at m servers an arrival that finds all busy (Erlang's C at
  the offered load) waits for the first of m residual lives.  In a closed network the
  term fades with the station's idle share: a saturated server's throughput does not
  depend on its service distribution, and a customer that just left comes back soon after
  the service it left behind began (ours, chosen on tuning networks, where it lowered the
  mean error).  Exact MVA when scv = 1.
* **Priority, preemptive-resume** (single server): classes of equal ``priority`` form one
  level, served FCFS among themselves; an arrival waits for the work it finds at its own
  level and above, and is preempted by higher levels for as long as it stays,
  R_c = [D_c + sum_{j: level <= c's} (D_j Q_j(n - e_c) + residual terms)] / (1 - U_H),
  the completion-time form of the MVA priority approximation (R. M. Bryant,
  A. E. Krzesinski, M. S. Lakshmi and K. M. Chandy, "The MVA priority approximation",
  ACM TOCS 2(4):335-359, 1984).  With U_H the higher classes' utilisation it is
  pessimistic for low classes in a closed network; Chandy & Lakshmi's correction (U_H
  with the higher customers found at the station removed) is optimistic near saturation;
  the solvers blend the two by U_H (chosen on tuning networks).  For open classes it is
  Cobham's formula exactly (A. Cobham, "Priority assignment in waiting line problems",
  Operations Research 2(1):70-76, 1954).  Exact MVA when all classes share one level and
  FCFS is.
* Where classes of different demands or levels meet at a station, an arrival finds fewer
  of the others than the time average, since it cannot arrive while it waits behind them
  (ours: :func:`mva._approximate_kernels.nonproduct_residence`).

Networks of open classes only are solved station by station in closed form
(:func:`open_residence`: Cobham at priority stations, Pollaczek-Khinchine at single
servers, Erlang C scaled by Allen-Cunneen at multi-servers).  A non-product-form station
with open traffic beside closed classes is refused (simulate it).  The exact method
refuses stations that need these terms, except a single server whose only departure
from product form is its scv, where it keeps Reiser's term on the exact lattice.

Doubts.  The result says ``unreliable:`` with a range (:func:`variant_spread`) where the
approximation's own variants (Bryant et al. against Chandy & Lakshmi; exponential against
the residual term; with and without the blocking correction) move a class throughput by
more than :data:`SPREAD_LIMIT`, where its terms move a class throughput by more than
:data:`FORM_LIMIT` from the product-form answer (its error grows with the correction it
makes), or where Bard-Schweitzer moves Linearizer's by more than :data:`ESTIMATE_LIMIT`.

Accuracy, measured against the project's simulation by ``benchmarks/accuracy_nonproduct.py``
on 300 held-out random closed networks of each kind (seed 5036, drawn and simulated after
the method's choices, made on seed 7, and the flags' limits, made on seeds 7, 2036 and
4036; for variability seed 6036, drawn after the last change to its terms), each class's
response time simulated to +-0.5%: mean class-throughput error 1.75% with FCFS
class-dependent demands (worst 30%; processor sharing was 10.1% and 287%), 3.2% with
non-exponential service (worst 131%, flagged; exponential PS was 5.3%); with priority the
worst class is within 4.4% on half of the networks (1.85% mean below 0.8 utilisation), and
classes starved by a saturating higher level are far off in relative terms.  The flags
caught 263 of the 273 networks more than 5% off (FCFS 47 of 51, priority 143 of 143,
variability 73 of 79) and flagged 308 of the 627 others; unflagged results were 0.7-1.1%
off on average, at worst 10%.  Stated in ``Result.accuracy`` (:func:`approximation_note`).
"""
from __future__ import annotations

import numpy as np

from ._approximate_kernels import erlang_c  # noqa: F401 (public here: one Erlang C for both)

__all__ = ["open_residence", "erlang_c", "approximation_note", "variant_spread", "variant_settings",
           "spread_measures", "SPREAD_LIMIT",
           "ESTIMATE_LIMIT", "FORM_LIMIT", "MEASURED_ACCURACY"]

#: What the approximation's numbers are worth: measured by
#: ``benchmarks/accuracy_nonproduct.py`` against the simulation on the held-out seeds 5036
#: and 6036 (300 random closed networks of each kind, rows in ``data/studies/``).
MEASURED_ACCURACY = ("on held-out random networks, class throughputs 1.8% from simulation on average for FCFS with "
                     "class-dependent demands, 3.2% for non-exponential service; priority: the worst class within "
                     "4.4% on half of them, starved classes far off; 96% of those more than 5% off were flagged")


#: Largest relative difference between the class throughputs of the approximation and of
#: its bracketing variants before a result is flagged unreliable.  Small, because a
#: small spread already goes with large errors: on the tuning networks a quarter of those
#: with a spread of 1.5-5% were more than 5% off, a tenth of those below.
SPREAD_LIMIT = 0.015
#: Largest relative difference between Linearizer's and Bard-Schweitzer's class
#: throughputs on a network that is not product form before a Linearizer result is
#: flagged: where the estimate of what an arrival finds matters that much, the arrival
#: theorem's failure matters too.
ESTIMATE_LIMIT = 0.07
#: Largest move of a class throughput from the product-form answer (the same network with
#: every station processor sharing and exponential, by Bard-Schweitzer) before a result is
#: flagged: the approximation's error grows with the correction it makes.  The three
#: limits were chosen on 1,320 tuning networks (seeds 7, 2036 and 4036 of
#: ``benchmarks/accuracy_nonproduct.py``) to flag at least 95% of the networks more than 5%
#: off (they flagged 97%, and 45% of the others; held out, 96% and 49%: module text).
FORM_LIMIT = 0.08


def variant_settings(plan) -> np.ndarray:
    """The forms :func:`variant_spread` solves by Bard-Schweitzer, one row each: the
    preemption factor, the residual-time term off (1), the blocking correction on (1), the
    non-product-form terms off (1).  Row 0 is the chosen form, the last row the
    product-form answer, the rows between the variants that bracket the chosen form."""
    from ._approximate_kernels import PREEMPT_BKLC, PREEMPT_CL

    chosen, blocking = int(plan.preemption), int(plan.blocking)
    rows = [(chosen, 0, blocking, 0)]
    if plan.closed_level.any():
        rows += [(PREEMPT_BKLC, 0, blocking, 0), (PREEMPT_CL, 0, blocking, 0)]
    if plan.residual.any():
        rows.append((chosen, 1, blocking, 0))
    if plan.mixed_classes:
        rows.append((chosen, 0, 0, 0))
    rows.append((chosen, 0, blocking, 1))
    return np.array(rows, dtype=np.int64)


def _variant_plan(plan, row):
    """``plan`` in the form of one row of :func:`variant_settings`."""
    import copy

    variant = copy.copy(plan)
    variant.preemption, variant.blocking = int(row[0]), bool(row[2])
    if row[1] or row[3]:
        variant.residual = np.zeros_like(plan.residual)
    if row[3]:
        variant.backlog = np.zeros_like(plan.backlog)
    return variant


def spread_measures(throughput, variant_throughput, compare_estimate=False) -> dict:
    """What :func:`variant_spread` measures, for any number of cases at once.

    Parameters
    ----------
    throughput : (..., C)             the solution's class throughputs.
    variant_throughput : (..., V, C)  the rows of :func:`variant_settings` by Bard-Schweitzer.
    compare_estimate : bool           the solution is Linearizer's: measure its distance to
                                      Bard-Schweitzer's (row 0).

    Returns
    -------
    dict of arrays over the leading axes: ``spread`` (the variants' range relative to row
    0), ``low`` and ``high`` (..., C), ``form_gap`` (the product-form answer's move),
    ``estimate_gap`` (0 unless ``compare_estimate``), each gap's worst class
    (``*_class``), and ``doubtful``: some gap beyond its limit.
    """
    throughput = np.asarray(throughput, dtype=float)
    variant_throughput = np.asarray(variant_throughput, dtype=float)
    base = variant_throughput[..., 0, :]
    active = (throughput > 0) & (base > 0)

    def relative(values, reference):
        return np.where(active, np.abs(values) / np.where(active, reference, 1.0), 0.0)

    brackets = variant_throughput[..., :-1, :]
    low, high = brackets.min(axis=-2), brackets.max(axis=-2)
    spread = relative(high - low, base)
    form = relative(variant_throughput[..., -1, :] - base, base)
    estimate = relative(base - throughput, throughput) if compare_estimate else np.zeros_like(spread)
    out = {"low": low, "high": high}
    for name, gaps in (("spread", spread), ("form_gap", form), ("estimate_gap", estimate)):
        out[name] = gaps.max(axis=-1)
        out[f"{name}_class"] = gaps.argmax(axis=-1)
    out["doubtful"] = (out["spread"] > SPREAD_LIMIT) | (out["form_gap"] > FORM_LIMIT) \
        | (out["estimate_gap"] > ESTIMATE_LIMIT)
    return out


def variant_spread(plan, throughput, schweitzer, compare_estimate=False,
                   base=None) -> tuple[list[str], float, float]:
    """Doubts about a non-product-form solution from the spread of its variants.

    The approximation sits between two published forms of its own terms: at priority
    stations, Bryant et al.'s completion time (the higher levels preempt at their full
    utilisation: pessimistic for the low classes of a closed network) and Chandy &
    Lakshmi's (the higher customers found at the station removed: optimistic near
    saturation); for non-exponential service, exponential service and the residual-time
    term; where classes with different demands or levels meet, the count of customers an
    arrival finds with and without the blocking correction.  All are solved by
    Bard-Schweitzer (cheap), the spread taken relative to its solution of the chosen form
    (:func:`variant_settings`, :func:`spread_measures`).
    Where these variants move some class throughput by more than :data:`SPREAD_LIMIT`, or
    the non-product-form terms move it by more than :data:`FORM_LIMIT` from the
    product-form answer, or (``compare_estimate``: the method was Linearizer)
    Bard-Schweitzer's estimate of the arrival instant moves it by more than
    :data:`ESTIMATE_LIMIT` from ``throughput``, the network is in a regime the
    approximation does not resolve, and the result says so with the range.

    Parameters
    ----------
    plan : SolverPlan       of the network solved.
    throughput : (C_closed,) the solution's class throughputs (1/time unit).
    schweitzer : callable    plan -> solved state (with ``throughput``) by Bard-Schweitzer.
    compare_estimate : bool  also compare Bard-Schweitzer with ``throughput``.
    base : (C_closed,), optional  Bard-Schweitzer's throughputs of ``plan`` when already
                             known (the method was Bard-Schweitzer: ``throughput`` itself).

    Returns
    -------
    (doubts, spread, form_gap): one sentence per limit exceeded; the variants' spread and the
    largest move from the product-form answer (relative).
    """
    settings = variant_settings(plan)
    solved = [schweitzer(_variant_plan(plan, row)).throughput if k or base is None else base
              for k, row in enumerate(settings)]
    m = spread_measures(throughput, np.array(solved), compare_estimate)
    spread, form_gap = float(m["spread"]), float(m["form_gap"])
    doubts = []
    if spread > SPREAD_LIMIT:
        c = int(m["spread_class"])
        scale = throughput[c] / solved[0][c]     # the range about the method's own answer
        doubts.append(f"the non-product-form approximation's variants disagree by {100 * spread:.3g}% (closed "
                      f"class {c + 1}'s throughput from {m['low'][c] * scale:.4g} to {m['high'][c] * scale:.4g})")
    if form_gap > FORM_LIMIT:
        doubts.append(f"the non-product-form terms move closed class {int(m['form_gap_class']) + 1}'s throughput "
                      f"{100 * form_gap:.3g}% from the product-form answer, where the approximation's error grows "
                      "with that move")
    if float(m["estimate_gap"]) > ESTIMATE_LIMIT:
        doubts.append(f"Bard-Schweitzer's arrival estimate moves closed class {int(m['estimate_gap_class']) + 1}'s "
                      f"throughput by {100 * float(m['estimate_gap']):.3g}%, where the arrival theorem does not hold")
    if doubts:
        doubts[-1] += ": simulate it (--method simulation)"
    return doubts, spread, form_gap


def open_residence(demand, rate, level, servers: int, scv: float, visits=None) -> np.ndarray:
    """Residence time of each open class at one station that is not product form.

    Parameters
    ----------
    demand : (C,) float     D_c, service demand per interaction.
    rate : (C,) float       arrival rate lambda_c (0 for a class that is not open).
    level : (C,) int        priority levels (equal: FCFS).
    servers : int           m (priority stations have one).
    scv : float             squared coefficient of variation of every class's service.
    visits : (C,) float     V_c, visits per interaction (default 1): each visit a service
                            of mean D_c / V_c, the visits arriving at rate lambda_c V_c
                            (Poisson, as the interactions), so the formulas below hold
                            per visit and the residence is V_c times a visit's.

    Returns
    -------
    (C,) residence times (0 where the rate is 0), same time unit as ``demand``.

    Notes
    -----
    FCFS: the M/G/m waiting time of the mixture of the classes' service times, Erlang C
    times mean service / (m - a) times (1 + c_s^2) / 2 (Allen-Cunneen; exact for m = 1, the
    Pollaczek-Khinchine mean).  Priority (m = 1): Cobham's preemptive-resume formula
    T_c = D_c / (1 - s_H) + sum_{j in L} lambda_j E[S_j^2] / 2 / ((1 - s_H)(1 - s_L)), s_H and s_L the
    utilisations of the levels above c's and of c's and above.
    """
    demand = np.asarray(demand, dtype=float)
    per_interaction = np.ones_like(demand) if visits is None else np.asarray(visits, dtype=float)
    rate = np.asarray(rate, dtype=float) * per_interaction      # visits per unit time
    demand = demand / per_interaction                           # one visit's service
    level = np.asarray(level)
    second = demand * demand * (1.0 + scv)          # E[S^2] per class
    out = np.zeros(len(demand))
    if np.unique(level[rate > 0]).size > 1:
        for c in np.flatnonzero(rate > 0):
            above = level < level[c]
            upto = level <= level[c]
            s_high = float(rate[above] @ demand[above])
            s_upto = float(rate[upto] @ demand[upto])
            residual = float(rate[upto] @ second[upto]) / 2.0
            out[c] = demand[c] / (1.0 - s_high) + residual / ((1.0 - s_high) * (1.0 - s_upto))
        return out * per_interaction
    total = rate.sum()
    mean = float(rate @ demand) / total
    cs2 = float(rate @ second) / total / (mean * mean) - 1.0 if mean > 0 else 1.0
    offered = total * mean
    wait = erlang_c(servers, offered) * mean / (servers - offered) * (1.0 + cs2) / 2.0
    return np.where(rate > 0, (demand + wait) * per_interaction, 0.0)


def approximation_note(stations: list[str], method: str) -> str:
    """The ``Result.accuracy`` note of a network with non-product-form ``stations`` solved
    by ``method`` (``"exact"``: Reiser's residual-time term on the exact lattice;
    ``"open"``: open classes only, :func:`open_residence`)."""
    if method == "open":
        return f"approximate: {'; '.join(stations)} not product form, solved station by station in closed form " \
               "(Cobham; Pollaczek-Khinchine; Erlang C with Allen-Cunneen): exact for one queue with Poisson " \
               "arrivals and one server"
    if method == "exact":
        return f"approximate: {'; '.join(stations)} not product form, solved by residual-time MVA (Reiser 1979) " \
               "on the exact lattice (--method simulation measures the difference)"
    return f"approximate: {'; '.join(stations)} not product form, solved by non-product-form MVA " \
           f"(mva.nonproduct; {MEASURED_ACCURACY})"
