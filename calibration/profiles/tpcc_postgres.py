"""The TPC-C model's inputs from a traced PostgreSQL, the way Du, Zhang, Dong & Zhang
(JPDC 2001, §4.2) derived theirs from POSTGRES on their simulator.

A recording (:mod:`calibration.sim.tpcc_recorder`: ``tpcc-io.csv``, ``tpcc-segments.csv``
and the backends' traces under ``tpcc.toml``) gives:

* **visits per transaction type** (:func:`profile`, the paper's Table 6): instructions,
  data reads and data writes are the mean of the type's trace segments minus the mean
  of the empty ones (what the markers cost); disk reads and writes per table are the
  measured blocks (8 KiB) of each type, where the write-ahead log's and PostgreSQL's own
  files' blocks are spread over the type's tables in proportion to its table blocks
  (the paper's model has nine tables and no log disk);
* **the cache per CPU count** (:func:`cache_table`): the trace-driven bus machine
  (:mod:`calibration.sim.bus`, MESI, Du et al. Table 8's 16 KiB cache with 32-byte
  blocks, data references only, as the model's memory visits are data references) runs
  the backends' traces on 1, 2, 3, 4 and 8 processors; misses per data reference at k
  processors, coherence misses included, give ``cpu.cache_hit_rate_by_cpus``, so the
  CPU centre's rate function (the model's stalling Norton aggregate) is its own for each
  CPU count.

:func:`model_values` assembles the model parameters (nothing fitted to the paper's tpmC:
Table 7's one cycle per instruction, every processor at the same speed, disk visits
unscaled; each is one 8 KiB block, the model's default reading of a disk access: 16 of
Table 7's 512-byte sector transfers and 32 of its 256-byte I/O bus transfers) and :func:`write_model_files`
writes ``data/tpcc/cN-postgres.toml`` for the paper's configurations C1-C9.

``python -m calibration.profiles.tpcc_postgres RECORDING [--data data/tpcc] [--force]``
derives and writes all of it; the derived tables ship with the package
(:data:`PROFILE_CSV`, :data:`CACHE_CSV`) and :func:`packaged_values` reads them.
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from mva.arguments import OneLineParser
from mva.errors import ModelError

from ..sim.tpcc_db import TABLES, TRANSACTIONS
from ..sim.tpcc_recorder import IDLE, IO_RELATIONS, read_io

__all__ = ["profile", "cache_table", "model_values", "write_model_files", "packaged_values", "PROFILE_CSV",
           "CACHE_CSV", "CPU_COUNTS", "CACHE", "BUFFER_POOL", "main"]

HERE = Path(__file__).parent
PROFILE_CSV = HERE / "tpcc_postgres_profile.csv"
CACHE_CSV = HERE / "tpcc_postgres_cache.csv"
#: CPU counts the bus machine runs (Table 10's 1-4, and 8).
CPU_COUNTS = (1, 2, 3, 4, 8)
#: Du et al., Table 8: 16 KB cache, 32-byte blocks (associativity not given: the machine's 2).
CACHE = {"cache": 16 << 10, "block": 32, "data_only": True, "protocol": "mesi"}
PG_BLOCK = 8192
#: The packaged recording's buffer pool: Du et al.'s ratio of memory to database (Table 8's
#: 256 KB against their 751 KB database, TPC-C's row sizes at 1/100) applied to our
#: database's 1.56 MB on disk, rounded to 8 KB buffers (data/tpcc/README.md).
BUFFER_POOL = "528kB"


def profile(recording) -> pd.DataFrame:
    """One row per transaction type: ``segments`` (traced), ``instructions``,
    ``memory_reads``, ``memory_writes`` (per transaction, the empty segments' mean
    subtracted), their standard errors (``*_sem``), then ``disk_reads``,
    ``disk_writes`` and ``reads.TABLE`` / ``writes.TABLE`` for the nine tables (the log
    and system blocks spread as the module says)."""
    recording = Path(recording)
    seg = pd.read_csv(recording / "tpcc-segments.csv")
    idle = seg[seg.transaction == IDLE]
    if idle.empty:
        raise ModelError("recording", f"{recording}: no empty segments to measure the markers by")
    io = read_io(recording / "tpcc-io.csv")
    base = idle[["instructions", "loads", "stores"]].mean()
    rows = []
    for kind in TRANSACTIONS:
        mine = seg[seg.transaction == kind]
        if mine.empty:
            raise ModelError("recording", f"{recording}: no traced {kind} transaction (record more per terminal)")
        row = {"transaction": kind, "segments": len(mine)}
        for column, name in (("instructions", "instructions"), ("loads", "memory_reads"),
                             ("stores", "memory_writes")):
            row[name] = float(mine[column].mean() - base[column])
            row[f"{name}_sem"] = float(mine[column].std(ddof=1) / np.sqrt(len(mine))) if len(mine) > 1 else np.nan
        blocks = io.get(kind)
        if blocks is None:
            raise ModelError("recording", f"{recording}: tpcc-io.csv has no {kind} rows")
        reads = np.array([blocks.get(t, (0.0, 0.0))[0] for t in TABLES])
        writes = np.array([blocks.get(t, (0.0, 0.0))[1] for t in TABLES])
        extra_r = sum(blocks.get(r, (0.0, 0.0))[0] for r in IO_RELATIONS[len(TABLES):])
        extra_w = sum(blocks.get(r, (0.0, 0.0))[1] for r in IO_RELATIONS[len(TABLES):])
        weight = reads + writes
        share = weight / weight.sum() if weight.sum() > 0 else np.full(len(TABLES), 1 / len(TABLES))
        row["disk_reads"] = float(reads.sum() + extra_r)
        row["disk_writes"] = float(writes.sum() + extra_w)
        row["log_writes"] = float(blocks.get("log", (0.0, 0.0))[1])
        for t, r, w, s in zip(TABLES, reads, writes, share, strict=True):
            row[f"reads.{t}"] = float(r + extra_r * s)
            row[f"writes.{t}"] = float(w + extra_w * s)
        rows.append(row)
    return pd.DataFrame(rows)


def cache_table(manifest, cpus=CPU_COUNTS, references: int | None = None, **config) -> pd.DataFrame:
    """The bus machine on the recording's backends (:data:`CACHE`, ``config`` on top) at
    each CPU count, for ``references`` data references (default: each backend's trace
    once): ``data_references``, ``misses`` (all kinds), ``coherence_misses`` (true and
    false sharing), ``coherence_transactions`` and ``bus_transactions`` (counts),
    ``misses_per_transaction`` and ``bus_transactions_per_transaction`` (per traced
    transaction of the mix, in proportion to the references run), ``misses_per_reference``
    and ``hit_rate`` = 1 - that."""
    from ..sim.bus import simulate_bus
    from ..sim.workload import read_manifest

    import tomllib

    workload = read_manifest(manifest)
    facts = tomllib.loads(Path(manifest).read_text())["recording"]
    traced = _traced_transactions(Path(manifest).parent / "tpcc-segments.csv")
    # each backend's data references once (a data-only run counts only those)
    run = int(references or sum(_data_references(p) for p in workload.processes))
    per_transaction = traced * run / facts["references"]      # the transactions these references amount to
    rows = []
    for k in cpus:
        result = simulate_bus(workload, cpus=k, references=run, **{**CACHE, **config})
        data_refs = sum(v for name, v in result.counts.items() if name.startswith(("refs.load", "refs.store")))
        kinds = result.misses_by_kind()
        bus = sum(v for name, v in result.counts.items() if name.startswith("bus.") and name.count(".") == 1
                  and not name.endswith("cycles"))
        rows.append({"cpus": k, "data_references": int(data_refs), "misses": int(result.misses),
                     "coherence_misses": int(kinds["true_sharing"] + kinds["false_sharing"]),
                     "coherence_transactions": int(sum(result.coherence().values())),
                     "bus_transactions": int(bus),
                     "misses_per_transaction": result.misses / per_transaction,
                     "bus_transactions_per_transaction": bus / per_transaction,
                     "misses_per_reference": result.misses / data_refs, "hit_rate": 1 - result.misses / data_refs})
    return pd.DataFrame(rows)


def _traced_transactions(segments_csv) -> int:
    """Transactions the concurrent terminals traced (not the empty segments, not the
    counting terminal 0, whose trace is not in the manifest)."""
    seg = pd.read_csv(segments_csv)
    return int(((seg.terminal > 0) & (seg.transaction != IDLE)).sum())


def _data_references(process) -> int:
    """Loads and stores in a process's trace."""
    from ..sim.traces import IFETCH

    return int(sum(np.count_nonzero(c.op != IFETCH) for c in process.open()))


