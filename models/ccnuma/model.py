"""Queueing model of a cc-NUMA machine's node controllers (model kind ``ccnuma``).

The question of Talbot & Kelly, "Stable performance for cc-NUMA using first-touch page
placement and reactive proxies" (1999): which page placement, are proxies worth it,
where is the hot spot.  One closed class per processor (population 1); each cycle of a
class is one of its memory transactions (a miss or an upgrade the processor waits
for).  The centres are the P node controllers; class ``p`` visits centre ``k``
``visits[p][k] / transactions[p]`` times per cycle and needs ``demand[p][k] /
transactions[p]`` cycles there, as the simulator counted them under the placement and
proxy option being modelled.  So the placement enters through where the visits go,
proxies through the home visits that combining removes and the proxy visits added,
finite buffers through the bounce-and-retry visits.

Barrier phases [REC]: the calibration (:func:`calibration.profiles.ccnuma.model_values`) sums
the counts phase by phase with each phase's busiest controller as centre 0.  Barriers
keep phases apart in time, so a request queues only with requests of its own phase; a
hot spot that moves from phase to phase (GE's pivot row, on a new home every other
step) is then one centre that every phase loads, where a whole-run sum would spread
it over the homes and the model would miss the queue.  The same sums are kept per
group of like phases (``phases``: transactions per cycle, and the busiest controller's
share of the phase's controller cycles, each within a factor 1.5), and each group is
solved as its own network: a program that communicates in
bursts between quiet phases (FFT's transposes) queues in the bursts, which one sum
over the run averages away.  Execution time is then the groups' times summed, the
remote-read response their responses weighted by their remote reads.  ``node_demand``
(requester x node, not aligned) gives each node's utilisation (forced flow over the
run) and the hot node.

Everything else a transaction costs (network latency and gaps, and the work between
transactions) is the class's think time::

    Z[p] = (work[p] + stall[p] - queueing[p]) / transactions[p] - sum_k D[p][k]

with ``stall`` the cycles the processor waited and ``queueing`` the part of them
spent in input buffers, so with no queueing the model's cycle is the simulator's.
MVA then supplies the queueing: execution time = the processors' mean of
``transactions[p] * cycle[p]`` plus the measured barrier overhead (``imbalance``, the
simulated execution time less the processors' mean own time; the mean, because the
maximum picks whichever class the model overestimates most).  Remote-read response =
the simulated unloaded response per remote read (``read_fixed``) + the MVA wait per
visit at each centre times the visits a remote read makes there (``read_visits``).

Accuracy [REC]: the controllers serve in order with class-dependent, nearly constant
service; MVA treats them as processor sharing (the product form needs it), and with 64
classes ``auto`` picks an approximate MVA and says so in the message.  On the recorded
SPLASH-2 programs at 64 nodes (``docs/guide.md``) the remote-read response is within 15%
in 55 of 70 runs; bursts inside a phase (Water-Nsq's and Barnes's lock-protected
accumulations) queue more than MVA's random mixing assumes (15-23% low).

References
----------
S. A. M. Talbot and P. H. J. Kelly, "Stable performance for cc-NUMA using first-touch page
placement and reactive proxies", Imperial College London (1999), §1.3-§1.5.

See Also
--------
:mod:`calibration.sim.ccnuma` (the simulated machine), :mod:`calibration.profiles.ccnuma`
(visits and demands from a run, phase by phase), :mod:`calibration.studies.ccnuma` (the
findings against the paper and the model against the simulator).
"""
from __future__ import annotations

import numpy as np

from mva.errors import ModelError
from mva.result import is_unreliable
from mva.modelkind import ModelSolution, Parameter, ParameterisedModel, choice, real, real_list, table_list, timed

__all__ = ["CCNUMA", "PARAMETERS"]


def _matrix(name, value):
    rows = [real_list()(f"{name}[{i}]", r) for i, r in enumerate(value)] if isinstance(value, (list, tuple)) else None
    if not rows or len({len(r) for r in rows}) != 1 or len(rows[0]) != len(rows):
        raise ModelError(name, "must be a square list of lists (requesters x node controllers)")
    return tuple(rows)


#: The values each group of phases gives (``phases``): the per-class counts.
PHASE_KEYS = ("transactions", "work", "stall", "queueing", "visits", "demand", "remote_reads", "read_fixed",
              "read_visits")



PARAMETERS = (
    Parameter("transactions", (1.0,), "transactions", "memory transactions per processor", real_list()),
    Parameter("work", (0.0,), "cycles", "cycles of work per processor", real_list()),
    Parameter("stall", (0.0,), "cycles", "cycles each processor waited on its transactions", real_list()),
    Parameter("queueing", (0.0,), "cycles", "of which waiting in input buffers", real_list()),
    Parameter("visits", ((0.0,),), "visits", "node-controller services by requester (rows) and centre", _matrix),
    Parameter("demand", ((0.0,),), "cycles", "node-controller cycles by requester and centre", _matrix),
    Parameter("node_demand", (), "cycles", "node-controller cycles by requester and node (empty: demand)",
              lambda name, value: () if isinstance(value, (list, tuple)) and not value else _matrix(name, value)),
    Parameter("remote_reads", (0.0,), "reads", "remote reads per processor", real_list()),
    Parameter("read_fixed", (0.0,), "cycles", "mean remote-read response without queueing, per processor",
              real_list()),
    Parameter("read_visits", ((0.0,),), "visits", "controller services on remote reads' paths", _matrix),
    Parameter("imbalance", 0.0, "cycles", "barrier overhead: execution time less the processors' mean own time",
              real()),
    Parameter("phases", (), "", "groups of like barrier phases, each a table of the per-class "
              "counts above (transactions ... read_visits), solved one by one (empty: the run's phase sums)",
              table_list(PHASE_KEYS, "group of phases")),
    Parameter("nc_speed", 1.0, "x", "node-controller speed (2 halves every occupancy; 1e-6 to 1e6)", real(1e-6, 1e6)),
    Parameter("method", "auto", "", "MVA method: auto, exact, linearizer, schweitzer",
              choice("auto", "exact", "linearizer", "schweitzer"), role="solver"),
)


