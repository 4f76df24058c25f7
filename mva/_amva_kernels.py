"""Numeric kernel of approximate MVA (numba).  Private: :mod:`mva.approximate` validates
and drives it; see there for the method and its references."""
from __future__ import annotations

import numpy as np

from ._kernels import _jit


@_jit
def estimated_error(change, previous, relaxation):
    """Distance to the fixed point of a linearly converging iteration, and whether it
    contracts.

    With rho = change / previous (the observed contraction), the remaining error is about
    change * rho / (1 - rho); never less than the change itself, and divided by the
    relaxation factor in use (a damped step is that share of the full one).  Below a
    few ulps the ratio of changes is rounding noise, so the change is taken as it is.
    """
    if previous == np.inf or change <= 1e-14:
        return change / relaxation, True
    rho = min(change / previous, 0.999) if previous > 0.0 else 0.999
    return max(change, change * rho / (1.0 - rho)) / relaxation, change < previous


@_jit
def damped(relaxation):
    """The next relaxation factor when an iteration stops contracting (a two-cycle,
    typically through a clipped estimate): halve it, down to 1/64."""
    return max(relaxation * 0.5, 1.0 / 64.0)


@_jit
def amva_fixed_point(demand, is_delay, capacity, cap_len, think, population, queue_correction,
                     marginal_correction, queue, marginal, tol, max_iter):
    """Solve the approximate-MVA equations at one population vector by successive
    substitution.

    Parameters (M stations, C classes, Jmax = max J_k)
    ----------
    demand : (M, C) float64            service demands D_kc.
    is_delay : (M,) bool               infinite-server stations.
    capacity : (M, Jmax) float64       alpha_k(1..J_k), padded with alpha_k(J_k).
    cap_len : (M,) int64               J_k; stations with J_k >= 2 carry marginals.
    think : (C,) float64               Z_c.
    population : (C,) float64          n_c (integers stored as floats; 0 = class absent).
    queue_correction : (M, C)          added to the proportional estimate of Q_k(n - e_c)
                                       (Linearizer's sum_i (n - e_c)_i F_kic; 0 for
                                       Bard-Schweitzer).
    marginal_correction : (M, Jmax, C) added to the proportional estimate of
                                       p_k(j | n - e_c) (0 for Bard-Schweitzer).
    queue : (M, C) in/out              start values, then the solution Q_kc(n).
    marginal : (M, Jmax) in/out        p_k(j | n), j < J_k; start values, then solution.
    tol : float                        stop when :func:`estimated_error` of the largest
                                       change of an iteration (|dX_c| / X_c, |dQ_kc| / n_c,
                                       |dp_k(j)|) is <= tol.
    max_iter : int

    Returns
    -------
    throughput : (C,), residence : (M, C),
    removal : (M, Jmax, C)   proportional estimate of p_k(j | n - e_c), j < J_k - 1,
                             before any correction (Linearizer measures its error),
    iterations : int, error : float (the estimated remaining error, see
    :func:`estimated_error`).
    """
    M, C = demand.shape
    jmax = capacity.shape[1]
    total = 0.0
    for c in range(C):
        total += population[c]
    alone = total <= 1.0  # an arriving customer finds the network empty: exact estimates

    # R = D [ (1 + Q(n - e_c)) / alpha_J + sum_{j=1}^{J-1} j (1/alpha_j - 1/alpha_J) p(j-1|n - e_c) ]
    inv_last = np.empty(M)
    coef = np.zeros((M, jmax))
    for k in range(M):
        J = cap_len[k]
        inv_last[k] = 1.0 / capacity[k, J - 1]
        for j in range(1, J):
            coef[k, j - 1] = j * (1.0 / capacity[k, j - 1] - inv_last[k])

    throughput = np.zeros(C)
    residence = np.zeros((M, C))
    removal = np.zeros((M, jmax, C))
    station_queue = np.empty(M)
    work_u = np.empty(jmax)
    work_v = np.empty(jmax)
    iterations = 0
    change = np.inf
    error = np.inf
    relaxation = 1.0
    while iterations < max_iter:
        previous = change
        iterations += 1
        for k in range(M):
            s = 0.0
            for c in range(C):
                s += queue[k, c]
            station_queue[k] = s
        for k in range(M):
            J = cap_len[k]
            for c in range(C):
                n_c = population[c]
                d = demand[k, c]
                if n_c == 0.0:
                    residence[k, c] = 0.0
                    continue
                if is_delay[k]:
                    residence[k, c] = d
                    continue
                share = queue[k, c] / n_c  # P(a given class-c customer is at k)
                if alone:
                    seen = 0.0
                else:
                    seen = station_queue[k] - share + queue_correction[k, c]
                    if seen < 0.0:
                        seen = 0.0
                arriving = 1.0 + seen  # mean customers once the arrival has joined
                r = 0.0
                if J > 1:
                    # Remove one class-c customer: given j customers at k, it is one of
                    # them with probability t(j) = min(j share / Q_k, 1).
                    ratio = share / station_queue[k] if station_queue[k] > 0.0 else 0.0
                    head_mass = 0.0
                    head_moment = 0.0
                    for j in range(J - 1):
                        if alone:
                            est = 1.0 if j == 0 else 0.0
                            removal[k, j, c] = est
                        else:
                            est = marginal[k, j] * (1.0 - min(j * ratio, 1.0)) \
                                + marginal[k, j + 1] * min((j + 1) * ratio, 1.0)
                            removal[k, j, c] = est
                            est += marginal_correction[k, j, c]
                            if est < 0.0:
                                est = 0.0
                        r += coef[k, j] * est
                        head_mass += est
                        head_moment += (j + 1) * est
                    # The mean and the head come from different estimates; keep them
                    # consistent: the tail (j >= J - 1 found) holds at least J each.
                    floor = head_moment + J * max(0.0, 1.0 - head_mass)
                    if arriving < floor:
                        arriving = floor
                residence[k, c] = d * (r + arriving * inv_last[k])
        change = 0.0
        for c in range(C):
            if population[c] == 0.0:
                throughput[c] = 0.0
                continue
            cycle = think[c]
            for k in range(M):
                cycle += residence[k, c]
            x = population[c] / cycle
            if throughput[c] > 0.0:
                change = max(change, abs(x - throughput[c]) / x)
            else:
                change = np.inf
            throughput[c] = x
        for k in range(M):
            for c in range(C):
                if population[c] == 0.0:
                    queue[k, c] = 0.0
                    continue
                q = queue[k, c] + relaxation * (throughput[c] * residence[k, c] - queue[k, c])
                change = max(change, abs(q - queue[k, c]) / population[c])
                queue[k, c] = q
        for k in range(M):
            if cap_len[k] >= 2 and not is_delay[k]:
                change = max(change, _update_marginal(k, cap_len[k], capacity, demand, throughput, queue,
                                                      population, marginal_correction, total, alone,
                                                      work_u, work_v, relaxation, marginal))
        error, contracting = estimated_error(change, previous, relaxation)
        if not contracting and iterations > 10:
            relaxation = damped(relaxation)  # a cycle: damp the queue and marginal updates
        if error <= tol:
            break
    return throughput, residence, removal, iterations, error


