"""Sweep output, written chunk by chunk as the chunks are solved: CSV (pyarrow's writer),
JSON Lines, parquet (one row group per chunk) or a text table.

With ``-o FILE`` the rows go to a hidden partial file beside FILE (``.FILE.partial``),
and a small state file (``.FILE.sweep.json``) records after every chunk how many chunks
are complete and how many bytes they fill.  FILE appears, by an atomic rename, only when
the last chunk is written, so an interrupted run (Ctrl-C, SIGKILL, a crash) never leaves
a half file under its name; ``--resume`` truncates the partial file to its last complete
chunk and continues from there, so the output is byte for byte that of an uninterrupted
run.  The state file carries a fingerprint of the command (file, overrides, solver,
grid, format, chunk size), and a resume of a different command is refused.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import ModelError
from .output import refuse_overwrite, write_failed, written_in_place

__all__ = ["SweepOutput", "fingerprint", "TABLE_LIMIT", "partial_paths"]

TABLE_LIMIT = 1_000_000     # rows a text table holds in memory (its columns are aligned over all rows)


def fingerprint(*parts) -> str:
    """A digest of everything that decides a sweep's output."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def partial_paths(path: str) -> tuple[Path, Path]:
    """(partial file, state file) of the output ``path``."""
    final = Path(path)
    return final.with_name(f".{final.name}.partial"), final.with_name(f".{final.name}.sweep.json")


def _cell(value):
    """A parameter value as CSV or JSON: lists in TOML syntax, numpy scalars as Python."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(_cell(v)) for v in value) + "]"
    return value.item() if hasattr(value, "item") else value


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Object columns holding lists, or cells of more than one type (a swept value given
    as ``00`` beside ``0``: a bare string the model read as a number), as text (every
    cell, so the column has one type), so a columnar writer takes them."""
    out = frame
    for name in frame.columns:
        column = frame[name]
        if column.dtype == object and (column.map(lambda v: isinstance(v, (list, tuple))).any()
                                       or column.map(type).nunique() > 1):
            if out is frame:
                out = frame.copy()
            out[name] = column.map(lambda v: str(_cell(v)))
    return out


#: Output groups a sweep's table leaves out (one column per resource); files keep them.
TABLE_HIDDEN_GROUPS = ("utilization", "residence_time")


