"""The discrete-event simulation (``method="simulation"``) against exact MVA on product-form
networks, against closed forms of single queues, and against its own invariants."""
from __future__ import annotations

import math

import numpy as np
import pytest

from mva import ModelError, Network, Station, exact_mva, solve
from mva.cli import main
from mva.random_networks import random_closed_network

COVERAGE_CASES = 200


def _covered(estimate, half_width, exact):
    return np.abs(np.asarray(estimate) - np.asarray(exact)) <= np.asarray(half_width) * (1 + 1e-9) + 1e-12


@pytest.fixture(scope="module")
def coverage():
    """Simulate 200 seeded random product-form networks (every station kind, 1-3 classes)
    and count how often each 99% interval holds the exact MVA value."""
    counts = {name: [0, 0] for name in ("throughput", "response_time", "queue_length", "little")}
    for case in range(COVERAGE_CASES):
        rng = np.random.default_rng(case)
        net = random_closed_network(rng, int(rng.integers(1, 4)), int(rng.integers(1, 6)), max_population=8)
        exact = exact_mva(net)
        sim = solve(net, method="simulation", seed=case, events=60_000, confidence=0.99)
        hw = sim.half_width
        for name in ("throughput", "response_time", "queue_length"):
            ok = _covered(getattr(sim, name), hw[name], getattr(exact, name))
            counts[name][0] += int(ok.sum())
            counts[name][1] += ok.size
        # Little's law on every station and class, within the estimates' own uncertainty
        little = np.abs(sim.queue_length - sim.residence_time * sim.throughput[None, :])
        slack = hw["queue_length"] + sim.residence_time * hw["throughput"][None, :] \
            + sim.throughput[None, :] * hw["residence_time"]
        counts["little"][0] += int((little <= slack + 1e-12).sum())
        counts["little"][1] += little.size
    return {name: hit / total for name, (hit, total) in counts.items()}


def test_intervals_cover_exact_mva_on_product_form_networks(coverage):
    assert coverage["throughput"] >= 0.97, coverage
    assert coverage["response_time"] >= 0.97, coverage
    assert coverage["queue_length"] >= 0.97, coverage


def test_littles_law_holds_within_the_intervals(coverage):
    assert coverage["little"] >= 0.99, coverage


def _erlang_c(servers: int, load: float) -> float:
    """Probability of waiting in M/M/c with offered load ``load`` = lambda / mu (Erlang C)."""
    top = load ** servers / math.factorial(servers) * servers / (servers - load)
    return top / (sum(load ** k / math.factorial(k) for k in range(servers)) + top)


@pytest.mark.parametrize("discipline", ["ps", "fcfs"])
def test_mm1_and_mmc_means(discipline):
    """M/M/1: Q = rho / (1 - rho); M/M/c: R = D + C(c, a) D / (c - a) (Erlang C); 99% intervals."""
    mm1 = Network([Station("q", "queue", [1.0], discipline=discipline)], population=[0], arrival_rate=[0.8])
    r = solve(mm1, method="simulation", events=2_000_000, seed=7, confidence=0.99)
    for value, hw, exact in ((r.queue_length[0, 0], r.half_width["queue_length"][0, 0], 4.0),
                             (r.response_time[0], r.half_width["response_time"][0], 5.0),
                             (r.utilization[0, 0], r.half_width["utilization"][0, 0], 0.8),
                             (r.throughput[0], r.half_width["throughput"][0], 0.8)):
        assert abs(value - exact) <= hw, (value, hw, exact)
    servers, rate, demand = 3, 2.4, 1.0
    mmc = Network([Station("m", "multi", [demand], servers=servers, discipline=discipline)], population=[0],
                  arrival_rate=[rate])
    r = solve(mmc, method="simulation", events=2_000_000, seed=8, confidence=0.99)
    exact = demand + _erlang_c(servers, rate * demand) * demand / (servers - rate * demand)
    assert abs(r.response_time[0] - exact) <= r.half_width["response_time"][0]
    assert abs(r.utilization[0, 0] - rate * demand / servers) <= r.half_width["utilization"][0, 0]


def test_fcfs_with_class_independent_demands_is_product_form():
    """FCFS with the same exponential demand for every class is BCMP: the intervals hold
    the exact values; with class-dependent demands the simulation measures something else."""
    net = Network([Station("cpu", "queue", [0.2, 0.2], discipline="fcfs"),
                   Station("disk", "multi", [0.3, 0.3], servers=2, discipline="fcfs")],
                  population=[4, 3], think_time=[1.0, 0.5])
    exact = exact_mva(net)
    assert solve(net).accuracy == "exact"             # class-independent FCFS: product form
    sim = solve(net, method="simulation", events=1_000_000, seed=3, confidence=0.99)
    assert np.all(_covered(sim.throughput, sim.half_width["throughput"], exact.throughput))
    assert np.all(_covered(sim.queue_length, sim.half_width["queue_length"], exact.queue_length))


