"""Non-product-form stations solved as one Markov chain against the flow-equivalent
server of the rest of the network (``method="decomposition"``).

A closed network whose stations are product form except a few single-server queues
(preemptive-resume priority, FCFS with class-dependent demands; exponential service) is
split in two:

* the **block**: the stations that are not product form, kept whole as a continuous-time
  Markov chain; its state is the number of customers of each class at each block station
  and, at each priority level shared by several classes, the class of the customer first
  in line there (the level's head, who is served, or resumes after a preemption);
* the **complement**: the other stations and the terminals, replaced by one flow-equivalent
  server whose class-c departure rate, when the complement holds the population vector m,
  is X_c(m), the throughput of the complement solved alone (shorted) with population m
  by exact MVA over the whole lattice (:func:`mva.exact._closed_lattice`).

This is Norton's theorem for queueing networks (K. M. Chandy, U. Herzog and L. Woo,
"Parametric analysis of queueing networks", IBM J. Res. Dev. 19(1):36-42, 1975; its
multi-class form is exact for product-form networks) used as the decomposition of
P. J. Courtois, *Decomposability: Queueing and Computer System Applications*, Academic
Press, 1977, and of the flow-equivalent methods surveyed by B. Baynat and Y. Dallery, "A
unified view of product-form approximation techniques for general closed queueing
networks", Performance Evaluation 18(3):205-224, 1993: the block is solved exactly, the
approximation is only in treating the complement's departures as depending on its
population alone.  Where the whole network is product form the answer is exact.

The chain then **grows**: it takes in product-form stations (queues before delays, the
largest demand first) one at a time while the block stays one run of every class's
route and the chain within :data:`GROWTH_STATES`; the more of the network the chain holds,
the less is left to the flow-equivalent server, and with only the terminals left
(m_c customers thinking leave at rate m_c / Z_c) it is exact.  The move of the class
throughputs when the last station was taken in estimates what the flow-equivalent server
still costs: above :data:`SPREAD_LIMIT` the result says ``unreliable:``.

**Partial chains.**  Where the chain of every non-product-form station would exceed the
limit, or they do not follow one another in some class's route, the chain holds the
busiest of them that fit (:func:`_partial`: by Bard-Schweitzer's utilisations, the
busiest first, then each next one that keeps the chain within the limit and one run of
every route) and grows from there as above; the others stay in the complement, whose
lattice MVA gives them the non-product-form residence times of :mod:`mva.nonproduct`
at the arrival instant m - e_c (:func:`_backlog_residence`: Reiser's FCFS term, Bryant
et al.'s priority term blended with Chandy & Lakshmi's).  What that costs is estimated by
solving the same chain with the stations left out as processor sharing instead; the move
of the class throughputs counts against :data:`SPREAD_LIMIT` like the growth's.  Chosen on
the tuning networks of seed 2036 where the whole chain did not fit (53 of 600; against
Linearizer, which ``auto`` ran there before: FCFS mean class-throughput error 2.3% to
1.5%, networks more than 5% off 17 to 7 of 46; priority worst 166% to 14%, 6 of 7 still
more than 5% off, all flagged); held out on seed 8036 (:data:`MEASURED_ACCURACY`).

Two further approximations, both exact in some cases:

* Within a level shared by several classes service is FCFS.  The chain keeps only the
  head's class; when the head leaves, the next head is drawn in proportion to the
  classes' numbers waiting at that level.  That is exact when the classes of the level
  have equal demands (the FCFS order is then uniform given the numbers, BCMP) and while
  at most two customers are at the level; otherwise it approximates the order.  What the
  order costs is estimated by solving the chain twice more, with the waiting class of the
  shortest demand always next and with the longest (:data:`ORDER_RULES`); their spread
  counts against :data:`ORDER_LIMIT`.
* Each class visits the stations in file order (as the simulation does,
  :mod:`mva.simulation`); the block's stations must follow one another in every class's
  route (a customer leaving one block station goes straight to the next or to the
  complement), otherwise the method refuses the network.  A class with no demand
  outside the block and no think time goes round the block.

Measures: a class's throughput is the rate at which it leaves its last block station
(for a class that never enters the block, the complement's rate averaged over pi, the
chain's stationary distribution); queue lengths at block stations from pi; at complement
stations the complement's own MVA queue lengths at population N - n, averaged over pi;
residence times by Little's law; utilisation at block queues the chain's busy
probability (a test checks it against the utilisation law).

Cost: the chain has up to prod_c C(N_c + B, B) count states (B block stations visited by
the class), each once per combination of head options of its shared levels
(:func:`chain_states` counts them exactly without listing them); :data:`STATE_LIMIT`
bounds it.  Networks where not even one non-product-form station's chain fits, with
non-exponential service, multi-server block stations, open classes, or stations outside
the block other than single-server queues and delays are refused with the reason
(``auto`` then uses the non-product-form MVA of :mod:`mva.nonproduct`).

Choices (the growth budget, the 2% limit, partial chains and their error estimate) were
made on the tuning networks of ``benchmarks/accuracy_nonproduct.py`` (seed 2036), the
second opinion's limit (:data:`OPINION_LIMIT`) on seed 7036; measured on held-out seed
8036 (300 of each kind; :data:`MEASURED_ACCURACY`, the tables in ``docs/guide.md``).
"""
from __future__ import annotations

import itertools
import math
import time
import warnings

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .errors import ModelError, NumericalWarning, check_positive_integer
from .exact import MAX_LATTICE_BYTES, MAX_LATTICE_POINTS
from .network import Network, require_network
from .plan import SolverPlan
from .result import Result

__all__ = ["decomposition", "decomposition_refusal", "chain_states", "STATE_LIMIT", "MEASURED_ACCURACY"]

#: What the method's numbers are worth, measured by ``benchmarks/accuracy_nonproduct.py``
#: against the simulation on held-out seeds 8036 and 10036 (rows in
#: ``data/studies/nonproduct-*.csv``; priority: the networks whose every class the
#: simulation pinned down); the flags as of the order check (:data:`ORDER_LIMIT`, chosen on
#: 8036, measured on 10036).
MEASURED_ACCURACY = ("on held-out random networks, class throughputs 0.56-0.73% from simulation on average with FCFS "
                     "stations (worst 7.2-9.1%), 0.52-0.53% with priority stations (worst 7.9-11%); on the last "
                     "seed every network more than 5% off was flagged (11 of 11), and 92 of the 554 within 5%")
