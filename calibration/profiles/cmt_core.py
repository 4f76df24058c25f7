"""CMT core model values (:mod:`models.cmt_core`) from reuse profiles (Fedorova, Seltzer,
Small & Nussbaum, "Throughput-oriented scheduling on chip multithreading systems",
Harvard TR-17-04, 2004, §6): each thread's reuse profiles, of its whole data stream and
of the streams of its L1 misses (:func:`thread_localities`, :class:`ThreadLocality`),
give its L1 and L2 misses per data reference when it shares the caches (COMB, AVG or
RATE of :mod:`calibration.missratio`), and the CMT core model turns them into
instruction rates (:func:`core_model`, :func:`group_prediction`); :func:`predict_groups`
predicts every group of one core's size, the input of balance-set scheduling
(:mod:`calibration.scheduling`); :func:`steady_run` says how long a group must run to
be measured in steady state.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np

from mva.errors import ModelError

from ..missratio import METHODS as SHARING_METHODS
from ..missratio import group_miss_ratio, rate_miss_ratios

__all__ = ["thread_profiles", "ThreadLocality", "thread_localities", "l1_partition", "core_model",
           "group_prediction", "predict_groups", "steady_run", "METHODS", "STREAMS", "DEFAULT_METHOD"]

#: Ways of predicting a shared cache's misses from the threads' profiles: the paper's COMB
#: and AVG (:mod:`calibration.missratio`) and ``rate``, each thread's reuses stretched by
#: the blocks its co-runners touch in the same time (:func:`calibration.missratio.rate_miss_ratios`).
METHODS = (*SHARING_METHODS, "rate")
#: The method the balance-set scheduler uses, chosen on the CMT study's tuning programs
#: (:mod:`calibration.studies.cmt_corpus`) and judged on its held-out ones.
DEFAULT_METHOD = "rate"
#: What the L2 is taken to see: ``l1-misses`` (each thread's stream after its share of
#: the L1, as the simulated non-inclusive L2 does) or ``whole`` (the whole reference
#: stream, the L2 as a larger LRU cache of the same stream).
STREAMS = ("l1-misses", "whole")


def thread_profiles(workload, block: int = 64) -> list:
    """Each thread's steady-state reuse profile, alone: data references, ``block`` bytes,
    the trace looped as the CMT machine runs it."""
    from ..sim.reuse import reuse_profile

    return [reuse_profile(p.open, block=block, data_only=True, looped=True, name=p.name) for p in workload.processes]


@dataclass(frozen=True)
class ThreadLocality:
    """One thread's reuse behaviour at both cache levels, from its block stream as the CMT
    machine runs it (looped, physical blocks).  ``whole``: the profile of every data
    block reference; ``misses[ways]``: the profile of the references that miss in an L1
    partition of ``ways`` ways of the L1's sets (what the L2 sees), whose ``references``
    are the L1 misses, so ``references_per_instruction`` is L1 misses per instruction."""

    name: str
    whole: object
    misses: dict = field(repr=False)

    def l1_miss_ratio(self, ways: int) -> float:
        """L1 misses per data reference with ``ways`` ways of the L1."""
        return self.misses[ways].references / max(self.whole.references, 1)


def l1_partition(config, threads: int) -> int:
    """An equal share of the L1's ways (at least one) for each of ``threads`` threads:
    the L1 partitions a thread's L1-miss streams are profiled behind."""
    return max(config.l1_assoc // max(threads, 1), 1)


def thread_localities(traces, config) -> list:
    """A :class:`ThreadLocality` for every thread of ``traces`` (a
    :class:`~calibration.sim.cmt.ThreadTraces`) on the machine ``config``, with the L1
    partitions a group of 1 to ``config.contexts`` threads uses."""
    from ..sim import _cmt_kernel as K

    sets = config.l1 // (config.block * config.l1_assoc)
    out = []
    for t, name in enumerate(traces.names):
        cut = slice(traces.start[t], traces.start[t] + traces.length[t])
        blocks, gaps = traces.block[cut], traces.gap[cut]
        counts = {"instructions": int(traces.instructions[t]), "accesses": int(np.count_nonzero(gaps))}
        misses = {}
        for ways in sorted({l1_partition(config, n) for n in range(1, config.contexts + 1)}):
            mask = np.zeros(blocks.shape[0], np.bool_)
            K.l1_miss_mask(blocks, sets, ways, mask)
            misses[ways] = _block_profile(blocks[mask], config.block, name, counts)
        out.append(ThreadLocality(name, _block_profile(blocks, config.block, name, counts), misses))
    return out


def _block_profile(blocks, block: int, name: str, counts: dict):
    """The looped reuse profile of a stream of block numbers, with the thread's own
    instruction and data-access ``counts``."""
    from ..sim.reuse import reuse_profile
    from ..sim.traces import LOAD, Chunk

    n = blocks.shape[0]
    chunk = Chunk(np.full(n, LOAD, np.uint8), blocks.astype(np.uint64) * np.uint64(block), np.ones(n, np.uint16),
                  np.zeros(n, bool))
    return replace(reuse_profile(chunk, block=block, looped=True, name=name), **counts)


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


def group_prediction(threads, config, method: str = DEFAULT_METHOD, model: str = "lru", stream: str | None = None,
                     rounds: int = 4) -> dict:
    """Predicted L1 and L2 behaviour and IPC of threads sharing one core of ``config``
    (a :class:`~calibration.sim.cmt.CMTConfig`), from their profiles alone.

    ``threads``: :class:`ThreadLocality` objects (from :func:`thread_localities`), or
    plain whole-stream reuse profiles (:func:`thread_profiles`, ``stream`` whole only).
    ``method`` (:data:`METHODS`) shares a cache among the threads, at both levels: each
    thread's L1 misses come from its whole stream in the shared L1 (Hill & Smith's
    set-associative estimate at the L1's ways).  ``stream`` (:data:`STREAMS`, default
    ``l1-misses`` for localities) is what the L2 is taken to see: with ``l1-misses``
    the L2 is predicted on the streams of each thread's L1 misses, profiled behind 1,
    2 and 4 ways of the L1, and interpolated to the thread's predicted L1 miss ratio;
    with ``whole`` the L2 is a larger cache of the whole stream (LRU inclusion).  The
    CMT core model (:mod:`models.cmt_core`) turns the misses into each thread's
    instruction rate; ``rate``, whose prediction depends on the rates, iterates
    ``rounds`` times from equal instruction rates.  The threads' shares of the
    references weight the group's ratios.  Returns ``l1_miss_ratio`` and
    ``l2_misses_per_reference`` (per data reference), ``l2_miss_ratio`` (per L2
    access), ``ipc``, and per thread ``thread_l1`` / ``thread_l2`` (misses per
    reference) and ``thread_ipc``.
    """
    threads = list(threads)
    localities = all(isinstance(t, ThreadLocality) for t in threads)
    stream = stream or ("l1-misses" if localities else "whole")
    if method not in METHODS:
        raise ModelError("method", f"unknown co-scheduling method {method!r}; choose {', '.join(METHODS)}")
    if stream not in STREAMS:
        raise ModelError("stream", f"unknown L2 stream {stream!r}; choose {', '.join(STREAMS)}")
    if stream == "l1-misses" and not localities:
        raise ModelError("stream", "l1-misses needs ThreadLocality objects (thread_localities), not plain profiles")
    whole = [t.whole if localities else t for t in threads]
    per_instruction = np.array([p.references_per_instruction for p in whole])
    memory = [p.memory_instructions_per_instruction for p in whole]
    rate = np.ones(len(threads))                    # instructions per cycle, equal to start
    for _ in range(rounds if method == "rate" else 1):
        each1 = _shared_miss_ratios(whole, config.l1, config.l1_assoc, method, model, rate * per_instruction)
        if stream == "l1-misses":
            each2 = _l2_behind_l1(threads, each1, config, method, model, rate * per_instruction)
        else:
            each2 = np.minimum(_shared_miss_ratios(whole, config.l2, config.l2_assoc, method, model,
                                                   rate * per_instruction), each1)
        solution = core_model(memory, each1 * per_instruction, each2 * per_instruction, config).solve().outputs
        rate = np.array(list(solution["thread_ipc"].values()))
    share = rate * per_instruction
    share = share / share.sum()
    m1, m2 = float(np.dot(share, each1)), float(np.dot(share, each2))
    return {"l1_miss_ratio": m1, "l2_misses_per_reference": m2, "l2_miss_ratio": m2 / m1 if m1 > 0 else 0.0,
            "ipc": solution["ipc"], "thread_l1": each1, "thread_l2": each2, "thread_ipc": rate}


def _shared_miss_ratios(profiles, cache_bytes, assoc, method, model, references_per_cycle) -> np.ndarray:
    """Each thread's misses per reference of its stream in a cache shared by all of them."""
    if method == "rate":
        return rate_miss_ratios(profiles, cache_bytes, references_per_cycle, assoc=assoc)
    return group_miss_ratio(profiles, cache_bytes, method, model, assoc=assoc)[1]


def _l2_behind_l1(threads, each1, config, method, model, references_per_cycle) -> np.ndarray:
    """Each thread's L2 misses per data reference when the L2 sees the streams of its L1
    misses: predicted on the streams of every L1 partition the threads were profiled
    with, then, per thread, interpolated (in its L1 miss ratio) to the L1 miss ratio
    ``each1`` predicted for the shared L1 (clamped to the partitions' range)."""
    ways = sorted(threads[0].misses)
    ratio = np.array([[t.l1_miss_ratio(w) for w in ways] for t in threads])          # threads x partitions
    per_reference = np.empty_like(ratio)
    for k, w in enumerate(ways):
        streams = [t.misses[w] for t in threads]
        per_access = _shared_miss_ratios(streams, config.l2, config.l2_assoc, method, model,
                                         references_per_cycle * ratio[:, k])
        per_reference[:, k] = np.minimum(per_access, 1.0) * ratio[:, k]
    out = np.empty(len(threads))
    for i in range(len(threads)):
        order = np.argsort(ratio[i])
        out[i] = np.interp(each1[i], ratio[i][order], per_reference[i][order])
    return np.minimum(out, each1)


def predict_groups(profiles, config, method: str = DEFAULT_METHOD, model: str = "lru", stream: str | None = None) -> dict:
    """{group (tuple of thread indices): predicted L2 miss ratio} for every group of
    ``config.contexts`` threads (all threads if there are fewer), on one core;
    ``profiles`` and ``stream`` as in :func:`group_prediction`."""
    n = len(profiles)
    size = min(config.contexts, n)
    return {g: group_prediction([profiles[i] for i in g], config, method, model, stream)["l2_miss_ratio"]
            for g in combinations(range(n), size)}




def steady_run(threads, config, prediction: dict | None = None, passes: float = 1.0) -> tuple[int, int]:
    """(warm-up, measured) cycles for the group ``threads`` (:class:`ThreadLocality`) on
    one core of ``config`` to be measured in steady state, from their profiles and the
    predicted instruction rates (``prediction`` from :func:`group_prediction`, computed
    when not given):

    * warm-up: twice the time the blocks the threads' L2 streams are expected to touch
      (the footprints F_i of :func:`calibration.missratio.footprint` at each thread's
      predicted L2 accesses) take to fill the L2 (an LRU cache that has seen its size in
      distinct blocks holds what it holds in steady state; twice, since the blocks do
      not spread evenly over the sets), at most one whole pass of the slowest thread's
      trace, which is also the warm-up when everything fits; plus, since the rates are
      steady-state ones, one memory access (L2 and memory latency, channel time) per
      block the fill brings in, as if none overlapped;
    * measured: ``passes`` whole passes of the slowest thread's trace, so that the
      measured stream is the looped stream the profiles describe (a shorter run measures
      one stretch of a trace against the whole trace's profile).
    """
    from ..missratio import footprint

    threads = list(threads)
    pr = prediction or group_prediction(threads, config)
    rate = np.asarray(pr["thread_ipc"], float)
    ways = l1_partition(config, len(threads))
    streams = [t.misses[ways] for t in threads]
    reach = rate * np.array([s.references_per_instruction for s in streams])   # L2 accesses per cycle
    lines = config.l2 / config.block
    instructions = np.array([t.whole.instructions or t.whole.accesses for t in threads], float)
    one_pass = float(np.max(instructions / np.maximum(rate, 1e-12)))
    # what one pass of each stream touches (its distinct blocks, as the binned profile sees them)
    total = sum(float(footprint(s, s.references)) for s in streams)
    cold = min(lines, total) * (config.l2_latency + config.memory_latency + config.line_cycles)
    if total <= lines:
        return int(np.ceil(one_pass + cold)), int(np.ceil(passes * one_pass))

    def touched(cycles):
        return sum(float(footprint(s, a * cycles)) for s, a in zip(streams, reach, strict=True) if a > 0)

    low, high = 0.0, 1.0
    while touched(high) < lines and high < one_pass:
        low, high = high, high * 2
    for _ in range(50):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if touched(mid) < lines else (low, mid)
    return int(np.ceil(min(2 * high, one_pass) + cold)), int(np.ceil(passes * one_pass))
