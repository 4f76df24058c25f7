"""The layered study's results measured on the timed SVM machine (Bilas, Jiang, Zhou &
Singh, "Limits to the Performance of Software Shared Memory: A Layered Approach", HPCA
1999): Figure 3's speedups over the layer combinations, Figure 4's breakdowns, Table 4's
split of protocol time, Table 5's summary for HLRC and Figure 5's one-parameter sweeps,
each computed from runs of :func:`calibration.sim.svm.simulate_svm` (the machine
simulates every cost and its contention), not from the layered model.

:func:`machine_grid` runs each program at the combinations of :data:`HLRC_CASES` and
:data:`SC_CASES` (communication set of Table 2 then protocol set of Table 3, ``B+B`` the
paper's BB+) and at PRAM (every cost zero); :func:`parameter_sweeps` moves one
communication parameter of Table 2 at a time through its best, halfway, achievable and
worse values with the others achievable and protocol costs original (Figure 5).
:func:`table4` and :func:`table5` read the grid.
"""
from __future__ import annotations

import pandas as pd

from mva.output import save_to

from .executor import run_all

__all__ = ["HLRC_CASES", "SC_CASES", "PARAMETER_VALUES", "TEN_FOLD", "TIE", "machine_grid", "parameter_sweeps",
           "table4", "table5", "largest_gain", "breakdown_table", "format_table5", "machine_runs", "plot_sweeps",
           "saved"]

#: Figure 3's bars for HLRC (AO, its better side AB BO BH BB BB+, its worse side WB WO)
#: with the halfway combinations the text discusses (AH, HO, HH, HB; Table 5 needs them)
HLRC_CASES = ("WO", "WB", "AO", "AH", "AB", "HO", "HH", "HB", "BO", "BH", "BB", "B+B")
#: SC's bars (the paper varies no protocol cost for SC; AB and BB are kept for the
#: protocol-layer comparison of its section 4.3)
SC_CASES = ("WO", "AO", "AB", "HO", "BO", "BB", "B+B")
#: Figure 5: each communication parameter at Table 2's best, halfway, achievable and
#: worse values (the I/O bus bandwidth in bytes/cycle, the others in cycles)
PARAMETER_VALUES = {"host_overhead": (0.0, 300.0, 600.0, 1200.0), "ni_occupancy": (0.0, 500.0, 1000.0, 2000.0),
                    "io_bandwidth": (2.0, 1.25, 0.5, 0.25), "message_handling": (0.0, 100.0, 200.0, 400.0)}
#: Table 5's "about 10-fold or greater speedup on 16 processors": at least this
TEN_FOLD = 9.5
#: Table 5 (ii) calls BH and HB tied when their speedups differ by less than this (relative)
TIE = 0.02
COMMUNICATION_LEVELS = ("A", "H", "B")
PROTOCOL_LEVELS = ("O", "H", "B")


def _split(case: str) -> tuple[str, str]:
    """``"B+B"`` -> ``("B+", "B")``: a case's communication and protocol sets."""
    return case[:-1], case[-1]


def machine_runs(workload_source, coherence: str, granularity: int, configs: list[dict], load) -> list[dict]:
    """One program under one protocol at each of ``configs`` (keyword arguments of
    :class:`calibration.sim.svm.SVMConfig` beyond the protocol and unit): one row each with
    the speedup, execution time, the mean breakdown (% of the execution time) and Table 4's
    shares (an executor task; ``load(workload_source)`` gives the workload, loaded once)."""
    from ..sim.svm import SVMConfig, simulate_svm

    workload = load(workload_source)
    rows = []
    for config in configs:
        run = simulate_svm(workload, SVMConfig(coherence, None if coherence == "hlrc" else granularity, **config))
        execution = max(run.execution_cycles, 1)
        share = run.protocol_share()
        rows.append({"speedup": run.speedup, "execution_cycles": run.execution_cycles,
                     **{f"breakdown.{k}": 100.0 * float(v.mean()) / execution for k, v in run.breakdown().items()},
                     "protocol_share": share["protocol"], "handler_share": share["handler"],
                     "diff_share": share["diff"], "seconds": run.seconds})
    return rows


