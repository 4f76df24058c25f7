"""Customised MVA of a snooping shared-bus multiprocessor.

Processors are the customers of a closed network (after the customised-MVA treatment of
snooping protocols, Vernon, Lazowska & Zahorjan, ISCA 1988): each computes for
``cpu_cycles`` per memory reference and, every 1/r_s references, issues a bus
transaction that stalls it (a load or fetch miss) and waits for it.  Transactions that do
not stall (stores through the store buffer, write-backs; r_a per reference) still occupy
the FCFS bus.  With n processors, an arriving stalling transaction waits for

    W(n) = [(Q(n-1) - U(n-1)) S + b U(n-1) S2/(2S) + b U_a(n) Sa2/(2Sa)] / (1 - U_a(n))

cycles: the stalling transactions queued ahead (arrival theorem, Reiser & Lavenberg
1980), the residual life of the one in service (second moment S2 of the cost), and the
non-stalling work, which shares the FCFS queue and so is inflated by 1/(1 - U_a)
(mixed-network form).  Then X(n) = n / (Z + S + W(n)) with Z = cpu_cycles / r_s, solved
as a fixed point in X(n) because U_a(n) = X(n) r_a/r_s Sa, and capped where the bus is
busy all the time (X (S + D_a) = 1), which the arrival-theorem approximation does not
ensure by itself once non-stalling work is added.  GSP = X(P) cpu_cycles / r_s
(references per cycle times cycles per reference).  With ``service = "exponential"``
(S2 = 2S^2), no non-stalling work and ``bus.residual_factor`` b = 1 this is exact MVA of
a delay plus a queue.

The residual factor b scales the residual work an arrival finds, as the arrival
variability (c_a^2 + c_s^2)/2 of Kingman's G/G/1 approximation would: misses that come in
bursts (after context switches) find more work in progress than the arrival theorem says.
It scales only the residual terms, so the bus still saturates at X (S + D_a) = 1.
:func:`calibration.profiles.shared_bus.profile_from_runs` fits it to the simulator's GSP at the
calibration runs.

The bus work per reference changes with the processor count (more sharing, more
migration): the ``profile.*`` lists give it at the counts in ``profile.cpus`` (e.g.
simulator runs at 2 and 8 processors).  Transaction rates at other counts are
interpolated (linearly in processors, in log(processors) or as a power law) and
extrapolated along the end segments.  The mean costs follow from the same assumption
(``profile.costs = "mix"``, default): if every transaction type's rate follows the scale,
so do the bus cycles per reference (rate x mean cost) and rate x second moment, since each
type has a fixed cost (Foglia et al. 2004, Table 4); the mean cost is their ratio.  ``held`` instead
interpolates the costs and holds them at the measured ends.

Validation (``python -m calibration.studies.shared_bus``: 26 M references, calibrated at 2 and 8
processors, predicting 1-16, MESI/AMSD/PSCR, random and affinity scheduling, 96 cases per
workload), GSP error mean / max:

==========================================  ===========  ============  ============
variant                                     EC-server    Web-server    DB
==========================================  ===========  ============  ============
linear, mix, fitted b (default) [REC]       1.5% / 6.7%  1.1% / 6.6%   3.5% / 15.1%
linear, held, fitted b                      2.1% / 12.2% 1.0% / 6.8%   3.3% / 10.6%
linear, held, b = 1 (the previous default)  2.2% / 11.1% 2.6% / 10.5%  3.0% / 10.6%
power, mix, fitted b                        4.3% / 21.3% 4.7% / 24.6%  2.4% / 8.6%
==========================================  ===========  ============  ============

With each count's own bus work (no extrapolation) the fitted b keeps the model within
3.7% of the simulator on EC-server; the rest of the error is the extrapolation of the
bus work, which two counts cannot pin down (DB's worst case, PSCR with affinity at 16
processors, has its bus saturated already at 8).

The default bus service is exponential (product form).  The ``measured`` option uses the
residual life from the second moment of the cost; with b fitted the two differ little.

References
----------
M. K. Vernon, E. D. Lazowska and J. Zahorjan, "An accurate and efficient performance
analysis technique for multiprocessor snooping cache-consistency protocols", ISCA 1988;
P. Foglia, R. Giorgi and C. A. Prete, "Simulation study of memory performance of SMP
multiprocessors running a TPC-W workload", IEE Proc. Computers and Digital Techniques
(2004) (the machine and its GSP).

See Also
--------
:mod:`calibration.sim.bus` (the simulated machine), :mod:`calibration.profiles.shared_bus`
(the bus-work profile from its runs), :mod:`calibration.studies.shared_bus` (the model
against the simulator), :mod:`models.bus_simulation` (the model's own machine, simulated).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from mva.errors import ModelError
from mva.simulation_settings import SimulationSettings, chosen_settings
from mva.modelkind import ModelSolution, Parameter, ParameterisedModel, choice, integer, integer_list, real, real_list, \
    timed
from mva.jit import clock, seconds_since

__all__ = ["SharedBus", "PARAMETERS", "solve_shared_bus", "interpolate"]

PARAMETERS = (
    Parameter("cpus", 8, "processors", "processors on the bus", integer(1, 4096)),
    Parameter("cpu_cycles", 5.0, "cycles/reference", "processor cycles per memory reference when it hits",
              real(0.0, strict=True)),
    Parameter("profile.cpus", [8], "processors", "processor counts at which the bus work below was measured",
              integer_list(1)),
    Parameter("profile.sync_rate", [0.01], "1/reference", "stalling bus transactions per reference",
              real_list(0.0, strict=True)),
    Parameter("profile.sync_cycles", [80.0], "cycles", "mean cost of a stalling transaction", real_list(0.0, strict=True)),
    Parameter("profile.sync_second_moment", [6400.0], "cycles^2", "second moment of the stalling cost",
              real_list(0.0)),
    Parameter("profile.async_rate", [0.0], "1/reference", "non-stalling bus transactions per reference",
              real_list(0.0)),
    Parameter("profile.async_cycles", [0.0], "cycles", "mean cost of a non-stalling transaction", real_list(0.0)),
    Parameter("profile.async_second_moment", [0.0], "cycles^2", "second moment of the non-stalling cost",
              real_list(0.0)),
    Parameter("service", "exponential", "", "bus service: exponential (product form; default) or measured "
              "(residual life from the second moment of the cost)", choice("exponential", "measured")),
    Parameter("bus.residual_factor", 1.0, "factor", "multiplies the residual service time an arriving "
              "transaction waits for (1 = the model as derived; above 1 for arrivals burstier than the "
              "arrival theorem assumes)", real(0.0)),
    Parameter("profile.costs", "mix", "", "mean costs beyond and between the measured counts: mix (each "
              "transaction type's rate follows profile.scale, so the bus cycles per reference rate x cost do "
              "too, and the cost is their ratio) or held (interpolated, held at the measured ends)",
              choice("mix", "held")),
    Parameter("profile.scale", "linear", "", "interpolate the transaction rates linearly in processors "
              "(linear), in log(processors) (log), or as a power law (power)", choice("linear", "log", "power")),
)

PROFILE = ("sync_rate", "sync_cycles", "sync_second_moment", "async_rate", "async_cycles", "async_second_moment")


def interpolate(x: float, xs, ys, scale: str = "linear") -> float:
    """Piecewise-linear in x (``linear``), in log x (``log``) or in log x and log y
    (``power``: y = a x^b piecewise; values <= 0 fall back to ``log``) through (xs, ys),
    extrapolated along the end segments; a single point is a constant."""
    power = scale == "power"
    if scale in ("log", "power"):
        x, xs = math.log(x), np.log(np.asarray(xs, dtype=float))
    xs = np.asarray(xs, dtype=float)
    ys = np.asarray(ys, dtype=float)
    if power:                 # straight lines in log-log: y = a x^b between and beyond the points
        if np.any(ys <= 0):
            return interpolate(math.exp(x), np.exp(xs), ys, "log")
        return math.exp(interpolate(math.exp(x), np.exp(xs), np.log(ys), "log"))
    order = np.argsort(xs)
    xs, ys = xs[order], ys[order]
    if len(xs) == 1:
        return float(ys[0])
    k = int(np.clip(np.searchsorted(xs, x) - 1, 0, len(xs) - 2))
    return float(ys[k] + (ys[k + 1] - ys[k]) * (x - xs[k]) / (xs[k + 1] - xs[k]))


def solve_shared_bus(cpus: int, cpu_cycles: float, sync_rate: float, sync_cycles: float, sync_m2: float,
                     async_rate: float = 0.0, async_cycles: float = 0.0, async_m2: float = 0.0,
                     residual_factor: float = 1.0) -> dict:
    """The recursion of the module docstring for n = 1..cpus; returns the measures at
    ``cpus`` (throughput in references per cycle, cycles per reference)."""

    z = cpu_cycles / sync_rate
    s = sync_cycles
    res_s = residual_factor * sync_m2 / (2 * s) if s > 0 else 0.0
    d_a = async_rate / sync_rate * async_cycles          # non-stalling bus cycles per stalling transaction
    res_a = residual_factor * async_m2 / (2 * async_cycles) if async_cycles > 0 else 0.0
    q_prev = u_prev = 0.0
    x = w = 0.0
    for n in range(1, cpus + 1):
        closed_work = (q_prev - u_prev) * s + u_prev * res_s

        def waiting(x_n, closed_work=closed_work):
            u_a = x_n * d_a
            return (closed_work + u_a * res_a) / (1.0 - u_a)

        # the bus cannot be busier than all the time: X (S + D_a) <= 1
        x_hi = min(n / (z + s), 1.0 / (s + d_a))
        if d_a > 0:
            x_hi = min(x_hi, (1.0 - 1e-12) / d_a)
        g = lambda x_n, n=n: x_n - n / (z + s + waiting(x_n))  # noqa: E731
        if g(x_hi) > 0:
            x = brentq(g, 0.0, x_hi, xtol=1e-15, rtol=1e-13)
            w = waiting(x)
        else:        # the bus is saturated: the waiting is what the response-time law leaves
            x = x_hi
            w = n / x - z - s
        q_prev = x * (s + w)
        u_prev = x * s
    refs = x / sync_rate
    return {"throughput": refs, "gsp": refs * cpu_cycles, "processor_utilization": refs * cpu_cycles / cpus,
            "bus_utilization": x * (s + d_a), "stall_per_reference": sync_rate * (s + w),
            "response_time": cpu_cycles + sync_rate * (s + w), "bus_waiting": w,
            "bus_queue": q_prev}


#: Units of the outputs (the model works in processor cycles).
OUTPUT_UNITS = {"gsp": "processors", "throughput": "references/cycle", "stall_per_reference": "cycles",
                "response_time": "cycles/reference"}


class SharedBus(ParameterisedModel):
    """Model kind ``shared_bus`` (see the module docstring).  Outputs: ``gsp``,
    ``throughput`` (references per cycle), ``processor_utilization`` (mean),
    ``bus_utilization``, ``stall_per_reference`` and ``response_time`` (cycles per
    reference), ``utilization`` {bus, cpu}."""

    kind = "shared_bus"
    main_output = "gsp"

    PARAMETERS = PARAMETERS

    def check(self) -> None:
        n = len(self.values["profile.cpus"])
        for key in PROFILE:
            if len(self.values[f"profile.{key}"]) != n:
                raise ModelError(f"profile.{key}", f"needs one value per profile.cpus entry ({n}), "
                                                   f"got {len(self.values[f'profile.{key}'])}")
        if len(set(self.values["profile.cpus"])) != n:
            raise ModelError("profile.cpus", "processor counts must be distinct")

    def inputs_at(self, cpus: int) -> dict:
        """Bus work per reference at ``cpus`` processors (interpolated from the profile)."""
        v = self.values
        xs = v["profile.cpus"]
        lo, hi = min(xs), max(xs)
        scale = v["profile.scale"]
        out = {}
        for label in ("sync", "async"):
            rates = v[f"profile.{label}_rate"]
            rate = out[f"{label}_rate"] = interpolate(cpus, xs, rates, scale)
            for moment in ("cycles", "second_moment"):
                measured = v[f"profile.{label}_{moment}"]
                if v["profile.costs"] == "mix" and rate > 0:
                    # each transaction type's rate on the scale: so is the sum of rate x cost^k
                    # over types, and the mean cost is that sum over the total rate
                    per_reference = [r * m for r, m in zip(rates, measured, strict=False)]
                    out[f"{label}_{moment}"] = interpolate(cpus, xs, per_reference, scale) / rate
                else:                   # held at the ends of the measured range
                    out[f"{label}_{moment}"] = interpolate(min(max(cpus, lo), hi), xs, measured, "linear")
        for k in ("sync_rate", "sync_cycles"):
            if out[k] <= 0:
                raise ModelError(f"profile.{k}", f"extrapolates to {out[k]:.3g} at {cpus} processors; "
                                                 "profile closer counts")
        for k in ("async_rate", "async_cycles", "sync_second_moment", "async_second_moment"):
            out[k] = max(out[k], 0.0)
        # a second moment below the squared mean is impossible; keep it consistent
        out["sync_second_moment"] = max(out["sync_second_moment"], out["sync_cycles"] ** 2)
        out["async_second_moment"] = max(out["async_second_moment"], out["async_cycles"] ** 2)
        if v["service"] == "exponential":
            out["sync_second_moment"] = 2 * out["sync_cycles"] ** 2
            out["async_second_moment"] = 2 * out["async_cycles"] ** 2
        return out

    @timed
    def solve(self) -> ModelSolution:
        cpus = self.values["cpus"]
        i = self.inputs_at(cpus)
        r = solve_shared_bus(cpus, self.values["cpu_cycles"], i["sync_rate"], i["sync_cycles"],
                             i["sync_second_moment"], i["async_rate"], i["async_cycles"], i["async_second_moment"],
                             self.values["bus.residual_factor"])
        outputs = {"gsp": r["gsp"], "throughput": r["throughput"],
                   "processor_utilization": r["processor_utilization"], "bus_utilization": r["bus_utilization"],
                   "stall_per_reference": r["stall_per_reference"], "response_time": r["response_time"],
                   "utilization": {"bus": r["bus_utilization"], "cpu": r["processor_utilization"]}}
        if not all(math.isfinite(v) for v in (r["gsp"], r["bus_utilization"])):
            raise ModelError("profile", "the bus work gives no finite solution")
        return ModelSolution(model=self.name or "shared_bus", kind=self.kind, outputs=outputs, units=OUTPUT_UNITS)

    #: Run settings of :meth:`simulate` (``precision`` on the GSP when given).
    SIMULATION = SimulationSettings(events=400_000, max_events=40_000_000, target="progress")

    def simulate(self, settings: SimulationSettings | None = None, **options) -> ModelSolution:
        """Simulate the machine the recursion approximates (:mod:`models.bus_simulation`):
        ``cpus`` processors computing for exponential times of mean cpu_cycles / r_s
        between stalling transactions, each an FCFS bus service of the profile's mean
        and second moment (as scv: gamma below exponential, hyperexponential above),
        while non-stalling transactions leave each computing processor at rate
        r_a / cpu_cycles per cycle.  ``bus.residual_factor`` has no part in it: it fits
        burstiness the machine with these inputs does not have.  The same outputs as
        :meth:`solve`, with ``half_width``; ``settings`` default to :attr:`SIMULATION`
        and ``options`` change its fields (``precision`` is on the gsp).
        """
        from ..bus_simulation import BusMachine, simulate_bus_machine

        started = clock()
        cpus, cycles = self.values["cpus"], self.values["cpu_cycles"]
        i = self.inputs_at(cpus)
        scv = lambda mean, m2: m2 / mean ** 2 - 1.0 if mean > 0 else 1.0     # noqa: E731
        machine = BusMachine(cpus, cycles / i["sync_rate"], ((0, i["sync_cycles"],
                                                              scv(i["sync_cycles"], i["sync_second_moment"])),),
                             1, posted_rate=i["async_rate"] / cycles, posted_mean=i["async_cycles"],
                             posted_scv=scv(i["async_cycles"], i["async_second_moment"]))
        # posted work leaves only computing processors, so a bus it floods stalls them too:
        # the machine always has a steady state
        settings = chosen_settings(settings, self.SIMULATION, **options)
        est = simulate_bus_machine(machine, settings)
        gsp, gsp_h = float(est.mean["progress"][0]), float(est.half["progress"][0])
        bus, bus_h = float(est.mean["utilization"][0]), float(est.half["utilization"][0])
        stall = i["sync_rate"] * float(est.mean["latency"][0])
        stall_h = i["sync_rate"] * float(est.half["latency"][0])
        outputs = {"gsp": gsp, "throughput": gsp / cycles, "processor_utilization": gsp / cpus,
                   "bus_utilization": bus, "stall_per_reference": stall, "response_time": cycles + stall,
                   "utilization": {"bus": bus, "cpu": gsp / cpus}}
        half = {"gsp": gsp_h, "throughput": gsp_h / cycles, "processor_utilization": gsp_h / cpus,
                "bus_utilization": bus_h, "stall_per_reference": stall_h, "response_time": stall_h,
                "utilization": {"bus": bus_h, "cpu": gsp_h / cpus}}
        message = f"simulation: {est.how}" + ("" if est.reached else f"; precision {settings.precision:g} not reached")
        return ModelSolution(model=self.name or "shared_bus", kind=self.kind, outputs=outputs, units=OUTPUT_UNITS,
                             converged=est.reached, iterations=est.spent, message=message,
                             solve_seconds=seconds_since(started), half_width=half,
                             confidence_level=settings.confidence, extras={"events": est.spent,
                                                                           "seed": int(settings.seed)})
