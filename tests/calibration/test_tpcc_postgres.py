"""TPC-C on PostgreSQL (issue #37): the driver's five transactions against the
specification's rules on a tiny database, the recorder's I/O classification and trace
segmentation, the profile reproduced from the stored recording, and the model's
explicit-visit parameters."""
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from calibration.sim import tpcc_db
from calibration.sim.traces import IFETCH, LOAD, STORE, read_npz
from mva.errors import ModelError

from external_tools import postgres_found  # noqa: E402  (tests/, on the path by conftest)

ROOT = Path(__file__).resolve().parents[2]
STORED = ROOT / "data" / "traces" / "tpcc"


needs_postgres = pytest.mark.skipif(not postgres_found(),
                                    reason="needs PostgreSQL's server and psycopg (apt-get install postgresql; "
                                           "pip install 'psycopg[binary]'; .ci/run installs them)")


@pytest.fixture
def pg_dir():
    """A directory the server's user can reach when the tests run as root (pytest's own
    temporary directories are private to root)."""
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="mva-pg-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def database():
    import tempfile

    from calibration.sim.pgserver import PostgresServer

    path = Path(tempfile.mkdtemp(prefix="mva-pg-"))
    server = PostgresServer(path)
    server.start()
    try:
        with server.connect("postgres", autocommit=True) as c:
            c.execute("CREATE DATABASE tpcc")
        conn = server.connect()
        tpcc_db.create_schema(conn)
        rows = tpcc_db.load(conn, tpcc_db.Scale(), seed=3)
        yield server, conn, rows
        conn.close()
    finally:
        server.stop()
        shutil.rmtree(path, ignore_errors=True)


@needs_postgres
def test_the_population_is_the_specifications_scaled_by_100(database):
    _, conn, rows = database
    scale = tpcc_db.Scale()
    counts = tpcc_db.table_counts(conn)
    assert counts == rows
    assert counts["item"] == counts["stock"] == 1000
    assert counts["district"] == 10 and counts["customer"] == counts["orders"] == counts["history"] == 300
    assert counts["new_order"] == 10 * scale.new_orders == 90
    assert 10 * 5 * 30 <= counts["order_line"] <= 10 * 15 * 30
    assert tpcc_db.check_consistency(conn) == []


@needs_postgres
def test_the_five_transactions_keep_the_specifications_rules(database):
    """New-Order inserts an order, its new-order row and its lines; Delivery deletes one
    new-order row per district; Payment keeps W_YTD = sum(D_YTD); consistency conditions
    1-4 hold after a run of the mix."""
    server, conn, _ = database
    terminal = tpcc_db.Terminal(server.connect(), tpcc_db.Scale(), seed=11)
    before = tpcc_db.table_counts(conn)
    committed = {k: 0 for k in tpcc_db.TRANSACTIONS}
    rng = np.random.default_rng(5)
    plan = list(tpcc_db.TRANSACTIONS) * 3 + [str(k) for k in rng.choice(tpcc_db.TRANSACTIONS, 60,
                                                                       p=[0.45, 0.43, 0.04, 0.04, 0.04])]
    deliveries = 0
    for kind in plan:
        if kind == "delivery":
            with conn.cursor() as cur:
                cur.execute("SELECT count(DISTINCT no_d_id) FROM new_order")
                deliveries += cur.fetchone()[0]
            conn.commit()
        committed[kind] += terminal.run(kind)
    after = tpcc_db.table_counts(conn)
    new_orders = committed["new_order"]
    assert new_orders >= 25
    assert after["orders"] - before["orders"] == new_orders
    assert after["new_order"] - before["new_order"] == new_orders - deliveries
    assert after["history"] - before["history"] == committed["payment"] == plan.count("payment")
    assert after["order_line"] - before["order_line"] >= 5 * new_orders
    for kind in ("payment", "order_status", "delivery", "stock_level"):
        assert committed[kind] == plan.count(kind)
    assert tpcc_db.check_consistency(conn) == []
    terminal.conn.close()


@needs_postgres
def test_the_consistency_check_can_fail(database):
    server, conn, _ = database
    with conn.cursor() as cur:
        cur.execute("UPDATE district SET d_ytd = d_ytd + 1 WHERE d_id = 1")
        found = tpcc_db.check_consistency(conn)
        cur.execute("UPDATE district SET d_ytd = d_ytd - 1 WHERE d_id = 1")
    conn.commit()
    assert len(found) == 1 and found[0].startswith("condition 1:")
    assert tpcc_db.check_consistency(conn) == []


