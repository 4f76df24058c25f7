"""CMT core model values (:mod:`models.cmt_core`) from reuse profiles (Fedorova, Seltzer,
Small & Nussbaum, "Throughput-oriented scheduling on chip multithreading systems",
Harvard TR-17-04, 2004, §6): each thread's reuse profile (:func:`thread_profiles`)
gives its L1 and L2 misses per data reference (COMB or AVG of
:mod:`calibration.missratio`), and the CMT core model turns them into instruction rates
(:func:`core_model`, :func:`group_prediction`); :func:`predict_groups` predicts every
group of one core's size, the input of balance-set scheduling
(:mod:`calibration.scheduling`).
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

from ..missratio import group_miss_ratio

__all__ = ["thread_profiles", "core_model", "group_prediction", "predict_groups"]


def thread_profiles(workload, block: int = 64) -> list:
    """Each thread's steady-state reuse profile, alone: data references, ``block`` bytes,
    the trace looped as the CMT machine runs it."""
    from ..sim.reuse import reuse_profile

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


