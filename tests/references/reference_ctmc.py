"""Closed networks with exponential service solved exactly as a continuous-time Markov
chain, by building the generator matrix and solving pi Q = 0 (no code shared with mva).

Stations: ``("delay", demands)``, ``("ps", demands)``, ``("fcfs", demands)``,
``("priority", demands, levels)`` (single server, preemptive-resume between levels, FCFS
within a level).  Class c visits, once per interaction, the stations where its demand is
positive in list order, then thinks for an exponential time of mean Z_c > 0.  With
``visits`` an interaction visits a station only with that chance, each visit a service of
mean demand / visits, and passes it by otherwise.

State: per station the classes of its customers in arrival order (a tuple), and per class
the number thinking.  The chain is small only for small populations (a few customers).
"""
from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def _departures(station, seq):
    """(position, rate) pairs of the customers that can leave ``station`` in state ``seq``."""
    kind, demand = station[0], station[1]
    if not seq:
        return []
    if kind == "delay":
        return [(i, 1.0 / demand[c]) for i, c in enumerate(seq)]
    if kind == "ps":
        return [(i, 1.0 / demand[c] / len(seq)) for i, c in enumerate(seq)]
    if kind == "fcfs":
        return [(0, 1.0 / demand[seq[0]])]
    levels = station[2]
    top = min(levels[c] for c in seq)
    first = next(i for i, c in enumerate(seq) if levels[c] == top)
    return [(first, 1.0 / demand[seq[first]])]


def solve_closed(stations, population, think, visits=None):
    """Exact class throughputs and per-station mean queue lengths; ``visits`` (M, C),
    each at most 1: the chance an interaction visits each station (default 1).

    Returns ``(throughput (C,), queue (M, C))``.
    """
    C = len(population)
    M = len(stations)
    routes = [[k for k in range(M) if stations[k][1][c] > 0] for c in range(C)]
    chance = np.ones((M, C)) if visits is None else np.asarray(visits, float)
    assert (chance <= 1.0).all()
    # one visit's service: the demand over the chance of a visit
    stations = [(s[0], [d / chance[k, c] if d > 0 else d for c, d in enumerate(s[1])], *s[2:])
                for k, s in enumerate(stations)]

    def onward(c, step):
        """Where class c goes from route position ``step``: (station, or None for the end
        of the interaction, probability)."""
        out, reach = [], 1.0
        for k in routes[c][step:]:
            out.append((k, reach * chance[k, c]))
            reach *= 1.0 - chance[k, c]
        out.append((None, reach))
        return [(k, p) for k, p in out if p > 0]

    start = (tuple(() for _ in range(M)), tuple(population))
    index, states, edges = {start: 0}, [start], []
    completions = []   # (state index, class, rate) of interactions completed
    i = 0
    while i < len(states):
        for target, rate, done in _moves(states[i], stations, routes, think, onward):
            if done is not None:
                completions.append((i, done, rate))
            if target is None:          # an interaction that visited nothing: no move
                continue
            if target not in index:
                index[target] = len(states)
                states.append(target)
            edges.append((i, index[target], rate))
        i += 1
    n = len(states)
    rows, cols, vals = zip(*edges, strict=True)
    Q = sp.coo_matrix((vals, (rows, cols)), shape=(n, n)).tocsr()
    Q = Q - sp.diags(np.asarray(Q.sum(axis=1)).ravel())
    # pi Q = 0 with sum pi = 1: replace one balance equation by the normalisation
    A = Q.T.tolil()
    A[0, :] = 1.0
    b = np.zeros(n)
    b[0] = 1.0
    pi = spla.spsolve(A.tocsc(), b)
    throughput = np.zeros(C)
    for s, c, rate in completions:
        throughput[c] += pi[s] * rate
    queue = np.zeros((M, C))
    for s, (queues, _) in enumerate(states):
        for k in range(M):
            for c in queues[k]:
                queue[k, c] += pi[s]
    return throughput, queue


def _moves(state, stations, routes, think, onward):
    """(next state or None, rate, class whose interaction completes or None) from ``state``."""
    queues, thinking = state
    out = []
    for c in range(len(thinking)):
        if thinking[c]:
            for nxt, p in onward(c, 0):
                if nxt is None:             # an interaction that visits nothing
                    out.append((None, p * thinking[c] / think[c], c))
                    continue
                q, t = list(queues), list(thinking)
                q[nxt] = q[nxt] + (c,)
                t[c] -= 1
                out.append(((tuple(q), tuple(t)), p * thinking[c] / think[c], None))
    for k in range(len(stations)):
        for pos, rate in _departures(stations[k], queues[k]):
            c = queues[k][pos]
            for nxt, p in onward(c, routes[c].index(k) + 1):
                q, t = list(queues), list(thinking)
                q[k] = queues[k][:pos] + queues[k][pos + 1:]
                if nxt is None:
                    t[c] += 1
                else:
                    q[nxt] = q[nxt] + (c,)
                out.append(((tuple(q), tuple(t)), p * rate, c if nxt is None else None))
    return out


def all_orders(counts):
    """Every arrival order of a multiset of classes (for small hand checks)."""
    items = [c for c, n in enumerate(counts) for _ in range(n)]
    return sorted(set(itertools.permutations(items)))
