"""method="auto", the accuracy statement and flags of approximate results, and Newton's
method near saturation."""
import json
import warnings

import numpy as np
import pytest

from mva import Network, NumericalWarning, Station, solve
from mva.auto import choose_method
from mva.cli import main
from mva.random_networks import random_study_sample


def _many_classes(n_classes=8, population=40):
    rng = np.random.default_rng(5)
    return Network([Station("cpu", "multi", rng.uniform(0.01, 0.03, n_classes), servers=4),
                    Station("disk", "queue", rng.uniform(0.01, 0.03, n_classes))],
                   population=[population] * n_classes, think_time=[1.0] * n_classes)


def test_auto_is_exact_when_affordable():
    net = Network([Station("cpu", "multi", [0.1, 0.2], servers=2), Station("disk", "queue", [0.2, 0.1])],
                  population=[10, 5], think_time=[1.0, 2.0])
    auto, exact = solve(net, "auto"), solve(net, "exact")
    assert auto.method == "exact" and auto.accuracy == "exact"
    assert auto.extras["auto"].startswith("exact: estimated")
    np.testing.assert_array_equal(auto.throughput, exact.throughput)
    np.testing.assert_array_equal(auto.queue_length, exact.queue_length)


def test_auto_falls_back_to_linearizer_beyond_the_lattice():
    """8 classes x 40 customers: 8e12 population vectors; Linearizer's numbers, said so."""
    net = _many_classes()
    auto, lin = solve(net, "auto"), solve(net, "linearizer")
    assert auto.method == "linearizer"
    assert "population vectors" in auto.extras["auto"]
    assert auto.accuracy.startswith("approximate (Linearizer)")
    np.testing.assert_array_equal(auto.throughput, lin.throughput)


def test_auto_uses_schweitzer_when_linearizer_is_too_costly():
    rng = np.random.default_rng(1)
    net = Network([Station(f"s{k}", "multi", rng.uniform(0.001, 0.01, 60), servers=8) for k in range(300)],
                  population=[20] * 60)
    method, reason = choose_method(net)
    assert method == "schweitzer" and "Linearizer" in reason


