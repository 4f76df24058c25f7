"""Load-dependent MVA at large populations: the textbook formulation fails, ours does not."""
import numpy as np
import pytest

from mva import Network, Station, closed_throughput_curve, solve
from references.reference import convolution_throughput, naive_ld_mva

pytestmark = pytest.mark.slow          # large populations: minutes; .ci/run runs it too

QUEUES = [0.05, 0.1, 0.2, 0.15, 0.12]
FESC = [1.0, 1.8, 2.5, 3.1]      # four CPUs with synchronisation losses (an FESC)
N = 10_000
THINK = 5.0


def _network(capacity, population=N):
    stations = [Station("cpu", "ld", [1.0], capacity=capacity)]
    stations += [Station(f"q{i}", "queue", [d]) for i, d in enumerate(QUEUES)]
    return Network(stations, population=[population], think_time=[THINK])


def _reference(capacity, population=N):
    stations = [("ld", 1, capacity, 1.0)] + [("queue", 1, None, d) for d in QUEUES]
    return convolution_throughput(stations, population, THINK)


def test_naive_formulation_fails_at_large_population():
    """Du & Zhang (2001) eq. 3.4 (p(0|n) = 1 - sum) breaks down: negative probabilities and a
    throughput that is not even positive, where the network is saturated at the FESC."""
    x_naive, worst_probability = naive_ld_mva(QUEUES, FESC, N, THINK)
    x_ref = _reference(FESC)
    assert worst_probability < -1e-3
    assert abs(x_naive / x_ref - 1) > 1e-3


def test_stable_formulation_is_exact_at_large_population():
    """Throughput to 1e-9 relative at N = 10,000 with a saturated load-dependent station."""
    result = solve(_network(FESC))
    x_ref = _reference(FESC)
    assert result.throughput[0] == pytest.approx(x_ref, rel=1e-9)
    # saturated: the FESC runs at its full capacity 3.1 / demand 1.0
    assert result.throughput[0] == pytest.approx(3.1, rel=1e-9)
    assert 0.0 <= result.utilization[0, 0] <= 1.0


def test_long_capacity_function_not_saturated_at_fesc():
    """A capacity function as long as the population (Norton aggregation gives one),
    the bottleneck elsewhere: the FESC's marginals stay tiny but meaningful."""
    n = 2_000
    capacity = list(np.minimum(np.arange(1, n + 1), 64) * 0.9 + 0.1)
    result = solve(_network(capacity, n))
    assert result.throughput[0] == pytest.approx(_reference(capacity, n), rel=1e-9)


def test_throughput_curve_matches_final_solve():
    net = _network(FESC, 300)
    curve = closed_throughput_curve(net)
    assert curve.shape == (301,)
    assert curve[0] == 0.0
    assert curve[-1] == pytest.approx(solve(net).throughput[0], rel=1e-14)
    assert np.all(np.diff(curve) >= -1e-12)
