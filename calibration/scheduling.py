"""Balance-set scheduling of threads on a chip-multithreading processor (Fedorova, Seltzer,
Small & Nussbaum, "Throughput-oriented scheduling on chip multithreading systems",
Harvard TR-17-04, 2004, §6.4, after Denning's balance-set principle, "Thrashing: its
causes and prevention", AFIPS FJCC 1968).

Every group of ``contexts`` threads (one per hardware context of a core) gets a predicted
L2 miss rate from the threads' reuse profiles (:func:`group_prediction`: COMB or AVG of
:mod:`calibration.missratio`, weighted by the CMT core model's reference rates; L2
misses over L1 misses as the simulator counts them).
Groups under a threshold are *admissible*; the default threshold is the lowest that
leaves every thread in some admissible group (the paper chose its thresholds "as low as
possible" without excluding a workload, Table 5).  Two policies pick one group per time
slice:

* ``perf``: the admissible groups in increasing predicted miss rate, keeping a group
  only if it is the best or brings a thread not yet covered, so no thread starves; the
  schedule cycles through that cover;
* ``fair``: each slice, the admissible group whose threads have been picked least often
  (sum of their counts), ties to the lower predicted miss rate.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

from mva.errors import ModelError

from .missratio import group_miss_ratio

__all__ = ["thread_profiles", "core_model", "group_prediction", "predict_groups", "default_threshold", "balance_set_schedule", "POLICIES"]

POLICIES = ("perf", "fair")


def thread_profiles(workload, block: int = 64) -> list:
    """Each thread's steady-state reuse profile, alone: data references, ``block`` bytes,
    the trace looped as the CMT machine runs it."""
    from .sim.reuse import reuse_profile

    return [reuse_profile(p.open, block=block, data_only=True, looped=True, name=p.name) for p in workload.processes]


def core_model(memory_instructions, l1_misses, l2_misses, config):
    """The CMT core model (:class:`models.cmt_core.CMTCore`) of threads on one core of
    ``config``, with memory instructions and L1 and L2 misses per instruction."""
    from models.cmt_core import CMTCore

    return CMTCore({"threads.core": [0] * len(memory_instructions),
                    "threads.memory_instructions": [float(v) for v in memory_instructions],
                    "threads.l1_misses": [float(v) for v in l1_misses],
                    "threads.l2_misses": [float(v) for v in l2_misses],
                    "latency.l1": config.l1_latency, "latency.l2": config.l2_latency,
                    "latency.memory": config.memory_latency, "line_cycles": config.line_cycles})


def group_prediction(profiles, config, method: str = "avg", model: str = "lru") -> dict:
    """Predicted L1 and L2 behaviour and IPC of threads sharing one core of ``config``
    (a :class:`~calibration.sim.cmt.CMTConfig`), from their reuse profiles alone.

    Each thread's misses per data reference come from COMB or AVG at the L1 and L2 sizes
    (the L2 as a cache of its size on the whole stream, by LRU inclusion); the CMT core
    model (:mod:`models.cmt_core`) turns them into each thread's instruction rate, and
    the threads' shares of the references (rate x references per instruction) weight
    the group's miss ratios.  Returns ``l1_miss_ratio`` and ``l2_misses_per_reference``
    (per data reference), ``l2_miss_ratio`` (per L2 access), ``ipc``, and per thread
    ``thread_l1`` / ``thread_l2`` (misses per reference) and ``thread_ipc``.
    """
    _, each1 = group_miss_ratio(profiles, config.l1, method, model)
    _, each2 = group_miss_ratio(profiles, config.l2, method, model)
    each2 = np.minimum(each2, each1)
    per_instruction = np.array([p.references_per_instruction for p in profiles])
    memory = [p.memory_instructions_per_instruction for p in profiles]
    solution = core_model(memory, each1 * per_instruction, each2 * per_instruction, config).solve().outputs
    rate = np.array(list(solution["thread_ipc"].values()))
    share = rate * per_instruction
    share = share / share.sum()
    m1, m2 = float(np.dot(share, each1)), float(np.dot(share, each2))
    return {"l1_miss_ratio": m1, "l2_misses_per_reference": m2, "l2_miss_ratio": m2 / m1 if m1 > 0 else 0.0,
            "ipc": solution["ipc"], "thread_l1": each1, "thread_l2": each2, "thread_ipc": rate}


def predict_groups(profiles, config, method: str = "avg", model: str = "lru") -> dict:
    """{group (tuple of thread indices): predicted L2 miss ratio} for every group of
    ``config.contexts`` threads (all threads if there are fewer), on one core."""
    n = len(profiles)
    size = min(config.contexts, n)
    return {g: group_prediction([profiles[i] for i in g], config, method, model)["l2_miss_ratio"]
            for g in combinations(range(n), size)}


def default_threshold(predicted: dict, threads: int) -> float:
    """The lowest threshold that leaves every thread in an admissible group."""
    return max(min(v for g, v in predicted.items() if t in g) for t in range(threads))


def balance_set_schedule(predicted: dict, threads: int, policy: str = "perf", slices: int | None = None,
                         threshold: float | None = None) -> tuple[list, float]:
    """Groups to run, one per slice, and the threshold used.  ``perf`` returns its cover
    (the simulator cycles through it); ``fair`` returns ``slices`` picks (default
    4 x threads)."""
    if policy not in POLICIES:
        raise ModelError("policy", f"unknown balance-set policy {policy!r}; choose {', '.join(POLICIES)}")
    cut = default_threshold(predicted, threads) if threshold is None else threshold
    admissible = sorted(((v, g) for g, v in predicted.items() if v <= cut + 1e-12))
    covered = set().union(*(g for _, g in admissible)) if admissible else set()
    if len(covered) < threads:
        raise ModelError("threshold", f"{cut:.4g} leaves thread(s) {sorted(set(range(threads)) - covered)} in no "
                                      "admissible group")
    if policy == "perf":
        chosen, seen = [], set()
        for v, g in admissible:
            if not chosen or set(g) - seen:
                chosen.append(g)
                seen |= set(g)
            if len(seen) == threads:
                break
        return chosen, cut
    picks = np.zeros(threads, dtype=np.int64)
    schedule = []
    for _ in range(slices or 4 * threads):
        v, g = min(admissible, key=lambda vg: (int(picks[list(vg[1])].sum()), vg[0]))
        picks[list(g)] += 1
        schedule.append(g)
    return schedule, cut