def test_cli_auto_says_which_method_ran_in_table_and_json(tmp_path, capsys):
    net = _many_classes()
    lines = ["[network]", f"population = {list(net.population)}", f"think_time = {list(net.think_time)}"]
    for st in net.stations:
        lines += ["[[station]]", f'name = "{st.name}"', f'type = "{st.kind}"', f"demand = {list(st.demand)}"]
        if st.kind == "multi":
            lines.append(f"servers = {st.servers}")
    path = tmp_path / "big.toml"
    path.write_text("\n".join(lines) + "\n")
    assert main(["solve", str(path)]) == 0
    table = capsys.readouterr().out
    assert "(method: linearizer," in table
    assert "auto chose linearizer: the exact lattice has" in table
    assert "accuracy: approximate (Linearizer)" in table
    assert main(["solve", str(path), "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["method"] == "linearizer" and record["algorithm"] == "linearizer"
    assert record["auto"].startswith("linearizer:")
    np.testing.assert_allclose(record["throughput"], solve(net, "linearizer").throughput, rtol=1e-12)


def _thrashing_network():
    return Network([Station("locks", "ld", [0.3, 0.2, 0.4], capacity=[2.1, 2.5, 1.6, 0.7]),
                    Station("cpu", "queue", [0.1, 0.2, 0.1])], population=[6, 4, 5])


@pytest.mark.parametrize("method", ["schweitzer", "linearizer"])
def test_decreasing_capacity_is_flagged_with_station_and_reason(method):
    with pytest.warns(NumericalWarning, match=r"unreliable: station\[locks\]: capacity decreases"):
        result = solve(_thrashing_network(), method)
    assert result.accuracy.startswith("unreliable: station[locks]: capacity decreases from alpha(2)=2.5")
    assert "unreliable" in result.message


@pytest.mark.parametrize("method", ["schweitzer", "linearizer"])
def test_non_decreasing_capacity_is_not_flagged(method):
    net = Network([Station("cpus", "ld", [0.3, 0.2], capacity=[1.0, 1.8, 2.4]),
                   Station("disk", "queue", [0.1, 0.2])], population=[6, 4])
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        result = solve(net, method)
    assert result.accuracy.startswith("approximate (")


def test_cli_prints_the_flag(tmp_path, capsys):
    path = tmp_path / "thrash.toml"
    path.write_text('[network]\npopulation = [6, 4, 5]\n'
                    '[[station]]\nname = "locks"\ntype = "ld"\ndemand = [0.3, 0.2, 0.4]\ncapacity = [2.1, 2.5, 1.6, 0.7]\n'
                    '[[station]]\nname = "cpu"\ntype = "queue"\ndemand = [0.1, 0.2, 0.1]\n')
    assert main(["solve", str(path), "--method", "linearizer"]) == 0
    captured = capsys.readouterr()
    assert "WARNING: accuracy: unreliable: station[locks]" in captured.out
    assert "mva: warning:" in captured.err and "station[locks]" in captured.err


def test_every_linearizer_result_more_than_3_percent_off_is_flagged():
    """A seeded sample, half with thrashing capacity functions: an unflagged Linearizer
    result is within 3% of exact on every class (the promise of ``accuracy``)."""
    unflagged_count = bad = 0
    for net in random_study_sample(99, 60, max_classes=4, max_stations=8, monotone_share=0.5,
                                   max_population=20, max_lattice=3_000):
        exact = solve(net)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumericalWarning)
            result = solve(net, "linearizer")
        error = np.max(np.abs(result.throughput - exact.throughput) / exact.throughput)
        unflagged = result.converged and not result.accuracy.startswith("unreliable")
        bad += error > 0.03
        if unflagged:
            unflagged_count += 1
            assert error <= 0.03, (net, error)
    assert unflagged_count >= 30 and bad >= 2   # the sample exercises both sides


def test_newton_finishes_a_fixed_point_that_substitution_does_not():
    """30 classes x 100 customers on 100 queues: substitution stalls, Newton converges,
    and the answer satisfies Bard-Schweitzer's equations (checked here in plain numpy)."""
    rng = np.random.default_rng(2026)
    demand = rng.uniform(0.005, 0.05, (100, 30))
    think = rng.uniform(0.5, 2.0, 30)
    net = Network([Station(f"s{k}", "queue", demand[k]) for k in range(100)], population=[100] * 30,
                  think_time=think.tolist())
    result = solve(net, "schweitzer", tol=1e-10)
    assert result.converged and result.extras["newton_iterations"] > 0
    n = np.array(net.population, float)
    q = result.queue_length
    residence = demand * (1.0 + q.sum(axis=1)[:, None] - q / n)
    throughput = n / (think + residence.sum(axis=0))
    np.testing.assert_allclose(result.throughput, throughput, rtol=1e-8)
    np.testing.assert_allclose(q, throughput * residence, rtol=1e-8, atol=1e-10)


def test_no_flag_where_the_approximation_is_exact():
    """One closed customer: both methods are exact, so a decreasing capacity is no doubt."""
    net = _thrashing_network().replace(population=[1, 0, 0])
    for method in ("schweitzer", "linearizer"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", NumericalWarning)
            result = solve(net, method)
        assert not result.accuracy.startswith("unreliable")
        np.testing.assert_allclose(result.throughput, solve(net).throughput, rtol=1e-10)


@pytest.mark.parametrize("seed", range(10))
def test_conditional_check_is_exact_for_one_station_and_delays(seed):
    """The conditional check's polynomial solution against exact MVA on the network it
    models: one load-dependent station and per-class think times."""
    from mva.conditional import conditional_throughput

    rng = np.random.default_rng(600 + seed)
    C = 1 + seed % 3
    station = Station("x", "ld", rng.uniform(0.1, 1.0, C), capacity=rng.uniform(0.3, 3.0, 1 + seed % 4))
    think = rng.uniform(0.0, 3.0, C) * (rng.random(C) < 0.8)
    population = rng.integers(1, 12, C)
    net = Network([station], population=population.tolist(), think_time=think.tolist())
    np.testing.assert_allclose(conditional_throughput(station.demand, station.capacity_function(), population,
                                                      think), solve(net).throughput, rtol=1e-12)


def test_decreasing_capacity_that_passes_the_check_is_not_flagged():
    net = Network([Station("ld", "ld", [0.05, 0.08], capacity=[1.0, 2.0, 1.5]),
                   Station("q", "queue", [0.2, 0.1])], population=[3, 2], think_time=[1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        result = solve(net, "linearizer")
    assert result.accuracy.startswith("approximate (Linearizer)")
    assert "station[ld]'s decreasing capacity checked (within" in result.accuracy
