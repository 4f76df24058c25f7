"""Compiled drivers of approximate MVA (numba): one population's fixed point with its
Newton fallback, Linearizer's outer iteration, and a batch of cases with the
non-product-form variants.  Private: :mod:`mva.approximate` and :mod:`mva.batch` validate
and call them; the method and its references are in :mod:`mva.approximate`.

The arrays of a *plan* are those of :class:`mva.plan.SolverPlan` (closed part): demand
(M, C), is_delay (M,), table (M, Jmax), cap_len (M,), think (C,), residual (M,), backlog
(M,), level (M, C), visits (M, C).
"""
from __future__ import annotations

import numpy as np

from ._approximate_kernels import ROUNDING, amva_fixed_point, amva_newton, damped, estimated_error
from .jit import jit as _jit
from .jit import prange

#: Substitution steps tried before Newton on networks of queues and delays (most converge
#: in far fewer; those that do not are near saturation, where Newton converges quadratically).
SUBSTITUTION_BEFORE_NEWTON = 500
NEWTON_MAX_ITER = 200
#: Cases a batch solves in sequence, each started from the one before (a sweep's
#: neighbours are close); blocks run in parallel.  Fixed, so the answers do not depend on
#: the machine's thread count.
WARM_BLOCK = 64


@_jit
def solve_population(demand, is_delay, table, cap_len, think, population, queue_correction, marginal_correction,
                     queue, marginal, throughput, tol, max_iter, residual, backlog, level, visits, preemption, blocking):
    """The approximate-MVA fixed point at ``population`` (:func:`amva_fixed_point`,
    ``queue``, ``marginal`` and ``throughput`` in/out), finished by Newton's method on a
    network of queues and delays that substitution does not settle.

    Returns residence (M, C), removal (M, Jmax, C), iterations, Newton iterations, error.
    """
    needs_marginals = False
    for k in range(len(cap_len)):
        if cap_len[k] >= 2 and not is_delay[k]:
            needs_marginals = True
    # Newton's closed-form queue lengths hold for product-form stations only
    reducible = not needs_marginals and population.sum() > 1.0 and not backlog.any()
    budget = min(max_iter, SUBSTITUTION_BEFORE_NEWTON) if reducible else max_iter
    x, residence, removal, iterations, error = amva_fixed_point(
        demand, is_delay, table, cap_len, think, population, queue_correction, marginal_correction, queue, marginal,
        throughput, tol, budget, residual, backlog, level, visits, preemption, blocking)
    newton = 0
    if error > tol and reducible:
        nx, nr, nq, its, nerr = amva_newton(demand, is_delay, think, population, queue_correction, x, tol,
                                            NEWTON_MAX_ITER)
        iterations += its
        newton = its
        if nerr < error:
            throughput[:] = nx
            queue[:] = nq
            residence = nr
            error = nerr
    return residence, removal, iterations, newton, error


@_jit
def linearizer_queue_correction(fraction_shift, population):
    """Linearizer's term sum_i (n - e_c)_i F_kic of the estimate of Q_k(n - e_c), (M, C)."""
    M, C, _ = fraction_shift.shape
    out = np.zeros((M, C))
    for k in range(M):
        for c in range(C):
            s = -fraction_shift[k, c, c]
            for i in range(C):
                s += population[i] * fraction_shift[k, i, c]
            out[k, c] = s
    return out


@_jit
def cold_state(demand, think, population, queue, marginal, throughput):
    """A cold start: customers spread in proportion to demand (think time included), every
    station empty in the marginals, throughputs unknown (0)."""
    M, C = demand.shape
    for c in range(C):
        cycle = think[c]
        for k in range(M):
            cycle += demand[k, c]
        for k in range(M):
            queue[k, c] = demand[k, c] / cycle * population[c] if cycle > 0.0 else 0.0
        throughput[c] = 0.0
    marginal[:] = 0.0
    marginal[:, 0] = 1.0