class CCNUMA(ParameterisedModel):
    """The model of the module docstring; values usually come from
    :func:`calibration.profiles.ccnuma.model_values`."""

    kind = "ccnuma"
    PARAMETERS = PARAMETERS

    def check(self):
        v = self.values
        P = len(v["transactions"])
        for k, phase in enumerate(v["phases"]):
            try:
                group = CCNUMA({**phase, "node_demand": ()})
            except ModelError as exc:
                raise ModelError(f"phases[{k}].{exc.field}", exc.problem) from None
            if len(group.values["transactions"]) != P:
                raise ModelError(f"phases[{k}]", f"needs {P} classes, as transactions")
        for name in ("work", "stall", "queueing", "remote_reads", "read_fixed"):
            if len(v[name]) != P:
                raise ModelError(name, f"needs {P} values (one per processor, as transactions), got {len(v[name])}")
        for name in ("visits", "demand", "read_visits") + (("node_demand",) if v["node_demand"] else ()):
            if len(v[name]) != P:
                raise ModelError(name, f"needs {P} x {P} values, got {len(v[name])} rows")

    def network(self, counts: dict | None = None):
        """The closed network: one class per processor, one centre per controller, from
        the run's phase sums or ``counts`` (one of ``phases``)."""
        from mva import Network, Station

        v = {**self.values, **(counts or {})}
        T = np.maximum(np.asarray(v["transactions"], float), 1.0)
        D = np.asarray(v["demand"], float) / T[:, None]
        Z = (np.asarray(v["work"], float) + np.asarray(v["stall"], float) - np.asarray(v["queueing"], float)) / T
        Z = np.maximum(Z - D.sum(axis=1), 0.0)
        D = D / v["nc_speed"]
        P = T.shape[0]
        # a processor with no transactions and no work (a kernel at more nodes than it has
        # rows to share) is idle: no customer, rather than one that cycles in no time
        busy = (D.sum(axis=1) > 0) | (Z > 0)
        if not busy.any():
            raise ModelError("transactions", "every processor is idle (no transactions, demand or work): a ccnuma "
                                             "file holds a simulator run's counts, as "
                                             "calibration.profiles.ccnuma.model_document writes them")
        stations = tuple(Station(f"nc{n}", "queue", tuple(float(x) for x in D[:, n]), discipline="ps")
                         for n in range(P))
        return Network(stations, classes=tuple(f"cpu{p}" for p in range(P)), population=tuple(busy.astype(int)),
                       think_time=tuple(float(z) for z in Z))

    @timed
    def solve(self) -> ModelSolution:
        v = self.values
        parts = [self._cycles(phase) for phase in v["phases"]] or [self._cycles(None)]
        own = sum(part[0] for part in parts)                         # cycles per processor
        execution = float(own.mean() + v["imbalance"])
        reads = sum(part[2] for part in parts)
        mean_response = float(sum((part[1] * part[2]).sum() for part in parts) / reads.sum()) if reads.sum() > 0 \
            else 0.0
        node_demand = np.asarray(v["node_demand"] if v["node_demand"] else v["demand"], float) / v["nc_speed"]
        util = (node_demand / np.maximum(own, 1e-300)[:, None]).sum(axis=0)   # forced flow, node by node
        hot = int(np.argmax(util))
        outputs = {"execution_cycles": execution, "remote_read_response_cycles": mean_response,
                   "hot_node": hot, "hot_node_utilization": float(util[hot]),
                   "utilization": {f"nc{n}": float(u) for n, u in enumerate(util)}}
        messages = list(dict.fromkeys(part[3] for part in parts if part[3]))
        message = "; ".join(messages) + (f" ({len(parts)} groups of phases)" if v["phases"] and messages else "")
        return ModelSolution(model=self.name or "ccnuma", kind=self.kind, outputs=outputs, message=message,
                             doubted=any(is_unreliable(part[3]) for part in parts),
                             units={"execution_cycles": "cycles", "remote_read_response_cycles": "cycles"})

    def _cycles(self, counts: dict | None):
        """MVA on the run's sums or one group of phases: (own cycles per processor, remote-
        read response per processor, its remote reads, the solver's accuracy note)."""
        from mva import solve

        v = {**self.values, **(counts or {})}
        T = np.maximum(np.asarray(v["transactions"], float), 1.0)
        net = self.network(counts)
        r = solve(net, method=v["method"])
        R = np.asarray(r.residence_time, float)                      # stations x classes, per cycle
        D = np.array([s.demand for s in net.stations], float)         # stations x classes
        V = np.asarray(v["visits"], float).T / T[None, :]             # visits per cycle
        wait = np.where(V > 0, (R - D) / np.maximum(V, 1e-300), 0.0)  # queueing per visit
        cycle = R.sum(axis=0) + np.asarray(net.think_time, float)
        reads = np.asarray(v["remote_reads"], float)
        per_read = np.asarray(v["read_visits"], float).T / np.maximum(reads, 1.0)[None, :]
        response = np.asarray(v["read_fixed"], float) + (per_read * wait).sum(axis=0)
        busy = np.asarray(net.population) > 0
        return np.where(busy, T * cycle, 0.0), response, reads, r.accuracy or ""