#: Largest Markov chain the method builds, in states (:func:`chain_states`): 440,000
#: took 4 s here.
STATE_LIMIT = 500_000
#: Chains beyond this many count states are not counted exactly (nor built): their size
#: is reported as "more than" it, and ``max_states`` may not exceed it (about 1 GB).
COUNT_CAP = 4 * STATE_LIMIT
#: Largest chain the method grows to by taking in product-form stations (module notes):
#: such chains solve in about a second here.
GROWTH_STATES = 150_000
#: Chains up to this size are solved directly (sparse LU), larger ones iteratively (fill-in
#: made the direct solve of a 3,105-state chain take 63 ms, BiCGSTAB 6 ms).
DIRECT_LIMIT = 500
#: Largest residual max|pi Q| / max rate accepted as converged.
RESIDUAL_LIMIT = 1e-9
#: Largest move of a class throughput, when the chain takes in one station more, before
#: a result is flagged unreliable (chosen on tuning networks: module notes; there it
#: flagged the two results more than 5% off that could grow, and none within 5%).
SPREAD_LIMIT = 0.02
#: Largest difference between the class throughputs of a chain that cannot grow (so the
#: flow-equivalent server's error is not estimated) and Linearizer's non-product-form MVA
#: before the result is flagged.  Chosen on the networks of seed 7036 that decomposition
#: solved without growing (59 of the 511 the simulation pinned down): it flags 3 of the 4
#: among them more than 5% off, and 25 of the others (every such chain unflagged before).
OPINION_LIMIT = 0.03
#: How a shared level's next head is chosen when its head leaves: "random" (in proportion
#: to the numbers waiting, the method's answer; module notes), and the two extremes the
#: FCFS order lies between, the waiting class with the shortest demand first and the
#: longest first, whose spread estimates what the order costs.
ORDER_RULES = ("random", "shortest", "longest")
#: Largest spread of the class throughputs, relative, between the chain solved with the
#: shortest-first and the longest-first order within shared levels (:data:`ORDER_RULES`)
#: before the result is flagged.  The spread is wide (the two extremes are far from FCFS:
#: median 6% on tuning networks), so the limit is high: chosen on seed 8036, where every
#: value from 0.5 to 1.05 caught the same three unflagged misses of the FCFS order (2 left:
#: one unpinned by the simulation, one without shared levels) at 39 more flags among the
#: 575 networks within 5%; measured on held-out seed 10036.
ORDER_LIMIT = 1.0
#: Residual to which the chains that only estimate the order's cost are solved (the
#: method's own answer: :data:`RESIDUAL_LIMIT` / 1000).
ESTIMATE_RESIDUAL = 1e-8
#: Rounds of each iterative solver (BiCGSTAB: 200 iterations; GMRES: one restart of 100)
#: before the residual is reported as it is.
SOLVER_ROUNDS = 10


def _block(network: Network, plan: SolverPlan):
    """Block stations, or the reason the network cannot be decomposed."""
    if not plan.all_closed:
        return "it has open classes"
    block = [int(k) for k in np.flatnonzero(plan.backlog)]
    if not block:
        return "every station is product form (exact MVA solves it)"
    for k in block:
        s = network.stations[k]
        if s.kind != "queue" or plan.residual[k] != 0.0:
            return f"{s.name} is not a single-server queue with exponential service"
        if (plan.closed_visits[k][plan.closed_demand[k] > 0] != 1.0).any():
            # the chain routes one visit per interaction through each block station
            return f"{s.name} gives visits other than one per interaction (its chain serves one visit each)"
    for k, s in enumerate(network.stations):
        if k not in block and s.kind not in ("queue", "delay"):
            return f"{s.name} is a {s.kind} station (the complement takes single-server queues and delays)"
    return block


def _routes(network: Network, plan: SolverPlan, block: list[int]):
    """Per class: the position in ``block`` of the first block station it visits and of
    the last (-1: none), and the next block position after each (-1: back to the
    complement); or the reason the block is not one run of every class's route.  A class
    that never leaves the block (no demand outside it, no think time) goes round it: its
    last station's next is its first."""
    demand = plan.closed_demand
    B, C = len(block), demand.shape[1]
    first = np.full(C, -1, dtype=np.int64)
    last = np.full(C, -1, dtype=np.int64)
    nxt = np.full((B, C), -1, dtype=np.int64)
    outside = np.ones(demand.shape[0], dtype=bool)
    outside[block] = False
    for c in range(C):
        route = [k for k in range(demand.shape[0]) if demand[k, c] > 0]
        inside = [k for k in route if k in block]
        if not inside:
            continue
        loop = not (demand[outside, c] > 0).any() and plan.think[c] == 0
        # cyclic route: the terminals (think time) sit between the last station and the first
        cycle = route + (["think"] if plan.think[c] > 0 else [])
        marks = [k in block for k in cycle]
        starts = [i for i in range(len(cycle)) if marks[i] and not marks[i - 1]]
        if loop:
            starts = [0]
        elif len(starts) != 1:
            return (f"class {network.classes[c]} visits other stations between "
                    f"{' and '.join(network.stations[k].name for k in inside)}")
        run = [cycle[(starts[0] + j) % len(cycle)] for j in range(len(inside))]
        first[c], last[c] = block.index(run[0]), block.index(run[-1])
        for a, b in itertools.pairwise(run + ([run[0]] if loop else [])):
            nxt[block.index(a), c] = block.index(b)
    return first, last, nxt


def _shared_levels(plan: SolverPlan, block: list[int]):
    """(block position, classes) of every priority level shared by several visiting classes
    (an FCFS station with class-dependent demands is one level)."""
    shared = []
    for b, k in enumerate(block):
        if not plan.backlog[k]:
            continue
        visiting = np.flatnonzero(plan.closed_demand[k] > 0)
        for level in np.unique(plan.closed_level[k, visiting]):
            classes = visiting[plan.closed_level[k, visiting] == level]
            if len(classes) > 1:
                shared.append((b, classes))
    return shared


