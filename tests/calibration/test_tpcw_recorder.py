"""The TPC-W recording: system calls found in lackey logs, the kernel references put at
them, the manifest's shared and private memory, and the application on a real Apache,
PHP and PostgreSQL keeping the database's invariants."""
import os
from pathlib import Path

import numpy as np
import pytest

from external_tools import apache_php_found, postgres_found  # noqa: E402  (tests/, on the path by conftest)

from calibration.sim.kernel_model import KERNEL_SHARED, KERNEL_SHARED_END, TASK_BASE, KernelModel, with_kernel
from calibration.sim.syscall_trace import read_lackey_syscalls
from calibration.sim.traces import IFETCH, LOAD, STORE, write_npz, _chunk
from calibration.sim.workload import read_manifest

ROOT = Path(__file__).resolve().parents[2]
EXCERPTS = ROOT / "data" / "traces" / "tpcw"

LOG = """==1234== Lackey, an example Valgrind tool
I  04000000,3
 L 1ffefff000,8
SYSCALL[1234,1](0) sys_read ( 3, 0x5000000, 4096 ) --> [async] ...
SYSCALL[1234,1](0) ... [async] --> Success(0x40)
I  04000003,4
 S 05000000,8
 M 05000008,4
SYSCALL[1234,1](72) sys_fcntl[ARG3=='arg'] ( 10, 4, 2050 )[sync] --> Success(0x0)
SYSCALL[1234,1](7) sys_poll ( 0x1ffeffd518, 1, 4294967295 )
 --> [async] ...
I  04000007,2
SYSCALL[1234,1](257) sys_openat ( 4294967196, 0x4034bb0(/etc/hosts), 524288 ) --> [pre-success] Success(0x4)
SYSCALL[1234,1](231) exit_group( 0 ) --> [pre-success] Success(0x0)
"""


def test_system_calls_are_found_at_their_positions(tmp_path):
    log = tmp_path / "p.lackey"
    log.write_text(LOG)
    (chunk, calls), = list(read_lackey_syscalls(log))
    assert list(chunk.op) == [IFETCH, LOAD, IFETCH, STORE, LOAD, STORE, IFETCH]
    assert [(c.position, c.name) for c in calls] == [(2, "read"), (6, "fcntl"), (6, "poll"), (7, "openat"),
                                                     (7, "exit_group")]
    read, fcntl, poll, openat, _ = calls
    assert read.args == (3, 0x5000000, 4096) and read.result == 0x40       # the async result, second line
    assert fcntl.args == (10, 4, 2050) and fcntl.result == 0
    assert poll.result is None                                            # still blocked when the log ends
    assert openat.path == "/etc/hosts" and openat.result == 4


def test_kernel_references_sit_at_the_system_calls_and_leave_the_user_trace_whole(tmp_path):
    log = tmp_path / "p.lackey"
    log.write_text(LOG)
    (user, calls), = list(read_lackey_syscalls(log))
    model = KernelModel(1234, (1234, 99))
    out, = list(with_kernel(read_lackey_syscalls(log), model))
    kernel = out.kernel
    # the user references in order, untouched
    assert np.array_equal(out.op[~kernel], user.op) and np.array_equal(out.addr[~kernel], user.addr)
    # a kernel burst starts right after the user reference each call follows
    user_index = np.cumsum(~kernel) - 1                  # index of the last user reference so far
    starts = np.flatnonzero(kernel & ~np.concatenate([[False], kernel[:-1]]))
    assert sorted({int(user_index[s]) + 1 for s in starts}) == sorted({c.position for c in calls})
    # the read copied its 64 bytes into the user buffer it named, in kernel mode
    stores = out.addr[kernel & (out.op == STORE)]
    assert all(0x5000000 + 8 * w in stores for w in range(8))
    # kernel data outside the user buffer is the process's own block or the shared structures
    data = out.addr[kernel & (out.op != IFETCH)]
    own = (data >= TASK_BASE + 1234 * (64 << 10)) & (data < TASK_BASE + 1235 * (64 << 10))
    shared = (data >= KERNEL_SHARED) & (data < KERNEL_SHARED_END)
    user_buffer = (data >= 0x5000000) & (data < 0x5000000 + 64)
    others = TASK_BASE + 99 * (64 << 10)
    peer = (data >= others) & (data < others + (64 << 10))   # the scheduler looks at the other task
    assert np.all(own | shared | user_buffer | peer)
    assert peer.any()                                        # poll blocked: schedule() read task 99


def test_the_kernel_scale_only_shortens_the_handlers(tmp_path):
    log = tmp_path / "p.lackey"
    log.write_text(LOG)
    sizes = {}
    for scale in (0, 1, 2):
        out, = list(with_kernel(read_lackey_syscalls(log), KernelModel(7, (7,), scale)))
        sizes[scale] = int(out.kernel.sum())
    assert 0 < sizes[0] < sizes[1] < sizes[2]
    with pytest.raises(ValueError):
        KernelModel(7, scale=-1)