def test_scaled_random_constants():
    scale = tpcc_db.Scale()
    assert (scale.items, scale.customers, scale.new_orders) == (1000, 30, 9)
    assert scale.nurand_a(8191, 100_000, 1000) == 63 and scale.nurand_a(1023, 3000, 30) == 7
    assert tpcc_db.last_name(371) == "PRICALLYOUGHT"          # clause 4.3.2.3's example


# --- the recorder ---------------------------------------------------------------------------

def test_block_io_is_classified_by_relation(tmp_path):
    from calibration.sim.tpcc_recorder import _classify_io

    log = tmp_path / "s.log"
    log.write_text(
        '10  pread64(26</d/base/16384/2684>, ""..., 8192, 0) = 8192\n'
        '10  pread64(27</d/base/16384/16400>, ""..., 8192, 0) = 8192\n'
        '10  pwrite64(27</d/base/16384/16400.1>, ""..., 8192, 0) = 8192\n'
        '11  pwrite64(5</d/pg_wal/000000010000000000000001>, ""..., 8192, 0) = 8192\n'
        '11  pread64(9</d/base/16384/16500_fsm>, ""..., 8192, 0) = 8192\n'
        '12  pwrite64(9</d/pg_xact/0000>, ""..., 8192, 0) = 8192\n'
        '12  pread64(9</d/base/16384/16400>, ""..., 8192, 0) = -1 EINTR (Interrupted)\n')
    counts = _classify_io(log, {16400: "stock", 16500: "item"})
    assert counts["stock"] == [1, 1] and counts["item"] == [1, 0] and counts["log"] == [0, 1]
    assert counts["system"] == [1, 1]
    assert sum(sum(v) for v in counts.values()) == 6


def test_a_backend_trace_is_cut_at_the_marker(tmp_path):
    """References before the first marker and after the last are dropped; each segment
    counts its own instructions, loads and stores."""
    from calibration.sim.tpcc_recorder import convert_backend

    marker = 0x5000
    lines = ["I  00001000,4", " L 00002000,8",                       # before: dropped
             f"I  {marker:08x},4", "I  00001004,4", " S 00002008,8",  # segment 0
             f"I  {marker:08x},4", "I  00001008,4", " M 00002010,4", " L 00002018,8",   # segment 1
             f"I  {marker:08x},4", "I  0000100c,4", " L 00002020,8"]  # after the last: dropped
    log = tmp_path / "lackey.1"
    log.write_text("==1== lackey\n" + "\n".join(lines) + "\n")
    counts, segments = convert_backend(log, tmp_path / "t.npz", marker, 2)
    assert segments == [{"instructions": 1, "loads": 0, "stores": 1}, {"instructions": 1, "loads": 2, "stores": 1}]
    assert counts == {"instructions": 2, "references": 4}
    chunks = list(read_npz(tmp_path / "t.npz"))
    op = np.concatenate([c.op for c in chunks])
    addr = np.concatenate([c.addr for c in chunks])
    assert op.tolist() == [IFETCH, STORE, IFETCH, LOAD, STORE, LOAD]
    assert addr.tolist() == [0x1004, 0x2008, 0x1008, 0x2010, 0x2010, 0x2018]
    with pytest.raises(ModelError, match="markers found"):
        convert_backend(log, tmp_path / "u.npz", marker, 3)


@needs_postgres
@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace (apt-get install strace)")
def test_block_io_of_each_type_is_measured(pg_dir):
    from calibration.sim.tpcc_recorder import IO_RELATIONS, measure_io, prepare, read_io

    prepare(pg_dir / "cluster", tpcc_db.Scale())
    measure_io(pg_dir / "cluster", pg_dir / "io.csv", transactions=3, warmup=10)
    io = read_io(pg_dir / "io.csv")
    assert set(io) == set(tpcc_db.TRANSACTIONS)
    for kind, per in io.items():
        assert set(per) == set(IO_RELATIONS), kind
    # New-Order writes the log and the tables it inserts into; Stock-Level reads stock
    assert io["new_order"]["log"][1] >= 1
    assert io["new_order"]["orders"][1] + io["new_order"]["order_line"][1] > 0
    assert io["stock_level"]["stock"][0] + io["stock_level"]["order_line"][0] > 0


# --- the stored recording and the packaged profile -------------------------------------------

def test_the_packaged_profile_reproduces_from_the_stored_recording():
    from calibration.profiles.tpcc_postgres import PROFILE_CSV, profile

    derived = profile(STORED)
    packaged = pd.read_csv(PROFILE_CSV)
    pd.testing.assert_frame_equal(derived.reset_index(drop=True), packaged, check_exact=False, rtol=1e-12)
    # the types differ as TPC-C says: Delivery (ten districts) does the most work, Payment little
    work = derived.set_index("transaction").instructions
    assert work["delivery"] > work["new_order"] > work["payment"] > 0


