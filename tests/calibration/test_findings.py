"""The one findings format of every study (docs/findings.md): verdicts computed from a
value and a band written before the run, never from a sign alone; only the paper's
headlines are counted."""
import json

import pytest

from calibration.studies.findings import (CHECK, TEST_SIZED, Claim, NotAttempted, checks_line, count_line,
                                          format_findings, judge, markdown, write_findings)

CLAIM = Claim("x-faster", "A & B 1999", "Fig. 1", "X is 20% faster", "1 - time(x) / time(y)", 0.2, (0.1, 0.3),
              "+-50% of the effect")


@pytest.mark.parametrize("value, verdict", [(0.2, "yes"), (0.1, "yes"), (0.3, "yes"), (0.05, "partly"),
                                            (0.9, "partly"), (0.0, "no"), (-0.2, "no"), (None, "no"),
                                            (float("nan"), "no")])
def test_verdict_comes_from_the_band_and_the_direction(value, verdict):
    [row] = judge([CLAIM], {"x-faster": value})
    assert row.verdict == verdict
    assert (row.note == "") == (verdict == "yes")         # every other verdict says why


def test_a_falling_claim_and_an_unmeasured_one():
    slower = Claim("y-slower", "A & B 1999", "Tab. 2", "Y is 2x slower", "time(y) / time(x)", 2.0, (1.5, 2.5),
                   "+-50% of the effect", neutral=1.0)
    fewer = Claim("z-fewer", "A & B 1999", "Tab. 3", "Z halves misses", "misses(z) / misses(w)", 0.5, (0.25, 0.75),
                  "+-50%", neutral=1.0, direction=-1)
    rows = judge([slower, fewer, CLAIM], {"y-slower": 1.2, "z-fewer": (0.4, "")})
    assert [r.verdict for r in rows] == ["partly", "yes", "no"]
    assert rows[2].note == "not measured by this run" and rows[2].value is None
    assert count_line(rows) == "findings: 1 yes, 1 partly, 1 no of 3"
    assert format_findings(rows).splitlines()[-1] == count_line(rows)


def test_checks_and_rows_not_attempted_are_kept_apart_from_the_count():
    check = Claim("w-check", "A & B 1999", "§2", "W is definitional", "w", 1.0, (1.0, 1.0), "by definition",
                  neutral=0.5, kind=CHECK)
    later = Claim("v-later", "A & B 1999", "§5", "V needs a version we lack", "v", 0.2, (0.1, 0.3), "+-50%")
    rows = judge([CLAIM, check, later], {"x-faster": 0.2, "w-check": 1.0, "v-later": NotAttempted("no version V")})
    assert [r.verdict for r in rows] == ["yes", "yes", "not attempted"]
    assert rows[2].note == "no version V" and rows[2].value is None
    assert count_line(rows) == "findings: 1 yes, 0 partly, 0 no, 1 not attempted of 2"     # the check is not in it
    assert checks_line(rows) == "checks: 1 yes, 0 partly, 0 no of 1 (supporting, not counted)"
    text = format_findings(rows, test_sized=True)
    assert TEST_SIZED + count_line(rows) in text.splitlines()
    assert text.index("[yes] x-faster") < text.index("Checks") < text.index("[yes] w-check")
    page = markdown(rows, "T", "cmd")
    assert page.index("| x-faster |") < page.index("## Checks") < page.index("| w-check |")
    with pytest.raises(ValueError, match="kind"):
        Claim("bad", "p", "s", "st", "m", 0.2, (0.1, 0.3), "why", kind="aside")


def test_a_band_must_lie_on_the_paper_side():
    with pytest.raises(ValueError, match="other side"):
        Claim("bad", "p", "s", "st", "m", 0.2, (-0.3, -0.1), "why")
    with pytest.raises(ValueError):
        Claim("bad", "p", "s", "st", "m", 0.2, (0.3, 0.1), "why")


def test_rows_are_written_as_json(tmp_path):
    path = tmp_path / "f.json"
    write_findings(judge([CLAIM], {"x-faster": 0.25}), path)
    [row] = json.loads(path.read_text())
    assert row["id"] == "x-faster" and row["verdict"] == "yes" and row["band"] == [0.1, 0.3]
    assert set(row) == {"id", "paper", "source", "statement", "metric", "paper_value", "band", "why_band", "value",
                        "verdict", "note", "kind"}


def test_every_study_states_its_claims_before_it_runs():
    from calibration.studies import ccnuma

    ids = [c.id for c in ccnuma.CLAIMS]
    assert len(ids) == len(set(ids)) >= 8
    assert all(c.paper_value is None or c.band[0] <= c.paper_value <= c.band[1] for c in ccnuma.CLAIMS)


STUDIES = ("ccnuma", "svm", "cmt", "tpcc", "tpcw")


@pytest.mark.parametrize("study", STUDIES)
def test_no_counted_row_is_definitional_or_unbounded(study):
    import importlib

    claims = importlib.import_module(f"calibration.studies.{study}").CLAIMS
    counted = [c for c in claims if c.kind == "headline" and not c.in_sample]
    assert counted and len({c.id for c in claims}) == len(claims)
    for c in counted:
        lo, hi = c.band
        # a band ends on both sides near the paper's quantity: none reaches 100 times it
        scale = max(abs(c.paper_value or 0), abs(c.neutral), 1.0)
        assert hi - lo <= 20 * scale, (c.id, c.band)
        assert c.paper_value is None or lo <= c.paper_value <= hi, c.id
    # rows true by construction are checks, never counted
    definitional = {"ccnuma": {"t14-finite-less-queueing"}, "tpcw": {"pscr-no-invalidation"}}.get(study, set())
    assert definitional <= {c.id for c in claims if c.kind == "check"}