def _trace(path, addrs, op=STORE):
    n = len(addrs)
    write_npz(path, [_chunk(np.full(n, op, np.uint8), np.array(addrs, np.uint64), np.full(n, 8, np.uint16))])


@pytest.mark.skipif(not (EXCERPTS / "ec-server.toml").is_file(), reason="no stored TPC-W excerpts")
def test_the_recorded_manifest_shares_the_buffers_and_keeps_private_memory_private(tmp_path):
    """Two backends writing one address of PostgreSQL's shared memory invalidate each
    other; two processes writing one address outside every shared range never do."""
    from calibration.sim.bus import BusConfig, simulate_bus

    wl = read_manifest(EXCERPTS / "ec-server.toml")
    pg = [p.name for p in wl.processes if p.name.startswith("postgres-")]
    apache = [p.name for p in wl.processes if p.name.startswith("apache-")]
    assert len(pg) == 8 and len(apache) == 13 and len(wl.processes) == 26
    shm = [r for r in wl.shared if r.name.startswith("postgres-shm")]
    assert shm and all(set(r.processes) == set(pg) for r in shm)      # among the backends, and only them
    buffers = max(shm, key=lambda r: r.end - r.start)                  # the buffer pool's segment
    assert buffers.end - buffers.start >= 32 << 20                      # shared_buffers = 32MB
    private = 0x1ffeffd000                                              # a stack address: in no range
    assert not any(r.start <= private < r.end for r in wl.shared)
    for where, expect_invalidations in ((buffers.start + 4096, True), (private, False)):
        for name in pg[:2]:
            _trace(tmp_path / f"{name}.npz", [where] * 2000)
        ranges = "\n".join(f"[[shared]]\nname = \"{r.name}\"\nstart = {r.start}\nend = {r.end}\n"
                           f"processes = {list(pg[:2])!r}".replace("'", '"') for r in shm)
        (tmp_path / "two.toml").write_text("\n".join(f"[[process]]\nname = \"{n}\"\ntrace = \"{n}.npz\""
                                                     for n in pg[:2]) + "\n" + ranges + "\n")
        result = simulate_bus(read_manifest(tmp_path / "two.toml"), BusConfig(cpus=2, time_slice=100,
                                                                              references=4000, cache="64KiB"))
        d = result.to_dict()
        invalidations = (d["bus_transactions"]["invalidate"] + d["bus_transactions"]["read_invalidate_cache"]
                         + d["misses_by_kind"]["true_sharing"])
        assert (invalidations > 0) == expect_invalidations, where


needs_servers = pytest.mark.skipif(not (postgres_found() and apache_php_found()),
                                   reason="needs Apache with mod_php and php-pgsql, PostgreSQL and psycopg "
                                          "(apt-get install apache2 libapache2-mod-php php-pgsql postgresql)")


@needs_servers
def test_two_requests_of_the_application_keep_the_database_invariants(monkeypatch):
    """A cart and a purchase through Apache, PHP and PostgreSQL (untraced): one order
    more, with its lines and its credit-card transaction, and every invariant holds."""
    from calibration.sim import tpcw_db, tpcw_recorder as R

    work = Path("/tmp") / f"mva-tpcw-test-{os.getpid()}"     # the servers' users must reach it
    work.mkdir(mode=0o755)
    try:
        scale = tpcw_db.Scale(ebs=1, items=100, factor=10)
        rows = R.prepare(work / "cluster", scale)
        assert rows["item"] == 100 and rows["customer"] == 288 and rows["orders"] == 259
        pages = {}

        def two_requests(base, scale_, ebs, interactions, mix, seed):
            browser = R.EmulatedBrowser(base, scale_, mix, seed)
            browser.visit("shopping_cart")
            pages["cart"] = browser.last_page
            browser.visit("buy_confirm")
            pages["buy"] = browser.last_page
            return dict(browser.done)
        monkeypatch.setattr(R, "_browse", two_requests)
        facts = R.serve_and_browse(work / "cluster", work / "raw", scale, 1, 2, "shopping", 3, traced=False,
                                   start_servers=2)
        assert facts["interactions"] == {"shopping_cart": 1, "buy_confirm": 1}
        assert '<p id="sc_id">' in pages["cart"] and '<p id="o_id">' in pages["buy"]
        assert all(v == 0 for v in facts["invariants"].values()), facts["invariants"]
        counts = facts["table_counts"]
        assert counts["orders"] == rows["orders"] + 1 and counts["cc_xacts"] == rows["cc_xacts"] + 1
        assert counts["order_line"] == rows["order_line"] + 1 and counts["shopping_cart_line"] == 0
    finally:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


def test_the_recorder_refuses_bad_options_in_one_line(capsys):
    from mva.cli import main

    for argv, option in ((["--ebs", "0"], "--ebs"), (["--mix", "lunch"], "--mix"),
                         (["--kernel-scale", "-1"], "--kernel-scale"), (["--items", "5"], "--items")):
        assert main(["trace", "tpcw", "-o", "/nonexistent-dir/x", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and option in err[0], err
