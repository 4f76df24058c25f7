"""The ``mva`` command line: reads a file, builds its model (every file is a model kind, a
network file the kind ``network``; see :mod:`mva.modelkind`), hands it to one solve,
sweep, parameter-listing or fitting path, and formats the result.

Data goes to stdout (or ``-o FILE``), diagnostics to stderr.  Bad input is one line on
stderr and exit status 2; see :class:`ExitCode`.  Other packages add subcommands through
the entry-point group ``mva.commands`` (a callable ``register(subparsers)``).
"""
from __future__ import annotations

import argparse
import contextlib
import enum
import io
import json
import math
import os
import signal
from functools import partial
import sys
import warnings
from importlib.metadata import entry_points

from .arguments import OneLineParser
from .errors import ModelError, NumericalWarning, printable
from .output import guarded_stdout, output_stream, plot_path

__all__ = ["main", "ExitCode"]


class ExitCode(enum.IntEnum):
    OK = 0
    INTERNAL_ERROR = 1      # a bug: the traceback is kept
    INPUT_ERROR = 2         # bad file, field, option or command-line usage
    NOT_CONVERGED = 3       # an iterative method stopped short (with --strict)
    INTERRUPTED = 130       # Ctrl-C (128 + SIGINT); a sweep to -o FILE can be resumed


_Parser = OneLineParser


def _headed(name: str, units: dict) -> str:
    """``name [unit]`` for a table header (``name`` alone when it has no unit)."""
    return f"{name} [{units[name]}]" if units.get(name) else name


def _cell(value, half, width: int) -> str:
    """``value`` right-aligned, with `` ± half-width`` when a simulation gave one; a value
    or an interval that could not be estimated prints as ``n/a`` (the result's message
    says why), never as nan or inf."""
    shown = f"{value:>{width}.6g}" if math.isfinite(value) else f"{'n/a':>{width}}"
    if half is None:
        return shown
    return shown + (f" ± {half:<9.2g}" if math.isfinite(half) else f" ± {'n/a':<9}")


def _format_table(net_name: str, path: str, result, time_unit: str) -> str:
    out = io.StringIO()
    title = net_name or os.path.basename(path)
    out.write(f"{title}  (method: {result.method}, solve time {result.solve_seconds * 1e3:.3f} ms)\n")
    if result.method == "simulation":
        out.write(f"{'WARNING: ' if not result.converged else ''}{result.message}\n")
    elif not result.converged:
        out.write(f"WARNING: not converged after {result.iterations} iterations\n")
    if "auto" in result.extras:
        out.write(f"auto chose {result.extras['auto']}\n")
    if result.accuracy and result.accuracy != "exact":
        out.write(f"{'WARNING: ' if result.accuracy.startswith('unreliable') else ''}accuracy: {result.accuracy}\n")
    name_w = max(8, *(len(s) for s in result.stations))
    cls_w = max(8, *(len(c) for c in result.classes))
    hw = result.half_width

    # a class that completes nothing (no customers) has no response or residence time
    idle = [not result.throughput[c] > 0 for c in range(len(result.classes))]

    def cell(name, value, index, width):
        c = index[1] if isinstance(index, tuple) else index
        if idle[c] and name in ("response_time", "residence_time"):
            return f"{'n/a':>{width}}" + (f"   {'':<9}" if hw else "")
        return _cell(value, hw[name][index] if hw else None, width)

    if hw:
        out.write(f"{100 * result.confidence_level:g}% confidence intervals (± half-width)\n")
    heads = (f"throughput [1/{time_unit}]", f"response_time [{time_unit}]")
    x_w, r_w = (max(14, len(h)) for h in heads)
    pad = 12 if hw else 0
    out.write(f"\n{'class':<{cls_w}}  {heads[0]:>{x_w}}{'':{pad}}  {heads[1]:>{r_w}}\n")
    for c, cls in enumerate(result.classes):
        out.write(f"{cls:<{cls_w}}  {cell('throughput', result.throughput[c], c, x_w)}  "
                  f"{cell('response_time', result.response_time[c], c, r_w)}\n")
    residence = f"residence_time [{time_unit}]"
    res_w = max(14, len(residence))
    out.write(f"\n{'station':<{name_w}}  {'class':<{cls_w}}  {'utilization':>12}{'':{pad}}  "
              f"{'queue_length':>13}{'':{pad}}  {residence:>{res_w}}\n")
    for k, st in enumerate(result.stations):
        for c, cls in enumerate(result.classes):
            out.write(f"{st:<{name_w}}  {cls:<{cls_w}}  {cell('utilization', result.utilization[k, c], (k, c), 12)}  "
                      f"{cell('queue_length', result.queue_length[k, c], (k, c), 13)}  "
                      f"{cell('residence_time', result.residence_time[k, c], (k, c), res_w)}\n")
    return out.getvalue()


