"""Every notebook in notebooks/ runs on a real kernel with its small test parameters,
produces the figures it declares, and renders to HTML with them embedded.

A notebook declares, in its metadata under ``mva``, ``test_parameters`` (assignments
injected after the cell tagged ``parameters``, as papermill does) and ``figures`` (how
many PNG figures a run shows).  Adding a notebook is dropping a file in notebooks/.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

import nbformat
import nbclient

pytestmark = pytest.mark.slow          # every notebook executed: minutes; .ci/run runs it too

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _with_test_parameters(nb):
    params = nb.metadata.get("mva", {}).get("test_parameters", {})
    index = next((i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])), None)
    assert index is not None, "a notebook needs a cell tagged 'parameters'"
    source = "\n".join(f"{name} = {value!r}" for name, value in params.items())
    injected = nbformat.v4.new_code_cell(source)
    injected.metadata["tags"] = ["injected-parameters"]
    nb.cells.insert(index + 1, injected)
    return nb


def test_there_are_notebooks():
    assert {p.stem for p in NOTEBOOKS} >= {"tpcc_capacity_planning", "coherence_protocols", "calibration"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_and_renders(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit notebooks without outputs"
    nb = _with_test_parameters(nb)
    started = time.perf_counter()
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()            # raises CellExecutionError on any error
    seconds = time.perf_counter() - started
    figures = sum(1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                  if "image/png" in o.get("data", {}))
    assert figures == nb.metadata["mva"]["figures"], f"{path.stem}: {figures} figures"
    from nbconvert import HTMLExporter

    html, _ = HTMLExporter().from_notebook_node(nb)
    assert html.count("<img") >= figures and html.count("data:image/png;base64") >= figures
    (tmp_path / f"{path.stem}.html").write_text(html)
    print(f"{path.stem}: {seconds:.1f} s, {figures} figures")