def _class_tuples(population: int, visits, looping: bool) -> np.ndarray:
    """A class's count tuples over the block (one column per block station): numbers
    summing to at most its population (exactly, for a class that never leaves), zero at
    the stations it does not visit; in lexicographic order, the last station fastest.
    Built station by station, so the work is the number of tuples (the grid of every
    number at every station is (N + 1)^B)."""
    grid = np.zeros((1, 0), dtype=np.int64)
    for visited in visits:
        room = population - grid.sum(axis=1) if visited else np.zeros(len(grid), dtype=np.int64)
        reps = room + 1
        values = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
        grid = np.column_stack([np.repeat(grid, reps, axis=0), values])
    return grid[grid.sum(axis=1) == population] if looping else grid


def _tuple_count(population: int, visited: int, looping: bool) -> int:
    """How many tuples :func:`_class_tuples` lists: compositions of the population over the
    ``visited`` stations (exactly the population for a looping class)."""
    if looping:
        return math.comb(population + visited - 1, visited - 1)
    return math.comb(population + visited, visited)


def _looping(last, nxt) -> np.ndarray:
    """Per class: True when it never leaves the block (its last station's next is its first)."""
    return (last >= 0) & (nxt[np.maximum(last, 0), np.arange(len(last))] >= 0)


def _states(network: Network, plan: SolverPlan, block: list[int], routes) -> int:
    """Exact number of states of the chain of ``block`` (``routes``: its :func:`_routes`):
    per count state, the product over shared levels of the head options (1 if the level is
    empty, else the number of its classes present), summed without listing the states: a
    pass over the classes carries how many partial count states give each vector of
    numbers of classes present per shared level.  Kept on the (immutable) network."""
    known = network._derived.setdefault("chain_states", {})
    if tuple(block) not in known:
        known[tuple(block)] = _count_states(plan, block, routes)
    return known[tuple(block)]


def _count_states(plan: SolverPlan, block: list[int], routes) -> int:
    """:func:`_states`, computed; beyond :data:`COUNT_CAP` count states (before the head
    options, which only multiply them) that number, a lower bound, without listing any."""
    visits = plan.closed_demand[block] > 0
    looping = _looping(*routes[1:])
    counts = math.prod(_tuple_count(int(n), int(visits[:, c].sum()), bool(looping[c]))
                       for c, n in enumerate(plan.population))
    if counts > COUNT_CAP:
        return counts
    shared = _shared_levels(plan, block)
    ways = {(0,) * len(shared): 1}
    for c, n in enumerate(plan.population):
        grid = _class_tuples(int(n), visits[:, c], bool(looping[c]))
        at = np.array([[c in classes for b, classes in shared]], dtype=bool)
        there = (grid[:, [b for b, _ in shared]] > 0) & at if shared else np.zeros((len(grid), 0), dtype=bool)
        steps, many = np.unique(there.astype(np.int64), axis=0, return_counts=True)
        grown: dict[tuple, int] = {}
        for key, count in ways.items():
            for step, times in zip(steps.tolist(), many.tolist(), strict=True):
                total = tuple(a + d for a, d in zip(key, step, strict=True))
                grown[total] = grown.get(total, 0) + count * times
        ways = grown
    return sum(count * math.prod(max(k, 1) for k in key) for key, count in ways.items())


def _grown(network: Network, plan: SolverPlan, block: list[int], max_states: int) -> list[list[int]]:
    """``block``, then blocks with one product-form station more each, as long as the
    chain stays within ``max_states`` and the block one run of every class's route.  The
    station taken in is the queue with the largest demand that keeps the run (delays
    last: they do not queue)."""
    blocks = [block]
    while True:
        candidates = [k for k in range(len(network.stations)) if k not in blocks[-1]]
        candidates.sort(key=lambda k: (network.stations[k].kind == "queue", plan.closed_demand[k].sum()),
                        reverse=True)
        for k in candidates:
            bigger = sorted([*blocks[-1], k])
            routes = _routes(network, plan, bigger)
            if not isinstance(routes, str) and _states(network, plan, bigger, routes) <= max_states:
                blocks.append(bigger)
                break
        else:
            return blocks


def _base(network: Network):
    """(plan, block, routes, states) of the chain of the non-product-form stations alone,
    or the reason the network cannot be decomposed."""
    plan = SolverPlan.of(network)
    block = _block(network, plan)
    if isinstance(block, str):
        return block
    routes = _routes(network, plan, block)
    if isinstance(routes, str):
        return routes
    return plan, block, routes, _states(network, plan, block, routes)


def _partial(network: Network, plan: SolverPlan, block: list[int], max_states: int):
    """The non-product-form stations the chain takes when all of them do not fit
    ``max_states`` (or do not follow one another in some route): the busiest first (by
    Bard-Schweitzer's utilisations with the non-product-form terms), then each next
    busiest that keeps the chain one run of every route and within ``max_states``; the
    others stay in the complement (:func:`_complement_lattice`).  None when not even the
    busiest fits alone.  Kept on the (immutable) network, as the state counts are."""
    known = network._derived.setdefault("partial_chain", {})
    if max_states in known:
        return known[max_states]
    from .approximate import schweitzer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        busy = schweitzer(network, tol=1e-6).utilization.sum(axis=1)
    chosen: list[int] = []
    for k in sorted(block, key=lambda k: -busy[k]):
        trial = sorted([*chosen, k])
        routes = _routes(network, plan, trial)
        if not isinstance(routes, str) and _states(network, plan, trial, routes) <= max_states:
            chosen = trial
    known[max_states] = chosen or None
    return known[max_states]


def _chain_block(network: Network, max_states: int, partial: bool, max_lattice: int = MAX_LATTICE_POINTS):
    """The block the chain starts from: every non-product-form station when their chain
    fits ``max_states``, else (``partial``) the busiest that fit (:func:`_partial`); or
    the reason there is none (outside the method, or a flow-equivalent server's lattice
    over ``max_lattice`` population vectors, checked first: it does not depend on the
    block)."""
    plan = SolverPlan.of(network)
    block = _block(network, plan)
    if isinstance(block, str):
        return block
    lattice = _lattice_refusal(plan, max_lattice)
    if lattice:
        return lattice
    base = _base(network)
    if not isinstance(base, str) and base[3] <= max_states:
        return base[1]
    if not partial:
        return _refused(base, max_states)
    chosen = _partial(network, plan, block, max_states)
    if chosen is None:
        alone = min(_states(network, plan, [k], _routes(network, plan, [k])) for k in block)
        return f"even the smallest chain, of one non-product-form station, would have {_size(alone)} states " \
               f"(limit {max_states:,})"
    return chosen


