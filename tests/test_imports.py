"""Public imports work and no package has an import circle: every module is imported in
a fresh interpreter, in alphabetical order and in reverse (a circle breaks in one of the
two orders, whichever module of the circle comes first)."""
import pkgutil
import subprocess
import sys

import pytest

import calibration
import models
import mva

MODULES = sorted(name for package in (mva, models, calibration)
                 for _, name, _ in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
                 if not name.endswith(".__main__"))       # importing __main__ runs the program


def test_every_package_module_is_listed():
    assert {"calibration.sim", "calibration.sim.bus", "calibration.sim._bus_kernel", "mva.network_kind",
            "mva.sweep_output", "mva.jit"} <= set(MODULES)


@pytest.mark.parametrize("order", ["alphabetical", "reverse"])
def test_every_module_imports_in_a_fresh_interpreter(order):
    names = MODULES if order == "alphabetical" else MODULES[::-1]
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    run = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]


def test_public_names():
    from calibration import (PRESETS, CoherenceViolation, SimulatorConfig, generate, load_workload, read_trace,
                             scalability, simulate, write_npz)
    from calibration.sim import bus_costs
    assert callable(simulate) and callable(generate) and callable(read_trace) and callable(write_npz)
    assert callable(load_workload) and callable(scalability) and issubclass(CoherenceViolation, AssertionError)
    assert "ec-server" in PRESETS and SimulatorConfig().cpus == 8 and bus_costs(128)["memory_to_cache"] == 80
    assert set(calibration.__all__) == set(calibration.sim.__all__)