@_jit
def linearizer(demand, is_delay, table, cap_len, think, population, residual, backlog, level, visits, preemption, blocking,
               tol, max_iter, max_outer, warm, start_change, fraction_shift, marginal_shift, queue, marginal, throughput,
               sub_queue, sub_marginal, sub_throughput):
    """Linearizer (Chandy & Neuse 1982) with the marginal corrections of Krzesinski &
    Greyling (1984): the outer iteration on the corrections F (fraction_shift, (M, C, C),
    F[k, i, c]) and G (marginal_shift, (M, Jmax, C)).

    The state is in/out: ``queue``, ``marginal``, ``throughput`` at N and ``sub_*`` at
    each N - e_c (leading axis c).  ``warm`` False: every state and correction is started
    cold here (the subs from the solution at N, scaled); True: they hold a related
    network's converged state.  ``start_change``: the last outer step of the iteration the
    warm state came from, where it came from this very network (np.inf otherwise).  Inner fixed points are solved to
    ``tol / 10``, so that their residual error does not masquerade as movement of the
    corrections.

    Returns residence (M, C), iterations, Newton iterations, outer iterations, the outer
    error estimate, whether every inner fixed point met its tolerance, the last outer step.
    """
    M, C = demand.shape
    inner_tol = tol / 10.0
    if not warm:
        fraction_shift[:] = 0.0
        marginal_shift[:] = 0.0
        cold_state(demand, think, population, queue, marginal, throughput)
    residence, removal, iterations, newton, error = solve_population(
        demand, is_delay, table, cap_len, think, population, linearizer_queue_correction(fraction_shift, population),
        marginal_shift, queue, marginal, throughput, inner_tol, max_iter, residual, backlog, level, visits, preemption,
        blocking)
    sub_population = np.empty((C, C))
    for c in range(C):
        for i in range(C):
            sub_population[c, i] = population[i] - (1.0 if i == c else 0.0)
        if not warm and population[c] > 0.0:
            for i in range(C):
                scale = sub_population[c, i] / population[i] if population[i] > 0.0 else 0.0
                for k in range(M):
                    sub_queue[c, k, i] = queue[k, i] * scale
                sub_throughput[c, i] = throughput[i] * scale
            sub_marginal[c] = marginal
    outer_error = np.inf
    change = np.inf
    relaxation = 1.0
    before_x = np.empty(C)
    before_q = np.empty((M, C))
    inner_ok = True
    outer = 0
    while outer < max_outer:
        outer += 1
        inner_ok = True
        for c in range(C):
            if population[c] <= 0.0:
                continue
            pop = sub_population[c]
            _, _, its, nits, err = solve_population(
                demand, is_delay, table, cap_len, think, pop, linearizer_queue_correction(fraction_shift, pop),
                marginal_shift, sub_queue[c], sub_marginal[c], sub_throughput[c], inner_tol, max_iter, residual,
                backlog, level, visits, preemption, blocking)
            iterations += its
            newton += nits
            inner_ok = inner_ok and err <= inner_tol
        for c in range(C):
            if population[c] <= 0.0:
                continue
            for k in range(M):
                for i in range(C):
                    pop_i = sub_population[c, i]
                    new_f = 0.0
                    if pop_i > 0.0:
                        own = queue[k, i] / population[i] if population[i] > 0.0 else 0.0
                        new_f = sub_queue[c, k, i] / pop_i - own
                    fraction_shift[k, i, c] += relaxation * (new_f - fraction_shift[k, i, c])
                for j in range(marginal_shift.shape[1]):
                    new_g = sub_marginal[c, k, j] - removal[k, j, c]
                    marginal_shift[k, j, c] += relaxation * (new_g - marginal_shift[k, j, c])
        before_x[:] = throughput
        before_q[:] = queue
        residence, removal, its, nits, err = solve_population(
            demand, is_delay, table, cap_len, think, population,
            linearizer_queue_correction(fraction_shift, population), marginal_shift, queue, marginal, throughput,
            inner_tol, max_iter, residual, backlog, level, visits, preemption, blocking)
        iterations += its
        newton += nits
        inner_ok = inner_ok and err <= inner_tol
        previous = change
        change = 0.0
        for c in range(C):
            if population[c] > 0.0:
                change = max(change, abs(throughput[c] - before_x[c]) / throughput[c])
                for k in range(M):
                    change = max(change, abs(queue[k, c] - before_q[k, c]) / population[c])
        outer_error, contracting = estimated_error(change, previous, relaxation)
        if outer == 1 and change <= tol and start_change <= tol:
            # a re-solve from this network's own converged state: the start's last step and
            # this one are two steps below the tolerance, as below.  Without the start's step
            # the first one measures nothing, and where the fixed point is only held to its
            # rounding noise (a 4-server station with 4 customers: the marginals wander by
            # 1e-8 through their clipping at zero) the re-solve went on for 12 outer steps
            # where the first solve had stopped after 2
            outer_error = change
        elif previous == np.inf or (previous <= ROUNDING < change):
            # a first step has no earlier change to measure the contraction by, and a small
            # one can hide a slow iteration (a 3-server station moved 6e-11 in its first
            # step and 1e-8 over the next ones): two steps at least.  Nor has a step after
            # one that moved nothing (below): it is no sign of oscillation, and not damped
            outer_error = np.inf
        elif change <= ROUNDING < previous and previous > tol:
            # the solution at N can stand still for a step while the solutions at N - e_c
            # and the corrections still move (two classes of one customer, where it reads
            # only the corrections F_k,i,c with i != c: steps of 6e-4, 2e-16, then 2e-5
            # again), so a step that moved nothing after one above the tolerance is no
            # sign of the fixed point
            outer_error = np.inf
        elif change <= tol and previous <= tol:
            # two steps below the tolerance (a start from the fixed point): their ratio is
            # the noise of the inner solves (to tol / 10, steps of a few times that), no
            # measure of contraction
            outer_error = change
        elif not contracting:
            relaxation = damped(relaxation)
        if outer_error <= tol and inner_ok:
            break
    return residence, iterations, newton, outer, outer_error, inner_ok, change


