"""TPC-W recorded the way Foglia, Giorgi & Prete (IEE Proc. Computers and Digital
Techniques, 2004, §3-4) did it: Apache, PostgreSQL and UNIX utilities traced, then
composed into the paper's three workloads.

``mva trace tpcw -o DIR`` (or :func:`record`) does four steps in ``DIR/run``:

1. **The database** (:func:`prepare`): a throw-away PostgreSQL cluster
   (:mod:`calibration.sim.pgserver`) loaded with the TPC-W population of
   :mod:`calibration.sim.tpcw_db`.
2. **The servers, traced**: PostgreSQL and Apache (Debian's ``apache2``, prefork MPM with
   mod_php, configured as the paper says: at least 8 and at most 40 idle children, 100
   requests a child) each under ``valgrind --tool=lackey --trace-mem=yes
   --trace-syscalls=yes`` with one log per process.  Apache serves the fourteen web
   interactions from the project's PHP application (``tpcw_app/tpcw.php``); every Apache
   child keeps one persistent connection, so one PostgreSQL backend.
3. **The load**: ``ebs`` emulated browsers (threads here, not traced) each run
   ``interactions`` web interactions drawn from a TPC-W mix (clause 5.2.1; shopping by
   default), with no think time, each page followed by its logo image; then the UNIX
   utilities of the paper's Table 1 (``ls``, ``awk``, ``cp``, ``gzip``, ``rm``) run once
   each, traced the same way.
4. **Conversion**: per process an ``.npz`` of its window (an Apache child from its first
   ``accept4``, a backend from the marker query its Apache child sends first, a utility
   whole), with the kernel references of :mod:`calibration.sim.kernel_model` at every
   system call; then three manifests, the paper's workloads: ``ec-server.toml`` (13
   Apache children, 8 backends, 5 utilities), ``db.toml`` (21 backends, 5 utilities) and
   ``web-server.toml`` (26 Apache children), each taking the busiest processes.  Their
   ``[[shared]]`` ranges are PostgreSQL's shared memory (buffers, locks, the log buffer)
   among its backends, Apache's shared mappings (the scoreboard, PHP's opcode cache)
   among its children, each server's program and library text among its processes, and
   the kernel's shared structures among all; everything else is private.

Needs apache2, libapache2-mod-php, php-pgsql, PostgreSQL's server, valgrind and psycopg
(``apt-get install apache2 libapache2-mod-php php-pgsql postgresql valgrind``;
``pip install 'mva-smp[postgres]'``).
"""
from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np

from mva.errors import ModelError

from . import tpcw_db
from .kernel_model import KERNEL_SHARED, KERNEL_SHARED_END, KERNEL_TEXT, KernelModel, with_kernel
from .pgserver import PostgresServer, create_database
from .tpcc_recorder import _tool
from .syscall_trace import read_lackey_syscalls
from .traces import IFETCH, LOAD, STORE, write_npz

__all__ = ["record", "prepare", "serve_and_browse", "convert", "convert_process", "compose", "excerpt",
           "WORKLOADS", "UTILITIES", "EmulatedBrowser", "APP"]

APP = Path(__file__).with_name("tpcw_app")
#: The paper's three workloads (§4): (Apache children, PostgreSQL backends, utilities).
WORKLOADS = {"ec-server": (13, 8, 5), "db": (0, 21, 5), "web-server": (26, 0, 0)}
#: The paper's Table 1 utilities and what each does here (inputs written by the recorder).
UTILITIES = {"awk": ["awk", "{ n[$3]++ } END { for (w in n) print w, n[w] }", "words.txt"],
             "cp": ["cp", "words.txt", "words-copy.txt"],
             "gzip": ["gzip", "-c", "-6", "words.txt"],
             "rm": ["rm", "-f", "words-copy.txt"],
             "ls": ["ls", "-alR", "/usr/share/doc/apache2", "/usr/share/doc/postgresql-common", "/usr/lib/apache2"]}
SETTINGS = {"shared_buffers": "32MB", "max_connections": "80", "synchronous_commit": "off"}
LACKEY = ("--tool=lackey", "--trace-mem=yes", "--trace-syscalls=yes")


