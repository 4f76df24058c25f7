"""A throw-away PostgreSQL cluster for recording a database workload.

:class:`PostgresServer` creates a cluster with ``initdb`` in a directory of its own,
starts the server (optionally under a wrapper such as ``valgrind --tool=lackey``),
hands out connections (psycopg 3) over a Unix socket in that directory, and stops it.
Nothing outside the directory is touched: no system service, no TCP port.  PostgreSQL
refuses to run as root, so when this process is root the server runs as the ``postgres``
user (created by Debian's ``postgresql`` package) through ``runuser``.

The server binaries are found, in this order, in ``bindir``, the ``MVA_PG_BINDIR``
environment variable, the newest ``/usr/lib/postgresql/*/bin`` (Debian, Ubuntu), and the
``PATH``.  ``apt-get install postgresql`` provides them.
"""
from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from mva.errors import ModelError

__all__ = ["PostgresServer", "find_bindir", "server_settings", "SCALED_SETTINGS", "copy_rows", "create_database"]

#: Settings of the recorded server: the paper's scaled-down machine (Du et al., Table 8:
#: 256 KB of memory for a database scaled down 100 times) as a small buffer pool, so that
#: table and index blocks are read and written as the database works; no background
#: vacuum or timed checkpoint to disturb a measured batch; durable commits (a commit
#: writes and flushes the log, as a TPC-C system must).
SCALED_SETTINGS = {
    "shared_buffers": "256kB", "max_connections": "24", "autovacuum": "off", "fsync": "on",
    "synchronous_commit": "on", "full_page_writes": "on", "checkpoint_timeout": "1d", "max_wal_size": "1GB",
    "jit": "off", "listen_addresses": "", "huge_pages": "off", "max_worker_processes": "0",
    "max_parallel_workers_per_gather": "0", "dynamic_shared_memory_type": "mmap", "bgwriter_lru_maxpages": "0",
    "track_io_timing": "off", "logging_collector": "off", "log_min_messages": "warning",
}


def find_bindir(bindir=None) -> Path:
    """The directory holding ``initdb`` and ``postgres`` (see the module)."""
    candidates = [bindir, os.environ.get("MVA_PG_BINDIR")]
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: _version(p.parent.name))
    candidates += [str(p) for p in reversed(versions)]
    on_path = shutil.which("postgres")
    if on_path:
        candidates.append(str(Path(on_path).parent))
    for c in candidates:
        if c and (Path(c) / "initdb").is_file() and (Path(c) / "postgres").is_file():
            return Path(c)
    given = bindir or os.environ.get("MVA_PG_BINDIR")
    where = f"{given} has no initdb and postgres" if given else "no PostgreSQL server found"
    raise ModelError("bindir", f"{where}: apt-get install postgresql, or give the server's bin directory")