def chain_states(network: Network) -> int:
    """Number of states of the smallest chain :func:`decomposition` builds, the one of the
    non-product-form stations alone: what :data:`STATE_LIMIT` is compared with; 0 when
    the network cannot be decomposed."""
    base = _base(network)
    return 0 if isinstance(base, str) else base[3]


def decomposition_refusal(network: Network, max_states: int = STATE_LIMIT, partial: bool = True,
                          max_lattice: int = MAX_LATTICE_POINTS) -> str | None:
    """Why :func:`decomposition` would refuse ``network`` with chains of at most
    ``max_states`` states (``partial``: as :func:`decomposition` takes it) and a
    flow-equivalent server's lattice of at most ``max_lattice`` population vectors, or
    None when it solves it."""
    block = _chain_block(network, max_states, partial, max_lattice)
    return block if isinstance(block, str) else None


def _lattice_refusal(plan: SolverPlan, max_points: int) -> str | None:
    """Why the flow-equivalent server's population lattice (every m <= N, with a queue
    length per station and class) would not fit ``max_points`` vectors or the exact
    solver's memory limit (:data:`mva.exact.MAX_LATTICE_BYTES`)."""
    points = plan.lattice_points
    needed = 8.0 * points * (plan.closed_demand.size + len(plan.population))
    if points > max_points or needed > MAX_LATTICE_BYTES:
        return (f"the flow-equivalent server's population lattice would have {points:,} vectors "
                f"({needed / 2**30:.3g} GiB; limits {max_points:,} vectors, {MAX_LATTICE_BYTES / 2**30:.3g} GiB)")
    return None


def _size(states: int) -> str:
    """A chain's number of states in words (:data:`COUNT_CAP` and beyond are not counted)."""
    return f"more than {COUNT_CAP:,}" if states > COUNT_CAP else f"{states:,}"


def _refused(base, max_states: int) -> str | None:
    """Why the chain of every non-product-form station cannot be built within
    ``max_states`` (from :func:`_base`'s answer), or None."""
    if isinstance(base, str):
        return base
    if base[3] > max_states:
        return f"its Markov chain would have {_size(base[3])} states (limit {max_states:,})"
    return None


def _complement_lattice(network: Network, plan: SolverPlan, block: list[int], looping, terms: bool = True):
    """Throughput X_c(m) (L, C) and per-class queue lengths Q_kc(m) (L, K, C) of the
    complement (the stations outside ``block``, with the terminals) at every population
    vector m <= N (mixed radix, class 0 fastest), by the MVA recursion over the whole
    lattice, one total population at a time (Reiser & Lavenberg 1980): exact where the
    complement is product form.  Non-product-form stations left outside a partial chain
    take the non-product-form residence times of :func:`_backlog_residence` at the same
    arrival instant, Q(m - e_c).  Classes ``looping`` never leave the block (m_c is always
    0 for them)."""
    keep = [k for k in range(len(network.stations)) if k not in block]
    N = plan.population
    strides = np.cumprod(np.r_[1, N[:-1] + 1])
    points = np.stack(np.unravel_index(np.arange(int(np.prod(N + 1))), tuple(N + 1), order="F"), axis=1)
    think = np.where(looping, 1.0, plan.think)    # (a stand-in: their points are never used)
    demand = plan.closed_demand[keep]
    is_delay = np.array([network.stations[k].kind == "delay" for k in keep], dtype=bool)
    backlog = np.flatnonzero(plan.backlog[keep]) if terms else np.zeros(0, dtype=np.int64)
    level = plan.closed_level[keep]
    total = points.sum(axis=1)
    throughput = np.zeros((len(points), len(N)))
    queue = np.zeros((len(points), len(keep), len(N)))
    for t in range(1, int(total.max(initial=0)) + 1):
        at = np.flatnonzero(total == t)
        for c in range(len(N)):
            here = at[points[at, c] > 0]
            before = here - strides[c]
            # R_kc(m) = D_kc (1 + Q_k(m - e_c)) at a queue, D_kc at a delay
            residence = demand[None, :, c] * np.where(is_delay[None, :], 1.0, 1.0 + queue[before].sum(axis=2))
            for i in backlog:
                residence[:, i] = _backlog_residence(demand[i], level[i], c, queue[before, i], throughput[before],
                                                     points[before])
            x = points[here, c] / (think[c] + residence.sum(axis=1))
            throughput[here, c] = x
            queue[here, :, c] = x[:, None] * residence
    return throughput, queue, strides


def _backlog_residence(demand, level, c, found, throughput, population):
    """Class c's residence time at a single-server priority or FCFS station of the
    complement, at the lattice points whose arrival instants (m - e_c) have per-class
    queue lengths ``found`` (P, C), throughputs ``throughput`` (P, C) and populations
    ``population`` (P, C): the work of the customers found at c's level and above, each
    with its own class's demand, stretched by the preemption of the higher levels,
    [D_c + sum_{j: level <= c's} D_j Q_j(m - e_c)] / (1 - U_H), with U_H blended between
    Bryant et al.'s and Chandy & Lakshmi's forms by itself as in
    :func:`mva._approximate_kernels.nonproduct_residence` (the terms of
    :mod:`mva.nonproduct` without its corrections of the arrival estimate: the lattice
    takes the arrival theorem's Q(m - e_c) as it is).  Reiser's FCFS formula where there
    is one level.  Returns (P,) residence times, in the demands' time unit."""
    if demand[c] == 0.0:
        return np.zeros(len(found))
    upto = level <= level[c]
    above = level < level[c]
    work = demand[c] + found[:, upto] @ demand[upto]
    load = throughput[:, above] * demand[above]
    higher = load.sum(axis=1)
    present = np.divide(found[:, above], population[:, above], out=np.zeros_like(load),
                        where=population[:, above] > 0)
    higher_cl = (load * np.maximum(1.0 - present, 0.0)).sum(axis=1)
    free = np.maximum(1.0 - higher, 1e-6)
    free_cl = np.maximum(1.0 - higher_cl, 1e-6)
    return work / free_cl + higher * (work / free - work / free_cl)


