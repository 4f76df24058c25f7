"""Non-exponential service (a station's ``scv``): the simulation against the closed forms
of M/G/1 queues, and the analytic methods' residual-time approximation against a hand
computation, its refusals and its flag."""
from __future__ import annotations

import numpy as np
import pytest

from mva import ModelError, Network, Station, exact_mva, solve
from mva.cli import main
from mva.exact import _closed_lattice
from mva.plan import SolverPlan


def _within(value, half_width, exact):
    return abs(value - exact) <= half_width * (1 + 1e-9)


@pytest.mark.parametrize("scv", [0.0, 0.5, 4.0])
def test_mg1_fcfs_against_pollaczek_khinchine(scv):
    """M/D/1 (scv 0), gamma (0.5) and hyperexponential (4) service: the mean response time
    is S + rho S (1 + scv) / (2 (1 - rho)) (Pollaczek-Khinchine), in the 99% interval."""
    rate, service = 0.7, 1.0
    net = Network([Station("q", "queue", [service], discipline="fcfs", scv=scv)], arrival_rate=[rate])
    sim = solve(net, method="simulation", events=2_000_000, seed=11, confidence=0.99)
    rho = rate * service
    exact = service + rho * service * (1 + scv) / (2 * (1 - rho))
    assert _within(sim.response_time[0], sim.half_width["response_time"][0], exact), (sim.response_time, exact)
    assert _within(sim.utilization[0, 0], sim.half_width["utilization"][0, 0], rho)
    # Little's law: Q = lambda R, within the estimates' uncertainty
    slack = sim.half_width["queue_length"][0, 0] + rate * sim.half_width["response_time"][0]
    assert abs(sim.queue_length[0, 0] - rate * sim.response_time[0]) <= slack


@pytest.mark.parametrize("scv", [0.0, 4.0])
def test_processor_sharing_is_insensitive_to_the_service_distribution(scv):
    """M/G/1-PS has R = S / (1 - rho) for any distribution; closed networks of PS, multi,
    ld and delay stations keep their exact-MVA means (BCMP).  (The think time stays
    exponential: a closed network with every time deterministic need not be ergodic, and
    then runs a cycle fixed by its start.)"""
    open_ps = Network([Station("q", "queue", [1.0], scv=scv)], arrival_rate=[0.6])
    sim = solve(open_ps, method="simulation", events=2_000_000, seed=12, confidence=0.99)
    assert _within(sim.response_time[0], sim.half_width["response_time"][0], 1.0 / 0.4)
    closed = Network([Station("m", "multi", [1.0], servers=3, scv=scv),
                      Station("l", "ld", [1.0], capacity=[1, 1.5, 2], scv=scv),
                      Station("z", "delay", [2.0])], population=[6])
    sim = solve(closed, method="simulation", events=1_500_000, seed=13, confidence=0.99)
    exact = exact_mva(closed)
    assert exact.accuracy == "exact"        # insensitive: nothing approximated
    assert _within(sim.throughput[0], sim.half_width["throughput"][0], exact.throughput[0])


def test_preemptive_priority_mg1_against_the_closed_form():
    """Preemptive-resume priority with general service, FCFS within a class:
    T_k = S_k / (1 - s_{k-1}) + sum_{i<=k} lambda_i E[S_i^2] / 2 / ((1 - s_{k-1})(1 - s_k)),
    E[S^2] = S^2 (1 + scv) (Harchol-Balter 2013, ch. 32)."""
    rates, service, scv = [0.3, 0.4], [1.0, 0.5], 0.0
    net = Network([Station("cpu", "queue", service, discipline="priority", priority=[0, 1], scv=scv)],
                  classes=["high", "low"], arrival_rate=rates)
    sim = solve(net, method="simulation", events=3_000_000, seed=14, confidence=0.99)
    load = np.cumsum(np.multiply(rates, service))
    second = np.cumsum(np.multiply(rates, np.square(service)) * (1 + scv) / 2)
    before = np.concatenate(([0.0], load[:-1]))
    exact = np.asarray(service) / (1 - before) + second / ((1 - before) * (1 - load))
    for c in range(2):
        assert _within(sim.response_time[c], sim.half_width["response_time"][c], exact[c]), (sim.response_time, exact)


def test_fcfs_class_utilisations_follow_the_utilisation_law():
    """U_kc = X_c D_kc at an FCFS station with class-dependent demands (single and multi
    server, exponential and not): the busy time goes to the class in service."""
    for station, rates in ((Station("q", "queue", [0.2, 2.0], discipline="fcfs"), [2.0, 0.2]),
                           (Station("q", "multi", [0.2, 2.0], servers=2, discipline="fcfs"), [4.0, 0.4]),
                           (Station("q", "queue", [0.2, 2.0], discipline="fcfs", scv=0.0), [2.0, 0.2])):
        net = Network([station], classes=["short", "long"], arrival_rate=rates)
        sim = solve(net, method="simulation", events=1_000_000, seed=15, confidence=0.99)
        law = np.multiply(rates, station.demand) / station.servers
        assert np.all(np.abs(sim.utilization[0] - law) <= sim.half_width["utilization"][0]), (sim.utilization, law)