def _version(text: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", text)) or (0,)


def server_settings(overrides: dict | None = None) -> dict:
    """:data:`SCALED_SETTINGS` with ``overrides`` (PostgreSQL's names and values, strings)."""
    return {**SCALED_SETTINGS, **{k: str(v) for k, v in (overrides or {}).items()}}


class PostgresServer:
    """One cluster in ``directory`` (created if needed).  Use as a context manager or call
    :meth:`start` and :meth:`stop`; :meth:`connect` opens a psycopg connection."""

    def __init__(self, directory, settings: dict | None = None, bindir=None, user: str = "tpcc"):
        self.directory = Path(directory).resolve()
        self.data = self.directory / "data"
        self.socket = self.directory / "socket"
        self.bindir = find_bindir(bindir)
        self.settings = server_settings(settings)
        self.user = user
        self.process: subprocess.Popen | None = None
        self._run_as = self._unprivileged_user()

    # --- set-up -----------------------------------------------------------------------

    @staticmethod
    def _unprivileged_user():
        if os.geteuid() != 0:
            return None
        try:
            return pwd.getpwnam("postgres")
        except KeyError:
            raise ModelError("user", "running as root, and there is no 'postgres' user to run the server as "
                                     "(apt-get install postgresql creates it)") from None

    def _command(self, argv: list) -> list:
        if self._run_as is None:
            return argv
        return ["runuser", "-u", self._run_as.pw_name, "--", *argv]

    def own(self, path: Path) -> None:
        """Give ``path`` to the server's user (when this process is root)."""
        if self._run_as is not None:
            os.chown(path, self._run_as.pw_uid, self._run_as.pw_gid)

    def _check_reachable(self) -> None:
        """The server's user must be able to walk down to the directory."""
        if self._run_as is None:
            return
        import stat

        for parent in reversed(self.directory.parents):
            st = parent.stat()
            if not (st.st_mode & stat.S_IXOTH) and st.st_uid != self._run_as.pw_uid:
                raise ModelError("directory", f"the server runs as {self._run_as.pw_name}, who cannot enter {parent} "
                                              f"(mode {stat.filemode(st.st_mode)}): choose a directory below one "
                                              "every user can enter, such as /tmp or /work")

    def initdb(self) -> None:
        """Create the cluster (trust authentication over the socket only)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self._check_reachable()
        self.own(self.directory)
        self.socket.mkdir(exist_ok=True)
        self.own(self.socket)
        if (self.data / "PG_VERSION").is_file():
            return
        done = subprocess.run(self._command([str(self.bindir / "initdb"), "-D", str(self.data), "-U", self.user,
                                             "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"]),
                              capture_output=True, text=True)
        if done.returncode:
            raise ModelError("initdb", f"initdb failed in {self.data}: {_last_line(done.stderr)}")

    # --- running ----------------------------------------------------------------------

    def start(self, wrapper=(), timeout: float = 600.0, log: str = "server.log") -> None:
        """Start the server (under ``wrapper``, e.g. ``["valgrind", "--tool=lackey", ...]``)
        and wait until it accepts connections (at most ``timeout`` seconds)."""
        self.initdb()
        argv = [*wrapper, str(self.bindir / "postgres"), "-D", str(self.data), "-k", str(self.socket)]
        for name, value in self.settings.items():
            argv += ["-c", f"{name}={value}"]
        self._log = open(self.directory / log, "ab")
        self.process = subprocess.Popen(self._command(argv), stdout=self._log, stderr=subprocess.STDOUT,
                                        cwd=self.directory, start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise ModelError("server", f"PostgreSQL exited at start (code {self.process.returncode}): "
                                           f"{_last_line((self.directory / log).read_text(errors='replace'))}")
            try:
                self.connect("postgres").close()
                return
            except Exception:       # noqa: BLE001 (not ready yet: psycopg's OperationalError)
                if time.monotonic() > deadline:
                    self.stop()
                    raise ModelError("server", f"PostgreSQL did not accept connections within {timeout:.0f} s") \
                        from None
                time.sleep(0.2)

    def connect(self, dbname: str = "tpcc", autocommit: bool = False):
        """A psycopg connection to ``dbname`` over the cluster's socket."""
        import psycopg

        return psycopg.connect(host=str(self.socket), dbname=dbname, user=self.user, autocommit=autocommit)

    def postmaster_pid(self) -> int:
        """The server's main process (the first line of ``postmaster.pid``)."""
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def shared_mappings(self) -> list:
        """``(start, end, label)`` of the server's shared writable mappings (its shared
        memory segments, inherited by every backend at the same addresses), read from
        ``/proc/PID/maps`` of the postmaster."""
        out = []
        for line in Path(f"/proc/{self.postmaster_pid()}/maps").read_text().splitlines():
            fields = line.split(maxsplit=5)
            if len(fields) >= 2 and fields[1].startswith("rw") and fields[1][3] == "s":
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                out.append((lo, hi, fields[5] if len(fields) > 5 else ""))
        return out

    def stop(self, timeout: float = 600.0) -> None:
        """Fast shutdown (SIGINT to the postmaster), then wait; kill the group if it does not
        stop within ``timeout`` seconds."""
        if self.process is None:
            return
        if self.process.poll() is None:
            try:
                os.kill(self.postmaster_pid(), signal.SIGINT)       # the postmaster stops its children
                self.process.wait(timeout)
            except (FileNotFoundError, ValueError):
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
            except ProcessLookupError:
                pass
        self._log.close()
        self.process = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()


def copy_rows(conn, table: str, records) -> int:
    """``COPY`` ``records`` (tuples) into ``table``; returns how many were written."""
    n = 0
    with conn.cursor() as cur, cur.copy(f"COPY {table} FROM STDIN") as cp:
        for rec in records:
            cp.write_row(rec)
            n += 1
    return n


def create_database(directory, name: str, populate, settings: dict | None = None, user: str = "tpcc") -> dict:
    """Create the cluster in ``directory``, (re)create database ``name``, run
    ``populate(conn)`` (returns rows per table) on it, checkpoint and stop; returns what
    ``populate`` returned."""
    server = PostgresServer(directory, settings, user=user)
    server.start()
    try:
        with server.connect("postgres", autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {name}")
            c.execute(f"CREATE DATABASE {name}")
        with server.connect(name) as conn:
            rows = populate(conn)
            conn.execute("CHECKPOINT")
    finally:
        server.stop()
    return rows


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"