@_jit
def _update_marginal(k, J, capacity, demand, throughput, queue, population, marginal_correction, total,
                     alone, u, v, relaxation, marginal):
    """Marginal p_k(0..J-1 | n) consistent with the current throughputs and queue lengths;
    returns the largest change.

    p(j|n) = sum_c X_c D_kc p(j-1 | n - e_c) / alpha_j (j >= 1) with the arrival-instant
    estimate p(j-1 | n - e_c) = p(j-1)(1 - t_c(j-1)) + p(j) t_c(j) + G_c(j-1), where
    t_c(j) = min(j r_c, 1), r_c = (Q_kc / n_c) / Q_k, is linear in p: solved exactly, p(j) = u_j p(0) + v_j, then
    p(0) from the utilisation law sum_j alpha(j) p(j) = sum_c X_c D_kc.  (Iterating
    p(j) <- p(j-1) instead shifts the distribution by one place per iteration and
    oscillates.)  When the head covers every possible count (n's total <= J - 1), p(0)
    comes from normalisation instead, which keeps the distribution proper.
    """
    C = demand.shape[1]
    station_queue = 0.0
    load = 0.0
    for c in range(C):
        station_queue += queue[k, c]
        load += throughput[c] * demand[k, c]
    alpha_last = capacity[k, J - 1]
    u[0] = 1.0
    v[0] = 0.0
    for j in range(1, J):
        alpha_j = capacity[k, j - 1]
        if j > total:
            u[j] = 0.0
            v[j] = 0.0
        elif alone:  # the arrival-instant estimate is exact: the network is empty
            u[j] = 0.0
            v[j] = load / alpha_j if j == 1 else 0.0
        else:
            stay, leave, correction = _transition_terms(k, j, demand, throughput, queue, population,
                                                        station_queue, marginal_correction)
            rest = alpha_j - leave
            if rest < 1e-6 * alpha_j:
                # nearly all of this station's customers never leave it: the forward
                # recursion is singular; solve the whole system with pivoting instead
                return _update_marginal_dense(k, J, capacity, demand, throughput, queue, population,
                                              marginal_correction, total, station_queue, load, relaxation,
                                              marginal)
            u[j] = stay * u[j - 1] / rest
            v[j] = (stay * v[j - 1] + correction) / rest
    weight = 0.0
    if total <= J - 1:  # the head is the whole distribution: normalise it
        free = 1.0
        for j in range(J):
            weight += u[j]
            free -= v[j]
    else:
        free = alpha_last - load
        for j in range(J):
            alpha_j = capacity[k, j - 1] if j > 0 else 0.0
            weight += (alpha_last - alpha_j) * u[j]
            free -= (alpha_last - alpha_j) * v[j]
    # (weight < 0 is legitimate for a capacity function that decreases somewhere)
    p0 = free / weight if weight != 0.0 else 0.0
    if p0 < 0.0:
        p0 = 0.0
    for j in range(J):
        u[j] = u[j] * p0 + v[j]
    return _store_marginal(k, J, u, relaxation, marginal)


