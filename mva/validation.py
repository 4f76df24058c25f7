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
"""
from __future__ import annotations

from .arguments import OneLineParser
import dataclasses
import warnings

import numpy as np
import pandas as pd

from .errors import NumericalWarning
from .network import Network
from .random_networks import random_closed_network
from .solve import solve

__all__ = ["VARIANTS", "variant", "compare", "study", "summary"]

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


def main(argv=None) -> int:
    parser = OneLineParser(description="MVA against simulation on random networks, product form and not")
    parser.add_argument("--cases", type=int, default=40, help="random networks (default 40)")
    parser.add_argument("--events", type=int, default=400_000, help="simulated events per network (default 400,000)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    args = parser.parse_args(argv)
    from tqdm.auto import tqdm

    table = summary(study(args.cases, args.events, args.seed, progress=tqdm))
    with pd.option_context("display.width", 140, "display.float_format", "{:.2f}".format):
        print(f"MVA vs simulation, {args.cases} random closed networks, {args.events:,} events each, "
              "95% intervals\n")
        print(table.to_string())
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
