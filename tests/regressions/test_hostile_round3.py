"""Issue #75: the third round of hostile inputs, one test per mishandled case.

Each case must give one line naming the option or field the user gave (exit 2 on the
command line, a ``ValueError`` subclass in the API), checked before long work, or a
result flagged as what it is; never a traceback, a silent NaN or a wrong label.
"""
import contextlib
import errno
import importlib
import io
import json
import os

import numpy as np
import pytest

import mva
from mva import Network, Station
from mva.cli import main


def run(argv, module=None) -> tuple[int, str, str]:
    """Status, stdout and stderr of ``mva ARGV`` (or a study module's main) in this process."""
    import warnings

    from mva.cli import _one_line_warning

    out, err = io.StringIO(), io.StringIO()
    runner = main if module is None else importlib.import_module(module).main
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.showwarning = _one_line_warning     # as the command shows them: one line each
        try:
            status = runner(argv)
        except SystemExit as stop:          # argparse's usage errors
            status = stop.code
    return status, out.getvalue(), err.getvalue()


def refused(argv, names: str, module=None, seconds: float | None = None) -> str:
    """``argv`` exits 2 with one line that names ``names``; the line."""
    status, _, err = run(argv, module)
    lines = [line for line in err.splitlines() if ": warning:" not in line and ": note:" not in line]
    assert status == 2 and len(lines) == 1, (argv, status, err)
    assert "Traceback" not in err
    assert names in lines[0], (names, lines[0])
    return lines[0]


# --- tracebacks ---------------------------------------------------------------------------
SHARED_BUS = "calibration.studies.shared_bus"


@pytest.mark.parametrize("argv, names", [
    (["--cpus", "abc"], "--cpus"),
    (["--references", "0"], "--references"),
    (["--workload", "nosuch"], "--workload"),
    (["--cpus", "4:1"], "--cpus"),              # ran 45 s, then KeyError: 'gsp_error'
    (["--calibrate-at", "x"], "--calibrate-at"),
    (["--references", "3"], "--references"),    # fewer references than the preset's processes
])
def test_shared_bus_study_refuses_bad_options_before_any_run(argv, names):
    refused(argv, names, SHARED_BUS)


def test_tpcc_postgres_study_names_a_missing_recording():
    refused(["--recording", "nosuch"], "--recording", "calibration.studies.tpcc_postgres")


@pytest.mark.parametrize("argv, names", [
    (["--references-per-job", "-5"], "--references-per-job"),
    (["--max-jobs", "0"], "--max-jobs"),   # used the model's own curve under the simulator's name
])
def test_tpcc_cpu_centre_study_refuses_bad_options(argv, names):
    refused(argv, names, "calibration.studies.tpcc_cpu_centre")


def test_an_empty_cpu_rate_table_is_refused_in_the_api():
    from calibration.profiles.tpcc_smp import cpu_rate_table
    from models.tpcc_smp import TPCCSMP, data

    with pytest.raises(ValueError, match="max_jobs"):
        cpu_rate_table(TPCCSMP.from_values(data.configuration_values("C1")), 2, max_jobs=0)


@pytest.mark.parametrize("argv", [
    ["solve", "data/examples/two-class.toml"],
    ["solve", "data/examples/two-class.toml", "--sweep", "network.population[0]=1,2"],
    ["solve", "data/examples/two-class.toml", "--sweep", "network.population[0]=1,2", "--format", "csv"],
    ["solve", "data/examples/two-class.toml", "--sensitivity"],
    ["simulate", "--machine", "bus", "data/traces/ls-head.din", "--references", "3000"],
], ids=["solve", "sweep-table", "sweep-csv", "sensitivity", "simulate"])
def test_a_full_device_is_one_line_naming_the_output(argv):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    line = refused(argv + ["-o", "/dev/full", "--force"], "-o")
    assert "No space left on device" in line