def _format_csv(path: str, result, with_file: bool, header: bool) -> str:
    frame = result.to_frame()
    if with_file:
        frame.insert(0, "file", path)
    return frame.to_csv(index=False, header=header, float_format="%.17g")


def _format_model_table(path: str, solution, not_bottlenecks=()) -> str:
    out = io.StringIO()
    o = solution.outputs
    hw = solution.half_width
    out.write(f"{solution.model or os.path.basename(path)}  (model: {solution.kind}, "
              f"{'simulation, ' if hw else ''}solve time {solution.solve_seconds * 1e3:.3f} ms)\n")
    if not solution.converged:
        out.write(f"WARNING: {solution.message or 'not converged'}\n")
    elif hw or solution.message:
        # a converged answer's doubts (an approximation flagged unreliable) are said too
        out.write(f"{'WARNING: ' if solution.doubted else ''}{solution.message}\n")
    if hw:
        out.write(f"{100 * solution.confidence_level:g}% confidence intervals (± half-width)\n")

    scalars = [(k, _headed(k, solution.units), v) for k, v in o.items() if not isinstance(v, dict)]
    width = max(len(h) for _, h, _ in scalars)
    out.write("\n")
    for key, head, value in scalars:
        out.write(f"{head:<{width}}  {_cell(value, hw.get(key) if hw else None, 14)}\n")
    for group, values in o.items():
        if isinstance(values, dict) and values:
            w = max(8, *(len(k) for k in values))
            halves = hw.get(group, {}) if hw else None
            out.write(f"\n{_headed(group, solution.units)}\n")
            for key, value in values.items():
                out.write(f"  {key:<{w}}  {_cell(value, halves.get(key) if hw else None, 12)}\n")
    util = o.get("utilization")
    servers = {k: u for k, u in (util or {}).items() if k not in not_bottlenecks}
    if servers:
        # the busiest server; a centre's busy share (some server working) is not one server's load
        bottleneck = max(servers, key=servers.get)
        shares = [f"{k} {util[k]:.1%}" for k in not_bottlenecks if k in util]
        out.write(f"\nbottleneck: {bottleneck} ({util[bottleneck]:.1%} utilised)"
                  + (f"; busy shares, not one server's load: {', '.join(shares)}" if shares else "") + "\n")
    return out.getvalue()


def _model_csv(path: str, solution, header: bool) -> str:
    import pandas as pd
    from .modelkind import flatten
    row = {"file": path, "model": solution.model, **flatten(solution.outputs)}
    if solution.half_width:       # a simulation: each output's half-width, as a network's CSV has them
        row.update({f"{k}_half_width": h for k, h in flatten(solution.half_width).items()})
        row["confidence_level"] = solution.confidence_level
    row["converged"] = solution.converged
    return pd.DataFrame([row]).to_csv(index=False, header=header, float_format="%.17g")


@contextlib.contextmanager
def _in_file(path: str):
    """Prefix the field of a ModelError raised inside with the file it came from."""
    try:
        yield
    except ModelError as exc:
        raise ModelError(f"{path}: {exc.field}", exc.problem) from None


