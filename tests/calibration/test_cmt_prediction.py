"""The CMT study's miss-rate predictions checked against methods that share no code with
them: a two-level non-inclusive LRU hierarchy simulated in plain Python, hand-worked
footprints and working sets, and the steady-state rule against the simulated machine."""
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibration.missratio import footprint, lru_miss_ratio, rate_miss_ratios, working_set_miss_ratio
from calibration.profiles.cmt_core import group_prediction, steady_run, thread_localities
from calibration.sim.cmt import CMTConfig, ThreadTraces, load_threads, simulate_cmt
from calibration.sim.reuse import reuse_profile
from calibration.sim.synthetic import cpi_thread, locality_thread
from calibration.sim.traces import LOAD, Chunk
from calibration.sim.workload import Workload
from calibration.studies.cmt_corpus import draw_groups, evaluate_groups

BLOCK = 64


def lru_hierarchy_misses(stream, l1_lines, l2_lines, passes=3):
    """L2 misses in the last of ``passes`` passes of ``stream`` through a fully-associative
    LRU L1 whose misses go to a fully-associative LRU L2 (allocate on miss, no
    inclusion): the machine's hierarchy with one set per level, by brute force."""
    def hit(cache, b, lines):
        if b in cache:
            cache.move_to_end(b)
            return True
        cache[b] = True
        if len(cache) > lines:
            cache.popitem(last=False)
        return False

    l1, l2 = OrderedDict(), OrderedDict()
    misses = 0
    for k in range(passes):
        for b in stream:
            if not hit(l1, b, l1_lines) and not hit(l2, b, l2_lines):
                misses += k == passes - 1
    return misses


def traces_of(*streams):
    return ThreadTraces.of([f"t{k}" for k in range(len(streams))], [np.ones(len(s), np.int32) for s in streams],
                           [np.asarray(s, np.int64) for s in streams])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=300), st.integers(1, 8), st.integers(1, 40))
def test_l1_miss_stream_profile_gives_the_non_inclusive_l2_exactly(stream, l1_ways, l2_lines):
    # one set in each cache: the L1 holds l1_ways blocks, the L2 l2_lines
    cfg = CMTConfig(contexts=1, l1=BLOCK * l1_ways, l1_assoc=l1_ways, l2=BLOCK * l2_lines, l2_assoc=l2_lines)
    loc = thread_localities(traces_of(stream), cfg)[0]
    misses = loc.misses[l1_ways]
    predicted = lru_miss_ratio(misses, cfg.l2) * misses.references
    assert predicted == pytest.approx(lru_hierarchy_misses(stream, l1_ways, l2_lines), abs=1e-9)
    # and the L1's misses themselves: the stream's second pass through the L1 alone
    assert misses.references == lru_hierarchy_misses(stream, l1_ways, 0, passes=2)


def test_whole_stream_l2_misses_what_the_hierarchy_sees():
    # block 0, hot in the L1, is never refreshed in the L2 and falls out of it: looped,
    # the hierarchy misses 4 times a pass where the whole stream in a 3-line LRU misses 3
    stream = [1, 0, 2, 0, 3]
    cfg = CMTConfig(contexts=1, l1=BLOCK * 2, l1_assoc=2, l2=BLOCK * 3, l2_assoc=3)
    loc = thread_localities(traces_of(stream), cfg)[0]
    assert lru_hierarchy_misses(stream, 2, 3) == 4
    assert lru_miss_ratio(loc.misses[2], cfg.l2) * loc.misses[2].references == pytest.approx(4)
    assert lru_miss_ratio(loc.whole, cfg.l2) * len(stream) == pytest.approx(3)


def profile_of(stream):
    b = np.asarray(stream, np.uint64)
    return reuse_profile(Chunk(np.full(b.size, LOAD, np.uint8), b * np.uint64(BLOCK), np.ones(b.size, np.uint16),
                               np.zeros(b.size, bool)), block=BLOCK, looped=True)


def test_footprint_of_a_cyclic_stream_by_hand():
    p = profile_of(list(range(8)) * 20)         # every reuse at distance 8
    assert footprint(p, [0, 3, 8, 100]) == pytest.approx([0, 3, 8, 8])


def test_rate_method_by_hand_and_its_invariants():
    a, b = profile_of(list(range(8)) * 20), profile_of(list(range(100, 104)) * 40)
    # alone, a's reuses see its 8 blocks: it misses in 8 lines' worth only when below 8
    assert rate_miss_ratios([a], 8 * BLOCK, [1.0])[0] == 1.0
    assert rate_miss_ratios([a], 9 * BLOCK, [1.0])[0] == 0.0
    # with b at the same rate, a's reuse of 8 own references spans 8 of b's: b's 4 blocks
    assert rate_miss_ratios([a, b], 12 * BLOCK, [1.0, 1.0])[0] == 1.0
    assert rate_miss_ratios([a, b], 13 * BLOCK, [1.0, 1.0])[0] == 0.0
    # a co-runner that never reaches the cache changes nothing; a faster one never helps
    assert rate_miss_ratios([a, b], 9 * BLOCK, [1.0, 0.0])[0] == 0.0
    slow, fast = (rate_miss_ratios([a, b], 10 * BLOCK, [1.0, r]) for r in (0.1, 10.0))
    assert fast[0] >= slow[0] and slow[1] >= fast[1]