@_jit
def _update_marginal_dense(k, J, capacity, demand, throughput, queue, population, marginal_correction,
                           total, station_queue, load, relaxation, marginal):
    """The system of :func:`_update_marginal` (J recursion and utilisation-law rows) solved
    by LU with partial pivoting; for the near-singular cases only (O(J^3))."""
    alpha_last = capacity[k, J - 1]
    system = np.zeros((J, J))
    rhs = np.zeros(J)
    if total <= J - 1:
        system[0, :] = 1.0
        rhs[0] = 1.0
    else:
        for j in range(J):
            system[0, j] = alpha_last - (capacity[k, j - 1] if j > 0 else 0.0)
        rhs[0] = alpha_last - load
    for j in range(1, J):
        if j > total:
            system[j, j] = 1.0
            continue
        stay, leave, correction = _transition_terms(k, j, demand, throughput, queue, population,
                                                    station_queue, marginal_correction)
        system[j, j] = capacity[k, j - 1] - leave
        system[j, j - 1] = -stay
        rhs[j] = correction
    return _store_marginal(k, J, np.linalg.lstsq(system, rhs)[0], relaxation, marginal)


@_jit
def _transition_terms(k, j, demand, throughput, queue, population, station_queue, marginal_correction):
    """Coefficients of row j of the marginal system: the rate into j from j - 1 (stay),
    the rate out of j that removes the tagged customer (leave), and the Linearizer
    correction term."""
    stay = 0.0
    leave = 0.0
    correction = 0.0
    for c in range(demand.shape[1]):
        if population[c] > 0.0:
            x_d = throughput[c] * demand[k, c]
            r_c = queue[k, c] / (population[c] * station_queue) if station_queue > 0.0 else 0.0
            stay += x_d * (1.0 - min((j - 1) * r_c, 1.0))
            leave += x_d * min(j * r_c, 1.0)
            correction += x_d * marginal_correction[k, j - 1, c]
    return stay, leave, correction


@_jit
def _store_marginal(k, J, values, relaxation, marginal):
    """Write the (clipped at 0, relaxed) new marginal p_k(0..J-1); return the largest change."""
    change = 0.0
    for j in range(J):
        p = values[j] if values[j] > 0.0 else 0.0
        p = marginal[k, j] + relaxation * (p - marginal[k, j])
        change = max(change, abs(p - marginal[k, j]))
        marginal[k, j] = p
    return change
