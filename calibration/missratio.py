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
* AVG predicts each thread alone in cache/N and averages.

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
           "reference_weights", "MODELS", "METHODS"]

MODELS = ("lru", "statcache")
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
    if assoc is None or assoc >= lines:
        missed = counts[d][distance >= lines].sum()
    else:
        from scipy.stats import binom

        sets = max(int(round(lines / assoc)), 1)
        p_miss = binom.sf(assoc - 1, np.floor(distance), 1.0 / sets) if sets > 1 else (distance >= assoc) * 1.0
        missed = float(np.dot(counts[d], p_miss))
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
        raise ModelError("method", f"unknown co-scheduling method {method!r}; choose {', '.join(METHODS)}")
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
