"""The TPC-C model against the simulated machine, for the paper's configurations C1-C9.

Du & Zhang (JPDC 2001, section 4, Fig. 6) found their model within 11.2% of their
simulation of the machine, always above it.  ``python -m models.tpcc_smp.validation``
does the same with our model and our simulator (:mod:`models.tpcc_smp.simulation`), from
the same parameters: per configuration the model's tpmC and device utilisations, the
simulated ones with their confidence half-widths, and the model's error; then the mean
and largest tpmC error.  ``--cpu-centre model`` simulates with the model's own CPU
centre (its Norton-aggregated rate function given as ``cpu.rate``) instead of explicit
processors, which separates the error of the CPU centre from that of the I/O equations.

``--what-ifs`` compares the effects instead (:func:`what_if_effects`): for each of the
paper's what-ifs (:data:`WHAT_IFS`: disk rotation, seek and transfer times, memory
latency, I/O bus latency, a second I/O bus, allocation E, one to two and two to four
CPUs) the model's change of tpmC beside the machine's, the machine's measured in paired
replications (base and what-if with the same seed, ``--replications`` seeds) with its 95%
interval; a what-if agrees when the model's effect lies in that interval or within 25% of
the machine's effect.

Options: ``--set NAME=VALUE`` (every case, e.g. ``--set model.inputs=table6``),
``--precision`` (relative half-width of the simulated tpmC at 95%, default 0.01),
``--seed``, ``--files TEMPLATE`` (each configuration from a model file, e.g.
``data/tpcc/c{n}-postgres.toml`` for the inputs traced from PostgreSQL), ``--format text|json``.
"""
from __future__ import annotations

from mva.arguments import OneLineParser, nonnegative_int, open_fraction, positive_int
import json
import sys

import numpy as np
import pandas as pd

from mva.errors import ModelError
from mva.modelkind import flatten, parse_assignments

from . import data
from .model import TPCCSMP

__all__ = ["validate", "summary", "main", "CONFIGURATIONS", "SEED_ERROR", "WHAT_IFS", "what_if_effects"]

CONFIGURATIONS = tuple(f"C{i}" for i in range(1, 10))
#: The paper's largest model-vs-simulation difference (section 4, Fig. 6).
SEED_ERROR = 0.112


def configuration_values(cfg: str, files: str | None = None) -> dict:
    """Configuration ``cfg``'s values: Table 9's, or the model file ``files`` names with
    ``{n}`` replaced by its number (``data/tpcc/c{n}-postgres.toml``)."""
    if files is None:
        return data.configuration_values(cfg)
    if "{n}" not in files:
        raise ModelError("--files", f"must contain {{n}} for the configuration's number, got {files!r}")
    from mva.files import read_document
    from mva.modelkind import resolve_document

    path = files.replace("{n}", cfg[1:])
    try:
        doc = read_document(path)
    except OSError as exc:
        raise ModelError("--files", f"cannot read {path} ({exc.strerror})") from None
    _, _, values = resolve_document(doc)
    return values


def validate(configurations=CONFIGURATIONS, overrides: dict | None = None, precision: float = 0.01,
             seed: int = 1, events: int = 400_000, cpu_centre: str = "explicit",
             files: str | None = None) -> pd.DataFrame:
    """One row per configuration and output (``tpmC``, ``utilization.cpu``, ...) that both
    the model and the machine have: ``model``, ``simulation``, ``half_width`` (95%),
    ``error`` (model / simulation - 1), ``within`` (the model inside the interval).
    ``files``: take each configuration from a model file (see :func:`configuration_values`)."""
    if cpu_centre not in ("explicit", "model"):
        raise ModelError("cpu_centre", f"must be explicit or model, got {cpu_centre!r}")
    rows = []
    for cfg in configurations:
        values = {**configuration_values(cfg, files), **(overrides or {})}
        model = TPCCSMP.from_values(values, name=cfg)
        solved = flatten(model.solve().outputs)
        if cpu_centre == "model":
            model = model.replace(cpu__rate=tuple(model.cpu_rate_function()))
        sim = model.simulate(seed=seed, events=events, precision=precision)
        simulated, half = flatten(sim.outputs), flatten(sim.half_width)
        for name, value in simulated.items():
            if name not in solved:
                continue
            m = solved[name]
            rows.append({"configuration": cfg, "output": name, "model": m, "simulation": value,
                         "half_width": half[name], "error": m / value - 1.0 if value else np.nan,
                         "within": abs(m - value) <= half[name], "converged": sim.converged,
                         "transactions": sim.extras["transactions"]})
    return pd.DataFrame(rows)


