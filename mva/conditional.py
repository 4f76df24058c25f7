"""One load-dependent station with the rest of the network as per-class delays, solved
exactly: the check approximate MVA applies where its own estimate is doubtful.

Given an approximate solution (throughputs X_c, residence times R_kc), the rest of the
network is, for class c, a delay Z'_c = N_c / X_c - R_kc (the cycle time outside station
k: think time included).  The network of station k and those delays is product form;
with F_k(m) = |m|!/A(|m|) prod_c D_c^{m_c}/m_c! (A(j) = alpha(1)...alpha(j)) its
normalising constant is

    G(N) prod_c N_c! = sum_j  j!/A(j) * [t^j] prod_c (Z'_c + D_c t)^{N_c},

a product of C binomial powers (Reiser & Kobayashi 1975 for the station function), so the
exact throughputs X_c = G(N - e_c)/G(N) cost O(C N_tot^2) for N_tot = sum_c N_c customers,
whatever the size of the population lattice.  Polynomial coefficients are kept as
logarithms (positive terms only).  If approximate MVA were right about station k, this
network would reproduce its throughputs; a station whose capacity collapses with load
makes the approximation settle in the wrong one of two modes, and then the two disagree.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

__all__ = ["conditional_throughput", "conditional_cost"]


def _log_binomial_power(log_z, log_d, n):
    """log coefficients of (Z + D t)^n, t^0..t^n."""
    m = np.arange(n + 1)
    with np.errstate(invalid="ignore"):
        coef = gammaln(n + 1) - gammaln(m + 1) - gammaln(n - m + 1)
        coef = coef + np.where(m > 0, m * log_d, 0.0) + np.where(n - m > 0, (n - m) * log_z, 0.0)
    return np.where(np.isnan(coef), -np.inf, coef)


def _log_multiply(a, b):
    """log coefficients of the product of two polynomials given by log coefficients."""
    if len(a) < len(b):
        a, b = b, a
    out = np.full(len(a) + len(b) - 1, -np.inf)
    for j, value in enumerate(b):
        if value > -np.inf:
            out[j:j + len(a)] = np.logaddexp(out[j:j + len(a)], a + value)
    return out


def conditional_cost(population) -> float:
    """Work of :func:`conditional_throughput`: vectorised polynomial steps, (C + 1) N_tot
    (about 5 microseconds each here)."""
    return (len(population) + 1) * float(np.sum(population))


def conditional_throughput(demand, capacity, population, outside) -> np.ndarray:
    """Exact class throughputs of one station with per-class delays for the rest.

    Parameters
    ----------
    demand : array (C,)
        D_kc at the station (time unit).
    capacity : array (J,)
        alpha(1..J), constant beyond J (dimensionless).
    population : array (C,) of int
        N_c.
    outside : array (C,)
        Z'_c >= 0, the time per cycle spent away from the station (time unit).

    Returns
    -------
    ndarray (C,)
        X_c (1/time unit); 0 for a class with N_c = 0.
    """
    demand = np.asarray(demand, float)
    population = np.asarray(population, dtype=np.int64)
    with np.errstate(divide="ignore"):
        log_d, log_z = np.log(demand), np.log(np.asarray(outside, float))
    powers = [_log_binomial_power(log_z[c], log_d[c], int(population[c])) for c in range(len(population))]
    total = int(population.sum())
    j = np.arange(total + 1)
    alpha = np.asarray(capacity, float)
    alphas = alpha[np.minimum(j[1:], len(alpha)) - 1]
    weight = gammaln(j + 1) - np.concatenate(([0.0], np.cumsum(np.log(alphas))))   # log j!/A(j)

    def log_constant(polys):
        product = np.zeros(1)
        for p in polys:
            product = _log_multiply(product, p)
        terms = product + weight[:len(product)]
        top = terms.max()
        return top + math.log(np.exp(terms - top).sum()) if top > -np.inf else -np.inf

    full = log_constant(powers)
    throughput = np.zeros(len(population))
    for c in range(len(population)):
        if population[c] == 0:
            continue
        reduced = list(powers)
        reduced[c] = _log_binomial_power(log_z[c], log_d[c], int(population[c]) - 1)
        # G(N - e_c)/G(N) with the N_c!/(N_c - 1)! = N_c of the factorials
        throughput[c] = population[c] * math.exp(log_constant(reduced) - full)
    return throughput
