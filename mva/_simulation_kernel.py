"""The compiled event loop of :mod:`mva.simulation` (private).

Where service and think times are exponential the network is a continuous-time Markov
chain and the loop draws it directly (Gillespie 1977): the time to the next event is
exponential with the total rate of all stations, the station is drawn in proportion to
its departure rate, and the departing customer in proportion to its own rate.  That is
exact for processor sharing, FCFS, priority and infinite-server stations with exponential
service, needs no event list, and costs O(stations) per event.  Stations with
non-exponential service (``scv`` other than 1) instead schedule their next completion
from each customer's remaining work; the loop takes whichever comes first.

Measures are accumulated per batch into ``acc``, so that :mod:`mva.simulation` can form
batch means: visits, their sojourn times and completed interactions, and for ``ld``
stations a busy-time integral (kept lazily, when the station changes).  Queue lengths and
the other utilisations follow from those counts by Little's law and the utilisation law,
which saves the time integrals that cost 40% of the loop.
"""
from __future__ import annotations

import numpy as np

from .jit import jit
from .variates import service_time

#: Station types and disciplines as the kernel numbers them (:mod:`mva.simulation` maps names).
KIND_CODES = {"queue": 0, "delay": 1, "multi": 2, "ld": 3}
DISCIPLINE_CODES = {"ps": 0, "fcfs": 1, "priority": 2}
KIND_MULTI, KIND_LD, KIND_DELAY = KIND_CODES["multi"], KIND_CODES["ld"], KIND_CODES["delay"]
FCFS, PRIORITY = DISCIPLINE_CODES["fcfs"], DISCIPLINE_CODES["priority"]
OUTSIDE = -1            # thinking (closed) or not in the system (open, free slot)


@jit(inline=True)
def _top_level(k, n_kc, rank):
    """The priority level a priority station serves: the lowest ``priority`` value among
    the classes present (equal values are one level; any integers, negative too).  Called
    only at a station with customers."""
    found = False
    top = 0
    for c in range(n_kc.shape[1]):
        if n_kc[k, c] > 0 and (not found or rank[k, c] < top):
            top = rank[k, c]
            found = True
    return top


@jit(inline=True)
def _ps_share(k, n, kind, servers, capacity):
    """Under processor sharing, the rate at which each of the ``n`` customers at station
    ``k`` is served, relative to one alone: 1 at a delay, min(n, m)/n of m servers,
    alpha(n)/n at an ``ld`` station, 1/n at a queue."""
    if kind[k] == KIND_DELAY:
        return 1.0
    if kind[k] == KIND_MULTI:
        return min(n, servers[k]) / n
    if kind[k] == KIND_LD:
        return capacity[k, min(n, capacity.shape[1]) - 1] / n
    return 1.0 / n


@jit(inline=True)
def _station_rate(k, kind, disc, servers, capacity, mu, n_kc, n_k, fifo_cls, head, rank):
    """Total departure rate of exponential station ``k`` in the current state."""
    n = n_k[k]
    if n == 0:
        return 0.0
    size = fifo_cls.shape[1]
    if disc[k] == PRIORITY:
        first = _first_served(k, n, disc, n_kc, rank, fifo_cls, head, size)
        return mu[k, fifo_cls[k, (head[k] + first) % size]]
    if disc[k] == FCFS:
        rate = 0.0
        for i in range(min(n, servers[k])):
            rate += mu[k, fifo_cls[k, (head[k] + i) % size]]
        return rate
    total = 0.0
    for c in range(mu.shape[1]):
        total += n_kc[k, c] * mu[k, c]
    return total * _ps_share(k, n, kind, servers, capacity)


@jit(inline=True)
def _first_served(k, n, disc, n_kc, rank, fifo_cls, head, size):
    """At a priority station, the fifo position of the customer in service: the earliest
    arrival of the top level (FCFS within a level, whatever its class; preempted customers
    keep their place, so this is also preemptive-resume's choice); -1 elsewhere."""
    if disc[k] != PRIORITY:
        return -1
    top = _top_level(k, n_kc, rank)
    for i in range(n):
        if rank[k, fifo_cls[k, (head[k] + i) % size]] == top:
            return i
    return -1


@jit(inline=True)
def _work_rate(k, i, n, first, kind, disc, servers, capacity):
    """The rate at which the customer at fifo position ``i`` of ``n`` works off its
    service: PS shares the station's capacity equally, FCFS serves the first ``servers``
    at rate 1, priority the customer ``first``."""
    if disc[k] == PRIORITY:
        return 1.0 if i == first else 0.0
    if disc[k] == FCFS:
        return 1.0 if i < servers[k] else 0.0
    return _ps_share(k, n, kind, servers, capacity)


