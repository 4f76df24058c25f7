"""Numeric kernels of the solvers (numba).  Private: solvers validate, kernels compute.

All kernels take flat float64/int64 arrays and assume valid input.  The JIT policy lives
in :func:`_jit`: compiled once per machine (``cache=True``), numpy error model so a
division by zero gives ``inf`` (used deliberately below) instead of raising.
"""
from __future__ import annotations

import numpy as np
from numba import njit


def _jit(func):
    return njit(cache=True, error_model="numpy", nogil=True)(func)


@_jit
def closed_lattice_mva(demand, is_delay, capacity, cap_len, n_tracked, think, population,
                       strides, order, level_start, slot, comp_index, comp_throughput):
    """Exact multi-class MVA over the population lattice, level by level.

    Parameters (M stations, C classes, L = prod(N_c + 1) lattice points)
    ----------
    demand : (M, C) float64          service demands.
    is_delay : (M,) bool             infinite-server stations.
    capacity : (M, Jmax) float64     alpha_k(1..J_k), padded with alpha_k(J_k).
    cap_len : (M,) int64             J_k (capacity constant beyond J_k).
    n_tracked : (M,) int64           marginals p_k(0..T_k-1 | n) to carry; T_k >= J_k - 1
                                     and 0 when J_k = 1 or delay.
    think : (C,) float64             think times Z_c.
    population : (C,) int64          N_c.
    strides : (C,) int64             mixed-radix strides of the lattice index.
    order : (L,) int64               lattice indices sorted by total population.
    level_start : (S + 2,) int64     order[level_start[s]:level_start[s+1]] has |n| = s.
    slot : (L,) int64                position of a lattice index within its level.
    comp_index : (M,) int64          row of comp_throughput for station k (-1: none).
    comp_throughput : (K, L, C)      throughputs of the network without station k.

    Returns
    -------
    throughput : (L, C)  X_c(n) at every lattice point.
    residence : (M, C)   R_kc(N).
    queue : (M,)         Q_k(N), all classes.
    marginal : (M, Tmax) p_k(j | N), j < T_k.

    Notes
    -----
    Residence time at a station with capacity alpha(1..J) (Reiser & Lavenberg 1980, eq. for
    queue-dependent servers, rewritten with the constant tail summed in closed form):

        R_kc(n) = D_kc [ (1 + Q_k(n - e_c)) / alpha_J
                        + sum_{j=1}^{J-1} j (1/alpha_j - 1/alpha_J) p_k(j-1 | n - e_c) ]

    so only p_k(0..J-2) is needed.  Marginals for j >= 1 follow the product recursion
    p_k(j|n) = sum_c X_c(n) D_kc / alpha_j p_k(j-1 | n - e_c); p_k(0|n) is *not* taken as
    1 - sum (which cancels catastrophically near saturation) but from the complement
    network (station k removed): p_k(0|n) = G_{-k}(n)/G(n) gives
    p_k(0|n) = p_k(0|n - e_c) X_c(n) / X_c^{-k}(n), a product of positive numbers.
    """
    M, C = demand.shape
    L = order.shape[0]
    S = level_start.shape[0] - 2
    t_max = 1
    for k in range(M):
        if n_tracked[k] > t_max:
            t_max = n_tracked[k]
    width = 1
    for s in range(S + 1):
        w = level_start[s + 1] - level_start[s]
        if w > width:
            width = w

    throughput = np.zeros((L, C))
    q_prev = np.zeros((width, M))
    q_cur = np.zeros((width, M))
    p_prev = np.zeros((width, M, t_max))
    p_cur = np.zeros((width, M, t_max))
    for k in range(M):
        p_prev[0, k, 0] = 1.0  # empty network: every station idle
    residence = np.zeros((M, C))
    n_vec = np.zeros(C, dtype=np.int64)
    pred = np.zeros(C, dtype=np.int64)
    inv_cap = np.zeros(capacity.shape)
    for k in range(M):
        for j in range(cap_len[k]):
            inv_cap[k, j] = 1.0 / capacity[k, j]

    for s in range(1, S + 1):
        base = level_start[s]
        for pos in range(base, level_start[s + 1]):
            idx = order[pos]
            local = pos - base
            for c in range(C):
                n_vec[c] = (idx // strides[c]) % (population[c] + 1)
                pred[c] = slot[idx - strides[c]] if n_vec[c] > 0 else -1
            for c in range(C):
                if n_vec[c] == 0:
                    for k in range(M):
                        residence[k, c] = 0.0
                    throughput[idx, c] = 0.0
                    continue
                pc = pred[c]
                total = think[c]
                for k in range(M):
                    d = demand[k, c]
                    if is_delay[k]:
                        r = d
                    else:
                        jl = cap_len[k]
                        inv_last = inv_cap[k, jl - 1]
                        r = (1.0 + q_prev[pc, k]) * inv_last
                        for j in range(1, jl):
                            r += j * (inv_cap[k, j - 1] - inv_last) * p_prev[pc, k, j - 1]
                        r *= d
                    residence[k, c] = r
                    total += r
                throughput[idx, c] = n_vec[c] / total  # inf when total == 0 (complements only)
            for k in range(M):
                q = 0.0
                for c in range(C):
                    x = throughput[idx, c]
                    if n_vec[c] > 0 and residence[k, c] > 0.0:
                        q += x * residence[k, c]
                q_cur[local, k] = q
                tk = n_tracked[k]
                if tk == 0:
                    continue
                for j in range(1, tk):
                    acc = 0.0
                    for c in range(C):
                        # A class with no demand here adds nothing (and may have X = inf
                        # inside a complement network, where inf * 0 would give NaN).
                        if n_vec[c] > 0 and demand[k, c] > 0.0:
                            acc += throughput[idx, c] * demand[k, c] * p_prev[pred[c], k, j - 1]
                    p_cur[local, k, j] = acc * inv_cap[k, j - 1]
                # p(0 | n) from the complement network; 0 if some class cannot leave k.
                row = comp_index[k]
                p0 = -1.0
                for c in range(C):
                    if n_vec[c] > 0 and comp_throughput[row, idx, c] == np.inf:
                        p0 = 0.0
                if p0 < 0.0:
                    for c in range(C):
                        if n_vec[c] > 0:
                            p0 = p_prev[pred[c], k, 0] * throughput[idx, c] / comp_throughput[row, idx, c]
                            break
                p_cur[local, k, 0] = p0
        q_prev, q_cur = q_cur, q_prev
        p_prev, p_cur = p_cur, p_prev

    queue = np.zeros(M)
    marginal = np.zeros((M, t_max))
    for k in range(M):
        queue[k] = q_prev[0, k]
        for j in range(t_max):
            marginal[k, j] = p_prev[0, k, j]
    if S == 0:
        for k in range(M):
            marginal[k, 0] = 1.0
    return throughput, residence, queue, marginal
