"""What-if sweeps: grids, batch results equal to case-by-case solves, Dask, the CLI options."""
import json
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from mva import exact_mva
from mva.analysis import first_meeting, parse_condition, sensitivities
from mva.cli import main
from mva.errors import ModelError
from mva.files import network_from_dict, read_document
from mva.grid import cartesian, parse_spec, parse_sweeps, zipped
from mva.modelkind import model_from_document
from mva.sweep import run_sweep
from mva.targets import ModelTarget, target_from_document

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
TEN = os.path.join(ROOT, "data", "examples", "ten-stations.toml")
TWO = os.path.join(ROOT, "data", "examples", "two-class.toml")
C2 = os.path.join(ROOT, "data", "tpcc", "c2.toml")

MIXED_KINDS = """
[network]
population = [12]
think_time = [2.0]
[[station]]
name = "cpus"
type = "multi"
servers = 3
demand = [0.30]
[[station]]
name = "fesc"
type = "ld"
demand = [0.2]
capacity = [1.0, 1.7, 2.2]
[[station]]
name = "disk"
type = "queue"
demand = [0.25]
[[station]]
name = "lan"
type = "delay"
demand = [0.5]
"""


# --- grids --------------------------------------------------------------------------------

def test_range_list_and_csv_specs(tmp_path):
    assert parse_spec("n", "1:16:1") == list(range(1, 17))
    assert parse_spec("n", "2:9:3") == [2, 5, 8]
    assert parse_spec("x", "0.1:0.5:0.1") == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert parse_spec("x", "0.6e6:1e6:0.1e6") == [6e5, 7e5, 8e5, 9e5, 1e6]
    assert parse_spec("m", "paper,serial") == ["paper", "serial"]
    assert parse_spec("f", "[1,2,1,2,1,2,1,2,1],[1,1,1,1,1,1,1,1,1]") == [[1, 2, 1, 2, 1, 2, 1, 2, 1], [1] * 9]
    path = tmp_path / "values.csv"
    path.write_text("disk.seek_time,other\n1e6,3\n9e5,4\n")
    assert parse_spec("disk.seek_time", f"@{path}") == [1e6, 9e5]


@pytest.mark.parametrize("spec, message", [
    ("5:1:1", "reversed"), ("1:5:0", "step must be > 0"), ("1:5:-1", "step must be > 0"), ("", "is empty"),
    ("a:2:1", "range start must be a number"), ("1,,2", "empty item"),
])
def test_bad_specs_are_errors(spec, message):
    with pytest.raises(ModelError, match=message):
        parse_spec("x", spec)


def test_cartesian_and_zip():
    sweeps = parse_sweeps(["a=1:3:1", "b=x,y"])
    grid = cartesian(sweeps)
    assert len(grid) == 6 and grid[0] == {"a": 1, "b": "x"} and grid[1] == {"a": 1, "b": "y"}
    assert zipped(parse_sweeps(["a=1:2:1", "b=x,y"])) == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]
    with pytest.raises(ModelError, match="unequal length"):
        zipped(sweeps)
    with pytest.raises(ModelError, match="given twice"):
        parse_sweeps(["a=1,2", "a=3"])


# --- sweeps equal case-by-case solves -----------------------------------------------------

def _network_with(doc, values):
    return network_from_dict(ModelTarget(doc).document(values))


def _assert_sweep_equals_single_solves(doc, cases):
    """Every row of the sweep is, bit for bit, the exact solve of that case."""
    frame = run_sweep(doc, cases, progress=False)
    assert len(frame) == len(cases)
    for i, case in enumerate(cases):
        result = exact_mva(_network_with(doc, case))
        if len(result.classes) == 1:
            assert frame.loc[i, "throughput"] == result.throughput[0]
            assert frame.loc[i, "response_time"] == result.response_time[0]
        else:
            for c, name in enumerate(result.classes):
                assert frame.loc[i, f"throughput.{name}"] == result.throughput[c]
                assert frame.loc[i, f"response_time.{name}"] == result.response_time[c]
        util = frame.loc[i, [f"utilization.{s}" for s in result.stations]].to_numpy(dtype=float)
        assert np.array_equal(util, result.station_utilization())
    return frame


