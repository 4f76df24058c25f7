"""Independent references for the solvers: no code shared with ``mva``'s recursions.

* :func:`enumerate_closed` — brute-force product-form enumeration over every state of a
  small closed (or mixed) network (BCMP, 1975): G(N) = sum over states of prod_k f_k(n_k).
* :func:`convolution_throughput` — Buzen's convolution for one class, in log space so
  that N = 10,000 neither overflows nor loses precision.
* :func:`naive_ld_mva` — Du & Zhang (2001)'s eq. 3.3-3.4 as written (p(0|n) = 1 - sum), kept to
  show its failure.
* :func:`erlang_c` — the Erlang C formula, for open multi-server stations.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.special import logsumexp


def capacity_value(kind, servers, capacity, j):
    """alpha(j) of a station, from its description (j >= 1)."""
    if kind == "queue":
        return 1.0
    if kind == "delay":
        return float(j)
    if kind == "multi":
        return float(min(j, servers))
    return float(capacity[min(j, len(capacity)) - 1])


def _compositions(total, parts):
    """All ways to put ``total`` identical customers in ``parts`` places."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first,) + rest


def _station_weight_and_open_mean(kind, servers, capacity, demands, counts, open_load, open_terms=400):
    """Weight of the station and E[open customers there | these closed customers]."""
    n = sum(counts)
    w = 1.0
    for d, m in zip(demands, counts, strict=False):
        if m:
            w *= d ** m / math.factorial(m)
    if open_load == 0.0:
        if kind == "delay":
            return w, 0.0
        w *= math.factorial(n)
        for i in range(1, n + 1):
            w /= capacity_value(kind, servers, capacity, i)
        return w, 0.0
    total = 0.0
    first = 0.0
    prod = 1.0
    for i in range(1, n + 1):
        prod *= capacity_value(kind, servers, capacity, i)
    for o in range(open_terms):
        if o > 0:
            prod *= capacity_value(kind, servers, capacity, n + o)
        term = math.factorial(n + o) / math.factorial(o) * open_load ** o / prod
        if kind == "delay":
            term = open_load ** o / math.factorial(o)
        total += term
        first += o * term
        if o > 20 and term < 1e-18 * total:
            break
    return w * total, first / total


def _normaliser(stations, population, think, open_loads):
    """G(population) by enumerating every placement of every class."""
    M = len(stations)
    places = M + 1  # + terminals
    per_class = [list(_compositions(int(n), places)) for n in population]
    G = 0.0
    moments = np.zeros((M, len(population)))
    busy = np.zeros(M)
    open_mean = np.zeros(M)
    for combo in itertools.product(*per_class):
        weight = 1.0
        for c, placement in enumerate(combo):
            z = think[c]
            m = placement[-1]
            if m and z == 0:
                weight = 0.0
                break
            weight *= z ** m / math.factorial(m)
        if weight == 0.0:
            continue
        means = np.zeros(M)
        for k, (kind, servers, cap, dem) in enumerate(stations):
            counts = [combo[c][k] for c in range(len(population))]
            w_k, means[k] = _station_weight_and_open_mean(kind, servers, cap, dem, counts, open_loads[k])
            weight *= w_k
        G += weight
        open_mean += weight * means
        for k in range(M):
            tot = 0
            for c in range(len(population)):
                moments[k, c] += weight * combo[c][k]
                tot += combo[c][k]
            if tot:
                busy[k] += weight
    return G, moments, busy, open_mean


def enumerate_closed(stations, population, think, open_loads=None):
    """Exact measures of a closed product-form network by state enumeration.

    ``stations`` is a list of ``(kind, servers, capacity, demands_per_class)``; open loads
    (sum of lambda D of open classes, per station) are summed out when given.

    Returns ``throughput (C,), queue (M, C), p_busy (M,), open_queue (M,)`` where
    ``p_busy`` is the probability that the station holds at least one closed customer and
    ``open_queue`` the mean number of open customers at each station.
    """
    M = len(stations)
    open_loads = open_loads if open_loads is not None else [0.0] * M
    G, moments, busy, open_mean = _normaliser(stations, population, think, open_loads)
    C = len(population)
    throughput = np.zeros(C)
    for c in range(C):
        if population[c] == 0:
            continue
        reduced = list(population)
        reduced[c] -= 1
        G_minus = _normaliser(stations, reduced, think, open_loads)[0]
        throughput[c] = G_minus / G
    return throughput, moments / G, busy / G, open_mean / G


def _log_station_function(kind, servers, capacity, demand, N):
    j = np.arange(N + 1)
    if kind == "delay":
        from scipy.special import gammaln
        return j * math.log(demand) - gammaln(j + 1) if demand > 0 else np.where(j == 0, 0.0, -np.inf)
    alphas = np.array([capacity_value(kind, servers, capacity, i) for i in range(1, N + 1)])
    log_prod = np.concatenate(([0.0], np.cumsum(np.log(alphas))))
    if demand == 0:
        return np.where(j == 0, 0.0, -np.inf)
    return j * math.log(demand) - log_prod