def test_the_excerpts_cache_table_reproduces():
    """The bus machine on the stored excerpts gives the stored excerpt row (exactly: the
    machine is deterministic); the full traces' rows are the package's."""
    from calibration.profiles.tpcc_postgres import CACHE_CSV, cache_table

    stored = pd.read_csv(STORED / "cache-excerpts.csv")
    derived = cache_table(STORED / "tpcc.toml", cpus=tuple(stored.cpus))
    pd.testing.assert_frame_equal(derived, stored, check_exact=False, rtol=1e-12)
    full = pd.read_csv(CACHE_CSV)
    assert list(full.cpus) == [1, 2, 3, 4, 8] and full.hit_rate.between(0, 1).all()


def test_postgres_model_files_are_the_packaged_values():
    from calibration.profiles.tpcc_postgres import packaged_values
    from models.tpcc_smp import TPCCSMP
    from mva.files import read_document
    from mva.modelkind import model_from_document

    values = packaged_values()
    for n in range(1, 10):
        model = model_from_document(read_document(ROOT / "data" / "tpcc" / f"c{n}-postgres.toml"))
        for name, value in values.items():
            got = model.values[name]
            assert (list(got) if isinstance(got, tuple) else got) == pytest.approx(value), (n, name)
        assert model.solve().outputs["tpmC"] > 0
    one = TPCCSMP.from_values({**values, "cpus": 1})
    assert one.workload().cpu_instructions[0] == pytest.approx(np.dot(one.values["workload.mix"],
                                                                      values["workload.instructions"]))


def test_explicit_visits_equal_to_table6_change_nothing():
    from models.tpcc_smp import TPCCSMP, data

    v = data.visits()
    table6 = {"workload.instructions": list(v["cpu"]), "workload.memory_reads": list(v["memory_read"]),
              "workload.memory_writes": list(v["memory_write"]), "workload.disk_reads": list(v["disk_read"]),
              "workload.disk_writes": list(v["disk_write"]),
              "workload.table_access": list(data.table5_access()) * 5}
    for cpus in (1, 2, 4):
        a = TPCCSMP.from_values({"cpus": cpus}).solve().outputs
        b = TPCCSMP.from_values({"cpus": cpus, **table6, "cpu.cache_hit_rate_by_cpus": [0.9] * 4}).solve().outputs
        assert a == b
    # a hit rate per CPU count is used at that count
    low = TPCCSMP.from_values({"cpus": 2, "cpu.cache_hit_rate_by_cpus": [0.9, 0.5]})
    assert low.workload().cpu_memory_visits[0] == pytest.approx(
        5 * TPCCSMP.from_values({"cpus": 2}).workload().cpu_memory_visits[0])
    with pytest.raises(ModelError, match="workload.instructions"):
        TPCCSMP.from_values({"workload.instructions": [1, 2]})


@pytest.mark.parametrize("args,option", [(["--terminals", "0"], "--terminals"), (["--transactions", "-1"], "--transactions"),
                                         (["--seed", "-1"], "--seed"), (["--warehouses", "0"], "--warehouses")])
def test_the_recorder_refuses_bad_options_in_one_line(args, option, tmp_path, capsys):
    from mva.cli import main

    assert main(["trace", "tpcc", "-o", str(tmp_path / "rec"), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and option in err
    assert not (tmp_path / "rec").exists()          # refused before any work


def test_the_report_reproduces_the_tables_with_a_files_inputs(capsys):
    """``python -m models.tpcc_smp.report --inputs FILE`` takes the file's inputs, not its
    configuration (each published case keeps its own CPUs, buses, disks and mapping)."""
    from models.tpcc_smp.report import CONFIGURATION_KEYS, file_inputs, main, reproduce

    path = ROOT / "data" / "tpcc" / "c6-postgres.toml"
    inputs = file_inputs(path)
    assert not set(inputs) & set(CONFIGURATION_KEYS)
    from calibration.profiles.tpcc_postgres import packaged_values
    assert inputs["workload.disk_reads"] == pytest.approx(packaged_values()["workload.disk_reads"], abs=0.05)
    rep = reproduce(inputs, classes=False)
    c1 = rep.tpmc[(rep.tpmc.table == 10)].model.to_numpy()
    assert np.ptp(c1) < 0.01 * c1.mean()        # at the terminals' ceiling: the CPUs change nothing
    assert main(["--inputs", str(path), "--no-classes"]) == 0
    assert "tpmC relative error" in capsys.readouterr().out
    assert main(["--inputs", str(ROOT / "data" / "examples" / "two-class.toml")]) == 2
    assert "--inputs" in capsys.readouterr().err
