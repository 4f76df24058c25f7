"""Executable documentation: the docstring examples of every module of mva, models and
calibration run, and every module whose docstrings have examples (or an ``Examples``
section) attempts at least one and prints what it says it prints."""
import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import calibration
import models
import mva

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(m.name for package in (mva, models, calibration)
                 for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
                 if not m.name.endswith("__main__") and "._moved" not in m.name)
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def _examples(module) -> list:
    """The doctests of ``module`` that hold at least one example."""
    return [t for t in doctest.DocTestFinder().find(module) if t.examples]


def _documented(module) -> bool:
    """Whether a docstring of ``module`` shows an example or an Examples section."""
    source = Path(module.__file__).read_text()
    return ">>> " in source or re.search(r"^\s*Examples?\n\s*-{3,}", source, flags=re.M) is not None


def _deprecated(name: str) -> bool:
    """A module of the old flat layout, kept one release (it only re-exports)."""
    path = ROOT / (name.replace(".", "/") + ".py")
    return path.exists() and "reexport(globals()" in path.read_text()


DOCUMENTED = [n for n in MODULES if not _deprecated(n) and _documented(importlib.import_module(n))]


@pytest.mark.parametrize("name", DOCUMENTED)
def test_docstring_examples_run_and_print_what_they_say(name, monkeypatch):
    monkeypatch.chdir(ROOT)                  # examples name files as data/...
    module = importlib.import_module(name)
    tests = _examples(module)
    assert tests, f"{name} documents examples but doctest finds none to attempt"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0, f"{result.failed} of {result.attempted} examples failed"


def test_enough_modules_carry_examples():
    """The public entry points of each layer show an example that runs."""
    assert {"mva.exact", "mva.approximate", "mva.targets", "mva.simulation_settings", "calibration.sim.registry",
            "calibration.studies.findings"} <= set(DOCUMENTED)
    attempted = sum(len(t.examples) for n in DOCUMENTED for t in _examples(importlib.import_module(n)))
    assert attempted >= 25, attempted


def test_public_api_is_declared():
    for name in mva.__all__:
        assert hasattr(mva, name), name
