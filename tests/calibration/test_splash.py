"""Parallel programs recorded as multi-process workloads (issue #34): the fork-based
PARMACS macros on a probe program of our own (and on Splash-3's FFT where a Splash-3
tree is given in SPLASH3), the converter's markers, structure names and excerpts, and the
stored excerpts on the cc-NUMA machine."""
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from calibration.sim.ccnuma import CCNUMAConfig, simulate_ccnuma
from calibration.sim.splash import PROGRAMS, Program, build, record, structure_name
from calibration.sim.traces import ACQUIRE, BARRIER, IFETCH, LOAD, RELEASE, STORE, read_npz
from calibration.sim.workload import read_manifest
from mva.errors import ModelError

HERE = Path(__file__).parent
TOOLS = ("gcc", "make", "m4", "valgrind")
needs_tools = pytest.mark.skipif(any(shutil.which(t) is None for t in TOOLS),
                                 reason="needs gcc, make, m4 and valgrind (apt-get install gcc make m4 valgrind; "
                                        ".ci/run installs them)")
PROBE = Program("probe", "kernels/probe", "PROBE", "processes", 4, lambda size, P: ([str(P)], ""))


def _trace(path):
    chunks = list(read_npz(path))
    return (np.concatenate([c.op for c in chunks]), np.concatenate([c.addr for c in chunks]))


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    out = tmp_path_factory.mktemp("probe")
    binary = build(PROBE, HERE / "parmacs_probe", out)
    facts = record(PROBE, binary, out, processes=4)
    return out, facts, read_manifest(out / "probe.toml")


@needs_tools
def test_probe_runs_as_processes_sharing_the_arena_and_the_globals(probe):
    out, facts, wl = probe
    # the program checks the sharing itself and exits non-zero otherwise
    assert "total 2095104" in (out / "probe.out").read_text()            # 4 x (0 + ... + 1023)
    assert [p.name for p in wl.processes] == ["p0", "p1", "p2", "p3"]
    assert [r.name for r in wl.shared] == ["arena", "globals"]
    names = {s.name for s in wl.structures}
    assert {"gm", "shared_vector"} <= names
    assert facts["barriers"] == 12 and facts["acquires"] == facts["releases"] == 8


@needs_tools
def test_probe_markers_are_where_the_program_synchronises(probe):
    out, _, wl = probe
    gm = wl.structure_ranges(["gm"])[0]
    vector = wl.structure_ranges(["shared_vector"])[0]
    lock = None
    for p in wl.processes:
        op, addr = _trace(out / f"probe-{p.name}.npz")
        sync = op[(op == BARRIER) | (op == ACQUIRE) | (op == RELEASE)]
        # per process: lock, unlock, barrier, barrier, lock, unlock, barrier (program order)
        assert sync.tolist() == [ACQUIRE, RELEASE, BARRIER, BARRIER, ACQUIRE, RELEASE, BARRIER]
        objects = addr[op >= ACQUIRE]
        assert np.all((objects >= gm[0]) & (objects < gm[1]))          # the lock and barrier live in gm
        lock = int(addr[op == ACQUIRE][0]) if lock is None else lock
        assert set(addr[op == ACQUIRE].tolist()) == {lock}
        data = (op == LOAD) | (op == STORE)
        # the pthread library's own references to the mutex were left out
        assert not np.any(data & (addr >= lock) & (addr < lock + 40))
        # each process stored its quarter of the vector and read all of it
        stores = addr[(op == STORE) & (addr >= vector[0]) & (addr < vector[1])]
        loads = addr[(op == LOAD) & (addr >= vector[0]) & (addr < vector[1])]
        assert len(np.unique(stores)) == 1024 // 4 and len(np.unique(loads)) == 1024
        assert np.count_nonzero(op == IFETCH) > 0


@needs_tools
def test_a_call_whose_value_is_unused_is_kept_so_each_process_touches_its_own_data_first(probe):
    # probe.c.in's touch_mine only reads, and its value is dropped: gcc -O2 deletes such a
    # call unless told not to (KEEP_CALLS), and first-touch placement then loses the
    # program's intent (FFT's TouchArray, LU's TouchA)
    out, _, wl = probe
    placed = wl.structure_ranges(["placed_vector"])[0]
    block = 1024 // 4 * 8
    for me in range(4):
        op, addr = _trace(out / f"probe-{wl.processes[me].name}.npz")
        phase = np.cumsum(op == BARRIER)
        reads = addr[(op == LOAD) & (phase == 1) & (addr >= placed[0]) & (addr < placed[1])]
        assert len(reads) > 0
        # the process's id comes from the lock's order: its block is the one it read
        first = (int(reads.min()) - placed[0]) // block
        assert np.all((reads >= placed[0] + first * block) & (reads < placed[0] + (first + 1) * block))
        assert len(np.unique(reads)) == 1024 // 4


