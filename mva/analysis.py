"""Questions asked of sweeps: targets, sensitivities, plots.

- :func:`parse_condition` / :func:`first_meeting`: the smallest case of a sweep that meets
  a target such as ``tpmC>=55`` (cases in grid order, the first swept parameter most
  significant, so with ascending sweeps "first" is "smallest").
- :func:`sensitivities`: elasticities d log y / d log p of an output for every continuous
  parameter, by central finite differences (one-sided at a bound).
- :func:`plot_sweep`: an output against the first swept parameter, one line per value of
  the second (matplotlib).
"""
from __future__ import annotations

import itertools
import operator
import re

import numpy as np
import pandas as pd

from .errors import ModelError
from .output import save_to

__all__ = ["parse_condition", "first_meeting", "sensitivities", "plot_sweep"]

_OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}
_CONDITION = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*(>=|<=|>|<)\s*([-+0-9.eE]+)\s*$")


def parse_condition(text: str):
    """``"tpmC>=55"`` to ``("tpmC", ">=", 55.0)``."""
    match = _CONDITION.match(text or "")
    if not match:
        raise ModelError("--target", f"expected OUTPUT>=VALUE (or <=, >, <), got {text!r}")
    name, op, value = match.groups()
    try:
        return name, op, float(value)
    except ValueError:
        raise ModelError("--target", f"{value!r} is not a number") from None


def first_meeting(frame: pd.DataFrame, condition: str):
    """The first row of ``frame`` meeting ``condition``, or None."""
    name, op, value = parse_condition(condition)
    if name not in frame.columns:
        outputs = [c for c in frame.columns if frame[c].dtype.kind == "f"]
        raise ModelError("--target", f"no output {name!r}; outputs: {', '.join(outputs)}")
    mask = _OPS[op](frame[name].to_numpy(dtype=float), value)
    hits = np.flatnonzero(mask)
    return None if len(hits) == 0 else frame.iloc[int(hits[0])]


def _scaled(value, factor):
    if isinstance(value, (list, tuple)):
        return type(value)(v * factor for v in value)
    return value * factor


