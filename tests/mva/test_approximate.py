"""Approximate MVA (Bard-Schweitzer, Linearizer): against an independent textbook
implementation, on the cases where the methods are exact, invariants, accuracy ranking,
convergence reporting and bad options."""
import dataclasses
import warnings

import numpy as np
import pytest
from hypothesis import assume, example, given, strategies as st

import references.reference_amva as reference_amva
from mva import ModelError, Network, NumericalWarning, Station, solve
from mva.random_networks import random_study_sample
from test_properties import closed_networks

METHODS = ("schweitzer", "linearizer")
ALL_KINDS = ("queue", "delay", "multi", "ld")


def _textbook(method, net):
    func = getattr(reference_amva, method)
    delay = [s.kind == "delay" for s in net.stations]
    return func(net.demands.tolist(), delay, list(net.think_time), list(net.population))


@pytest.mark.parametrize("method", METHODS)
@given(net=closed_networks(max_classes=3, kinds=("queue", "delay")))
def test_matches_independent_textbook_implementation(method, net):
    """Queue and delay stations: the published equations, coded separately in plain Python."""
    x_ref, q_ref = _textbook(method, net)
    result = solve(net, method, tol=1e-11)
    assert result.converged
    np.testing.assert_allclose(result.throughput, x_ref, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(result.queue_length, q_ref, rtol=1e-6, atol=1e-9)


def _monotone(net):
    """The network with every ld capacity function made non-decreasing (sorted): the
    approximations target servers that do not slow down with load; a decreasing capacity
    (thrashing) can have several fixed points and is outside their reliable domain."""
    stations = [Station(s.name, "ld", s.demand, capacity=sorted(s.capacity)) if s.kind == "ld" else s
                for s in net.stations]
    return net.replace(stations=stations)


def _single_customer_networks(draw_kinds):
    @st.composite
    def networks(draw):
        net = draw(closed_networks(max_classes=3, kinds=draw_kinds))
        c = draw(st.integers(0, net.n_classes - 1))
        population = [0] * net.n_classes
        population[c] = 1
        return net.replace(population=population)
    return networks()


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("multiserver", ("marginal", "seidmann"))
@given(net=_single_customer_networks(ALL_KINDS))
def test_exact_with_one_customer(method, multiserver, net):
    """With one customer in the network an arrival finds it empty: both methods are exact,
    for every station kind."""
    exact = solve(net)
    approx = solve(net, method, multiserver=multiserver)
    np.testing.assert_allclose(approx.throughput, exact.throughput, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(approx.queue_length, exact.queue_length, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(approx.utilization, exact.utilization, rtol=1e-8, atol=1e-12)


@st.composite
def two_customer_networks(draw):
    net = draw(closed_networks(max_classes=2, kinds=ALL_KINDS))
    population = [2] if net.n_classes == 1 else [1, 1]
    return _monotone(net.replace(population=population))


@given(net=two_customer_networks())
def test_linearizer_exact_with_two_customers(net):
    """Linearizer's networks at N - e_c hold one customer and are solved exactly, so its
    corrections make the solution at N exact (queue lengths and marginals alike)."""
    exact = solve(net)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        approx = solve(net, "linearizer", tol=1e-10)
    # A class that never leaves a multi-server station (no think time) can keep the
    # corrections from settling; that is reported (see test_non_convergence_is_reported)
    assume(approx.converged)
    np.testing.assert_allclose(approx.throughput, exact.throughput, rtol=1e-8)
    np.testing.assert_allclose(approx.queue_length, exact.queue_length, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("population", [1, 5, 40])
def test_single_queue_without_think_time_is_exact(method, population):
    """All customers at the one queue: the arrival sees N - 1 of them, which the
    proportional estimate gets right."""
    net = Network([Station("cpu", "queue", [0.25])], population=[population])
    result = solve(net, method)
    assert result.throughput[0] == pytest.approx(4.0, rel=1e-9)
    assert result.queue_length[0, 0] == pytest.approx(population, rel=1e-9)


@pytest.mark.parametrize("method", METHODS)
def test_delay_only_network_is_exact(method):
    net = Network([Station("t1", "delay", [0.5, 1.0]), Station("t2", "delay", [0.25, 0.0])],
                  population=[7, 3], think_time=[1.0, 0.0])
    np.testing.assert_allclose(solve(net, method).throughput, solve(net).throughput, rtol=1e-12)


@pytest.mark.parametrize("method", METHODS)
@given(net=closed_networks(max_classes=3, kinds=ALL_KINDS).map(_monotone))
def test_invariants(method, net):
    """Little's law at every station and for each class's cycle, response = sum of
    residences, the utilisation law, and the optimistic bound N/(Z + D)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        result = solve(net, method, tol=1e-10)
    if method == "schweitzer":
        assert result.converged
    assume(result.converged)  # Linearizer: see test_linearizer_exact_with_two_customers
    x = result.throughput
    np.testing.assert_allclose(result.queue_length, result.residence_time * x, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(result.response_time, result.residence_time.sum(axis=0), rtol=1e-12)
    pop = np.array(net.population, float)
    np.testing.assert_allclose(x * (np.array(net.think_time) + result.response_time), pop,
                               rtol=1e-9, atol=1e-12)
    queues = [k for k, s in enumerate(net.stations) if s.kind in ("queue", "delay")]
    np.testing.assert_allclose(result.utilization[queues], net.demands[queues] * x, rtol=1e-12)
    # a customer alone takes at least D (D / max alpha at an ld station) at each station
    fastest = np.array([max(s.capacity) if s.kind == "ld" else 1.0 for s in net.stations])
    alone = (net.demands / fastest[:, None]).sum(axis=0) + np.array(net.think_time)
    assert np.all(x <= pop / alone * (1 + 1e-9))
    # residence never below the demand (an arrival cannot be served faster than alone),
    # except where a load-dependent station serves one customer faster than alpha(1) = 1
    plain = [k for k, s in enumerate(net.stations) if s.kind != "ld"]
    active = pop > 0
    assert np.all(result.residence_time[plain][:, active] >= net.demands[plain][:, active] * (1 - 1e-9))


def test_linearizer_at_least_as_accurate_as_schweitzer():
    """On a random sample (all station kinds), Linearizer's mean and worst throughput errors
    are below Bard-Schweitzer's; the full-size study is benchmarks/accuracy_approximate.py."""
    errors = {m: [] for m in METHODS}
    for net in random_study_sample(11, 40, max_classes=4, max_stations=8, max_population=20,
                                   max_lattice=2_000):
        exact = solve(net).throughput
        for m in METHODS:
            result = solve(net, m)
            assert result.converged
            errors[m].append(np.max(np.abs(result.throughput - exact) / exact))
    bs, lin = np.array(errors["schweitzer"]), np.array(errors["linearizer"])
    assert lin.mean() < bs.mean() / 3
    assert lin.max() < bs.max()
    assert np.mean(lin <= bs * (1 + 1e-9) + 1e-12) > 0.85


@pytest.mark.parametrize("method", METHODS)
def test_mixed_network_open_classes_summed_out(method):
    """Open classes are handled exactly; with one closed customer the whole answer is exact."""
    net = Network([Station("cpu", "queue", [0.2, 0.1]), Station("disks", "multi", [0.3, 0.5], servers=2),
                   Station("fesc", "ld", [0.1, 0.2], capacity=[1.0, 1.7, 2.2]), Station("lan", "delay", [0.05, 0.0])],
                  population=[1, 0], arrival_rate=[0.0, 1.5], think_time=[2.0, 0.0])
    exact, approx = solve(net), solve(net, method)
    np.testing.assert_allclose(approx.throughput, exact.throughput, rtol=1e-10)
    np.testing.assert_allclose(approx.queue_length, exact.queue_length, rtol=1e-8)
    pure_open = net.replace(population=[0, 0], think_time=[0.0, 0.0])
    np.testing.assert_allclose(solve(pure_open, method).queue_length, solve(pure_open).queue_length, rtol=1e-12)


def test_seidmann_reports_on_original_stations():
    net = Network([Station("cpus", "multi", [0.4, 0.2], servers=4), Station("disk", "queue", [0.1, 0.3])],
                  population=[6, 4], think_time=[1.0, 1.0])
    result = solve(net, "schweitzer", multiserver="seidmann")
    assert result.stations == ("cpus", "disk")
    np.testing.assert_allclose(result.utilization[0], result.throughput * net.demands[0] / 4, rtol=1e-12)
    # the split station's residence is the queue part plus the delay part D (m - 1)/m
    assert np.all(result.residence_time[0] >= net.demands[0] * 3 / 4)
    assert result.extras["multiserver"] == "seidmann"
    exact = solve(net).throughput
    assert np.max(np.abs(result.throughput - exact) / exact) < 0.1


@pytest.mark.parametrize("method, cap", [("schweitzer", dict(max_iter=3)), ("linearizer", dict(max_outer=1))])
def test_non_convergence_is_reported(method, cap):
    net = Network([Station("cpu", "queue", [0.2, 0.1]), Station("disk", "queue", [0.3, 0.4]),
                   Station("cpus", "multi", [0.5, 0.4], servers=3)], population=[10, 10])
    with pytest.warns(NumericalWarning, match="max_iter|not converged|not settled"):
        result = solve(net, method, **cap)
    assert not result.converged
    assert result.message
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        assert solve(net, method).converged


@pytest.mark.parametrize("options, field", [
    (dict(tol=0.0), "options.tol"), (dict(tol=float("nan")), "options.tol"), (dict(tol=2.0), "options.tol"),
    (dict(tol="1e-8"), "options.tol"), (dict(max_iter=0), "options.max_iter"),
    (dict(max_iter=2.5), "options.max_iter"), (dict(multiserver="erlang"), "options.multiserver"),
])
def test_bad_options(options, field):
    net = Network([Station("cpu", "queue", [0.2])], population=[3])
    with pytest.raises(ModelError) as info:
        solve(net, "schweitzer", **options)
    assert info.value.field == field
    with pytest.raises(ModelError, match="max_outer"):
        solve(net, "linearizer", max_outer=0)
    with pytest.raises(ModelError, match="no option"):
        solve(net, "schweitzer", max_outer=3)


def test_many_classes_and_stations_without_exact_limits():
    """Populations far beyond the exact solver's lattice: both methods converge and agree
    closely with each other."""
    rng = np.random.default_rng(5)
    demands = rng.uniform(0.01, 0.1, (30, 12))
    net = Network([Station(f"s{k}", "queue", demands[k]) for k in range(30)],
                  population=[80] * 12, think_time=[1.0] * 12)
    bs, lin = solve(net, "schweitzer"), solve(net, "linearizer")
    assert bs.converged and lin.converged
    for result in (bs, lin):  # no class faster than alone
        assert np.all(result.throughput <= 80 / (1.0 + demands.sum(axis=0)))
    # Bard-Schweitzer never over-utilises a queue; Linearizer's corrections can push a
    # saturated one a hair above 1 (1.6e-5 here): an approximation error, not a bug.
    assert np.all(bs.utilization.sum(axis=1) <= 1 + 1e-12)
    assert np.all(lin.utilization.sum(axis=1) <= 1 + 1e-4)
    # Bard-Schweitzer errs by a few percent at most on such networks (Lazowska et al. 1984)
    np.testing.assert_allclose(bs.throughput, lin.throughput, rtol=0.05)


@given(net=closed_networks(max_classes=3, kinds=("queue", "delay", "multi")),
       scale=st.floats(0.5, 2.0))
# found by hypothesis: the cold solve took its first outer step (a change of 6e-11) for
# done where the iteration contracts slowly and the next steps move the answer by 1e-8
@example(net=Network([Station("z", "delay", [1.0, 0.0]), Station("m3", "multi", [2.0, 0.0], servers=3),
                      Station("m2", "multi", [0.0117, 0.0], servers=2)], population=[3, 0], think_time=[0.0, 1.0]),
         scale=0.7)
# and a re-solve from the fixed point, whose steps are all within the inner solves' noise
@example(net=Network([Station("m", "multi", [1.0], servers=3)], population=[3], think_time=[1.0]), scale=1.0)
# found by hypothesis: with two classes of one customer the solution at N reads only the
# corrections F_k,i,c with i != c, so it stood still for a step while the solutions at
# N - e_c (and the corrections) still moved, and the cold solve stopped there
@example(net=Network([Station("s0", "queue", [1.0, 0.0]), Station("s1", "queue", [1.0, 0.0]),
                      Station("s2", "multi", [1.0, 1.0], servers=4)], population=[1, 1], think_time=[1.0, 0.0]),
         scale=1.0)
@example(net=Network([Station("s0", "queue", [1.0, 0.0]), Station("s1", "queue", [1.0, 0.0]),
                      Station("s2", "multi", [1.0, 1.0], servers=3)], population=[1, 1], think_time=[2.0, 0.5]),
         scale=1.0)
# found by hypothesis: a saturated 4-server station holds its fixed point only to the
# marginals' rounding noise; the cold solve stopped after 2 outer steps below the
# tolerance, and the re-solve from it (which then measured its first step against nothing)
# went on for 12
@example(net=Network([Station("s0", "multi", [1.0], servers=4)], population=[4], think_time=[0.0]), scale=1.0)
def test_linearizer_started_from_a_related_result_gives_the_same_answer(net, scale):
    """``start``: another network's corrections start the iteration; the fixed point, and
    so the answer, is the one a cold start reaches (to the tolerance); a re-solve of the
    same network from its own result needs no more outer iterations than the first solve."""
    assume(sum(net.population) > 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        first = solve(net, "linearizer", tol=1e-10)
        moved = net.replace(stations=[dataclasses.replace(s, demand=tuple(d * scale for d in s.demand)) if k == 0
                                      else s for k, s in enumerate(net.stations)])
        cold, warm = solve(moved, "linearizer", tol=1e-10), solve(moved, "linearizer", tol=1e-10, start=first)
        again = solve(net, "linearizer", tol=1e-10, start=first)
    assume(first.converged and cold.converged)
    assert warm.converged
    np.testing.assert_allclose(warm.throughput, cold.throughput, rtol=1e-7)
    np.testing.assert_allclose(warm.queue_length, cold.queue_length, rtol=1e-6, atol=1e-9)
    assert again.extras["outer_iterations"] <= first.extras["outer_iterations"]
    # to the same precision as warm against cold: where the iteration contracts slowly (a
    # 4-server station, 6 customers: 351 inner steps) the re-solve goes on towards the
    # fixed point and moves the answer by 3e-8
    np.testing.assert_allclose(again.throughput, first.throughput, rtol=1e-7)


def test_a_start_from_another_kind_of_network_is_refused():
    net = Network([Station("cpu", "queue", [0.2, 0.1]), Station("disk", "queue", [0.1, 0.3])], population=[3, 2])
    bigger = net.replace(population=[3, 3])
    with pytest.raises(ModelError, match="start") as info:
        solve(bigger, "linearizer", start=solve(net, "linearizer"))
    assert info.value.field == "options.start"
    with pytest.raises(ModelError, match="result of the linearizer") as info:
        solve(net, "linearizer", start=solve(net, "schweitzer"))
    assert info.value.field == "options.start"
