"""Invariants of exact MVA on networks drawn by hypothesis."""
import numpy as np
from hypothesis import assume, given, strategies as st

from mva import Network, Station, asymptotic_bounds, balanced_job_bounds, closed_throughput_curve, solve

demand = st.floats(0.0, 2.0, allow_nan=False).map(lambda d: round(d, 4))
positive_demand = st.floats(0.01, 2.0).map(lambda d: round(d, 4))


@st.composite
def stations(draw, n_classes, kinds=("queue", "delay", "multi", "ld"), monotone=False):
    count = draw(st.integers(1, 5))
    out = []
    for k in range(count):
        kind = draw(st.sampled_from(kinds))
        d = [draw(positive_demand)] + [draw(demand) for _ in range(n_classes - 1)]
        if kind == "multi":
            out.append(Station(f"s{k}", kind, d, servers=draw(st.integers(1, 4))))
        elif kind == "ld":
            cap = draw(st.lists(st.floats(0.2, 4.0).map(lambda c: round(c, 3)), min_size=1, max_size=5))
            cap = sorted(cap) if monotone else cap
            out.append(Station(f"s{k}", kind, d, capacity=cap))
        else:
            out.append(Station(f"s{k}", kind, d))
    return out


@st.composite
def closed_networks(draw, max_classes=3, kinds=("queue", "delay", "multi", "ld"), monotone=False):
    """Closed networks; ``monotone`` draws only non-decreasing ld capacities."""
    n_classes = draw(st.integers(1, max_classes))
    sts = draw(stations(n_classes, kinds, monotone))
    population = [draw(st.integers(0, 12 if n_classes == 1 else 5)) for _ in range(n_classes)]
    think = [draw(st.floats(0.0, 5.0).map(lambda z: round(z, 3))) for _ in range(n_classes)]
    demands = np.array([s.demand for s in sts])
    for c in range(n_classes):
        if demands[:, c].sum() == 0 and think[c] == 0:
            think[c] = 1.0
    return Network(sts, population=population, think_time=think)


@given(closed_networks())
def test_littles_law_and_utilisation_law(net):
    r = solve(net)
    x = r.throughput
    # Little's law at every station: Q = X R
    np.testing.assert_allclose(r.queue_length, r.residence_time * x[None, :], rtol=1e-12, atol=1e-14)
    # Little's law for the whole loop: N = X (R + Z)
    np.testing.assert_allclose(x * (r.response_time + np.asarray(net.think_time)), net.population,
                               rtol=1e-10, atol=1e-12)
    for k, s in enumerate(net.stations):
        work = x * net.demands[k]
        if s.kind in ("queue", "delay"):
            np.testing.assert_allclose(r.utilization[k], work, rtol=1e-14)
        elif s.kind == "multi":
            np.testing.assert_allclose(r.utilization[k], work / s.servers, rtol=1e-14)
        if s.kind != "delay":
            assert r.utilization[k].sum() <= 1.0 + 1e-12
        assert np.all(r.queue_length[k] >= 0)
        # never served faster than the station's full capacity allows
        cap = s.capacity_function()
        if cap is not None:
            assert np.all(r.residence_time[k] >= net.demands[k] / cap.max() * (x > 0) * (1 - 1e-12))


@given(closed_networks(max_classes=1, monotone=True))
def test_throughput_non_decreasing_in_population(net):
    """Single class: X(n) never decreases as customers are added... when every station's
    capacity function is non-decreasing (a thrashing FESC may legitimately lose)."""
    assert not any(c is not None and np.any(np.diff(c) < 0) for c in (s.capacity_function() for s in net.stations))
    curve = closed_throughput_curve(net)
    assert np.all(np.diff(curve) >= -1e-12 * curve[1:])


@given(closed_networks(max_classes=2, kinds=("queue", "delay")), st.data())
def test_throughput_non_decreasing_in_each_class_population(net, data):
    """Adding a customer of class c never lowers that class's throughput (queue/delay)."""
    c = data.draw(st.integers(0, net.n_classes - 1), label="class")
    pop = list(net.population)
    pop[c] += 1
    before = solve(net).throughput[c]
    after = solve(net.replace(population=pop)).throughput[c]
    assert after >= before * (1 - 1e-12)


@given(closed_networks(max_classes=1))
def test_results_inside_asymptotic_bounds(net):
    assume(net.population[0] > 0)
    r = solve(net)
    b = asymptotic_bounds(net)
    x, resp = r.throughput[0], r.response_time[0]
    assert b.throughput_lower * (1 - 1e-12) <= x <= b.throughput_upper * (1 + 1e-12)
    assert b.response_time_lower * (1 - 1e-12) <= resp <= b.response_time_upper * (1 + 1e-12)


@given(closed_networks(max_classes=1, kinds=("queue", "delay")))
def test_results_inside_balanced_job_bounds(net):
    assume(net.population[0] > 0)
    r = solve(net)
    b = balanced_job_bounds(net)
    x = r.throughput[0]
    assert b.throughput_lower * (1 - 1e-12) <= x <= b.throughput_upper * (1 + 1e-12)
    # balanced job bounds are tighter than asymptotic ones
    a = asymptotic_bounds(net)
    assert b.throughput_lower >= a.throughput_lower * (1 - 1e-12)
    assert b.throughput_upper <= a.throughput_upper * (1 + 1e-12)