@needs_tools
def test_probe_workload_runs_on_the_ccnuma_machine_with_checking(probe):
    _, _, wl = probe
    r = simulate_ccnuma(wl, CCNUMAConfig(check=True))
    assert r.totals["remote_reads"] > 0                # each node reads the others' quarters
    # private data (stacks, libraries) at the same virtual addresses is never shared
    rr = simulate_ccnuma(wl, CCNUMAConfig(placement="round-robin", check=True))
    assert rr.execution_cycles > 0


@needs_tools
def test_excerpt_ends_every_trace_at_the_same_barrier(tmp_path):
    binary = build(PROBE, HERE / "parmacs_probe", tmp_path)
    facts = record(PROBE, binary, tmp_path, processes=4, phases=2)
    assert facts["barriers"] == 8
    wl = read_manifest(tmp_path / "probe.toml")
    for p in wl.processes:
        op, _ = _trace(tmp_path / f"probe-{p.name}.npz")
        assert op[-1] == BARRIER and np.count_nonzero(op == BARRIER) == 2
    simulate_ccnuma(wl, CCNUMAConfig())


SPLASH3 = os.environ.get("SPLASH3")


@pytest.mark.skipif(not SPLASH3 or any(shutil.which(t) is None for t in TOOLS),
                    reason="set SPLASH3 to a Splash-3 tree (and install gcc make m4 valgrind) to build its FFT")
def test_splash3_fft_with_four_processes(tmp_path):
    binary = build("fft", SPLASH3, tmp_path, 4096)
    facts = record("fft", binary, tmp_path, processes=4, size=4096)
    wl = read_manifest(tmp_path / "fft.toml")
    assert len(wl.processes) == 4 and [r.name for r in wl.shared] == ["arena", "globals"]
    # fft.C: SlaveStart passes seven barriers (start, the three transposes and their
    # steps, the end), FFT's one lock hands out process ids
    assert facts["barriers"] == 4 * 7 and facts["acquires"] == 4
    arena = wl.shared[0]
    for name in ("x", "trans", "umain2"):
        (start, end), = wl.structure_ranges([name])
        assert arena.start <= start < end <= arena.end
    for p in wl.processes:
        op, addr = _trace(tmp_path / f"fft-{p.name}.npz")
        assert np.count_nonzero(op == BARRIER) == 7
        x = wl.structure_ranges(["x"])[0]
        assert np.any((op == LOAD) & (addr >= x[0]) & (addr < x[1]))
        # TouchArray, between the first two barriers, reads the process's rows of x
        touch = (op == LOAD) & (np.cumsum(op == BARRIER) == 1)
        assert np.count_nonzero(touch & (addr >= x[0]) & (addr < x[1])) >= 4096 // 4 * 2


@pytest.mark.skipif(not SPLASH3 or any(shutil.which(t) is None for t in TOOLS),
                    reason="set SPLASH3 to a Splash-3 tree (and install gcc make m4 valgrind) to build its Radix")
