"""The convolution-complement exact algorithm (polynomial in the number of stations that
need marginals) against independent references and against the recursive algorithm."""
import numpy as np
import pytest

from mva import ModelError, Network, Station, solve
from mva.random_networks import random_station
from references.netgen import description, random_closed_network
from references.reference import convolution_multiclass, convolution_throughput, enumerate_closed
from test_exact_vs_reference import check_closed

RTOL = 1e-9


def _marginal_network(rng, n_classes, n_marginal, n_queues, population, monotone=False, think=True):
    """``n_marginal`` multi-server / load-dependent stations (each with more than one
    capacity value) and ``n_queues`` queues."""
    stations = []
    for k in range(n_marginal):
        while True:
            station = random_station(rng, f"m{k}", n_classes, ["multi", "ld"][k % 2], max_servers=6,
                                     monotone_capacity=monotone)
            if len(station.capacity_function()) > 1:
                break
        stations.append(station)
    stations += [random_station(rng, f"q{k}", n_classes, "queue") for k in range(n_queues)]
    demand = np.array([s.demand for s in stations])
    if np.any(demand.sum(axis=0) == 0):
        stations.append(Station("all", "queue", [0.5] * n_classes))
    z = rng.uniform(0.5, 3.0, n_classes) if think else np.zeros(n_classes)
    return Network(stations, population=list(population), think_time=z.tolist())


@pytest.mark.parametrize("seed", range(40))
def test_convolution_matches_enumeration(seed):
    """Random networks of every station type, 1-4 classes, against brute-force enumeration."""
    rng = np.random.default_rng(7000 + seed)
    check_closed(random_closed_network(rng, 1 + seed % 4), algorithm="mva-convolution")


