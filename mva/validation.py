"""How far the analytic methods are from the systems they describe: MVA against the
discrete-event simulation (:mod:`mva.simulation`) on random networks, product form and not.

Variants of each random closed network (:func:`mva.random_networks.random_closed_network`):

``product form``
    As drawn (processor sharing, exponential service): MVA is exact, and the simulation's
    intervals must hold its values (the check of the simulation itself).
``FCFS, class-dependent``
    Every ``queue`` and ``multi`` station FCFS, demands as drawn (they differ by class):
    not product form; MVA solves it as processor sharing.
``FCFS, scv = s``
    Every ``queue`` FCFS with one demand for all classes (the class mean) and service-time
    variability ``scv = s``: MVA adds the residual-time term (Reiser 1979).

Run ``python -m mva.validation [--cases 40] [--events 400000]`` for the table; the notebook
``notebooks/model_validation.ipynb`` draws it.

The non-product-form suites (:func:`nonproduct_rows`): seeded random networks of each kind
of :data:`mva.random_networks.NONPRODUCT_KINDS` (priority stations; FCFS stations with
demands up to 20x apart; FCFS service with scv in {0, 0.25, 4, 9} at one to four servers),
each simulated to a relative precision and solved by ``auto`` (the non-product-form MVA of
:mod:`mva.nonproduct`) and as the project did before (processor sharing, exponential);
:func:`nonproduct_report` tabulates them by kind and load and audits the flags.
``benchmarks/accuracy_nonproduct.py`` runs them at full size.
"""
from __future__ import annotations

import dataclasses
import hashlib
import time
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .arguments import OneLineParser, nonnegative_int, positive_int
from .errors import ModelError, NumericalWarning
from .network import Network
from .random_networks import NONPRODUCT_KINDS, random_closed_network, random_nonproduct_network
from .simulation_settings import SimulationSettings
from .solve import solve

__all__ = ["VARIANTS", "variant", "compare", "study", "summary", "nonproduct_rows", "nonproduct_report",
           "evaluate_nonproduct", "as_product_form", "FLAG_BOUND", "HEAVY"]

VARIANTS = ("product form", "FCFS, class-dependent", "FCFS, scv = 0", "FCFS, scv = 0.5", "FCFS, scv = 4")


def variant(network: Network, name: str) -> Network:
    """``network`` changed as the variant ``name`` of :data:`VARIANTS` says."""
    if name == "product form":
        return network
    stations = []
    for s in network.stations:
        if name == "FCFS, class-dependent" and s.kind in ("queue", "multi"):
            s = dataclasses.replace(s, discipline="fcfs")
        elif name.startswith("FCFS, scv") and s.kind == "queue":
            demand = np.asarray(s.demand)
            common = float(demand[demand > 0].mean()) if np.any(demand > 0) else 0.0
            s = dataclasses.replace(s, discipline="fcfs", demand=tuple(np.where(demand > 0, common, 0.0)),
                                    scv=float(name.rsplit("=", 1)[1]))
        stations.append(s)
    return network.replace(stations=stations)


def compare(network: Network, events: int, seed: int, confidence: float = 0.95) -> pd.DataFrame:
    """One row per class with a closed population: MVA (``auto``) and simulated throughput
    and response time, the relative error of MVA, and whether the simulation's interval
    holds the MVA value."""
    with warnings.catch_warnings():     # an "unreliable" flag is kept in the accuracy column
        warnings.simplefilter("ignore", NumericalWarning)
        mva = solve(network, method="auto")
    sim = solve(network, method="simulation", events=events, seed=seed, confidence=confidence)
    rows = []
    for c, name in enumerate(network.classes):
        if network.population[c] == 0:
            continue
        row = {"class": name, "mva_method": mva.method, "accuracy": mva.accuracy}
        for measure in ("throughput", "response_time"):
            exact, value = float(getattr(mva, measure)[c]), float(getattr(sim, measure)[c])
            half = float(sim.half_width[measure][c])
            row.update({f"{measure}_mva": exact, f"{measure}_sim": value, f"{measure}_half_width": half,
                        f"{measure}_error": exact / value - 1.0, f"{measure}_covered": abs(exact - value) <= half})
        rows.append(row)
    return pd.DataFrame(rows)


