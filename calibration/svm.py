"""From SVM simulator runs to the layered cluster model (``models.svm_cluster``): the
application layer is the per-node counts of one HLRC run and one SC run of the same
workload."""
from __future__ import annotations

from .sim.svm import PAGE, SVMConfig, SVMResult, simulate_svm
from .sim.workload import Workload

__all__ = ["application_values", "model_document"]


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


def model_document(workload: Workload, granularity: int = 64, home: str = "first-touch",
                   references: int | None = None) -> tuple[dict, SVMResult, SVMResult]:
    """A model file (``kind = "svm_cluster"``) for ``workload``: simulate it under HLRC
    (4 KiB pages) and SC (``granularity`` bytes); returns (document, HLRC run, SC run)."""
    hlrc = simulate_svm(workload, SVMConfig("hlrc", PAGE, home, references=references))
    sc = simulate_svm(workload, SVMConfig("sc", granularity, home, references=references))
    doc = {"kind": "svm_cluster", "name": workload.name, **_nested(application_values(hlrc, sc))}
    return doc, hlrc, sc


def _nested(values: dict) -> dict:
    out: dict = {}
    for key, v in values.items():
        head, _, tail = key.partition(".")
        out.setdefault(head, {})[tail] = v
    return out
