"""Stations that are not product form (mva.nonproduct): priority levels in the simulation
and the analytic methods, FCFS with class-dependent service, non-exponential service.

Independent checks: closed forms (Cobham's preemptive-resume formula, Pollaczek-Khinchine,
Erlang C), a continuous-time Markov chain solved from its generator matrix
(tests/references/reference_ctmc.py, no code shared with mva), and exact MVA where the
approximation must reduce to it."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mva import ModelError, Network, Station, exact_mva, solve
from mva.nonproduct import erlang_c, open_residence
from references.reference_ctmc import solve_closed


def _cobham(rates, service, levels, scv=1.0):
    """Cobham (1954) by hand: T_c = S_c / (1 - s_H) + sum_L lambda E[S^2]/2 / ((1 - s_H)(1 - s_L))."""
    rates, service, levels = map(np.asarray, (rates, service, levels))
    out = []
    for c in range(len(rates)):
        high, upto = levels < levels[c], levels <= levels[c]
        s_h, s_l = rates[high] @ service[high], rates[upto] @ service[upto]
        second = rates[upto] @ (service[upto] ** 2 * (1 + scv)) / 2
        out.append(service[c] / (1 - s_h) + second / ((1 - s_h) * (1 - s_l)))
    return np.array(out)


@pytest.mark.parametrize("levels, scv", [([0, 1], 1.0), ([1, 0], 1.0), ([0, 1, 1], 1.0), ([2, 0, 1], 4.0),
                                         ([0, 1], 0.0)])
def test_open_priority_is_cobhams_formula(levels, scv):
    rates = [0.3, 0.2, 0.1][:len(levels)]
    service = [1.0, 0.5, 1.5][:len(levels)]
    net = Network([Station("cpu", "queue", service, discipline="priority", priority=levels, scv=scv)],
                  population=[0] * len(levels), arrival_rate=rates)
    r = solve(net, "auto")
    assert np.allclose(r.response_time, _cobham(rates, service, levels, scv), rtol=1e-12)
    assert np.allclose(r.queue_length[0], np.multiply(rates, r.response_time))
    assert "not product form" in r.accuracy and "Cobham" in r.accuracy


def test_open_fcfs_is_pollaczek_khinchine_and_multi_server_erlang_c():
    rates, service = np.array([0.5, 0.2]), np.array([0.4, 2.0])
    net = Network([Station("q", "queue", service, discipline="fcfs", scv=0.0)], population=[0, 0], arrival_rate=rates)
    rho = rates @ service
    wait = rates @ service ** 2 / 2 / (1 - rho)            # M/G/1, each class deterministic
    assert np.allclose(solve(net).response_time, service + wait, rtol=1e-12)
    # M/M/m: Erlang C against its textbook form sum_k a^k/k! ...
    m, a = 3, 2.2
    p0 = 1 / (sum(a ** k / math.factorial(k) for k in range(m)) + a ** m / math.factorial(m) / (1 - a / m))
    textbook = a ** m / math.factorial(m) / (1 - a / m) * p0
    assert erlang_c(m, a) == pytest.approx(textbook, rel=1e-12)
    r = open_residence([1.0], [a], [0], m, 1.0)
    assert r[0] == pytest.approx(1.0 + textbook / (m - a), rel=1e-12)


def test_simulation_levels_are_defined_once():
    """Equal priorities are one level, FCFS across classes: the simulation matches the
    Markov chain of that discipline, and differs from three levels."""
    demand, population, think = [0.3, 0.5, 0.4], [2, 2, 2], [1.0, 1.5, 1.2]

    def run(levels):
        net = Network([Station("cpu", "queue", demand, discipline="priority", priority=levels)],
                      population=population, think_time=think)
        return solve(net, "simulation", seed=3, precision=0.004, target="throughput")

    shared = run([0, 1, 1])
    exact_shared, _ = solve_closed([("priority", demand, [0, 1, 1])], population, think)
    exact_three, _ = solve_closed([("priority", demand, [0, 1, 2])], population, think)
    assert np.all(np.abs(shared.throughput - exact_shared) <= 3 * shared.half_width["throughput"] + 1e-9)
    # the two disciplines differ by more than the simulation's interval
    assert np.abs(exact_three - exact_shared)[1:].max() > 6 * shared.half_width["throughput"].max()


def test_priority_values_count_only_by_their_order():
    """Levels are any integers, negative too: shifting every priority by a constant is the
    same discipline, in the simulation (same seed, same numbers) and in the analytic methods."""
    def net(levels):
        return Network([Station("q", "queue", [0.2, 0.3, 0.1], discipline="priority", priority=levels),
                        Station("d", "queue", [0.1, 0.1, 0.1])], population=[2, 2, 2])

    base, shifted = net([0, 2, 2]), net([-3, -1, -1])
    a = solve(base, "simulation", seed=1, events=100_000)
    b = solve(shifted, "simulation", seed=1, events=100_000)
    assert np.array_equal(a.throughput, b.throughput)
    assert a.throughput[0] > a.throughput[1]          # the top level is served first
    assert np.allclose(solve(base, "auto").throughput, solve(shifted, "auto").throughput, rtol=1e-12)


def test_two_class_closed_priority_network_against_the_markov_chain():
    """A priority CPU, an FCFS disk with class-dependent service and terminals: Linearizer
    with the priority approximation (what auto runs where decomposition does not apply)
    within 7% of the chain's class throughputs, where processor sharing misses by more,
    and flagged wherever it misses by more than 5%."""
    cpu, disk, population, think = [0.2, 0.5], [0.3, 0.15], [2, 3], [1.0, 2.0]
    for levels in ([0, 1], [1, 0]):
        exact, _ = solve_closed([("priority", cpu, levels), ("fcfs", disk)], population, think)
        net = Network([Station("cpu", "queue", cpu, discipline="priority", priority=levels),
                       Station("disk", "queue", disk, discipline="fcfs")], population=population, think_time=think)
        r = solve(net, "linearizer")
        assert "not product form" in r.accuracy
        error = np.max(np.abs(r.throughput / exact - 1))
        assert error < 0.07, (levels, r.throughput, exact)
        assert error <= 0.05 or r.accuracy.startswith("unreliable"), (levels, error, r.accuracy)
        ps = exact_mva(Network([Station("cpu", "queue", cpu), Station("disk", "queue", disk)],
                               population=population, think_time=think))
        assert np.max(np.abs(ps.throughput / exact - 1)) > error


def _pair(scv=1.0, levels=None, demand=(0.4, 0.4)):
    first = Station("q", "queue", demand, discipline="priority" if levels else "fcfs", priority=levels, scv=scv)
    return Network([first, Station("d", "queue", [0.2, 0.5]), Station("z", "delay", [1.0, 2.0])],
                   population=[3, 2])


@pytest.mark.parametrize("method", ["linearizer", "schweitzer"])
def test_the_approximation_reduces_to_mva_where_the_network_is_product_form(method):
    """One priority level with equal demands is FCFS is product form: the same numbers
    as processor sharing, by the same method; so are equal FCFS demands and scv = 1."""
    ps = Network([Station("q", "queue", [0.4, 0.4]), Station("d", "queue", [0.2, 0.5]),
                  Station("z", "delay", [1.0, 2.0])], population=[3, 2])
    base = solve(ps, method)
    for net in (_pair(levels=[1, 1]), _pair(), _pair(scv=1.0, levels=[4, 4])):
        r = solve(net, method)
        assert np.allclose(r.throughput, base.throughput, rtol=1e-12)
        assert "not product form" not in r.accuracy
    assert solve(_pair(levels=[1, 1]), "auto").accuracy == "exact"
    # with class-dependent demands, one level is FCFS: the same residence formula
    a = solve(_pair(levels=[2, 2], demand=(0.1, 0.9)), method)
    b = solve(_pair(demand=(0.1, 0.9)), method)
    assert np.allclose(a.throughput, b.throughput, rtol=1e-12)


def test_a_large_move_from_the_product_form_answer_is_flagged():
    """The approximation's error grows with the correction it makes: a result whose class
    throughput moves more than FORM_LIMIT from the product-form answer (processor sharing,
    by Bard-Schweitzer) says so, with that move; a small correction is not flagged."""
    from mva.nonproduct import FORM_LIMIT

    for demand, flagged in (((0.40, 0.44), False), ((0.03, 1.2), True)):
        net = Network([Station("q", "queue", demand, discipline="fcfs"), Station("z", "delay", [0.5, 0.5])],
                      population=[4, 1])
        r = solve(net, "schweitzer")
        ps = solve(Network([Station("q", "queue", demand), Station("z", "delay", [0.5, 0.5])], population=[4, 1]),
                   "schweitzer")
        move = np.max(np.abs(ps.throughput / r.throughput - 1))
        assert (move > FORM_LIMIT) == flagged, move
        assert np.isclose(r.extras["product_form_gap"], move, rtol=1e-6)
        assert ("from the product-form answer" in r.accuracy) == flagged, r.accuracy
        if flagged:
            assert r.accuracy.startswith("unreliable") and f"{100 * move:.3g}%" in r.accuracy


def test_exact_refuses_and_auto_answers_with_the_approximation():
    net = _pair(levels=[0, 1])
    with pytest.raises(ModelError, match="not product form") as info:
        exact_mva(net)
    assert info.value.field == "station[q].discipline"
    r = solve(net, "auto")
    assert r.method == "decomposition" and "not product form" in r.extras["auto"]
    assert "q (priority: 2 priority levels)" in r.accuracy and "mva.decomposition" in r.accuracy
    r = solve(net, "linearizer")
    assert "q (priority: 2 priority levels)" in r.accuracy and "non-product-form MVA" in r.accuracy


def test_open_traffic_beside_closed_classes_at_a_priority_station_is_refused():
    net = Network([Station("q", "queue", [0.2, 0.3], discipline="priority", priority=[0, 1])],
                  population=[2, 0], arrival_rate=[0.0, 0.5])
    with pytest.raises(ModelError, match="open traffic beside closed classes") as info:
        solve(net, "auto")
    assert info.value.field == "station[q].discipline"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.05, 1.0), min_size=3, max_size=3), st.lists(st.integers(0, 2), min_size=3, max_size=3),
       st.lists(st.integers(1, 4), min_size=3, max_size=3), st.sampled_from([0.0, 0.25, 1.0, 4.0]))
def test_priority_networks_give_finite_answers_within_the_bounds(demand, levels, population, scv):
    """Invariants: finite positive throughputs, no station busier than 1 unless flagged,
    residence at least the demand, class throughputs within the asymptotic bounds."""
    net = Network([Station("p", "queue", demand, discipline="priority", priority=levels, scv=scv),
                   Station("d", "queue", [0.3, 0.1, 0.2]), Station("z", "delay", [1.0, 1.0, 1.0])],
                  population=population)
    r = solve(net, "auto")
    assert np.all(np.isfinite(r.throughput)) and np.all(r.throughput > 0)
    # residual-time MVA can overshoot a deterministic bottleneck: then it must say so
    assert r.station_utilization()[:2].max() <= 1 + 1e-6 or r.accuracy.startswith("unreliable")
    assert np.all(r.residence_time[0] >= np.asarray(demand) * (1 - 1e-9))
    # the asymptotic bounds hold whatever the discipline: no faster than with no queueing
    cycle = np.asarray(demand) + np.array([0.3, 0.1, 0.2]) + 1.0
    assert np.all(r.throughput <= np.asarray(population) / cycle * (1 + 1e-9))


def test_the_priority_example_of_the_file_format_guide(tmp_path, run_cli):
    """docs/files.md's priority example solves by default with the method and its
    accuracy in the table and in JSON; exact refuses it in one line naming the station."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "files.md").read_text()
    start = text.index("```toml", text.index("A priority example")) + len("```toml")
    path = tmp_path / "priority.toml"
    path.write_text(text[start:text.index("```", start)])
    code, out, err = run_cli("solve", str(path))
    assert code == 0 and "method: decomposition" in out and "cpu (priority: 2 priority levels" in out, (out, err)
    code, out, _ = run_cli("solve", str(path), "--format", "json")
    import json

    doc = json.loads(out)
    assert doc["method"] == "decomposition" and "not product form" in doc["accuracy"] and "auto" in doc
    code, _, err = run_cli("solve", str(path), "--method", "exact")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "station[cpu].discipline" in err


