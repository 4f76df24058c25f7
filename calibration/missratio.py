"""Miss ratios of caches from reuse profiles, alone and shared by co-scheduled threads.

Single-thread models (``profile`` is a :class:`~calibration.sim.reuse.ReuseProfile`):

* :func:`lru_miss_ratio`: the LRU stack model.  Exact profiles give a fully-associative
  LRU cache's misses exactly (Mattson, Gecsei, Slutz & Traiger, IBM Systems Journal 9(2),
  1970); with ``assoc`` the set-associative estimate of Hill & Smith ("Evaluating
  associativity in CPU caches", IEEE Trans. Computers 38(12), 1989): a reference at
  stack distance d misses in an S-set A-way LRU cache with probability
  P[Binomial(d, 1/S) >= A] (blocks spread uniformly over the sets).  Sampled profiles use
  StatStack's expected stack distance (Eklov & Hagersten, "StatStack: efficient modeling
  of LRU caches", ISPASS 2010): a reuse of distance r has E[stack distance] =
  sum_{k<r} P(reuse distance > k).
* :func:`statcache_miss_ratio`: StatCache's random-replacement model (Berg & Hagersten,
  "StatCache: a probabilistic approach to efficient and accurate data locality
  analysis", ISPASS 2004): with L lines, a line survives one miss with probability
  1 - 1/L, so a reference of reuse distance r misses with probability
  f(r) = 1 - (1 - 1/L)^(r R), where R is the miss ratio itself; R solves
  R = cold + sum_r w(r) f(r).

Co-scheduled threads sharing one cache (Fedorova, Seltzer, Small & Nussbaum,
"Throughput-oriented scheduling on chip multithreading systems", Harvard TR-17-04,
2004, §6.3):

* COMB combines the threads' histograms with every distance multiplied by ``scale``
  (N or N - 1 for N threads; the paper found N - 1 better for larger caches), and solves
  the model once on the combination;
* AVG predicts each thread alone in cache/N and averages;
* RATE (ours, after StatStack's footprint and the interleaving of Chandra, Guo, Kim &
  Solihin, "Predicting inter-thread cache contention on a chip multi-processor
  architecture", HPCA 2005): a reuse of thread i over r of its own references sees,
  besides its own F_i(r) distinct blocks, the F_j(r a_j / a_i) blocks each co-runner j
  touches in the same time, a_j being j's references per cycle and F the expected
  footprint of a window (:func:`footprint`); it misses when their sum reaches the cache's
  lines.  Unlike COMB's scale N - 1 it lets a thread that rarely reaches the cache
  disturb the others little.

Both weight thread i by its share of the group's references, ``weights`` (default:
references per instruction, i.e. threads retiring instructions at equal rates).  The paper averages with equal
weights; the simulator's group miss ratio is total misses over total references, so a
thread that stalls on its misses weighs less than its references per instruction say:
:func:`calibration.profiles.cmt_core.group_prediction` takes the shares from the CMT core
model's throughputs instead.
"""
from __future__ import annotations

import math

import numpy as np

from mva.errors import ModelError

__all__ = ["lru_miss_ratio", "statcache_miss_ratio", "statstack_miss_ratio", "group_miss_ratio",
           "rate_miss_ratios", "working_set_miss_ratio", "footprint", "reference_weights", "MODELS", "METHODS"]

MODELS = ("lru", "statcache")
#: The methods of :func:`group_miss_ratio`; RATE, which needs the threads' rates, is
#: :func:`rate_miss_ratios`.
METHODS = ("avg", "comb")


def _lines(profile, cache_bytes) -> float:
    lines = cache_bytes / profile.block
    if lines < 1:
        raise ModelError("cache", f"{cache_bytes} bytes holds no {profile.block}-byte block")
    return lines


def lru_miss_ratio(profile, cache_bytes: float, assoc: int | None = None, scale: float = 1.0) -> float:
    """Misses per reference of an LRU cache of ``cache_bytes`` (fully associative, or
    ``assoc``-way with cache/(block x assoc) sets), every stack distance multiplied by
    ``scale`` (COMB's interleaving; 1 alone)."""
    lines = _lines(profile, cache_bytes)
    if profile.references == 0:
        return 0.0
    if not profile.exact:
        return statstack_miss_ratio(profile, cache_bytes, scale=scale)
    counts = profile.stack_counts
    d = np.flatnonzero(counts)
    distance = d * scale
    missed = float(np.dot(counts[d], _miss_probability(distance, lines, assoc)))
    return float((profile.cold + missed) / profile.references)


