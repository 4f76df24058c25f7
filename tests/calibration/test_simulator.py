"""The trace-driven coherence simulator: traces, exactness against independent cache
simulators, protocol correctness (checking mode), classification on hand-made traces,
scheduling, the synthetic generator and the command line."""
from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calibration.sim import protocols as P
from calibration.sim import CoherenceViolation, BusConfig, bus_costs, scalability, simulate_bus
from calibration.sim.stats import workload_statistics
from calibration.sim.synthetic import PRESETS, generate, preset_request
from calibration.sim.traces import Chunk, TraceError, detect_format, read_din, read_lackey, read_npz, read_trace, write_npz
from calibration.sim.loading import load_workload
from calibration.sim.workload import Process, SharedRange, Workload, read_manifest, trace_workload
from mva.cli import main
from mva.errors import ModelError

DATA = Path(__file__).resolve().parents[2] / "data" / "traces"
REAL_TRACES = ("gzip", "ls", "sort")


# --- helpers ------------------------------------------------------------------------------
def _workload(traces, shared=(), name="test"):
    """A workload of fixed per-process traces: traces = {name: [(op, addr), ...]}."""
    procs = []
    for pname, refs in traces.items():
        op = np.array([r[0] for r in refs], dtype=np.uint8)
        addr = np.array([r[1] for r in refs], dtype=np.uint64)
        size = np.array([r[2] if len(r) > 2 else 4 for r in refs], dtype=np.uint16)
        chunk = Chunk(op, addr, size, np.zeros(len(refs), dtype=bool))
        procs.append(Process(pname, (lambda c=chunk: iter([c])), len(refs)))
    return Workload(name, tuple(procs), tuple(shared))


def _lockstep(**options):
    """Zero bus costs and one cycle a reference: processors alternate strictly (ties go to
    the lowest processor), so a hand-made interleaving is exact."""
    costs = {k: 0 for k in bus_costs(32)}
    costs["cpu"] = 1
    return BusConfig(costs=costs, **options)


def _random_workload(n_proc, n, seed, shared_words=64, private_words=256, shared_frac=0.7, size=4):
    rng = np.random.default_rng(seed)
    traces = {}
    for k in range(n_proc):
        op = rng.integers(0, 3, n)
        sh = rng.random(n) < shared_frac
        addr = np.where(sh, 0x1000 + rng.integers(0, shared_words, n) * 4,
                        0x100000 + rng.integers(0, private_words, n) * 4)
        traces[f"p{k}"] = [(int(o), int(a), size) for o, a in zip(op, addr, strict=False)]
    names = tuple(traces)
    return _workload(traces, (SharedRange("shm", 0x1000, 0x1000 + 4 * shared_words, names),))