def _php_module() -> Path:
    found = sorted(Path("/usr/lib/apache2/modules").glob("libphp*.so"))
    if not found:
        raise ModelError("apache2", "mod_php is not installed (apt-get install libapache2-mod-php php-pgsql)")
    return found[-1]


def prepare(directory, scale: tpcw_db.Scale, seed: int = 1) -> dict:
    """Create the cluster in ``directory`` with the loaded TPC-W database; returns rows
    per table."""
    def populate(conn):
        tpcw_db.create_schema(conn)
        return tpcw_db.load(conn, scale, seed)
    return create_database(directory, "tpcw", populate, SETTINGS)


# --- Apache ---------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _apache_conf(root: Path, docroot: Path, port: int, pg: PostgresServer, run: Path, items: int,
                 start_servers: int) -> Path:
    """An Apache configuration of its own (nothing of the system's): prefork, the paper's
    child limits (§3), mod_php, the application's environment."""
    user = "www-data" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
    modules = Path("/usr/lib/apache2/modules")
    conf = root / "apache2.conf"
    conf.write_text(f"""ServerRoot "{root}"
ServerName localhost
Listen 127.0.0.1:{port}
PidFile "{root}/apache2.pid"
DefaultRuntimeDir "{root}"
ErrorLog "{root}/error.log"
LogLevel warn
{"User " + user + chr(10) + "Group " + user if os.geteuid() == 0 else ""}
LoadModule mpm_prefork_module {modules}/mod_mpm_prefork.so
LoadModule authz_core_module {modules}/mod_authz_core.so
LoadModule dir_module {modules}/mod_dir.so
LoadModule mime_module {modules}/mod_mime.so
LoadModule env_module {modules}/mod_env.so
LoadModule php_module {_php_module()}
StartServers {start_servers}
MinSpareServers 8
MaxSpareServers 40
ServerLimit 64
MaxRequestWorkers 64
MaxConnectionsPerChild 100
KeepAlive Off
TypesConfig /etc/mime.types
DocumentRoot "{docroot}"
<Directory "{docroot}">
  Require all granted
</Directory>
<FilesMatch "\\.php$">
  SetHandler application/x-httpd-php
</FilesMatch>
SetEnv TPCW_PG "host={pg.socket} dbname=tpcw user={pg.user}"
SetEnv TPCW_RUN "{run}"
SetEnv TPCW_ITEMS "{items}"
""")
    return conf