def decomposition(network: Network, max_states: int = STATE_LIMIT, partial: bool = True) -> Result:
    """Solve a closed network whose non-product-form stations (priority, FCFS with
    class-dependent demands) form one Markov chain against the flow-equivalent server of
    the rest (module notes).

    Parameters
    ----------
    network : Network
        Closed classes; the stations that are not product form are single-server queues
        with exponential service that follow one another in every class's route; the
        others single-server queues and delays.
    max_states : int, default :data:`STATE_LIMIT`
        Largest chain to build (states, :func:`chain_states`); memory grows by about
        500 bytes a state, time by some 10 microseconds.
    partial : bool, default True
        Where the chain of every non-product-form station exceeds ``max_states`` (or
        they do not follow one another in every route), build the chain of the busiest
        that fit and solve the others in the flow-equivalent server (module notes);
        False refuses such a network.

    Returns
    -------
    Result
        ``method="decomposition"``; ``extras["states"]`` the chain's size.

    Raises
    ------
    ModelError
        The network is outside the method (the message says why; see
        :func:`decomposition_refusal`).
    """
    require_network(network)
    start = time.perf_counter()
    check_positive_integer("options.max_states", max_states)
    if max_states > COUNT_CAP:
        raise ModelError("options.max_states", f"must be at most {COUNT_CAP:,} (about 500 bytes a state), got "
                                               f"{max_states:,}")
    if not isinstance(partial, (bool, np.bool_)):
        raise ModelError("options.partial", f"must be True or False, got {partial!r}")
    block = _chain_block(network, max_states, partial)
    if isinstance(block, str):
        raise ModelError("method", f"decomposition cannot solve this network: {block}")
    plan = SolverPlan.of(network)
    blocks = _grown(network, plan, block, min(max_states, GROWTH_STATES))
    left_out = [network.stations[k].name for k in np.flatnonzero(plan.backlog) if k not in blocks[-1]]
    # with stations left out, the same chain once more with them as processor sharing; where
    # a shared level's classes have unequal demands, once more with each extreme order
    variants = [(True, 0)] + [(False, 0)] * bool(left_out)
    ordered = _order_matters(plan, blocks[-1])
    if ordered:
        variants += [(True, 1), (True, 2)]
    answers = _solve_block(network, plan, blocks[-1], variants)
    answer = answers[0]
    order_span = 0.0
    if ordered:
        shortest, longest = answers[-2]["throughput"], answers[-1]["throughput"]
        order_span = float(np.max(np.abs(shortest - longest) / np.maximum(answer["throughput"], np.finfo(float).tiny)))
        answers = answers[:-2]
    pi, residual = answer["pi"], answer["residual"]
    names = [network.stations[k].name for k in blocks[-1]]
    accuracy = (f"approximate: {'; '.join(plan.non_product)} not product form, solved by decomposition "
                f"({MEASURED_ACCURACY}; mva.decomposition: {', '.join(names)} as one Markov chain")
    note, spread, opinion = _error_estimates(network, plan, blocks, [a["throughput"] for a in answers], left_out)
    accuracy += note
    order_moves = ("serving the waiting class with the shortest demand first instead of the longest moves the "
                   "class throughputs by")
    if ordered:
        accuracy += f"; at levels shared by classes of unequal demands, {order_moves} {100 * order_span:.2g}%"
    message = ""
    if not residual <= RESIDUAL_LIMIT:   # NaN too
        message = (f"the Markov chain's stationary equations were solved only to a residual of {residual:.2g} "
                   f"(limit {RESIDUAL_LIMIT:g})")
        accuracy = f"unreliable: {message}; {accuracy}"
        warnings.warn(f"decomposition: {message}", NumericalWarning, stacklevel=2)
    else:
        doubt = None
        if opinion > OPINION_LIMIT:
            doubt = (f"no station more fits the Markov chain to estimate the flow-equivalent server's error, and the "
                     f"non-product-form MVA (Linearizer) differs by {100 * opinion:.3g}% (limit "
                     f"{100 * OPINION_LIMIT:g}%)")
        elif order_span > ORDER_LIMIT:
            doubt = (f"the order of service within a level shared by classes of unequal demands matters here: "
                     f"{order_moves} {100 * order_span:.3g}% (limit {100 * ORDER_LIMIT:g}%), and the chain keeps only "
                     f"the head of the line")
        elif spread > SPREAD_LIMIT:
            doubt = (f"another treatment of part of the network (one station more in the Markov chain, or the "
                     f"stations left out of it as processor sharing) moved the class throughputs by "
                     f"{100 * spread:.3g}% (limit {100 * SPREAD_LIMIT:g}%)")
        if doubt:
            accuracy = f"unreliable: {doubt}: simulate it (--method simulation); {accuracy}"
            warnings.warn(f"decomposition: unreliable: {doubt}: simulate it (--method simulation)", NumericalWarning,
                          stacklevel=2)
    return Result(method="decomposition", classes=network.classes, stations=network.station_names,
                  throughput=answer["throughput"], response_time=answer["residence"].sum(axis=0),
                  residence_time=answer["residence"], queue_length=answer["queue"],
                  utilization=answer["utilization"], solve_seconds=time.perf_counter() - start,
                  converged=residual <= RESIDUAL_LIMIT, message=message, accuracy=accuracy,
                  extras={"states": len(pi), "residual": residual, "chain": names, "left_out": left_out,
                          "spread": spread, "opinion": opinion, "order_span": order_span})


def _order_matters(plan: SolverPlan, block: list[int]) -> bool:
    """Whether some level shared by several classes in ``block`` serves them with unequal
    demands (elsewhere every rule of :data:`ORDER_RULES` gives the same chain)."""
    return any(np.ptp(plan.closed_demand[block[b], classes]) > 0 for b, classes in _shared_levels(plan, block))


