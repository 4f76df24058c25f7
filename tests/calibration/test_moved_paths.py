"""The import paths of before the split of ``calibration/`` by role still work for one
release, each with a DeprecationWarning naming the new home (CHANGELOG.md)."""
import importlib
import subprocess
import sys
import warnings

import pytest

MOVED = {
    "calibration.ccnuma": ("calibration.profiles.ccnuma", "model_values"),
    "calibration.svm": ("calibration.profiles.svm_cluster", "application_values"),
    "calibration.sharedbus": ("calibration.profiles.shared_bus", "profile_from_runs"),
    "calibration.tpcc": ("calibration.profiles.tpcc_smp", "calibrate"),
    "calibration.cpu_centre": ("calibration.profiles.tpcc_smp", "cpu_rate_table"),
    "calibration.ccnuma_study": ("calibration.studies.ccnuma", "main"),
    "calibration.svm_study": ("calibration.studies.svm", "main"),
    "calibration.cmt_study": ("calibration.studies.cmt", "main"),
    "calibration.report": ("calibration.studies.tpcw", "main"),
    "calibration.study_cli": ("calibration.studies.cli", "run_study"),
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_module_warns_and_serves_the_new_object(old):
    new, name = MOVED[old]
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        module = importlib.import_module(old)
    assert getattr(module, name) is getattr(importlib.import_module(new), name)


def test_moved_scheduling_names_warn():
    import calibration.profiles.cmt_core as new
    import calibration.scheduling as old

    with pytest.warns(DeprecationWarning, match="calibration.profiles.cmt_core.group_prediction"):
        assert old.group_prediction is new.group_prediction
    assert not hasattr(old, "no_such_name")          # an unknown name is still an AttributeError


def test_old_study_still_runs_as_a_module():
    out = subprocess.run([sys.executable, "-W", "default", "-m", "calibration.ccnuma_study", "--kernels", "nope"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "--kernels" in out.stderr and "deprecated" in out.stderr


def test_new_homes_import_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in {new for new, _ in MOVED.values()}:
            importlib.import_module(name)


@pytest.mark.parametrize("module", ["calibration", "calibration.sim", "calibration.sim.bus"])
@pytest.mark.parametrize("old, new", [("simulate", "simulate_bus"), ("SimulatorConfig", "BusConfig"),
                                      ("SimulationResult", "BusResult")])
def test_bus_names_of_before_the_registry_warn(module, old, new):
    import calibration.sim.bus as bus

    with pytest.warns(DeprecationWarning, match=f"calibration.sim.bus.{new}"):
        assert getattr(importlib.import_module(module), old) is getattr(bus, new)


def test_mva_simulate_is_simulate_network_with_a_warning():
    import mva

    with pytest.warns(DeprecationWarning, match="mva.simulate_network"):
        assert mva.simulate is mva.simulate_network
