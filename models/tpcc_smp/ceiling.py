"""The ceiling Table 10 of Du & Zhang (2001) puts on any model of this class.

One CPU at 24.6 tpmC with 48 terminals is saturated: by exact MVA of a repairman network
its capacity is 24.6 tpmC to within 0.01%, so two CPUs give at most twice that, 49.2 tpmC,
while 96 of the 111 held-out tpmC values (Tables 11, 13-17, all at two CPUs) are higher.
The bound rests on three assumptions, each true of the model: the 1- and 2-CPU cases
differ only in the CPU centre; the time spent outside it does not grow when it is slowed
(product-form monotonicity; the contention terms fall with throughput); and k CPUs have
at most k times the capacity of one (the Norton aggregate shares one memory bus).  The
default model breaks the third on purpose: ``cpu.speed_by_cpus`` lets one CPU alone run
slower than one of two (the per-centre rates of the paper's Fig. 5), the one reading of
Table 10 under which Tables 11 and 13-17's two-CPU values are in reach.
"""
from __future__ import annotations

import numpy as np

__all__ = ["HELD_OUT_TPMC", "one_cpu_bound", "repairman_capacity"]

#: The tpmC tables that calibration does not fit (Table 10 is fitted).
HELD_OUT_TPMC = (11, 13, 14, 15, 16, 17)


def _throughput(tpmc: float, new_order_share: float) -> float:
    """Transactions per second from tpmC (eq. 3.10 inverted)."""
    return tpmc / 60.0 / new_order_share


def repairman_capacity(throughput: float, terminals: int, delay: float) -> float:
    """Service rate (1/s) of the one queue of a closed network of ``terminals`` customers
    with a ``delay`` (s) whose exact MVA throughput is ``throughput`` (1/s)."""
    from scipy.optimize import brentq

    from mva import Network, Station, exact_mva

    def solved(demand):
        net = Network((Station("cpu", "queue", (demand,)),), population=(terminals,), think_time=(delay,))
        return float(exact_mva(net).throughput[0])

    # throughput falls as the demand grows; X <= 1/D brackets the root from below
    demand = brentq(lambda d: solved(d) - throughput, 1e-9, 1.0 / throughput, xtol=1e-15, rtol=1e-13)
    return 1.0 / demand


def one_cpu_bound(tpmc_1cpu: float | None = None, tpmc_2cpu: float | None = None) -> dict:
    """The ceiling that Table 10's one-CPU tpmC puts on every two-CPU prediction.

    With N terminals and mean think time Z (eq. 3.1), the 2-CPU case (``tpmc_2cpu``,
    Table 10 mu2) spends R_other <= N/X_2 - Z outside the CPU centre; the 1-CPU case spends
    no more there.  The 1-CPU centre's capacity c_1 is then at most the rate of a single
    queue that, behind a delay of Z + R_other, gives the observed X_1 by exact MVA, and
    two CPUs give at most 2 c_1.  Returns the capacities (tpmC), the held-out rows above the
    ceiling, the least held-out error any model of this class can have while it predicts
    Table 10's one-CPU value exactly, and how far above that value a model must predict
    for the held-out mean error to reach 5% and the max 10%.
    """
    from scipy.optimize import brentq

    from . import data
    from .model import TPCCSMP

    published = data.published_tpmc()
    table10 = published[published.table == 10].set_index("configuration")["tpmC"]
    tpmc_1cpu = float(table10["mu1"] if tpmc_1cpu is None else tpmc_1cpu)
    tpmc_2cpu = float(table10["mu2"] if tpmc_2cpu is None else tpmc_2cpu)
    model = TPCCSMP.from_values({})
    terminals, think, share = model.values["terminals"], model.mean_think_time(), float(data.mix()[0])
    x1, x2 = _throughput(tpmc_1cpu, share), _throughput(tpmc_2cpu, share)
    other = max(terminals / x2 - think, 0.0)
    # the longer the delay in front, the faster the queue must be for the same X_1
    capacity = repairman_capacity(x1, terminals, think + other) * 60.0 * share
    ceiling = 2.0 * capacity
    held = published[published.table.isin(HELD_OUT_TPMC)]
    if set(held.cpus) != {2}:
        raise ValueError("held-out tables: expected only two-CPU cases")
    paper = held.tpmC.to_numpy(float)

    def least_error(scale):
        return np.maximum(0.0, 1.0 - ceiling * scale / paper)

    floor = least_error(1.0)
    over_for_mean = (0.0 if floor.mean() <= 0.05 else
                     brentq(lambda s: least_error(s).mean() - 0.05, 1.0, paper.max() / ceiling) - 1.0)
    over_for_max = 0.9 * paper.max() / ceiling - 1.0
    return {"one_cpu_tpmc": tpmc_1cpu, "one_cpu_capacity_tpmc": capacity, "two_cpu_ceiling_tpmc": ceiling,
            "outside_cpu_s": other, "held_out_rows": int(paper.size),
            "held_out_above_ceiling": int((paper > ceiling).sum()), "held_out_max_tpmc": float(paper.max()),
            "least_heldout_error": {"mean": float(floor.mean()), "max": float(floor.max())},
            "one_cpu_overprediction_for_mean_5pct": float(over_for_mean),
            "one_cpu_overprediction_for_max_10pct": float(max(over_for_max, 0.0))}