def test_a_disk_that_fills_leaves_no_partial_file(tmp_path, monkeypatch):
    """A regular file whose write fails (ENOSPC) leaves neither it nor a temporary file."""
    import builtins

    real_open = builtins.open

    class Full(io.StringIO):
        def close(self):
            raise OSError(errno.ENOSPC, "No space left on device")

    def full_open(name, mode="r", *args, **kwargs):
        if "w" in mode and str(name).startswith(str(tmp_path)):
            real_open(name, mode, *args, **kwargs).close()          # the file exists, as on a real disk
            return Full()
        return real_open(name, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", full_open)
    target = tmp_path / "out.txt"
    line = refused(["solve", "data/examples/two-class.toml", "-o", str(target)], "-o")
    assert "No space left on device" in line
    assert list(tmp_path.iterdir()) == []


def test_simulate_network_names_bad_settings_and_networks():
    net = mva.load_network("data/examples/two-class.toml")
    with pytest.raises(ValueError, match="settings"):
        mva.simulate_network(net, settings="fast")
    with pytest.raises(ValueError, match="network: expected a Network"):
        mva.simulate_network("data/examples/two-class.toml")
    with pytest.raises(ValueError, match="network: expected a Network"):
        mva.exact_mva(None)


# --- silently wrong -----------------------------------------------------------------------
def _network(demand, think=0.0):
    return Network([Station("cpu", "queue", [demand])], population=[3], think_time=[think])


@pytest.mark.parametrize("demand, think", [(1.7e308, 1.7e308), (5e-324, 0.0)])
def test_times_beyond_double_precision_are_refused(demand, think):
    """1.7e308 gave throughput 0 and 5e-324 a NaN queue, both 'exact'."""
    with pytest.raises(ValueError, match="outside .* change the time unit"):
        _network(demand, think)


def test_the_widest_accepted_times_solve_to_finite_scaled_answers():
    for scale in (1e-150, 1e150 / 4):
        net = Network([Station("a", "queue", [scale, 2 * scale]), Station("b", "multi", [scale, scale], servers=3)],
                      population=[5, 2], think_time=[scale, 0.0])
        unit = Network([Station("a", "queue", [1.0, 2.0]), Station("b", "multi", [1.0, 1.0], servers=3)],
                       population=[5, 2], think_time=[1.0, 0.0])
        r, ref = mva.solve(net), mva.solve(unit)
        assert r.accuracy == "exact" and r.converged
        assert np.allclose(r.throughput * scale, ref.throughput, rtol=1e-9)
        assert np.allclose(r.queue_length, ref.queue_length, rtol=1e-9)


def test_a_result_that_left_double_precision_is_never_exact():
    r = mva.Result("exact", ("c",), ("s",), np.array([0.5]), np.array([np.inf]), np.array([[np.inf]]),
                   np.array([[1.0]]), np.array([[0.5]]), accuracy="exact")
    assert not r.converged and r.accuracy.startswith("unreliable")
    empty = mva.Result("exact", ("c",), ("s",), np.array([0.0]), np.array([np.nan]), np.array([[np.nan]]),
                       np.array([[0.0]]), np.array([[0.0]]), accuracy="exact")
    assert empty.converged and empty.accuracy == "exact"        # a class without customers: NaN by design


def test_a_json_demand_true_is_not_one(tmp_path):
    path = tmp_path / "bool.json"
    path.write_text(json.dumps({"network": {"population": [3]},
                                "station": [{"name": "cpu", "type": "queue", "demand": [True]}]}))
    refused(["solve", str(path)], "station[cpu].demand")
    with pytest.raises(ValueError, match="demand"):
        Station("cpu", "queue", [True])


SCALING = ["simulate", "--scalability", "--machine", "bus", "data/traces/ls-head.din", "--references", "3000"]


@pytest.mark.parametrize("option, value", [("--threshold", "nan"), ("--threshold", "-1"), ("--max-cpus", "0")])
def test_scalability_search_refuses_meaningless_bounds(option, value):
    refused(SCALING + [option, value], option)


CALIBRATE = ["calibrate", "data/examples/calibration/network.toml", "data/examples/calibration/observations.csv",
             "--fit", "station.cpu.demand=0:1"]


@pytest.mark.parametrize("option, value", [("--level", "1.5"), ("--level", "0"), ("--loss-scale", "-1"),
                                           ("--loss-scale", "nan")])
def test_calibrate_refuses_levels_and_scales_out_of_range(option, value):
    refused(CALIBRATE + [f"{option}={value}"], option)


def test_the_fit_api_refuses_them_too():
    from calibration.fit import fit
    from mva.files import read_document

    doc = read_document("data/examples/calibration/network.toml")
    for keyword, value in (("level", 1.5), ("loss_scale", -1.0)):
        with pytest.raises(ValueError, match=keyword):
            fit(doc, "data/examples/calibration/observations.csv", ["station.cpu.demand"], **{keyword: value})


def test_the_tpcc_study_refuses_a_negative_loss_scale():
    refused(["--loss-scale", "-1"], "--loss-scale", "calibration.studies.tpcc")


def test_an_observed_utilisation_above_one_is_refused(tmp_path):
    path = tmp_path / "obs.csv"
    path.write_text("throughput,utilization.cpu\n1.0,0.5\n2.0,1.7\n")
    refused(["calibrate", str(path), "--demands"], "column utilization.cpu")


# --- wrong or missing names ---------------------------------------------------------------
def test_demands_name_the_column_whose_gaps_cost_the_rows(tmp_path):
    path = tmp_path / "obs.csv"
    path.write_text("throughput,utilization.cpu\n,0.5\n,0.6\n")
    line = refused(["calibrate", str(path), "--demands"], "column throughput")
    assert "utilization.cpu:" not in line


def test_a_manifest_without_data_references_is_refused_on_every_machine(tmp_path):
    (tmp_path / "i.din").write_text("2 400000\n2 400004\n")          # instruction fetches only
    (tmp_path / "w.toml").write_text('name = "ifonly"\n[[process]]\nname = "p0"\ntrace = "i.din"\n')
    for machine in ("ccnuma", "svm", "cmt"):          # ccnuma and svm printed a run of zeros
        line = refused(["simulate", "--machine", machine, str(tmp_path / "w.toml")], "no data references")
        assert line.startswith(("mva: workload: ifonly", "mva: process[p0]")), line


def test_a_station_kind_is_named_as_the_api_spells_it():
    with pytest.raises(ValueError, match=r"station\[q\]\.kind"):
        Station("q", "nosuch", [1.0])


def test_a_bad_size_names_its_field():
    from calibration.sim.registry import MACHINES

    with pytest.raises(ValueError, match="^l2: expected a size"):
        MACHINES["cmt"].config(l2="48XB")
    with pytest.raises(ValueError, match="^cache: "):
        MACHINES["bus"].config(cache="x")


def test_the_cmt_study_says_when_no_l2_matches():
    """It printed 'matched by round-robin at infx the L2'."""
    import pandas as pd

    from calibration.studies.cmt import l2_equivalence, l2_equivalence_line

    sched = pd.DataFrame({"scheduler": ["fair", "round-robin"], "l2_kib": [384, 384], "l2_miss_ratio": [0.01, 0.4]})
    larger = pd.DataFrame({"scheduler": ["round-robin"], "l2_kib": [1536], "l2_miss_ratio": [0.3]})
    assert l2_equivalence(sched, larger) == float("inf")
    line = l2_equivalence_line(sched, larger)
    assert "inf" not in line and "up to 1536 KiB, 4.00x" in line
    met = larger.assign(l2_miss_ratio=[0.01])
    assert l2_equivalence_line(sched, met).endswith("at 4.00x the L2")


# --- timings ------------------------------------------------------------------------------
def test_solve_times_leave_out_loading_as_well_as_compiling(monkeypatch):
    """A model file printed 260-1,078 ms for a solve of about 0.4 ms: numba's loading of
    its cached kernels (outside its compile event) was counted.  Start-up is now all the
    time under numba's compiler lock, and every reported time subtracts it."""
    from numba import njit

    from mva import jit

    before_start, before_compile = jit.startup_seconds(), jit.compile_seconds()
    mark = jit.clock()

    @njit(cache=False)
    def fresh(x):
        return x + 1

    assert fresh(1) == 2
    grown_start, grown_compile = jit.startup_seconds() - before_start, jit.compile_seconds() - before_compile
    assert grown_compile > 0 and grown_start >= grown_compile
    assert jit.seconds_since(mark) < grown_start      # the compile (and its lock) is not in the time
    # loading alone: time under the lock that is no compiling is subtracted too
    mark = jit.clock()
    monkeypatch.setattr(jit, "_STARTING", type("L", (), {"done": True, "duration": jit.startup_seconds() + 5.0})())
    assert jit.seconds_since(mark) < 0          # 5 s of "loading" taken off a few microseconds


def test_the_command_line_reports_loading_apart_and_once(capsys):
    from mva import cli

    cli._report_startup(0.2, 1.5)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "loaded compiled numba kernels in 1.5 s" in err
    cli._report_startup(12.0, 12.4)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "compiled numba kernels for 12.0 s" in err and "0.4 s" in err
    cli._report_startup(0.1, 0.3)
    assert capsys.readouterr().err == ""


# --- what a newcomer trips on -------------------------------------------------------------
def test_every_readme_command_that_writes_a_file_can_run_twice():
    """The tour wrote sweep.csv into the checkout, so a second pass failed with exit 2."""
    import re
    import shlex
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    writers = [shlex.split(line.split(" # ")[0]) for line in re.findall(r"^\s*(mva .*)$", readme, flags=re.M)
               if " -o " in line or " --write " in line]
    assert writers
    for argv in writers:
        assert "--force" in argv, argv


def test_a_tpcc_sweep_table_fits_a_wide_terminal():
    """It was about 400 characters wide; the per-resource groups stay in the files."""
    status, out, _ = run(["solve", "data/tpcc/c2.toml", "--sweep", "cpus=1,2"])
    assert status == 0
    table = [line for line in out.splitlines() if line.strip()]
    assert max(map(len, table)) <= 160, max(map(len, table))
    assert "utilization.*, residence_time.*" in table[-1]
    status, csv, _ = run(["solve", "data/tpcc/c2.toml", "--sweep", "cpus=1,2", "--format", "csv"])
    assert "utilization.disk_1" in csv.splitlines()[0] and "residence_time.io" in csv.splitlines()[0]


def test_a_class_without_customers_has_no_response_time():
    status, out, _ = run(["solve", "data/examples/two-class.toml", "--set", "network.population=[20, 0]"])
    assert status == 0
    batch = [line.split() for line in out.splitlines() if line.split()[:1] == ["batch"]][0]
    assert batch[1:] == ["0", "n/a"], batch          # throughput 0, response time n/a (was 0)
    status, csv, _ = run(["solve", "data/examples/two-class.toml", "--sweep", "network.population[1]=0,2",
                          "--format", "json"])
    rows = [json.loads(line) for line in csv.splitlines()]
    assert rows[0]["response_time.batch"] is None and rows[1]["response_time.batch"] > 0


def test_the_target_is_answered_beside_a_table():
    status, out, _ = run(["solve", "data/tpcc/c2.toml", "--sweep", "cpus=1,2", "--sweep",
                          "disk.rotation_latency=1.5e6,0.75e6", "--target", "tpmC>=55"])
    assert status == 0
    assert out.splitlines()[-1] == ("mva: target tpmC>=55: first case meeting it: cpus=2, "
                                    "disk.rotation_latency=750000 (tpmC 55.292)")


def test_a_two_class_plot_draws_each_class_with_units(tmp_path, monkeypatch):
    """--plot drew the sum of the classes' throughputs, with a bare x label."""
    import matplotlib.pyplot as plt

    drawn = {}
    real = plt.Figure.savefig

    def record(fig, *args, **kwargs):
        ax = fig.axes[0]
        drawn.update(x=ax.get_xlabel(), y=ax.get_ylabel(), lines=[line.get_label() for line in ax.get_lines()],
                     styles={(line.get_marker(), str(line.get_linestyle())) for line in ax.get_lines()})
        return real(fig, *args, **kwargs)

    monkeypatch.setattr(plt.Figure, "savefig", record)
    status, _, err = run(["solve", "data/examples/two-class.toml", "--sweep", "network.population[0]=1:5:1",
                          "--sweep", "network.population[1]=2,4", "--plot", str(tmp_path / "p.png")])
    assert status == 0, err
    assert drawn["x"] == "network.population[0] (oltp) [customers]"
    assert drawn["y"] == "throughput [1/s] per class"
    assert len(drawn["lines"]) == 4 and any("throughput.batch" in label for label in drawn["lines"])
    assert len(drawn["styles"]) == 4        # lines that coincide stay visible


@pytest.mark.parametrize("command", [
    ["-m", "mva", "solve", "data/examples/two-class.toml"],
    ["-m", "mva", "solve", "data/tpcc/c2.toml", "--sweep", "cpus=1,2"],
    ["-m", "models.tpcc_smp.report", "--no-classes"],
], ids=["solve", "sweep", "report"])
def test_standard_output_on_a_full_device_is_one_line(command):
    """``mva solve ... > /dev/full`` ended in a traceback."""
    import subprocess
    import sys
    from pathlib import Path

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, *command], stdout=full, stderr=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().endswith("standard output: cannot write: No space left on device"), done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("command", [
    ["-m", "mva", "solve", "data/tpcc/c2.toml", "--sweep", "cpus=1:64:1", "--sweep",
     "disk.rotation_latency=1e6:2e6:1e4", "--format", "csv"],
    ["-m", "mva", "calibrate", "data/examples/calibration/network.toml", "data/examples/calibration/observations.csv",
     "--fit", "station.cpu.demand=0:1"],
], ids=["sweep", "calibrate"])
def test_a_reader_that_leaves_early_is_no_error(command):
    """Piped into head: exit 0 and nothing on stderr (the full-device guard must not call a
    broken pipe a write error)."""
    import subprocess
    import sys
    from pathlib import Path

    producer = subprocess.Popen([sys.executable, *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=Path(__file__).resolve().parents[2])
    producer.stdout.readline()
    producer.stdout.close()          # the reader leaves after one line
    _, err = producer.communicate()
    assert producer.returncode == 0, err
    assert err.decode().strip() == ""


def test_a_fit_without_degrees_of_freedom_prints_no_nan(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("network.population,throughput\n10,4.5\n")
    status, out, _ = run(["calibrate", "data/examples/calibration/network.toml", str(path),
                          "--fit", "station.cpu.demand=0:1"])
    assert status == 0
    assert "no intervals" in out and "nan" not in out.lower()


@pytest.mark.parametrize("setting", ["io_bus.latency=1e300", "disk.seek_time=1e300", "disk.sector_size=1e-320",
                                     "io_bus.transfer_size=1e-320"])
def test_model_parameters_beyond_double_precision_are_refused(setting):
    """The fuzzing found TPC-C values that printed nan tpmC or ended in an OverflowError."""
    refused(["solve", "data/tpcc/c2.toml", "--set", setting], setting.split("=")[0])


def test_a_model_solution_with_an_infinite_output_is_not_converged():
    from mva.modelkind import ModelSolution, timed

    @timed
    def solve():
        return ModelSolution(kind="k", model="m", outputs={"x": float("inf"), "y": 1.0}, units={})

    solution = solve()
    assert not solution.converged and "x infinite" in solution.message