def test_open_and_mixed_networks():
    net = Network([Station("cpu", "queue", [0.1, 0.05]), Station("disk", "queue", [0.08, 0.1])],
                  population=[5, 0], think_time=[1.0, 0.0], arrival_rate=[0.0, 3.0])
    exact = exact_mva(net)
    sim = solve(net, method="simulation", events=1_000_000, seed=11, confidence=0.99)
    assert np.all(_covered(sim.throughput, sim.half_width["throughput"], exact.throughput))
    assert np.all(_covered(sim.response_time, sim.half_width["response_time"], exact.response_time))


def test_same_seed_same_result_and_precision_mode():
    net = Network([Station("cpu", "queue", [0.02]), Station("disk", "queue", [0.03])],
                  population=[5], think_time=[0.5])
    a = solve(net, method="simulation", events=50_000, seed=5)
    b = solve(net, method="simulation", events=50_000, seed=5)
    c = solve(net, method="simulation", events=50_000, seed=6)
    assert a.throughput.tolist() == b.throughput.tolist() and a.queue_length.tolist() == b.queue_length.tolist()
    assert a.throughput.tolist() != c.throughput.tolist()
    precise = solve(net, method="simulation", events=50_000, seed=5, precision=0.002)
    assert precise.converged and precise.half_width["throughput"][0] <= 0.002 * precise.throughput[0]
    short = solve(net, method="simulation", events=50_000, seed=5, precision=1e-6, max_events=200_000)
    assert not short.converged and "not reached" in short.message
    reps = solve(net, method="simulation", events=20_000, seed=5, replications=4)
    assert "4 replications" in reps.message and reps.half_width["throughput"][0] > 0


@pytest.mark.parametrize("options, field", [
    ({"events": 0}, "events"), ({"seed": -1}, "seed"), ({"confidence": 1.5}, "confidence"),
    ({"precision": 0}, "precision"), ({"batches": 1}, "batches"),
])
def test_bad_options_are_model_errors(options, field):
    net = Network([Station("cpu", "queue", [0.02])], population=[2])
    with pytest.raises(ModelError, match=field):
        solve(net, method="simulation", **options)


def test_saturated_open_load_is_refused():
    net = Network([Station("q", "queue", [1.0])], population=[0], arrival_rate=[1.2])
    with pytest.raises(ModelError, match="no steady state"):
        solve(net, method="simulation", events=20_000)


