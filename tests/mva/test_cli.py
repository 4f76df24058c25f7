"""`mva solve`: formats, several files, output files."""
import csv
import io
import json
import os

import pytest

from mva import load_network, solve
from mva.cli import main

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "data", "examples")
TOML = os.path.join(EXAMPLES, "two-class.toml")
JSON = os.path.join(EXAMPLES, "mixed.json")


def test_json_has_the_documented_keys_and_matches_the_api(capsys):
    assert main(["solve", TOML, "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    for key in ("method", "classes", "throughput", "response_time", "stations", "solve_seconds", "file"):
        assert key in record
    assert record["method"] == "exact" and record["classes"] == ["oltp", "batch"]
    station = record["stations"][0]
    assert set(station) >= {"name", "utilization", "queue_length", "residence_time"}
    expected = solve(load_network(TOML))
    assert record["throughput"] == pytest.approx(list(expected.throughput), rel=1e-15)
    assert 0 < record["solve_seconds"] < 1.0


def test_several_files_give_json_lines(capsys):
    assert main(["solve", TOML, JSON, "--format", "json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [json.loads(line)["file"] for line in lines] == [TOML, JSON]


def test_csv_is_long_form_with_one_header(capsys):
    assert main(["solve", TOML, JSON, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 3 * 2 + 3 * 2
    assert rows[0]["file"] == TOML and rows[0]["station"] == "cpu"


def test_table_names_every_station(capsys):
    assert main(["solve", TOML]) == 0
    out = capsys.readouterr().out
    for name in ("cpu", "cpus", "cpu-fesc", "oltp", "batch", "throughput"):
        assert name in out


def test_output_file_is_never_overwritten_without_force(tmp_path, capsys):
    target = tmp_path / "out.json"
    target.write_text("precious")
    assert main(["solve", TOML, "--format", "json", "-o", str(target)]) == 2
    assert "exists" in capsys.readouterr().err
    assert target.read_text() == "precious"
    assert main(["solve", TOML, "--format", "json", "-o", str(target), "--force"]) == 0
    assert json.loads(target.read_text())["method"] == "exact"


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert main([]) == 2


@pytest.mark.parametrize("method", ["schweitzer", "linearizer"])
def test_approximate_methods_and_their_options(method, capsys):
    assert main(["solve", TOML, "--method", method, "--tol", "1e-10", "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["method"] == method and record["converged"] is True
    expected = solve(load_network(TOML), method, tol=1e-10)
    assert record["throughput"] == pytest.approx(list(expected.throughput), rel=1e-12)


def test_non_convergence_warns_on_stderr_and_strict_exits_3(capsys):
    assert main(["solve", TOML, "--method", "schweitzer", "--max-iter", "2"]) == 0
    captured = capsys.readouterr()
    assert "WARNING: not converged" in captured.out
    assert captured.err.count("\n") == 1 and "schweitzer: not converged after 2 iterations" in captured.err
    assert main(["solve", TOML, "--method", "schweitzer", "--max-iter", "2", "--strict"]) == 3


@pytest.mark.parametrize("args, message", [
    (["--method", "exact", "--tol", "1e-6"], "method 'exact' has no option(s) tol"),
    (["--tol", "0"], "options.tol: must be a number in (0, 1)"),   # auto checks options it may not use
    (["--method", "linearizer", "--tol", "0"], "options.tol: must be a number in (0, 1)"),
    (["--method", "schweitzer", "--max-outer", "3"], "has no option(s) max_outer"),
    (["--method", "linearizer", "--max-iter", "0"], "options.max_iter: must be an integer >= 1"),
])
def test_bad_method_options_are_one_line_and_status_2(args, message, capsys):
    assert main(["solve", TOML, *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_tables_label_numbers_with_the_files_time_unit(tmp_path, capsys):
    """A network file's time_unit heads the throughput and time columns and the parameter
    units; without it the label says 'time unit'; a bad one is a one-line error."""
    text = open(os.path.join(EXAMPLES, "two-class.toml")).read()
    assert 'time_unit = "s"' in text
    assert main(["solve", os.path.join(EXAMPLES, "two-class.toml")]) == 0
    out = capsys.readouterr().out
    assert "throughput [1/s]" in out and "response_time [s]" in out and "residence_time [s]" in out
    ms = tmp_path / "ms.toml"
    ms.write_text(text.replace('time_unit = "s"', 'time_unit = "ms"'))
    assert main(["solve", str(ms)]) == 0
    assert "throughput [1/ms]" in capsys.readouterr().out
    assert main(["solve", str(ms), "--list-parameters"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[3:] if line.strip()}
    assert "  ms  " in rows["station.cpu.demand"] and "  1/ms  " not in rows["station.cpu.demand"]
    assert "  customers  " in rows["network.population"]
    bare = tmp_path / "bare.toml"
    bare.write_text(text.replace('time_unit = "s"', ""))
    assert main(["solve", str(bare), "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)             # JSON keeps the bare names
    assert record["throughput"] and record["time_unit"] == "time unit"
    assert main(["solve", str(bare)]) == 0
    assert "throughput [1/time unit]" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    for value in ("1", '""'):
        bad.write_text(text.replace('time_unit = "s"', f"time_unit = {value}"))
        assert main(["solve", str(bad)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "network.time_unit" in err and "non-empty string" in err


def test_model_tables_label_outputs_with_units(capsys):
    tpcc = os.path.join(EXAMPLES, "..", "tpcc", "c2.toml")
    assert main(["solve", tpcc]) == 0
    out = capsys.readouterr().out
    for head in ("tpmC [New-Order/min]", "throughput [transactions/s]", "response_time [s]", "residence_time [s]"):
        assert head in out
    assert main(["solve", tpcc, "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["units"]["tpmC"] == "New-Order/min" and "tpmC" in record["outputs"]
    assert main(["solve", os.path.join(EXAMPLES, "shared-bus.toml")]) == 0
    out = capsys.readouterr().out
    assert "stall_per_reference [cycles]" in out and "throughput [references/cycle]" in out


def test_huge_populations_are_refused_or_solved_approximately(capsys):
    # fuzz findings: a population beyond 64 bits was a traceback, and a sweep to 1e10
    # customers sent the exact batch solver out of memory instead of choosing as a solve does
    ten = os.path.join(EXAMPLES, "ten-stations.toml")
    assert main(["solve", ten, "--set", "network.population=1e100"]) == 2
    err = capsys.readouterr().err
    assert "network.population" in err and "exceeds" in err and len(err.strip().splitlines()) == 1
    assert main(["solve", ten, "--sweep", "network.population=10,1e10", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [float(r["network.population"]) for r in rows] == [10, 1e10]
    assert all(r["converged"] == "true" for r in rows)
    assert float(rows[1]["utilization.disk1"]) == pytest.approx(1.0, abs=1e-6)    # saturated bottleneck
