"""From the cc-NUMA simulator to the ``ccnuma`` queueing model: the model's values
(visit ratios, demands, unloaded costs) from one simulated run, and a model file.

Calibrated the way the shared-bus model is (:mod:`calibration.profiles.shared_bus`): the simulator
measures what a configuration asks of each node controller, the model adds the
queueing, so a placement or proxy option can be ranked, and its hot node found, in
milliseconds once its run is in hand.
"""
from __future__ import annotations

import numpy as np

from ..sim.ccnuma import COUNTERS, CCNUMAResult

__all__ = ["model_values", "model_document"]


def model_values(result: CCNUMAResult) -> dict:
    """The ``ccnuma`` model's values from one simulated run (see
    :mod:`models.ccnuma.model` for what each means): the centres' visits and demands
    are summed phase by phase with each barrier phase's busiest controller as centre 0,
    over the run and (``phases``) over each group of phases of like intensity."""
    c = result.counter
    own = c("work") + c("stall")
    values = _counts(np.array([c(name) for name in COUNTERS]).T, result.phase_visits, result.phase_demand,
                     result.phase_read_visits)
    values.update({"node_demand": result.demand.astype(float).tolist(),
                   "imbalance": float(result.execution_cycles - own.mean()),
                   "phases": [_counts(counts, vis, dem, rvis) for vis, dem, rvis, counts in result.phase_groups]})
    return values


def _counts(counts: np.ndarray, visits, demand, read_visits) -> dict:
    """The per-class values of a run or a group of phases: ``counts`` nodes x
    :data:`~calibration.sim.ccnuma.COUNTERS`, the matrices requesters x centres."""
    c = {name: counts[:, k].astype(np.int64) for k, name in enumerate(COUNTERS)}
    reads = c["remote_reads"]
    fixed = np.where(reads > 0, (c["remote_read_cycles"] - c["remote_read_queueing"]) / np.maximum(reads, 1), 0.0)
    return {"transactions": c["transactions"].astype(float).tolist(), "work": c["work"].astype(float).tolist(),
            "stall": c["stall"].astype(float).tolist(),
            "queueing": c["transaction_queueing"].astype(float).tolist(),
            "visits": visits.astype(float).tolist(), "demand": demand.astype(float).tolist(),
            "remote_reads": reads.astype(float).tolist(), "read_fixed": fixed.tolist(),
            "read_visits": read_visits.astype(float).tolist()}


def model_document(result: CCNUMAResult, name: str = "") -> dict:
    """A model file (``kind = "ccnuma"``, ready for TOML) from one run."""
    return {"kind": "ccnuma", **({"name": name} if name else {}), **model_values(result)}
