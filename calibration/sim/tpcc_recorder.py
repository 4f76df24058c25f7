"""TPC-C on PostgreSQL recorded the way Du, Zhang, Dong & Zhang (JPDC 2001, §4) did it:
the database's own work per transaction, then its backends' references for the simulator.

``mva trace tpcc -o DIR`` (or :func:`record`) does three steps on a scaled-down database
(:mod:`calibration.sim.tpcc_db`) in a throw-away cluster (:mod:`calibration.sim.pgserver`):

1. **Block I/O per transaction type and table** (:func:`measure_io`): one terminal runs
   a warm-up of the mix, then each type alone (``io_transactions`` of it), with every
   server process under ``strace``; each ``pread``/``pwrite`` of a relation file is one
   block read or written (8 KiB), attributed to its table (a table's indexes and TOAST
   count as the table), the write-ahead log (``log``) or PostgreSQL's own catalogs and
   commit log (``system``).  A ``CHECKPOINT`` before and after each batch makes the
   batch's dirty blocks its own writes.  This is the paper's Table 6 disk columns ("by
   running each transaction on an SMP with one processor, one I/O bus and one disk").
2. **Address traces** (:func:`trace`): the server under valgrind's lackey
   (``--trace-mem=yes``, one log per process) and ``terminals`` terminals running the
   mix concurrently, back to back.  Each terminal warms up, then runs ``SELECT
   pg_sleep(0)`` before every measured transaction and after the last: the first
   instruction of PostgreSQL's ``pg_sleep`` is the marker that cuts its backend's trace
   into one segment per transaction.  Two empty segments per terminal (two markers in
   a row) measure what the markers themselves cost, which the profile subtracts.
3. **Conversion**: per backend an ``.npz`` trace of the measured window, a
   ``tpcc-segments.csv`` (instructions, loads and stores of every segment, with its
   transaction type), and the manifest ``tpcc.toml`` whose ``[[shared]]`` ranges are the
   server's shared memory segments (the buffer pool, lock tables, the log buffers:
   every ``rw-s`` mapping of the postmaster, inherited by every backend at the same
   address); everything else is private to its backend.

:mod:`calibration.profiles.tpcc_postgres` turns a recording into the TPC-C model's
inputs.  Needs PostgreSQL's server, valgrind, strace and psycopg (``apt-get install
postgresql valgrind strace``; ``pip install 'mva-smp[postgres]'``).
"""
from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import numpy as np

from mva.errors import ModelError
from mva.jit import jit

from . import tpcc_db
from .pgserver import PostgresServer, create_database, server_settings
from .traces import IFETCH, LOAD, STORE, Chunk, limited, read_lackey, read_npz, write_npz

__all__ = ["record", "excerpt", "prepare", "measure_io", "trace", "database_bytes", "convert_backend", "read_io", "IO_RELATIONS", "MIX"]

#: The paper's mix (Du et al., Table 2; New-Order the remaining 45%).
MIX = (0.45, 0.43, 0.04, 0.04, 0.04)
#: Where a block of I/O goes: the nine tables, the write-ahead log, PostgreSQL's own files.
IO_RELATIONS = tpcc_db.TABLES + ("log", "system")
MARKER_SQL = "SELECT pg_sleep(0)"
IDLE = "idle"


def _tool(name: str) -> str:
    """The program ``name`` on the PATH (or in /usr/sbin, where Debian puts servers), or a
    ModelError saying how to install it."""
    path = shutil.which(name) or (f"/usr/sbin/{name}" if Path(f"/usr/sbin/{name}").is_file() else None)
    if path is None:
        raise ModelError(name, f"{name} is not installed (apt-get install {name})")
    return path


def prepare(directory, scale: tpcc_db.Scale, seed: int = 1, settings: dict | None = None) -> dict:
    """Create the cluster in ``directory``, create and load the database, checkpoint and
    stop; returns rows per table."""
    def populate(conn):
        tpcc_db.create_schema(conn)
        return tpcc_db.load(conn, scale, seed)
    return create_database(directory, "tpcc", populate, settings)


