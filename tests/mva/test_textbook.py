"""Hand-worked and closed-form cases, each named after where it comes from."""
import math
from fractions import Fraction

import numpy as np
import pytest

from mva import Network, Station, solve
from references.reference import erlang_c


def test_two_queue_network_n3_worked_by_hand():
    """Two queues, D = 0.1 s and 0.2 s, N = 3, no think time (MVA by hand in fractions):
    X(1) = 10/3, X(2) = 30/7, X(3) = 14/3; Q(3) = (11/15, 34/15)."""
    net = Network([Station("cpu", "queue", [0.1]), Station("disk", "queue", [0.2])], population=[3])
    r = solve(net)
    assert r.throughput[0] == pytest.approx(float(Fraction(14, 3)), rel=1e-15)
    np.testing.assert_allclose(r.queue_length[:, 0], [11 / 15, 34 / 15], rtol=1e-14)
    np.testing.assert_allclose(r.residence_time[:, 0], [11 / 70, 34 / 70], rtol=1e-14)
    np.testing.assert_allclose(r.utilization[:, 0], [14 / 30, 28 / 30], rtol=1e-14)
    assert r.response_time[0] == pytest.approx(45 / 70, rel=1e-14)


def _repairman_throughput(machines, up_time, repair_time, repairmen):
    """Finite-source M/M/c//N (machine-repairman) by its birth-death closed form."""
    r = repair_time / up_time
    weights = []
    for k in range(machines + 1):
        w = math.comb(machines, k) * r ** k
        if k > repairmen:
            w *= math.factorial(k) / (math.factorial(repairmen) * repairmen ** (k - repairmen))
        weights.append(w)
    p = np.array(weights) / sum(weights)
    busy = sum(p[k] * min(k, repairmen) for k in range(machines + 1))
    return busy / repair_time, p


@pytest.mark.parametrize("machines,up,repair", [(5, 10.0, 2.0), (20, 3.0, 0.4), (1, 1.0, 1.0)])
def test_machine_repairman_loop(machines, up, repair):
    """One repairman (queue) and machines thinking for their up time (Kleinrock vol. 1,
    sec. 3.8): X = (1 - p0) / S with p0 = 1 / sum_k N!/(N-k)! (S/Z)^k."""
    net = Network([Station("repair", "queue", [repair])], population=[machines], think_time=[up])
    x, p = _repairman_throughput(machines, up, repair, 1)
    r = solve(net)
    assert r.throughput[0] == pytest.approx(x, rel=1e-12)
    assert r.utilization[0, 0] == pytest.approx(1 - p[0], rel=1e-12)


@pytest.mark.parametrize("repairmen", [2, 3, 7])
def test_machine_repairman_with_several_repairmen(repairmen):
    """M/M/c//N: the multi-server station is exact."""
    net = Network([Station("crew", "multi", [0.7], servers=repairmen)], population=[9], think_time=[2.0])
    x, p = _repairman_throughput(9, 2.0, 0.7, repairmen)
    r = solve(net)
    assert r.throughput[0] == pytest.approx(x, rel=1e-12)
    expected_queue = sum(k * p[k] for k in range(10))
    assert r.queue_length[0, 0] == pytest.approx(expected_queue, rel=1e-12)


def test_delay_only_network():
    """No queueing anywhere: X = N / (Z + sum D)."""
    net = Network([Station("a", "delay", [0.5]), Station("b", "delay", [1.5])], population=[7], think_time=[2.0])
    assert solve(net).throughput[0] == pytest.approx(7 / 4.0, rel=1e-15)


def test_open_mm1():
    """M/M/1: R = D / (1 - U), Q = U / (1 - U)."""
    net = Network([Station("cpu", "queue", [0.2])], arrival_rate=[4.0])
    r = solve(net)
    assert r.residence_time[0, 0] == pytest.approx(0.2 / 0.2, rel=1e-14)
    assert r.queue_length[0, 0] == pytest.approx(0.8 / 0.2, rel=1e-14)
    assert r.utilization[0, 0] == pytest.approx(0.8)


@pytest.mark.parametrize("servers,rate", [(2, 1.5), (4, 3.9), (8, 2.0), (1, 0.5)])
def test_open_multiserver_is_erlang_c(servers, rate):
    """M/M/m: R = S + C(m, a) S / (m - a) (Erlang C), a = lambda S."""
    service = 1.0
    net = Network([Station("pool", "multi", [service], servers=servers)], arrival_rate=[rate])
    a = rate * service
    expected = service + erlang_c(servers, a) * service / (servers - a)
    r = solve(net)
    assert r.residence_time[0, 0] == pytest.approx(expected, rel=1e-12)
    assert r.utilization[0, 0] == pytest.approx(a / servers, rel=1e-14)


def test_mixed_network_inflates_closed_demands():
    """Mixed network of queues (Lazowska et al. 1984, ch. 7): closed classes see demands
    D / (1 - U_open); open classes see R = D (1 + Q_closed) / (1 - U_open)."""
    d_closed = [0.10, 0.30]
    d_open = [0.05, 0.20]
    lam = 2.0
    mixed = Network([Station("cpu", "queue", [d_closed[0], d_open[0]]),
                     Station("disk", "queue", [d_closed[1], d_open[1]])],
                    population=[6, 0], think_time=[1.0, 0.0], arrival_rate=[0.0, lam])
    u_open = np.array(d_open) * lam
    inflated = Network([Station("cpu", "queue", [d_closed[0] / (1 - u_open[0])]),
                        Station("disk", "queue", [d_closed[1] / (1 - u_open[1])])],
                       population=[6], think_time=[1.0])
    rm, ri = solve(mixed), solve(inflated)
    assert rm.throughput[0] == pytest.approx(ri.throughput[0], rel=1e-13)
    q_closed = ri.queue_length[:, 0]
    expected_open = np.array(d_open) * (1 + q_closed) / (1 - u_open)
    np.testing.assert_allclose(rm.residence_time[:, 1], expected_open, rtol=1e-13)
    assert rm.throughput[1] == lam


def test_empty_population_gives_zeros():
    """N = 0: nothing flows (Octave's 'trivial case of empty population')."""
    net = Network([Station("cpu", "queue", [0.3])], population=[0])
    r = solve(net)
    assert r.throughput[0] == 0 and r.queue_length[0, 0] == 0 and r.utilization[0, 0] == 0
