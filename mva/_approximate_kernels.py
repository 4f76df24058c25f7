"""Numeric kernel of approximate MVA (numba).  Private: :mod:`mva.approximate` validates
and drives it; see there for the method and its references."""
from __future__ import annotations

import math

import numpy as np

from ._exact_kernels import _jit

#: How a priority station's higher levels preempt an arrival (``preemption`` argument):
#: Bryant et al.'s completion-time factor with the higher classes' utilisation (pessimistic
#: for low classes in closed networks), Chandy & Lakshmi's with the higher customers found
#: at the station removed (optimistic near saturation, where it can put a server above
#: 1), or the two blended by the higher classes' utilisation (the default: Chandy &
#: Lakshmi's when the higher levels are light, Bryant et al.'s as they saturate the server;
#: chosen on tuning networks, see ``benchmarks/accuracy_nonproduct.py``).
PREEMPT_BKLC, PREEMPT_CL, PREEMPT_BLEND = 0, 1, 2


#: a change of an iteration at rounding level: below it the ratio of changes is noise
ROUNDING = 1e-14


@_jit
def estimated_error(change, previous, relaxation):
    """Distance to the fixed point of a linearly converging iteration, and whether it
    contracts.

    With rho = change / previous (the observed contraction), the remaining error is about
    change * rho / (1 - rho); never less than the change itself, and divided by the
    relaxation factor in use (a damped step is that share of the full one).  Below a
    few ulps the ratio of changes is rounding noise, so the change is taken as it is.
    """
    if previous == np.inf or change <= ROUNDING:
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
                     marginal_correction, queue, marginal, throughput, tol, max_iter, residual, backlog, level,
                     visits, preemption, blocking):
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
    throughput : (C,) in/out           X_c(n): start values (0: unknown, as in a cold start),
                                       then the solution.  A warm start needs them: the
                                       residual-time and priority terms read them in the
                                       first iteration.
    residual : (M,) float64            (scv_k - 1) / 2 at FCFS and priority stations with
                                       non-exponential service (0 elsewhere): adds the
                                       residual-time term sum_j U_kj(n - e_c) D_kj (scv - 1)/2,
                                       U_kj(n - e_c) estimated as X_j D_kj (n_j - [j = c]) / n_j
                                       (see :func:`mva._exact_kernels.closed_lattice_mva`).
    backlog : (M,) bool                stations that are not product form (FCFS with
                                       class-dependent demands or non-exponential service,
                                       priority): an arrival waits for the work of the
                                       customers ahead of it, each with its own class's
                                       demand, not for its own demand per customer
                                       (:func:`nonproduct_residence`).
    level : (M, C) int64               priority level of each class at a priority station
                                       (lower served first, preemptive-resume); equal
                                       everywhere else.
    visits : (M, C) float64            visits per interaction (1: the demand is one visit's
                                       service); at a ``backlog`` station an arrival waits
                                       for each customer found for its class's service per
                                       visit, D_kj / V_kj, once per own visit.
    preemption : int                   :data:`PREEMPT_BKLC`, :data:`PREEMPT_CL` or
                                       :data:`PREEMPT_BLEND` (the preemption factor).
    blocking : bool                    apply the blocking correction of
                                       :func:`nonproduct_residence` (False: a variant).
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
                if backlog[k]:
                    residence[k, c] = nonproduct_residence(k, c, d, r, arriving, inv_last[k], alone, share,
                                                           station_queue[k], queue_correction[k, c], demand,
                                                           population, queue, throughput, residual[k], level, visits,
                                                           preemption, blocking)
                    continue
                residence[k, c] = d * (r + arriving * inv_last[k])
                if residual[k] != 0.0 and not alone:
                    extra = 0.0
                    for j in range(C):
                        if population[j] > 0.0:
                            kept = (population[j] - 1.0) / population[j] if j == c else 1.0
                            extra += throughput[j] * demand[k, j] * demand[k, j] * kept
                    residence[k, c] += residual[k] * extra
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
def nonproduct_residence(k, c, d, r, arriving, inv_last, alone, share, station_queue, correction, demand,
                         population, queue, throughput, residual, level, visits, preemption, blocking):
    """Residence time of class ``c`` at a station that is not product form (one visit).

    The customers an arrival finds are estimated as the product-form ones are
    (Schweitzer's removal of one class-c customer, plus Linearizer's correction shared
    over the classes in proportion to their queues), but each is worked off with its own
    class's demand and only classes of the arrival's priority level or higher count:

        R_c = [D_c + W_c + r E_c] / (1 - sum_{j in H} U_j),

    L the classes of the arrival's level or higher, H those strictly higher (they preempt
    it for as long as it stays: the completion-time factor), W_c the queueing delay of
    the product-form formula with D_c replaced by the mean demand of the L-customers found
    (a single server: W_c = sum_{j in L} D_j Q_j(n - e_c)), r = (scv - 1) / 2 and E_c the
    residual-time term: sum_{j in L} U_j(n - e_c) D_j at one server (Reiser 1979), at m
    servers Erlang's C at the offered load times the mean demand found over m.  For one
    open class at a single server this is the Pollaczek-Khinchine mean and with priority
    levels Cobham's (1954) preemptive-resume formula, exactly; in a closed network it is
    the MVA priority approximation (Bryant, Krzesinski, Lakshmi & Chandy, "The MVA
    priority approximation", ACM TOCS 2(4):335-359, 1984; ``preemption`` chooses its
    completion-time factor, Chandy & Lakshmi's or a blend, see :data:`PREEMPT_BLEND`) and
    the FCFS approximation of class-dependent service (Reiser 1979; Lazowska et al. 1984,
    sec. 7.4).  Two closed-network corrections are ours, chosen on tuning networks
    (``benchmarks/accuracy_nonproduct.py``): the residual-time term fades with the
    station's idle share, and an arrival finds fewer customers of other kinds than the
    time average (below).

    Visits (``visits``; 1 by default, where every demand is one visit's service): the
    customers found are worked off each with its class's service per visit,
    S_j = D_j / V_j, and the arrival meets them at each of its V_c visits, so D_j above
    becomes V_c S_j, W_c = V_c sum_{j in L} S_j Q_j(n - e_c) (the per-visit form of the
    FCFS approximation, Lazowska et al. 1984, sec. 7.4.2, there with R per visit), and
    the station is uniform when every class has one service per visit.  Where a class
    visits rarely with long services and another often with short ones (a bus carrying
    pages for some nodes and headers for another), one visit per interaction had every
    customer found worth only its demand per interaction of work.
    """
    if d == 0.0:
        return 0.0      # a class that does not visit the station
    C = demand.shape[1]
    mine = level[k, c]
    ahead = 0.0
    ahead_work = 0.0
    higher = 0.0
    higher_cl = 0.0
    extra = 0.0
    offered = 0.0
    busy = 0.0
    uniform = True   # one service per visit and one level for every visiting class: nothing to correct
    per_visit = visits[k, c]         # the arrival's visits: it meets the customers found at each
    service = d / per_visit
    for j in range(C):
        busy += throughput[j] * demand[k, j] * inv_last
        if population[j] > 0.0 and demand[k, j] > 0.0 and (demand[k, j] / visits[k, j] != service
                                                            or level[k, j] != mine):
            uniform = False
    # A customer cannot arrive while it waits here, so its arrivals avoid the times the
    # station works for the customers it waits behind: it finds fewer of them than the
    # time average.  Our correction (not in the literature): of the time a class-c
    # customer spends away from here, the share with a class-j customer present is
    # Q_j / (1 - q_c + x_c D_j), q_c and x_c its own share of the queue and of the
    # throughput; derived for one server, exponential service and two classes of one
    # customer each (a two-class check is within 0.3% of the simulation); never applied
    # to raise the count.  (Scaling x_c D_j by the residual life, 1 + r, over-corrects at
    # high scv: at scv 9 it pushed a station's utilisation to 1.33; dropped, which lowered
    # the variability suite's tuning error from 3.5% to 2.8%.)
    own_share = queue[k, c] / population[c]
    own_rate = throughput[c] / population[c]
    for j in range(C):
        n_j = population[j]
        if n_j == 0.0 or level[k, j] > mine:
            continue
        d_j = demand[k, j]
        # class j's work found at each of the arrival's visits, over its visits per interaction
        w_j = d_j * per_visit / visits[k, j]
        if level[k, j] < mine:
            # Chandy & Lakshmi: the higher class's utilisation with its customers found
            # here removed, X_j interpolated as X_j (n_j - Q_j) / n_j
            higher_cl += throughput[j] * d_j * max(1.0 - queue[k, j] / n_j, 0.0)
            higher += throughput[j] * d_j
        if alone:
            continue
        seen = queue[k, j] - (share if j == c else 0.0)
        if station_queue > 0.0:
            seen += correction * queue[k, j] / station_queue
        if seen < 0.0:
            seen = 0.0
        if blocking and not uniform:
            seen /= max(1.0 - own_share + own_rate * w_j, 1.0)
        ahead += seen
        ahead_work += w_j * seen
        if residual != 0.0:
            kept = (n_j - 1.0) / n_j if j == c else 1.0
            extra += throughput[j] * d_j * w_j * kept
            offered += throughput[j] * d_j * kept
    mean_d = ahead_work / ahead if ahead > 0.0 else d
    # the product-form count of customers found, with the lower levels' left out
    found_all = 0.0 if alone else max(station_queue - share + correction, 0.0)
    wait = mean_d * (r + (arriving - found_all + ahead) * inv_last - 1.0)
    if wait < 0.0:
        wait = 0.0
    if residual != 0.0 and inv_last < 1.0:
        # m servers: an arrival that finds all busy (Erlang C at the offered load) waits
        # for the first of m residual lives, mean D (1 + scv) / 2m instead of D / m
        servers = 1.0 / inv_last
        extra = erlang_c(servers, min(offered, 0.999 * servers)) * (ahead_work / offered if offered > 0.0 else d) \
            * inv_last
    # In a closed network a saturated server's throughput does not depend on its service
    # distribution: the residual-time excess fades with the station's idle share (chosen
    # on tuning networks, see mva.nonproduct).
    extra *= max(1.0 - busy, 0.0)
    free = max(1.0 - higher, 1e-6)   # (an iterate past saturation; the fixed point has sum U_H < 1)
    free_cl = max(1.0 - higher_cl, 1e-6)
    # the residual-time term is negative below scv 1 (the customer in service has less
    # than a full demand left); it cannot take more than the wait it shortens
    work = d + max(wait + residual * extra, 0.0)
    if preemption == PREEMPT_BKLC:
        return work / free
    if preemption == PREEMPT_CL:
        return work / free_cl
    # Chandy & Lakshmi near idle (their removal suits short stays), Bryant et al. as the
    # higher levels saturate the server (the low classes starve)
    return work / free_cl + higher * (work / free - work / free_cl)