def test_general_path_at_scv_near_one_matches_the_exponential_chain():
    """scv = 0.999 goes through the scheduled-completion path, scv = 1 through the Markov
    chain draw: the two agree within their intervals on a non-product-form network."""
    def network(scv):
        return Network([Station("q", "queue", [1.0, 0.3], discipline="fcfs", scv=scv),
                        Station("m", "multi", [0.5, 1.0], servers=2), Station("z", "delay", [2.0, 1.0])],
                       population=[3, 2])
    a = solve(network(1.0), method="simulation", events=1_000_000, seed=16, confidence=0.99)
    b = solve(network(0.999), method="simulation", events=1_000_000, seed=17, confidence=0.99)
    assert np.all(np.abs(a.throughput - b.throughput) <= a.half_width["throughput"] + b.half_width["throughput"])


def test_residual_time_mva_by_hand():
    """One FCFS queue (D = 1, scv = 0) and a delay (Z = 2), N = 2:
    X(1) = 1/3; R(2) = D (1 + X(1) D) + (scv - 1)/2 X(1) D^2 = 4/3 - 1/6 = 7/6;
    X(2) = 2 / (7/6 + 2) = 12/19."""
    net = Network([Station("q", "queue", [1.0], discipline="fcfs", scv=0.0), Station("z", "delay", [2.0])],
                  population=[2])
    r = solve(net, method="exact")
    assert r.throughput[0] == pytest.approx(12 / 19, rel=1e-12)
    assert r.residence_time[0, 0] == pytest.approx(7 / 6, rel=1e-12)
    assert r.accuracy.startswith("approximate: q (fcfs: scv 0) not product form, solved by residual-time MVA")
    # auto prefers the approximate methods' form of the term (mva.nonproduct), which fades
    # as the server saturates: between exponential service and Reiser's term here
    r = solve(net, method="auto")
    assert r.method == "linearizer" and "non-product-form MVA" in r.accuracy
    assert 1 / (1 + 1 / 3 + 2) * 2 < r.throughput[0] < 12 / 19
    # the lattice kernel and the single-class kernel agree, term for term
    plan = SolverPlan.of(net)
    (x1, r1, *_), _ = _closed_lattice(plan)
    (x2, r2, *_), _ = _closed_lattice(plan, force_lattice=True)
    np.testing.assert_allclose(x1, x2, rtol=1e-13)
    np.testing.assert_allclose(r1, r2, rtol=1e-13)
    # a one-server multi station is a queue: the same term, not a refusal
    one_server = Network([Station("q", "multi", [1.0], servers=1, discipline="fcfs", scv=0.0),
                          Station("z", "delay", [2.0])], population=[2])
    assert solve(one_server).throughput[0] == pytest.approx(12 / 19, rel=1e-12)
    # the approximate methods carry the same term: with one customer it vanishes, exactly
    one = net.replace(population=[1])
    assert solve(one, method="schweitzer").throughput[0] == pytest.approx(1 / 3, rel=1e-9)


def test_residual_time_mva_multi_class_lattice_matches_scv_one_when_exponential():
    """The multi-class lattice with scv = 1 is exact MVA untouched; with scv != 1 it moves
    in the direction of the variability (less waiting when deterministic, more when
    hyperexponential), every class."""
    def network(scv):
        return Network([Station("q", "queue", [0.4, 0.4], discipline="fcfs", scv=scv),
                        Station("d", "queue", [0.2, 0.5]), Station("z", "delay", [1.0, 2.0])], population=[3, 2])
    base = exact_mva(network(1.0))
    assert base.accuracy == "exact"
    low, high = exact_mva(network(0.0)), exact_mva(network(4.0))
    assert np.all(low.throughput > base.throughput) and np.all(high.throughput < base.throughput)
    for method in ("schweitzer", "linearizer"):
        approx = {scv: solve(network(scv), method=method) for scv in (0.0, 1.0, 4.0)}
        assert np.all(approx[0.0].throughput > approx[1.0].throughput), method
        assert np.all(approx[4.0].throughput < approx[1.0].throughput), method
        assert "q (fcfs: scv 0) not product form" in approx[0.0].accuracy