def _naive_lru(chunk, cache, block, assoc):
    """A deliberately plain LRU set-associative cache; an access spanning blocks is one
    reference per block (as Dinero IV counts).  Returns (references, misses)."""
    n_sets = cache // (block * assoc)
    sets = [OrderedDict() for _ in range(n_sets)]
    refs = misses = 0
    for a, s in zip(chunk.addr.tolist(), chunk.size.tolist(), strict=False):
        s = max(s, 1)
        for blk in range(a // block, (a + s - 1) // block + 1):
            refs += 1
            ways = sets[blk % n_sets]
            if blk in ways:
                ways.move_to_end(blk)
            else:
                misses += 1
                ways[blk] = True
                if len(ways) > assoc:
                    ways.popitem(last=False)
    return refs, misses


# --- traces ----------------------------------------------------------------------------------
def test_lackey_reader_parses_every_kind_and_skips_valgrind_lines(tmp_path):
    f = tmp_path / "t.lackey"
    f.write_text("==1== Lackey\nI  04000800,3\n S 1ffefffd10,8\n L 0401a2c8,4\n M 1ffefffd08,8\n"
                 "==1== done\nI  04000803,4")            # no newline at the end
    c = Chunk.concat(read_lackey(f))
    assert c.op.tolist() == [0, 2, 1, 1, 2, 0]
    assert c.addr.tolist() == [0x4000800, 0x1ffefffd10, 0x401a2c8, 0x1ffefffd08, 0x1ffefffd08, 0x4000803]
    assert c.size.tolist() == [3, 8, 4, 8, 8, 4]
    assert detect_format(f) == "lackey"


def test_lackey_reader_streams_in_bounded_chunks():
    chunks = list(read_lackey(DATA / "ls-head.lackey", chunk_references=100))
    assert max(len(c) for c in chunks) <= 101          # an M record may add one
    whole = Chunk.concat(read_lackey(DATA / "ls-head.lackey"))
    assert np.array_equal(Chunk.concat(chunks).addr, whole.addr)


def test_din_sample_matches_the_lackey_sample_it_was_made_from():
    lackey = Chunk.concat(read_lackey(DATA / "ls-head.lackey"))
    din = Chunk.concat(read_din(DATA / "ls-head.din"))
    assert detect_format(DATA / "ls-head.din") == "din"
    assert np.array_equal(din.op, lackey.op) and np.array_equal(din.addr, lackey.addr)
    assert set(din.size.tolist()) == {4}


def test_npz_round_trip_in_chunks(tmp_path):
    rng = np.random.default_rng(0)
    parts = [Chunk(rng.integers(0, 3, n).astype(np.uint8), rng.integers(0, 2**48, n).astype(np.uint64),
                   rng.integers(1, 16, n).astype(np.uint16), rng.random(n) < 0.2) for n in (5, 1000, 37)]
    for compress in (True, False):
        f = tmp_path / f"t{compress}.npz"
        assert write_npz(f, parts, compress=compress) == 1042
        back = Chunk.concat(read_npz(f, chunk_references=100))
        whole = Chunk.concat(parts)
        for name in ("op", "addr", "size", "kernel"):
            assert np.array_equal(getattr(back, name), getattr(whole, name))
        assert max(len(c) for c in read_npz(f, chunk_references=100)) == 100
    # np.savez files read too, with size and kernel optional
    g = tmp_path / "plain.npz"
    np.savez(g, op=np.array([0, 1], np.uint8), addr=np.array([64, 128], np.uint64))
    c = Chunk.concat(read_trace(g))
    assert c.size.tolist() == [4, 4] and not c.kernel.any()


def test_trace_errors_name_the_file_and_the_problem(tmp_path):
    with pytest.raises(TraceError, match="no such trace file"):
        read_trace(tmp_path / "missing.npz")
    bad = tmp_path / "bad.npz"
    np.savez(bad, op=np.zeros(3, np.uint8))
    with pytest.raises(TraceError, match="missing array 'addr'"):
        list(read_trace(bad))
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, op=np.array([7], np.uint8), addr=np.array([0], np.uint64))
    with pytest.raises(TraceError, match="'op' must hold"):
        list(read_trace(wrong))
    text = tmp_path / "x.txt"
    text.write_text("hello world\n")
    with pytest.raises(TraceError, match="unrecognised trace format"):
        read_trace(text)


def test_manifest_shared_ranges_and_copy_on_write_lookalikes(tmp_path):
    # two processes touch the same virtual addresses: shared inside the range, private outside
    for k in (1, 2):
        np.savez(tmp_path / f"p{k}.npz", op=np.array([1, 1], np.uint8),
                 addr=np.array([0x1000, 0x9000], np.uint64))
    (tmp_path / "w.toml").write_text('name = "w"\n[[process]]\nname = "a"\ntrace = "p1.npz"\n'
                                     '[[process]]\nname = "b"\ntrace = "p2.npz"\n'
                                     '[[shared]]\nname = "shm"\nstart = 0x1000\nend = 0x2000\nprocesses = "all"\n')
    wl = read_manifest(tmp_path / "w.toml")
    stats = workload_statistics(wl)
    assert stats["distinct_blocks"] == 3            # one shared block + two private look-alikes
    assert stats["shared_blocks"] == 1
    (tmp_path / "bad.toml").write_text('[[process]]\nname = "a"\ntrace = "nope.npz"\n')
    with pytest.raises(ModelError, match=r"process\[0\].trace: no such file"):
        read_manifest(tmp_path / "bad.toml")
    (tmp_path / "bad2.toml").write_text('[[process]]\ntrace = "p1.npz"\n[[shared]]\nstart = 5\nend = 1\n')
    with pytest.raises(ModelError, match="end"):
        read_manifest(tmp_path / "bad2.toml")


# --- exactness: one processor, no coherence, LRU ----------------------------------------------
GEOMETRIES = [(32768, 64, 8), (8192, 32, 2), (4096, 128, 1), (65536, 64, 4), (2048, 16, 128)]


