"""Issue #33, a newcomer's findings: what the output says must be what happened."""
import numpy as np
import os

import pytest

from mva import Network, Station, solve
from mva.cli import main


def test_a_what_if_that_changes_nothing_warns_and_names_the_idle_resource(capsys):
    assert main(["solve", "data/tpcc/c2.toml", "--sweep", "cpus=1,2", "--sweep", "io_buses=1,2"]) == 0
    err = capsys.readouterr().err
    assert "--sweep io_buses: every value gives the same outputs" in err
    assert "idle in every case: utilization.io_bus_2" in err
    # a what-if that matters says nothing
    assert main(["solve", "data/tpcc/c2.toml", "--sweep", "cpus=1,2", "--sweep",
                 "disk.rotation_latency=1.5e6,0.75e6"]) == 0
    assert "changes nothing" not in capsys.readouterr().err


def test_sweep_tables_and_plots_carry_units(capsys, tmp_path):
    assert main(["solve", "data/tpcc/c2.toml", "--sweep", "cpus=1,2"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert "cpus [CPUs]" in header and "tpmC [New-Order/min]" in header and "response_time [s]" in header
    assert main(["solve", "data/tpcc/c2.toml", "--sweep", "cpus=1,2", "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("cpus,tpmC,")          # machine-readable names stay bare
    import matplotlib.pyplot as plt

    from mva.analysis import plot_sweep
    import pandas as pd

    labels = []
    real_savefig = plt.Figure.savefig

    def record(fig, *args, **kwargs):
        labels.extend([fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()])
        return real_savefig(fig, *args, **kwargs)

    plt.Figure.savefig = record
    try:
        plot_sweep(pd.DataFrame({"cpus": [1, 2], "tpmC": [28.0, 50.6]}), ["cpus"], "tpmC", str(tmp_path / "p.png"),
                   {"cpus": "CPUs", "tpmC": "New-Order/min"}.get)
    finally:
        plt.Figure.savefig = real_savefig
    assert labels == ["cpus [CPUs]", "tpmC [New-Order/min]"]


def test_every_auto_solve_says_what_it_chose_and_why(capsys):
    assert main(["solve", "data/examples/two-class.toml"]) == 0
    assert "auto chose exact: estimated" in capsys.readouterr().out
    assert main(["solve", "data/examples/two-class.toml", "--set", "network.population=[3000, 3000]"]) == 0
    out = capsys.readouterr().out
    # 4.3e8 lattice steps of two classes took 4.8 s: over the one-second budget
    assert "(method: linearizer" in out and "auto chose linearizer: the exact lattice has 9.01e+06" in out


def test_compile_time_is_not_solve_time():
    from mva.jit import clock, compile_seconds, jit, seconds_since

    @jit
    def fresh(x):            # a kernel nobody compiled yet in this process (cached on disk maybe)
        return x * 3 + 1

    before = compile_seconds()
    mark = clock()
    assert fresh(2) == 7
    compiled = compile_seconds() - before
    import time

    since = seconds_since(mark)
    wall = time.perf_counter() - mark[0]
    assert since == pytest.approx(wall - compiled, abs=0.05) and since <= wall


def test_progress_bars_stay_off_when_stderr_is_not_a_terminal(capsys):
    assert main(["solve", "data/examples/ten-stations.toml", "--sweep", "station.cpu.demand=0.01:0.03:0.00000004",
                 "--format", "csv", "-o", "/dev/null", "--force"]) == 0
    err = capsys.readouterr().err
    assert "case/s" not in err and "%|" not in err
    # and /dev/null is still the device: a partial file renamed over it would have replaced it
    import stat
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_ccnuma_findings_write_every_change_with_one_sign():
    from calibration.studies.ccnuma import CLAIMS

    for claim in CLAIMS:
        if claim.metric.startswith("share"):
            continue
        if claim.metric.startswith("ratio of changes"):
            # a ratio of two changes has no faster side, but each change is written the one way
            assert claim.metric.count("- 1,") == 2, claim.metric
            continue
        if "time(" in claim.metric or "response(" in claim.metric or "messages(" in claim.metric:
            assert "- 1," in claim.metric and not claim.metric.startswith("1 -"), claim.metric
            faster = any(w in claim.statement for w in ("faster", "improves", "gain"))
            assert (claim.paper_value < 0) == faster, claim.id


def test_a_simulated_result_never_prints_an_interval_it_does_not_have(capsys):
    net = Network([Station("cpu", "queue", [0.01, 50.0])], population=[50, 1])
    result = solve(net, method="simulation", events=20_000)
    assert "no interaction completed" in result.message or np.all(np.isfinite(result.half_width["throughput"]))
