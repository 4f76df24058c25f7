"""Where command output goes: stdout or a file the user names, never over an existing
file without ``--force`` (shared by ``mva solve``, the sweeps' writer and the
calibration commands)."""
from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager

from .errors import ModelError

__all__ = ["refuse_overwrite", "output_stream", "written_path", "save_to", "write_text", "write_failed",
           "plot_path", "require_matplotlib", "guarded_stdout", "exit_with",
           "written_in_place"]


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


def write_failed(flag: str, path, exc: OSError) -> ModelError:
    """The one line for an output that could not be written (a full disk, a lost mount)."""
    where = "" if path is None else f" {os.fspath(path)}"
    return ModelError(flag, f"cannot write{where}: {exc.strerror or exc}")


def written_in_place(path) -> bool:
    """A device or pipe (``-o /dev/null``) is written in place: renaming a finished file
    over it would replace the device with a regular file."""
    return os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path)


@contextmanager
def written_path(path, flag: str = "-o"):
    """``with written_path(path) as tmp:`` write the output to ``tmp``, a new file beside
    ``path`` (same extension, so savers that go by it keep working); it is renamed over
    ``path`` when the block ends, and removed if the block fails, so ``path`` never holds
    a partial file.  A device is written in place.  Errors of the writing itself are the
    caller's to turn into :func:`write_failed` (see :func:`save_to`)."""
    path = os.fspath(path)
    if written_in_place(path):
        yield path
        return
    folder, name = os.path.split(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".partial" + os.path.splitext(name)[1])
        os.close(fd)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)       # the mode a plain open() would give, not mkstemp's 0600
    except OSError as exc:
        raise write_failed(flag, path, exc) from None
    try:
        yield tmp
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise write_failed(flag, path, exc) from None
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def save_to(path, flag: str, save) -> None:
    """``save(name)`` writes the output to ``name``; it lands at ``path`` whole or not at
    all, and a failed write is one line naming ``flag`` (:func:`written_path`)."""
    with written_path(path, flag) as tmp:
        try:
            save(tmp)
        except OSError as exc:
            raise write_failed(flag, path, exc) from None


def write_text(path, text: str, flag: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through :func:`save_to`."""
    save_to(path, flag, lambda name: _write_all(name, text))


def _write_all(name: str, text: str) -> None:
    with open(name, "w", encoding="utf-8", newline="") as f:
        f.write(text)


class _GuardedStream:
    """A text file whose failed writes (a full disk) are :func:`write_failed` naming the
    option, so only writing errors, not the work between writes, read as one."""

    def __init__(self, stream, flag: str, path: str):
        self._stream, self._flag, self._path = stream, flag, path

    def _guarded(self, call, *args):
        try:
            return call(*args)
        except BrokenPipeError:      # the reader left (| head): not an error of ours
            raise
        except OSError as exc:
            raise write_failed(self._flag, self._path, exc) from None

    def write(self, text: str) -> int:
        return self._guarded(self._stream.write, text)

    def flush(self) -> None:
        self._guarded(self._stream.flush)

    def close(self) -> None:
        self._guarded(self._stream.close)

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextmanager
def output_stream(path: str | None, force: bool, flag: str = "-o"):
    """``with output_stream(args.output, args.force) as out:`` a text stream: stdout for
    None or ``-``, else ``path`` (checked by :func:`refuse_overwrite`), which appears only
    when the block ends without error (:func:`written_path`); a failed write is one line
    naming ``flag``."""
    if path is None or path == "-":
        yield sys.stdout
        return
    refuse_overwrite(path, force, flag)
    with written_path(path, flag) as tmp:
        try:
            raw = open(tmp, "w", encoding="utf-8")
        except OSError as exc:
            raise write_failed(flag, path, exc) from None
        out = _GuardedStream(raw, flag, path)
        try:
            yield out
            out.close()
        finally:
            if not raw.closed:
                try:
                    raw.close()
                except OSError:          # the block's own error is the one to report
                    pass


@contextmanager
def guarded_stdout():
    """Inside: a failed write to standard output (``> /dev/full``) is one line, a
    :class:`ModelError` naming it, not a traceback; what could not be written is dropped
    (file descriptor 1 then points to the null device, so the interpreter's own last
    flush cannot fail again)."""
    real = sys.stdout
    sys.stdout = _GuardedStream(real, "standard output", None)
    try:
        yield
        sys.stdout.flush()
    except (ModelError, BrokenPipeError):
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), real.fileno())
        except (OSError, ValueError):
            pass
        raise
    finally:
        sys.stdout = real


def exit_with(main, prog: str) -> None:
    """A ``python -m`` command's last line: run ``main()`` with :func:`guarded_stdout`,
    so that ``> /dev/full`` is one line naming standard output (exit 2), and exit with
    its status."""
    try:
        with guarded_stdout():
            status = main()
    except ModelError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        status = 2
    except BrokenPipeError:         # piped into head: what was wanted was read
        status = 0
    sys.exit(status)