@pytest.mark.parametrize("trace", REAL_TRACES)
def test_one_processor_equals_a_naive_lru_on_real_traces(trace):
    chunk = Chunk.concat(read_npz(DATA / f"{trace}.npz"))
    part = chunk.slice(0, 60_000)
    wl = _workload({"p": list(zip(part.op.tolist(), part.addr.tolist(), part.size.tolist(), strict=False))})
    for cache, block, assoc in GEOMETRIES[:3]:
        refs, misses = _naive_lru(part, cache, block, assoc)
        r = simulate_bus(wl, cpus=1, cache=cache, block=block, assoc=assoc, pages="identity")
        assert (r.references, r.misses) == (refs, misses)
        assert r.counts["hits"] == refs - misses and r.to_dict()["misses"] == misses


@pytest.mark.parametrize("trace", REAL_TRACES)
def test_one_processor_equals_pycachesim_on_real_traces(trace):
    import cachesim
    chunk = Chunk.concat(read_npz(DATA / f"{trace}.npz"))
    wl = trace_workload(DATA / f"{trace}.npz")
    for cache, block, assoc in GEOMETRIES:
        memory = cachesim.MainMemory()
        l1 = cachesim.Cache("L1", cache // (block * assoc), assoc, block, "LRU")
        memory.load_to(l1)
        memory.store_from(l1)
        backend = l1.backend
        for op, a, s in zip(chunk.op.tolist(), chunk.addr.tolist(), chunk.size.tolist(), strict=False):
            # pycachesim 0.3.1: iterload keeps 64-bit addresses; a store hit does not refresh
            # LRU order, so a load goes first (write-allocate: the store then always hits)
            backend.iterload([a], max(s, 1))
            if op == 2:
                backend.iterstore([a], max(s, 1))
        r = simulate_bus(wl, cpus=1, cache=cache, block=block, assoc=assoc, pages="identity")
        assert r.misses == backend.MISS_count, (cache, block, assoc)


def test_spanning_accesses_count_once_per_block():
    wl = _workload({"p": [(1, 60, 8), (1, 64, 4), (2, 126, 4), (0, 0, 200)]})
    r = simulate_bus(wl, cpus=1, cache=1024, block=64, assoc=2, pages="identity")
    # 60..67 -> blocks 0,1; 64 -> 1; 126..129 -> 1,2; 0..199 -> 0,1,2,3
    assert r.references == 2 + 1 + 2 + 4
    assert r.misses == 4


# --- protocol correctness: the checking mode -----------------------------------------------
@pytest.mark.parametrize("protocol", ["mesi", "amsd", "pscr"])
@pytest.mark.parametrize("scheduler", ["random", "affinity"])
def test_checking_mode_on_random_multiprocessor_traces(protocol, scheduler):
    for seed in range(3):
        wl = _random_workload(6, 2500, seed)
        r = simulate_bus(wl, cpus=4, cache=512, block=32, assoc=2, protocol=protocol, scheduler=scheduler,
                     check=True, time_slice=300, seed=seed)
        assert r.references == 6 * 2500 and r.counts["migrations"] > 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(protocol=st.sampled_from(["mesi", "amsd", "pscr"]), cpus=st.integers(2, 6), n_proc=st.integers(1, 8),
       block=st.sampled_from([8, 16, 32, 64]), assoc=st.sampled_from([1, 2, 4]), seed=st.integers(0, 10**6),
       size=st.sampled_from([1, 4, 8]), slice_=st.integers(20, 400))
def test_checking_mode_property(protocol, cpus, n_proc, block, assoc, seed, size, slice_):
    wl = _random_workload(n_proc, 600, seed, shared_words=24, private_words=48, size=size)
    r = simulate_bus(wl, cpus=cpus, cache=block * assoc * 4, block=block, assoc=assoc, protocol=protocol,
                 check=True, time_slice=slice_, seed=seed)
    d = r.to_dict()
    assert d["misses"] <= d["references"]
    assert 0 <= d["bus_utilization"] <= 1 + 1e-12
    assert all(0 <= u <= 1 for u in d["processor_utilization"])
    if protocol == "pscr":
        assert d["misses_by_kind"]["true_sharing"] + d["misses_by_kind"]["false_sharing"] == 0


def _broken(name, field, index, value):
    base = P.PROTOCOLS["mesi"]
    table = getattr(base, field).copy()
    table[index] = value
    P.PROTOCOLS[name] = dataclasses.replace(base, name=name, **{field: table})


@pytest.mark.parametrize("field,index,value", [
    ("snoop_next", (P.S, P.INV, slice(None)), P.S),          # a shared copy ignores invalidations
    ("snoop_supply", (P.M, P.RB, slice(None)), 0),           # a dirty copy does not supply
    ("proc_txn", (P.S, 1, slice(None)), P.NONE),             # a write to a shared copy stays silent
])
def test_checking_mode_catches_broken_protocols(field, index, value):
    _broken("broken", field, index, value)
    try:
        with pytest.raises(CoherenceViolation):
            simulate_bus(_random_workload(6, 3000, 1), cpus=4, cache=512, block=32, assoc=2, protocol="broken",
                     check=True, time_slice=500)
    finally:
        del P.PROTOCOLS["broken"]


def test_protocol_tables_are_total_and_name_their_states():
    for name, proto in P.PROTOCOLS.items():
        assert proto.name == name
        for state in proto.states:
            s = P.STATES.index(state)
            assert (proto.proc_txn[s] >= 0).all() and (proto.proc_next[s] >= 0).all()
    assert P.PROTOCOLS["pscr"].uses_private_line and not P.PROTOCOLS["mesi"].uses_private_line
    assert len(P.PROTOCOLS["amsd"].states) == 7 and len(P.PROTOCOLS["pscr"].states) == 5


# --- classification on hand-made traces --------------------------------------------------------
SHARED = 0x1000
PAD = 0x200000


def _two_processors(p0, p1, **options):
    names = ("p0", "p1")
    wl = _workload({"p0": p0, "p1": p1}, (SharedRange("shm", SHARED, SHARED + 4096, names),))
    return simulate_bus(wl, _lockstep(cpus=2, cache=4096, block=32, assoc=2, **options)).to_dict()


@pytest.mark.parametrize("second, sharing, other", [
    # p0 writes word 0 and reads it; p1 reads it and writes it: every reload consumes the other's value
    ([(1, SHARED), (2, SHARED)], "true_sharing", "false_sharing"),
    # each processor works on its own word of one block
    ([(2, SHARED + 4), (1, SHARED + 4)], "false_sharing", "true_sharing"),
])
def test_two_processors_on_one_block_classify_as_true_or_false_sharing(second, sharing, other):
    n = 50
    d = _two_processors([(2, SHARED), (1, SHARED)] * n, second * n)
    kinds = d["misses_by_kind"]
    assert kinds[sharing] > 0.9 * n and kinds[other] == 0 and kinds["passive_sharing"] == 0
    coh = d["coherence_transactions_per_100_refs"]["by_class"]
    assert coh[sharing] > 0 and coh[other] == 0


def test_pscr_updates_instead_of_invalidating():
    n = 50
    d = _two_processors([(2, SHARED), (1, SHARED)] * n, [(1, SHARED), (2, SHARED)] * n, protocol="pscr")
    assert d["misses"] == 2                                   # the two cold misses only
    assert d["bus_transactions"]["write"] > n and d["bus_transactions"]["invalidate"] == 0


def test_migratory_sharing_worked_check_mesi_vs_amsd():
    # docs/coherence.md §5: P0: R W; P1: R W; P0: R W; P1: R W on one word (pads keep lockstep)
    pad0, pad1 = (1, PAD), (1, PAD + 0x10000)
    b = SHARED
    p0 = [(1, b), (2, b), pad0, pad0, (1, b), (2, b), pad0, pad0]
    p1 = [pad1, pad1, (1, b), (2, b), pad1, pad1, (1, b), (2, b)]
    mesi = _two_processors(p0, p1, protocol="mesi")
    amsd = _two_processors(p0, p1, protocol="amsd")
    for d, invalidates in ((mesi, 3), (amsd, 1)):
        bus = d["bus_transactions"]
        assert bus["invalidate"] == invalidates
        assert bus["read_block_cache"] == 3
        assert bus["read_block_memory"] == 1 + 2                 # the block once, each pad once
        assert d["misses_by_kind"]["true_sharing"] == 2
        assert d["other_misses"]["cold"] == 4


def test_migrated_process_rereading_private_data_is_passive_sharing():
    # only private data, more processes than processors: every invalidation is passive
    rng = np.random.default_rng(3)
    traces = {f"p{k}": [(int(o), 0x100000 + 4 * int(w)) for o, w in zip(rng.integers(1, 3, 20000),
                                                                      rng.integers(0, 16, 20000), strict=False)]
              for k in range(6)}
    wl = _workload(traces)
    res = {proto: simulate_bus(wl, cpus=4, cache=4096, block=32, assoc=2, protocol=proto, time_slice=300,
                           check=True).to_dict() for proto in ("mesi", "amsd", "pscr")}
    for _proto, d in res.items():
        assert d["misses_by_kind"]["true_sharing"] == d["misses_by_kind"]["false_sharing"] == 0
        assert d["migrations"] > 50
    passive_txn = {p: d["coherence_transactions_per_100_refs"]["by_class"]["passive_sharing"] for p, d in res.items()}
    assert res["mesi"]["misses_by_kind"]["passive_sharing"] > 0
    assert passive_txn["mesi"] > passive_txn["amsd"] > 0                  # AMSD reduces, does not remove
    assert passive_txn["pscr"] == 0 and res["pscr"]["misses_by_kind"]["passive_sharing"] == 0
    assert res["pscr"]["other_misses"]["selective_reload"] > 0


# --- scheduling, timing, GSP --------------------------------------------------------------------
def test_affinity_scheduling_migrates_less_than_random():
    wl = generate("ec-server", references=1_300_000)
    rnd = simulate_bus(wl, cpus=4, cache="256KiB", block=64, time_slice=20_000, scheduler="random")
    aff = simulate_bus(wl, cpus=4, cache="256KiB", block=64, time_slice=20_000, scheduler="affinity")
    assert aff.counts["migrations"] < rnd.counts["migrations"]
    assert aff.to_dict()["other_misses"]["context_switch"] < rnd.to_dict()["other_misses"]["context_switch"]


def test_gsp_and_utilisation_laws():
    wl = generate("ec-server", references=520_000)
    r = simulate_bus(wl, cpus=4, cache="256KiB", block=64)
    u = r.processor_utilization
    # U_i = (T - T_delay,i) / T, and busy + stall fills each processor's time
    assert np.allclose(u, (r.cycles - (r.cycles - r.busy)) / r.cycles)
    assert all(r.busy + r.stall <= r.cycles + 1)
    assert r.gsp == pytest.approx(u.sum())
    assert r.busy.sum() == 5 * r.references                    # the default 5 cycles a reference
    assert 0 < r.bus_utilization <= 1


@pytest.mark.parametrize("protocol", ["mesi", "pscr"])
def test_stall_splits_into_stalling_transactions_and_store_buffer(protocol):
    wl = generate("ec-server", references=520_000)
    r = simulate_bus(wl, cpus=6, cache="64KiB", block=64, protocol=protocol)
    c = r.counts
    # every stalled cycle is either a stalling transaction's (waiting + service) or a store's
    assert c["bus_sync.stall_cycles"] + c["bus_async.stall_cycles"] == r.stall.sum()
    # a stalling transaction stalls its processor at least for its own service
    assert c["bus_sync.stall_cycles"] >= c["bus_sync.cycles"]
    work = r.bus_work()
    assert work["sync"]["stall_per_reference"] + work["async"]["stall_per_reference"] == pytest.approx(
        work["stall_per_reference"], rel=1e-12)


def test_scalability_rule_on_the_spec_example():
    # docs/coherence.md §6: GSP(1..7) = 0.9 ... 4.7 -> N* = 5
    table = {1: 0.9, 2: 1.75, 3: 2.55, 4: 3.3, 5: 3.95, 6: 4.4, 7: 4.7}
    n, seen = scalability(lambda k: table[k], limit=7)
    assert n == 5 and set(seen) == {1, 2, 3, 4, 5, 6}


def test_bus_costs_reproduce_table_4():
    table4 = {32: (68, 12, 8), 64: (72, 16, 12), 128: (80, 24, 20), 256: (96, 40, 36)}
    for block, (mem, c2c, ub) in table4.items():
        c = bus_costs(block)
        assert (c["memory_to_cache"], c["cache_to_cache"], c["update_block"]) == (mem, c2c, ub)
        assert c["invalidate"] == c["write"] == 5


def test_config_errors_name_the_field():
    for kwargs, field in (({"cache": 3000}, "cache"), ({"block": 48}, "block"), ({"protocol": "moesi"}, "protocol"),
                          ({"scheduler": "fifo"}, "scheduler"), ({"cpus": 0}, "cpus"), ({"block": 512}, "word"),
                          ({"costs": {"disk": 1}}, "costs")):
        with pytest.raises(ModelError) as err:
            BusConfig(**kwargs)
        assert err.value.field == field
    assert BusConfig(cache="2MiB").cache == 2 << 20


# --- the synthetic generator ---------------------------------------------------------------------
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_generated_statistics_match_the_request_within_5_percent(preset):
    req = PRESETS[preset]
    refs = 5_200_000 if req.processes > 1 else 1_000_000
    stats = workload_statistics(generate(preset, references=refs))
    want = {"distinct_blocks": req.distinct_blocks, "code": 100 * req.code, "data": 100 * (1 - req.code),
            "data_write": 100 * req.data_write, "shared_blocks": req.shared_blocks,
            "shared_access": 100 * req.shared_access, "shared_write": 100 * req.shared_write,
            "kernel": 100 * req.kernel}
    assert stats["processes"] == req.processes
    for key, value in want.items():
        if value:
            assert stats[key] == pytest.approx(value, rel=0.05), key
        else:
            assert stats[key] == 0, key


def test_generator_is_deterministic_and_reopenable():
    a = generate("web-server", references=260_000, seed=7)
    b = generate("web-server", references=260_000, seed=7)
    c1 = Chunk.concat(a.processes[3].open())
    c2 = Chunk.concat(b.processes[3].open())
    c3 = Chunk.concat(a.processes[3].open())
    assert np.array_equal(c1.addr, c2.addr) and np.array_equal(c1.addr, c3.addr)
    with pytest.raises(ModelError, match="shared_write"):
        generate(preset_request("db", shared_write=0.5))
    with pytest.raises(ModelError, match="unknown preset"):
        generate("oracle")


# --- command line ----------------------------------------------------------------------------------
def test_cli_simulate_json_has_the_documented_keys(capsys):
    rc = main(["simulate", "ec-server", "--references", "260000", "--cpus", "4", "--cache", "256KiB",
               "--format", "json", "--quiet"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    for key in ("references", "misses", "miss_rate", "misses_by_kind", "coherence_transactions_per_100_refs",
                "bus_utilization", "processor_utilization", "gsp"):
        assert key in d
    assert set(d["misses_by_kind"]) == {"other", "true_sharing", "false_sharing", "passive_sharing"}
    assert len(d["processor_utilization"]) == 4
    assert d["references"] == 260000


def test_cli_simulate_table_sweep_and_scalability(capsys, tmp_path):
    assert main(["simulate", str(DATA / "gzip.npz"), "--cpus", "1", "--cache", "32KiB", "--block", "64",
                 "--assoc", "8", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "miss rate" in out and "GSP" in out
    assert main(["simulate", "web-server", "--references", "130000", "--sweep", "protocol=mesi,pscr",
                 "--sweep", "cpus=2,4", "--quiet"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 + 4 and "gsp" in lines[0]
    assert main(["simulate", "rm", "--references", "50000", "--scalability", "--max-cpus", "3",
                 "--format", "json", "--quiet"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert "scalable_to" in d and "1" in d["gsp"]


def test_cli_trace_convert_and_stats(tmp_path, capsys):
    out = tmp_path / "ls.npz"
    assert main(["trace", "convert", str(DATA / "ls-head.lackey"), "-o", str(out)]) == 0
    assert main(["trace", "convert", str(DATA / "ls-head.lackey"), "-o", str(out)]) == 2     # exists
    assert "exists" in capsys.readouterr().err
    assert main(["trace", "stats", str(out), "--format", "json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    c = Chunk.concat(read_lackey(DATA / "ls-head.lackey"))
    first, last = c.addr // 32, (c.addr + c.size.astype(np.uint64) - 1) // 32
    # block references at 32 bytes (an access spanning two blocks counts twice), computed apart
    assert stats["references"] == int((last - first + 1).sum())
    assert stats["distinct_blocks"] == len(set(first.tolist()) | set(last.tolist()))
    assert stats["code"] == pytest.approx(100 * float(((c.op == 0) * (last - first + 1)).sum()) / stats["references"])
    assert main(["trace", "stats", str(DATA / "gzip.npz")]) == 0
    assert "statistics at 32-byte blocks" in capsys.readouterr().out


def test_cli_trace_generate_writes_a_manifest_that_loads(tmp_path, capsys):
    d = tmp_path / "w"
    assert main(["trace", "generate", "ec-server", "--references", "52000", "-o", str(d)]) == 0
    wl = load_workload(d / "workload.toml")
    assert len(wl.processes) == 26 and wl.references == 52000
    direct = workload_statistics(generate("ec-server", references=52000))
    via_files = workload_statistics(wl)
    assert via_files == {**direct, "name": via_files["name"]}


@pytest.mark.parametrize("argv,needle", [
    (["simulate", "nothing-here"], "neither a file nor a preset"),
    (["simulate", "ec-server", "--cache", "3000"], "cache:"),
    (["simulate", "ec-server", "--sweep", "colour=red"], "--sweep colour: not an option of --machine bus"),
    (["trace", "stats", "/nonexistent.npz"], "neither a file nor a preset"),
])
def test_cli_errors_are_one_line_and_exit_2(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1


def test_data_only_drops_instruction_fetches_and_kernel_flags_reach_the_counts():
    chunk = Chunk.concat(read_npz(DATA / "sort.npz")).slice(0, 50_000)
    kernel = np.zeros(len(chunk), dtype=bool)
    kernel[::3] = True                                  # pretend every third reference is the kernel's
    flagged = Chunk(chunk.op, chunk.addr, chunk.size, kernel)
    wl = Workload("k", (Process("p", lambda: iter([flagged]), len(flagged)),))
    full = simulate_bus(wl, cpus=1, cache=8192, block=32, assoc=2).to_dict()
    data = simulate_bus(wl, cpus=1, cache=8192, block=32, assoc=2, data_only=True).to_dict()
    assert data["references_by_access"]["ifetch"] == 0
    assert data["references_by_access"]["load"] == full["references_by_access"]["load"]
    assert data["references_by_access"]["store"] == full["references_by_access"]["store"]
    assert 0 < full["kernel_references"] < full["references"]
    assert sum(full["misses_kernel"].values()) > 0 and sum(full["misses_user"].values()) > 0
    assert sum(full["misses_kernel"].values()) + sum(full["misses_user"].values()) == full["misses"]


def test_kernel_ranges_of_a_manifest_mark_kernel_references(tmp_path):
    np.savez(tmp_path / "a.npz", op=np.array([1, 1, 2], np.uint8), addr=np.array([0x1000, 0xC0000000, 0xC0000040],
                                                                                   np.uint64))
    (tmp_path / "w.toml").write_text('[[process]]\nname = "a"\ntrace = "a.npz"\n[[shared]]\nname = "k"\n'
                                     'start = 0xC0000000\nend = 0xD0000000\nkernel = true\n')
    stats = workload_statistics(read_manifest(tmp_path / "w.toml"))
    assert stats["kernel"] == pytest.approx(200 / 3)


@pytest.mark.parametrize("text,needle", [
    ('[[process]]\nname = "a"\ntrace = "a.npz"\ncolour = 1\n', r"process\[0\]: unknown key"),
    ('[[process]]\nname = "a"\ntrace = "a.npz"\nformat = "pin"\n', r"process\[0\].format: unknown format"),
    ('[[process]]\nname = "a"\ntrace = "a.npz"\n[[shared]]\nstart = 0\nend = 8\nsize = 3\n', r"shared\[0\]: unknown"),
    ('[[process]]\nname = "a"\ntrace = "a.npz"\n[[shared]]\nstart = 0\nend = 8\nprocesses = ["b"]\n',
     "unknown process"),
    ('name = "x"\n', "at least one"),
    ('[[process]]\nname = "a"\ntrace = "a.npz"\nreferences = -1\n', "unknown key"),
])
def test_manifest_errors(tmp_path, text, needle):
    np.savez(tmp_path / "a.npz", op=np.array([1], np.uint8), addr=np.array([0], np.uint64))
    (tmp_path / "w.toml").write_text(text)
    with pytest.raises(ModelError, match=needle):
        read_manifest(tmp_path / "w.toml")