@jit(inline=True)
def _advance(k, t, n_k, n_kc, kind, disc, servers, capacity, rank, fifo_id, fifo_cls, head, size, cust_work,
             work_clock):
    """Work off the service of station ``k``'s customers from ``work_clock[k]`` to ``t``
    (before the station's state changes)."""
    dt = t - work_clock[k]
    work_clock[k] = t
    n = n_k[k]
    if n == 0 or dt <= 0.0:
        return
    first = _first_served(k, n, disc, n_kc, rank, fifo_cls, head, size)
    limit = min(n, servers[k]) if disc[k] == FCFS else n   # FCFS: only the heads are served
    for i in range(limit):
        rate = _work_rate(k, i, n, first, kind, disc, servers, capacity)
        if rate > 0.0:
            cust_work[fifo_id[k, (head[k] + i) % size]] -= rate * dt


@jit(inline=True)
def _integrate_busy(k, t, n_kc, n_k, last_change, acc_busy):
    """Add the time since load-dependent station ``k`` last changed to each class's share
    of its busy time (n_kc / n while n > 0).  Only ``ld`` stations need it: elsewhere the
    utilisation law gives the utilisation from the visits (see :mod:`mva.simulation`)."""
    dt = t - last_change[k]
    last_change[k] = t
    n = n_k[k]
    if n == 0:
        return
    for c in range(n_kc.shape[1]):
        acc_busy[k, c] += n_kc[k, c] * dt / n


@jit(inline=True)
def _reschedule(k, t, n_k, n_kc, kind, disc, servers, capacity, rank, fifo_id, fifo_cls, head, size, cust_work,
                next_done, done_pos):
    """Schedule station ``k``'s next completion in its current state (after a change)."""
    n = n_k[k]
    next_done[k] = np.inf
    if n == 0:
        return
    first = _first_served(k, n, disc, n_kc, rank, fifo_cls, head, size)
    limit = min(n, servers[k]) if disc[k] == FCFS else n   # FCFS: only the heads are served
    best = np.inf
    for i in range(limit):
        rate = _work_rate(k, i, n, first, kind, disc, servers, capacity)
        if rate > 0.0:
            left = max(cust_work[fifo_id[k, (head[k] + i) % size]], 0.0) / rate
            if left < best:
                best = left
                done_pos[k] = i
    next_done[k] = t + best


