"""The cc-NUMA machine (Talbot & Kelly 1999), its kernels, the ccnuma model kind and
the study: hand traces for placement, bounces, proxies and combining; the checking mode
on random traces and against broken directory tables."""
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibration.sim.ccnuma import CCNUMAConfig, simulate_ccnuma
from calibration.sim.directory import (DIRECTORY, EXCLUSIVE, FORWARD, INVALIDATE, MEMORY, READ, SHARED, UPGRADE,
                                      WRITE, M)
from calibration.sim.machine import CoherenceViolation
from calibration.sim.parallel import parallel_kernel
from calibration.sim.traces import BARRIER, LOAD, STORE, Chunk
from calibration.sim.workload import Process, SharedRange, Workload
from mva.errors import ModelError

BASE = 0x1000_0000
PAGE = 8192


def _workload(traces, shared=(BASE, BASE + (1 << 24)), meta=None):
    """One process per list of (op, addr) pairs."""
    names = tuple(f"n{i}" for i in range(len(traces)))

    def opener(refs):
        def open_():
            op = np.array([r[0] for r in refs], np.uint8)
            ad = np.array([r[1] for r in refs], np.uint64)
            yield Chunk(op, ad, np.full(len(refs), 8, np.uint16), np.zeros(len(refs), np.bool_))
        return open_
    procs = tuple(Process(names[i], opener(t)) for i, t in enumerate(traces))
    return Workload("hand", procs, (SharedRange("shared", shared[0], shared[1], names),), meta=meta or {})


def test_first_touch_and_round_robin_place_pages_as_specified():
    # before the barrier node 0 touches every page (initialisation); after it node i reads page i
    P = 4
    init = [(STORE, BASE + k * PAGE) for k in range(P)]
    traces = [(init if i == 0 else []) + [(BARRIER, 0), (LOAD, BASE + ((i + 1) % P) * PAGE + 64)] for i in range(P)]
    ft = simulate_ccnuma(_workload(traces), CCNUMAConfig(placement="first-touch"))
    # first touch after initialisation: each page's home is its first reader, so every read is local
    assert ft.counter("remote_reads").tolist() == [0] * P
    assert ft.counter("local_reads").tolist() == [1] * P
    assert ft.counter("requests").tolist() == [1] * P
    rr = simulate_ccnuma(_workload(traces), CCNUMAConfig(placement="round-robin"))
    # round-robin dealt page k to node k (the order node 0 touched them): node i reads page i+1's home i+1
    assert rr.counter("remote_reads").tolist() == [1] * P
    assert rr.counter("requests").tolist() == [1] * P
    naive = simulate_ccnuma(_workload(traces), CCNUMAConfig(initialisation="none"))
    # naive first touch measures the initialisation too: its P stores and the P reads all at node 0
    assert naive.counter("requests").tolist() == [2 * P, 0, 0, 0]


def test_one_node_has_no_remote_traffic():
    r = simulate_ccnuma(parallel_kernel("ge", processes=1, size=32), CCNUMAConfig(check=True))
    d = r.to_dict()
    assert d["references"] > 10_000 and d["execution_cycles"] > 0
    assert (d["messages"], d["remote_reads"], d["bounces"], d["proxy_reads"]) == (0, 0, 0, 0)


def _hot_line(P):
    """Node 0 touches the page (its home under naive first touch), then every other node
    reads one clean line of it at the same moment."""
    return [([(STORE, BASE)] if i == 0 else []) + [(BARRIER, 0)] + ([] if i == 0 else [(LOAD, BASE + 64)])
            for i in range(P)]


NAIVE = {"initialisation": "none"}


def test_a_read_to_a_full_buffer_bounces_and_reactive_proxies_serve_it():
    P = 16
    plain = simulate_ccnuma(_workload(_hot_line(P)), CCNUMAConfig(buffer=2, check=True, **NAIVE))
    assert plain.totals["bounces"] > 0 and plain.totals["proxy_reads"] == 0
    assert plain.totals["remote_reads"] == P - 1
    reactive = simulate_ccnuma(_workload(_hot_line(P)), CCNUMAConfig(buffer=2, proxies="reactive", check=True,
                                                                     **NAIVE))
    t = reactive.totals
    assert t["remote_reads"] == P - 1
    # each bounced read went once to a proxy (a proxy's own fetch may bounce too: not a proxy read)
    assert 0 < t["proxy_reads"] <= t["bounces"]
    assert t["combined"] + t["proxy_hits"] > 0       # served via a proxy, not the home
    assert reactive.counter("requests")[0] < plain.counter("requests")[0]      # fewer reads reached the home
    infinite = simulate_ccnuma(_workload(_hot_line(P)), CCNUMAConfig(**NAIVE))
    assert infinite.totals["bounces"] == 0


