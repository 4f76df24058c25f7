"""Public imports work and no package has an import circle: every module is imported in
a fresh interpreter, in alphabetical order and in reverse (a circle breaks in one of the
two orders, whichever module of the circle comes first)."""
import ast
import importlib.util
import pkgutil
import subprocess
import sys
from pathlib import Path

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
    from calibration import (PRESETS, BusConfig, CoherenceViolation, generate, load_workload, read_trace,
                             scalability, simulate_bus as simulate, write_npz)
    from calibration.sim import bus_costs
    assert callable(simulate) and callable(generate) and callable(read_trace) and callable(write_npz)
    assert callable(load_workload) and callable(scalability) and issubclass(CoherenceViolation, AssertionError)
    assert "ec-server" in PRESETS and BusConfig().cpus == 8 and bus_costs(128)["memory_to_cache"] == 80
    assert set(calibration.__all__) == set(calibration.sim.__all__)


def _module_imports(name: str, path: Path) -> set:
    """Every project module ``name`` imports, at its top or inside a function (lazy)."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)       # "from pkg import module"
    return {m for m in out if m in PATHS}


PATHS = {name: Path(importlib.util.find_spec(name).origin) for name in MODULES}


def test_no_module_imports_itself_back_even_lazily():
    """No circle of imports between modules, counting imports inside functions: a lazy
    import that closes a circle hides a layering error (the layers: mva, models,
    calibration.sim, calibration.profiles, calibration.studies; a package imports what
    its modules need, not the reverse)."""
    graph = {name: _module_imports(name, path) - {name} for name, path in PATHS.items()}
    # a module reaches its own package's __init__ only by being imported through it
    for name in graph:
        graph[name] = {m for m in graph[name] if not name.startswith(m + ".")}
    seen, stack, cycles = {}, [], []

    def visit(node):
        seen[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if seen.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in seen:
                visit(nxt)
        stack.pop()
        seen[node] = "done"

    for node in sorted(graph):
        if node not in seen:
            visit(node)
    assert not cycles, "import circles: " + "; ".join(" -> ".join(c) for c in cycles)