def _continuous(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return value != 0.0 and np.isfinite(value)
    if isinstance(value, (list, tuple)) and value:
        return all(isinstance(v, float) or (isinstance(v, int) and not isinstance(v, bool)) for v in value) \
            and any(v != 0 for v in value) and any(isinstance(v, float) for v in value)
    return False


def sensitivities(target, output: str | None = None, rel_step: float = 1e-3) -> pd.DataFrame:
    """Elasticity of ``output`` (default the target's main output) to every continuous parameter.

    ``e = (y(p (1 + h)) - y(p (1 - h))) / (2 h y(p))``, the central difference of
    ``log y`` in ``log p`` with relative step ``h`` (truncation error O(h^2); with the
    models' fixed-point tolerance 1e-10 the rounding part is about 1e-7 at h = 1e-3).
    Lists (e.g. per-class demands) are scaled as a whole.  Where ``p (1 + h)`` (or
    ``p (1 - h)``) is outside the parameter's domain the one-sided difference is used;
    where both are, the parameter is skipped.  Integer and choice parameters are skipped:
    they have no derivative.  Rows are ranked by |elasticity|.
    """
    output = output or target.main_output
    params = [p for p in target.parameters() if p.role == "input" and _continuous(p.default)]
    cases, plan = [{}], []
    for p in params:
        sides = []
        for sign in (+1, -1):
            value = _scaled(p.default, 1 + sign * rel_step)
            try:
                target.validate({p.name: value})
            except ModelError:
                continue
            sides.append(sign)
            cases.append({p.name: value})
        plan.append((p, sides))
    frame = target.solve_cases(cases)
    if output not in frame.columns:
        raise ModelError("--sensitivity", f"no output {output!r}; outputs: {', '.join(frame.columns)}")
    y = frame[output].to_numpy(dtype=float)
    y0 = y[0]
    at = 1
    result = []
    for p, sides in plan:
        values = {s: y[at + i] for i, s in enumerate(sides)}
        at += len(sides)
        if not sides or y0 == 0:
            continue
        if len(sides) == 2:
            e = (values[1] - values[-1]) / (2 * rel_step * y0)
            how = "central"
        else:
            s = sides[0]
            e = s * (values[s] - y0) / (rel_step * y0)
            how = "forward" if s > 0 else "backward"
        result.append({"parameter": p.name, "value": p.default, "unit": p.unit, "elasticity": e, "difference": how})
    frame = pd.DataFrame(result, columns=["parameter", "value", "unit", "elasticity", "difference"])
    order = np.argsort(-np.abs(frame["elasticity"].to_numpy()), kind="stable")
    return frame.iloc[order].reset_index(drop=True)


def _bars(ax, frame: pd.DataFrame, swept: list[str], output: str) -> None:
    """Grouped bars for a named (non-numeric) first parameter: one group per combination
    of the others, one bar per value of ``swept[0]``."""
    x, rest = swept[0], swept[1:]
    values = list(dict.fromkeys(frame[x]))
    groups = list(frame.groupby(rest, sort=False)) if rest else [((), frame)]
    width = 0.8 / max(len(values), 1)
    for k, value in enumerate(values):
        heights = [float(g.loc[g[x] == value, output].iloc[0]) if (g[x] == value).any() else float("nan")
                   for _, g in groups]
        ax.bar(np.arange(len(groups)) + (k - (len(values) - 1) / 2) * width, heights, width, label=f"{x} = {value}")
    labels = [" ".join(str(v) for v in (key if isinstance(key, tuple) else (key,))) for key, _ in groups]
    ax.set_xticks(np.arange(len(groups)), labels, fontsize="small", rotation=45 if len(groups) > 6 else 0)
    ax.legend(fontsize="small")


class UnchangedSweeps:
    """Which swept parameters change no output: a what-if that adds a resource the
    workload never uses (a second I/O bus that no disk is mapped to) answers the same
    for every value, and the user should hear it.  Fed the sweep's chunks; for grids of
    at most :attr:`MAX_CASES` cases (the outputs are kept to compare)."""

    MAX_CASES = 100_000

    def __init__(self, swept):
        self.swept = list(swept)
        self.frames = []

    def add(self, frame: pd.DataFrame) -> None:
        self.frames.append(frame)

    def warnings(self) -> list[str]:
        """One line per swept parameter whose every value gives the same outputs (to a
        relative 1e-9) as the others with the rest of the grid fixed; naming the
        utilisations that are zero in every case (the idle resources), if any."""
        if not self.frames:
            return []
        frame = pd.concat(self.frames, ignore_index=True)
        outputs = [c for c in frame.columns if c not in self.swept and c not in ("converged", "bottleneck")
                   and pd.api.types.is_numeric_dtype(frame[c])]
        # a resource absent in some cases (NaN) is as idle as one present and unused (0)
        values = frame[outputs].astype(float).fillna({c: 0.0 for c in outputs if c.startswith("utilization.")})
        idle = [c for c in outputs if c.startswith("utilization.") and values[c].eq(0).all()]
        keys = {n: frame[n].map(repr) for n in self.swept}       # list values (mappings) hash as text
        lines = []
        for name in self.swept:
            if keys[name].nunique() < 2:
                continue
            others = [keys[n] for n in self.swept if n != name]
            groups = values.groupby(others, sort=False) if others else values.groupby(np.zeros(len(values)))
            high, low = groups.max(), groups.min()
            if (((high - low).abs() <= 1e-9 * high.abs()) | high.isna()).all(axis=None):
                why = f"; idle in every case: {', '.join(idle)}" if idle else ""
                lines.append(f"--sweep {name}: every value gives the same outputs, so this what-if changes "
                             f"nothing{why}")
        return lines


#: Markers and dashes cycled over a plot's lines, so that lines which coincide stay visible.
_STYLES = [dict(marker=m, linestyle=d, ms=4) for m, d in
           (("o", "-"), ("s", "--"), ("^", ":"), ("D", "-."), ("v", (0, (5, 1))), ("x", (0, (3, 1, 1, 1))))]


def plot_sweep(frame: pd.DataFrame, swept: list[str], output: str, path: str, unit_of=None) -> None:
    """Save a PNG of ``output`` against ``swept[0]``, one line per value of ``swept[1]``;
    when ``swept[0]`` takes names (``communication=A,H,B``), grouped bars instead, one
    group per combination of the other swept parameters.  ``unit_of(name)`` labels the
    axes with units (``cpus [processors]``).  When ``frame`` has the output per class
    (``throughput.oltp``, a network of several classes) each class is its own line, not
    their sum, and an index into a per-class list is labelled with its class."""
    from .output import require_matplotlib

    plt = require_matplotlib("--plot")
    if output not in frame.columns:
        raise ModelError("--plot", f"no output {output!r}")
    per_class = [c for c in frame.columns if c.startswith(output + ".")]
    classes = [c[len(output) + 1:] for c in per_class]
    lines = per_class or [output]
    x = swept[0]
    unit_of = unit_of or (lambda name: "")

    def named(name):
        index = re.search(r"\[(\d+)\]$", name)
        known = per_class and index and int(index.group(1)) < len(classes)
        return f"{name} ({classes[int(index.group(1))]})" if known else name

    def labelled(name):
        return f"{named(name)} [{unit_of(name)}]" if unit_of(name) else named(name)

    def value_label(name, value):
        return f"{named(name)} = {value:g}" + (f" {unit_of(name)}" if unit_of(name) else "") \
            if isinstance(value, (int, float, np.number)) else f"{named(name)} = {value}"

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    styles = itertools.cycle(_STYLES)
    if not pd.api.types.is_numeric_dtype(frame[x]):
        _bars(ax, frame, swept, output)
    elif len(swept) > 1:
        for value, group in frame.groupby(swept[1], sort=False):
            for line in lines:
                label = value_label(swept[1], value) + (f", {line}" if per_class else "")
                ax.plot(group[x].to_numpy(), group[line].to_numpy(), label=label, **next(styles))
    else:
        for line in lines:
            ax.plot(frame[x].to_numpy(), frame[line].to_numpy(), label=line, **next(styles))
    if len(ax.get_lines()) > 3:          # many lines: the legend beside the axes, not over the data
        fig.set_size_inches(9.6, 4.2)
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    elif len(ax.get_lines()) > 1:
        ax.legend(fontsize="small")
    ax.set_xlabel(labelled(x) if pd.api.types.is_numeric_dtype(frame[x]) else ", ".join(swept[1:]))
    if pd.api.types.is_integer_dtype(frame[x]):         # a count (customers, CPUs): whole ticks
        from matplotlib.ticker import MaxNLocator
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(labelled(output) + (" per class" if per_class else ""))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    try:
        save_to(path, "--plot", lambda name: fig.savefig(name, dpi=120))
    finally:
        plt.close(fig)