def test_combining_serves_several_pending_readers_with_one_home_request():
    P = 12
    none = simulate_ccnuma(_workload(_hot_line(P)), CCNUMAConfig(**NAIVE))
    basic = simulate_ccnuma(_workload(_hot_line(P)), CCNUMAConfig(proxies="basic", check=True, **NAIVE))
    assert none.counter("requests")[0] == P                      # node 0's own store + P-1 reads at the home
    t = basic.totals
    assert t["proxy_reads"] == P - 1
    # three proxy clusters, each with one proxy per line (two where the proxy would be the
    # client itself): a handful of fetches reach the home, the other reads combine (or hit)
    home_reads = int(basic.counter("requests")[0]) - 1
    assert 1 <= home_reads <= 6
    assert t["combined"] + t["proxy_hits"] == P - 1 - home_reads
    assert t["combined"] >= 2


traces_strategy = st.lists(st.lists(st.tuples(st.sampled_from([LOAD, STORE]), st.integers(0, 40)),
                                    min_size=1, max_size=60), min_size=2, max_size=6)


@settings(max_examples=40, deadline=None)
@given(traces_strategy, st.sampled_from(["none", "basic", "reactive"]), st.sampled_from(["first-touch",
                                                                                       "round-robin"]))
def test_checking_mode_passes_random_multi_node_traces(refs, proxies, placement):
    # 41 lines over 4 pages, tiny caches (conflict evictions), a 1-message buffer (bounces)
    traces = [[(op, BASE + (k % 4) * PAGE + (k // 4) * 64) for op, k in t] + [(BARRIER, 1)]
              + [(op, BASE + (k % 4) * PAGE + (k // 4) * 64) for op, k in reversed(t)] for t in refs]
    cfg = CCNUMAConfig(placement=placement, proxies=proxies, buffer=1 if proxies == "reactive" else None,
                       slc=512, flc=128, check=True, initialisation="none")
    r = simulate_ccnuma(_workload(traces), cfg)
    assert r.totals["references"] == 2 * sum(len(t) for t in refs)


def _broken(**tables):
    arrays = {k: getattr(DIRECTORY, k).copy() for k in ("home_action", "home_next", "owner_next", "fill_state")}
    for key, (index, value) in tables.items():
        arrays[key][index] = value
    return dataclasses.replace(DIRECTORY, name="broken", **arrays)


def _random_sharing(P=4, n=600, lines=6, seed=3):
    rng = np.random.default_rng(seed)
    return _workload([[(int(o), BASE + 64 * int(k)) for o, k in zip(rng.choice([LOAD, STORE], n, p=[0.7, 0.3]),
                                                                       rng.integers(0, lines, n), strict=False)]
                      for _ in range(P)])


@pytest.mark.parametrize("broken", [
    {"home_action": ((SHARED, WRITE), MEMORY)},                  # a write that forgets the sharers
    {"home_action": ((SHARED, UPGRADE), 0)},                     # an upgrade that forgets them
    {"home_action": ((EXCLUSIVE, READ), MEMORY)},                # a read served from stale memory
    {"owner_next": (READ, M)},                                   # the owner keeps writing after sharing
    {"fill_state": (READ, M)},                                   # a read installs a writable copy
])
def test_checking_mode_catches_broken_protocol_tables(broken):
    wl = _random_sharing()
    simulate_ccnuma(wl, CCNUMAConfig(check=True))                 # the real tables pass
    with pytest.raises(CoherenceViolation, match="broken"):
        simulate_ccnuma(wl, CCNUMAConfig(check=True), protocol=_broken(**broken))


def test_tables_have_the_documented_actions():
    assert DIRECTORY.home_action[SHARED, WRITE] == MEMORY | INVALIDATE
    assert DIRECTORY.home_action[EXCLUSIVE, READ] == FORWARD


def test_bad_configuration_gets_one_line():
    with pytest.raises(ModelError, match="placement"):
        CCNUMAConfig(placement="random")
    with pytest.raises(ModelError, match="finite --buffer"):
        CCNUMAConfig(proxies="reactive")
    with pytest.raises(ModelError, match="slc"):
        CCNUMAConfig(slc=1000)
    with pytest.raises(ModelError, match="square number"):
        parallel_kernel("ocean-contig", processes=8, size=64)


def test_deadlock_is_one_line():
    traces = [[(BARRIER, 0), (LOAD, BASE)], [(LOAD, BASE)]]
    from calibration.sim.traces import ACQUIRE
    traces = [[(ACQUIRE, 7), (LOAD, BASE)], [(LOAD, BASE + 64), (ACQUIRE, 7)]]
    with pytest.raises(ModelError, match="cannot all finish"):
        simulate_ccnuma(_workload(traces), CCNUMAConfig())


def test_model_ranks_options_as_the_simulator_and_names_the_hot_node():
    from calibration.profiles.ccnuma import model_document, model_values
    from models.ccnuma import CCNUMA

    wl = parallel_kernel("transpose", processes=16, size=256)
    sims, preds = [], []
    for cfg in (CCNUMAConfig(), CCNUMAConfig(placement="round-robin"), CCNUMAConfig(proxies="basic")):
        r = simulate_ccnuma(wl, cfg)
        s = CCNUMA(model_values(r)).solve()
        sims.append(r.execution_cycles)
        preds.append(s.outputs["execution_cycles"])
        # the model's hot node is the simulator's, or one within 5% of its utilisation
        assert r.nc_utilization[s.outputs["hot_node"]] >= 0.95 * r.nc_utilization.max()
        assert 0 < s.outputs["remote_read_response_cycles"]
    assert np.argsort(sims).tolist() == np.argsort(preds).tolist()
    doc = model_document(r, "transpose")
    assert doc["kind"] == "ccnuma" and len(doc["demand"]) == 16


def test_model_with_no_queueing_reproduces_the_simulated_cycle():
    from models.ccnuma import CCNUMA
    # one processor alone: no other class queues, so MVA's cycle is the simulator's
    r = simulate_ccnuma(parallel_kernel("ge", processes=1, size=32), CCNUMAConfig())
    from calibration.profiles.ccnuma import model_values
    out = CCNUMA(model_values(r)).solve().outputs
    assert out["execution_cycles"] == pytest.approx(r.execution_cycles, rel=1e-9)
    assert out["remote_read_response_cycles"] == 0.0


def test_phase_sums_keep_each_requesters_work_and_gather_a_moving_hot_spot():
    # GE: each step's pivot row sits on its own home, so the hot controller moves
    r = simulate_ccnuma(parallel_kernel("ge", processes=8, size=64), CCNUMAConfig())
    for raw, phased in ((r.visits, r.phase_visits), (r.demand, r.phase_demand),
                        (r.read_visits, r.phase_read_visits)):
        assert phased.sum(axis=1).tolist() == raw.sum(axis=1).tolist()
    # centre 0 collects every phase's busiest controller: more than any one node had
    assert r.phase_demand[:, 0].sum() > 1.5 * r.demand.sum(axis=0).max()


def test_model_ranks_ge_options_and_predicts_the_pivot_queue():
    from calibration.profiles.ccnuma import model_values
    from models.ccnuma import CCNUMA

    # the pivot reads after each barrier queue at one home; a whole-run model misses that
    wl = parallel_kernel("ge", processes=16, size=64)
    sims, preds = [], []
    for cfg in (CCNUMAConfig(), CCNUMAConfig(placement="round-robin"), CCNUMAConfig(proxies="basic"),
                CCNUMAConfig(placement="round-robin", proxies="basic")):
        r = simulate_ccnuma(wl, cfg)
        out = CCNUMA(model_values(r)).solve().outputs
        sims.append(r.execution_cycles)
        preds.append(out["execution_cycles"])
        assert out["remote_read_response_cycles"] == pytest.approx(r.remote_read_response_cycles, rel=0.15)
    assert np.argsort(sims).tolist() == np.argsort(preds).tolist()


def test_simulate_command_line(run_cli, tmp_path):
    code, out, err = run_cli("simulate", "transpose", "--machine", "ccnuma", "--nodes", "4", "--format", "json",
                             "--buffer", "8", "--proxies", "reactive")
    assert code == 0, err
    d = json.loads(out)
    for key in ("execution_cycles", "messages", "remote_reads", "remote_read_response_cycles",
                "input_buffer_queueing_cycles", "bounces", "proxy_reads", "requests", "nc_utilization"):
        assert key in d
    assert len(d["requests"]) == 4
    code, out, err = run_cli("simulate", "ge", "--machine", "ccnuma", "--nodes", "4")
    assert code == 0 and "remote reads" in out
    code, out, err = run_cli("simulate", "ge", "--machine", "ccnuma", "--proxies", "reactive")
    assert code == 2 and "buffer" in err and "Traceback" not in err
    code, out, err = run_cli("simulate", "ge", "--placement", "round-robin")
    assert code == 2 and "--machine ccnuma" in err


def test_study_small_run(capsys):
    from calibration.studies.ccnuma import main

    assert main(["--small", "--programs", "ge,fft,ocean-contig", "--processes", "1"]) == 0
    out = capsys.readouterr().out
    assert "16 nodes; programs: ge 64 matrix order, fft 4,096 points, ocean-contig 34 grid side" in out
    assert "Relative execution time" in out and "] ge-proxies-gain: With basic proxies" in out
    assert "Table 1.4), the paper's" in out and "301.6" in out
    assert "test-sized run (--small), not the paper's problem sizes: findings: " in out and " of 10" in out and "ranking of the options agrees" in out


def test_study_rows_are_the_same_whichever_executor_runs_them():
    from calibration.studies.ccnuma import study

    serial = study(("ge", "fft"), small=True, processes=1).drop(columns="seconds")
    local = study(("ge", "fft"), small=True, processes=2).drop(columns="seconds")
    assert serial.equals(local)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=30), st.integers(1, 16))
def test_generated_traces_are_cut_into_exact_chunks_lazily(sizes, chunk):
    from calibration.sim.parallel import _chunks

    made = []

    def segments():
        for k, n in enumerate(sizes):
            made.append(k)          # a segment is made only when the chunker asks for it
            yield np.full(n, k % 3, np.uint8), np.arange(sum(sizes[:k]), sum(sizes[:k + 1]), dtype=np.uint64)

    stream = _chunks(segments(), chunk)
    out = []
    for c in stream:
        out.append(c)
        # at most one chunk's worth (and the segment that filled it) is made ahead
        assert sum(sizes[:len(made)]) < (len(out) + 1) * chunk + max(sizes, default=0)
    lengths = [c.op.shape[0] for c in out]
    assert all(n == chunk for n in lengths[:-1]) and (not lengths or 0 < lengths[-1] <= chunk)
    assert np.concatenate([c.addr for c in out]).tolist() == list(range(sum(sizes))) if out else sum(sizes) == 0


def test_study_never_writes_over_a_file_and_names_bad_programs(tmp_path, capsys):
    from calibration.studies.ccnuma import main

    csv = tmp_path / "rows.csv"
    csv.write_text("mine\n")
    assert main(["--small", "--programs", "ge", "--csv", str(csv)]) == 2
    assert "--csv" in capsys.readouterr().err and csv.read_text() == "mine\n"
    assert main(["--small", "--programs", "nbody"]) == 2
    assert "--programs: unknown program(s) nbody" in capsys.readouterr().err
    assert main(["--programs", "fft", "--traces", str(tmp_path)]) == 2
    assert "--traces: no fft.toml in" in capsys.readouterr().err


def test_options_of_another_machine_are_refused_even_when_zero(run_cli):
    code, out, err = run_cli("simulate", "ge", "--buffer", "0")
    assert code == 2 and "--buffer" in err and "--machine ccnuma" in err
    code, out, err = run_cli("simulate", "ge", "--machine", "ccnuma", "--granularity", "64B")
    assert code == 2 and "--granularity" in err


# --- private memory of multi-process workloads (issue #34) ---------------------------------

PRIVATE = 0x7000_0000      # the same virtual address in every process, outside the shared range


def test_processes_that_share_nothing_make_no_remote_reads():
    # four processes with the same private addresses (as forked processes have): first
    # touch homes each private page on its own node, and so does round-robin
    P = 4
    traces = [[(BARRIER, 0)] + [(op, PRIVATE + k * 64) for k in range(512) for op in (STORE, LOAD)]
              for _ in range(P)]
    for placement in ("first-touch", "round-robin"):
        r = simulate_ccnuma(_workload(traces), CCNUMAConfig(placement=placement, check=True))
        assert r.totals["remote_reads"] == 0, placement
        assert r.totals["invalidations"] == 0 and r.totals["messages"] == 0, placement
        # each node asked only its own controller
        assert np.count_nonzero(r.visits - np.diag(np.diag(r.visits))) == 0


def test_private_lines_at_one_virtual_address_never_invalidate_each_other():
    # two processes write and read the same virtual line in turn; as private data the
    # checking mode sees two independent lines, as shared data they ping-pong
    P = 2
    traces = [[(BARRIER, 0)] + [(STORE, PRIVATE), (LOAD, PRIVATE), (BARRIER, 0)] * 20 for _ in range(P)]
    private = simulate_ccnuma(_workload(traces), CCNUMAConfig(check=True))
    assert private.totals["invalidations"] == 0 and private.totals["upgrades"] == 0
    assert private.totals["write_misses"] == P            # one cold miss each
    shared = simulate_ccnuma(_workload(traces, shared=(PRIVATE, PRIVATE + PAGE)), CCNUMAConfig(check=True))
    assert shared.totals["write_misses"] >= 20 and shared.totals["messages"] > 0     # the line moves


def test_a_private_address_above_two_to_the_48_is_refused():
    traces = [[(LOAD, 1 << 50)], [(LOAD, 64)]]
    with pytest.raises(ModelError) as err:
        simulate_ccnuma(_workload(traces), CCNUMAConfig())
    assert err.value.field == "process[n0]" and "2^48" in err.value.problem


def test_basic_proxies_route_only_the_marked_structures():
    # node 0 writes two structures (homing them, naive first touch); the others read both
    from calibration.sim.workload import Structure
    P = 8
    a, b = BASE, BASE + 4 * PAGE
    traces = [([(STORE, a), (STORE, b)] if i == 0 else []) + [(BARRIER, 0)]
              + ([] if i == 0 else [(LOAD, a), (LOAD, b)]) for i in range(P)]

    def run(proxied):
        wl = dataclasses.replace(_workload(traces), structures=(Structure("A", a, a + PAGE),
                                                                Structure("B", b, b + PAGE)))
        return simulate_ccnuma(wl, CCNUMAConfig(proxies="basic", proxied=proxied, check=True, **NAIVE)).totals
    only_a, both = run("A"), run("A, B")
    assert only_a["proxy_reads"] > 0
    assert both["proxy_reads"] > only_a["proxy_reads"]
    # reads of B go straight to its home when only A is marked: one request per reader
    assert only_a["proxy_reads"] == run("B")["proxy_reads"]
    with pytest.raises(ModelError) as err:
        run("C")
    assert err.value.field == "proxied" and "has no structure C" in err.value.problem


def test_model_on_groups_of_phases_follows_the_bursts_of_fft():
    # FFT's transposes send every node's reads in bursts between quiet phases: one sum
    # over the run averages the bursts away, the groups of like phases keep them
    from calibration.profiles.ccnuma import model_values
    from calibration.sim.workload import read_manifest
    from models.ccnuma import CCNUMA

    r = simulate_ccnuma(read_manifest(Path(__file__).parents[2] / "data" / "traces" / "splash" / "fft.toml"),
                        CCNUMAConfig())
    values = model_values(r)
    assert len(values["phases"]) > 1
    for name in ("transactions", "remote_reads", "work"):
        assert sum(sum(g[name]) for g in values["phases"]) == r.totals[name]
    grouped = CCNUMA(values).solve().outputs["remote_read_response_cycles"]
    summed = CCNUMA({**values, "phases": []}).solve().outputs["remote_read_response_cycles"]
    sim = r.remote_read_response_cycles
    assert abs(grouped / sim - 1) < 0.05
    assert summed / sim - 1 < -0.15


def test_a_program_the_paper_does_not_mark_gets_its_largest_structures(tmp_path):
    from types import SimpleNamespace

    from calibration.sim.workload import Structure
    from calibration.studies.ccnuma import MARKED, marked, recorded

    wl = SimpleNamespace(structures=(Structure("big", 0, 600), Structure("mid", 600, 900),
                                     Structure("small", 900, 1000), Structure("big", 1000, 1100)))
    assert marked("ocean-contig", wl) == MARKED["ocean-contig"]          # the paper's own marking first
    assert marked("cholesky", wl) == "big"                               # 700 of 1100 bytes: at least half
    wl = SimpleNamespace(structures=(Structure("a", 0, 400), Structure("b", 400, 800), Structure("c", 800, 1000)))
    assert marked("cholesky", wl) == "a,b"                               # 400 is not half of 1000; 800 is
    assert marked("cholesky", SimpleNamespace(structures=())) is None    # nothing named: all shared data
    (tmp_path / "cholesky.toml").write_text("")
    (tmp_path / "radix").mkdir()
    (tmp_path / "radix" / "radix.toml").write_text("")
    assert recorded(tmp_path) == ("cholesky", "radix")


def test_programs_outside_the_paper_are_refused_unless_recorded(capsys):
    from calibration.studies.ccnuma import main

    assert main(["--programs", "cholesky", "--small"]) == 2
    assert "--programs" in capsys.readouterr().err