@pytest.mark.parametrize("seed", range(12))
def test_up_to_32_marginal_stations_multiclass_match_direct_convolution(seed):
    """8-32 multi-server and load-dependent stations, 2-3 classes, against the direct
    lattice convolution of tests/references/reference.py (no shared code)."""
    rng = np.random.default_rng(8000 + seed)
    n_classes = 2 + seed % 2
    n_marginal = [8, 16, 24, 32][seed % 4]
    population = rng.integers(1, 4 if n_classes == 2 else 3, n_classes)
    net = _marginal_network(rng, n_classes, n_marginal, 2, population, think=seed % 3 != 0)
    result = solve(net)
    assert result.extras["algorithm"] == "mva-convolution"
    x_ref, q_ref = convolution_multiclass(description(net), net.population, net.think_time)
    np.testing.assert_allclose(result.throughput, x_ref, rtol=RTOL)
    np.testing.assert_allclose(result.queue_length, q_ref, rtol=RTOL, atol=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_up_to_32_marginal_stations_single_class_match_log_convolution(seed):
    """One class, 16-32 multi-server/ld stations + 10 queues, N in the hundreds, against
    Buzen's convolution in log space; queue lengths against the lattice convolution."""
    rng = np.random.default_rng(9000 + seed)
    n_marginal = 16 + 16 * (seed % 2)
    N = int(rng.integers(100, 400))
    net = _marginal_network(rng, 1, n_marginal, 10, [N], monotone=seed % 4 < 2)
    result = solve(net)
    assert result.extras["algorithm"] == "mva-convolution"
    stations = [(s.kind, s.servers, s.capacity, s.demand[0]) for s in net.stations]
    x_ref = convolution_throughput(stations, N, think=net.think_time[0])
    np.testing.assert_allclose(result.throughput[0], x_ref, rtol=RTOL)
    small = net.replace(population=[30])
    x_small, q_small = convolution_multiclass(description(small), small.population, small.think_time)
    res_small = solve(small)
    np.testing.assert_allclose(res_small.throughput, x_small, rtol=RTOL)
    np.testing.assert_allclose(res_small.queue_length, q_small, rtol=RTOL, atol=1e-12)


@pytest.mark.parametrize("seed", range(30))
def test_recursive_and_convolution_algorithms_agree(seed):
    """Where both run (2-7 marginal stations), every output agrees to 1e-9, open classes
    included."""
    rng = np.random.default_rng(10_000 + seed)
    n_classes = 1 + seed % 3
    population = rng.integers(1, [200, 12, 6][n_classes - 1] + 1, n_classes)
    net = _marginal_network(rng, n_classes, 2 + seed % 6, 1 + seed % 3, population, monotone=seed % 2 == 0)
    if seed % 3 == 0:   # an open class at a fraction of every station's capacity
        stations = []
        for st in net.stations:
            limit = st.capacity_function()[-1]
            stations.append(Station(st.name, st.kind, list(st.demand) + [rng.uniform(0.05, 0.4) * limit],
                                    servers=st.servers, capacity=st.capacity))
        net = Network(stations, population=list(net.population) + [0], think_time=list(net.think_time) + [0.0],
                      arrival_rate=[0.0] * n_classes + [1.0])
    old = solve(net, algorithm="mva-recursive")
    new = solve(net, algorithm="mva-convolution")
    assert (old.extras["algorithm"], new.extras["algorithm"]) == ("mva-recursive", "mva-convolution")
    for field in ("throughput", "residence_time", "queue_length", "utilization"):
        np.testing.assert_allclose(getattr(new, field), getattr(old, field), rtol=RTOL, atol=1e-13)


def test_stable_at_n_10000_near_saturation_with_many_multiservers():
    """Four multi-server stations at the bottleneck's edge and N = 10,000: no cancellation,
    the answer is Buzen's to 1e-9, and every probability stays in [0, 1]."""
    stations = [Station(f"m{k}", "multi", [0.9 * (k + 2)], servers=k + 2) for k in range(4)]
    stations += [Station("q", "queue", [0.95]), Station("d", "delay", [5.0])]
    net = Network(stations, population=[10_000], think_time=[2.0])
    result = solve(net, algorithm="mva-convolution")
    ref = convolution_throughput([(s.kind, s.servers, s.capacity, s.demand[0]) for s in stations[:-1]], 10_000,
                                 think=2.0 + 5.0)   # the delay and the terminals are one delay
    np.testing.assert_allclose(result.throughput[0], ref, rtol=RTOL)
    assert np.all(np.isfinite(result.queue_length))
    servers = result.utilization[:-1]   # all but the delay
    assert np.all((servers >= 0) & (servers <= 1 + 1e-12))
    np.testing.assert_allclose(result.queue_length.sum() + result.throughput[0] * 2.0, 10_000, rtol=1e-9)


def test_class_that_only_visits_one_marginal_station():
    """A class whose only station is load-dependent: its complement has no server for it
    (G_{-k} = 0), so p_k(0) = 0 exactly; both algorithms and enumeration agree."""
    net = Network([Station("a", "ld", [0.4, 0.0], capacity=[1.0, 1.7, 2.2]),
                   Station("b", "multi", [0.2, 0.3], servers=2),
                   Station("c", "multi", [0.0, 0.5], servers=3)], population=[3, 2])
    x_ref, q_ref, _, _ = enumerate_closed(description(net), list(net.population), list(net.think_time))
    for algorithm in ("mva-recursive", "mva-convolution"):
        result = solve(net, algorithm=algorithm)
        np.testing.assert_allclose(result.throughput, x_ref, rtol=RTOL)
        np.testing.assert_allclose(result.queue_length, q_ref, rtol=RTOL, atol=1e-12)


def test_auto_choice_by_shape():
    """Few marginal stations: the recursive algorithm; many: the convolution."""
    few = Network([Station("m", "multi", [0.1], servers=4), Station("q", "queue", [0.05])], population=[50])
    many = Network([Station(f"m{k}", "multi", [0.1], servers=4) for k in range(24)], population=[50])
    assert solve(few).extras["algorithm"] == "mva-recursive"
    assert solve(many).extras["algorithm"] == "mva-convolution"


def test_unknown_algorithm_is_one_line_error():
    net = Network([Station("q", "queue", [0.1])], population=[2])
    with pytest.raises(ModelError, match="options.algorithm: unknown algorithm 'fast'"):
        solve(net, algorithm="fast")


def test_batch_solver_with_many_marginal_stations_equals_single_solves():
    """The sweep's batch solver takes the convolution path too, with each case's own
    demands and think time: the same numbers as solving each case alone."""
    from mva import batch_exact_single_class

    rng = np.random.default_rng(42)
    net = _marginal_network(rng, 1, 12, 3, [60])
    demand = net.demands[:, 0] * rng.uniform(0.5, 1.5, (5, net.n_stations))
    think = rng.uniform(0.0, 4.0, 5)
    batch = batch_exact_single_class(net, demand, think)
    for b in range(5):
        case = Network([Station(s.name, s.kind, [demand[b, k]], servers=s.servers, capacity=s.capacity)
                        for k, s in enumerate(net.stations)], population=[60], think_time=[think[b]])
        single = solve(case)
        assert single.extras["algorithm"] == "mva-convolution"
        np.testing.assert_array_equal(batch["throughput"][b], single.throughput[0])
        np.testing.assert_array_equal(batch["queue_length"][b], single.queue_length[:, 0])


def test_lattice_refusal_survives_a_cost_estimate_on_the_same_network():
    """auto estimates the exact cost (and picks an approximation); a later exact solve of
    the same Network object must still refuse the lattice, not try to allocate it."""
    net = Network([Station("cpu", "multi", [0.1] * 8, servers=2), Station("d", "queue", [0.1] * 8)],
                  population=[40] * 8)
    assert solve(net, "auto").method == "linearizer"
    with pytest.raises(ModelError, match="population vectors"):
        solve(net, "exact")
