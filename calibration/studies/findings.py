"""A paper's findings against our measurements, in the one format every study prints.

Each study states the paper's headline findings as :class:`Claim` rows in its source,
with the band of values that counts as the same magnitude written down before it runs;
it then measures a value per claim, and :func:`judge` computes the verdict:

* ``yes``: the value moves away from ``neutral`` in the paper's direction and lies in
  ``band``;
* ``partly``: the paper's direction, outside the band;
* ``no``: the opposite direction, no effect at all, or not measured (``value`` None,
  with a note saying what is missing);
* ``in-sample``: the claim's data were fitted (``Claim.in_sample``); the row shows the
  value and what its verdict would be, and the count line does not count it.

A direction alone never makes a ``yes``, and no verdict is typed by hand.  The table
ends with the count line ``findings: Y yes, P partly, N no of T``; ``--findings FILE``
writes the rows as JSON (a list of objects) for notebooks and tests.

Example: a finding of a paper that measured 7.3% and accepts 3.65-11% as the same size

>>> claim = Claim("ge-rr-faster", "Talbot & Kelly 1999", "Fig. 1.5", "GE runs faster under round-robin",
...               "1 - time(rr) / time(ft), infinite buffers", 0.073, (0.0365, 0.11), "paper's value +-50%")
>>> [row.verdict for row in judge([claim], {"ge-rr-faster": 0.005})]
['partly']
>>> [row.verdict for row in judge([claim], {"ge-rr-faster": 0.08})]
['yes']
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

from mva.output import write_text

__all__ = ["Claim", "Finding", "judge", "format_findings", "write_findings", "count_line", "markdown"]

VERDICTS = ("yes", "partly", "no")
IN_SAMPLE = "in-sample"


@dataclass(frozen=True)
class Claim:
    """A finding as the paper states it, and what will count as reproducing it.

    ``metric``: what is measured, with its unit or normalisation; ``paper_value``: the
    paper's number (None where it gives only a direction); ``band``: ``(lo, hi)`` of our
    value that counts as the same magnitude, justified in ``why_band``; ``neutral``:
    the value of no effect (0 for a relative change, 1 for a ratio) and ``direction``
    +1 (the paper's value is above it) or -1 (below); ``in_sample``: the paper's number
    behind it was fitted, so the row is shown but not counted."""

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

    def __post_init__(self):
        lo, hi = self.band
        if not lo <= hi or self.direction not in (1, -1):
            raise ValueError(f"finding {self.id}: band {self.band} or direction {self.direction}")
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
    """One :class:`Finding` per claim: ``measured`` maps a claim's id to its value or to
    ``(value, note)``; a claim not measured gets ``no`` and a note saying so."""
    rows = []
    for claim in claims:
        got = measured.get(claim.id, (None, "not measured by this run"))
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
                            list(claim.band), claim.why_band, value, v, note))
    return rows


def count_line(rows) -> str:
    """``findings: Y yes, P partly, N no of T``, T the rows that are not in-sample, then
    ``(K in-sample, not counted)`` where K > 0."""
    counts = {v: sum(r.verdict == v for r in rows) for v in VERDICTS}
    fitted = sum(r.verdict == IN_SAMPLE for r in rows)
    line = f"findings: {counts['yes']} yes, {counts['partly']} partly, {counts['no']} no of {len(rows) - fitted}"
    return line + (f" ({fitted} in-sample, not counted)" if fitted else "")


def _number(x) -> str:
    return "-" if x is None else f"{x:.4g}"


def format_findings(rows, title: str = "Findings against the paper") -> str:
    """The terminal table: one block per finding, then the count line."""
    lines = [title]
    for r in rows:
        lines += [f"  [{r.verdict}] {r.id}: {r.statement} ({r.source})",
                  f"      {r.metric}: ours {_number(r.value)}, paper {_number(r.paper_value)}, band "
                  f"[{_number(r.band[0])}, {_number(r.band[1])}] ({r.why_band})"]
        if r.note:
            lines.append(f"      note: {r.note}")
    lines.append(count_line(rows))
    return "\n".join(lines)


def write_findings(rows, path) -> None:
    """The rows as JSON, a list of objects (the ``--findings FILE`` of every study)."""
    write_text(path, json.dumps([r.to_dict() for r in rows], indent=1) + "\n", "--findings")


def markdown(rows, title: str, command: str, appendix=()) -> str:
    """The findings as a Markdown page (``docs/results/*.md``): a title, the command that
    made it, one table row per finding, notes, the count line, then the ``appendix``'s
    (heading, preformatted text) sections (the tables the findings were read from)."""
    cell = lambda x: "-" if x is None else f"{x:.4g}"  # noqa: E731
    lines = [f"# {title}", "", f"Written by `{command}`; regenerate it the same way.", "",
             "| id | source | metric | paper | band | ours | verdict |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.id} | {r.source} | {r.metric} | {cell(r.paper_value)} | "
                     f"[{cell(r.band[0])}, {cell(r.band[1])}] | {cell(r.value)} | {r.verdict} |")
    lines += ["", "Notes:", ""] + [f"- **{r.id}**: {r.note}" for r in rows if r.note]
    lines += ["", count_line(rows), ""]
    for heading, text in appendix:
        lines += [f"## {heading}", "", "```", text, "```", ""]
    return "\n".join(lines)