def test_working_set_model_by_hand():
    p = profile_of(list(range(8)) * 20)
    assert working_set_miss_ratio([p], 16 * BLOCK, 100) == 0.0               # 8 blocks fit
    assert working_set_miss_ratio([p], 4 * BLOCK, 100) == pytest.approx(0.5)  # uniform over 8, 4 held
    # one set of 4 ways holds min(u, 4) of u blocks
    assert working_set_miss_ratio([p], 4 * BLOCK, 100, assoc=4) == pytest.approx(0.5)
    # two threads at equal shares in a window of 8: 4 blocks each
    q = profile_of(list(range(100, 108)) * 20)
    assert working_set_miss_ratio([p, q], 4 * BLOCK, 8) == pytest.approx(0.5)


def test_steady_state_rule_on_a_thread_whose_footprint_exceeds_the_warm_up():
    # a 1 MiB stream, whose first pass through a 1.5 MiB L2 takes longer than the default
    # warm-up of 10^6 cycles: measured after that warm-up the L2 still fills (cold misses),
    # measured after the rule's it holds the whole loop (no misses)
    wl = Workload("big", (locality_thread("stream-1M", "stream", 1 << 20, 600_000, memory_fraction=0.3),))
    cfg = CMTConfig(contexts=1, l2=1536 << 10)
    tr = load_threads(wl, cfg.block)
    loc = thread_localities(tr, cfg)
    warmup, cycles = steady_run(loc, cfg)
    assert warmup > CMTConfig().warmup
    short = simulate_cmt(None, cfg, traces=tr, warmup=CMTConfig().warmup, cycles=cycles)
    steady = simulate_cmt(None, cfg, traces=tr, warmup=warmup, cycles=cycles)
    assert short.l2_miss_ratio > 0.2 and steady.l2_miss_ratio < 0.01
    rows = evaluate_groups(tr, loc, [(0,)], [cfg.l2], cfg, variants=(("misses-rate", "l1-misses", "rate"),))
    assert rows.steady.all() and rows.sim_l2_miss_ratio.iloc[0] < 0.01
    rows = evaluate_groups(tr, loc, [(0,)], [cfg.l2], cfg, variants=(("misses-rate", "l1-misses", "rate"),),
                           cycles=cycles, warmup=CMTConfig().warmup)
    assert not rows.steady.any()


def test_groups_are_of_different_programs_and_reproducible():
    names = [f"{p}-{ph}" for p in "abcdef" for ph in "ab"]
    groups = draw_groups(names, 20, seed=3)
    assert groups == draw_groups(names, 20, seed=3) and len(set(groups)) == 20
    assert all(len({names[i][0] for i in g}) == 4 for g in groups)


def test_microbenchmark_threads_have_their_cpi_alone():
    for cpi in (1, 6, 11, 16):
        r = simulate_cmt(Workload("x", (cpi_thread("t", cpi),)), CMTConfig(contexts=1, cycles=500_000,
                                                                            warmup=100_000))
        assert 1 / r.ipc == pytest.approx(cpi, rel=0.01)


def test_group_prediction_rejects_unknown_choices():
    from mva.errors import ModelError

    loc = thread_localities(traces_of([1, 2, 3, 1, 2, 3]), CMTConfig())
    with pytest.raises(ModelError, match="method"):
        group_prediction(loc, CMTConfig(), "bogus")
    with pytest.raises(ModelError, match="stream"):
        group_prediction(loc, CMTConfig(), "avg", stream="bogus")
    with pytest.raises(ModelError, match="stream"):
        group_prediction([loc[0].whole], CMTConfig(), "avg", stream="l1-misses")


def test_l2_equivalence_by_hand():
    import pandas as pd

    from calibration.studies.cmt import l2_equivalence

    sched = pd.DataFrame({"scheduler": ["round-robin", "fair"], "l2_kib": [384, 384], "l2_miss_ratio": [0.4, 0.1]})
    # round-robin halves its miss rate per doubling: 0.2 at 768 KiB, 0.1 at 1536 KiB (4x), 0.05 at 3072
    larger = pd.DataFrame({"scheduler": ["round-robin"] * 3, "l2_kib": [768, 1536, 3072],
                           "l2_miss_ratio": [0.2, 0.1, 0.05]})
    assert l2_equivalence(sched, larger) == pytest.approx(4.0)
    # between sizes, log-linear: FAIR at 0.15 is reached between 768 and 1536 KiB
    assert 2.0 < l2_equivalence(sched.assign(l2_miss_ratio=[0.4, 0.15]), larger) < 4.0
    # never reached within the sizes run
    assert l2_equivalence(sched.assign(l2_miss_ratio=[0.4, 0.01]), larger) == float("inf")