def _expected_stack_distance(distance, weight, cold):
    """StatStack: E[stack distance] at each (sorted) reuse distance, from the step
    survival function P(RD > k) = cold + sum of weights of distances above k."""
    order = np.argsort(distance)
    r, w = distance[order], weight[order]
    survival_after = cold + (w.sum() - np.cumsum(w))         # P(RD > r_m), constant on [r_m, r_{m+1})
    survival_before = survival_after + w                      # P(RD >= r_m) on [r_{m-1}, r_m)
    # integral of the survival function from 0 to r_m; below r_0 it is P(RD >= r_0)
    widths = np.diff(np.concatenate([[0.0], r]))
    steps = np.concatenate([[survival_before[0]], survival_after[:-1]]) if r.size else r
    sd = np.cumsum(widths * steps)
    out = np.empty_like(sd)
    out[order] = sd
    return out


#: Fewest samples a sampled profile needs for a StatStack estimate: with none, every cache
#: size came out as a miss ratio of exactly 1 (all "cold").
MIN_SAMPLES = 100


def statstack_miss_ratio(profile, cache_bytes: float, scale: float = 1.0) -> float:
    """LRU misses per reference from a reuse-distance distribution (StatStack); a
    :class:`ModelError` naming ``sample`` when the profile drew fewer than
    :data:`MIN_SAMPLES` samples."""
    if profile.samples < MIN_SAMPLES:
        rate = profile.sample_rate
        raise ModelError("sample", f"a rate of {rate:g} drew {profile.samples} samples of {profile.references:,} "
                                   f"references, fewer than {MIN_SAMPLES} for an estimate; raise it to at least "
                                   f"{min(1.0, 2 * MIN_SAMPLES / max(profile.references, 1)):.2g}")
    lines = _lines(profile, cache_bytes)
    r, w, cold = profile.reuse_distribution()
    if r.size == 0:
        return float(cold)
    sd = _expected_stack_distance(r * scale, w, cold)
    return float(cold + w[sd >= lines].sum())


def _statcache_solve(parts, lines: float) -> tuple[float, list]:
    """The StatCache fixed point for references of several threads: ``parts`` is a list
    of (share, distance, weight, cold); returns (R, per-thread miss ratios)."""
    from scipy.optimize import brentq

    keep = 1.0 - 1.0 / lines
    log_keep = math.log(keep) if keep > 0 else -math.inf

    def per_thread(ratio):
        out = []
        for _, r, w, cold in parts:
            if log_keep == -math.inf:
                out.append(1.0)
                continue
            out.append(cold + float(np.dot(w, -np.expm1(r * ratio * log_keep))))
        return out

    def excess(ratio):
        return sum(s * m for (s, *_), m in zip(parts, per_thread(ratio), strict=False)) - ratio

    low = 1e-12
    if excess(low) <= 0:              # no positive root: nothing but hits beyond the cold misses
        ratio = max(sum(s * c for s, _, _, c in parts), 0.0)
        return ratio, per_thread(ratio)
    ratio = brentq(excess, low, 1.0, xtol=1e-12, rtol=1e-10) if excess(1.0) < 0 else 1.0
    return ratio, per_thread(ratio)


def statcache_miss_ratio(profile, cache_bytes: float, scale: float = 1.0) -> float:
    """Misses per reference of a random-replacement cache of ``cache_bytes`` (StatCache)."""
    lines = _lines(profile, cache_bytes)
    r, w, cold = profile.reuse_distribution()
    return _statcache_solve([(1.0, r * scale, w, cold)], lines)[0]


def footprint(profile, window) -> np.ndarray:
    """Expected distinct blocks in a window of ``window`` references (array or scalar) of
    ``profile``'s stream: the integral of P(reuse distance > k) over k < window
    (StatStack's identity, Eklov & Hagersten 2010), from the binned reuse distances."""
    x = np.asarray(window, float)
    r, w, cold = profile.reuse_distribution()
    if r.size == 0:                  # no re-reference: every reference is a new block
        return x * cold
    order = np.argsort(r)
    r, w = r[order], w[order]
    # survival on [r_{m-1}, r_m) is cold + the weight of distances >= r_m
    survival = cold + (w.sum() - np.concatenate([[0.0], np.cumsum(w)[:-1]]))
    edges = np.concatenate([[0.0], r])
    integral = np.concatenate([[0.0], np.cumsum(np.diff(edges) * survival)])
    m = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, r.size)
    tail = np.where(m < r.size, survival[np.minimum(m, r.size - 1)], cold)
    return integral[m] + (x - edges[m]) * tail


def _miss_probability(distance, lines: float, assoc: int | None):
    """P(miss) of a reference at (expected) stack distance ``distance`` in an LRU cache of
    ``lines`` lines: a step at ``lines`` when fully associative, Hill & Smith's
    P[Binomial(d, 1/S) >= A] with S = lines / A sets when ``assoc`` is given."""
    d = np.asarray(distance, float)
    if assoc is None or assoc >= lines:
        return (d >= lines) * 1.0
    from scipy.stats import binom

    sets = max(int(round(lines / assoc)), 1)
    return binom.sf(assoc - 1, np.floor(d), 1.0 / sets) if sets > 1 else (d >= assoc) * 1.0