_C2, _C3 = data.configuration_values("C2"), data.configuration_values("C3")

#: The paper's what-ifs as (name, base case, changed cases): the effect is the changed
#: case's tpmC over the base's, less one; several changed cases (allocation E against the
#: best of A-D) give the first over the best of the rest.
WHAT_IFS = (
    ("rotation latency -40% (C2)", _C2, ({**_C2, "disk.rotation_latency": 0.9e6},)),
    ("seek time -40% (C2)", _C2, ({**_C2, "disk.seek_time": 0.6e6},)),
    ("transfer time -40% (C2)", _C2, ({**_C2, "disk.transfer_time": 25200.0},)),
    ("memory latency 100 -> 50 (C2)", _C2, ({**_C2, "memory.latency": 50.0, "memory_bus.reply_latency": 5.0},)),
    ("I/O bus latency 5120 -> 3072 (C2)", _C2, ({**_C2, "io_bus.latency": 3072.0},)),
    ("a second I/O bus (C3 -> C4)", _C3, (data.configuration_values("C4"),)),
    ("allocation E over the best of A-D (C6)", None,
     tuple({**data.configuration_values("C6"), "mapping.table_to_disk": data.mapping(a)} for a in "EABCD")),
    ("CPUs 1 -> 2 (C1)", data.configuration_values("C1"), ({**data.configuration_values("C1"), "cpus": 2},)),
    ("CPUs 2 -> 4 (C1)", {**data.configuration_values("C1"), "cpus": 2},
     ({**data.configuration_values("C1"), "cpus": 4},)),
)


def _effect(base, changed) -> float:
    """The changed case's tpmC over the base's (or over the best of the rest when there is
    no base), less one."""
    if base is None:
        return changed[0] / max(changed[1:]) - 1.0
    return changed[0] / base - 1.0


def what_if_effects(overrides: dict | None = None, what_ifs=WHAT_IFS, replications: int = 5, events: int = 600_000,
                    seed: int = 1) -> pd.DataFrame:
    """Each what-if's effect on tpmC in the model and in the machine (paired replications:
    seeds ``seed .. seed + replications - 1``, each running the base and every changed case),
    the machine's mean and 95% half-width (Student t over the replications), and whether
    they agree (the model inside the interval, or within 25% of the machine's effect)."""
    from mva.simulation_output import student_t_quantile

    if replications < 2:
        raise ModelError("replications", f"must be at least 2 for an interval, got {replications}")
    rows = []
    for name, base, changed in what_ifs:
        cases = ([] if base is None else [base]) + list(changed)
        models = [TPCCSMP.from_values({**c, **(overrides or {})}) for c in cases]
        tp = [m.solve().outputs["tpmC"] for m in models]
        model_effect = _effect(None if base is None else tp[0], tp[1:] if base is not None else tp)
        effects = []
        for r in range(replications):
            sim = [m.simulate(seed=seed + r, events=events).outputs["tpmC"] for m in models]
            effects.append(_effect(None if base is None else sim[0], sim[1:] if base is not None else sim))
        effects = np.asarray(effects)
        half = float(student_t_quantile(0.975, replications - 1) * effects.std(ddof=1) / np.sqrt(replications))
        machine = float(effects.mean())
        within = abs(model_effect - machine) <= half
        close = abs(model_effect - machine) <= 0.25 * abs(machine)
        rows.append({"what_if": name, "model": model_effect, "machine": machine, "half_width": half,
                     "agrees": bool(within or close), "how": "in interval" if within else "within 25%" if close
                     else "no"})
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> dict:
    """Mean and largest |tpmC error| and the share of utilisations within 5 points."""
    tpmc = frame[frame.output == "tpmC"]
    util = frame[frame.output.str.startswith("utilization.")]
    points = (util.model - util.simulation).abs()
    return {"tpmc_mean_error": float(tpmc.error.abs().mean()), "tpmc_max_error": float(tpmc.error.abs().max()),
            "tpmc_model_above": int((tpmc.error > 0).sum()), "cases": int(len(tpmc)),
            "utilization_mean_points": float(100 * points.mean()), "utilization_max_points": float(100 * points.max())}


