"""From SVM simulator runs to the layered cluster model (``models.svm_cluster``): the
application layer is the per-node counts of one HLRC run and one SC run of the same
workload, over the run and per group of like barrier phases."""
from __future__ import annotations

import numpy as np

from ..sim.ccnuma import PHASE_GROUP_FACTOR, _bin
from ..sim.svm import COUNTERS, LOCK_CONTENT, SVMConfig, SVMResult, lock_concentration, simulate_svm
from ..sim.workload import PAGE
from ..sim.workload import Workload

__all__ = ["simulate_pair", "application_values", "phase_groups", "phase_max_by_wait", "group_times", "named_locks",
           "model_document", "PHASE_GROUP_FACTOR", "MAX_PHASE_GROUPS", "NAMED_LOCK_SHARE"]

# Barrier phases share a group when their message intensities (messages per cycle of
# the busiest node's work) and their concentrations (the busiest server's share of the
# requests served) fall in the same logarithmic bins of the cc-NUMA machine's factor.
#: at most this many groups (the model solves one network each), a bound on the solve
#: time that no recorded program reaches (Ocean has 14); beyond it the groups with the
#: fewest messages merge into their nearest neighbour by bins.  Merged phases overlap in
#: the model what the machine does one after another (4 before [REC]: Volrend's lock
#: convoys then met its lock-free phases' fetches; :mod:`models.svm_cluster`)
MAX_PHASE_GROUPS = 16
#: a group with less than this share of both the run's work and its messages joins another
MINOR = 0.02
#: a lock whose critical sections hold at least this share of the run's of any kind (its
#: sections, work, fetches, acknowledgements, nested acquires' messages or protocol
#: counts, or the first acquires of a phase ahead of another at it, ``burst_ahead``) is
#: its own station in the model; fixed before any run was compared [REC]
NAMED_LOCK_SHARE = 0.1


def simulate_pair(workload: Workload, granularity: int = 64, home: str = "first-touch",
                  references: int | None = None) -> tuple[SVMResult, SVMResult]:
    """``workload`` under HLRC (4 KiB pages) and under SC (``granularity`` bytes), on the
    machine without costs (the PRAM schedule): the application layer's counts, which the
    model prices at any communication and protocol costs."""
    free = {"communication": "ideal", "protocol_costs": "B", "references": references}
    return (simulate_svm(workload, SVMConfig("hlrc", PAGE, home, **free)),
            simulate_svm(workload, SVMConfig("sc", granularity, home, **free)))


def application_values(hlrc: SVMResult, sc: SVMResult) -> dict:
    """Model parameters (``hlrc.busy`` ... ``sc.lock_concentration``,
    ``hlrc.phase_max_by_wait``, ``hlrc.phases``) from the two runs."""
    from models.svm_cluster import APP_COUNTERS

    values = {}
    for tag, run in (("hlrc", hlrc), ("sc", sc)):
        for k in APP_COUNTERS:
            values[f"{tag}.{k}"] = [float(x) for x in run.counter(k)]
        values[f"{tag}.phase_max"] = float(run.phase_max_cycles)
        values[f"{tag}.phase_max_by_wait"] = phase_max_by_wait(run)
        values[f"{tag}.unit_bytes"] = float(run.config["granularity"])
        values[f"{tag}.lock_concentration"] = float(run.lock_concentration)
        values[f"{tag}.locks"], values[f"{tag}.other_lock_concentration"] = named_locks(run)
        values[f"{tag}.phases"] = phase_groups(run)
    return values


def named_locks(run: SVMResult, share: float = NAMED_LOCK_SHARE) -> tuple[list, float]:
    """The locks whose critical sections hold at least ``share`` of the run's of some
    kind (:data:`calibration.sim.svm.LOCK_CONTENT`, counted to the outermost lock held):
    per lock a table of its shares of each kind (``sections``, ``cs_busy`` ...), the
    largest first; and the chance two of the other locks' sections name the same lock
    (0 when there are none).  The model gives each named lock its own station, priced
    at its own contents, and spreads the others' evenly (:mod:`models.svm_cluster`)."""
    content = run.lock_content
    if content is None or content.shape[0] == 0 or content[:, 0].sum() == 0:
        return [], 0.0
    totals = content.sum(axis=0).astype(float)
    shares = np.divide(content, totals, out=np.zeros(content.shape), where=totals > 0)
    named = [int(k) for k in np.argsort(-shares.max(axis=1), kind="stable") if shares[k].max() >= share]
    return ([{name: float(shares[k, j]) for j, name in enumerate(LOCK_CONTENT)} for k in named],
            lock_concentration(np.delete(content[:, 0], named)))


def _slowest_by_wait(phase: np.ndarray, col: dict) -> np.ndarray:
    """One phase's slowest node's work plus requests at each wait of the model's
    ``PHASE_WAIT_GRID`` (cycles)."""
    from models.svm_cluster.model import PHASE_WAIT_GRID

    return (phase[:, col["busy"]][None, :] + np.multiply.outer(PHASE_WAIT_GRID, phase[:, col["requests"]])).max(axis=1)