def study(cases: int = 40, events: int = 400_000, seed: int = 0, variants=VARIANTS, progress=None) -> pd.DataFrame:
    """Every variant of ``cases`` seeded random networks (1-3 classes, 2-6 stations, at
    most 8 customers a class), each simulated for ``events`` events; one row per network,
    variant and class (see :func:`compare`)."""
    frames = []
    cases_iter = range(cases) if progress is None else progress(range(cases))
    for case in cases_iter:
        rng = np.random.default_rng(seed + case)
        base = random_closed_network(rng, int(rng.integers(1, 4)), int(rng.integers(2, 7)), max_population=8)
        for name in variants:
            frame = compare(variant(base, name), events, seed=seed + case)
            frame.insert(0, "variant", name)
            frame.insert(0, "case", case)
            frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per variant: mean and largest |MVA / simulation - 1| of throughput and response
    time (percent), the share of simulation intervals holding the MVA value, the mean
    relative half-width (the simulation's own noise), and the share of MVA results
    flagged ``unreliable``."""
    out = []
    for name, group in rows.groupby("variant", sort=False):
        entry = {"variant": name, "classes": len(group)}
        for measure, short in (("throughput", "X"), ("response_time", "R")):
            error = 100 * group[f"{measure}_error"].abs()
            entry[f"{short} mean err %"] = error.mean()
            entry[f"{short} max err %"] = error.max()
            entry[f"{short} in CI %"] = 100 * group[f"{measure}_covered"].mean()
        entry["sim ± %"] = 100 * (group["throughput_half_width"] / group["throughput_sim"]).mean()
        entry["unreliable %"] = 100 * group["accuracy"].str.startswith("unreliable").mean()
        out.append(entry)
    return pd.DataFrame(out).set_index("variant")


# --- the non-product-form suites (issue #36): priority, FCFS with class-dependent
# service, non-exponential service; ``benchmarks/accuracy_nonproduct.py`` runs them at
# full size, ``notebooks/model_validation.ipynb`` at a small one.

#: Largest class-throughput error (relative) a result may have without being flagged.
FLAG_BOUND = 0.05
#: Busiest-station utilisation that separates light from heavy load.
HEAVY = 0.8
#: Slack on the simulation's precision before a row counts as short of it (the last
#: batch's rounding).
PRECISION_SLACK = 1.02
#: Most events one network's simulation may take (about 10 s here): a class starved by
#: priority needs far more to reach the precision, and its row says what it reached.
MAX_EVENTS = 50_000_000


def as_product_form(network):
    """The network as the project solved it before: FCFS and priority as processor
    sharing, service exponential."""
    return network.replace(stations=[
        dataclasses.replace(s, discipline="ps", priority=None, scv=1.0) if s.kind in ("queue", "multi") else s
        for s in network.stations])


def _relative(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    keep = b > 0
    return np.abs(a[keep] - b[keep]) / b[keep]


class _Truth:
    """The simulated measures the study compares with (also as read back from the cache)."""

    def __init__(self, throughput, response_time, utilization, half_width, seconds):
        self.throughput, self.response_time, self.utilization = throughput, response_time, utilization
        self.half_width, self.seconds = half_width, seconds


def simulated(network, index, seed, precision, cache, max_events=MAX_EVENTS):
    """The network simulated to ``precision``, or read from ``cache`` (a folder) when it
    was simulated before with the same seed and precision."""
    path = None
    if cache:
        path = Path(cache) / f"{network_key(network)}-{seed}-{index}-{precision:g}.npz"
        if path.exists():
            z = np.load(path)
            return _Truth(z["x"], z["r"], z["u"], float(z["hw"]), float(z["s"]))
    start = time.perf_counter()
    result = solve(network, "simulation", seed=1000 + index, precision=precision, target="response_time",
                   max_events=max_events)
    truth = _Truth(result.throughput, result.response_time, result.station_utilization(),
                   float(np.max(result.half_width["response_time"] / result.response_time)),
                   time.perf_counter() - start)
    if path is not None:
        np.savez(path, x=truth.throughput, r=truth.response_time, u=truth.utilization, hw=truth.half_width,
                 s=truth.seconds)
    return truth


def network_key(network) -> str:
    """A short digest of a network's description (cache file names)."""
    text = repr([(s.kind, s.demand, s.servers, s.discipline, s.priority, s.scv) for s in network.stations]) + \
        repr((network.population, network.think_time))
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def evaluate_nonproduct(job):
    """One network: simulation, the new method and the old treatment; a row of errors."""
    kind, index, network, precision, seed, cache, max_events = job
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        truth = simulated(network, index, seed, precision, cache, max_events)
        new = solve(network, "auto")
        old = solve(as_product_form(network), "auto")
        linearizer = new if new.method == "linearizer" else solve(network, "linearizer")
    x_err = _relative(new.throughput, truth.throughput)
    lin_err = _relative(linearizer.throughput, truth.throughput)
    r_err = _relative(new.response_time, truth.response_time)
    return {"kind": kind, "index": index, "classes": network.n_classes, "stations": network.n_stations,
            "population": int(np.sum(network.population)),
            "busiest": float(max(u for s, u in zip(network.stations, truth.utilization, strict=True)
                                 if s.kind != "delay")),
            "x_mean": float(x_err.mean()), "x_max": float(x_err.max()),
            "r_mean": float(r_err.mean()), "r_max": float(r_err.max()),
            "old_x_max": float(_relative(old.throughput, truth.throughput).max()),
            "old_x_mean": float(_relative(old.throughput, truth.throughput).mean()),
            "old_r_mean": float(_relative(old.response_time, truth.response_time).mean()),
            "old_r_max": float(_relative(old.response_time, truth.response_time).max()),
            "flagged": new.accuracy.startswith("unreliable") or not new.converged,
            "method": new.method, "partial": bool(new.extras.get("left_out")),
            "lin_x_mean": float(lin_err.mean()), "lin_x_max": float(lin_err.max()),
            "lin_flagged": linearizer.accuracy.startswith("unreliable") or not linearizer.converged,
            "order_span": float(new.extras.get("order_span", 0.0)),
            "sim_half_width": truth.half_width, "sim_seconds": truth.seconds, "solve_seconds": new.solve_seconds}


def nonproduct_jobs(count, seed, precision, kinds=NONPRODUCT_KINDS, cache=None, partial_only=False):
    """The suites' networks: ``count`` of each kind drawn from ``seed`` (one stream per
    kind, so a kind's networks do not depend on the others'), as :func:`evaluate` takes them;
    ``partial_only``: only those whose whole Markov chain exceeds ``auto``'s limit (or
    whose non-product-form stations do not follow one another), which ``auto`` decomposes
    with a partial chain (:mod:`mva.decomposition`) where one fits."""
    from .auto import DECOMPOSITION_STATES
    from .decomposition import decomposition_refusal

    for kind in kinds:
        rng = np.random.default_rng([seed, NONPRODUCT_KINDS.index(kind)])
        for i in range(count):
            network = random_nonproduct_network(rng, kind)
            if not partial_only or decomposition_refusal(network, DECOMPOSITION_STATES, partial=False) is not None:
                yield kind, i, network, precision, seed, cache


def nonproduct_report(rows: pd.DataFrame, precision: float = 0.005) -> str:
    """The study's tables as text; ``precision``: the relative 95% half-width the
    simulations were asked for (as :func:`nonproduct_rows` took it)."""
    rows = rows.assign(load=np.where(rows.busiest >= HEAVY, f">= {HEAVY}", f"< {HEAVY}"))
    lines = ["class throughput and response time against simulation, % (mean / max); old = processor "
             "sharing, exponential service", "",
             f"{'kind':9s} {'load':7s} {'nets':>5s} {'X new':>13s} {'R new':>13s} {'X old':>13s} {'R old':>13s}"]
    def pair(g, mean, worst):
        """Mean over every class of every network, and the largest."""
        return f"{100 * np.average(g[mean], weights=g['classes']):5.2f} / {100 * g[worst].max():5.1f}"

    for (kind, load), g in list(rows.groupby(["kind", "load"])) + [((k, "all"), g) for k, g in rows.groupby("kind")]:
        lines.append(f"{kind:9s} {load:7s} {len(g):5d} {pair(g, 'x_mean', 'x_max'):>13s} "
                     f"{pair(g, 'r_mean', 'r_max'):>13s} {pair(g, 'old_x_mean', 'old_x_max'):>13s} "
                     f"{pair(g, 'old_r_mean', 'old_r_max'):>13s}")
    lines += ["", "by the method auto ran (decomposition where its Markov chain fits, else non-product-form MVA):"]
    for (kind, method), g in rows.groupby(["kind", "method"]):
        lines.append(f"{kind:9s} {method:14s} {len(g):5d} nets  X {pair(g, 'x_mean', 'x_max')}  "
                     f"R {pair(g, 'r_mean', 'r_max')}")
    partial = rows[rows.partial] if "partial" in rows else rows.iloc[:0]
    for kind, g in partial.groupby("kind"):
        lines.append(f"{kind:9s} partial chains {len(g):3d} nets  X {pair(g, 'x_mean', 'x_max')}, "
                     f"{int((g.x_max > FLAG_BOUND).sum())} beyond {100 * FLAG_BOUND:g}% "
                     f"({int((g.flagged & (g.x_max > FLAG_BOUND)).sum())} flagged); the same by Linearizer (auto "
                     f"before) X {pair(g, 'lin_x_mean', 'lin_x_max')}, {int((g.lin_x_max > FLAG_BOUND).sum())} beyond "
                     f"({int((g.lin_flagged & (g.lin_x_max > FLAG_BOUND)).sum())} flagged)")
    lines += ["", f"flagging audit (worst class throughput > {100 * FLAG_BOUND:g}%):"]
    for kind, g in rows.groupby("kind"):
        beyond = g[g.x_max > FLAG_BOUND]
        clean = g[~g.flagged]
        within = g[g.x_max <= FLAG_BOUND]
        lines.append(f"{kind:9s} {len(beyond)} beyond, {int(beyond.flagged.sum())} of them flagged; "
                     f"{int(within.flagged.sum())} of the {len(within)} within flagged; the {len(clean)} unflagged: X "
                     f"{pair(clean, 'x_mean', 'x_max') if len(clean) else '-'}, R "
                     f"{pair(clean, 'r_mean', 'r_max') if len(clean) else '-'}")
    short = rows[rows.sim_half_width > precision * PRECISION_SLACK]
    reached = f"simulation: {len(rows) - len(short)} of {len(rows)} networks to +-{100 * precision:g}% or better " \
              "(every class's response time, 95%)"
    if len(short):
        reached += f"; the other {len(short)} stopped at the event cap with up to " \
                   f"{100 * short.sim_half_width.max():.3g}% (their starved classes)"
    lines.append(f"{reached}; {rows.sim_seconds.sum():.0f} s in all")
    return "\n".join(lines)


def nonproduct_rows(count: int = 300, seed: int = 2036, precision: float = 0.005, kinds=NONPRODUCT_KINDS,
                   cache: str | None = None, workers: int = 1, max_events: int = MAX_EVENTS,
                   partial_only: bool = False) -> pd.DataFrame:
    """One row per network of the non-product-form suites (:func:`evaluate_nonproduct`):
    ``count`` networks of each kind in ``kinds`` (``partial_only``: of those, the ones
    :func:`nonproduct_jobs` says need partial chains), simulated to ``precision``
    (relative 95% half-width of every class's response time) or ``max_events``, on
    ``workers`` processes; ``cache``, a folder, keeps the simulations for reruns."""
    jobs = [(*job, max_events) for job in nonproduct_jobs(count, seed, precision, kinds, cache, partial_only)]
    if workers <= 1:
        return pd.DataFrame([evaluate_nonproduct(job) for job in jobs])
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers) as pool:
        return pd.DataFrame(pool.map(evaluate_nonproduct, jobs, chunksize=4))


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m mva.validation",
                           description="MVA against simulation on random networks, product form and not")
    parser.add_argument("--cases", type=positive_int, default=40, help="random networks (default 40)")
    parser.add_argument("--events", type=positive_int, default=400_000,
                        help="simulated events per network (default 400,000)")
    parser.add_argument("--seed", type=nonnegative_int, default=0, help="first seed (default 0)")
    args = parser.parse_args(argv)
    from tqdm.auto import tqdm

    try:
        try:
            SimulationSettings(events=args.events)          # checked before the first network
        except ModelError as exc:
            raise ModelError("--events", exc.problem) from None
        table = summary(study(args.cases, args.events, args.seed, progress=tqdm))
    except ModelError as exc:
        print(f"{parser.prog}: {exc}", file=sys.stderr)
        return 2
    with pd.option_context("display.width", 140, "display.float_format", "{:.2f}".format):
        print(f"MVA vs simulation, {args.cases} random closed networks, {args.events:,} events each, "
              "95% intervals\n")
        print(table.to_string())
    return 0


if __name__ == "__main__":  # pragma: no cover
    from mva.output import exit_with

    exit_with(main, "python -m mva.validation")