@jit
def run(n_events, kind, disc, servers, capacity, mu, route, route_len, think_rate, arrival_rate,
        clock, cust_class, cust_pos, cust_arrive, cust_start, cust_slot, free, n_free,
        n_kc, n_k, bag, fifo_id, fifo_cls, head, last_change, station_rate, acc_busy, acc_visits, acc_sojourn,
        acc_done, acc_response, thinking, think_bag, rank, entering, n_entering, general, ordered, scv, cust_work,
        next_done, done_pos, work_clock, visit_whole, visit_part, cust_left):
    """Advance the simulation by ``n_events`` events, adding to the accumulators.

    ``clock`` (1,) is the current time.  Customers: ``cust_class``, ``cust_pos`` (index in
    the class's route, ``OUTSIDE`` when thinking or free), ``cust_arrive`` (arrival at the
    current station), ``cust_start`` (start of the current interaction), ``cust_slot``
    (position in ``bag[k, c]``).  ``free``/``n_free`` hold unused customer slots for open
    arrivals.  Stations: ``n_kc``, ``n_k``, ``bag`` (ids per station and class),
    ``fifo_id``/``fifo_cls``/``head`` (arrival order, kept where ``ordered[k]``: FCFS, priority
    and non-exponential stations), ``last_change`` and the cached ``station_rate``.
    ``thinking`` (C,) counts closed customers at the terminals, ``think_bag`` (C, P) holds
    their ids; ``entering``/``n_entering`` hold closed customers without think time still
    to be placed at their first station (the initial state).  Accumulators:
    ``acc_busy`` (M, C) each class's share of the busy time of ``ld`` stations (from
    ``last_change``); ``acc_visits``/``acc_sojourn`` (M, C) visits completed and their
    total time; ``acc_done``/``acc_response`` (C,) interactions completed and their total
    response time.

    Non-exponential service (``general[k]``, squared coefficient of variation ``scv[k]``):
    each customer there carries its remaining work ``cust_work`` (drawn on arrival by
    :func:`service_time`), worked off at the rate its discipline gives it, and the station's
    next completion is scheduled at ``next_done[k]`` (fifo position ``done_pos[k]``; work
    brought up to date at ``work_clock[k]``).  The exponential part stays a Gillespie
    draw: being memoryless, its clock may be drawn anew after every event, and the next
    event is the earlier of the two.

    The steps before and after a station changes (busy-time integral and work done; new
    rate or next completion) are written out at the departure and at the arrival: wrapped
    in two inlined helpers they measured 2.4x slower.

    Visits: an interaction visits station k, at its place in the route,
    ``visit_whole[k, c]`` times and once more with probability ``visit_part[k, c]`` (the
    mean is the network's visits; 0 visits passes the station by), each visit joining
    the station's queue anew (``cust_left``: the visits still to come there); ``mu`` is
    the rate of one visit's service.  One visit exactly draws no random number, so a
    network without visits runs the streams it always ran.

    Returns 0, or 1 when open customers exhausted the pool (the caller reports it).
    """
    n_stations, n_classes = mu.shape
    size = fifo_id.shape[1]
    t = clock[0]
    any_general = False
    for k in range(n_stations):
        if general[k]:
            any_general = True
    for _ in range(n_events):
        station = -1
        again = False
        if n_entering[0] > 0:
            # a closed customer without think time placed at its first station at the start
            n_entering[0] -= 1
            cust = entering[n_entering[0]]
            cust_start[cust] = t
            pos = 0
        else:
            think_total = 0.0
            for c in range(n_classes):
                think_total += thinking[c] * think_rate[c] + arrival_rate[c]
            total = think_total
            for k in range(n_stations):
                total += station_rate[k]
            scheduled = -1
            if any_general:
                wait = np.inf
                if total > 0.0:
                    wait = -np.log(1.0 - np.random.random()) / total
                for k in range(n_stations):
                    if next_done[k] - t <= wait:
                        wait = next_done[k] - t
                        scheduled = k
                if scheduled < 0 and total <= 0.0:
                    break
                t = next_done[scheduled] if scheduled >= 0 else t + wait
            else:
                if total <= 0.0:
                    break
                t += -np.log(1.0 - np.random.random()) / total
            chosen = scheduled
            residual = 0.0
            if scheduled < 0:
                pick = np.random.random() * total
                # --- which event: entities 0..M-1 are stations, then per class a terminal
                # completion (M + 2c) and an open arrival (M + 2c + 1); rounding falls back on
                # the last entity with a positive rate
                last_positive = -1
                for e in range(n_stations + 2 * n_classes):
                    if e < n_stations:
                        r = station_rate[e]
                    elif (e - n_stations) % 2 == 0:
                        r = thinking[(e - n_stations) // 2] * think_rate[(e - n_stations) // 2]
                    else:
                        r = arrival_rate[(e - n_stations) // 2]
                    if r > 0.0:
                        last_positive = e
                        if pick < r:
                            chosen = e
                            break
                        pick -= r
                if chosen < 0:
                    chosen = last_positive
                    pick = 0.0
                # the residual of the draw within the chosen entity is uniform on [0, 1)
                # again: reuse it for the choices below instead of drawing anew
                residual = min(pick / r, 0.9999999999999999) if chosen < n_stations and pick > 0.0 else 0.0
            station = chosen if chosen < n_stations else -1
            if station < 0:
                c = (chosen - n_stations) // 2
                if (chosen - n_stations) % 2 == 1:
                    if n_free[0] == 0:
                        clock[0] = t
                        return 1
                    n_free[0] -= 1
                    cust = free[n_free[0]]
                    cust_class[cust] = c
                else:
                    # any thinking customer of class c (they are identical): the last in its bag
                    thinking[c] -= 1
                    cust = think_bag[c, thinking[c]]
                cust_start[cust] = t
                pos = 0
            else:
                k = station
                # --- the departing customer, and its fifo position where the order is kept
                i_pick = 0
                if general[k]:
                    i_pick = done_pos[k]
                    cust = fifo_id[k, (head[k] + i_pick) % size]
                elif disc[k] == PRIORITY:
                    # preemptive-resume: the earliest customer of the top level departs
                    i_pick = _first_served(k, n_k[k], disc, n_kc, rank, fifo_cls, head, size)
                    cust = fifo_id[k, (head[k] + i_pick) % size]
                elif disc[k] == FCFS:
                    busy = min(n_k[k], servers[k])
                    if busy > 1:
                        pick = residual * station_rate[k]
                        for i in range(busy):
                            r = mu[k, fifo_cls[k, (head[k] + i) % size]]
                            if pick < r:
                                i_pick = i
                                break
                            pick -= r
                            i_pick = i
                    cust = fifo_id[k, (head[k] + i_pick) % size]
                else:
                    weight = 0.0
                    for c2 in range(n_classes):
                        weight += n_kc[k, c2] * mu[k, c2]
                    pick = residual * weight
                    c = n_classes - 1
                    r = 0.0
                    for c2 in range(n_classes):
                        r = n_kc[k, c2] * mu[k, c2]
                        if pick < r and n_kc[k, c2] > 0:
                            c = c2
                            break
                        pick -= r
                    while n_kc[k, c] == 0:          # rounding at the end of the scan
                        c -= 1
                        r = 0.0
                    within = min(pick / r, 0.9999999999999999) if r > 0.0 and pick > 0.0 else 0.0
                    cust = bag[k, c, int(within * n_kc[k, c])]
                c = cust_class[cust]
                if kind[k] == KIND_LD:
                    _integrate_busy(k, t, n_kc, n_k, last_change, acc_busy)
                if general[k]:
                    _advance(k, t, n_k, n_kc, kind, disc, servers, capacity, rank, fifo_id, fifo_cls, head, size,
                             cust_work, work_clock)
                if ordered[k]:
                    # close the gap: shift the i_pick older customers up by one
                    for i in range(i_pick, 0, -1):
                        fifo_id[k, (head[k] + i) % size] = fifo_id[k, (head[k] + i - 1) % size]
                        fifo_cls[k, (head[k] + i) % size] = fifo_cls[k, (head[k] + i - 1) % size]
                    head[k] = (head[k] + 1) % size
                slot = cust_slot[cust]
                last = n_kc[k, c] - 1
                moved = bag[k, c, last]
                bag[k, c, slot] = moved
                cust_slot[moved] = slot
                n_kc[k, c] -= 1
                n_k[k] -= 1
                acc_visits[k, c] += 1.0
                acc_sojourn[k, c] += t - cust_arrive[cust]
                if general[k]:
                    _reschedule(k, t, n_k, n_kc, kind, disc, servers, capacity, rank, fifo_id, fifo_cls, head, size,
                                cust_work, next_done, done_pos)
                else:
                    station_rate[k] = _station_rate(k, kind, disc, servers, capacity, mu, n_kc, n_k, fifo_cls, head,
                                                    rank)
                pos = cust_pos[cust]
                if cust_left[cust] > 0:
                    cust_left[cust] -= 1       # another visit here: it joins the queue anew
                    again = True
                else:
                    pos += 1
        # --- where the customer goes next --------------------------------------------------
        c = cust_class[cust]
        leaving = False
        while True:
            if pos >= route_len[c]:
                # the interaction is complete
                acc_done[c] += 1.0
                acc_response[c] += t - cust_start[cust]
                if arrival_rate[c] > 0.0:
                    cust_pos[cust] = OUTSIDE
                    cust_class[cust] = -1
                    free[n_free[0]] = cust
                    n_free[0] += 1
                    leaving = True
                    break
                if think_rate[c] > 0.0:
                    cust_pos[cust] = OUTSIDE
                    think_bag[c, thinking[c]] = cust
                    thinking[c] += 1
                    leaving = True
                    break
                cust_start[cust] = t       # no think time: the next interaction starts at once
                pos = 0
            if again:
                break
            # how many times this interaction visits the next station of its route
            k = route[c, pos]
            n_visits = visit_whole[k, c]
            if visit_part[k, c] > 0.0 and np.random.random() < visit_part[k, c]:
                n_visits += 1
            if n_visits > 0:
                cust_left[cust] = n_visits - 1
                break
            pos += 1
        if leaving:
            continue
        k = route[c, pos]
        if kind[k] == KIND_LD:
            _integrate_busy(k, t, n_kc, n_k, last_change, acc_busy)
        if general[k]:
            _advance(k, t, n_k, n_kc, kind, disc, servers, capacity, rank, fifo_id, fifo_cls, head, size, cust_work,
                     work_clock)
            cust_work[cust] = service_time(1.0 / mu[k, c], scv[k])
        cust_pos[cust] = pos
        cust_arrive[cust] = t
        cust_slot[cust] = n_kc[k, c]
        bag[k, c, n_kc[k, c]] = cust
        n_kc[k, c] += 1
        if ordered[k]:
            tail = (head[k] + n_k[k]) % size
            fifo_id[k, tail] = cust
            fifo_cls[k, tail] = c
        n_k[k] += 1
        if general[k]:
            _reschedule(k, t, n_k, n_kc, kind, disc, servers, capacity, rank, fifo_id, fifo_cls, head, size, cust_work,
                        next_done, done_pos)
        else:
            station_rate[k] = _station_rate(k, kind, disc, servers, capacity, mu, n_kc, n_k, fifo_cls, head, rank)
    clock[0] = t
    return 0


@jit
def flush(t, kind, n_kc, n_k, last_change, acc_busy):
    """Bring the load-dependent stations' busy-time integrals up to time ``t`` (end of a batch)."""
    for k in range(n_kc.shape[0]):
        if kind[k] == KIND_LD:
            _integrate_busy(k, t, n_kc, n_k, last_change, acc_busy)