def test_network_sweep_equals_single_solves_exactly():
    doc = read_document(TEN)
    cases = cartesian(parse_sweeps(["station.disk1.demand=0.01:0.05:0.01", "network.think_time=0,2.5,5"]))
    _assert_sweep_equals_single_solves(doc, cases)


def test_shape_groups_are_batched_and_equal_single_solves():
    """A population x demand grid: one batch per population, same numbers as single solves."""
    cases = cartesian(parse_sweeps(["network.population=1,10,48", "station.cpu.demand=0.01:0.04:0.01"]))
    _assert_sweep_equals_single_solves(read_document(TEN), cases)


def test_a_failed_chunk_is_retried(monkeypatch, tmp_path):
    """The first attempt of one chunk fails; Dask runs it again and nothing is lost."""
    import dask.distributed as distributed
    import mva.sweep as sweep
    original = sweep._solve_remote
    marker = tmp_path / "failed-once"      # a file, since Dask runs a copy of the function

    def flaky(doc, overrides, solver, source, start, stop):
        if source.cases(start, stop)[0]["station.cpu.demand"] == 0.03 and not marker.exists():
            marker.write_text("x")
            raise OSError("worker lost its disk")
        return original(doc, overrides, solver, source, start, stop)

    monkeypatch.setattr(sweep, "_solve_remote", flaky)
    doc = read_document(TEN)
    cases = cartesian(parse_sweeps(["station.cpu.demand=0.01:0.05:0.01"]))
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        remote = run_sweep(doc, cases, scheduler=cluster.scheduler_address, chunk_size=1, progress=False)
    assert marker.exists()
    pd.testing.assert_frame_equal(remote, run_sweep(doc, cases, progress=False), check_exact=True)


def test_batch_with_multi_server_and_load_dependent_stations_equals_single_solves(tmp_path):
    path = tmp_path / "mixed.toml"
    path.write_text(MIXED_KINDS)
    cases = cartesian(parse_sweeps(["station.cpus.demand=0.1:0.5:0.2", "station.fesc.demand=0.05,0.4",
                                    "network.think_time=0,3"]))
    _assert_sweep_equals_single_solves(read_document(str(path)), cases)


def test_structural_and_multiclass_sweeps_equal_single_solves():
    cases = cartesian(parse_sweeps(["station.cpus.servers=1,2,4", "network.population=[20,4],[5,1]"]))
    _assert_sweep_equals_single_solves(read_document(TWO), cases)


def test_tpcc_sweep_equals_single_solves_exactly():
    doc = read_document(C2)
    cases = cartesian(parse_sweeps(["cpus=1,2,4", "disk.rotation_latency=0.9e6,1.5e6", "disks=1,2",
                                    "mapping.table_to_disk=[1,1,1,1,1,1,1,1,1],[1,2,1,2,1,2,1,2,1]"]))
    cases = [c for c in cases if max(c["mapping.table_to_disk"]) <= c["disks"]]
    frame = run_sweep(doc, cases, progress=False)
    assert len(frame) == 18
    for i, case in enumerate(cases):
        sol = model_from_document(doc, case).solve()
        assert frame.loc[i, "tpmC"] == sol.outputs["tpmC"]
        for device, u in sol.outputs["utilization"].items():
            assert frame.loc[i, f"utilization.{device}"] == u
        # the busiest server: the CPU centre's and the I/O system's busy shares are no one server's load
        servers = {k: u for k, u in sol.outputs["utilization"].items() if k not in ("cpu", "io_system")}
        assert frame.loc[i, "bottleneck"] == max(servers, key=servers.get)
    assert np.isnan(frame.loc[0, "utilization.disk_2"])          # one-disk cases have no disk 2