def _error_estimates(network: Network, plan: SolverPlan, blocks: list[list[int]], throughputs,
                     left_out: list[str]) -> tuple[str, float, float]:
    """What the approximations outside the chain cost, as the end of the accuracy note,
    the spread (the move of the class throughputs, relative, when the chain takes in the
    last station it took in, or when the stations ``left_out`` of it are solved as
    processor sharing instead; against :data:`SPREAD_LIMIT`) and the second opinion
    (Linearizer's move, where neither applies; against :data:`OPINION_LIMIT`).
    ``throughputs``: the class throughputs of the chain ``blocks[-1]``, then (with
    stations left out) of the same chain with them as processor sharing."""
    throughput = throughputs[0]

    def moved(other):
        return float(np.max(np.abs(other / throughput - 1)))

    block = blocks[-1]
    spread = opinion = 0.0
    if len(block) == len(network.stations):
        return " against the terminals: exact but for the FCFS order within shared levels)", spread, opinion
    note = " against the flow-equivalent server of the rest; "
    if len(blocks) > 1:
        spread = moved(_solve_block(network, plan, blocks[-2])[0]["throughput"])
        taken = network.stations[sorted(set(block) - set(blocks[-2]))[0]].name
        note += f"taking in {taken} moved the class throughputs by {100 * spread:.2g}%)"
    elif left_out:
        note += "no station more fits the chain)"
    else:
        from .approximate import linearizer

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumericalWarning)
            opinion = moved(linearizer(network).throughput)
        note += (f"no station more fits the chain; the non-product-form MVA (Linearizer) differs by "
                 f"{100 * opinion:.2g}%)")
    if left_out:
        gap = moved(throughputs[1])
        note += (f"; {', '.join(left_out)} left to the flow-equivalent server with non-product-form MVA terms, the "
                 f"whole chain being too large: solving them as processor sharing instead moves the class "
                 f"throughputs by {100 * gap:.2g}%")
        spread = max(spread, gap)
    return note, spread, opinion


def _solve_block(network: Network, plan: SolverPlan, block: list[int], variants=((True, 0),)) -> list[dict]:
    """The measures of the network with ``block`` as the chain (module notes), one dict
    per entry (terms, rule) of ``variants``: whether the complement's non-product-form
    stations take their terms (:func:`_complement_lattice`), and the index in
    :data:`ORDER_RULES` of the next head's choice at shared levels.  The chain's states
    and transitions are built once, only rates differ; a solve starts from the previous
    one's answer, an extreme order's (an estimate, to :data:`ESTIMATE_RESIDUAL`) from the
    first's."""
    first, last, nxt = _routes(network, plan, block)
    looping = _looping(last, nxt)
    answers, chain, pi, lattices = [], None, None, {}
    M, C = plan.closed_demand.shape
    keep = [k for k in range(M) if k not in block]
    for with_terms, rule in variants:
        if with_terms not in lattices:
            lattices[with_terms] = _complement_lattice(network, plan, block, looping, with_terms)
        x_comp, q_comp, lattice_strides = lattices[with_terms]
        if chain is None:
            rules = max(r for _, r in variants) + 1
            chain = _Chain(network, plan, block, first, last, nxt, lattice_strides, rules)
        # the order's extremes only estimate an error against a 100% limit: solved from the
        # method's own answer, to a residual that keeps a few digits
        estimate = rule != 0 and bool(answers)
        pi, residual = chain.stationary(x_comp, start=answers[0]["pi"] if estimate else pi, rule=rule,
                                        target=ESTIMATE_RESIDUAL if estimate else RESIDUAL_LIMIT * 1e-3)
        outside = plan.population[None, :] - chain.n.sum(axis=1)     # (S, C) customers in the complement
        point = outside @ lattice_strides
        # a class that visits the block completes an interaction as it leaves its last
        # block station; the others at the complement's rate
        throughput = np.where(first >= 0, pi @ chain.exit_rate, pi @ x_comp[point])
        queue = np.zeros((M, C))
        queue[block] = np.einsum("s,sbc->bc", pi, chain.n)
        queue[keep] = np.einsum("s,skc->kc", pi, q_comp[point])
        residence = np.divide(queue, throughput[None, :], out=np.zeros_like(queue), where=throughput[None, :] > 0)
        # block queues: the chain's busy probability (the utilisation law X_c D_kc holds
        # when the chain is right: a test checks it); elsewhere the utilisation law
        utilization = plan.closed_demand * throughput[None, :]
        queues = [b for b, k in enumerate(block) if network.stations[k].kind == "queue"]
        utilization[np.asarray(block)[queues]] = np.einsum("s,sbc->bc", pi, chain.serving[:, queues])
        answers.append({"pi": pi, "residual": residual, "throughput": throughput, "queue": queue,
                        "residence": residence, "utilization": utilization})
    return answers


