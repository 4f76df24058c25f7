"""docs/results/*.md are what the studies write (``--results``): a --small run of every
study writes a page with the same structure (title, table columns, the findings' ids in
order, the count line), so a study whose findings change and a page left stale differ."""
import re
from pathlib import Path

import pytest

from calibration.studies.findings import CHECK, HEADLINE, TEST_SIZED

ROOT = Path(__file__).resolve().parents[2]
SMALL = {
    "ccnuma": ["--small", "--processes", "1"],
    "svm": ["--small", "--nodes", "4", "--events", "100000", "--processes", "1"],
    "cmt": ["--small", "--groups", "1", "--slice", "50000"],
    "tpcw": ["--references", "130000"],
    "tpcc": ["--events", "20000"],
    "tpcc_postgres": ["--events", "20000"],
}


def structure(text: str) -> dict:
    """What a results page must keep whatever the run's size: its title, the table's
    header, the findings' ids in order (headlines, then checks), and the count lines
    (a test-sized run's says so; which rows a run could not attempt may differ)."""
    lines = text.splitlines()
    ids = [line.split("|")[1].strip() for line in lines if line.startswith("| ") and not line.startswith("| id ")]
    count = next(line for line in lines if "findings: " in line).removeprefix(TEST_SIZED)
    checks = [line for line in lines if line.startswith("checks: ")]
    normal = lambda line: re.sub(r"\d+ (yes|partly|no)", r"N \1", re.sub(r", \d+ not attempted", "", line))  # noqa: E731
    return {"title": lines[0], "header": next(line for line in lines if line.startswith("| id ")), "ids": ids,
            "count": normal(count), "checks": [normal(line) for line in checks]}


@pytest.mark.slow
@pytest.mark.parametrize("study", sorted(SMALL))
def test_a_small_run_writes_a_page_of_the_same_structure(study, tmp_path, capsys):
    import importlib

    page = ROOT / "docs" / "results" / f"{study}.md"
    out = tmp_path / f"{study}.md"
    main = importlib.import_module(f"calibration.studies.{study}").main
    assert main([*SMALL[study], "--results", str(out)]) == 0
    capsys.readouterr()
    assert structure(out.read_text()) == structure(page.read_text())
    claims = importlib.import_module(f"calibration.studies.{study}").CLAIMS
    assert structure(page.read_text())["ids"] == ([c.id for c in claims if c.kind == HEADLINE]
                                                  + [c.id for c in claims if c.kind == CHECK])
    assert not page.read_text().count(TEST_SIZED)          # a stored page is never a test-sized run


def test_every_study_of_a_paper_has_a_results_page():
    pages = {p.stem for p in (ROOT / "docs" / "results").glob("*.md")}
    assert pages == set(SMALL)