def _docroot(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    shutil.copy(APP / "tpcw.php", path / "tpcw.php")
    (path / "img").mkdir(exist_ok=True)
    # a 1,024-byte GIF-sized image (its bytes do not matter to the traces, its size does)
    (path / "img" / "logo.gif").write_bytes(b"GIF89a" + bytes(range(256)) * 4)
    return path


def _wait_port(port: int, process: subprocess.Popen, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise ModelError("apache2", f"{what} exited at start (code {process.returncode})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise ModelError("apache2", f"{what} did not accept connections within {timeout:.0f} s") from None
            time.sleep(0.5)


# --- the emulated browsers ------------------------------------------------------------------

class EmulatedBrowser:
    """One TPC-W emulated browser: a session (customer, shopping cart) and the next
    interaction drawn from ``mix`` (clause 5.2.1 percentages); a purchase follows the
    specification's path (an item in the cart before Buy Request and Buy Confirm)."""

    def __init__(self, base: str, scale: tpcw_db.Scale, mix: str, seed: int):
        if mix not in tpcw_db.MIXES:
            raise ModelError("mix", f"unknown mix {mix!r}; choose {', '.join(tpcw_db.MIXES)}")
        self.base = base
        self.scale = scale
        p = np.array(tpcw_db.MIXES[mix], dtype=float)
        self.p = p / p.sum()
        self.rng = np.random.default_rng(seed)
        self.c_id = int(self.rng.integers(1, scale.customers + 1))
        self.sc_id = 0
        self.cart_items = 0
        self.done: dict = {}

    def _get(self, params: dict) -> str:
        query = "&".join(f"{k}={urllib.request.quote(str(v))}" for k, v in params.items())
        with urllib.request.urlopen(f"{self.base}/tpcw.php?{query}", timeout=3600) as r:
            body = r.read().decode(errors="replace")
        with urllib.request.urlopen(f"{self.base}/img/logo.gif", timeout=3600) as r:
            r.read()
        return body

    @staticmethod
    def _field(body: str, name: str) -> int:
        tag = f'<p id="{name}">'
        k = body.find(tag)
        return int(body[k + len(tag):body.index("<", k + len(tag))]) if k >= 0 else 0

    def step(self) -> str:
        """Run one interaction drawn from the mix; returns its name."""
        wi = tpcw_db.INTERACTIONS[int(self.rng.choice(len(self.p), p=self.p))]
        if wi in ("buy_request", "buy_confirm") and self.cart_items == 0:
            wi = "shopping_cart"                        # the path to a purchase goes through the cart
        return self.visit(wi)

    def visit(self, wi: str) -> str:
        """Run the interaction ``wi`` (a name of :data:`~calibration.sim.tpcw_db.INTERACTIONS`)
        with this session's state; returns the page."""
        if wi not in tpcw_db.INTERACTIONS:
            raise ModelError("interaction", f"unknown web interaction {wi!r}")
        rng = self.rng
        subject = tpcw_db.SUBJECTS[int(rng.integers(len(tpcw_db.SUBJECTS)))]
        item = int(rng.integers(1, self.scale.items + 1))
        params = {"wi": wi, "c_id": self.c_id, "sc_id": self.sc_id}
        if wi in ("new_products", "best_sellers"):
            params["subject"] = subject
        elif wi in ("product_detail", "admin_request", "admin_confirm"):
            params["i_id"] = item
        elif wi == "search_result":
            kind = ("author", "title", "subject")[int(rng.integers(3))]
            params.update(type=kind, search=subject if kind == "subject" else chr(65 + int(rng.integers(26))))
        elif wi == "shopping_cart":
            params.update(i_id=item, qty=int(rng.integers(1, 4)))
        body = self._get(params)
        if wi == "shopping_cart":
            self.sc_id = self._field(body, "sc_id") or self.sc_id
            self.cart_items += 1
        elif wi == "buy_confirm" and self._field(body, "o_id"):
            self.cart_items = 0
        self.done[wi] = self.done.get(wi, 0) + 1
        self.last_page = body
        return wi


def _browse(base: str, scale, ebs: int, interactions: int, mix: str, seed: int) -> dict:
    """Run the browsers concurrently; returns interactions by name (all browsers)."""
    browsers = [EmulatedBrowser(base, scale, mix, seed + 1 + k) for k in range(ebs)]
    errors = []

    def run(b):
        try:
            for _ in range(interactions):
                b.step()
        except Exception as exc:        # noqa: BLE001 (reported below)
            errors.append(exc)
    threads = [threading.Thread(target=run, args=(b,)) for b in browsers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise ModelError("browser", f"an emulated browser failed: {errors[0]}")
    out = {}
    for b in browsers:
        for k, v in b.done.items():
            out[k] = out.get(k, 0) + v
    return out


def _mappings(pid: int) -> list:
    """``(start, end, perms, path)`` of every mapping of process ``pid``."""
    out = []
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        out.append((lo, hi, fields[1], fields[5] if len(fields) > 5 else ""))
    return out


def _shared_ranges(pid: int, program: str) -> list:
    """What a server's processes share (read from its first process): its writable
    shared mappings and the text of its program and libraries (not valgrind's)."""
    out = []
    for lo, hi, perms, path in _mappings(pid):
        if perms.startswith("rw") and perms[3] == "s":
            out.append((f"{program}-shm-{len(out)}", lo, hi))
        elif "x" in perms and path.startswith("/") and "valgrind" not in path:
            out.append((f"{program}-text-{Path(path).name}", lo, hi))
    return out


def serve_and_browse(cluster: Path, raw: Path, scale: tpcw_db.Scale, ebs: int, interactions: int, mix: str,
                     seed: int, traced: bool = True, start_servers: int | None = None) -> dict:
    """Step 2 and 3 of the module (``traced=False``: the same run without valgrind, for
    the tests); returns the facts of the run, the servers' shared ranges among them."""
    valgrind = _tool("valgrind") if traced else None
    apache = _tool("apache2")
    raw.mkdir(parents=True, exist_ok=True)
    os.chmod(raw, 0o1777)                       # the servers write their logs as their own users
    run = raw.parent / "app-run"
    run.mkdir(exist_ok=True)
    os.chmod(run, 0o1777)
    server = PostgresServer(cluster, SETTINGS, user="tpcc")
    wrap = [valgrind, *LACKEY, f"--log-file={raw}/pg.%p"] if traced else []
    t0 = time.perf_counter()
    server.start(wrapper=wrap, timeout=900)
    apache_process = None
    try:
        postmaster = server.postmaster_pid()
        port = _free_port()
        root = raw.parent / "apache"
        root.mkdir(exist_ok=True)
        docroot = _docroot(raw.parent / "htdocs")
        os.chmod(root, 0o755)
        conf = _apache_conf(root, docroot, port, server, run, scale.items, start_servers or ebs + 2)
        argv = [apache, "-f", str(conf), "-DFOREGROUND"]
        if traced:
            argv = [valgrind, *LACKEY, "--trace-children=yes", f"--log-file={raw}/apache.%p", *argv]
        apache_log = open(root / "stdout.log", "ab")
        apache_process = subprocess.Popen(argv, stdout=apache_log, stderr=subprocess.STDOUT, cwd=root,
                                          start_new_session=True, env=dict(os.environ, APACHE_LOCK_DIR=str(root)))
        _wait_port(port, apache_process, 900, "Apache")
        while not (root / "apache2.pid").is_file() or not (root / "apache2.pid").read_text().strip():
            time.sleep(0.2)                     # written just after the port opens
        apache_pid = int((root / "apache2.pid").read_text().split()[0])
        shared = {"postgres": _shared_ranges(server.postmaster_pid(), "postgres"),
                  "apache": _shared_ranges(apache_pid, "apache")}
        started = time.perf_counter() - t0
        done = _browse(f"http://127.0.0.1:{port}", scale, ebs, interactions, mix, seed)
        with server.connect("tpcw") as conn:
            invariants = tpcw_db.check_invariants(conn)
            counts = tpcw_db.table_counts(conn)
    finally:
        if apache_process is not None:
            try:
                os.kill(int((raw.parent / "apache" / "apache2.pid").read_text().split()[0]), signal.SIGTERM)
            except (OSError, ValueError):
                os.killpg(apache_process.pid, signal.SIGTERM)
            try:
                apache_process.wait(900)
            except subprocess.TimeoutExpired:
                os.killpg(apache_process.pid, signal.SIGKILL)
                apache_process.wait()
        server.stop()
    return {"apache_pid": apache_pid, "postmaster_pid": postmaster, "shared": shared,
            "interactions": done, "invariants": invariants, "table_counts": counts,
            "start_seconds": round(started, 1), "serve_seconds": round(time.perf_counter() - t0, 1)}


def _utilities(raw: Path, seed: int) -> dict:
    """Run the Table 1 utilities under lackey in ``raw/utilities`` (inputs seeded)."""
    valgrind = _tool("valgrind")
    work = raw.parent / "utilities"
    work.mkdir(exist_ok=True)
    rng = np.random.default_rng(seed)
    words = [f"w{int(k)}" for k in rng.integers(0, 5000, 20_000)]
    (work / "words.txt").write_text("\n".join(" ".join(words[i:i + 8]) for i in range(0, len(words), 8)) + "\n")
    seconds = {}
    for name, argv in UTILITIES.items():
        t0 = time.perf_counter()
        done = subprocess.run([valgrind, *LACKEY, f"--log-file={raw}/util-{name}.%p", *argv], cwd=work,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode:
            raise ModelError("utilities", f"{name} failed under valgrind: {done.stderr.strip()[-200:]}")
        seconds[name] = round(time.perf_counter() - t0, 1)
    return seconds


# --- conversion -----------------------------------------------------------------------------

def _window(chunks, start_rule):
    """The references from the first system call ``start_rule`` accepts on (the call
    itself kept, so its kernel burst opens the window); None before then."""
    started = start_rule is None
    for chunk, calls in chunks:
        if not started:
            k = next((c for c in calls if start_rule(c)), None)
            if k is None:
                continue
            started = True
            cut = k.position
            calls = calls[calls.index(k):]
            for c in calls:
                c.position -= cut
            chunk = chunk.slice(cut)
        yield chunk, calls


def _is_accept(call) -> bool:
    return call.name in ("accept4", "accept") and call.result is not None


def _is_marker(call) -> bool:
    return "tpcw-mark" in call.path


def convert_process(log: Path, npz: Path, start_rule, model: KernelModel) -> dict:
    """One process's log to its ``.npz`` (from the window's start); returns its counts
    (references by kind, kernel references, system calls by class); references 0 when
    the window never opened (nothing written then)."""
    totals = {"ifetch": 0, "load": 0, "store": 0, "kernel": 0, "syscalls": 0}

    def counted(chunks):
        for chunk, calls in chunks:
            totals["syscalls"] += len(calls)
            yield chunk, calls

    def chunks():
        for c in with_kernel(counted(_window(read_lackey_syscalls(log), start_rule)), model):
            totals["ifetch"] += int(np.count_nonzero(c.op == IFETCH))
            totals["load"] += int(np.count_nonzero(c.op == LOAD))
            totals["store"] += int(np.count_nonzero(c.op == STORE))
            totals["kernel"] += int(np.count_nonzero(c.kernel))
            yield c
    n = write_npz(npz, chunks())
    if n == 0:
        npz.unlink(missing_ok=True)
    return {"references": n, **totals, "calls_by_class": dict(model.counts)}


def convert(raw: Path, out: Path, facts: dict, kernel_scale: float = 1.0) -> list:
    """Step 4's traces: one ``.npz`` per served process in ``out``; returns a row per
    process (name, program, pid, counts)."""
    apache_parent = facts["apache_pid"]
    postmaster = facts["postmaster_pid"]
    logs = []
    for log in sorted(raw.glob("*.*")):
        kind, _, pid = log.name.rpartition(".")
        if not pid.isdigit():
            continue
        pid = int(pid)
        if kind == "apache" and pid != apache_parent:
            logs.append(("apache", f"apache-{pid}", pid, log, _is_accept))
        elif kind == "pg" and pid != postmaster:
            logs.append(("postgres", f"postgres-{pid}", pid, log, _is_marker))
        elif kind.startswith("util-"):
            logs.append(("utility", kind[5:], pid, log, None))
    peers = tuple(p for _, _, p, _, _ in logs)
    rows = []
    for program, name, pid, log, rule in logs:
        counts = convert_process(log, out / f"{name}.npz", rule, KernelModel(pid, peers, kernel_scale))
        if counts["references"]:
            rows.append({"name": name, "program": program, "pid": pid, **counts})
    return rows


def compose(out: Path, rows: list, facts: dict) -> dict:
    """Step 4's manifests: the three workloads of :data:`WORKLOADS` from the busiest
    processes of each program; returns {workload: what it holds}."""
    import tomli_w

    by_program = {p: sorted((r for r in rows if r["program"] == p), key=lambda r: -r["references"])
                  for p in ("apache", "postgres", "utility")}
    made = {}
    for workload, (n_apache, n_pg, n_util) in WORKLOADS.items():
        chosen = by_program["apache"][:n_apache] + by_program["postgres"][:n_pg] + by_program["utility"][:n_util]
        names = [r["name"] for r in chosen]
        shared = []
        for program in ("apache", "postgres"):
            members = [r["name"] for r in chosen if r["program"] == program]
            if len(members) > 1:
                shared += [{"name": label, "start": lo, "end": hi, "processes": members}
                           for label, lo, hi in facts["shared"][program]]
        shared.append({"name": "kernel-data", "start": KERNEL_SHARED, "end": KERNEL_SHARED_END, "processes": "all",
                       "kernel": True})
        shared.append({"name": "kernel-text", "start": KERNEL_TEXT, "end": KERNEL_TEXT + (16 << 20),
                       "processes": "all", "kernel": True})
        short = [f"{have} of {want} {what}" for have, want, what in
                 ((sum(r["program"] == "apache" for r in chosen), n_apache, "Apache children"),
                  (sum(r["program"] == "postgres" for r in chosen), n_pg, "PostgreSQL backends"),
                  (sum(r["program"] == "utility" for r in chosen), n_util, "utilities")) if have < want]
        doc = {"name": workload,
               "description": f"TPC-W {workload} workload of Foglia, Giorgi & Prete (2004), recorded: "
                              f"{n_apache} Apache children, {n_pg} PostgreSQL backends, {n_util} UNIX utilities "
                              "(valgrind lackey, kernel references modelled at each system call)"
                              + (f"; short: {', '.join(short)}" if short else ""),
               "recording": {k: v for k, v in facts.items() if k not in ("shared", "interactions", "invariants",
                                                                         "table_counts")},
               "process": [{"name": n, "trace": f"{n}.npz", "format": "npz"} for n in names],
               "shared": shared}
        (out / f"{workload}.toml").write_text(tomli_w.dumps(doc))
        made[workload] = {"processes": len(names), "short": short,
                          "references": sum(r["references"] for r in chosen)}
    return made


def record(out, ebs: int = 30, interactions: int = 10, mix: str = "shopping", scale: tpcw_db.Scale | None = None,
           seed: int = 1, kernel_scale: float = 1.0, keep_logs: bool = False) -> dict:
    """The four steps of the module into ``out``; returns the recording's facts."""
    scale = scale or tpcw_db.Scale()
    if mix not in tpcw_db.MIXES:
        raise ModelError("mix", f"unknown mix {mix!r}; choose {', '.join(tpcw_db.MIXES)}")
    for name, value, low, high in (("ebs", ebs, 1, 60), ("interactions", interactions, 1, 100_000)):
        if not low <= value <= high:
            raise ModelError(name, f"must be from {low} to {high}, got {value}")
    for program in ("valgrind", "apache2"):
        _tool(program)
    _php_module()
    out = Path(out)
    work = out / "run"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    os.chmod(work, 0o755)
    t0 = time.perf_counter()
    rows_loaded = prepare(work / "cluster", scale, seed)
    prepared = time.perf_counter() - t0
    raw = work / "lackey"
    facts = serve_and_browse(work / "cluster", raw, scale, ebs, interactions, mix, seed)
    facts["utility_seconds"] = _utilities(raw, seed)
    broken = {k: v for k, v in facts["invariants"].items() if v}
    if broken:
        raise ModelError("database", f"the run broke TPC-W invariants: {broken}")
    lackey_bytes = sum(f.stat().st_size for f in raw.iterdir() if f.is_file())
    t1 = time.perf_counter()
    rows = convert(raw, out, facts, kernel_scale)
    facts.update({"ebs": ebs, "interactions_per_browser": interactions, "mix": mix, "items": scale.items,
                  "customers": scale.customers, "scale_factor": scale.factor, "seed": seed,
                  "kernel_scale": kernel_scale, "prepare_seconds": round(prepared, 1), "lackey_bytes": lackey_bytes,
                  "convert_seconds": round(time.perf_counter() - t1, 1), "rows_loaded": rows_loaded})
    facts["workloads"] = compose(out, rows, facts)
    _write_processes(out / "tpcw-processes.csv", rows)
    if not keep_logs:
        shutil.rmtree(work)
    return {**facts, "processes": rows}


def _write_processes(path: Path, rows: list) -> None:
    import csv

    fields = ["name", "program", "pid", "references", "ifetch", "load", "store", "kernel", "syscalls"]
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def excerpt(recording, target, references: int = 40_000) -> list:
    """Copy a recording's manifests into ``target`` with each process cut to its first
    ``references`` references (the stored excerpts of ``data/traces/tpcw``)."""
    from .traces import limited, read_npz
    from mva.tomlcompat import tomllib

    recording, target = Path(recording), Path(target)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for workload in WORKLOADS:
        doc = tomllib.loads((recording / f"{workload}.toml").read_text())
        for p in doc["process"]:
            dest = target / p["trace"]
            if not dest.exists():
                write_npz(dest, limited(read_npz(recording / p["trace"]), references))
                written.append(dest.name)
        doc["description"] += f"; excerpt: the first {references:,} references of each process"
        import tomli_w

        (target / f"{workload}.toml").write_text(tomli_w.dumps(doc))
    return written

