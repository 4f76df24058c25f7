"""No traceback on any input: every reader, fed truncated, mistyped and random input
through the command line, either succeeds or exits 2 with one line on stderr.

Readers: network and model files, ``--set``, ``--sweep``, traces (lackey, din, npz),
workload manifests and observation tables.  CI runs a bounded number of examples per
reader; ``FUZZ_EXAMPLES=250 pytest tests/mva/test_fuzz.py`` runs ten times as many.
"""
import contextlib
import io
import os
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mva.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
TEN = (ROOT / "data/examples/ten-stations.toml").read_text()
C2 = (ROOT / "data/tpcc/c2.toml").read_text()
MANIFEST = """name = "m"
references = 2000
[[process]]
name = "p0"
trace = "t.din"
[[process]]
name = "p1"
trace = "t.din"
[[shared]]
name = "s"
start = 4096
end = 8192
processes = "all"
"""
OBSERVATIONS = (ROOT / "data/examples/calibration/observations.csv").read_text()
CALIBRATION_NET = (ROOT / "data/examples/calibration/network.toml").read_text()


def run_cli(args) -> None:
    """Run ``mva args``: exit 0, 2 (one stderr line, no traceback) or 3 (not converged)."""
    import warnings

    from mva.cli import _one_line_warning

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.showwarning = _one_line_warning     # as the command shows them: one line each
        status = main(args)          # an exception escaping here is the traceback we forbid
    text = err.getvalue()
    assert "Traceback" not in text
    assert status in (0, 2, 3), (status, text)
    if status == 2:
        lines = [line for line in text.splitlines() if not line.startswith("mva: warning")]
        assert len(lines) == 1, text


def mutate(text: str, data) -> str:
    """Truncate, splice in a random TOML-ish token, or replace a value."""
    how = data.draw(st.sampled_from(["truncate", "splice", "value"]))
    at = data.draw(st.integers(0, len(text)))
    if how == "truncate":
        return text[:at]
    token = data.draw(st.sampled_from(['"x"', "-1", "1e400", "nan", "[]", "[[1]]", "true", "{}", "= =", "[", "0",
                                       "[1, 2, 3]", '"', "\x00", "é", "1_000", "inf"]))
    if how == "splice":
        return text[:at] + token + text[at:]
    lines = text.splitlines()
    k = data.draw(st.integers(0, max(0, len(lines) - 1)))
    if "=" in lines[k]:
        lines[k] = lines[k].split("=")[0] + "= " + token
    return "\n".join(lines)


def in_tmp(name: str, content) -> str:
    folder = tempfile.mkdtemp(prefix="fuzz-")
    path = Path(folder) / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
    return str(path)


@FUZZ
@given(st.data(), st.sampled_from([("net.toml", TEN), ("c2.toml", C2)]))
def test_network_and_model_files(data, base):
    name, text = base
    run_cli(["solve", in_tmp(name, mutate(text, data))])


@FUZZ
@given(st.binary(max_size=300), st.sampled_from(["x.toml", "x.json", "x"]))
def test_random_bytes_as_a_model_file(content, name):
    run_cli(["solve", in_tmp(name, content)])


NAMES = ["network.population", "network.think_time", "station.cpu.demand", "station.cpu.demand[0]",
         "station.cpu.demand[5]", "station.cpu.demand[x]", "station.nope.demand", "cpus", "disk.seek_time",
         "mapping.table_to_disk[1]", "", "a[", "]"]
VALUES = st.one_of(st.sampled_from(["1", "-1", "0", "1e9", "nan", "[1,2]", "[]", '"x"', "x", "[0.1]", "true",
                                    ""]), st.text(max_size=8))


@FUZZ
@given(st.sampled_from(NAMES), VALUES, st.sampled_from([TEN, C2]))
def test_set(name, value, text):
    run_cli(["solve", in_tmp("f.toml", text), "--set", f"{name}={value}"])


SPECS = st.one_of(st.sampled_from(["0:1:0.5", "1:0:1", "0:1:0", "1,2,3", "[1],[2]", "@missing.csv", "1:2", "",
                                   "a,b", "0.01:0.02:0.005", "1e9:1e10:1", ",,"]),
                  st.text(alphabet="0123456789.:,-e[]@x ", max_size=12))


@FUZZ
@given(st.sampled_from(NAMES), SPECS, st.booleans())
def test_sweep(name, spec, zipped):
    args = ["solve", in_tmp("f.toml", TEN), "--sweep", f"{name}={spec}", "--format", "csv"]
    run_cli(args + (["--zip"] if zipped else []))