def test_radix_local_sorts_and_writes_the_shared_keys_in_runs(tmp_path):
    import subprocess
    runs = {}
    for name in ("radix", "radix-local"):
        out = tmp_path / name
        binary = build(name, SPLASH3, out, 16384)
        # Splash-3's own check (-t) that every key is in place: the restructuring still sorts
        done = subprocess.run([str(binary), "-p4", "-n16384", "-r1024", "-m524288", "-t"], cwd=binary.parent,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "PASSED: All keys in place" in done.stdout, done.stdout[-300:]
        record(name, binary, out, processes=4, size=16384)
        wl = read_manifest(out / f"{name}.toml")
        keys = wl.structure_ranges(["key"])
        count = 0
        for p in wl.processes:
            op, addr = _trace(out / f"{name}-{p.name}.npz")
            inside = np.zeros(len(addr), bool)
            for lo, hi in keys:
                inside |= (addr >= lo) & (addr < hi)
            stores = addr[(op == STORE) & inside]
            count += 1 + int(np.count_nonzero(np.diff(stores.astype(np.int64)) != 8))   # breaks in a run of longs
        runs[name] = count
    # the original writes each key to its slot (a break at nearly every store); Radix-Local
    # copies each digit's keys in one contiguous run
    assert runs["radix-local"] * 5 < runs["radix"], runs


@pytest.mark.skipif(not SPLASH3 or any(shutil.which(t) is None for t in TOOLS),
                    reason="set SPLASH3 to a Splash-3 tree (and install gcc make m4 valgrind) to build its Ocean")
def test_ocean_rowwise_solves_as_the_square_subgrids_do(tmp_path):
    import subprocess
    history = {}
    for name in ("ocean-contig", "ocean-rowwise"):
        binary = build(name, SPLASH3, tmp_path / name, 130)
        # -o prints each multigrid solve: its iterations, residual and work (its level differs:
        # strips of rows fit fewer levels; at 130 x 130 the solves never go below them, so the
        # history is the square subgrids' own to the last digit)
        done = subprocess.run([str(binary), "-n130", "-p16", "-o"], cwd=binary.parent, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0 and "ERROR" not in done.stdout + done.stderr, done.stderr[-300:]
        history[name] = [line.split(",")[0] + line.split(",")[2] for line in done.stdout.splitlines()
                         if line.startswith("iter")]
    assert len(history["ocean-rowwise"]) > 3 and history["ocean-rowwise"] == history["ocean-contig"]


def test_structure_names_come_from_the_assignment():
    text = "\n".join(["  q_multi[i][j] = (double **) pf_malloc((x), __FILE__, __LINE__);;",
                      "  G_Memory->f_array = (real *) pf_malloc(n, __FILE__, __LINE__);",
                      "  PFORCES =",
                      "      (double ****) pf_malloc(n, __FILE__, __LINE__);",
                      "  pf_malloc(n, __FILE__, __LINE__);"])
    assert [structure_name(text, k) for k in (1, 2, 4, 5, 9)] == ["q_multi", "f_array", "PFORCES", "unnamed",
                                                                "unnamed"]


def test_program_sizes_are_checked_before_any_work():
    for name, size, words in (("fft", 1000, "even power of two"), ("ocean-contig", 100, "2^k + 2"),
                              ("water-nsq", 100, "cube")):
        with pytest.raises(ModelError) as err:
            PROGRAMS[name].command(size, 4)
        assert err.value.field == "--size" and words in err.value.problem


def test_splash_command_refuses_bad_options_in_one_line(run_cli, tmp_path):
    code, _, err = run_cli("trace", "splash", "fft", "--source", str(tmp_path), "-o", str(tmp_path / "o"),
                           "--size", "1000")
    assert code == 2 and "--size" in err and "Traceback" not in err
    code, _, err = run_cli("trace", "splash", "fft", "--source", str(tmp_path), "-o", str(tmp_path / "o"))
    assert code == 2 and "--source" in err and "not a Splash-3 tree" in err
    code, _, err = run_cli("trace", "splash", "nbody", "--source", str(tmp_path), "-o", str(tmp_path / "o"))
    assert code == 2 and "nbody" in err


def test_the_svm_programs_check_their_sizes_and_inputs_before_any_work(tmp_path, run_cli):
    from calibration.sim.splash import check_inputs

    with pytest.raises(ModelError) as err:
        PROGRAMS["volrend"].command(100, 16)
    assert err.value.field == "--size" and "[64, 128, 256]" in err.value.problem
    assert PROGRAMS["volrend"].command(64, 16) == (["16", "inputs/head-scaleddown4", "4"], "")
    assert PROGRAMS["volrend"].input_files(128) == ("inputs/head-scaleddown2.den",)
    with pytest.raises(ModelError, match="cube"):
        PROGRAMS["water-spatial"].command(100, 16)
    assert PROGRAMS["raytrace"].command(128, 16)[0] == ["-p16", "-m64", "inputs/car.env"]
    # a tree without car.geo (a large file some copies lack): named, before any build
    codes = tmp_path / "codes"
    (codes / "apps/raytrace/inputs").mkdir(parents=True)
    (codes / "Makefile.config").write_text("")
    (codes / "apps/raytrace/inputs/car.env").write_text("geometry inputs/car.geo\n")
    with pytest.raises(ModelError) as err:
        check_inputs("raytrace", tmp_path)
    assert err.value.field == "--source" and "inputs/car.geo" in err.value.problem
    (codes / "apps/raytrace/inputs/car.geo").write_text("")
    check_inputs("raytrace", tmp_path)
    code, _, err = run_cli("trace", "splash", "volrend", "--source", str(tmp_path), "-o", str(tmp_path / "o"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "apps/volrend" in err


@needs_tools
def test_the_logs_converted_while_the_program_runs_are_the_logs_converted_after(tmp_path):
    from calibration.sim.splash import convert_process, read_layout

    binary = build(PROBE, HERE / "parmacs_probe", tmp_path)
    facts = record(PROBE, binary, tmp_path, processes=4, keep_logs=True)
    raw = tmp_path / "lackey"
    layout = read_layout(raw / "layout")
    assert facts["lackey_disk_peak_bytes"] <= facts["lackey_bytes"] + 4096 * len(layout.pids)   # whole blocks
    for number, pid in layout.pids.items():
        again = tmp_path / f"again-{number}.npz"
        convert_process(raw / f"lackey.{pid}", again, layout.marker, number == 0)
        streamed = np.load(tmp_path / f"probe-p{number}.npz")
        after = np.load(again)
        assert len(after["op"]) > 0
        assert all(np.array_equal(streamed[k], after[k]) for k in ("op", "addr", "size"))


def test_a_growing_log_is_followed_and_given_back_to_the_disk(tmp_path):
    import threading
    import time

    from calibration.sim.traces import follow_lackey

    log = tmp_path / "lackey.1"
    lines = [f" L {0x1000 + 8 * i:08x},8\n" if i % 3 else f"I  {0x400000 + i:08x},4\n" for i in range(400_000)]
    text = "".join(lines).encode()
    done = threading.Event()
    log.write_bytes(b"")

    def writer():
        with open(log, "ab") as fh:
            for k in range(0, len(text), 1 << 20):
                fh.write(text[k:k + (1 << 20)])
                fh.flush()
                time.sleep(0.02)
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    chunks = list(follow_lackey(log, done.is_set))
    thread.join()
    addr = np.concatenate([c.addr for c in chunks])
    expect = np.array([0x1000 + 8 * i if i % 3 else 0x400000 + i for i in range(400_000)], np.uint64)
    assert np.array_equal(addr, expect)                    # every line once, none split at a read's end
    assert log.stat().st_size == len(text)                 # the file keeps its length ...
    if log.stat().st_blocks * 512 < len(text) // 2:        # ... and, where holes can be punched, not its blocks
        assert log.stat().st_blocks * 512 <= (1 << 20) + 65536


def test_blocks_reached_through_a_pointer_table_take_the_tables_name():
    from calibration.sim.splash import data_holders

    lu = ("last_malloc = (double **) pf_malloc(P*sizeof(double *));\n"
          "last_malloc[i] = (double *) pf_malloc(proc_bytes[i] + PAGE_SIZE);\n"
          "a = (double **) pf_malloc(nblocks*nblocks*sizeof(double *));\n"
          "      a[i+j*nblocks] = last_malloc[proc_num];\n")
    assert data_holders(lu, {"last_malloc", "a", "rhs"}, {"last_malloc", "a"}) == {"last_malloc": "a"}
    # a copy between two arrays of values is not a pointer table's
    assert data_holders("x[i] = y[i];\n", {"x", "y"}, set()) == {}


def test_every_program_is_in_the_help_and_checks_its_size(run_cli):
    code, out, _ = run_cli("trace", "splash", "--help")
    assert code == 0
    import re

    listed = re.sub(r"-\s+", "-", " ".join(out.split()))      # help wraps lines after hyphens too
    assert all(name in listed for name in PROGRAMS)
    for name, size, words in (("cholesky", 29, "tk14-tk18"), ("radiosity", 4, "large room")):
        with pytest.raises(ModelError) as err:
            PROGRAMS[name].command(size, 4)
        assert err.value.field == "--size" and words in err.value.problem
    assert PROGRAMS["cholesky"].command(15, 4)[0][-1] == "inputs/tk15.O"