class SweepOutput:
    """Where a sweep's chunks go; a context manager.

    ``path`` None or ``"-"``: stdout, no resume.  Otherwise the partial file, the state
    file and the final rename described in the module docstring.  ``resume``: continue
    a matching interrupted run (:attr:`first_chunk` says where).  ``force``: replace an
    existing FILE or abandon an interrupted run.
    """

    def __init__(self, path: str | None, fmt: str, key: str, chunk_size: int, *, force: bool = False,
                 resume: bool = False, unit_of=None, shown=None):
        self.fmt = fmt
        self.unit_of = unit_of or (lambda column: "")   # a table's headers: "name [unit]"; csv, json keep names
        self.shown = shown or (lambda frame: frame)     # a table's values in their shown units (cycles as ms)
        self.key = key
        self.chunk_size = chunk_size
        self.first_chunk = 0
        self.unconverged = 0        # cases written with converged = False, resumed chunks included
        self.table_frames = []
        self.header = None
        self.device = None
        self.partial_open = False       # a partial file of this sweep exists, not yet renamed
        self.chunks_saved = 0           # chunks the state file records as written
        # a device or pipe (``-o /dev/null``) is written in place like stdout: renaming a
        # partial file over it would replace the device with a regular file
        device = path not in (None, "-") and written_in_place(path)
        self.to_stdout = path is None or path == "-" or device
        if self.to_stdout:
            if resume:
                raise ModelError("--resume", "needs -o FILE, a regular file (a sweep to stdout or a device cannot "
                                             "be resumed)")
            if fmt == "parquet":
                raise ModelError("--format", "parquet is binary: give -o FILE")
            self.device = open(path, "w", encoding="utf-8", newline="") if device else None
            self.stream = self.device or sys.stdout
            return
        self.final = Path(path)
        self.partial, self.state_file = partial_paths(path)
        refuse_overwrite(path, force, "-o")
        interrupted = self.state_file.exists() or self.partial.exists()
        if resume and interrupted:
            self._resume()
        elif interrupted and not force:
            raise ModelError("-o", f"an interrupted sweep left {self.partial.name} beside {path}; add --resume "
                                   "to finish it or --force to start again")
        else:
            self._start()

    # --- state ---------------------------------------------------------------------------
    def _start(self):
        self._remove_partial()
        self.partial_open = True
        try:
            self.partial.parent.mkdir(parents=True, exist_ok=True)
            if self.fmt == "parquet":
                self.partial.mkdir()
                self.stream = None
            else:
                self.stream = open(self.partial, "w", encoding="utf-8", newline="")
        except OSError as exc:
            raise ModelError("-o", f"cannot write {self.final}: {exc.strerror}") from None
        self._save_state(0, 0)

    def _resume(self):
        try:
            state = json.loads(self.state_file.read_text())
            done, size = int(state["chunks"]), int(state["bytes"])
            same = state["key"] == self.key
        except (OSError, ValueError, KeyError, TypeError):
            raise ModelError("--resume", f"{self.state_file.name} is unreadable; pass --force to start again") \
                from None
        if not same:
            raise ModelError("--resume", f"{self.partial.name} was left by a different sweep (file, --set, "
                                         "--sweep, --method, --format or --chunk-size differ); pass --force "
                                         "to start again")
        self.chunk_size = int(state["chunk_size"])
        self.first_chunk = self.chunks_saved = done
        self.partial_open = True
        self.header = state.get("header")
        self.unconverged = int(state.get("unconverged", 0))
        if self.fmt == "parquet":
            for part in self.partial.glob("part-*.parquet"):
                if int(part.stem.split("-")[1]) >= done:
                    part.unlink()
            self.stream = None
            return
        with open(self.partial, "r+b") as fh:    # drop a chunk written after the last saved state
            fh.truncate(size)
        self.stream = open(self.partial, "a", encoding="utf-8", newline="")

    def _save_state(self, chunks: int, size: int):
        tmp = self.state_file.with_name(self.state_file.name + ".tmp")
        try:
            tmp.write_text(json.dumps({"key": self.key, "chunk_size": self.chunk_size, "chunks": chunks,
                                       "bytes": size, "header": self.header, "unconverged": self.unconverged}))
            os.replace(tmp, self.state_file)
        except OSError:
            tmp.unlink(missing_ok=True)
            raise
        self.chunks_saved = chunks

    def _remove_partial(self):
        if self.partial.is_dir():
            for part in self.partial.iterdir():
                part.unlink()
            self.partial.rmdir()
        elif self.partial.exists():
            self.partial.unlink()
        if self.state_file.exists():
            self.state_file.unlink()

    # --- writing -------------------------------------------------------------------------
    def write(self, index: int, frame: pd.DataFrame) -> None:
        """Append chunk ``index`` (chunks arrive in order); a failed write (a full disk) is
        one line naming ``-o``."""
        try:
            self._write(index, frame)
        except BrokenPipeError:      # the reader left (| head): the command ends quietly
            raise
        except OSError as exc:
            raise self._failed(exc) from None

    def _failed(self, exc: OSError) -> ModelError:
        if self.to_stdout:
            return write_failed("-o", self.device.name if self.device else "standard output", exc)
        kept = self.chunks_saved
        if not kept:
            self._remove_partial()
            return write_failed("-o", self.final, exc)
        return ModelError("-o", f"cannot write {self.final}: {exc.strerror or exc}; the {kept:,} chunk(s) written "
                                f"stay in {self.partial.name}: free space and add --resume to finish")

    def _write(self, index: int, frame: pd.DataFrame) -> None:
        if self.header is None:
            self.header = list(map(str, frame.columns))
        elif list(map(str, frame.columns)) != self.header:    # a later chunk with other outputs
            frame = frame.reindex(columns=self.header)
        if "converged" in frame:
            self.unconverged += int((~frame["converged"].astype(bool)).sum())
        if self.fmt == "table":
            self.table_frames.append(frame)
            if sum(len(f) for f in self.table_frames) > TABLE_LIMIT:
                raise ModelError("--format", f"a table holds at most {TABLE_LIMIT:,} rows; use --format csv, "
                                             "json or parquet with -o FILE")
            return
        if self.fmt == "parquet":
            self._write_parquet(index, frame)
            return
        if self.fmt == "csv":
            self._write_csv(index, frame)
        else:
            self._write_json(frame)
        if not self.to_stdout:
            self.stream.flush()
            os.fsync(self.stream.fileno())
            self._save_state(index + 1, os.fstat(self.stream.fileno()).st_size)

    def _write_csv(self, index, frame):
        import pyarrow as pa
        import pyarrow.csv as pacsv
        if index == 0:
            line = io.StringIO()
            csv.writer(line, lineterminator="\n").writerow(self.header)
            self.stream.write(line.getvalue())
        table = pa.Table.from_pandas(_plain(frame), preserve_index=False)
        buffer = io.BytesIO()
        pacsv.write_csv(table, buffer, write_options=pacsv.WriteOptions(include_header=False,
                                                                         quoting_style="needed"))
        self.stream.write(buffer.getvalue().decode("utf-8"))

    def _write_json(self, frame):
        columns = list(frame.columns)
        lists = [frame[c].tolist() for c in columns]
        lines = []
        for row in zip(*lists, strict=False):
            record = {c: _json_value(v) for c, v in zip(columns, row, strict=False)}
            lines.append(json.dumps(record))
        self.stream.write("\n".join(lines) + ("\n" if lines else ""))

    def _write_parquet(self, index, frame):
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:  # pragma: no cover - pyarrow is a dependency
            raise ModelError("--format", "parquet needs pyarrow") from None
        table = pa.Table.from_pandas(_plain(frame), preserve_index=False)
        part = self.partial / f"part-{index:08d}.parquet"
        tmp = part.with_suffix(".tmp")
        pq.write_table(table, tmp)
        os.replace(tmp, part)
        self._save_state(index + 1, 0)

    def finish(self) -> None:
        """Write what is held (a table), and put the complete output under its name."""
        try:
            self._finish()
        except BrokenPipeError:      # the reader left (| head): the command ends quietly
            raise
        except OSError as exc:
            raise self._failed(exc) from None

    def _finish(self) -> None:
        if self.fmt == "table":
            frame = self.shown(pd.concat(self.table_frames, ignore_index=True)) if self.table_frames else pd.DataFrame()
            # a terminal's width: the per-resource groups stay in the files (csv, json, parquet)
            hidden = [c for c in frame.columns if "." in c and c.split(".")[0] in TABLE_HIDDEN_GROUPS]
            groups = sorted({c.split(".")[0] for c in hidden}, key=TABLE_HIDDEN_GROUPS.index)
            # a resource a case does not have (a second bus of a one-bus case) prints as "-"
            headed = frame.drop(columns=hidden).rename(
                columns=lambda c: f"{c} [{self.unit_of(c)}]" if self.unit_of(c) else c)
            self.stream.write(headed.to_string(index=False, na_rep="-") + "\n")
            if hidden:
                self.stream.write(f"({len(hidden)} more columns, {', '.join(g + '.*' for g in groups)}: "
                                  "--format csv or json writes every column)\n")
        if self.to_stdout:
            self.stream.flush()
            if self.device is not None:
                self.device.close()
            return
        if self.fmt == "parquet":
            self._merge_parquet()
        else:
            self.stream.close()
        os.replace(self.merged if self.fmt == "parquet" else self.partial, self.final)
        self.partial_open = False
        if self.fmt == "parquet":
            self._remove_partial()
        elif self.state_file.exists():
            self.state_file.unlink()

    def _merge_parquet(self):
        """One file of one row group per chunk, read and written a part at a time."""
        import pyarrow.parquet as pq
        parts = sorted(self.partial.glob("part-*.parquet"))
        self.merged = self.final.with_name(f".{self.final.name}.merging")
        writer = None
        try:
            for part in parts:
                table = pq.read_table(part)
                if writer is None:
                    writer = pq.ParquetWriter(self.merged, table.schema)
                writer.write_table(table.cast(writer.schema) if table.schema != writer.schema else table)
        finally:
            if writer is not None:
                writer.close()
        if writer is None:
            pd.DataFrame().to_parquet(self.merged)

    def close(self) -> None:
        """Leave the partial file and its state for ``--resume`` (after an interruption),
        or remove them if no chunk was written (bad input met at the first case)."""
        if not self.to_stdout and self.chunks_saved == 0 and self.partial_open:
            if self.stream is not None and not self.stream.closed:
                self.stream.close()
            self._remove_partial()
        for stream in (None if self.to_stdout else self.stream, self.device):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:     # a full disk, reported by the write that met it
                    pass


def _json_value(value):
    if isinstance(value, (np.generic,)):
        return value.item()
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, float) and value != value:
        return None
    return value