def database_bytes(cluster, settings: dict | None = None) -> int:
    """Bytes on disk of the nine tables with their indexes and TOAST in a prepared cluster."""
    work = Path(cluster).parent / "size-run"
    _copy_cluster(Path(cluster), work)
    server = PostgresServer(work, settings)
    server.start()
    try:
        with server.connect() as conn, conn.cursor() as cur:
            cur.execute("SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c WHERE c.relname = ANY(%s) "
                        "AND c.relkind = 'r'", (list(tpcc_db.TABLES),))
            total = int(cur.fetchone()[0])
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return total


def _copy_cluster(source: Path, target: Path) -> None:
    """A fresh copy of a prepared cluster (every run starts from the loaded database)."""
    if target.exists():
        shutil.rmtree(target)
    subprocess.run(["cp", "-a", str(source), str(target)], check=True)
    for stale in ("postmaster.pid",):
        (target / "data" / stale).unlink(missing_ok=True)


def _relations(conn) -> dict:
    """relfilenode -> table name, for every table, index and TOAST relation of the nine
    tables (an index or TOAST table counts as its table)."""
    with conn.cursor() as cur:
        cur.execute("""
            SELECT c.relfilenode, t.relname FROM pg_class t JOIN pg_class c ON c.oid = t.oid
              OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = t.oid) OR c.oid = t.reltoastrelid
              OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = t.reltoastrelid)
            WHERE t.relname = ANY(%s) AND t.relkind = 'r'""", (list(tpcc_db.TABLES),))
        out = {int(node): name for node, name in cur.fetchall() if node}
    conn.commit()
    return out


def _server_pids(postmaster: int) -> list:
    """The postmaster and its children."""
    pids = [postmaster]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                pids.append(int(entry))
    return pids


def _classify_io(log: Path, relations: dict) -> dict:
    """(reads, writes) per relation of :data:`IO_RELATIONS` from an strace log."""
    counts = {name: [0, 0] for name in IO_RELATIONS}
    with open(log, errors="replace") as fh:
        for line in fh:
            call = line.split(None, 1)[-1]
            kind = 0 if call.startswith("pread") else 1 if call.startswith("pwrite") else None
            if kind is None or " = -1 " in call:
                continue
            lo, hi = call.find("<"), call.find(">")
            path = call[lo + 1:hi] if 0 <= lo < hi else ""
            if "/pg_wal/" in path:
                name = "log"
            else:
                node = path.rsplit("/", 1)[-1].split(".")[0].split("_")[0]
                name = relations.get(int(node), "system") if node.isdigit() and "/base/" in path else "system"
            counts[name][kind] += 1
    return counts