def test_non_exponential_multi_servers_and_open_fcfs_are_answered_analytically():
    """A two-server FCFS station with deterministic service: the approximate methods answer
    (the exact lattice refuses, naming the station); an open M/D/1 queue: the
    Pollaczek-Khinchine mean, exactly."""
    multi = Network([Station("m", "multi", [1.0], servers=2, discipline="fcfs", scv=0.0),
                     Station("z", "delay", [1.0])], population=[3])
    with pytest.raises(ModelError, match="not product form") as info:
        solve(multi, method="exact")
    assert info.value.field == "station[m].discipline"
    exponential = exact_mva(multi.replace(stations=[Station("m", "multi", [1.0], servers=2),
                                                    Station("z", "delay", [1.0])]))
    for method in ("schweitzer", "linearizer", "auto"):
        r = solve(multi, method=method)
        assert r.throughput[0] > exponential.throughput[0] * 0.99 and "m (fcfs: scv 0 on 2 servers)" in r.accuracy
    open_queue = Network([Station("q", "queue", [1.0], discipline="fcfs", scv=0.0)], arrival_rate=[0.5])
    for method in ("exact", "auto"):
        assert solve(open_queue, method=method).response_time[0] == pytest.approx(1.0 + 0.5 * 1.0 / 2 / 0.5)
    mixed = Network([Station("q", "queue", [1.0, 1.0], discipline="fcfs", scv=0.0)], population=[1, 0],
                    arrival_rate=[0.0, 0.5])
    with pytest.raises(ModelError, match="open traffic beside closed classes"):
        solve(mixed, method="auto")
    assert solve(mixed, method="simulation", events=20_000).throughput.size == 2


@pytest.mark.parametrize("value, words", [(-0.5, "must be from 0 to 10000"), (float("nan"), "must be from 0 to"),
                                          (1e300, "must be from 0 to 10000"),
                                          (True, "must be a number"), ("low", "must be a number")])
def test_bad_scv_is_a_one_line_error(tmp_path, capsys, value, words):
    with pytest.raises(ModelError, match=words):
        Station("q", "queue", [1.0], scv=value)
    if isinstance(value, float) and value != value:
        return                                  # TOML has nan, but the point is made above
    import tomli_w

    doc = {"network": {"population": [1]}, "station": [{"name": "cpu", "type": "queue", "demand": [0.1],
                                                         "scv": value}]}
    path = tmp_path / "net.toml"
    path.write_text(tomli_w.dumps(doc))
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "station[cpu].scv" in err and words in err, err


def test_residual_time_mva_above_the_bottleneck_bound_is_flagged_unreliable():
    """Deterministic service at a nearly saturated queue: the term pushes U above 1."""
    from mva.errors import NumericalWarning

    net = Network([Station("q", "queue", [1.0], discipline="fcfs", scv=0.0), Station("z", "delay", [2.0])],
                  population=[4])
    with pytest.warns(NumericalWarning, match="utilisation of q at 1.05"):
        r = solve(net)
    assert r.accuracy.startswith("unreliable: residual-time MVA") and r.utilization[0, 0] > 1


def test_validation_study_rows_and_summary():
    from mva.validation import VARIANTS, study, summary

    rows = study(cases=2, events=20_000, seed=3)
    assert set(rows["variant"]) == set(VARIANTS)
    table = summary(rows)
    assert list(table.index) == list(VARIANTS)
    # product form: exact MVA, so no approximation flag; FCFS variants are flagged
    assert (rows[rows["variant"] == "product form"]["accuracy"] == "exact").all()
    assert rows[rows["variant"] != "product form"]["accuracy"].str.contains("approximate|unreliable").any()


def test_scv_is_a_parameter_of_network_files(tmp_path, capsys):
    """--set and --sweep reach a station's scv; a non-exponential case leaves the batch
    path for the approximate methods, an exponential one is exact MVA."""
    import tomli_w


    doc = {"network": {"population": [4]},
           "station": [{"name": "q", "type": "queue", "discipline": "fcfs", "demand": [1.0]},
                       {"name": "z", "type": "delay", "demand": [2.0]}]}
    path = tmp_path / "net.toml"
    path.write_text(tomli_w.dumps(doc))
    assert main(["solve", str(path), "--list-parameters"]) == 0
    assert "station.q.scv" in capsys.readouterr().out
    assert main(["solve", str(path), "--sweep", "station.q.scv=0,1", "--format", "csv"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()
    exponential = exact_mva(Network([Station("q", "queue", [1.0]), Station("z", "delay", [2.0])], population=[4]))
    assert rows[0].startswith("station.q.scv,throughput") and len(rows) == 3
    assert float(rows[2].split(",")[1]) == pytest.approx(exponential.throughput[0], rel=1e-12)
    assert float(rows[1].split(",")[1]) > exponential.throughput[0]
