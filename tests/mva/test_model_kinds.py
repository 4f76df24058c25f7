"""The model-kind contract (mva.modelkind.ModelKind) is declared, not probed: every
registered kind subclasses it, optional hooks are None where a kind has none, a class
that is no ModelKind is refused by name, and load_model builds any model file."""
import json
import tomllib
import warnings

import pytest
import tomli_w

import mva
from mva.cli import main
from mva.errors import ModelError
from mva.modelkind import ModelKind, load_model_kind, model_kinds


def test_every_registered_kind_subclasses_the_contract():
    kinds = model_kinds()
    assert {"network", "tpcc_smp", "shared_bus", "cmt_core", "svm_cluster", "ccnuma"} <= set(kinds)
    for name in kinds:
        cls = load_model_kind(name)
        assert issubclass(cls, ModelKind) and cls.kind == name
        assert cls.for_document is not None or cls.parameters()          # a bound kind declares them on binding
    assert load_model_kind("shared_bus").simulate is not None and load_model_kind("cmt_core").simulate is None
    assert load_model_kind("tpcc_smp").solve_batch is not None and load_model_kind("ccnuma").solve_batch is None


def test_a_class_that_is_no_model_kind_is_refused(monkeypatch):
    import mva.modelkind as mk

    class Loader:
        def load(self):
            return dict

    monkeypatch.setattr(mk, "model_kinds", lambda: {"odd": Loader()})
    with pytest.raises(ModelError, match="^kind: the model kind 'odd' .* is not a mva.modelkind.ModelKind"):
        load_model_kind("odd")


def test_load_model_builds_any_file_with_overrides():
    two = mva.load_model("data/tpcc/c2.toml")
    four = mva.load_model("data/tpcc/c2.toml", cpus=4)
    assert four.solve().outputs["tpmC"] > two.solve().outputs["tpmC"]
    net = mva.load_model("data/examples/two-class.toml", station__cpu__demand=[0.02, 0.2])
    assert net.solve().kind == "network"
    with pytest.raises(ModelError, match="cpus"):
        mva.load_model("data/tpcc/c2.toml", cpus=0)


def test_an_svm_cluster_model_file_solves_on_the_command_line(tmp_path, capsys):
    """Its solution was printed as a network's (it carries a 'result' extra): KeyError."""
    from calibration.profiles.svm_cluster import application_values, model_document, simulate_pair
    from calibration.sim.parallel import parallel_kernel

    hlrc, sc = simulate_pair(parallel_kernel("fft", processes=4, size=64))
    path = tmp_path / "fft.toml"
    path.write_text(tomli_w.dumps(model_document(application_values(hlrc, sc), "fft4")))
    assert main(["solve", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("fft4  (model: svm_cluster") and "speedup" in out
    assert main(["solve", str(path), "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("file,model,speedup")


def test_a_model_answer_the_solver_doubts_says_so_on_the_command_line(capsys):
    # the recorded Barnes under SC: every group of phases' contention network is flagged
    # unreliable; the table said nothing of it (only the JSON's message did, with the
    # approximated stations listed once per group)
    assert main(["solve", "data/studies/svm-splash16/barnes.toml", "--set", "coherence=sc"]) == 0
    head = capsys.readouterr().out.splitlines()[1]
    assert head.startswith("WARNING: group 1 of 4: contention network by linearizer: unreliable")
    assert all(f"group {k} of 4: " in head for k in range(1, 5)) and head.count("approximate: ") == 1


def test_a_doubted_model_answer_is_flagged_in_its_record_and_its_sweep_row(capsys):
    # the flag is the solution's own, not a word found in its message: the JSON record
    # and a sweep's row say which answers to doubt, and a trusted answer says nothing
    from mva.modelkind import model_from_document

    doc = tomllib.loads(open("data/studies/svm-splash16/barnes.toml").read())
    doubted = model_from_document({**doc, "coherence": "sc"}).solve()
    assert doubted.doubted and all(p.doubted for p in doubted.extras["groups"])
    assert doubted.to_dict()["doubted"] is True and doubted.flat()["unreliable"] is True
    assert main(["solve", "data/studies/svm-splash16/barnes.toml", "--set", "coherence=sc", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["doubted"] is True
    # a sweep: the column, and one line on stderr for all its doubted rows
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["solve", "data/studies/svm-splash16/barnes.toml", "--sweep", "coherence=sc,sc", "--format",
                     "csv"]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    column = header.split(",").index("unreliable")
    assert len(rows) == 2 and all(r.split(",")[column] == "true" for r in rows)
    doubts = [str(w.message) for w in caught if issubclass(w.category, mva.NumericalWarning)]
    assert len(doubts) == 1 and doubts[0].startswith("2 of 2 cases are unreliable (column unreliable); the first: "
                                                     "group 1 of 4: contention network by linearizer: unreliable")
    trusted = model_from_document(tomllib.loads(open("data/examples/two-class.toml").read())).solve()
    assert not trusted.doubted and trusted.flat()["unreliable"] is False
    assert main(["solve", "data/examples/two-class.toml"]) == 0
    assert "WARNING" not in capsys.readouterr().out