@_jit
def _continuation_step(demand, think, b):
    """The secant predictor's step for case ``b`` of a batch: alpha when the parameters
    (demands and think times) of cases b - 2, b - 1 and b lie on one line,
    p_b - p_{b-1} = alpha (p_{b-1} - p_{b-2}) with 0 < alpha <= 10 (to rounding), else 0
    (start from case b - 1 as it is).  The predictor's error is of the order of the
    product of the two steps, so a step up to ten times the last is still predicted
    better than by the last state alone; a step back along the line (alpha < 0, a grid's
    row starting again) is not."""
    flat, flat1, flat2 = demand[b].ravel(), demand[b - 1].ravel(), demand[b - 2].ravel()
    dot = 0.0
    norm = 0.0
    for i in range(flat.size):
        d1 = flat1[i] - flat2[i]
        dot += (flat[i] - flat1[i]) * d1
        norm += d1 * d1
    for c in range(think.shape[1]):
        d1 = think[b - 1, c] - think[b - 2, c]
        dot += (think[b, c] - think[b - 1, c]) * d1
        norm += d1 * d1
    if norm == 0.0:
        return 0.0
    alpha = dot / norm
    if not 0.0 < alpha <= 10.0:
        return 0.0
    off = 0.0
    size = 0.0
    for i in range(flat.size):
        off += (flat[i] - flat1[i] - alpha * (flat1[i] - flat2[i])) ** 2
        size += (flat[i] - flat1[i]) ** 2
    for c in range(think.shape[1]):
        off += (think[b, c] - think[b - 1, c] - alpha * (think[b - 1, c] - think[b - 2, c])) ** 2
        size += (think[b, c] - think[b - 1, c]) ** 2
    return alpha if off <= 1e-18 * size else 0.0