@_jit
def erlang_c(servers, offered):
    """Erlang's C formula: the probability that an arrival waits at an M/M/m queue of
    m = ``servers`` (rounded to an integer) and offered load ``offered`` < m Erlangs
    (lambda x mean service time), by the stable recursion through Erlang B,
    B(k) = a B(k-1) / (k + a B(k-1))."""
    b = 1.0
    m = int(servers + 0.5)
    for k in range(1, m + 1):
        b = offered * b / (k + offered * b)
    rho = offered / m
    return b / (1.0 - rho + rho * b)


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


@_jit
def _reduced_residual(log_x, demand, is_delay, think, population, queue_correction, residence, queue, residual,
                      jacobian, want_jacobian):
    """Residual F_c = log(n_c / (Z_c + sum_k R_kc(X))) - log X_c of the approximate-MVA
    equations of a network of queues and delays, with each station's queue lengths solved
    in closed form for the throughputs X; fills ``residence``, ``queue`` and, if asked,
    ``jacobian`` dF_c/dlog X_j.  Returns False where some station would hold infinitely
    many customers (X infeasible).

    With a_c = X_c D_kc and the arrival estimate Q_k - Q_kc/n_c + F_kc (F: Linearizer's
    correction), Q_kc = b_c (1 + Q_k + F_kc), b_c = a_c / u_c, u_c = 1 + a_c/n_c, so
    Q_k = (B + sum_c b_c F_kc) / (1 - B), B = sum_c b_c < 1, and
    dQ_k/dlog X_j = (a_j / u_j^2) (1 + F_kj + Q_k) / (1 - B).
    """
    M, C = demand.shape
    x = np.empty(C)
    cycle = np.empty(C)
    for c in range(C):
        x[c] = math.exp(log_x[c]) if population[c] > 0.0 else 0.0
        cycle[c] = think[c]
    if want_jacobian:
        weight = np.zeros((M, C))      # D_kc / u_kc
        growth = np.zeros((M, C))      # dQ_k / dlog X_j
        own = np.zeros(C)              # sum_k R_kc a_kc / (n_c u_kc)
    for k in range(M):
        if is_delay[k]:
            for c in range(C):
                residence[k, c] = demand[k, c] if population[c] > 0.0 else 0.0
                queue[k, c] = x[c] * residence[k, c]
                cycle[c] += residence[k, c]
            continue
        b_sum = 0.0
        corrected = 0.0
        for c in range(C):
            if population[c] > 0.0:
                a = x[c] * demand[k, c]
                b = a / (1.0 + a / population[c])
                b_sum += b
                corrected += b * queue_correction[k, c]
        if b_sum >= 1.0:
            return False
        q_k = (b_sum + corrected) / (1.0 - b_sum)
        for c in range(C):
            if population[c] > 0.0:
                a = x[c] * demand[k, c]
                u = 1.0 + a / population[c]
                r = demand[k, c] * (1.0 + q_k + queue_correction[k, c]) / u
                residence[k, c] = r
                queue[k, c] = x[c] * r
                cycle[c] += r
                if want_jacobian:
                    weight[k, c] = demand[k, c] / u
                    growth[k, c] = a / (u * u) * (1.0 + queue_correction[k, c] + q_k) / (1.0 - b_sum)
                    own[c] += r * a / (population[c] * u)
            else:
                residence[k, c] = 0.0
                queue[k, c] = 0.0
    for c in range(C):
        residual[c] = math.log(population[c] / cycle[c]) - log_x[c] if population[c] > 0.0 else 0.0
    if want_jacobian:
        coupling = weight.T @ growth   # (C, C): sum_k D_kc/u_kc dQ_k/dlog X_j
        for c in range(C):
            for j in range(C):
                if population[c] > 0.0 and population[j] > 0.0:
                    jacobian[c, j] = -coupling[c, j] / cycle[c]
                else:
                    jacobian[c, j] = 0.0
            if population[c] > 0.0:
                jacobian[c, c] += own[c] / cycle[c] - 1.0
            else:
                jacobian[c, c] = 1.0
    return True