def measure_io(cluster, out_csv, transactions: int = 40, warmup: int = 200, seed: int = 1,
               scale: tpcc_db.Scale | None = None, settings: dict | None = None) -> list:
    """Step 1 of the module: block reads and writes per transaction of each type and
    relation, written to ``out_csv`` (columns transaction, relation, reads, writes per
    transaction, transactions); returns the rows."""
    strace = _tool("strace")
    scale = scale or tpcc_db.Scale()
    work = Path(cluster).parent / "io-run"
    _copy_cluster(Path(cluster), work)
    server = PostgresServer(work, settings)
    server.start()
    rows = []
    try:
        conn = server.connect()
        relations = _relations(conn)
        terminal = tpcc_db.Terminal(conn, scale, seed)
        rng = np.random.default_rng(seed)
        for kind in rng.choice(tpcc_db.TRANSACTIONS, size=warmup, p=MIX):
            terminal.run(str(kind))
        for kind in tpcc_db.TRANSACTIONS:
            conn.execute("CHECKPOINT")
            conn.commit()
            log = work / f"strace-{kind}.log"
            attach = sum((["-p", str(p)] for p in _server_pids(server.postmaster_pid())), [])
            tracer = subprocess.Popen([strace, "-qq", "-f", "-s", "0", "-y", "-o", str(log), "-e",
                                       "trace=pread64,pwrite64,preadv,pwritev,preadv2,pwritev2", *attach],
                                      stderr=subprocess.DEVNULL)
            time.sleep(1.0)                     # strace attaches before the batch starts
            for _ in range(transactions):
                terminal.run(kind)
            conn.execute("CHECKPOINT")
            conn.commit()
            time.sleep(0.5)
            tracer.send_signal(signal.SIGINT)
            tracer.wait(60)
            for name, (reads, writes) in _classify_io(log, relations).items():
                rows.append({"transaction": kind, "relation": name, "reads": reads / transactions,
                             "writes": writes / transactions, "transactions": transactions})
        conn.close()
    finally:
        server.stop()
    with open(out_csv, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def read_io(path) -> dict:
    """``{transaction: {relation: (reads, writes)}}`` per transaction from a
    ``tpcc-io.csv``."""
    out = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            out.setdefault(row["transaction"], {})[row["relation"]] = (float(row["reads"]), float(row["writes"]))
    return out


# --- step 2: traces -----------------------------------------------------------------------

def _binary_base(pid: int, binary: Path) -> int:
    """Load address of ``binary`` in process ``pid`` (its mapping at file offset 0)."""
    target = str(binary.resolve())
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[5] == target and int(fields[2], 16) == 0:
            return int(fields[0].split("-")[0], 16)
    raise ModelError("server", f"{target} is not mapped in process {pid}")


def _symbol_offset(binary: Path, name: str) -> int:
    done = subprocess.run([_tool("nm"), "-D", "--defined-only", str(binary)], capture_output=True, text=True,
                          check=True)
    for line in done.stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[2] == name:
            return int(fields[0], 16)
    raise ModelError("server", f"{binary} exports no {name} (the trace marker)")


def _terminal_run(server, scale, seed, plan, warmup, record_pid, errors):
    try:
        conn = server.connect()
        with conn.cursor() as cur:
            cur.execute("SELECT pg_backend_pid()")
            record_pid(cur.fetchone()[0])
        conn.commit()
        terminal = tpcc_db.Terminal(conn, scale, seed)
        for kind in warmup:
            terminal.run(kind)
        conn.autocommit = True
        conn.execute(MARKER_SQL)
        conn.autocommit = False
        for kind in plan:
            if kind != IDLE:
                terminal.run(kind)
            conn.autocommit = True
            conn.execute(MARKER_SQL)
            conn.autocommit = False
        conn.close()
    except Exception as exc:        # noqa: BLE001 (reported by the caller)
        errors.append(exc)


def trace(cluster, out, terminals: int = 8, transactions: int = 12, warmup: int = 1, seed: int = 1,
          scale: tpcc_db.Scale | None = None, keep_logs: bool = False, count: int = 10,
          settings: dict | None = None) -> dict:
    """Step 2 and 3 of the module into ``out``; returns the recording's facts.  After the
    concurrent terminals, one terminal alone runs ``count`` transactions of each type
    (terminal 0 in ``tpcc-segments.csv``; its trace is not kept): the per-type means
    then rest on at least ``count`` transactions of every type, where the mix alone
    gives a rare type a few."""
    valgrind = _tool("valgrind")
    scale = scale or tpcc_db.Scale()
    out = Path(out)
    work = Path(cluster).parent / "trace-run"
    _copy_cluster(Path(cluster), work)
    raw = work / "lackey"
    raw.mkdir()
    server = PostgresServer(work, settings)
    server.own(raw)
    rng = np.random.default_rng(seed)
    plans = [[IDLE, IDLE] + [str(k) for k in rng.choice(tpcc_db.TRANSACTIONS, size=transactions, p=MIX)]
             for _ in range(terminals)]
    # each backend warms its caches with every type once (``warmup`` rounds), in its own order
    warmups = [[str(k) for _ in range(warmup) for k in rng.permutation(tpcc_db.TRANSACTIONS)]
               for _ in range(terminals)]
    t0 = time.perf_counter()
    server.start(wrapper=[valgrind, "--tool=lackey", "--trace-mem=yes", f"--log-file={raw}/lackey.%p"])
    try:
        binary = server.bindir / "postgres"
        marker = _binary_base(server.postmaster_pid(), binary) + _symbol_offset(binary, "pg_sleep")
        shared = server.shared_mappings()
        pids, errors = [None] * terminals, []
        threads = [threading.Thread(target=_terminal_run, args=(server, scale, seed + 1 + t, plans[t], warmups[t],
                                                                 lambda p, t=t: pids.__setitem__(t, p), errors))
                   for t in range(terminals)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        # then one terminal alone runs every type ``count`` times: the per-type counts
        count_plan = [IDLE, IDLE] + [kind for kind in tpcc_db.TRANSACTIONS for _ in range(count)]
        count_pid = []
        if count and not errors:
            _terminal_run(server, scale, seed + 1000, count_plan, list(tpcc_db.TRANSACTIONS), count_pid.append,
                          errors)
    finally:
        server.stop()
    traced = time.perf_counter() - t0
    if errors:
        raise ModelError("terminal", f"a terminal failed under valgrind: {errors[0]}")
    lackey_bytes = sum(f.stat().st_size for f in raw.glob("lackey.*"))
    t1 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    segments, totals = [], {"references": 0, "instructions": 0}
    for t, pid in enumerate(pids):
        counts, segs = convert_backend(raw / f"lackey.{pid}", out / f"tpcc-t{t + 1}.npz", marker, len(plans[t]))
        for k in totals:
            totals[k] += counts[k]
        for index, (kind, seg) in enumerate(zip(plans[t], segs, strict=True)):
            segments.append({"terminal": t + 1, "segment": index, "transaction": kind, **seg})
    if count:
        _, segs = convert_backend(raw / f"lackey.{count_pid[0]}", None, marker, len(count_plan))
        for index, (kind, seg) in enumerate(zip(count_plan, segs, strict=True)):
            segments.append({"terminal": 0, "segment": index, "transaction": kind, **seg})
    with open(out / "tpcc-segments.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(segments[0]))
        writer.writeheader()
        writer.writerows(segments)
    facts = {"terminals": terminals, "transactions_per_terminal": transactions, "warmup_per_terminal": warmup,
             "count_transactions_per_type": count,
             "warehouses": scale.warehouses, "scale_factor": scale.factor, "seed": seed,
             "trace_seconds": round(traced, 1), "lackey_bytes": lackey_bytes, **totals,
             "convert_seconds": round(time.perf_counter() - t1, 1)}
    _write_manifest(out / "tpcc.toml", terminals, shared, facts)
    if not keep_logs:
        shutil.rmtree(raw)
    return facts


SEGMENT_COUNTS = ("instructions", "loads", "stores")


@jit
def _segment_chunk(op, addr, marker, state, per_segment, out_op, out_addr, out_size, size):
    """Cut one chunk at marker fetches: ``state`` = (segment index, -1 before the first
    marker; markers expected); references inside the window go to the outputs and are
    counted per segment.  Returns the references written."""
    n = 0
    for i in range(op.shape[0]):
        if op[i] == IFETCH and addr[i] == marker:
            state[0] += 1
            continue
        k = state[0]
        if k < 0 or k >= state[1]:
            continue
        out_op[n] = op[i]
        out_addr[n] = addr[i]
        out_size[n] = size[i]
        n += 1
        per_segment[k, op[i]] += 1
    return n


def convert_backend(lackey_path, npz_path, marker: int, segments: int) -> tuple:
    """One backend's lackey log to an ``.npz`` trace of its measured window (from its
    first marker to its last; none written if ``npz_path`` is None) and the
    instructions, loads and stores of each of its ``segments`` segments.  Returns
    (counts, list of per-segment dicts)."""
    state = np.array([-1, segments], np.int64)
    per_segment = np.zeros((segments, 3), np.int64)        # columns IFETCH, LOAD, STORE
    assert (IFETCH, LOAD, STORE) == (0, 1, 2)

    def chunks():
        for c in read_lackey(lackey_path):
            out_op = np.empty(len(c), np.uint8)
            out_addr = np.empty(len(c), np.uint64)
            out_size = np.empty(len(c), np.uint16)
            n = _segment_chunk(c.op, c.addr, np.uint64(marker), state, per_segment, out_op, out_addr, out_size,
                               c.size)
            if n:
                yield Chunk(out_op[:n], out_addr[:n], out_size[:n], np.zeros(n, np.bool_))
    if npz_path is None:
        for _ in chunks():
            pass
    else:
        write_npz(npz_path, chunks())
    if state[0] < segments:
        raise ModelError("trace", f"{lackey_path}: {max(int(state[0]) + 1, 0)} markers found, "
                                  f"{segments + 1} expected (did the terminal finish?)")
    segs = [dict(zip(SEGMENT_COUNTS, (int(x) for x in row), strict=True)) for row in per_segment]
    counts = {"instructions": int(per_segment[:, 0].sum()), "references": int(per_segment[:, 1:].sum())}
    return counts, segs


def _write_manifest(path: Path, terminals: int, shared: list, facts: dict) -> None:
    import tomli_w

    doc = {"name": "tpcc",
           "description": f"TPC-C on PostgreSQL, {terminals} terminals' backends, scaled 1/{facts['scale_factor']} "
                          f"({facts['warehouses']} warehouse), valgrind lackey",
           "recording": facts,
           "process": [{"name": f"t{t + 1}", "trace": f"tpcc-t{t + 1}.npz", "format": "npz"}
                       for t in range(terminals)],
           "shared": [{"name": _label(label, k), "start": lo, "end": hi, "processes": "all"}
                      for k, (lo, hi, label) in enumerate(shared)]}
    path.write_text(tomli_w.dumps(doc))


def _label(label: str, k: int) -> str:
    if "zero" in label:
        return "main"
    if "SYSV" in label:
        return "sysv"
    return f"segment{k}"


def record(out, terminals: int = 8, transactions: int = 12, warmup: int = 1, io_transactions: int = 40,
           count: int = 10, seed: int = 1, warehouses: int = 1, workdir=None, keep_logs: bool = False,
           force: bool = False, buffer_pool: str | None = None) -> dict:
    """The module's three steps into ``out`` (a work directory under it unless
    ``workdir``): ``tpcc-io.csv``, ``tpcc-segments.csv``, the traces and ``tpcc.toml``.
    ``buffer_pool`` is PostgreSQL's ``shared_buffers`` (e.g. ``"1MB"``; default
    :data:`calibration.sim.pgserver.SCALED_SETTINGS`'s).  Returns the facts (written into
    the manifest)."""
    out = Path(out)
    if out.exists() and any(out.iterdir()) and not force:
        raise ModelError("-o", f"{out} is not empty (give --force to replace a recording)")
    out.mkdir(parents=True, exist_ok=True)
    scale = tpcc_db.Scale(warehouses=warehouses)
    work = Path(workdir) if workdir else out / "work"
    cluster = work / "cluster"
    if cluster.exists():
        shutil.rmtree(cluster)
    t0 = time.perf_counter()
    settings = {"shared_buffers": buffer_pool} if buffer_pool else None
    rows = prepare(cluster, scale, seed, settings)
    measure_io(cluster, out / "tpcc-io.csv", io_transactions, seed=seed, scale=scale, settings=settings)
    io_seconds = time.perf_counter() - t0
    facts = trace(cluster, out, terminals, transactions, warmup, seed, scale, keep_logs, count, settings)
    facts.update({"io_seconds": round(io_seconds, 1), "io_transactions_per_type": io_transactions,
                  "rows": rows, "buffer_pool": server_settings(settings)["shared_buffers"],
                  "database_bytes": database_bytes(cluster, settings)})
    _add_facts(out / "tpcc.toml", facts)
    if not workdir and not keep_logs:
        shutil.rmtree(work)
    return facts


def _add_facts(manifest: Path, facts: dict) -> None:
    """The whole recording's facts as the manifest's ``[recording]``."""
    import tomllib

    import tomli_w

    doc = tomllib.loads(manifest.read_text())
    doc["recording"] = facts
    manifest.write_text(tomli_w.dumps(doc))


def excerpt(recording, out, references: int = 200_000) -> Path:
    """A short copy of a recording in ``out`` (the stored excerpts): both CSVs whole, each
    backend's trace cut to its first ``references`` references, the manifest with the
    same shared ranges.  Returns the manifest's path."""
    import tomllib

    import tomli_w

    recording, out = Path(recording), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("tpcc-io.csv", "tpcc-segments.csv"):
        shutil.copy(recording / name, out / name)
    doc = tomllib.loads((recording / "tpcc.toml").read_text())
    for proc in doc["process"]:
        write_npz(out / proc["trace"], limited(read_npz(recording / proc["trace"]), references))
    doc["recording"]["excerpt_references"] = references
    doc["description"] += f", the first {references:,} references of each backend"
    (out / "tpcc.toml").write_text(tomli_w.dumps(doc))
    return out / "tpcc.toml"
