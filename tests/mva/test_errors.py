"""Bad input: one line naming the field, exit status 2 on the command line, ModelError in the API."""
import subprocess
import sys

import pytest

from mva import ModelError, Network, SaturationError, Station, solve
from mva.cli import main

GOOD_STATION = '[[station]]\nname = "cpu"\ntype = "queue"\ndemand = [0.1]\n'

BAD_FILES = {
    # name: (file text, extension, words the one-line message must contain)
    "negative demand": ('[network]\npopulation = [3]\n[[station]]\nname = "cpu"\ntype = "queue"\ndemand = [-0.1]\n',
                        "toml", ["station[cpu].demand", "negative"]),
    "nan demand": ('{"network": {"population": [3]}, "station": [{"name": "cpu", "type": "queue", "demand": [NaN]}]}',
                   "json", ["station[cpu].demand", "NaN"]),
    "mismatched lengths": ('[network]\npopulation = [3, 2]\n' + GOOD_STATION, "toml",
                           ["station[cpu].demand", "expected 2"]),
    "think time length": ('[network]\npopulation = [3]\nthink_time = [1.0, 2.0]\n' + GOOD_STATION, "toml",
                          ["network.think_time", "expected 1"]),
    "non-integer population": ('[network]\npopulation = [2.5]\n' + GOOD_STATION, "toml",
                               ["network.population", "not an integer"]),
    "negative population": ('[network]\npopulation = [-1]\n' + GOOD_STATION, "toml",
                            ["network.population", "negative"]),
    "string population": ('[network]\npopulation = ["ten"]\n' + GOOD_STATION, "toml",
                          ["network.population", "not an integer"]),
    "empty network": ('[network]\npopulation = [3]\n', "toml", ["station", "no stations"]),
    "empty station list": ('{"network": {"population": [3]}, "station": []}', "json", ["station", "no stations"]),
    "zero capacity": ('[network]\npopulation = [3]\n[[station]]\nname = "f"\ntype = "ld"\ndemand = [0.1]\n'
                      'capacity = [1.0, 0.0]\n', "toml", ["station[f].capacity", "zero"]),
    "ld without capacity": ('[network]\npopulation = [3]\n[[station]]\nname = "f"\ntype = "ld"\ndemand = [0.1]\n',
                            "toml", ["station[f].capacity", "needs"]),
    "unknown station type": ('[network]\npopulation = [3]\n[[station]]\nname = "x"\ntype = "fifo"\ndemand = [0.1]\n',
                             "toml", ["station[x].type", "unknown station type", "queue, delay, multi, ld"]),
    "zero servers": ('[network]\npopulation = [3]\n[[station]]\nname = "m"\ntype = "multi"\nservers = 0\n'
                     'demand = [0.1]\n', "toml", ["station[m].servers", ">= 1"]),
    "unknown key": ('[network]\npopulation = [3]\n[[station]]\nname = "cpu"\ntype = "queue"\ndemnd = [0.1]\n',
                    "toml", ["station[cpu].demnd", "unknown key"]),
    "missing demand": ('[network]\npopulation = [3]\n[[station]]\nname = "cpu"\ntype = "queue"\n', "toml",
                       ["station[cpu].demand", "missing"]),
    "missing population": ('[network]\nname = "x"\n' + GOOD_STATION, "toml", ["network.population", "missing"]),
    "malformed toml": ('[network\npopulation = [3]\n', "toml", ["malformed TOML"]),
    "malformed json": ('{"network": {"population": [3]}, "station": [', "json", ["malformed JSON", "line 1"]),
    "open and closed at once": ('[network]\npopulation = [3]\narrival_rate = [1.0]\n' + GOOD_STATION, "toml",
                                ["network.population", "open", "closed"]),
    "saturated open traffic": ('[network]\npopulation = [0]\narrival_rate = [20.0]\n' + GOOD_STATION, "toml",
                               ["station[cpu]", "saturates", "utilisation 2"]),
    "infinite throughput": ('[network]\npopulation = [3]\n[[station]]\nname = "cpu"\ntype = "queue"\n'
                            'demand = [0.0]\n', "toml", ["network.population", "infinite"]),
    "duplicate names": ('[network]\npopulation = [3]\n' + GOOD_STATION + GOOD_STATION, "toml",
                        ["station.name", "duplicate", "cpu"]),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_file_gives_one_line_and_exit_2(case, tmp_path, capsys):
    text, ext, words = BAD_FILES[case]
    path = tmp_path / f"net.{ext}"
    path.write_text(text)
    status = main(["solve", str(path)])
    err = capsys.readouterr().err
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0], (word, lines[0])


def test_no_traceback_in_a_real_process(tmp_path):
    """The installed console entry point, end to end."""
    path = tmp_path / "bad.toml"
    path.write_text(BAD_FILES["negative demand"][0])
    proc = subprocess.run([sys.executable, "-m", "mva", "solve", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_missing_file_and_usage_errors(tmp_path, capsys):
    assert main(["solve", str(tmp_path / "nope.toml")]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["solve", "--format", "xml", "x.toml"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--format" in err


def test_api_raises_model_error_subclass_of_value_error():
    with pytest.raises(ValueError, match=r"station\[cpu\]\.demand: demand\[0\] = -1 is negative"):
        Station("cpu", "queue", [-1.0])
    with pytest.raises(ModelError, match="population"):
        Network([Station("cpu", "queue", [1.0])], population=[1.5])
    with pytest.raises(SaturationError):
        solve(Network([Station("cpu", "multi", [1.0], servers=2)], arrival_rate=[2.0]))
    net = Network([Station("cpu", "queue", [1.0])], population=[1])
    with pytest.raises(ModelError, match="unknown method 'mvaa'; valid: auto, decomposition, exact"):
        solve(net, method="mvaa")
    with pytest.raises(ModelError, match="has no option"):
        solve(net, tol=1e-3)


def test_lattice_too_large_is_refused_not_attempted():
    net = Network([Station("cpu", "queue", [1.0] * 6)], population=[40] * 6)
    with pytest.raises(ModelError, match="approximate method"):
        solve(net)
