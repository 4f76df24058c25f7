"""The command line the parallel-machine studies share (``python -m calibration.studies.svm``,
``python -m calibration.studies.ccnuma``): ``--nodes``, ``--small``, ``--kernels``,
``--csv`` (and a study's own files) never written over an existing file without
``--force``, and bad input as one line with exit status 2."""
from __future__ import annotations

import argparse
import sys
from typing import Callable

from mva.errors import ModelError
from mva.output import refuse_overwrite

__all__ = ["study_parser", "run_study"]


def study_parser(prog: str, doc: str, nodes: int, kernels) -> argparse.ArgumentParser:
    """A parser with the shared options; a study adds its own before :func:`run_study`."""
    p = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=nodes)
    p.add_argument("--small", action="store_true", help="small kernels (a test-sized run)")
    p.add_argument("--kernels", default=",".join(kernels), help="comma-separated: " + ", ".join(kernels))
    p.add_argument("--csv", metavar="FILE", help="write every row to FILE")
    p.add_argument("--force", action="store_true", help="overwrite output files that exist")
    return p


def run_study(parser: argparse.ArgumentParser, argv, kernels, body: Callable, files=("csv",)) -> int:
    """Parse ``argv``, check the kernels against ``kernels`` and the output ``files``
    (option names) against existing files, then ``body(args, kernels)``; 0, or 2 with
    one line naming the field."""
    args = parser.parse_args(argv)
    try:
        chosen = [k.strip() for k in args.kernels.split(",") if k.strip()]
        bad = [k for k in chosen if k not in kernels]
        if bad or not chosen:
            raise ModelError("--kernels", f"unknown kernel(s) {', '.join(bad) or '(none given)'}; choose from "
                                          + ", ".join(kernels))
        for name in files:
            if getattr(args, name):
                refuse_overwrite(getattr(args, name), args.force, f"--{name}")
        body(args, chosen)
    except ModelError as exc:
        print(f"{parser.prog}: {exc}", file=sys.stderr)
        return 2
    return 0
