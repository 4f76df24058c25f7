"""A paper's findings against our measurements, in the one format every study prints.

Each study states the paper's findings as :class:`Claim` rows in its source, with the
band of values that counts as the same magnitude written down before it runs; it then
measures a value per claim, and :func:`judge` computes the verdict:

* ``yes``: the value moves away from ``neutral`` in the paper's direction and lies in
  ``band``;
* ``partly``: the paper's direction, outside the band;
* ``no``: the opposite direction, no effect at all, or not measured by this run
  (``value`` None, with a note saying what is missing);
* ``not attempted``: the study does not try this finding (its measurement is
  :class:`NotAttempted`, with the reason);
* ``in-sample``: the claim's data were fitted (``Claim.in_sample``); the row shows the
  value and what its verdict would be, and no count counts it.

A claim is a ``headline`` (one per headline finding of the paper: its abstract,
conclusions and main results tables, stated as the paper states it) or a ``check``
(a supporting, explanatory or definitional comparison).  Checks are printed in a table
of their own and never counted.  A direction alone never makes a ``yes``, and no
verdict is typed by hand.  The headline table ends with the count line ``findings: Y
yes, P partly, N no, A not attempted of T``, which a test-sized run (``--small``) says it
is; ``--findings FILE`` writes every row as JSON (a list of objects) for notebooks and
tests.  ``docs/findings.md`` describes the format for readers.

Example: a finding of a paper that measured 7.3% and accepts 3.65-11% as the same size

>>> claim = Claim("ge-rr-faster", "Talbot & Kelly 1999", "Fig. 1.5", "GE runs faster under round-robin",
...               "1 - time(rr) / time(ft), infinite buffers", 0.073, (0.0365, 0.11), "paper's value +-50%")
>>> [row.verdict for row in judge([claim], {"ge-rr-faster": 0.005})]
['partly']
>>> [row.verdict for row in judge([claim], {"ge-rr-faster": 0.08})]
['yes']
>>> [row.verdict for row in judge([claim], {"ge-rr-faster": NotAttempted("no GE kernel")})]
['not attempted']
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

from mva.output import write_text

__all__ = ["Claim", "Finding", "NotAttempted", "judge", "format_findings", "write_findings", "count_line",
           "checks_line", "markdown", "HEADLINE", "CHECK"]

VERDICTS = ("yes", "partly", "no")
IN_SAMPLE = "in-sample"
NOT_ATTEMPTED = "not attempted"
HEADLINE, CHECK = "headline", "check"
TEST_SIZED = "test-sized run (--small), not the paper's problem sizes: "


@dataclass(frozen=True)
class NotAttempted:
    """The measurement of a claim the study does not try, and why (e.g. "Splash-3 has
    no restructured versions")."""

    reason: str


@dataclass(frozen=True)
class Claim:
    """A finding as the paper states it, and what will count as reproducing it.

    ``metric``: what is measured, with its unit or normalisation; ``paper_value``: the
    paper's number (None where it gives only a direction); ``band``: ``(lo, hi)`` of our
    value that counts as the same magnitude, justified in ``why_band``; ``neutral``:
    the value of no effect (0 for a relative change, 1 for a ratio) and ``direction``
    +1 (the paper's value is above it) or -1 (below); ``in_sample``: the paper's number
    behind it was fitted, so the row is shown but not counted; ``kind``: :data:`HEADLINE`
    (a headline finding of the paper, counted) or :data:`CHECK` (supporting, not counted)."""

    id: str
    paper: str
    source: str
    statement: str
    metric: str
    paper_value: float | None
    band: tuple
    why_band: str
    neutral: float = 0.0
    direction: int = 1
    in_sample: bool = False
    kind: str = HEADLINE

    def __post_init__(self):
        lo, hi = self.band
        if not lo <= hi or self.direction not in (1, -1):
            raise ValueError(f"finding {self.id}: band {self.band} or direction {self.direction}")
        if self.kind not in (HEADLINE, CHECK):
            raise ValueError(f"finding {self.id}: kind {self.kind!r} is neither {HEADLINE!r} nor {CHECK!r}")
        if (lo - self.neutral) * self.direction < 0 and (hi - self.neutral) * self.direction < 0:
            raise ValueError(f"finding {self.id}: the band lies on the other side of {self.neutral}")


@dataclass(frozen=True)
class Finding:
    """A :class:`Claim` with our ``value``, the computed ``verdict`` and a ``note``."""

    id: str
    paper: str
    source: str
    statement: str
    metric: str
    paper_value: float | None
    band: list
    why_band: str
    value: float | None
    verdict: str
    note: str
    kind: str = HEADLINE

    def to_dict(self) -> dict:
        return asdict(self)


def verdict(claim: Claim, value: float | None) -> str:
    """``yes``, ``partly`` or ``no`` from ``value`` and the claim's band and direction."""
    if value is None or not math.isfinite(value):
        return "no"
    if (value - claim.neutral) * claim.direction <= 0:
        return "no"
    lo, hi = claim.band
    return "yes" if lo <= value <= hi else "partly"


def judge(claims, measured: dict) -> list[Finding]:
    """One :class:`Finding` per claim: ``measured`` maps a claim's id to its value, to
    ``(value, note)`` or to :class:`NotAttempted`; a claim not measured gets ``no`` and
    a note saying so."""
    rows = []
    for claim in claims:
        got = measured.get(claim.id, (None, "not measured by this run"))
        if isinstance(got, NotAttempted):
            rows.append(Finding(claim.id, claim.paper, claim.source, claim.statement, claim.metric, claim.paper_value,
                                list(claim.band), claim.why_band, None, NOT_ATTEMPTED, got.reason, claim.kind))
            continue
        value, note = got if isinstance(got, tuple) else (got, "")
        value = None if value is None else float(value)
        v = verdict(claim, value)
        if v != "yes" and not note:
            note = ("no value: not measured" if value is None or not math.isfinite(value)
                    else f"{value:.4g} is outside the band [{claim.band[0]:.4g}, {claim.band[1]:.4g}]" if v == "partly"
                    else f"{value:.4g} is not on the paper's side of {claim.neutral:g}")
        if claim.in_sample:
            note = f"fitted data, not counted (would be {v})" + (f": {note}" if note else "")
            v = IN_SAMPLE
        rows.append(Finding(claim.id, claim.paper, claim.source, claim.statement, claim.metric, claim.paper_value,
                            list(claim.band), claim.why_band, value, v, note, claim.kind))
    return rows


def _tally(rows) -> tuple:
    counts = {v: sum(r.verdict == v for r in rows) for v in (*VERDICTS, NOT_ATTEMPTED)}
    fitted = sum(r.verdict == IN_SAMPLE for r in rows)
    line = f"{counts['yes']} yes, {counts['partly']} partly, {counts['no']} no"
    if counts[NOT_ATTEMPTED]:
        line += f", {counts[NOT_ATTEMPTED]} not attempted"
    return f"{line} of {len(rows) - fitted}", fitted


def count_line(rows, test_sized: bool = False) -> str:
    """The headline rows' count: ``findings: Y yes, P partly, N no[, A not attempted] of
    T``, T the headline rows that are not in-sample, then ``(K in-sample, not counted)``
    where K > 0; after :data:`TEST_SIZED` for a ``--small`` run.  Checks are not counted."""
    line, fitted = _tally([r for r in rows if r.kind == HEADLINE])
    line = "findings: " + line + (f" ({fitted} in-sample, not counted)" if fitted else "")
    return (TEST_SIZED + line) if test_sized else line


def checks_line(rows) -> str:
    """``checks: Y yes, P partly, N no of C (supporting, not counted)`` of the check rows."""
    line, fitted = _tally([r for r in rows if r.kind == CHECK])
    return f"checks: {line}" + (f", {fitted} in-sample" if fitted else "") + " (supporting, not counted)"


def _number(x) -> str:
    return "-" if x is None else f"{x:.4g}"


def _block(r) -> list:
    lines = [f"  [{r.verdict}] {r.id}: {r.statement} ({r.source})",
             f"      {r.metric}: ours {_number(r.value)}, paper {_number(r.paper_value)}, band "
             f"[{_number(r.band[0])}, {_number(r.band[1])}] ({r.why_band})"]
    return lines + ([f"      note: {r.note}"] if r.note else [])


def format_findings(rows, title: str = "Findings against the paper", test_sized: bool = False) -> str:
    """The terminal tables: the headline findings, one block each, and their count line;
    then the checks (supporting, not counted) and theirs."""
    headlines = [r for r in rows if r.kind == HEADLINE]
    checks = [r for r in rows if r.kind == CHECK]
    lines = [f"{title}: the paper's headline findings"]
    for r in headlines:
        lines += _block(r)
    lines.append(count_line(rows, test_sized))
    if checks:
        lines.append("Checks (supporting or definitional comparisons, not counted)")
        for r in checks:
            lines += _block(r)
        lines.append(checks_line(rows))
    return "\n".join(lines)


def write_findings(rows, path) -> None:
    """The rows as JSON, a list of objects (the ``--findings FILE`` of every study)."""
    write_text(path, json.dumps([r.to_dict() for r in rows], indent=1) + "\n", "--findings")


def markdown(rows, title: str, command: str, appendix=(), test_sized: bool = False) -> str:
    """The findings as a Markdown page (``docs/results/*.md``): a title, the command that
    made it, the headline findings' table, its notes and count line, the checks' table
    and its count, then the ``appendix``'s (heading, preformatted text) sections (the
    tables the findings were read from)."""
    cell = lambda x: "-" if x is None else f"{x:.4g}"  # noqa: E731
    lines = [f"# {title}", "", f"Written by `{command}`; regenerate it the same way.", ""]
    for kind, heading, tail in ((HEADLINE, "Headline findings of the paper", count_line(rows, test_sized)),
                                (CHECK, "Checks (supporting or definitional, not counted)", checks_line(rows))):
        chosen = [r for r in rows if r.kind == kind]
        if not chosen:
            continue
        lines += [f"## {heading}", "", "| id | source | metric | paper | band | ours | verdict |",
                  "|---|---|---|---|---|---|---|"]
        for r in chosen:
            lines.append(f"| {r.id} | {r.source} | {r.metric} | {cell(r.paper_value)} | "
                         f"[{cell(r.band[0])}, {cell(r.band[1])}] | {cell(r.value)} | {r.verdict} |")
        lines += ["", "Notes:", ""] + [f"- **{r.id}**: {r.note}" for r in chosen if r.note]
        lines += ["", tail, ""]
    for heading, text in appendix:
        lines += [f"## {heading}", "", "```", text, "```", ""]
    return "\n".join(lines)
