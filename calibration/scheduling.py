"""Balance-set scheduling of threads on a chip-multithreading processor (Fedorova, Seltzer,
Small & Nussbaum, "Throughput-oriented scheduling on chip multithreading systems",
Harvard TR-17-04, 2004, §6.4, after Denning's balance-set principle, "Thrashing: its
causes and prevention", AFIPS FJCC 1968).

Every group of ``contexts`` threads (one per hardware context of a core) gets a predicted
L2 miss rate from the threads' reuse profiles
(:func:`calibration.profiles.cmt_core.group_prediction`: by default RATE on the streams
of the threads' L1 misses, chosen on the CMT study's tuning programs; COMB or AVG of
:mod:`calibration.missratio` on request; L2 misses over L1 misses as the simulator
counts them).
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

import numpy as np

from mva.errors import ModelError

from ._moved import moved_attributes
from .sim.cmt import POLICIES

__all__ = ["default_threshold", "balance_set_schedule", "resolve_schedule", "POLICIES"]


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
        for _v, g in admissible:
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


def resolve_schedule(workload, config):
    """``config`` (a :class:`~calibration.sim.cmt.CMTConfig`) with a ``perf`` or ``fair``
    schedule replaced by its balance-set groups, predicted from each thread's reuse
    profile; any other schedule unchanged.  The CMT machine's preparation step in
    :data:`calibration.sim.MACHINES`."""
    if config.schedule not in POLICIES:
        return config
    from dataclasses import replace

    from .profiles.cmt_core import predict_groups, thread_localities
    from .sim.cmt import load_threads

    localities = thread_localities(load_threads(workload, config.block, config.references, config.seed), config)
    groups, _ = balance_set_schedule(predict_groups(localities, config), len(localities), config.schedule)
    return replace(config, schedule=groups)


# moved to calibration.profiles.cmt_core (0.2); served with a warning until 0.3
__getattr__ = moved_attributes(__name__, {name: f"calibration.profiles.cmt_core.{name}" for name in (
    "thread_profiles", "core_model", "group_prediction", "predict_groups")})