def machine_grid(sources: dict, granularity: dict, load, hlrc_cases=HLRC_CASES, sc_cases=SC_CASES,
                 **runs) -> pd.DataFrame:
    """Every program of ``sources`` ({name: what ``load`` takes}) on the machine at each
    case of ``hlrc_cases`` and ``sc_cases`` (SC at the program's unit of ``granularity``)
    and at PRAM: one row per (kernel, coherence, case) with the columns of the layered
    model's grid (``speedup``, ``pram_speedup``, ``breakdown.*`` in % of the execution
    time) and Table 4's shares.  ``runs``: where the runs go (one task per program and
    protocol, :func:`calibration.studies.executor.run_all`)."""
    keys = [(name, "hlrc", hlrc_cases) for name in sources] + [(name, "sc", sc_cases) for name in sources]
    pram = {"communication": "ideal", "protocol_costs": "B"}
    tasks = [(machine_runs, (sources[name], coherence, granularity[name],
                             [pram] + [dict(zip(("communication", "protocol_costs"), _split(c), strict=True))
                                       for c in cases], load))
             for name, coherence, cases in keys]
    rows = []
    for (name, coherence, cases), got in zip(keys, run_all(tasks, **runs), strict=True):
        for case, row in zip(cases, got[1:], strict=True):
            communication, protocol = _split(case)
            rows.append({"kernel": name, "coherence": coherence, "communication": communication,
                         "protocol": protocol, **row, "pram_speedup": got[0]["speedup"]})
    return pd.DataFrame(rows)


def parameter_sweeps(sources: dict, granularity: dict, load, values=None, **runs) -> pd.DataFrame:
    """Figure 5: each program under both protocols with one communication parameter at a
    time at each of its ``values`` (default :data:`PARAMETER_VALUES`), the others at the
    achievable set, protocol costs original: rows (kernel, coherence, parameter, value,
    speedup)."""
    from models.svm_cluster import COMMUNICATION

    values = values or PARAMETER_VALUES
    points = [(p, v) for p, vs in values.items() for v in vs]
    achievable = {k: 1.0 / v if k == "transfer" else v for k, v in COMMUNICATION["A"].items()}
    achievable["io_bandwidth"] = achievable.pop("transfer")

    def setting(parameter, value):
        """The run's overrides: none at the achievable value (one run serves every parameter there)."""
        return () if value == achievable[parameter] else ((parameter, value),)

    configs = list(dict.fromkeys(setting(p, v) for p, v in points))
    keys = [(name, c) for name in sources for c in ("hlrc", "sc")]
    tasks = [(machine_runs, (sources[name], c, granularity[name],
                             [{"communication": "A", "protocol_costs": "O", **dict(o)} for o in configs], load))
             for name, c in keys]
    rows = []
    for (name, coherence), got in zip(keys, run_all(tasks, **runs), strict=True):
        speedup = {o: row["speedup"] for o, row in zip(configs, got, strict=True)}
        for parameter, value in points:
            rows.append({"kernel": name, "coherence": coherence, "parameter": parameter, "value": value,
                         "speedup": speedup[setting(parameter, value)]})
    return pd.DataFrame(rows)


def largest_gain(sweeps: pd.DataFrame) -> pd.DataFrame:
    """Per (kernel, coherence): each parameter's gain from its achievable to its best
    value alone (speedup ratio - 1; the best value is the first of
    :data:`PARAMETER_VALUES`, the achievable the third) and the parameter that gains most."""
    rows = []
    for (kernel, coherence), part in sweeps.groupby(["kernel", "coherence"], sort=False):
        gains = {}
        for parameter, values in PARAMETER_VALUES.items():
            at = part[part.parameter == parameter].set_index("value").speedup
            gains[parameter] = float(at[values[0]] / at[values[2]] - 1)
        rows.append({"kernel": kernel, "coherence": coherence, **{f"gain.{p}": g for p, g in gains.items()},
                     "largest": max(gains, key=gains.get)})
    return pd.DataFrame(rows)