def model_values(prof: pd.DataFrame, cache: pd.DataFrame) -> dict:
    """TPC-C model parameters from a profile and a cache table (see the module)."""
    prof = prof.set_index("transaction").loc[list(TRANSACTIONS)]
    access = []
    for kind in TRANSACTIONS:
        visits = np.array([prof.loc[kind, f"reads.{t}"] + prof.loc[kind, f"writes.{t}"] for t in TABLES])
        access += list(np.round(visits / visits.sum(), 6)) if visits.sum() > 0 else [1 / 9] * 9
    by_cpus = cache.set_index("cpus").hit_rate
    hits = [float(np.interp(k, by_cpus.index, by_cpus.values)) for k in range(1, int(by_cpus.index.max()) + 1)]
    rounded = lambda column: [float(round(x, 1)) for x in prof[column]]     # noqa: E731
    return {"cpu.cpi": 1.0, "cpu.speed_by_cpus": [1.0], "workload.disk_visit_scale": 1.0,
            "workload.instructions": rounded("instructions"), "workload.memory_reads": rounded("memory_reads"),
            "workload.memory_writes": rounded("memory_writes"), "workload.disk_reads": rounded("disk_reads"),
            "workload.disk_writes": rounded("disk_writes"), "workload.table_access": access,
            "cpu.cache_hit_rate_by_cpus": [round(h, 6) for h in hits],
            "disk.block_size": float(PG_BLOCK)}