def _parameter_table(path: str, target) -> str:
    """Every parameter of a file: value (file and --set over the default), default, unit."""
    what = "network file" if target.kind == "network" else f"model kind {target.kind}"
    defaults = target.defaults()
    rules = getattr(target.cls, "display_units", None) or {}

    def both(value, unit):
        # a unit the kind shows in another (cycles as ms) is listed in both
        if unit in rules and isinstance(value, (int, float)) and not isinstance(value, bool):
            shown, parameter, scale = rules[unit]
            return f"{_show(value)} ({_show(value * scale / target.base[parameter])} {shown})"
        return _show(value)

    rows = [(p.name, both(p.default, p.unit), both(defaults[p.name], p.unit), p.unit, p.description)
            for p in target.parameters()]
    heads = ("parameter", "value", "default", "unit")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(heads)]
    out = io.StringIO()
    out.write(f"{path}  ({what}; value = file and --set over the default)\n\n")
    out.write("  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=False)) + "  description\n")
    for r in rows:
        out.write("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + f"  {r[4]}\n")
    return out.getvalue()


def _show(value) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _solve_reporting_warnings(path: str, run):
    """``run()``, its numerical warnings printed as one stderr line each; (result, warned)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NumericalWarning)
        result = run()
    for w in caught:
        print(f"mva: warning: {path}: {w.message}", file=sys.stderr)
    return result, bool(caught)


def _solver(args) -> dict:
    """``--method`` and the solver options the user gave (only those: a kind that takes
    no solver then says so, exit 2)."""
    given = (("method", args.method), ("tol", args.tol), ("max_iter", args.max_iter),
             ("max_outer", args.max_outer), ("multiserver", args.multiserver), ("seed", args.seed),
             ("events", args.events), ("replications", args.replications), ("precision", args.precision),
             ("target", args.precision_target), ("confidence", args.confidence))
    return {name: value for name, value in given if value is not None}


def _target(path: str, overrides: dict, solver: dict):
    from .files import read_document
    from .targets import ModelTarget
    doc = read_document(path)
    with _in_file(path):
        return ModelTarget(doc, overrides, solver)


def _cmd_what_if(args, solver, overrides) -> int:
    """--sweep, --sensitivity: a table of cases (or of parameters) for one file, written
    chunk by chunk (see :mod:`mva.sweep_output`)."""
    from .grid import Grid, parse_sweeps
    from .sweep import default_chunk_size
    from .sweep_output import SweepOutput, fingerprint

    _check_what_if_options(args)
    path = args.files[0]
    target = _target(path, overrides, solver)
    if args.sensitivity:
        return _write_sensitivities(args, target)
    sweeps = parse_sweeps(args.sweep)
    with _in_file(path):
        target.check_names(sweeps)
    grid = Grid(sweeps, zip=args.zip)
    sweep_note = getattr(target.cls, "sweep_note", None)     # optional in the model-kind contract
    if sweep_note is not None:
        with _in_file(path):
            note = sweep_note(target.base, len(grid))
        if note:
            print(f"mva: note: {note}", file=sys.stderr)
    distributed = bool(args.scheduler or args.workers)
    chunk = args.chunk_size or default_chunk_size(len(grid), args.workers if distributed else None)
    key = fingerprint(target.doc, overrides, solver, grid.names, grid.values, grid.zip, args.format, chunk)
    units = target.shown_units(target.units()) if args.format == "table" or args.plot else {}
    unit_of = partial(target.unit_of, units)
    out = SweepOutput(args.output, args.format, key, chunk, force=args.force, resume=args.resume, unit_of=unit_of,
                      shown=target.shown)
    try:
        kept, met = _solve_grid(args, path, target, grid, out)
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    if args.plot:
        import pandas as pd

        from .analysis import plot_sweep
        plot_sweep(target.shown(pd.concat(kept, ignore_index=True)), list(sweeps), target.main_output, args.plot,
                   unit_of)
    if args.target:
        # the answer goes beside a table read on the terminal, else to stderr (a file stays data)
        answer = sys.stdout if args.format == "table" and args.output in (None, "-") else sys.stderr
        if met is None:
            print(f"mva: target {args.target}: no case meets it", file=answer)
        else:
            chosen = ", ".join(f"{n}={met[n]:g}" if isinstance(met[n], float) else f"{n}={met[n]}" for n in sweeps)
            print(f"mva: target {args.target}: first case meeting it: {chosen} "
                  f"({target.main_output} {met[target.main_output]:.6g})", file=answer)
    if out.unconverged:
        print(f"mva: warning: {out.unconverged} case(s) did not converge", file=sys.stderr)
    return ExitCode.NOT_CONVERGED if (args.strict and out.unconverged) else ExitCode.OK


def _check_what_if_options(args) -> None:
    """The options of a sweep or sensitivity, checked before any work."""
    if len(args.files) != 1:
        raise ModelError("--sweep", "sweeps and sensitivities take one FILE")
    if args.workers is not None and args.workers < 1:
        raise ModelError("--workers", f"must be >= 1, got {args.workers}")
    if args.chunk_size is not None and args.chunk_size < 1:
        raise ModelError("--chunk-size", f"must be >= 1, got {args.chunk_size}")
    if args.resume and (args.plot or args.target or args.sensitivity):
        raise ModelError("--resume", "finishes a sweep's output file; plot or search the finished file instead "
                                     "of combining it with --plot, --target or --sensitivity")
    if args.sensitivity and args.sweep:
        raise ModelError("--sensitivity", "is taken at one point: drop --sweep (use --set to move the point)")
    if args.plot:
        args.plot = plot_path(args.plot, args.force)


def _write_sensitivities(args, target) -> int:
    """--sensitivity: the elasticities of the main output, one row per parameter."""
    from .analysis import sensitivities
    from .sweep_output import SweepOutput

    frame = sensitivities(target)
    frame.insert(0, "output", target.main_output)
    out = SweepOutput(args.output, args.format, "", len(frame) or 1, force=args.force)
    try:
        out.write(0, frame)
        out.finish()
    finally:
        out.close()
    return ExitCode.OK


def _solve_grid(args, path, target, grid, out) -> tuple[list, dict | None]:
    """Solve and write every chunk of ``grid``; (the frames kept for --plot, the first case
    meeting --target).  Ctrl-C stops after the chunk being solved is written (an interrupt
    inside pyarrow or numba could surface as another exception), so a partial file ends
    on a chunk: KeyboardInterrupt, after saying how to finish it."""
    from tqdm.auto import tqdm

    from .analysis import first_meeting
    from .sweep import sweep_chunks

    from .analysis import UnchangedSweeps

    kept, met = [], None
    keep = [*grid.names, target.main_output]     # and the output per class, which plots draw
    idle = UnchangedSweeps(grid.names) if len(grid) <= UnchangedSweeps.MAX_CASES and len(grid) > 1 else None
    done = min(len(grid), out.first_chunk * out.chunk_size)
    bar = tqdm(total=len(grid), initial=done, delay=1.0, unit="case", leave=False, disable=None)  # None: a tty only
    stop = []
    previous = signal.signal(signal.SIGINT, lambda *_: stop.append(True))
    try:
        with _in_file(path):
            for index, frame in sweep_chunks(target, grid, chunk_size=out.chunk_size, first_chunk=out.first_chunk,
                                             scheduler=args.scheduler, workers=args.workers):
                out.write(index, frame)
                if stop:
                    raise KeyboardInterrupt
                done += len(frame)
                bar.update(len(frame))
                if args.plot:
                    kept.append(frame[[c for c in frame if c in keep or c.startswith(target.main_output + '.')]])
                if idle is not None:
                    idle.add(frame)
                if args.target and met is None:
                    met = first_meeting(frame, args.target)
        out.finish()
        for line in idle.warnings() if idle is not None else ():
            print(f"mva: warning: {line}", file=sys.stderr)
    except KeyboardInterrupt:
        if not out.to_stdout:
            print(f"mva: interrupted after {done:,} of {len(grid):,} cases; the same command with --resume "
                  f"finishes {args.output}", file=sys.stderr)
        raise
    finally:
        signal.signal(signal.SIGINT, previous)
        bar.close()
        out.close()
    return kept, met


def _sweep_options_refused(args, solver) -> dict:
    """Refuse the sweep options on a plain solve; without a sweep only --workers and
    --scheduler apply, to a simulation's replications (returned as solver options)."""
    distributed = ("scheduler", "workers") if solver.get("method") == "simulation" else ()
    for flag in ("zip", "plot", "target", "scheduler", "workers", "chunk_size", "resume"):
        if getattr(args, flag) not in (None, False) and flag not in distributed:
            raise ModelError(f"--{flag.replace('_', '-')}", "applies to sweeps (or to --method simulation "
                                                            "--replications): add --sweep NAME=SPEC"
                             if flag in ("scheduler", "workers") else "applies to sweeps: add --sweep NAME=SPEC")
    if args.format == "parquet":
        raise ModelError("--format", "parquet is for sweeps (--sweep)")
    return {flag: getattr(args, flag) for flag in distributed if getattr(args, flag) is not None}


def _cmd_solve(args) -> int:
    from .modelkind import parse_assignments

    solver = _solver(args)
    overrides = parse_assignments(args.set)
    if args.sweep or args.sensitivity:
        return _cmd_what_if(args, solver, overrides)
    solver.update(_sweep_options_refused(args, solver))
    results = []
    for path in args.files:
        target = _target(path, overrides, solver)
        if args.list_parameters:
            results.append((path, _parameter_table(path, target)))
            continue
        solution, warned = _solve_reporting_warnings(path, target.model.solve)
        if not solution.converged and not warned and solution.kind == "network":
            print(f"mva: warning: {path}: {solution.message}", file=sys.stderr)
        if overrides and solution.kind != "network" and not solution.half_width:
            for line in _unchanged_overrides(target, overrides, solution):
                print(f"mva: warning: {path}: {line}", file=sys.stderr)
        results.append((path, solution, target.cls.not_bottlenecks))

    with output_stream(args.output, args.force) as out:
        seen = set()         # solution types whose CSV header is written
        for i, (path, payload, *exclude) in enumerate(results):
            out.write(_render(payload, path, args.format, header=type(payload) not in seen, first=i == 0,
                              several=len(results) > 1, not_bottlenecks=exclude[0] if exclude else ()))
            seen.add(type(payload))
    unconverged = [p for p, r, *_ in results if not isinstance(r, str) and not r.converged]
    if args.strict and unconverged:
        return ExitCode.NOT_CONVERGED
    return ExitCode.OK


def _unchanged_overrides(target, overrides: dict, solution) -> list[str]:
    """A line for each ``--set`` whose value gives the outputs the file's own value gives
    (to a relative 1e-9), as a sweep warns of a what-if that changes nothing, with the
    kind's hint of what would make it matter (``ModelKind.what_if_hint``)."""
    import warnings

    lines = []
    solved = solution.flat()
    for name in overrides:
        without = {k: v for k, v in overrides.items() if k != name}
        try:
            plain = target.__class__(target.doc, without, target.solver)
            if plain.base.get(name) == target.base.get(name):
                continue                      # the --set value is the file's own
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                other = plain.model.solve().flat()
        except ModelError:
            continue                          # the file's own value is not valid with the other --set values
        same = all(abs(float(solved[k]) - float(other[k])) <= 1e-9 * abs(float(other[k]))
                   for k in solved if k in other and isinstance(other[k], (int, float)) and not isinstance(other[k], bool))
        if same:
            hint = target.cls.what_if_hint(name, target.base) if target.cls.what_if_hint else ""
            lines.append(f"--set {name}: gives the same outputs as the file's value, so this what-if changes "
                         f"nothing" + (f"; {hint}" if hint else ""))
    return lines


def _render(payload, path: str, fmt: str, header: bool, first: bool, several: bool, not_bottlenecks=()) -> str:
    """One file's output in ``fmt``, by the type of what it gave: a parameter listing
    (text), a network file's :class:`~mva.network_kind.NetworkSolution` (the full
    per-class, per-station result) or any other kind's :class:`~mva.modelkind.ModelSolution`."""
    from .network_kind import NetworkSolution

    gap = "" if first else "\n"
    if isinstance(payload, str):
        return gap + payload
    if isinstance(payload, NetworkSolution):
        result, unit = payload.result, payload.time_unit
        if fmt == "json":
            return json.dumps({"file": path, "network": payload.network.name, "time_unit": unit,
                               **result.to_dict()}) + "\n"
        if fmt == "csv":
            return _format_csv(path, result, several, header=header)
        return gap + _format_table(payload.network.name, path, result, unit)
    if fmt == "json":
        return json.dumps({"file": path, **payload.to_dict()}) + "\n"
    if fmt == "csv":
        return _model_csv(path, payload, header=header)
    return gap + _format_model_table(path, payload, not_bottlenecks)


def build_parser() -> argparse.ArgumentParser:
    from . import METHODS

    parser = _Parser(prog="mva", description="Analytical performance models of multiprocessor servers.")
    from . import __version__
    parser.add_argument("--version", action="version", version=f"mva {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    solve_p = sub.add_parser("solve", help="solve network files or model files (TOML or JSON)",
                             description="Solve network files (stations and classes) or model files "
                                         "(a top-level 'kind', e.g. tpcc_smp) and print the measures.")
    solve_p.add_argument("files", nargs="+", metavar="FILE")
    solve_p.add_argument("--method", choices=sorted(METHODS),
                         help="solution method for network files (default: auto, exact whenever its cost "
                              "fits, else Linearizer or Bard-Schweitzer; the output says which ran)")
    solve_p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                         help="set a model parameter by dotted name (repeatable; TOML values, e.g. "
                              "cpus=4, disk.rotation_latency=0.9e6, mapping.table_to_disk=[1,2,1,2,1,2,1,2,1])")
    solve_p.add_argument("--list-parameters", action="store_true",
                         help="list a file's parameters with values, defaults and units, and exit")
    solve_p.add_argument("--tol", type=float, metavar="X",
                         help="convergence tolerance of an approximate method (default 1e-8)")
    solve_p.add_argument("--max-iter", type=int, metavar="N",
                         help="iteration cap of an approximate method (default 10000)")
    solve_p.add_argument("--max-outer", type=int, metavar="N",
                         help="outer iteration cap of linearizer (default 100)")
    solve_p.add_argument("--multiserver", choices=("marginal", "seidmann"),
                         help="multi-server treatment of an approximate method (default marginal)")
    sim = solve_p.add_argument_group("simulation (--method simulation)")
    sim.add_argument("--seed", type=int, metavar="S", help="seed of the random stream (default 1)")
    sim.add_argument("--events", type=int, metavar="N", help="events after the warm-up (default: the SIMULATION settings "
                     "of the kind; 2,000,000 for a network file, 400,000 for the shared_bus and tpcc_smp machines)")
    sim.add_argument("--replications", type=int, metavar="R",
                     help="independent replications (default 1: batch means of one run)")
    sim.add_argument("--precision", type=float, metavar="F",
                     help="run until the --precision-target is within this relative half-width (the message "
                          "says which class and measure bound the run)")
    sim.add_argument("--precision-target", metavar="MEASURE",
                     help="measure of --precision (default auto: what is not known in advance, the throughput of "
                          "closed classes and the response time of open ones; or throughput, response_time, ...; "
                          "a model kind's own outputs, e.g. tpmC)")
    sim.add_argument("--confidence", type=float, metavar="P", help="level of the intervals (default 0.95)")
    solve_p.add_argument("--format", default="table", choices=("table", "json", "csv", "parquet"),
                         help="output format (default: table); json is one object per line per file or "
                              "case; parquet (sweeps, with -o) needs pyarrow")
    solve_p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    solve_p.add_argument("--force", action="store_true", help="overwrite the -o (or --plot) file if it exists")
    solve_p.add_argument("--strict", action="store_true",
                         help=f"exit with status {int(ExitCode.NOT_CONVERGED)} if a result did not converge")
    what_if = solve_p.add_argument_group("what-if sweeps (one FILE)")
    what_if.add_argument("--sweep", action="append", default=[], metavar="NAME=SPEC",
                         help="sweep a parameter: start:stop:step, a,b,c or @file.csv (repeatable: a cartesian grid)")
    what_if.add_argument("--zip", action="store_true", help="pair the sweeps value by value instead of a grid")
    what_if.add_argument("--plot", metavar="PNG", help="plot the main output against the first swept parameter")
    what_if.add_argument("--target", metavar="EXPR", help="report the first (smallest) case meeting EXPR, "
                                                          "e.g. tpmC>=55 (on stderr)")
    what_if.add_argument("--sensitivity", action="store_true",
                         help="elasticities d log(output)/d log(parameter) of every continuous parameter, ranked")
    what_if.add_argument("--scheduler", metavar="ADDRESS",
                         help="send chunks (or simulation replications) to a running Dask scheduler")
    what_if.add_argument("--workers", type=int, metavar="N",
                         help="start a local Dask cluster of N processes for the chunks (or the simulation "
                              "replications)")
    what_if.add_argument("--chunk-size", type=int, metavar="N",
                         help="cases per chunk, solved and written together (default: 25,000, or about 4 "
                              "chunks per Dask worker)")
    what_if.add_argument("--resume", action="store_true",
                         help="finish a sweep to -o FILE that was interrupted (same command line)")
    solve_p.set_defaults(handler=_cmd_solve)
    for ep in entry_points(group="mva.commands"):
        ep.load()(sub)
    return parser


#: Simulation settings as the command line spells them (``--events``, not ``events``).
_SETTING_OPTIONS = {"seed": "--seed", "events": "--events", "replications": "--replications",
                    "precision": "--precision", "target": "--precision-target", "confidence": "--confidence"}


def _as_given(args, exc: ModelError) -> str:
    """The error naming the option the user typed when it was a simulation setting."""
    option = _SETTING_OPTIONS.get(exc.field)
    if option and getattr(args, option[2:].replace("-", "_"), None) is not None:
        return printable(f"{option}: {exc.problem}")
    return str(exc)


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A library warning as the command line's other warnings: one line, no source path."""
    print(printable(f"mva: warning: {message}"), file=sys.stderr)


#: Start-up (numba compiling or loading) shorter than this is not worth a line.
_COMPILE_NOTE_SECONDS = 1.0


def _report_startup(compiled: float, started: float) -> None:
    """This run's numba start-up, apart from the solve times and simulation speeds it
    would otherwise inflate (they exclude it: :func:`mva.jit.seconds_since`):
    ``compiled`` seconds compiling, ``started`` compiling and loading from the cache."""
    loaded = max(started - compiled, 0.0)
    if compiled >= _COMPILE_NOTE_SECONDS:
        print(f"mva: note: compiled numba kernels for {compiled:.1f} s (and loaded others in {loaded:.1f} s), not "
              "counted in the times above; each kernel compiles once after installing, the first time a command "
              "needs it, and later runs load it from numba's cache", file=sys.stderr)
    elif started >= _COMPILE_NOTE_SECONDS:
        print(f"mva: note: loaded compiled numba kernels in {started:.1f} s, not counted in the times above",
              file=sys.stderr)


def main(argv=None) -> int:
    """Run the command line; returns the exit status (see :class:`ExitCode`)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return ExitCode.INPUT_ERROR
    from .jit import compile_seconds, startup_seconds

    compiled, started = compile_seconds(), startup_seconds()
    try:
        with warnings.catch_warnings(), guarded_stdout() if argv is None else contextlib.nullcontext():
            if argv is None:          # the command itself; a caller (a test) keeps its own handler and stdout
                warnings.showwarning = _one_line_warning
            status = int(args.handler(args))
        _report_startup(compile_seconds() - compiled, startup_seconds() - started)
        return status
    except ModelError as exc:
        print(f"mva: {_as_given(args, exc)}", file=sys.stderr)
        return ExitCode.INPUT_ERROR
    except BrokenPipeError:  # e.g. piped into head
        return ExitCode.OK
    except KeyboardInterrupt:
        print("mva: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
