"""Exact MVA against brute-force product-form enumeration (shares no code with MVA)."""
import numpy as np
import pytest

from mva import Network, Station, solve
from references.netgen import KINDS, description, random_closed_network
from references.reference import enumerate_closed

RTOL = 1e-9


def check_closed(net, **options):
    """``solve(net, **options)`` against enumeration: throughputs, queue lengths, P(busy)."""
    result = solve(net, **options)
    x_ref, q_ref, busy_ref, _ = enumerate_closed(description(net), list(net.population), list(net.think_time))
    np.testing.assert_allclose(result.throughput, x_ref, rtol=RTOL)
    np.testing.assert_allclose(result.queue_length, q_ref, rtol=RTOL, atol=1e-12)
    for k, st in enumerate(net.stations):
        if st.kind in ("queue", "ld"):
            # total utilisation of a single-server or load-dependent station is P(busy)
            np.testing.assert_allclose(result.utilization[k].sum(), busy_ref[k], rtol=RTOL, atol=1e-12)
    return result


@pytest.mark.parametrize("seed", range(60))
def test_random_closed_networks_match_enumeration(seed):
    """60 random networks, 1-4 classes, every station type, against enumeration."""
    rng = np.random.default_rng(seed)
    n_classes = 1 + seed % 4
    check_closed(random_closed_network(rng, n_classes))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_classes", [1, 2, 3])
def test_every_station_type_in_every_class_count(kind, n_classes):
    """Each type next to a plain queue, so no type is left to chance."""
    rng = np.random.default_rng(1000 + 10 * n_classes + KINDS.index(kind))
    check_closed(random_closed_network(rng, n_classes, kinds=[kind, "queue"]))


def test_several_load_dependent_stations_need_nested_complements():
    """Three stations that need marginals: complements of complements are exercised."""
    net = Network([Station("m", "multi", [0.3, 0.2], servers=3),
                   Station("f", "ld", [0.4, 0.1], capacity=[0.5, 1.5, 2.0]),
                   Station("g", "ld", [0.2, 0.6], capacity=[2.0, 1.0]),
                   Station("q", "queue", [0.1, 0.1])],
                  population=[4, 3], think_time=[1.0, 0.0])
    check_closed(net)


@pytest.mark.parametrize("seed", range(12))
def test_mixed_networks_match_enumeration(seed):
    """Open classes summed out of the product form, closed and open measures both."""
    rng = np.random.default_rng(500 + seed)
    closed = random_closed_network(rng, 1 + seed % 2, max_states=800)
    stations = []
    loads = []
    for _k, st in enumerate(closed.stations):
        limit = 1.0 if st.kind == "queue" else (st.servers if st.kind == "multi" else
                                                 (st.capacity[-1] if st.kind == "ld" else 5.0))
        d_open = rng.uniform(0.05, 0.9) * limit / 2.0
        stations.append(Station(st.name, st.kind, list(st.demand) + [d_open], servers=st.servers,
                                capacity=st.capacity))
        loads.append(d_open * 2.0)  # arrival rate 2
    net = Network(stations, population=list(closed.population) + [0],
                  think_time=list(closed.think_time) + [0.0],
                  arrival_rate=[0.0] * closed.n_classes + [2.0])
    result = solve(net)
    x_ref, q_ref, _, open_ref = enumerate_closed(description(closed), list(closed.population),
                                                 list(closed.think_time), open_loads=loads)
    np.testing.assert_allclose(result.throughput[:-1], x_ref, rtol=RTOL)
    np.testing.assert_allclose(result.queue_length[:, :-1], q_ref, rtol=RTOL, atol=1e-12)
    np.testing.assert_allclose(result.queue_length[:, -1], open_ref, rtol=1e-8, atol=1e-12)
    assert result.throughput[-1] == 2.0


@pytest.mark.parametrize("seed", range(15))
def test_single_class_kernel_agrees_with_lattice_kernel(seed):
    """The C = 1 specialisation against the general lattice recursion, at populations
    beyond enumeration."""
    from mva.exact import _closed_lattice
    from mva.plan import SolverPlan

    rng = np.random.default_rng(3000 + seed)
    net = random_closed_network(rng, 1)
    net = net.replace(population=[int(rng.integers(20, 300))])
    plan = SolverPlan.of(net)
    fast, _ = _closed_lattice(plan)
    general, _ = _closed_lattice(plan, force_lattice=True)
    for a, b in zip(fast, general, strict=False):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-300)