def convolution_throughput(stations, N, think=0.0):
    """X(N) of a single-class closed network by log-space convolution (Buzen 1973).

    ``stations``: list of ``(kind, servers, capacity, demand)``.
    """
    log_g = _log_station_function("delay", 1, None, think, N) if think > 0 else \
        np.where(np.arange(N + 1) == 0, 0.0, -np.inf)
    for kind, servers, capacity, demand in stations:
        f = _log_station_function(kind, servers, capacity, demand, N)
        new = np.empty(N + 1)
        for n in range(N + 1):
            new[n] = logsumexp(f[:n + 1] + log_g[n::-1])
        log_g = new
    return math.exp(log_g[N - 1] - log_g[N])


def naive_ld_mva(demands, capacities, N, think=0.0):
    """Du & Zhang (2001) eq. 3.3-3.4 verbatim: marginals with p(0|n) = 1 - sum_{j>=1} p(j|n).

    ``demands``: list of demands of load-independent queues; ``capacities``: alpha(1..)
    for one load-dependent station of demand 1 (the last entry holds beyond the list).
    Returns (X(N), min probability seen).
    """
    def alpha(j):
        return capacities[min(j, len(capacities)) - 1]

    q = np.zeros(len(demands))
    p = np.zeros(N + 1)
    p[0] = 1.0
    X = 0.0
    worst = 1.0
    inv_alpha = np.array([1.0 / alpha(j) for j in range(1, N + 1)])
    for n in range(1, N + 1):
        j = np.arange(1, n + 1)
        r_ld = float(np.sum(j * inv_alpha[:n] * p[:n]))
        r = np.asarray(demands) * (1 + q)
        X = n / (think + r_ld + r.sum())
        q = X * r
        new = np.zeros(N + 1)
        new[1:n + 1] = X * inv_alpha[:n] * p[:n]
        new[0] = 1.0 - new[1:n + 1].sum()
        p = new
        worst = min(worst, p[:n + 1].min())
    return X, worst


def erlang_c(m, a):
    """Probability of waiting in M/M/m with offered load a Erlangs (a < m)."""
    s = sum(a ** k / math.factorial(k) for k in range(m))
    top = a ** m / math.factorial(m) * m / (m - a)
    return top / (s + top)


def _log_station_lattice(kind, servers, capacity, demands, population):
    """log F(m) of one station over the lattice m <= population, as a C-dimensional array:
    F(m) = |m|! / A(|m|) prod_c D_c^{m_c} / m_c!  (a delay: prod_c D_c^{m_c} / m_c!)."""
    from scipy.special import gammaln

    grids = np.meshgrid(*[np.arange(n + 1) for n in population], indexing="ij")
    total = sum(grids)
    out = np.zeros(grids[0].shape)
    for m, d in zip(grids, demands, strict=False):
        with np.errstate(divide="ignore", invalid="ignore"):
            term = np.where(m == 0, 0.0, m * (math.log(d) if d > 0 else -np.inf))
        out += term - gammaln(m + 1)
    if kind != "delay":
        log_a = np.concatenate(([0.0], np.cumsum([math.log(capacity_value(kind, servers, capacity, j))
                                                    for j in range(1, int(sum(population)) + 1)])))
        out += gammaln(total + 1) - log_a[total]
    return out


def _lattice_convolve(log_a, log_b):
    """Direct convolution over the population lattice, in log space: O(size^2)."""
    out = np.full(log_a.shape, -np.inf)
    for m in np.ndindex(*log_a.shape):
        if log_a[m] == -np.inf:
            continue
        target = tuple(slice(i, None) for i in m)
        source = tuple(slice(0, n - i) for i, n in zip(m, log_a.shape, strict=False))
        out[target] = np.logaddexp(out[target], log_a[m] + log_b[source])
    return out


def convolution_multiclass(stations, population, think):
    """Throughput (C,) and queue lengths (M, C) of a closed multi-class network by direct
    log-space convolution of the station functions over the lattice (Reiser & Kobayashi
    1975), with each station's marginal from the convolution of all the others (prefix and
    suffix products).  For small lattices: O(M lattice^2).

    ``stations``: list of ``(kind, servers, capacity, demands_per_class)``.
    """
    population = [int(n) for n in population]
    shape = tuple(n + 1 for n in population)
    terminals = _log_station_lattice("delay", 1, None, think, population)
    funcs = [_log_station_lattice(kind, servers, cap, dem, population) for kind, servers, cap, dem in stations]
    M = len(funcs)
    prefix = [terminals]
    for f in funcs:
        prefix.append(_lattice_convolve(prefix[-1], f))
    suffix = [None] * (M + 1)
    suffix[M] = np.where(np.indices(shape).sum(axis=0) == 0, 0.0, -np.inf)
    for k in range(M - 1, -1, -1):
        suffix[k] = _lattice_convolve(funcs[k], suffix[k + 1])
    log_g = prefix[M]
    full = tuple(population)
    C = len(population)
    throughput = np.zeros(C)
    for c in range(C):
        if population[c] > 0:
            less = list(full)
            less[c] -= 1
            throughput[c] = math.exp(log_g[tuple(less)] - log_g[full])
    queue = np.zeros((M, C))
    for k in range(M):
        others = _lattice_convolve(prefix[k], suffix[k + 1])
        for m in np.ndindex(*shape):
            weight = funcs[k][m]
            rest = tuple(n - i for n, i in zip(full, m, strict=False))
            if weight == -np.inf or others[rest] == -np.inf:
                continue
            p = math.exp(weight + others[rest] - log_g[full])
            queue[k] += p * np.asarray(m, dtype=float)
    return throughput, queue