def _text(frame: pd.DataFrame, label: str) -> str:
    s = summary(frame)
    tp = frame[frame.output == "tpmC"].copy()
    lines = [f"TPC-C model vs simulated machine ({label})", "",
             tp[["configuration", "model", "simulation", "half_width", "error"]].to_string(
                 index=False, formatters={"model": "{:.2f}".format, "simulation": "{:.2f}".format,
                                          "half_width": "±{:.2f}".format, "error": "{:+.1%}".format}), "",
             f"tpmC: the model above the simulation in {s['tpmc_model_above']} of {s['cases']} configurations; "
             f"|error| mean {s['tpmc_mean_error']:.1%}, "
             f"max {s['tpmc_max_error']:.1%} (Du & Zhang 2001: within {SEED_ERROR:.1%})", "",
             "utilisations (fractions; error in points = model - simulation)"]
    util = frame[frame.output.str.startswith("utilization.")].copy()
    util["device"] = util.output.str.slice(len("utilization."))
    util["points"] = 100 * (util.model - util.simulation)
    table = util.pivot(index="configuration", columns="device", values="points")
    lines.append(table.to_string(float_format=lambda v: f"{v:+.1f}", na_rep=""))
    lines += ["", f"utilisations: |model - simulation| mean {s['utilization_mean_points']:.1f} points, "
                  f"max {s['utilization_max_points']:.1f}"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m models.tpcc_smp.validation", description=__doc__.split("\n")[0])
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="model parameter applied to every case (repeatable)")
    parser.add_argument("--precision", type=open_fraction, default=0.01, help="relative half-width of the simulated tpmC")
    parser.add_argument("--seed", type=nonnegative_int, default=1)
    parser.add_argument("--cpu-centre", choices=("explicit", "model"), default="explicit",
                        help="simulate explicit processors (default) or the model's own CPU centre")
    parser.add_argument("--files", metavar="TEMPLATE", help="take configuration N from the model file TEMPLATE with "
                                                               "{n} = N, e.g. 'data/tpcc/c{n}-postgres.toml' (the "
                                                               "traced PostgreSQL's inputs); default Table 9")
    parser.add_argument("--what-ifs", action="store_true", help="compare the paper's what-ifs' effects instead")
    parser.add_argument("--replications", type=positive_int, default=5, help="paired replications per what-if (--what-ifs)")
    parser.add_argument("--events", type=positive_int, default=600_000, help="events of each run (--what-ifs)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)
    if args.what_ifs:
        return _what_if_main(args)
    try:
        overrides = parse_assignments(args.set)
        for cfg in CONFIGURATIONS:           # every file is read and checked before the first simulation
            configuration_values(cfg, args.files)
        frame = validate(overrides=overrides, precision=args.precision, seed=args.seed, cpu_centre=args.cpu_centre,
                         files=args.files)
    except ModelError as exc:
        print(f"validation: {exc}", file=sys.stderr)
        return 2
    label = ", ".join([f"CPU centre: {args.cpu_centre}"] + ([f"files {args.files}"] if args.files else [])
                      + [f"{k}={v}" for k, v in overrides.items()])
    if args.format == "json":
        sys.stdout.write(json.dumps({"overrides": overrides, "cpu_centre": args.cpu_centre,
                                     "summary": summary(frame), "rows": frame.to_dict(orient="records")},
                                    default=float) + "\n")
    else:
        sys.stdout.write(_text(frame, label))
    return 0


def _what_if_main(args) -> int:
    try:
        overrides = parse_assignments(args.set)
        TPCCSMP.from_values({**data.configuration_values("C2"), **overrides})      # checked before any run
        if args.replications < 2:
            raise ModelError("--replications", f"must be at least 2 for an interval, got {args.replications}")
        if args.events < 20_000:
            raise ModelError("--events", f"must be at least 20000, got {args.events}")
        frame = what_if_effects(overrides, replications=args.replications, events=args.events, seed=args.seed)
    except ModelError as exc:
        print(f"validation: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        sys.stdout.write(json.dumps({"overrides": overrides, "rows": frame.to_dict(orient="records")}, default=float)
                         + "\n")
        return 0
    shown = frame.assign(model=frame.model.map("{:+.1%}".format),
                         machine=[f"{m:+.1%} ± {h:.1%}" for m, h in zip(frame.machine, frame.half_width, strict=True)])
    sys.stdout.write(f"TPC-C what-ifs: the model's effect on tpmC against the simulated machine's ({args.replications} "
                     f"paired replications of {args.events:,} events, 95% intervals)\n\n"
                     + shown[["what_if", "model", "machine", "how"]].to_string(index=False) + "\n\n"
                     + f"agree: {int(frame.agrees.sum())} of {len(frame)}\n")
    return 0


if __name__ == "__main__":
    from mva.output import exit_with

    exit_with(main, "python -m models.tpcc_smp.validation")
