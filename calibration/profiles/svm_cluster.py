"""From SVM simulator runs to the layered cluster model (``models.svm_cluster``): the
application layer is the per-node counts of one HLRC run and one SC run of the same
workload."""
from __future__ import annotations

from ..sim.svm import SVMConfig, SVMResult, simulate_svm
from ..sim.workload import PAGE
from ..sim.workload import Workload

__all__ = ["simulate_pair", "application_values", "model_document"]


def simulate_pair(workload: Workload, granularity: int = 64, home: str = "first-touch",
                  references: int | None = None) -> tuple[SVMResult, SVMResult]:
    """``workload`` under HLRC (4 KiB pages) and under SC (``granularity`` bytes), on the
    machine without costs (the PRAM schedule): the application layer's counts, which the
    model prices at any communication and protocol costs."""
    free = {"communication": "ideal", "protocol_costs": "B", "references": references}
    return (simulate_svm(workload, SVMConfig("hlrc", PAGE, home, **free)),
            simulate_svm(workload, SVMConfig("sc", granularity, home, **free)))


def application_values(hlrc: SVMResult, sc: SVMResult) -> dict:
    """Model parameters (``hlrc.busy`` ... ``sc.lock_concentration``) from the two runs."""
    from models.svm_cluster import APP_COUNTERS

    values = {}
    for tag, run in (("hlrc", hlrc), ("sc", sc)):
        for k in APP_COUNTERS:
            values[f"{tag}.{k}"] = [float(x) for x in run.counter(k)]
        values[f"{tag}.phase_max"] = float(run.phase_max_cycles)
        values[f"{tag}.lock_concentration"] = float(run.lock_concentration)
    return values


def model_document(values: dict, name: str = "") -> dict:
    """A model file (``kind = "svm_cluster"``, nested tables, ready for TOML) from
    :func:`application_values`."""
    doc: dict = {"kind": "svm_cluster", **({"name": name} if name else {})}
    for key, v in values.items():
        head, _, tail = key.partition(".")
        doc.setdefault(head, {})[tail] = v
    return doc