def test_the_non_product_form_study_rows_and_report():
    """Two networks of each kind at a coarse precision: one row each, every error finite,
    and the report's tables and audit."""
    from mva.validation import nonproduct_report, nonproduct_rows

    rows = nonproduct_rows(count=2, seed=5, precision=0.05)
    assert list(rows["kind"]) == ["priority"] * 2 + ["fcfs"] * 2 + ["scv"] * 2
    assert np.all(np.isfinite(rows[["x_mean", "x_max", "r_mean", "old_x_max"]].to_numpy()))
    assert (rows["method"] != "exact").all()          # none of them is product form
    report = nonproduct_report(rows, 0.05)
    assert "flagging audit" in report and report.count(" all ") >= 3
    # the precision asked for is the one reported; a run short of it is counted
    reached = int((rows.sim_half_width <= 0.05 * 1.02).sum())
    assert f"simulation: {reached} of 6 networks to +-5% or better" in report
    assert ("stopped at the event cap" in report) == (reached < 6)


def test_the_study_draws_the_partial_chain_networks_alone():
    """``partial_only`` keeps the networks whose whole chain is over auto's limit (seed
    9036's first such FCFS network is its eighth): auto decomposes them with a partial
    chain, Linearizer (auto before) stands beside, and the report compares the two."""
    from mva.auto import DECOMPOSITION_STATES
    from mva.decomposition import chain_states
    from mva.validation import nonproduct_jobs, nonproduct_report, nonproduct_rows

    jobs = list(nonproduct_jobs(8, 9036, 0.05, ("fcfs",), partial_only=True))
    assert [job[1] for job in jobs] == [7] and chain_states(jobs[0][2]) > DECOMPOSITION_STATES
    rows = nonproduct_rows(count=8, seed=9036, precision=0.05, kinds=("fcfs",), partial_only=True)
    assert list(rows["index"]) == [7] and rows["partial"].all() and (rows["method"] == "decomposition").all()
    assert np.all(np.isfinite(rows[["lin_x_mean", "lin_x_max"]].to_numpy()))
    assert "fcfs      partial chains   1 nets" in nonproduct_report(rows, 0.05)