def rate_miss_ratios(profiles, cache_bytes: float, access_rates, assoc: int | None = None) -> np.ndarray:
    """Each thread's misses per reference in an LRU cache of ``cache_bytes`` (fully
    associative, or ``assoc``-way) shared with the others (RATE in the module
    docstring); ``access_rates``: each thread's references to the cache per cycle."""
    lines = _lines(profiles[0], cache_bytes)
    a = np.asarray(access_rates, float)
    out = np.zeros(len(profiles))
    for i, p in enumerate(profiles):
        if p.references == 0:
            continue
        r, w, cold = p.reuse_distribution()
        if a[i] <= 0:
            out[i] = 1.0
            continue
        reach = footprint(p, r)
        for j, q in enumerate(profiles):
            if j != i and q.references > 0 and a[j] > 0:
                reach = reach + footprint(q, r * a[j] / a[i])
        out[i] = cold + float(np.dot(w, _miss_probability(reach, lines, assoc)))
    return out


def reference_weights(profiles) -> np.ndarray:
    """Each thread's share of a group's references when all retire instructions at the
    same rate: references per instruction, normalised."""
    w = np.array([p.references_per_instruction for p in profiles], dtype=float)
    return w / w.sum()


def group_miss_ratio(profiles, cache_bytes: float, method: str = "avg", model: str = "lru",
                     scale: float | None = None, assoc: int | None = None, weights=None):
    """Predicted miss ratio of threads sharing a cache: (group misses per reference,
    array of each thread's).  ``method`` avg or comb; ``model`` lru (exact or StatStack)
    or statcache; ``scale`` COMB's distance multiplier (default N - 1, at least 1);
    ``assoc`` for the LRU set-associative estimate."""
    if method not in METHODS:
        raise ModelError("method", f"unknown co-scheduling method {method!r}; choose {', '.join(METHODS)} "
                                   "(rate needs the threads' access rates: rate_miss_ratios)")
    if model not in MODELS:
        raise ModelError("model", f"unknown cache model {model!r}; choose {', '.join(MODELS)}")
    profiles = list(profiles)
    if not profiles:
        raise ModelError("profiles", "a group needs at least one thread")
    n = len(profiles)
    share = reference_weights(profiles) if weights is None else np.asarray(weights, float) / np.sum(weights)
    if method == "avg":
        part = cache_bytes / n
        if model == "lru":
            each = np.array([lru_miss_ratio(p, part, assoc=assoc) for p in profiles])
        else:
            each = np.array([statcache_miss_ratio(p, part) for p in profiles])
        return float(np.dot(share, each)), each
    scale = max(n - 1, 1) if scale is None else scale
    if model == "lru":
        each = np.array([lru_miss_ratio(p, cache_bytes, assoc=assoc, scale=scale) for p in profiles])
        return float(np.dot(share, each)), each
    parts = []
    for s, p in zip(share, profiles, strict=False):
        r, w, cold = p.reuse_distribution()
        parts.append((s, r * scale, w, cold))
    ratio, each = _statcache_solve(parts, _lines(profiles[0], cache_bytes))
    return ratio, np.array(each)


def working_set_miss_ratio(profiles, cache_bytes: float, window: float, assoc: int | None = None,
                           weights=None) -> float:
    """The working-set model's miss ratio of threads sharing a cache (Denning, "The working
    set model for program behavior", CACM 11(5), 1968; set mapping as in Agarwal,
    Horowitz & Hennessy, "An analytical cache model", ACM TOCS 7(2), 1989), the model
    Fedorova et al. (§6.1) found wrong by about a factor of two.

    In a window of ``window`` references of the group, thread i makes ``window x w_i``
    (``weights``: shares of the references, default equal) and touches its working set
    u_i = F_i(window w_i) (:func:`footprint`); the group's working set is u = sum u_i.
    References are spread uniformly over it (Denning's assumption), so they miss in
    the share of it the cache cannot hold: 1 - C/u when fully associative, and with
    ``assoc`` ways in S sets the share of u's blocks beyond A in their set, u blocks
    falling binomially on the sets (AHH's intrinsic interference): 1 - S E[min(X, A)] / u
    with X ~ Binomial(u, 1/S)."""
    profiles = list(profiles)
    share = np.full(len(profiles), 1.0 / len(profiles)) if weights is None else np.asarray(weights, float) / np.sum(weights)
    u = sum(float(footprint(p, window * s)) for p, s in zip(profiles, share, strict=True) if p.references)
    lines = _lines(profiles[0], cache_bytes)
    if u <= 0:
        return 0.0
    if assoc is None or assoc >= lines:
        return max(0.0, 1.0 - lines / u)
    from scipy.stats import binom

    sets = max(int(round(lines / assoc)), 1)
    n = max(int(round(u)), 1)
    k = np.arange(assoc)
    resident = sets * float(np.dot(k, binom.pmf(k, n, 1.0 / sets)) + assoc * binom.sf(assoc - 1, n, 1.0 / sets))
    return max(0.0, 1.0 - resident / n)