def table4(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 4: per program, HLRC at AO: protocol activity as % of the processors' time,
    and the % of it in handler execution and in diff computation."""
    at = frame[(frame.coherence == "hlrc") & (frame.communication == "A") & (frame.protocol == "O")]
    return at[["kernel", "protocol_share", "handler_share", "diff_share"]].rename(
        columns={"protocol_share": "total%", "handler_share": "handler%", "diff_share": "diff%"}).reset_index(drop=True)


def _hlrc_speedups(frame: pd.DataFrame, kernel: str) -> dict:
    part = frame[(frame.kernel == kernel) & (frame.coherence == "hlrc")]
    return dict(zip(part.communication + part.protocol, part.speedup, strict=True))


def table5(frame: pd.DataFrame, threshold: float = TEN_FOLD) -> pd.DataFrame:
    """Table 5 for HLRC, computed from the grid: (i) is BO better than AB; (ii) is BH
    better than HB (``tied`` within :data:`TIE`); (iii) the least communication level
    that reaches ``threshold`` with original protocol costs (Com.), the least protocol
    level with achievable communication (Prot.), and the least combinations that reach
    it (Comb.: every (communication, protocol) pair reaching it with no smaller pair
    reaching it, as ``BH/HB``; ``BB+`` when only that does; ``-`` none)."""
    rows = []
    for kernel in dict.fromkeys(frame[frame.coherence == "hlrc"].kernel):
        s = _hlrc_speedups(frame, kernel)
        bh, hb = s["BH"], s["HB"]
        ii = "tied" if abs(bh / hb - 1) < TIE else ("yes" if bh > hb else "no")
        reach = {(i, j) for i, c in enumerate(COMMUNICATION_LEVELS) for j, p in enumerate(PROTOCOL_LEVELS)
                 if s[c + p] >= threshold}
        least = sorted((i, j) for i, j in reach if not any((a, b) != (i, j) and a <= i and b <= j for a, b in reach))
        comb = "/".join(COMMUNICATION_LEVELS[i] + PROTOCOL_LEVELS[j] for i, j in least) \
            or ("BB+" if s.get("B+B", 0.0) >= threshold else "-")
        com = next((c for i, c in enumerate(COMMUNICATION_LEVELS) if (i, 0) in reach), "-")
        prot = next((p for j, p in enumerate(PROTOCOL_LEVELS) if (0, j) in reach), "-")
        rows.append({"kernel": kernel, "BO>AB": "yes" if s["BO"] > s["AB"] else "no", "BO/AB": s["BO"] / s["AB"],
                     "BH>HB": ii, "BH/HB": bh / hb, "com": com, "prot": prot, "comb": comb})
    return pd.DataFrame(rows)


def format_table5(table: pd.DataFrame) -> str:
    """Table 5 as text, the ratios beside the answers."""
    lines = [f"{'program':<22} {'BO > AB?':>14} {'BH > HB?':>16} {'Com.':>5} {'Prot.':>6} {'Comb.':>8}"]
    for r in table.itertuples():
        lines.append(f"{r.kernel:<22} {r[2]:>5} ({r[3]:5.2f}x) {r[4]:>6} ({r[5]:5.2f}x) {r.com:>5} {r.prot:>6} "
                     f"{r.comb:>8}")
    return "\n".join(lines)


def breakdown_table(frame: pd.DataFrame, cases=("AO", "AB", "BO", "BB", "B+B")) -> pd.DataFrame:
    """Figure 4: the mean breakdown of each node's time (% of the execution time) per
    program, protocol and case."""
    at = frame[(frame.communication + frame.protocol).isin(cases)]
    columns = [c for c in frame.columns if c.startswith("breakdown.")]
    out = at[["kernel", "coherence", "communication", "protocol", *columns]].copy()
    out.insert(2, "case", out.pop("communication") + out.pop("protocol"))
    return out.rename(columns={c: c.removeprefix("breakdown.") + "%" for c in columns}).reset_index(drop=True)


def plot_sweeps(sweeps: pd.DataFrame, path: str | None = None):
    """Figure 5: one row of panels per program, one panel per communication parameter,
    speedup against the parameter's value, HLRC with triangles and SC with squares (as
    the paper draws them); saved to ``path``, or the figure returned."""
    from mva.output import require_matplotlib

    plt = require_matplotlib("--plot")
    names = list(dict.fromkeys(sweeps.kernel))
    fig, axes = plt.subplots(len(names), len(PARAMETER_VALUES), figsize=(10, 1.9 * len(names)), squeeze=False)
    for i, kernel in enumerate(names):
        for j, parameter in enumerate(PARAMETER_VALUES):
            ax = axes[i, j]
            for coherence, marker in (("hlrc", "^"), ("sc", "s")):
                part = sweeps[(sweeps.kernel == kernel) & (sweeps.coherence == coherence)
                              & (sweeps.parameter == parameter)].sort_values("value")
                ax.plot(part.value, part.speedup, marker=marker, label=coherence.upper())
            unit = "bytes/cycle" if parameter == "io_bandwidth" else "cycles"
            if i == 0:
                ax.set_title(parameter.replace("_", " ").replace("io", "I/O").replace("ni", "NI"), fontsize=9)
            if i == len(names) - 1:
                ax.set_xlabel(unit, fontsize=8)
            if j == 0:
                ax.set_ylabel(f"{kernel}\nspeedup", fontsize=8)
            ax.tick_params(labelsize=7)
    axes[0, 0].legend(fontsize=7)
    return saved(fig, path)


def saved(fig, path: str | None):
    """``fig`` laid out and saved to ``path`` (then closed, None returned), or returned
    when ``path`` is None (a notebook shows it)."""
    fig.tight_layout()
    if path is None:
        return fig
    import matplotlib.pyplot as plt

    try:
        save_to(path, "--plot", lambda name: fig.savefig(name, dpi=110))
    finally:
        plt.close(fig)
    return None