def test_the_parallel_batch_kernel_gives_the_single_solves_numbers():
    """Sweeps of many cases run on every core (a separate compiled loop): same numbers."""
    from models.tpcc_smp.model import PARALLEL_FROM
    doc = read_document(C2)
    cases = cartesian(parse_sweeps(["disk.seek_time=0.5e6:1.5e6:0.05e6", "disk.rotation_latency=1e6:1.6e6:0.05e6"]))
    assert len(cases) >= PARALLEL_FROM
    frame = run_sweep(doc, cases, progress=False)
    for i in (0, len(cases) // 2, len(cases) - 1):
        sol = model_from_document(doc, cases[i]).solve()
        assert frame.loc[i, "tpmC"] == sol.outputs["tpmC"]
        assert frame.loc[i, "utilization.io_bus_1"] == sol.outputs["utilization"]["io_bus_1"]


def test_five_class_cases_go_case_by_case():
    doc = read_document(C2)
    cases = [{"model.classes": "single"}, {"model.classes": "transaction"}]
    frame = run_sweep(doc, cases, progress=False)
    multi = model_from_document(doc, {"model.classes": "transaction"}).solve()
    assert frame.loc[1, "tpmC"] == multi.outputs["tpmC"]


def test_dask_local_cluster_gives_identical_results():
    import dask.distributed  # noqa: F401 (a declared test extra: its absence is a failure)
    doc = read_document(C2)
    cases = cartesian(parse_sweeps(["cpus=1:4:1", "disk.seek_time=0.6e6:1e6:0.2e6"]))
    local = run_sweep(doc, cases, progress=False)
    distributed = run_sweep(doc, cases, workers=2, chunk_size=3, progress=False)
    pd.testing.assert_frame_equal(local, distributed, check_exact=True)


def test_an_existing_dask_scheduler_gets_the_chunks(capsys):
    import dask.distributed as distributed
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        assert main(["solve", TEN, "--sweep", "station.cpu.demand=0.01:0.05:0.01", "--format", "csv",
                     "--scheduler", cluster.scheduler_address, "--chunk-size", "2"]) == 0
        remote = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert main(["solve", TEN, "--sweep", "station.cpu.demand=0.01:0.05:0.01", "--format", "csv"]) == 0
    local = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    pd.testing.assert_frame_equal(local, remote, check_exact=True)


# --- optimisation helpers -----------------------------------------------------------------

def test_elasticity_matches_the_closed_form_of_a_delay_network(tmp_path):
    """X = N / (Z + D) for delay stations only: d log X / d log Z = -Z / (Z + D)."""
    path = tmp_path / "delay.toml"
    path.write_text('[network]\npopulation = [5]\nthink_time = [3.0]\n'
                    '[[station]]\nname = "d"\ntype = "delay"\ndemand = [1.0]\n')
    frame = sensitivities(target_from_document(read_document(str(path))))
    by_name = dict(zip(frame["parameter"], frame["elasticity"], strict=False))
    assert by_name["network.think_time"] == pytest.approx(-3.0 / 4.0, rel=1e-6)
    assert by_name["station.d.demand"] == pytest.approx(-1.0 / 4.0, rel=1e-6)
    assert list(frame["parameter"]) == ["network.think_time", "station.d.demand"]     # ranked


def test_tpcc_c2_sensitivities_rank_rotation_over_seek_over_transfer():
    frame = sensitivities(target_from_document(read_document(C2)))
    e = dict(zip(frame["parameter"], frame["elasticity"].abs(), strict=False))
    assert e["disk.rotation_latency"] > e["disk.seek_time"] > e["disk.transfer_time"] > 0
    assert "solver.tol" not in e and "cpus" not in e        # settings and integers have no elasticity


def test_target_condition():
    frame = pd.DataFrame({"cpus": [1, 2, 3], "tpmC": [40.0, 55.0, 60.0]})
    assert first_meeting(frame, "tpmC>=55")["cpus"] == 2
    assert first_meeting(frame, "tpmC > 70") is None
    assert parse_condition("tpmC<=3e1") == ("tpmC", "<=", 30.0)
    with pytest.raises(ModelError, match="expected OUTPUT>=VALUE"):
        parse_condition("tpmC=55")
    with pytest.raises(ModelError, match="no output 'tpm'"):
        first_meeting(frame, "tpm>=1")


# --- command line -------------------------------------------------------------------------

def test_cli_sweep_formats_plot_and_target(tmp_path, capsys):
    png = tmp_path / "sweep.png"
    assert main(["solve", C2, "--sweep", "cpus=1:4:1", "--sweep", "io_buses=1,2", "--set", "disks=2",
                 "--set", "mapping.table_to_disk=[1,2,1,2,1,2,1,2,1]", "--format", "csv",
                 "--plot", str(png), "--target", "tpmC>=55"]) == 0
    captured = capsys.readouterr()
    frame = pd.read_csv(pd.io.common.StringIO(captured.out))
    assert list(frame.columns[:2]) == ["cpus", "io_buses"] and len(frame) == 8
    assert "tpmC" in frame.columns and "bottleneck" in frame.columns
    assert png.stat().st_size > 1000 and png.read_bytes()[:4] == b"\x89PNG"
    assert "first case meeting it: cpus=" in captured.err
    before = png.read_bytes()
    assert main(["solve", C2, "--sweep", "cpus=1,2", "--plot", str(png)]) == 2      # never overwritten unasked
    assert "exists; pass --force" in capsys.readouterr().err and png.read_bytes() == before
    assert "it/s" not in captured.err and "%|" not in captured.err        # no progress bar off a terminal

    out = tmp_path / "sweep.parquet"
    assert main(["solve", TEN, "--sweep", "station.cpu.demand=0.01:0.03:0.01", "--format", "parquet",
                 "-o", str(out)]) == 0
    assert len(pd.read_parquet(out)) == 3
    assert main(["solve", TEN, "--sweep", "station.cpu.demand=0.01", "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out.splitlines()[0])
    assert record["station.cpu.demand"] == 0.01 and record["converged"] is True


def test_cli_sensitivity(capsys):
    assert main(["solve", C2, "--sensitivity", "--format", "csv"]) == 0
    frame = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert set(frame["output"]) == {"tpmC"}
    assert frame["elasticity"].abs().is_monotonic_decreasing


@pytest.mark.parametrize("args, message", [
    (["--sweep", "cpu=1,2"], "cpu: unknown parameter; did you mean cpus"),
    (["--sweep", "cpus=4:1:1"], "reversed"),
    (["--sweep", "cpus=1,2", "--sweep", "disks=1,2,4", "--zip"], "unequal length"),
    (["--sweep", "cpus"], "expected NAME=SPEC"),
    (["--sweep", "cpus=0,1"], "cpus: must be an integer in 1..1024"),
    (["--sweep", "cpus=1,2", "--format", "parquet"], "parquet is binary"),
    (["--zip"], "applies to sweeps"),
    (["--sweep", "cpus=1", "--workers", "0"], "--workers: must be >= 1"),
    (["--sweep", "cpus=1", "--target", "tpmC=5"], "expected OUTPUT>=VALUE"),
    (["--sweep", "cpus=1", "--method", "exact"], "is a model file"),
    (["--sensitivity", "--tol", "1e-6"], "is a model file"),
])
def test_cli_sweep_errors_are_one_line(args, message, capsys):
    assert main(["solve", C2, *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_network_parameter_errors_list_valid_names(capsys):
    assert main(["solve", TEN, "--sweep", "station.disk.demand=1,2"]) == 2
    err = capsys.readouterr().err
    assert "valid: network.population, network.think_time, station.cpu.demand" in err


def test_network_list_parameters_and_set(capsys):
    assert main(["solve", TEN, "--list-parameters"]) == 0
    assert "station.disk1.demand" in capsys.readouterr().out
    assert main(["solve", TEN, "--set", "station.disk1.demand=0.5", "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    expected = exact_mva(_network_with(read_document(TEN), {"station.disk1.demand": 0.5}))
    assert record["throughput"] == [expected.throughput[0]]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_stations=st.integers(1, 5), population=st.integers(1, 30),
       n_values=st.integers(1, 6))
def test_random_network_sweeps_equal_single_solves(seed, n_stations, population, n_values):
    """Any single-class network (every station kind), any station's demand and the think
    time swept: each row is bit for bit the exact solve of its case."""
    from mva.random_networks import random_station
    rng = np.random.default_rng(seed)
    stations = [random_station(rng, f"s{k}", 1, skip_probability=0.0) for k in range(n_stations)]
    doc = {"network": {"population": [population], "think_time": [float(rng.uniform(0, 3))]},
           "station": [{"name": s.name, "type": s.kind, "demand": list(s.demand),
                        **({"servers": s.servers} if s.kind == "multi" else {}),
                        **({"capacity": list(s.capacity)} if s.kind == "ld" else {})} for s in stations]}
    swept = f"station.s{int(rng.integers(n_stations))}.demand"
    sweeps = {swept: [float(v) for v in rng.uniform(0.01, 1.0, n_values)], "network.think_time": [0.0, 1.5]}
    _assert_sweep_equals_single_solves(doc, cartesian(sweeps))


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGKILL"])
def test_an_interrupted_sweep_leaves_no_output_and_resumes_to_the_same_bytes(tmp_path, signal_name):
    """Killed half-way, a sweep to -o FILE leaves nothing under FILE; --resume finishes
    it, and the file is byte for byte that of an uninterrupted run."""
    import json
    import signal
    import subprocess
    import sys
    import time

    args = [sys.executable, "-m", "mva", "solve", TEN, "--sweep", "station.disk1.demand=0.001:0.1:0.0001",
            "--sweep", "station.cpu.demand=0.01:0.03:0.0005", "--format", "csv", "--chunk-size", "2000"]
    whole = tmp_path / "whole.csv"
    assert subprocess.run(args + ["-o", str(whole)], capture_output=True).returncode == 0
    out = tmp_path / "out.csv"
    state = tmp_path / ".out.csv.sweep.json"
    proc = subprocess.Popen(args + ["-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline:          # wait until a few chunks are on disk
        try:
            if json.loads(state.read_text())["chunks"] >= 3:
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.02)
    proc.send_signal(getattr(signal, signal_name))
    _, err = proc.communicate(timeout=60)
    if proc.returncode == 0:
        pytest.skip("the sweep finished before the signal arrived")
    assert not out.exists()
    if signal_name == "SIGINT":
        assert proc.returncode == 130 and b"--resume" in err and b"Traceback" not in err
    assert json.loads(state.read_text())["chunks"] >= 3
    again = subprocess.run(args + ["-o", str(out)], capture_output=True, text=True)
    assert again.returncode == 2 and "--resume" in again.stderr       # refuses to start over silently
    resumed = subprocess.run(args + ["-o", str(out), "--resume"], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert out.read_bytes() == whole.read_bytes()
    assert not state.exists() and not (tmp_path / ".out.csv.partial").exists()


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_unconverged_cases_are_counted_across_a_resume(tmp_path, fmt):
    """The count of unconverged cases after --resume covers the chunks written before the
    interruption too (it is kept in the state file)."""
    from mva.sweep_output import SweepOutput

    def chunk(flags):
        return pd.DataFrame({"x": np.arange(len(flags), dtype=float), "converged": flags})

    path = str(tmp_path / f"out.{fmt}")
    first = SweepOutput(path, fmt, "key", 3)
    first.write(0, chunk([True, False, False]))
    first.write(1, chunk([True, True, True]))
    first.close()                                    # interrupted: no finish()
    assert first.unconverged == 2
    resumed = SweepOutput(path, fmt, "key", 3, resume=True)
    assert resumed.first_chunk == 2 and resumed.unconverged == 2
    resumed.write(2, chunk([False, True, True]))
    resumed.finish()
    resumed.close()
    assert resumed.unconverged == 3


def test_a_delay_station_is_never_the_bottleneck(tmp_path, capsys):
    """A delay's utilisation is its mean number busy (here above 1): the bottleneck is the
    queue, however lightly loaded, and a network of delays alone has none."""
    path = tmp_path / "net.toml"
    path.write_text('[network]\npopulation = [4]\n[[station]]\nname = "q"\ntype = "queue"\ndemand = [0.1]\n'
                    '[[station]]\nname = "z"\ntype = "delay"\ndemand = [2.0]\n')
    assert main(["solve", str(path), "--sweep", "network.population=1,4", "--format", "csv"]) == 0
    frame = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert (frame["utilization.z"] > frame["utilization.q"]).all()
    assert list(frame["bottleneck"]) == ["q", "q"]
    path.write_text('[network]\npopulation = [4]\n[[station]]\nname = "z"\ntype = "delay"\ndemand = [2.0]\n')
    assert main(["solve", str(path), "--sweep", "network.population=1,4", "--format", "csv"]) == 0
    frame = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out), keep_default_na=False)
    assert list(frame["bottleneck"]) == ["", ""]
