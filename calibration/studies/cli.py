"""The command line every study shares.

* ``--findings FILE``: the paper's findings as JSON rows (:mod:`.findings`), beside the
  table every study prints;
* ``--processes N``, ``--workers N``, ``--scheduler ADDR``: where the study's independent
  simulator runs go (:mod:`.executor`: local processes by default, one process with
  ``--processes 1``, a Dask cluster with the other two), with identical results;
* for the parallel-machine studies, ``--nodes``, ``--small``, ``--kernels`` and ``--csv``.

No output file is written over without ``--force``.  Exit status: 0 when the study ran,
whatever its findings' verdicts (a finding that does not reproduce is a result, not an
error); 2 for bad input, with one line naming the option.
"""
from __future__ import annotations

import argparse
from mva.arguments import OneLineParser
import sys
from collections.abc import Callable

from mva.errors import ModelError
from mva.output import plot_path, refuse_overwrite, write_text

from .findings import format_findings, markdown, write_findings

__all__ = ["study_parser", "run_study", "check_synthetic_workload", "add_study_options", "report_findings", "write_outputs", "runs_options"]


def add_study_options(parser: argparse.ArgumentParser, runs: bool = True) -> argparse.ArgumentParser:
    """``--findings``, ``--force`` and (``runs``) the executor's options on ``parser``."""
    parser.add_argument("--findings", metavar="FILE", help="write the findings against the paper to FILE (JSON)")
    parser.add_argument("--results", metavar="FILE", help="write the findings as a Markdown page to FILE "
                                                          "(docs/results/NAME.md)")
    parser.add_argument("--force", action="store_true", help="overwrite output files that exist")
    if runs:
        parser.add_argument("--processes", type=int, metavar="N",
                            help="local processes for the simulator runs (default: one per core; 1: this one)")
        parser.add_argument("--workers", type=int, metavar="N", help="run them on a local Dask cluster of N workers")
        parser.add_argument("--scheduler", metavar="ADDRESS", help="run them on the Dask scheduler at ADDRESS")
    return parser


def runs_options(args) -> dict:
    """The executor's keywords from parsed arguments."""
    return {"processes": args.processes, "workers": args.workers, "scheduler": args.scheduler}


def study_parser(prog: str, doc: str, nodes: int, kernels) -> argparse.ArgumentParser:
    """A parallel-machine study's parser; a study adds its own options before :func:`run_study`."""
    p = OneLineParser(prog=prog, description=doc.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=nodes)
    p.add_argument("--small", action="store_true", help="small kernels (a test-sized run)")
    p.add_argument("--kernels", default=",".join(kernels), help="comma-separated: " + ", ".join(kernels))
    p.add_argument("--csv", metavar="FILE", help="write every row to FILE")
    return add_study_options(p)


def run_study(parser: argparse.ArgumentParser, argv, kernels, body: Callable,
              files=("csv", "findings", "results"), check: Callable | None = None, option: str = "--kernels") -> int:
    """Parse ``argv``, check the kernels against ``kernels`` (or ``kernels(args)``), the output ``files`` (option
    names; ``plot`` also for matplotlib and the format) against existing files and
    ``check(args)`` (the study's own options), all before any work, then ``body(args,
    kernels)``; 0, or 2 with one line naming the option (``option``: the one that
    chooses the kernels)."""
    args = parser.parse_args(argv)
    # the command as the --results page names it (without the output file options)
    args.prog_module = parser.prog.removeprefix("python -m ").strip()
    shown, skip = [], False
    for a in (sys.argv[1:] if argv is None else list(argv)):
        if skip:
            skip = False
        elif a in ("--results", "--findings", "--csv", "--plot"):
            skip = True
        elif a != "--force" and not a.startswith(("--results=", "--findings=")):
            shown.append(a)
    args.argv_shown = shown
    try:
        if callable(kernels):           # the choices depend on the arguments (e.g. the recordings in --traces)
            kernels = kernels(args)
        chosen = [k.strip() for k in args.kernels.split(",") if k.strip()] if kernels else []
        bad = [k for k in chosen if k not in kernels]
        if kernels and (bad or not chosen):
            what = option.removeprefix("--").rstrip("s")
            raise ModelError(option, f"unknown {what}(s) {', '.join(bad) or '(none given)'}; choose from "
                                     + ", ".join(kernels))
        for name in files:
            if getattr(args, name, None):
                if name == "plot":
                    args.plot = plot_path(args.plot, args.force)
                else:
                    refuse_overwrite(getattr(args, name), args.force, f"--{name}")
        if getattr(args, "nodes", 1) < 1:
            raise ModelError("--nodes", f"must be a positive integer, got {args.nodes}")
        if getattr(args, "processes", None) is not None and args.processes < 1:
            raise ModelError("--processes", f"must be a positive integer, got {args.processes}")
        if check is not None:
            check(args)
        body(args, chosen)
    except ModelError as exc:
        print(f"{parser.prog}: {exc}", file=sys.stderr)
        return 2
    return 0


def check_synthetic_workload(args) -> None:
    """``--workload`` (a preset of :mod:`calibration.sim.synthetic`) and ``--references``
    (at least one per process of it), before any simulation."""
    from ..sim.synthetic import PRESETS, preset_request

    if args.workload.lower() not in PRESETS:
        raise ModelError("--workload", f"unknown preset {args.workload!r}; presets: {', '.join(PRESETS)}")
    processes = preset_request(args.workload).processes
    if args.references < processes:
        raise ModelError("--references", f"{args.workload} runs {processes} processes: give at least {processes} "
                                         f"references, got {args.references}")


def report_findings(rows, args, title: str, page_title: str = "", appendix=()) -> None:
    """Print the findings tables (``docs/findings.md``; a ``--small`` run's count line
    says it is test-sized), and write ``--findings`` (JSON) and ``--results`` (Markdown,
    titled ``page_title``, ``appendix`` after it) if given."""
    print(format_findings(rows, title, getattr(args, "small", False)))
    write_outputs(rows, args, page_title or title, appendix)


def write_outputs(rows, args, page_title: str, appendix=(), test_sized: bool | None = None) -> None:
    """``--findings`` and ``--results`` files of ``rows``, where asked for; ``appendix``:
    (heading, preformatted text) sections the results page ends with; ``test_sized``
    (default: ``--small`` was given) marks the page's count line."""
    test_sized = getattr(args, "small", False) if test_sized is None else test_sized
    if getattr(args, "findings", None):
        write_findings(rows, args.findings)
        print(f"wrote {args.findings}")
    if getattr(args, "results", None):
        command = " ".join(["python -m", args.prog_module, *args.argv_shown])
        write_text(args.results, markdown(rows, page_title, command, appendix, test_sized), "--results")
        print(f"wrote {args.results}")