def test_a_sweep_says_which_of_its_cases_are_unreliable():
    """Each row of a sweep over a network file carries its result's flag, and the sweep
    warns once with the count instead of once per case; a product-form sweep (the exact
    batch path) has the column too, all False."""
    import warnings

    from mva import NumericalWarning
    from mva.files import network_from_dict
    from mva.sweep import run_sweep

    # Linearizer named (auto decomposes this network, exactly: its chain takes in all three)
    doc = {"network": {"population": [2, 3], "think_time": [1.0, 1.0]},
           "station": [{"name": "q", "type": "queue", "demand": [0.2, 0.2], "discipline": "fcfs"},
                       {"name": "d", "type": "queue", "demand": [0.1, 0.3]},
                       {"name": "f", "type": "queue", "demand": [0.05, 0.06], "discipline": "fcfs"}]}
    cases = [{"station.q.demand": [0.2, d]} for d in (0.2, 0.25, 2.0, 4.0)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = run_sweep(doc, cases, method="linearizer", progress=False)
    expected = []
    for case in cases:
        one = {**doc, "station": [{**doc["station"][0], "demand": case["station.q.demand"]}, *doc["station"][1:]]}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected.append(solve(network_from_dict(one), "linearizer").accuracy.startswith("unreliable"))
    assert list(frame["unreliable"]) == expected and 0 < sum(expected) < len(cases)
    doubts = [str(w.message) for w in caught if issubclass(w.category, NumericalWarning)]
    assert doubts == [f"{sum(expected)} of {len(cases)} cases are unreliable (column unreliable); the first: "
                      + doubts[0].split("the first: ")[1]]
    single = {"network": {"population": [3]}, "station": [{"name": "q", "type": "queue", "demand": [0.2]}]}
    plain = run_sweep(single, [{"station.q.demand": d} for d in (0.1, 0.2)], progress=False)
    assert list(plain["unreliable"]) == [False, False]
