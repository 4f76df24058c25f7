"""The ``mva`` command line: a thin shell over :func:`mva.load_network` and :func:`mva.solve`.

Data goes to stdout (or ``-o FILE``), diagnostics to stderr.  Bad input is one line on
stderr and exit status 2; see :class:`ExitCode`.  Other packages add subcommands through
the entry-point group ``mva.commands`` (a callable ``register(subparsers)``).
"""
from __future__ import annotations

import argparse
import enum
import io
import json
import os
import sys
import warnings
from importlib.metadata import entry_points

from .errors import ModelError, NumericalWarning

__all__ = ["main", "ExitCode"]


class ExitCode(enum.IntEnum):
    OK = 0
    INTERNAL_ERROR = 1      # a bug: the traceback is kept
    INPUT_ERROR = 2         # bad file, field, option or command-line usage
    NOT_CONVERGED = 3       # an iterative method stopped short (with --strict)


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2."""

    def error(self, message):
        self.exit(ExitCode.INPUT_ERROR, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _format_table(net_name: str, path: str, result) -> str:
    out = io.StringIO()
    title = net_name or os.path.basename(path)
    out.write(f"{title}  (method: {result.method}, solve time {result.solve_seconds * 1e3:.3f} ms)\n")
    if not result.converged:
        out.write(f"WARNING: not converged after {result.iterations} iterations\n")
    name_w = max(8, *(len(s) for s in result.stations))
    cls_w = max(8, *(len(c) for c in result.classes))
    out.write(f"\n{'class':<{cls_w}}  {'throughput':>14}  {'response_time':>14}\n")
    for c, cls in enumerate(result.classes):
        out.write(f"{cls:<{cls_w}}  {result.throughput[c]:>14.6g}  {result.response_time[c]:>14.6g}\n")
    out.write(f"\n{'station':<{name_w}}  {'class':<{cls_w}}  {'utilization':>12}  {'queue_length':>13}  "
              f"{'residence_time':>14}\n")
    for k, st in enumerate(result.stations):
        for c, cls in enumerate(result.classes):
            out.write(f"{st:<{name_w}}  {cls:<{cls_w}}  {result.utilization[k, c]:>12.6g}  "
                      f"{result.queue_length[k, c]:>13.6g}  {result.residence_time[k, c]:>14.6g}\n")
    return out.getvalue()


def _format_csv(path: str, result, with_file: bool, header: bool) -> str:
    frame = result.to_frame()
    if with_file:
        frame.insert(0, "file", path)
    return frame.to_csv(index=False, header=header, float_format="%.17g")


def _open_output(path: str | None, force: bool):
    if path is None or path == "-":
        return sys.stdout, False
    if os.path.exists(path) and not force:
        raise ModelError("-o", f"{path} exists; pass --force to overwrite it")
    try:
        return open(path, "w", encoding="utf-8"), True
    except OSError as exc:
        raise ModelError("-o", f"cannot write {path}: {exc.strerror}") from None


def _cmd_solve(args) -> int:
    from . import load_network, solve

    # only the options the user gave: a method without them then says so (exit 2)
    options = {name: value for name, value in (("tol", args.tol), ("max_iter", args.max_iter),
                                                ("max_outer", args.max_outer),
                                                ("multiserver", args.multiserver)) if value is not None}
    results = []
    for path in args.files:
        try:
            network = load_network(path)
        except ModelError as exc:
            raise ModelError(f"{path}: {exc.field}", exc.problem) from None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", NumericalWarning)
            result = solve(network, method=args.method, **options)
        for w in caught:
            print(f"mva: warning: {path}: {w.message}", file=sys.stderr)
        if not result.converged and not caught:
            print(f"mva: warning: {path}: method {result.method} did not converge "
                  f"({result.iterations} iterations)", file=sys.stderr)
        results.append((path, network, result))

    out, close = _open_output(args.output, args.force)
    try:
        for i, (path, network, result) in enumerate(results):
            if args.format == "json":
                record = {"file": path, "network": network.name, **result.to_dict()}
                out.write(json.dumps(record) + "\n")
            elif args.format == "csv":
                out.write(_format_csv(path, result, len(results) > 1, header=(i == 0)))
            else:
                if i:
                    out.write("\n")
                out.write(_format_table(network.name, path, result))
    finally:
        if close:
            out.close()
    if args.strict and any(not r.converged for _, _, r in results):
        return ExitCode.NOT_CONVERGED
    return ExitCode.OK


def build_parser() -> argparse.ArgumentParser:
    from . import METHODS

    parser = _Parser(prog="mva", description="Analytical performance models of multiprocessor servers.")
    from . import __version__
    parser.add_argument("--version", action="version", version=f"mva {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    solve_p = sub.add_parser("solve", help="solve network files (TOML or JSON)",
                             description="Solve one or more network files and print the measures.")
    solve_p.add_argument("files", nargs="+", metavar="NETWORK_FILE")
    solve_p.add_argument("--method", default="exact", choices=sorted(METHODS),
                         help="solution method (default: exact)")
    solve_p.add_argument("--tol", type=float, metavar="X",
                         help="convergence tolerance of an approximate method (default 1e-8)")
    solve_p.add_argument("--max-iter", type=int, metavar="N",
                         help="iteration cap of an approximate method (default 10000)")
    solve_p.add_argument("--max-outer", type=int, metavar="N",
                         help="outer iteration cap of linearizer (default 100)")
    solve_p.add_argument("--multiserver", choices=("marginal", "seidmann"),
                         help="multi-server treatment of an approximate method (default marginal)")
    solve_p.add_argument("--format", default="table", choices=("table", "json", "csv"),
                         help="output format (default: table); json is one object per line per file")
    solve_p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    solve_p.add_argument("--force", action="store_true", help="overwrite the -o file if it exists")
    solve_p.add_argument("--strict", action="store_true",
                         help=f"exit with status {int(ExitCode.NOT_CONVERGED)} if a result did not converge")
    solve_p.set_defaults(handler=_cmd_solve)
    for ep in entry_points(group="mva.commands"):
        ep.load()(sub)
    return parser


def main(argv=None) -> int:
    """Run the command line; returns the exit status (see :class:`ExitCode`)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return ExitCode.INPUT_ERROR
    try:
        return int(args.handler(args))
    except ModelError as exc:
        print(f"mva: {exc}", file=sys.stderr)
        return ExitCode.INPUT_ERROR
    except BrokenPipeError:  # e.g. piped into head
        return ExitCode.OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