LACKEY = " L 04020a38,8\n S 7ff000398,8\nI  04020a30,3\n M 0421ba88,4\n"
DIN = "0 1000\n1 2000\n2 3000\n"


@FUZZ
@given(st.data(), st.sampled_from([("t.lackey", LACKEY), ("t.din", DIN)]))
def test_text_traces(data, base):
    name, text = base
    text = text * 3
    content = data.draw(st.one_of(st.just(mutate(text, data)), st.binary(max_size=200).map(
        lambda b: b.decode("latin-1"))))
    run_cli(["trace", "stats", in_tmp(name, content)])


def npz_bytes(arrays: dict) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


DTYPES = st.sampled_from([np.uint8, np.int8, np.int64, np.uint64, np.float64, np.bool_, np.uint16])


@FUZZ
@given(st.integers(1, 50), DTYPES, DTYPES, st.sampled_from([None, np.uint16, np.float32, np.int64]),
       st.integers(0, 2 ** 64 - 1), st.floats(0, 1), st.booleans())
def test_npz_traces(n, op_type, addr_type, size_type, address, cut, compress):
    rng = np.random.default_rng(n)
    arrays = {"op": rng.integers(0, 3, n).astype(op_type),
              "addr": np.full(n, address, dtype=np.uint64).astype(addr_type) if addr_type != np.bool_ else
              np.ones(n, bool)}
    if size_type is not None:
        arrays["size"] = rng.integers(0, 16, n).astype(size_type)
    content = npz_bytes(arrays)
    if compress:
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        content = buffer.getvalue()
    if cut < 0.9:            # truncated somewhere
        content = content[: int(len(content) * cut)]
    run_cli(["trace", "stats", in_tmp("t.npz", content)])


@FUZZ
@given(st.data())
def test_manifests(data):
    folder = Path(tempfile.mkdtemp(prefix="fuzz-"))
    (folder / "t.din").write_text(DIN * 50)
    (folder / "m.toml").write_text(mutate(MANIFEST, data))
    run_cli(["trace", "stats", str(folder / "m.toml")])


@FUZZ
@given(st.data())
def test_observation_tables(data):
    folder = Path(tempfile.mkdtemp(prefix="fuzz-"))
    (folder / "net.toml").write_text(CALIBRATION_NET)
    table = mutate(OBSERVATIONS, data) if data.draw(st.booleans()) else data.draw(st.text(max_size=120))
    (folder / "obs.csv").write_text(table, encoding="utf-8", errors="surrogatepass")
    fit = data.draw(st.sampled_from(["station.cpu.demand", "station.cpu.demand[0]", "station.cpu.demand[3]",
                                     "nope", "station.cpu.demand=1:0"]))
    run_cli(["calibrate", str(folder / "net.toml"), str(folder / "obs.csv"), "--fit", fit])


def test_the_three_reported_trace_cases(tmp_path):
    """Issue #16: a truncated npz, float arrays, and an address range that wraps."""
    good = npz_bytes({"op": np.ones(10, np.uint8), "addr": np.arange(10, dtype=np.uint64) * 64})
    cases = {"truncated": good[: len(good) // 2],
             "float": npz_bytes({"op": np.ones(10), "addr": np.arange(10, dtype=np.float64)}),
             "wrap": npz_bytes({"op": np.ones(10, np.uint8), "addr": np.full(10, 2 ** 64 - 2, np.uint64),
                                "size": np.full(10, 8, np.uint16)})}
    words = {"truncated": "truncated", "float": "integers", "wrap": "past 2^64"}
    for name, content in cases.items():
        path = tmp_path / f"{name}.npz"
        path.write_bytes(content)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = main(["trace", "stats", str(path)])
        assert status == 2, name
        assert len(err.getvalue().strip().splitlines()) == 1 and words[name] in err.getvalue(), err.getvalue()
        assert str(path) in err.getvalue()


def test_a_column_name_with_control_characters_stays_one_line(tmp_path):
    """Fuzz finding: a column named '0\\x1e0' (a record separator, which splitlines
    breaks on) made a two-line error; messages escape non-printing characters."""
    (tmp_path / "net.toml").write_text(CALIBRATION_NET)
    (tmp_path / "obs.csv").write_text("0\x1e0\r0")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(["calibrate", str(tmp_path / "net.toml"), str(tmp_path / "obs.csv"), "--fit",
                       "station.cpu.demand"])
    assert status == 2 and len(err.getvalue().strip().splitlines()) == 1 and "\\x1e" in err.getvalue()