@_jit
def amva_newton(demand, is_delay, think, population, queue_correction, start_throughput, tol, max_iter):
    """Newton's method on the approximate-MVA equations of a network of queues and delays,
    reduced to the C class throughputs (:func:`_reduced_residual`), in log X, with the
    analytic Jacobian and a backtracking line search on |F| (Dennis & Schnabel,
    *Numerical Methods for Unconstrained Optimization and Nonlinear Equations*, 1983,
    sec. 6.3).  Converges quadratically where successive substitution oscillates near
    saturation.  Cost per iteration O(M C^2).

    Returns throughput (C,), residence (M, C), queue (M, C), iterations, error (the
    largest |F_c|, the relative change of X_c a full step would make).
    """
    M, C = demand.shape
    residence = np.zeros((M, C))
    queue = np.zeros((M, C))
    residual = np.zeros(C)
    trial = np.zeros(C)
    trial_residual = np.zeros(C)
    jacobian = np.zeros((C, C))
    log_x = np.zeros(C)
    for c in range(C):
        log_x[c] = math.log(start_throughput[c]) if population[c] > 0.0 and start_throughput[c] > 0.0 else 0.0
    # back off into the feasible region (every station below saturation)
    feasible = False
    for _ in range(200):
        if _reduced_residual(log_x, demand, is_delay, think, population, queue_correction, residence, queue,
                             residual, jacobian, True):
            feasible = True
            break
        for c in range(C):
            log_x[c] -= math.log(2.0)
    iterations = 0
    while feasible and iterations < max_iter:
        error = 0.0
        norm = 0.0
        for c in range(C):
            error = max(error, abs(residual[c]))
            norm += residual[c] * residual[c]
        if error <= tol:
            break
        iterations += 1
        direction = np.linalg.solve(jacobian, -residual)
        scale = 1.0
        accepted = False
        while scale > 1e-12:
            for c in range(C):
                trial[c] = log_x[c] + scale * direction[c]
            if _reduced_residual(trial, demand, is_delay, think, population, queue_correction, residence, queue,
                                 trial_residual, jacobian, False):
                trial_norm = 0.0
                for c in range(C):
                    trial_norm += trial_residual[c] * trial_residual[c]
                if trial_norm < (1.0 - 1e-4 * scale) * norm:
                    accepted = True
                    break
            scale *= 0.5
        if not accepted:
            break
        for c in range(C):
            log_x[c] = trial[c]
        _reduced_residual(log_x, demand, is_delay, think, population, queue_correction, residence, queue,
                          residual, jacobian, True)
    _reduced_residual(log_x, demand, is_delay, think, population, queue_correction, residence, queue, residual,
                      jacobian, False)
    error = 0.0 if feasible else np.inf
    throughput = np.zeros(C)
    for c in range(C):
        error = max(error, abs(residual[c]))
        if population[c] > 0.0:
            throughput[c] = math.exp(log_x[c])
    return throughput, residence, queue, iterations, error
