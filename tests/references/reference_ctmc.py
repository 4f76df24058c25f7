"""Closed networks with exponential service solved exactly as a continuous-time Markov
chain, by building the generator matrix and solving pi Q = 0 (no code shared with mva).

Stations: ``("delay", demands)``, ``("ps", demands)``, ``("fcfs", demands)``,
``("priority", demands, levels)`` (single server, preemptive-resume between levels, FCFS
within a level).  Class c visits, once per interaction, the stations where its demand is
positive in list order, then thinks for an exponential time of mean Z_c > 0.

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


def solve_closed(stations, population, think):
    """Exact class throughputs and per-station mean queue lengths.

    Returns ``(throughput (C,), queue (M, C))``.
    """
    C = len(population)
    M = len(stations)
    routes = [[k for k in range(M) if stations[k][1][c] > 0] for c in range(C)]
    start = (tuple(() for _ in range(M)), tuple(population))
    index, states, edges = {start: 0}, [start], []
    completions = []   # (state index, class, rate) of interactions completed
    i = 0
    while i < len(states):
        queues, thinking = states[i]
        moves = []
        for c in range(C):
            if thinking[c]:
                first = routes[c][0]
                q = list(queues)
                q[first] = q[first] + (c,)
                t = list(thinking)
                t[c] -= 1
                moves.append(((tuple(q), tuple(t)), thinking[c] / think[c]))
        for k in range(M):
            for pos, rate in _departures(stations[k], queues[k]):
                c = queues[k][pos]
                q = list(queues)
                q[k] = queues[k][:pos] + queues[k][pos + 1:]
                t = list(thinking)
                step = routes[c].index(k) + 1
                if step < len(routes[c]):
                    nxt = routes[c][step]
                    q[nxt] = q[nxt] + (c,)
                else:
                    t[c] += 1
                    completions.append((i, c, rate))
                moves.append(((tuple(q), tuple(t)), rate))
        for target, rate in moves:
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


def all_orders(counts):
    """Every arrival order of a multiset of classes (for small hand checks)."""
    items = [c for c, n in enumerate(counts) for _ in range(n)]
    return sorted(set(itertools.permutations(items)))
