"""Numeric kernels of the log-space convolution (numba).  Private: :mod:`mva.convolution`
drives them; see there for the method and its references.

Arrays over the population lattice are flat, mixed radix with class 0 fastest (as in
:mod:`mva._exact_kernels`), and hold natural logarithms of normalising constants; ``-inf`` is
an exact zero.  Every operation is a log-sum-exp of positive terms: nothing is
subtracted, so no cancellation can occur whatever the population.
"""
from __future__ import annotations

import math

import numpy as np

from ._exact_kernels import _jit, next_population


@_jit
def lattice_strides(population):
    """Strides (C,) of the mixed-radix lattice index and its size prod(N_c + 1)."""
    C = population.shape[0]
    strides = np.ones(C, dtype=np.int64)
    size = 1
    for c in range(C):
        strides[c] = size
        size *= population[c] + 1
    return strides, size


@_jit
def _log_add(a, b):
    """log(exp(a) + exp(b)) without overflow; -inf is zero."""
    if a < b:
        a, b = b, a
    if b == -np.inf:
        return a
    return a + math.log1p(math.exp(b - a))


@_jit
def delay_log_constant(log_think, population):
    """log G of the terminals and delay stations alone: prod_c Z_c^{n_c} / n_c! at every
    lattice point (``log_think`` (C,) is log of the summed delay demand, -inf when zero)."""
    strides, size = lattice_strides(population)
    C = population.shape[0]
    out = np.zeros(size)
    n_vec = np.zeros(C, dtype=np.int64)
    for idx in range(size):
        if idx > 0:
            next_population(n_vec, population)
        total = 0.0
        for c in range(C):
            n = n_vec[c]
            if n > 0:
                if log_think[c] == -np.inf:
                    total = -np.inf
                    break
                total += n * log_think[c] - math.lgamma(n + 1.0)
        out[idx] = total
    return out


@_jit
def _shift_sum(source, log_demand, population, strides, size, out):
    """out(n) = log sum_c D_c exp(source(n - e_c)) over classes with n_c > 0."""
    C = population.shape[0]
    n_vec = np.zeros(C, dtype=np.int64)
    for idx in range(size):
        if idx > 0:
            next_population(n_vec, population)
        top = -np.inf
        for c in range(C):
            if n_vec[c] > 0:
                v = log_demand[c] + source[idx - strides[c]]
                if v > top:
                    top = v
        if top == -np.inf:
            out[idx] = -np.inf
            continue
        acc = 0.0
        for c in range(C):
            if n_vec[c] > 0:
                acc += math.exp(log_demand[c] + source[idx - strides[c]] - top)
        out[idx] = top + math.log(acc)


@_jit
def convolve_station(log_g, log_demand, capacity, cap_len, population):
    """log of G * F, the network ``log_g`` with one more station (queue, multi-server or
    load-dependent; not a delay).

    The station's generating function depends on z only through u = sum_c D_c z_c:
    F(z) = f(u) = sum_j u^j / A(j), A(j) = alpha(1) ... alpha(j) (Reiser & Kobayashi 1975).
    With alpha constant (alpha_J) beyond J,

        f(u) = sum_{j<J-1} u^j / A(j) + (u^{J-1} / A(J-1)) / (1 - u / alpha_J),

    so with W_0 = G and W_{j+1} = u W_j (W_{j+1}(n) = sum_c D_c W_j(n - e_c)) the result is
    sum_{j<J-1} W_j / A(j) + V, where V(n) = W_{J-1}(n) / A(J-1) + sum_c D_c V(n - e_c) / alpha_J.
    Every term is positive.  Cost O(lattice * C * J).

    Parameters
    ----------
    log_g : (L,) float64     log G of the network so far.
    log_demand : (C,)        log D_c (-inf for no demand).
    capacity : (Jmax,)       alpha(1..J), padded.
    cap_len : int            J.
    population : (C,) int64
    """
    strides, size = lattice_strides(population)
    C = population.shape[0]
    total_pop = 0
    for c in range(C):
        total_pop += population[c]
    J = cap_len
    out = np.full(size, -np.inf)
    current = log_g.copy()
    following = np.empty(size)
    log_a = 0.0  # log A(j)
    # W_j vanishes for |n| < j: beyond the total population the head adds nothing.
    head = min(J - 1, total_pop + 1)
    for j in range(head):
        for idx in range(size):
            out[idx] = _log_add(out[idx], current[idx] - log_a)
        _shift_sum(current, log_demand, population, strides, size, following)
        current, following = following, current
        log_a += math.log(capacity[j])
    if J - 1 > head:  # the tail term u^{J-1}/A(J-1) G is zero on the lattice
        return out
    log_inv_last = -math.log(capacity[J - 1])
    tail = np.empty(size)
    n_vec = np.zeros(C, dtype=np.int64)
    for idx in range(size):
        if idx > 0:
            next_population(n_vec, population)
        v = current[idx] - log_a
        for c in range(C):
            if n_vec[c] > 0:
                v = _log_add(v, log_inv_last + log_demand[c] + tail[idx - strides[c]])
        tail[idx] = v
        out[idx] = _log_add(out[idx], v)
    return out


@_jit
def complement_throughputs(log_g, population):
    """X_c(n) = G(n - e_c) / G(n) at every lattice point, (L, C); inf where G(n) = 0
    (the class cannot be served without the removed station), 0 where n_c = 0."""
    strides, size = lattice_strides(population)
    C = population.shape[0]
    out = np.zeros((size, C))
    n_vec = np.zeros(C, dtype=np.int64)
    for idx in range(size):
        if idx > 0:
            next_population(n_vec, population)
        for c in range(C):
            if n_vec[c] > 0:
                if log_g[idx] == -np.inf:
                    out[idx, c] = np.inf
                else:
                    out[idx, c] = math.exp(log_g[idx - strides[c]] - log_g[idx])
    return out