def test_command_line_prints_intervals(capsys):
    assert main(["solve", "data/examples/two-class.toml", "--method", "simulation", "--events", "20000",
                 "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "95% confidence intervals" in out and " ± " in out
    assert main(["solve", "data/examples/two-class.toml", "--method", "simulation", "--events", "20000",
                 "--format", "csv"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert "throughput_half_width" in header and "residence_time_half_width" in header
    assert main(["solve", "data/examples/two-class.toml", "--seed", "2"]) == 2
    assert "seed" in capsys.readouterr().err


def test_preemptive_priority_mm1_against_the_closed_form():
    """Two classes on one exponential server, class 0 first (preemptive-resume):
    T_k = S_k / (1 - s_{k-1}) + sum_{i<=k} lambda_i S_i^2 / ((1 - s_{k-1})(1 - s_k)), s_k the
    load of classes 0..k (Harchol-Balter, Performance Modeling and Design of Computer
    Systems, 2013, ch. 32, with E[S^2] / 2 = S^2)."""
    rates, service = [0.3, 0.4], [1.0, 0.5]
    net = Network([Station("cpu", "queue", service, discipline="priority", priority=[0, 1])],
                  classes=["high", "low"], population=[0, 0], arrival_rate=rates)
    sim = solve(net, method="simulation", events=3_000_000, seed=4, confidence=0.99)
    load = np.cumsum(np.multiply(rates, service))
    residual = np.cumsum(np.multiply(rates, np.square(service)))
    before = np.concatenate(([0.0], load[:-1]))
    exact = np.asarray(service) / (1 - before) + residual / ((1 - before) * (1 - load))
    assert np.all(_covered(sim.response_time, sim.half_width["response_time"], exact)), (sim.response_time, exact)
    # the low class waits much longer than under processor sharing
    ps = exact_mva(Network([Station("cpu", "queue", service)], population=[0, 0], arrival_rate=rates))
    assert sim.response_time[1] > 1.5 * ps.response_time[1]
    # and the analytic answer is the closed form itself (mva.nonproduct)
    assert np.allclose(solve(net, method="auto").response_time, exact, rtol=1e-12)


def test_fcfs_with_class_dependent_demands_is_flagged_and_measured():
    net = Network([Station("cpu", "queue", [0.05, 0.5], discipline="fcfs"), Station("disk", "queue", [0.1, 0.1])],
                  population=[6, 2], think_time=[1.0, 1.0])
    mva = solve(net, method="auto")
    assert "cpu (fcfs: class-dependent demands) not product form" in mva.accuracy
    # flagged by the solver plan, so every approximate method says it; exact refuses
    assert "cpu (fcfs: class-dependent demands)" in solve(net, method="schweitzer", multiserver="seidmann").accuracy
    with pytest.raises(ModelError, match="not product form"):
        exact_mva(net)
    ps = exact_mva(Network([Station("cpu", "queue", [0.05, 0.5]), Station("disk", "queue", [0.1, 0.1])],
                           population=[6, 2], think_time=[1.0, 1.0]))
    sim = solve(net, method="simulation", events=1_000_000, seed=9, confidence=0.99)
    # FCFS makes the short class wait behind the long one: slower than the PS answer, and
    # the FCFS approximation sees it (closer to the simulation than processor sharing)
    assert sim.response_time[0] - sim.half_width["response_time"][0] > ps.response_time[0]
    assert abs(mva.response_time[0] / sim.response_time[0] - 1) < abs(ps.response_time[0] / sim.response_time[0] - 1)


@pytest.mark.parametrize("station, field, words", [
    ({"discipline": "lifo"}, "discipline", "unknown discipline"),
    ({"discipline": "priority"}, "priority", "needs one priority per class"),
    ({"discipline": "priority", "priority": [0]}, "priority", "expected 2"),
    ({"discipline": "ps", "priority": [0, 1]}, "priority", "only a station with discipline"),
    ({"type": "delay", "discipline": "fcfs"}, "discipline", "only queue and multi"),
])
def test_discipline_fields_in_files_are_one_line_errors(tmp_path, capsys, station, field, words):
    import tomli_w

    doc = {"network": {"classes": ["a", "b"], "population": [1, 1]},
           "station": [{"name": "cpu", "type": "queue", "demand": [0.1, 0.2], **station}]}
    path = tmp_path / "net.toml"
    path.write_text(tomli_w.dumps(doc))
    assert main(["solve", str(path), "--method", "simulation", "--events", "1000"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"station[cpu].{field}" in err and words in err, err


def test_replications_on_a_dask_cluster_equal_the_serial_run():
    """The same seeds in the same order: bit-identical means and intervals, in fixed and in
    precision mode (threads in one process keep the test quick; processes are exercised by
    the command line's --workers in the sweep tests)."""
    import distributed
    net = Network([Station("cpu", "queue", [0.1, 0.2]), Station("disk", "multi", [0.3, 0.1], servers=2)],
                  population=[3, 2], think_time=[1.0, 0.5])
    options = {"replications": 3, "events": 20_000, "seed": 5}
    with distributed.LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster:
        for extra in ({}, {"precision": 0.01}):
            serial = solve(net, method="simulation", **options, **extra)
            remote = solve(net, method="simulation", **options, **extra, scheduler=cluster.scheduler_address)
            assert serial.message == remote.message
            for name in ("throughput", "queue_length", "utilization"):
                assert np.array_equal(getattr(serial, name), getattr(remote, name))
                assert np.array_equal(serial.half_width[name], remote.half_width[name])
    with pytest.raises(ModelError, match="replications >= 2"):
        solve(net, method="simulation", workers=2)
    assert main(["solve", "data/examples/two-class.toml", "--workers", "2"]) == 2


def test_command_line_replications_on_local_workers(capsys):
    import distributed  # noqa: F401 (a declared test extra: its absence is a failure)
    args = ["solve", "data/examples/two-class.toml", "--method", "simulation", "--replications", "2",
            "--events", "20000", "--format", "json"]
    assert main(args) == 0
    serial = capsys.readouterr().out
    assert main(args + ["--workers", "2"]) == 0
    remote = capsys.readouterr().out
    drop = ("solve_seconds",)
    import json
    a, b = json.loads(serial), json.loads(remote)
    for key in drop:
        a.pop(key, None), b.pop(key, None)
    assert a["throughput"] == b["throughput"] and a["half_width"] == b["half_width"]


def test_one_settings_type_for_every_simulator():
    """SimulationSettings is what solve(..., method="simulation"), simulate_network and the
    model kinds' simulate take: the same settings give the same numbers by any route, and
    a bad one is named once, before any run."""
    from mva import SimulationSettings, simulate_network
    from mva.errors import ModelError
    from models.shared_bus import SharedBus

    net = Network([Station("cpu", "queue", [0.02]), Station("disk", "queue", [0.03])], population=[5],
                  think_time=[1.0])
    settings = SimulationSettings(seed=3, events=20_000, batches=10)
    by_keywords = solve(net, method="simulation", seed=3, events=20_000, batches=10)
    by_settings = simulate_network(net, settings)
    assert by_keywords.throughput.tolist() == by_settings.throughput.tolist()
    assert by_keywords.half_width["throughput"].tolist() == by_settings.half_width["throughput"].tolist()
    with pytest.raises(ModelError, match="^batches: must be an integer >= 2"):
        simulate_network(net, batches=1)
    with pytest.raises(ModelError, match="^colour: is not a simulation setting"):
        simulate_network(net, colour=1)
    assert SharedBus.SIMULATION.events == 400_000 and SharedBus.SIMULATION.target == "progress"
