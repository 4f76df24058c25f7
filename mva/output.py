"""Where command output goes: stdout or a file the user names, never over an existing
file without ``--force`` (shared by ``mva solve``, the sweeps' writer and the
calibration commands)."""
from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager

from .errors import ModelError

__all__ = ["refuse_overwrite", "open_output", "output_stream", "plot_path", "require_matplotlib"]


def refuse_overwrite(path, force: bool, flag: str) -> None:
    """Check an output path before any work: ModelError naming ``flag`` if ``path``
    exists and ``--force`` was not given, is a directory, or its directory is missing or
    not writable (so a long run never ends in a traceback at its last step)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise ModelError(flag, f"{path} is a directory; give a file name")
    if os.path.exists(path) and not force:
        raise ModelError(flag, f"{path} exists; pass --force to overwrite it")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ModelError(flag, f"cannot write {path}: no directory {folder}")
    try:        # a real probe: os.access says yes to root, and /proc refuses new files anyway
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ModelError(flag, f"cannot write {path}: {exc.strerror}") from None


def require_matplotlib(flag: str):
    """matplotlib.pyplot (on the Agg backend unless pyplot was imported already, as in a
    notebook), or a ModelError naming ``flag`` and the extra to install (checked before
    the work whose results it would draw)."""
    try:
        import matplotlib
        if "matplotlib.pyplot" not in sys.modules:    # a notebook (or a caller) keeps its own backend
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ModelError(flag, "needs matplotlib: pip install 'mva-smp[plot]'") from None
    return plt


def plot_path(path, force: bool, flag: str = "--plot") -> str:
    """The file a figure will be saved to, checked before any work: matplotlib present,
    the extension one it writes (none: ``.png`` is added, as matplotlib would, and the
    check is on that name), not overwriting an existing file without ``--force``, the
    directory writable."""
    plt = require_matplotlib(flag)
    path = os.fspath(path)
    if os.path.isdir(path):
        raise ModelError(flag, f"{path} is a directory; give a file name")
    supported = plt.figure().canvas.get_supported_filetypes()
    plt.close("all")
    suffix = os.path.splitext(path)[1].lower().lstrip(".")
    if not suffix:
        path, suffix = f"{path}.png", "png"
    if suffix not in supported:
        raise ModelError(flag, f"cannot draw a .{suffix} file; formats: {', '.join(sorted(supported))}")
    refuse_overwrite(path, force, flag)
    return path


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
