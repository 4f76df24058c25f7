"""Issue #33, `mva solve --method simulation`: hostile and extreme run settings get one
line naming the option (exit 2) before any work, and a result that cannot carry an
interval says so instead of printing one."""
import json

import numpy as np
import pytest

from mva import Network, Station, solve
from mva.cli import main
from mva.errors import ModelError
from mva.simulation_settings import MAX_EVENTS, MIN_BATCH_EVENTS, SimulationSettings

TWO = "data/examples/two-class.toml"
MIXED = "data/examples/mixed.json"




@pytest.mark.parametrize("events", ["1", "10", str(20 * MIN_BATCH_EVENTS - 1)])
def test_too_few_events_per_batch_is_refused_naming_events(events, one_line):
    assert main(["solve", TWO, "--method", "simulation", "--events", events]) == 2
    one_line("--events:", "too few for a confidence interval", f"{20 * MIN_BATCH_EVENTS:,}")


def test_a_replication_needs_the_minimum_too():
    with pytest.raises(ModelError, match="per replication"):
        SimulationSettings(events=MIN_BATCH_EVENTS - 1, replications=3)
    SimulationSettings(events=MIN_BATCH_EVENTS, replications=3)


def test_an_unbounded_run_is_refused_before_it_starts(one_line):
    assert main(["solve", TWO, "--method", "simulation", "--events", "99999999999999"]) == 2
    one_line("--events:", f"{MAX_EVENTS:,}")


def test_a_class_that_completes_nothing_says_so_instead_of_crashing(capsys):
    # 200,000 oltp customers crowd out the one batch customer within 22,000 events
    assert main(["solve", TWO, "--method", "simulation", "--events", "20000",
                 "--set", "network.population=[200000, 1]"]) == 0
    captured = capsys.readouterr()
    assert "no interaction completed for class(es) batch" in captured.out
    row = next(line for line in captured.out.splitlines() if line.startswith("batch "))
    assert "n/a" in row and "nan" not in row and "inf" not in row


def test_the_same_with_precision_does_not_crash():
    net = Network([Station("cpu", "queue", [0.01, 50.0])], population=[50, 1])
    result = solve(net, method="simulation", events=20_000, precision=0.5, max_events=40_000)
    assert not result.converged and "precision 0.5 not reached" in result.message
    assert np.isinf(result.half_width["throughput"][1]) or result.throughput[1] > 0


def test_all_classes_empty_is_refused(one_line):
    assert main(["solve", TWO, "--method", "simulation", "--set", "network.population=[0, 0]"]) == 2
    one_line("network.population", "nothing to simulate")


def test_an_extreme_scv_is_refused_and_a_large_one_is_flagged(tmp_path, capsys, one_line):
    doc = ('[network]\npopulation = [10]\nthink_time = [1.0]\n[[station]]\nname = "cpu"\ntype = "queue"\n'
           'demand = [0.1]\nscv = {scv}\n')
    path = tmp_path / "n.toml"
    path.write_text(doc.format(scv="1e300"))
    assert main(["solve", str(path), "--method", "simulation"]) == 2
    one_line("station[cpu].scv", "10000")
    path.write_text(doc.format(scv="1000"))
    assert main(["solve", str(path), "--method", "simulation", "--events", "200000"]) == 0
    assert "WARNING: accuracy: unreliable: station cpu's service (scv 1000)" in capsys.readouterr().out


def test_servers_beyond_the_bound_are_refused_not_allocated(one_line):
    assert main(["solve", TWO, "--set", "station.cpus.servers=1000000000000"]) == 2
    one_line("station[cpus].servers", "delay station")


def test_precision_on_an_open_network_targets_response_time_and_names_what_bound_it():
    net = Network([Station("cpu", "queue", [0.05])], population=[0], arrival_rate=[10.0])
    result = solve(net, method="simulation", events=40_000, precision=0.02, seed=3)
    assert result.converged and "response_time of class1" in result.message
    rel = result.half_width["response_time"][0] / result.response_time[0]
    assert rel <= 0.02
    # throughput as the target: the old behaviour, now asked for by name
    by_throughput = solve(net, method="simulation", events=40_000, precision=0.02, seed=3, target="throughput")
    assert "throughput of class1" in by_throughput.message


def test_an_unknown_precision_target_names_the_option(one_line):
    assert main(["solve", TWO, "--method", "simulation", "--precision", "0.1", "--precision-target", "speed"]) == 2
    one_line("--precision-target:", "'speed'")


def test_simulated_sweep_rows_carry_half_widths_in_every_format(capsys):
    base = ["solve", TWO, "--method", "simulation", "--events", "20000", "--sweep", "network.population[0]=1,2"]
    assert main(base + ["--format", "json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 2
    for row in rows:
        assert 0 < row["throughput_half_width"] < row["throughput"]
        assert 0 < row["utilization.cpu_half_width"] < 1
    assert main(base + ["--format", "csv"]) == 0
    assert "response_time.oltp_half_width" in capsys.readouterr().out.splitlines()[0]
    assert main(base) == 0
    assert "throughput_half_width" in capsys.readouterr().out
