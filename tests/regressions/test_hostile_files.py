"""Issue #33, output files: every writer checks its path (format, existing file,
directory) before any work, and nothing the user has is replaced without --force."""
import pytest

from calibration.studies import cmt as cmt_study
from calibration.studies import svm as svm_study
from mva.cli import main

DIN = "data/traces/ls-head.din"




def test_a_plot_without_extension_is_checked_as_the_png_it_becomes(tmp_path, capsys, one_line):
    stem = tmp_path / "pp"
    (tmp_path / "pp.png").write_bytes(b"precious")
    assert main(["trace", "reuse", DIN, "--plot", str(stem)]) == 2
    one_line("--plot", "pp.png exists")
    assert (tmp_path / "pp.png").read_bytes() == b"precious"
    assert main(["trace", "reuse", DIN, "--plot", str(stem), "--force"]) == 0
    assert (tmp_path / "pp.png").read_bytes().startswith(b"\x89PNG")
    assert f"wrote {stem}.png" in capsys.readouterr().err


def test_a_sweep_plot_is_not_replaced_without_force(tmp_path, one_line):
    (tmp_path / "sw.png").write_bytes(b"precious")
    args = ["solve", "data/tpcc/c2.toml", "--sweep", "cpus=1,2", "--plot", str(tmp_path / "sw")]
    assert main(args) == 2
    one_line("--plot", "sw.png exists")
    assert (tmp_path / "sw.png").read_bytes() == b"precious"


@pytest.mark.parametrize("where, words", [("x.xyz", "cannot draw a .xyz file"),
                                          ("missing/dir/x.png", "no directory"),
                                          ("", "is a directory")])
def test_plot_paths_that_cannot_be_written_fail_before_the_work(tmp_path, where, words, one_line):
    assert main(["trace", "reuse", DIN, "--plot", str(tmp_path / where) if where else str(tmp_path)]) == 2
    one_line("--plot", words)


def test_convert_into_a_missing_directory_is_one_line(tmp_path, one_line):
    assert main(["trace", "convert", DIN, "-o", str(tmp_path / "missing" / "x.npz")]) == 2
    one_line("-o", "no directory")


def test_the_cmt_study_keeps_existing_csvs(tmp_path, one_line):
    (tmp_path / "r-predictions.csv").write_text("precious")
    assert cmt_study.main(["--small", "--csv", str(tmp_path / "r")]) == 2
    one_line("--csv", "exists")
    assert (tmp_path / "r-predictions.csv").read_text() == "precious"


def test_the_svm_study_checks_its_plot_before_simulating(tmp_path, one_line):
    assert svm_study.main(["--small", "--nodes", "4", "--kernels", "fft", "--plot", str(tmp_path / "f.xyz")]) == 2
    one_line("--plot", ".xyz")


def test_the_svm_study_refuses_zero_events_at_once(one_line):
    assert svm_study.main(["--events", "0"]) == 2
    one_line("--events")


def test_a_study_usage_error_is_one_line(one_line):
    with pytest.raises(SystemExit) as stop:
        svm_study.main(["--bogus"])
    assert stop.value.code == 2
    one_line("unrecognized arguments: --bogus")


def test_a_plot_without_matplotlib_is_refused_before_the_study_runs(monkeypatch, tmp_path, one_line):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)        # import matplotlib: ImportError
    assert svm_study.main(["--small", "--nodes", "4", "--kernels", "fft", "--plot", str(tmp_path / "f.png")]) == 2
    one_line("--plot", "needs matplotlib")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_swept_value_written_two_ways_reaches_every_columnar_file(tmp_path, fmt):
    # "00" is no TOML number, so it stays the text the model reads as 0, beside the
    # integer 1: a column of two types, which the columnar writer refused with a traceback
    out = tmp_path / f"sweep.{fmt}"
    args = ["solve", "data/examples/ten-stations.toml", "--sweep", "network.think_time=00,1", "--format", fmt,
            "-o", str(out)]
    assert main(args) == 0
    import pandas as pd
    frame = {"csv": pd.read_csv, "parquet": pd.read_parquet}[fmt](out)
    assert len(frame) == 2 and [str(v) for v in frame["network.think_time"]] in (["00", "1"], ["0", "1"])
