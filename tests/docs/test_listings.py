"""The pages that list things list all of them: every notebook in notebooks/README.md,
every model kind in docs/files.md, every study in calibration.studies' docstring and the
README's layout."""
import re
from pathlib import Path

import calibration.studies
from mva.modelkind import model_kinds

ROOT = Path(__file__).resolve().parents[2]


def test_notebooks_readme_lists_every_notebook():
    listed = set(re.findall(r"`(\w+)\.ipynb`", (ROOT / "notebooks" / "README.md").read_text()))
    assert listed == {p.stem for p in (ROOT / "notebooks").glob("*.ipynb")}


def test_files_page_lists_every_model_kind():
    text = (ROOT / "docs" / "files.md").read_text()
    listed = set(re.findall(r"^- `(\w+)`:", text, flags=re.M))
    assert listed == set(model_kinds())


def test_every_study_is_listed():
    studies = {p.stem for p in (ROOT / "calibration" / "studies").glob("*.py")} - {
        "__init__", "cli", "executor", "findings"}
    doc = calibration.studies.__doc__
    readme = (ROOT / "README.md").read_text()
    for name in studies:
        assert f"calibration.studies.{name}`" in doc, name
        assert name in readme.split("## Layout")[1], name