def packaged_values() -> dict:
    """:func:`model_values` of the profile and cache table that ship with the package."""
    if not PROFILE_CSV.is_file() or not CACHE_CSV.is_file():
        raise ModelError("profile", "the packaged PostgreSQL profile is missing (reinstall the package)")
    return model_values(pd.read_csv(PROFILE_CSV), pd.read_csv(CACHE_CSV))


def write_model_files(values: dict, directory, force: bool = False) -> list:
    """``cN-postgres.toml`` for C1-C9 in ``directory``: each configuration of Table 9 with
    ``values``; returns the paths.  An existing file is replaced only with ``force``."""
    from models.tpcc_smp import data

    directory = Path(directory)
    paths = []
    for n in range(1, 10):
        path = directory / f"c{n}-postgres.toml"
        if path.exists() and not force:
            raise ModelError("--force", f"{path} exists (give --force to replace it)")
        paths.append(path)
    for n, path in enumerate(paths, start=1):
        cfg = data.configuration_values(f"C{n}")
        doc = {"kind": "tpcc_smp", "name": f"C{n}-postgres", "terminals": 48, **cfg, **values}
        head = (f"# Du et al. (JPDC 2001) Table 9, configuration C{n}, with inputs from TPC-C on PostgreSQL traced by\n"
                "# `mva trace tpcc` and derived by `python -m calibration.profiles.tpcc_postgres` (nothing fitted to the\n"
                "# paper's tpmC).  See data/tpcc/README.md.\n")
        # one dotted key per line (TOML reads a.b = v as table a's key b), arrays on one line
        lines = [f"{name} = {_toml_value(v)}" for name, v in doc.items()]
        path.write_text(head + "\n".join(lines) + "\n")
    return paths


def _toml_value(value) -> str:
    """A number, string or list of them in TOML, a list on one line."""
    import json

    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(float(value)) if isinstance(value, float) else str(int(value))


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m calibration.profiles.tpcc_postgres",
                           description="TPC-C model inputs from a PostgreSQL recording (mva trace tpcc)")
    parser.add_argument("recording", help="directory written by mva trace tpcc")
    parser.add_argument("--data", default="data/tpcc", help="where the cN-postgres.toml files go")
    parser.add_argument("--packaged", action="store_true", help="also replace the profile the package ships")
    parser.add_argument("--excerpts", metavar="DIR", help="also store a short copy of the recording in DIR (the "
                                                           "tests' data/traces/tpcc) with its cache table")
    parser.add_argument("--force", action="store_true", help="replace existing files")
    args = parser.parse_args(argv)
    try:
        recording = Path(args.recording)
        if not (recording / "tpcc.toml").is_file():
            raise ModelError("recording", f"{recording} has no tpcc.toml (record with mva trace tpcc)")
        prof = profile(recording)
        cache = cache_table(recording / "tpcc.toml")
        values = model_values(prof, cache)
        paths = write_model_files(values, args.data, args.force)
        if args.packaged:
            prof.to_csv(PROFILE_CSV, index=False, quoting=csv.QUOTE_MINIMAL)
            cache.to_csv(CACHE_CSV, index=False)
        if args.excerpts:
            from ..sim.tpcc_recorder import excerpt

            manifest = excerpt(recording, args.excerpts)
            cache_table(manifest).to_csv(Path(args.excerpts) / "cache-excerpts.csv", index=False)
    except ModelError as exc:
        print(f"tpcc_postgres: {exc}", file=sys.stderr)
        return 2
    print(prof[["transaction", "segments", "instructions", "memory_reads", "memory_writes", "disk_reads",
                "disk_writes"]].to_string(index=False))
    print(cache.to_string(index=False))
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0


if __name__ == "__main__":
    from mva.output import exit_with

    exit_with(main, "python -m calibration.profiles.tpcc_postgres")