def phase_max_by_wait(run: SVMResult) -> list:
    """The model's ``phase_max_by_wait`` for the run: the sum over barrier phases of the
    slowest node's work plus its requests at each data wait of ``PHASE_WAIT_GRID``
    (cycles), whose first (no wait) is ``phase_max``; empty when the run has no
    per-phase counts.  The model takes the phases' spread of requests from it, which
    the run's totals average away."""
    counts = run.phase_counts
    if counts is None or counts.shape[0] == 0:
        return []
    col = {k: COUNTERS.index(k) for k in COUNTERS}
    return [float(x) for x in sum(_slowest_by_wait(phase, col) for phase in counts)]


def phase_groups(run: SVMResult, limit: int = MAX_PHASE_GROUPS, members: bool = False) -> list:
    """The run's barrier phases summed in groups of like phases: per group a table of
    the model's counters (lists over nodes) and ``phase_max`` (the sum over its phases
    of the busiest node's work).  Each phase's busiest server is swapped with node 0
    before it is added [REC], so a hot spot that moves from node to node (LU's pivot
    block) stays one hot spot in the sum; barriers keep phases apart in time, so a
    message queues only with those of its own phase, and the model solves each group as
    its own network (a program communicating in bursts between quiet phases, as FFT's
    transposes, queues in the bursts).  Empty when the run has one phase (the run's
    sums are its only group).  ``members``: each group also lists its phases (indices
    into ``run.phase_counts``) as ``phases``, to set the machine's time for them
    (``run.phase_times``) beside the model's for the group."""
    from models.svm_cluster import APP_COUNTERS

    counts = run.phase_counts
    if counts is None or counts.shape[0] < 2:
        return []
    col = {k: COUNTERS.index(k) for k in COUNTERS}
    groups: dict = {}
    for index, phase in enumerate(counts):
        busy = phase[:, col["busy"]]
        if busy.sum() == 0 and not phase.any():
            continue
        served = phase[:, col["served"]]
        hot = int(np.argmax(served))
        order = np.arange(phase.shape[0])
        order[0], order[hot] = hot, 0
        messages = float(phase[:, [col["requests"], col["oneway"], col["lock_messages"]]].sum())
        top = float(busy.max())
        key = ((-99, 0) if messages == 0 or top == 0
               else (_bin(messages / top), _bin(served.max() / served.sum()) if served.sum() > 0 else 0))
        g = groups.setdefault(key, {"counts": np.zeros(phase.shape, float), "phase_max": 0.0, "messages": 0.0,
                                    "members": [], "by_wait": 0.0})
        g["members"].append(index)
        g["counts"] += phase[order]
        g["phase_max"] += top
        g["by_wait"] = g["by_wait"] + _slowest_by_wait(phase, col)
        g["messages"] += messages
    # too many groups, or one without work or with under MINOR of both the work and the
    # messages: the one with the fewest messages joins its nearest
    work = sum(g["phase_max"] for g in groups.values())
    messages = sum(g["messages"] for g in groups.values())

    def negligible(g):
        return g["counts"][:, col["busy"]].sum() == 0 or (g["phase_max"] < MINOR * work
                                                          and g["messages"] <= MINOR * messages)

    while len(groups) > 1 and (len(groups) > limit or any(negligible(g) for g in groups.values())):
        idle = [k for k, g in groups.items() if negligible(g)]
        small = idle[0] if idle else min(groups, key=lambda k: groups[k]["messages"])
        g = groups.pop(small)
        near = min(groups, key=lambda k: (abs(k[0] - small[0]) + abs(k[1] - small[1]), -groups[k]["messages"]))
        for f in ("counts", "phase_max", "messages", "members", "by_wait"):
            groups[near][f] += g[f]
    if len(groups) < 2:
        return []
    return [{**{k: [float(x) for x in g["counts"][:, col[k]]] for k in APP_COUNTERS}, "phase_max": g["phase_max"],
             "phase_max_by_wait": [float(x) for x in g["by_wait"]],
             **({"phases": sorted(g["members"])} if members else {})}
            for _, g in sorted(groups.items())]


def group_times(timed: SVMResult, groups: list) -> list[dict]:
    """The timed machine's time in each group of phases (``groups`` from
    :func:`phase_groups` with ``members=True``, of the run without costs): per group
    the mean over nodes of each part of :data:`calibration.sim.svm.BREAKDOWN` (cycles),
    to set beside the model's breakdown of the same group (its solution's
    ``extras["groups"]``), which says where in the program a model misses.  Phases that
    join no group (no work and no message) are in none."""
    from mva.errors import ModelError

    from ..sim.svm import BREAKDOWN

    if timed.phase_times is None:
        raise ModelError("timed", "the run has no per-phase times")
    phases = timed.phase_times.shape[0]
    out = []
    for k, group in enumerate(groups):
        if "phases" not in group:
            raise ModelError(f"groups[{k}]", "lists no phases (phase_groups(..., members=True))")
        if any(not 0 <= ph < phases for ph in group["phases"]):
            raise ModelError(f"groups[{k}].phases", f"the timed run has {phases} phases: not the same program")
        part = timed.phase_times[list(group["phases"])].sum(axis=0).mean(axis=0)
        out.append({name: float(x) for name, x in zip(BREAKDOWN, part, strict=True)})
    return out


def model_document(values: dict, name: str = "") -> dict:
    """A model file (``kind = "svm_cluster"``, nested tables, ready for TOML) from
    :func:`application_values`."""
    doc: dict = {"kind": "svm_cluster", **({"name": name} if name else {})}
    for key, v in values.items():
        head, _, tail = key.partition(".")
        doc.setdefault(head, {})[tail] = v
    return doc