@_jit(parallel=True)
def batch_approximate(demand, think, is_delay, table, cap_len, population, residual, backlog, level, visits, preemption,
                      blocking, use_linearizer, tol, max_iter, max_outer, variants, throughput, residence, marginal,
                      converged, iterations, variant_throughput):
    """Cases of one network shape (cases differ in demands and think times only), each
    solved by Linearizer or Bard-Schweitzer (``use_linearizer``), then its non-product-form
    variants by Bard-Schweitzer, in blocks of :data:`WARM_BLOCK` cases in parallel.

    Within a block each case starts from the state of the one before it (corrections,
    queue lengths, marginals and throughputs, of the network and of each variant), or,
    where the last three cases' parameters lie on a line (a sweep of one value or a
    line through the grid), from the secant predictor of numerical continuation: the
    last state extrapolated along the last step (E. L. Allgower and K. Georg, *Numerical
    Continuation Methods*, Springer 1990, sec. 2.2), which leaves an error of the order
    of the step squared.  A start that does not settle is solved again from cold.

    Parameters
    ----------
    demand : (B, M, C), think : (B, C)   each case's demands and think times.
    preemption : int          the chosen form's preemption factor (``plan.preemption``).
    variants : (V, 4) int64   each variant's preemption, residual term off (1), blocking
                              correction on (1), non-product-form terms off (1): see
                              :func:`mva.nonproduct.variant_settings`.
    throughput : (B, C), residence : (B, M, C), marginal : (B, M, Jmax), converged : (B,)
    bool, iterations : (B,) int64, variant_throughput : (B, V, C)   outputs.
    """
    B, M, C = demand.shape
    jmax = table.shape[1]
    V = variants.shape[0]
    blocks = (B + WARM_BLOCK - 1) // WARM_BLOCK
    zero_residual = np.zeros(M)
    zero_backlog = np.zeros(M, dtype=np.bool_)
    # the whole state of a case in one vector: the corrections first (any sign), then
    # queue lengths, marginals and throughputs (>= 0), the network's and each variant's
    n_shift = M * C * C + M * jmax * C
    one = M * C + M * jmax + C
    size = n_shift + (C + 1) * one + V * one
    for block in prange(blocks):
        state = np.zeros(size)
        last = np.zeros(size)
        fraction_shift = state[:M * C * C].reshape((M, C, C))
        marginal_shift = state[M * C * C:n_shift].reshape((M, jmax, C))
        at = n_shift
        queue = state[at:at + M * C].reshape((M, C))
        marg = state[at + M * C:at + M * C + M * jmax].reshape((M, jmax))
        x = state[at + one - C:at + one]
        at += one
        sub_queue = np.zeros((C, M, C))     # solved in place, copied into the state after
        sub_marginal = np.zeros((C, M, jmax))
        sub_x = np.zeros((C, C))
        v_queue = np.zeros((V, M, C))
        v_marginal = np.zeros((V, M, jmax))
        v_x = np.zeros((V, C))
        no_queue_correction = np.zeros((M, C))
        no_marginal_correction = np.zeros((M, jmax, C))
        chained = 0     # cases solved in a row from the one before, whose states the predictor may use
        start = block * WARM_BLOCK
        for b in range(start, min(B, (block + 1) * WARM_BLOCK)):
            d = demand[b]
            z = think[b]
            warm = chained > 0
            alpha = _continuation_step(demand, think, b) if chained > 1 else 0.0
            for i in range(size):
                before = state[i]
                if alpha > 0.0:
                    step = before + alpha * (before - last[i])
                    state[i] = step if i < n_shift or step > 0.0 else 0.0
                last[i] = before
            if warm:
                _transfer(state, n_shift, one, M, C, jmax, sub_queue, sub_marginal, sub_x, v_queue, v_marginal, v_x, False)
            for _attempt in range(2):
                if use_linearizer:
                    r, its, _, _, outer_error, inner_ok, _ = linearizer(
                        d, is_delay, table, cap_len, z, population, residual, backlog, level, visits, preemption, blocking,
                        tol, max_iter, max_outer, warm, np.inf, fraction_shift, marginal_shift, queue, marg, x, sub_queue,
                        sub_marginal, sub_x)
                    ok = inner_ok and outer_error <= tol
                else:
                    if not warm:
                        cold_state(d, z, population, queue, marg, x)
                    r, _, its, _, err = solve_population(
                        d, is_delay, table, cap_len, z, population, no_queue_correction, no_marginal_correction,
                        queue, marg, x, tol, max_iter, residual, backlog, level, visits, preemption, blocking)
                    ok = err <= tol
                iterations[b] += its
                if ok or not warm:
                    break
                warm = False        # a warm start that did not settle: once more from cold
            throughput[b] = x
            residence[b] = r
            marginal[b] = marg
            converged[b] = ok
            for v in range(V):
                if not warm:
                    cold_state(d, z, population, v_queue[v], v_marginal[v], v_x[v])
                off = variants[v, 3] == 1
                _, _, its, _, _ = solve_population(
                    d, is_delay, table, cap_len, z, population, no_queue_correction, no_marginal_correction,
                    v_queue[v], v_marginal[v], v_x[v], tol, max_iter,
                    zero_residual if off or variants[v, 1] == 1 else residual, zero_backlog if off else backlog,
                    level, visits, variants[v, 0], variants[v, 2] == 1)
                iterations[b] += its
                variant_throughput[b, v] = v_x[v]
            # the predictor extrapolates from the last two states of one chain only
            chained = chained + 1 if warm else 1
            _transfer(state, n_shift, one, M, C, jmax, sub_queue, sub_marginal, sub_x, v_queue, v_marginal, v_x, True)


@_jit
def _transfer(state, n_shift, one, M, C, jmax, sub_queue, sub_marginal, sub_x, v_queue, v_marginal, v_x, pack):
    """Copy the states at N - e_c and of the variants into ``state``, after the network's
    (``pack``), or back out of it."""
    at = n_shift + one
    for group in range(C + v_x.shape[0]):
        q = sub_queue[group] if group < C else v_queue[group - C]
        m = sub_marginal[group] if group < C else v_marginal[group - C]
        xs = sub_x[group] if group < C else v_x[group - C]
        flat_q = state[at:at + M * C].reshape((M, C))
        flat_m = state[at + M * C:at + M * C + M * jmax].reshape((M, jmax))
        flat_x = state[at + one - C:at + one]
        if pack:
            flat_q[:] = q
            flat_m[:] = m
            flat_x[:] = xs
        else:
            q[:] = flat_q
            m[:] = flat_m
            xs[:] = flat_x
        at += one