class _Chain:
    """The block's continuous-time Markov chain (module notes): states, generator,
    stationary distribution.

    A state is, per class, the tuple of its numbers at the block stations (``which``:
    its index among the class's tuples) and, per shared level, the head option (0: the
    level is empty; i: the level's i-th class).  ``n`` (S, B, C) holds the numbers."""

    def __init__(self, network, plan, block, first, last, nxt, lattice_strides, rules: int = 1):
        self.demand = plan.closed_demand[block]                    # (B, C)
        self.rules = rules     # the first ``rules`` of ORDER_RULES, one rate column each
        self.nxt, self.last = nxt, last
        self.shared = _shared_levels(plan, block)
        self._enumerate(plan.population, last, nxt)
        S, B, C = self.n.shape
        self.rows, self.cols, self.rates = [], [], []
        # the share of a server (a customer at a delay) each class has, for the utilisation
        self.serving = np.zeros(self.n.shape)
        self.exit_rate = np.zeros((S, C))   # rate at which each state completes class-c interactions
        outside = plan.population[None, :] - self.n.sum(axis=1)
        point = outside @ lattice_strides
        # arrivals from the complement at each class's first block station, at the rate
        # X_c(m) of the complement's population m (its lattice index, ``arrival_point``)
        arrival_point, arrival_class = [], []
        for c in range(C):
            if first[c] < 0 or nxt[last[c], c] >= 0:
                continue
            keep = outside[:, c] > 0
            which, heads, n = self.which[keep].copy(), self.heads[keep].copy(), self.n[keep].copy()
            self._join(which, heads, n, first[c], c)
            self._add(np.flatnonzero(keep), which, heads, 0.0)
            arrival_point.append(point[keep])     # (added first: the first entries of rows, cols)
            arrival_class.append(np.full(int(keep.sum()), c))
        self.arrival_point = np.concatenate(arrival_point) if arrival_point else np.zeros(0, dtype=np.int64)
        self.arrival_class = np.concatenate(arrival_class) if arrival_class else np.zeros(0, dtype=np.int64)
        # service completions: a product-form station shares its server (PS, or FCFS with
        # one demand, whose numbers behave alike, BCMP) or serves everyone (delay); at a
        # priority or FCFS station the top level present is served, its head if shared
        for b, k in enumerate(block):
            if plan.backlog[k]:
                self._level_services(b, plan.closed_level[k])
            else:
                self._shared_services(b, network.stations[k].kind == "delay")
        self.rows, self.cols = np.concatenate(self.rows), np.concatenate(self.cols)
        self.rates = np.concatenate(self.rates)     # (transitions, rules)
        if (self.cols < 0).any():   # pragma: no cover - a state outside the enumeration is a bug
            raise AssertionError("decomposition: a transition leaves the state space")

    def generator(self, x_comp, rule: int = 0):
        """The generator's off-diagonal rates (S, S) with the complement's throughputs
        ``x_comp`` (lattice points x classes) as the arrival rates; ``rule``: the index in
        :data:`ORDER_RULES` of the next head's choice at shared levels."""
        rates = self.rates[:, rule].copy()
        rates[:len(self.arrival_point)] = x_comp[self.arrival_point, self.arrival_class]
        S = len(self.n)
        return sp.csr_matrix((rates, (self.rows, self.cols)), shape=(S, S))

    def _enumerate(self, N, last, nxt):
        """Every state: ``n``, ``which``, ``heads``, and their codes (sorted) for lookups.

        Count states first (per class, its tuples); then each is repeated once per
        combination of head options, a shared level's option being 0 when it is empty and
        else one of its classes present."""
        B, C = self.demand.shape
        looping = _looping(last, nxt)
        tuples = [_class_tuples(int(N[c]), self.demand[:, c] > 0, bool(looping[c])) for c in range(C)]
        self.lookup = []
        for c, grid in enumerate(tuples):
            table = np.full((N[c] + 1,) * B, -1, dtype=np.int64)
            table[tuple(grid.T)] = np.arange(len(grid))
            self.lookup.append(table)
        sizes = np.array([len(t) for t in tuples])
        self.count_strides = np.cumprod(np.r_[1, sizes])[:-1]
        head_sizes = np.array([len(classes) + 1 for _, classes in self.shared], dtype=np.int64)
        self.head_strides = np.cumprod(np.r_[1, head_sizes])[:-1].astype(np.int64)
        self.H = int(head_sizes.prod())
        count_code = np.arange(int(sizes.prod()), dtype=np.int64)
        which = np.stack([(count_code // self.count_strides[c]) % sizes[c] for c in range(C)], axis=1)
        n = np.stack([tuples[c][which[:, c]] for c in range(C)], axis=2)      # (count states, B, C)
        present = [n[:, b, classes] > 0 for b, classes in self.shared]
        options = np.ones(len(n), dtype=np.int64)
        for here in present:
            options *= np.maximum(here.sum(axis=1), 1)
        rep = np.repeat(np.arange(len(n)), options)
        digits = np.arange(len(rep)) - np.repeat(np.cumsum(options) - options, options)
        heads = np.zeros((len(rep), len(self.shared)), dtype=np.int64)
        for j, here in enumerate(present):
            here = here[rep]
            k = here.sum(axis=1)
            digit = digits % np.maximum(k, 1)
            digits = digits // np.maximum(k, 1)
            # the digit-th class present at the level (1-based in the level's classes), 0 if none
            rank = np.cumsum(here, axis=1) - 1
            heads[:, j] = np.where(k > 0, np.argmax(here & (rank == digit[:, None]), axis=1) + 1, 0)
        self.n, self.which, self.heads = n[rep], which[rep], heads
        codes = self._code(self.which, self.heads)
        self.order = np.argsort(codes, kind="stable")
        self.sorted_codes = codes[self.order]

    def _code(self, which, heads):
        """A state's number in the full product of count tuples and head options."""
        return (which @ self.count_strides) * self.H + heads @ self.head_strides

    def _add(self, rows, which, heads, rates):
        """Transitions from states ``rows`` to the states (``which``, ``heads``) at ``rates``."""
        self.rows.append(rows)
        codes = self._code(which, heads)
        at = np.minimum(np.searchsorted(self.sorted_codes, codes), len(self.sorted_codes) - 1)
        self.cols.append(np.where(self.sorted_codes[at] == codes, self.order[at], -1))
        rates = np.asarray(rates, dtype=float)
        self.rates.append(np.broadcast_to(rates if rates.ndim == 2 else rates.reshape(-1, 1),
                                          (len(rows), self.rules)))

    def _join(self, which, heads, n, b, c):
        """Class c joins block station b (in place): its count tuple moves, and it becomes
        the head of its level there if the level was empty."""
        for j, (jb, classes) in enumerate(self.shared):
            if jb == b and c in classes:
                heads[heads[:, j] == 0, j] = int(np.flatnonzero(classes == c)[0]) + 1
        n[:, b, c] += 1
        which[:, c] = self.lookup[c][tuple(n[:, :, c].T)]

    def _leave(self, idx, b, c):
        """States ``idx`` after a class-c customer finishes at block station b: one fewer
        there, and one more at its next block station if it has one."""
        which, heads, n = self.which[idx].copy(), self.heads[idx].copy(), self.n[idx].copy()
        n[:, b, c] -= 1
        which[:, c] = self.lookup[c][tuple(n[:, :, c].T)]
        if self.nxt[b, c] >= 0:
            self._join(which, heads, n, self.nxt[b, c], c)
        return which, heads, n

    def _shared_services(self, b, is_delay):
        """Completions at a product-form station: class c at rate (its share) / D_c."""
        here = self.n[:, b, :]
        share = here if is_delay else here / np.maximum(here.sum(axis=1), 1)[:, None]
        self.serving[:, b, :] = share
        for c in np.flatnonzero(self.demand[b] > 0):
            idx = np.flatnonzero(here[:, c] > 0)
            rate = share[idx, c] / self.demand[b, c]
            self._add(idx, *self._leave(idx, b, c)[:2], rate)
            if b == self.last[c]:
                self.exit_rate[idx, c] = rate

    def _level_services(self, b, level):
        """Completions at a priority or FCFS station: the top level present is served (its
        head if several classes share it), at rate 1 / D_c; a shared level's next head is
        drawn in proportion to the classes waiting there."""
        present = self.n[:, b, :] > 0
        top = np.where(present, level[None, :], np.iinfo(np.int64).max).min(axis=1)
        for c in np.flatnonzero(self.demand[b] > 0):
            serving = present[:, c] & (top == level[c])
            shared = [(j, classes) for j, (jb, classes) in enumerate(self.shared) if jb == b and c in classes]
            if shared:
                j, classes = shared[0]
                serving &= self.heads[:, j] == int(np.flatnonzero(classes == c)[0]) + 1
            self.serving[:, b, c] = serving
            idx = np.flatnonzero(serving)
            if not len(idx):
                continue
            which, heads, n = self._leave(idx, b, c)
            rate = 1.0 / self.demand[b, c]
            if b == self.last[c]:
                self.exit_rate[idx, c] = rate
            if not shared:
                self._add(idx, which, heads, rate)
                continue
            waiting = n[:, b, classes]
            shares = _next_head_shares(waiting, self.demand[b, classes], self.rules)
            for option in range(len(classes) + 1):    # 0: the level is left empty
                keep = shares[:, option, :].any(axis=1)
                if keep.any():
                    h = heads[keep].copy()
                    h[:, j] = option
                    self._add(idx[keep], which[keep], h, rate * shares[keep, option, :])

    def stationary(self, x_comp, start=None, rule: int = 0,
                   target: float = RESIDUAL_LIMIT * 1e-3) -> tuple[np.ndarray, float]:
        """pi with pi Q = 0 and sum(pi) = 1 for the complement's throughputs ``x_comp``
        (and ``rule``, as :meth:`generator` takes it), and the residual max|pi Q| / max
        rate; ``start``, a stationary distribution of the same chain with other rates,
        starts the iterative solvers.

        The probability of the state left most slowly is fixed to 1 and the other balance
        equations solved (the generator without its row and column is nonsingular for an
        irreducible chain): directly for
        small chains, else iteratively (a direct solve of 14,000-35,000 states took 10-100 s
        from fill-in), until the residual is below ``target`` (RESIDUAL_LIMIT / 1000 unless told) or
        :data:`SOLVER_ROUNDS` have run."""
        generator = self.generator(x_comp, rule)
        out = np.asarray(generator.sum(axis=1)).ravel()
        S = generator.shape[0]
        if S == 1:
            return np.ones(1), 0.0
        # The state whose probability is fixed (and whose balance equation is dropped):
        # the one left most slowly, a likely one.  State 0 (everyone outside the chain)
        # can be very rare: with a think time of 0.0014 s beside others near 1 s it was
        # about 1e-20, the others' solution came out that many times larger, and neither
        # the direct nor the iterative solvers kept any digit (residual 1).
        ref = int(np.argmin(out))
        order = np.r_[ref, np.delete(np.arange(S), ref)]
        q = (generator - sp.diags(out)).T.tocsr()[order][:, order]
        out = out[order]
        start = None if start is None else start[order]
        back = np.argsort(order)
        inner = q[1:, 1:].tocsc()
        rhs = -q[1:, 0].toarray().ravel()
        if S <= DIRECT_LIMIT:
            pi, residual = _normalised(spla.spsolve(inner, rhs), q, out)
            return pi[back], residual
        # The iterative solvers' own stopping tests are relative to the right-hand side,
        # which a chain whose state 0 is rare makes tiny; the test that matters is the
        # balance residual.  BiCGSTAB with a diagonal preconditioner first (0.04-3 s on
        # 30,000-440,000 states where ILU-preconditioned GMRES took 0.1-5 s, Jacobi GMRES
        # stalled); ILU and GMRES where it does not settle.
        diagonal = inner.diagonal()
        jacobi = spla.LinearOperator(inner.shape, lambda v: v / diagonal)
        rest = start[1:] / start[0] if start is not None and start[0] > 0 else None
        for _ in range(SOLVER_ROUNDS):
            rest, _ = spla.bicgstab(inner, rhs, x0=rest, M=jacobi, rtol=target / 100, maxiter=200)
            pi, residual = _normalised(rest, q, out)
            if residual <= target:
                return pi[back], residual
        ilu = spla.spilu(inner, drop_tol=1e-2, fill_factor=2, permc_spec="NATURAL")
        preconditioner = spla.LinearOperator(inner.shape, ilu.solve)
        rest = None if not np.all(np.isfinite(rest)) else rest
        for _ in range(SOLVER_ROUNDS):
            rest, _ = spla.gmres(inner, rhs, x0=rest, M=preconditioner, rtol=1e-12, restart=100, maxiter=1)
            pi, residual = _normalised(rest, q, out)
            if residual <= target:
                break
        return pi[back], residual


def _next_head_shares(waiting, demand, rules: int = len(ORDER_RULES)) -> np.ndarray:
    """The chance that each option becomes a shared level's next head when its head
    leaves (P, 1 + classes, rules): option 0 when nobody waits, else the i-th class of
    the level, by each of the first ``rules`` of :data:`ORDER_RULES`; ``waiting``
    (P, classes) the numbers waiting there, ``demand`` (classes,) their demands at the
    station."""
    P, L = waiting.shape
    shares = np.zeros((P, L + 1, rules))
    left = waiting.sum(axis=1)
    shares[left == 0, 0, :] = 1.0
    present = waiting > 0
    for r, rule in enumerate(ORDER_RULES[:rules]):
        if rule == "random":
            weight = waiting.astype(float)
        else:
            # every waiting customer of the classes with the shortest (longest) demand present
            key = np.where(present, demand[None, :] if rule == "shortest" else -demand[None, :], np.inf)
            weight = np.where(key == key.min(axis=1, keepdims=True), waiting, 0).astype(float)
        shares[:, 1:, r] = np.divide(weight, weight.sum(axis=1, keepdims=True), out=np.zeros_like(weight),
                                     where=left[:, None] > 0)
    return shares


def _normalised(rest, q, out):
    """pi from the solution with pi_0 = 1 (the reference state first), and its balance
    residual max|pi Q| / max rate."""
    pi = np.maximum(np.r_[1.0, rest], 0.0)
    pi /= pi.sum()
    return pi, float(np.abs(q @ pi).max() / max(out.max(), np.finfo(float).tiny))
