"""Reuse and stack distances, the miss-ratio models, and ``mva trace reuse``."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from calibration.missratio import group_miss_ratio, lru_miss_ratio, statcache_miss_ratio, statstack_miss_ratio
from calibration.sim.bus import BusConfig, simulate_bus
from calibration.sim.reuse import reuse_profile
from calibration.sim.traces import LOAD, Chunk
from calibration.sim.workload import trace_workload
from mva.errors import ModelError

ROOT = Path(__file__).resolve().parents[2]
GZIP = ROOT / "data" / "traces" / "gzip.npz"


def chunk(blocks, size=4, block=64):
    blocks = np.asarray(blocks, dtype=np.uint64)
    n = blocks.shape[0]
    return Chunk(np.full(n, LOAD, np.uint8), blocks * np.uint64(block), np.full(n, size, np.uint16), np.zeros(n, bool))


def naive(blocks):
    """Stack and reuse distances by an explicit LRU stack (O(n x distinct))."""
    stack, last, stack_d, time_d = [], {}, [], []
    for t, b in enumerate(blocks):
        if b in stack:
            i = stack.index(b)
            stack_d.append(i)
            time_d.append(t - last[b])
            stack.pop(i)
        stack.insert(0, b)
        last[b] = t
    return stack_d, time_d, len(set(blocks))


def test_hand_trace():
    # A B C A B B D A: A and B come back over 2 distinct blocks, B at once, A over {B, D}
    p = reuse_profile(chunk([0, 1, 2, 0, 1, 1, 3, 0]))
    assert (p.references, p.cold, p.distinct) == (8, 4, 4)
    assert p.stack_counts.tolist() == [1, 0, 3, 0]
    assert p.time_counts[[1, 3, 4]].tolist() == [1, 2, 1]       # reuse distances 1, 3, 3, 4 references
    assert [p.lru_misses(64 * c) for c in (1, 2, 3)] == [7, 7, 4]


def test_spanning_access_is_one_reference_per_block():
    c = Chunk(np.array([LOAD, LOAD], np.uint8), np.array([60, 64], np.uint64), np.array([8, 4], np.uint16),
              np.zeros(2, bool))
    p = reuse_profile(c)
    assert (p.references, p.cold, p.stack_counts.tolist()) == (3, 2, [1, 0])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=400), st.integers(1, 5))
def test_fenwick_equals_naive_stack(blocks, pieces):
    stack_d, time_d, distinct = naive(blocks)
    c = chunk(blocks)
    cuts = np.linspace(0, len(blocks), pieces + 1).astype(int)
    p = reuse_profile([c.slice(a, b) for a, b in zip(cuts[:-1], cuts[1:], strict=False)])
    assert p.cold == distinct
    assert p.stack_counts.tolist() == np.bincount(stack_d, minlength=distinct).tolist()[:max(distinct, 1)]
    assert p.time_counts[:16].sum() == sum(1 for d in time_d if d < 16)


def test_large_random_trace_with_growth_and_compaction():
    # 40,000 distinct blocks force the tables, the tree and the position compaction to grow
    rng = np.random.default_rng(3)
    blocks = rng.integers(0, 40_000, 120_000)
    stack_d, _, distinct = naive_fast(blocks)
    p = reuse_profile([chunk(blocks[:50_000]), chunk(blocks[50_000:])])
    assert p.cold == distinct
    assert np.array_equal(p.stack_counts, np.bincount(stack_d, minlength=distinct)[:distinct])


def naive_fast(blocks):
    """Stack distances by counting the distinct blocks of each reuse window (a second
    method, linear in the window lengths): a position holds a block the window has not
    seen again when that block's next access comes at or after the window's end."""
    n = len(blocks)
    following = np.full(n, n)           # each access's next access to the same block
    seen = {}
    for t in range(n - 1, -1, -1):
        b = int(blocks[t])
        following[t] = seen.get(b, n)
        seen[b] = t
    last, out = {}, []
    for t, b in enumerate(blocks.tolist()):
        if b in last:
            out.append(int(np.count_nonzero(following[last[b] + 1:t] >= t)))
        last[b] = t
    return out, None, len(last)


@pytest.mark.parametrize("kib", [1, 4, 16, 64])
def test_lru_stack_model_equals_simulated_fully_associative_lru(kib):
    p = reuse_profile(GZIP, block=64, data_only=True)
    lines = kib * 1024 // 64
    run = simulate_bus(trace_workload(GZIP), BusConfig(cpus=1, cache=kib * 1024, block=64, assoc=lines,
                                                         data_only=True, pages="identity"))
    assert run.misses == p.lru_misses(kib * 1024)


def test_set_associative_estimate_near_simulation():
    p = reuse_profile(GZIP, block=64, data_only=True)
    for kib, assoc in ((8, 2), (16, 4)):
        run = simulate_bus(trace_workload(GZIP), BusConfig(cpus=1, cache=kib * 1024, block=64, assoc=assoc,
                                                             data_only=True, pages="identity"))
        predicted = lru_miss_ratio(p, kib * 1024, assoc=assoc) * p.references
        assert abs(predicted / run.misses - 1) < 0.25
        assert predicted >= p.lru_misses(kib * 1024) - 1e-9      # conflicts only add misses


def test_sampling_converges_to_exact():
    p = reuse_profile(GZIP, data_only=True)
    full = reuse_profile(GZIP, data_only=True, sample=1.0)
    assert np.array_equal(full.time_counts, p.time_counts)      # every reference sampled: the same distances
    assert full.dangling == p.distinct

    def distance(rate, seed):
        s = reuse_profile(GZIP, data_only=True, sample=rate, seed=seed)
        a, b = s.time_counts / s.samples, p.time_counts / p.references
        return 0.5 * np.abs(a - b).sum()

    low = np.mean([distance(0.01, k) for k in range(5)])
    high = np.mean([distance(0.3, k) for k in range(5)])
    assert high < low / 2


def test_statstack_of_a_full_sample_tracks_exact_lru():
    p = reuse_profile(GZIP, data_only=True)
    s = reuse_profile(GZIP, data_only=True, sample=1.0)
    for kib in (4, 16, 64):
        exact = p.lru_misses(kib << 10) / p.references
        assert abs(statstack_miss_ratio(s, kib << 10) - exact) < 0.2 * exact


def random_replacement_misses(blocks, lines, seed):
    """A fully-associative random-replacement cache, simulated directly."""
    rng = np.random.default_rng(seed)
    where, slots, misses = {}, [None] * lines, 0
    filled = 0
    for b in blocks:
        if b in where:
            continue
        misses += 1
        if filled < lines:
            k = filled
            filled += 1
        else:
            k = int(rng.integers(lines))
            del where[slots[k]]
        slots[k] = b
        where[b] = k
    return misses


def test_statcache_matches_a_random_replacement_cache():
    rng = np.random.default_rng(7)
    # a hot set and a cold set: reuse distances of every length
    blocks = np.where(rng.random(60_000) < 0.8, rng.integers(0, 300, 60_000), rng.integers(300, 3_000, 60_000))
    p = reuse_profile(chunk(blocks))
    for lines in (64, 256, 1024):
        simulated = np.mean([random_replacement_misses(blocks.tolist(), lines, s) for s in range(3)]) / len(blocks)
        assert abs(statcache_miss_ratio(p, lines * 64) / simulated - 1) < 0.1


def test_comb_with_scale_n_is_avg_for_lru_and_one_thread_is_alone():
    ps = [reuse_profile(ROOT / "data" / "traces" / f"{n}.npz", data_only=True) for n in ("gzip", "ls", "sort")]
    for kib in (24, 96):
        avg, each_avg = group_miss_ratio(ps, kib << 10, "avg", weights=[1, 1, 1])
        comb, each_comb = group_miss_ratio(ps, kib << 10, "comb", scale=3, weights=[1, 1, 1])
        assert comb == pytest.approx(avg, rel=0, abs=1e-12)
        assert group_miss_ratio(ps[:1], kib << 10, "comb")[0] == pytest.approx(lru_miss_ratio(ps[0], kib << 10))
    # COMB with the default N - 1 interleaving predicts fewer misses than with N
    assert group_miss_ratio(ps, 48 << 10, "comb")[0] <= group_miss_ratio(ps, 48 << 10, "comb", scale=3)[0]


def test_bad_input_is_named():
    with pytest.raises(ModelError, match="block"):
        reuse_profile(GZIP, block=48)
    with pytest.raises(ModelError, match="sample"):
        reuse_profile(GZIP, sample=0)
    with pytest.raises(ModelError, match="method"):
        group_miss_ratio([reuse_profile(GZIP)], 8192, "median")


def run_mva(*args):
    return subprocess.run([sys.executable, "-m", "mva", *args], capture_output=True, text=True, cwd=ROOT)


def test_cli_reuse_json_and_errors(tmp_path):
    r = run_mva("trace", "reuse", str(GZIP), "--data-only", "--sizes", "8KiB,64KiB", "--format", "json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert {"references", "cold", "histogram", "sizes"} <= set(d)
    assert len(d["histogram"]["counts"]) <= 20 and sum(d["histogram"]["counts"]) + d["cold"] == d["references"]
    p = reuse_profile(GZIP, data_only=True)
    assert [s["misses"] for s in d["sizes"]] == [p.lru_misses(8192), p.lru_misses(65536)]
    plot = tmp_path / "reuse.png"
    assert run_mva("trace", "reuse", str(GZIP), "--sample", "0.05", "--plot", str(plot)).returncode == 0
    assert plot.stat().st_size > 0
    again = run_mva("trace", "reuse", str(GZIP), "--plot", str(plot))
    assert again.returncode == 2 and "--force" in again.stderr
    bad = run_mva("trace", "reuse", str(GZIP), "--sample", "1.5")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "sample" in bad.stderr
