"""Where command output goes: stdout or a file the user names, never over an existing
file without ``--force`` (shared by ``mva solve``, the sweeps' writer and the
calibration commands)."""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager

from .errors import ModelError

__all__ = ["refuse_overwrite", "open_output", "output_stream"]


def refuse_overwrite(path, force: bool, flag: str) -> None:
    """Nothing a user wrote is overwritten without asking: ModelError naming ``flag``
    if ``path`` exists and ``--force`` was not given."""
    if os.path.exists(path) and not force:
        raise ModelError(flag, f"{path} exists; pass --force to overwrite it")


def open_output(path: str | None, force: bool):
    """(text stream, whether to close it): stdout for None or ``-``, else ``path``."""
    if path is None or path == "-":
        return sys.stdout, False
    refuse_overwrite(path, force, "-o")
    try:
        return open(path, "w", encoding="utf-8"), True
    except OSError as exc:
        raise ModelError("-o", f"cannot write {path}: {exc.strerror}") from None


@contextmanager
def output_stream(path: str | None, force: bool):
    """``with output_stream(args.output, args.force) as out:``: :func:`open_output`, closed
    afterwards if it is a file."""
    out, close = open_output(path, force)
    try:
        yield out
    finally:
        if close:
            out.close()
