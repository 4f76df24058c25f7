"""Open traffic at a station, summed out exactly for mixed networks.

In a product-form mixed network the open customers at station k can be summed out of the
stationary distribution (Lavenberg, *Computer Performance Modeling Handbook*, 1983,
ch. 3; Bruell & Balbo, *Computational Algorithms for Closed Queueing Networks*, 1980).
With open load ``a = sum_{c open} lambda_c D_kc`` and the station's capacity function
``alpha(1..J)`` (constant beyond J), closed customers see the station as load-dependent
with

    h(j) = sum_{o >= 0} C(j + o, o) a^o / P(j + o),   P(t) = alpha(1) ... alpha(t),
    alpha'(j) = h(j - 1) / h(j).

For a single server (J = 1) this is ``alpha' = 1 - a``: the familiar inflation of closed
demands by 1/(1 - U_open).  For j >= J - 1 the inner sum is a negative binomial series,
so ``alpha'(j) = alpha(J) - a`` for j >= J and the tail of every h(j) is a regularised
incomplete beta function (``scipy.special.betainc``): no truncation.  Given j closed
customers at the station, the open count is distributed in proportion to the terms of
h(j); its mean is ``(j + 1) rho / (1 - rho)`` (rho = a / alpha(J)) for j >= J - 1.

Pure open networks are the special case with no closed customers: a multi-server station
then gives the Erlang C results exactly.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import betainc, logsumexp

__all__ = ["OpenLoadEffect", "open_load_effect"]


@dataclass(frozen=True)
class OpenLoadEffect:
    """What open load ``a`` does to a station with capacity function ``alpha(1..J)``.

    Attributes
    ----------
    capacity : ndarray (J,)
        Effective capacity function alpha'(1..J) seen by closed classes.
    p_no_open_when_empty : float
        P(no open customer | no closed customer) = 1 / h(0).
    open_mean_head : ndarray (J - 1,)
        E[open customers | j closed], j = 0..J-2, minus its tail form (j + 1) rho/(1 - rho).
    rho : float
        a / alpha(J), < 1.
    """

    capacity: np.ndarray
    p_no_open_when_empty: float
    open_mean_head: np.ndarray
    rho: float

    def open_queue_length(self, closed_queue: float, closed_marginal: np.ndarray) -> float:
        """Mean open customers at the station, given the closed customers' mean queue
        length and marginal ``p(j)``, j = 0..J-2 (dimensionless)."""
        head = len(self.open_mean_head)
        tail = self.rho / (1.0 - self.rho) * (closed_queue + 1.0)
        return float(tail + np.dot(self.open_mean_head, closed_marginal[:head]))


def _incomplete_beta(k: int, b: float, rho: float) -> float:
    """I_rho(k, b), with I_rho(0, b) = 1 (an empty lower sum)."""
    return 1.0 if k <= 0 else float(betainc(k, b, rho))


def open_load_effect(alpha: np.ndarray, load: float) -> OpenLoadEffect:
    """Effective capacity function and open-customer moments for open ``load`` a.

    Parameters
    ----------
    alpha : ndarray (J,)
        Capacity function alpha(1..J) > 0, constant beyond J (dimensionless).
    load : float
        Open load a = sum of lambda_c D_kc over open classes (dimensionless); must satisfy
        a < alpha(J).

    Returns
    -------
    OpenLoadEffect
    """
    alpha = np.asarray(alpha, dtype=float)
    J = len(alpha)
    a_last = alpha[-1]
    rho = load / a_last
    if load == 0.0:
        return OpenLoadEffect(alpha.copy(), 1.0, np.zeros(J - 1), 0.0)
    log1m = np.log1p(-rho)
    # log(h(j) P(j)) for j = 0..J-1; the closed form holds from j = J - 1 on.
    log_h = np.empty(J)
    log_mean = np.empty(J - 1)       # log(sum_o o * term) for j = 0..J-2
    log_h[J - 1] = -J * log1m
    for j in range(J - 1):
        k_head = J - 1 - j                                    # head terms o = 0..k_head-1
        o = np.arange(1, k_head)
        ratio = np.log((j + o) / o * load / alpha[j + o - 1]) if k_head > 1 else np.zeros(0)
        log_terms = np.concatenate(([0.0], np.cumsum(ratio)))
        log_prefactor = float(np.sum(np.log(a_last / alpha[j:J - 1])))
        tail = log_prefactor - (j + 1) * log1m
        beta0 = _incomplete_beta(k_head, j + 1, rho)
        beta1 = _incomplete_beta(k_head - 1, j + 2, rho)
        parts = np.concatenate((log_terms, [tail + np.log(beta0) if beta0 > 0 else -np.inf]))
        log_h[j] = logsumexp(parts)
        with np.errstate(divide="ignore"):
            moment_parts = np.concatenate((
                np.log(np.arange(1, k_head)) + log_terms[1:],
                [tail + np.log((j + 1) * rho / (1 - rho)) + (np.log(beta1) if beta1 > 0 else -np.inf)]))
        log_mean[j] = logsumexp(moment_parts)
    capacity = np.empty(J)
    # alpha'(j) = h(j-1)/h(j) = alpha(j) * [h(j-1)P(j-1)] / [h(j)P(j)]
    capacity[:J - 1] = alpha[:J - 1] * np.exp(log_h[:J - 1] - log_h[1:J])
    capacity[J - 1] = a_last - load
    head = np.arange(J - 1)
    mean_head = np.exp(log_mean - log_h[:J - 1]) - (head + 1) * rho / (1 - rho)
    return OpenLoadEffect(capacity, float(np.exp(-log_h[0])), mean_head, float(rho))
