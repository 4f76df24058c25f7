"""The page-placement and proxies study on the cc-NUMA machine (Talbot & Kelly, "Stable
performance for cc-NUMA using first-touch page placement and reactive proxies", 1999,
§1.5): every kernel under first-touch and round-robin placement, without proxies and
with basic proxies on infinite input buffers, and without, basic and reactive proxies
on finite ones (8 messages); prints the paper's comparisons (execution time, messages,
remote-read response, input-buffer queueing, relative to first-touch without proxies
on infinite buffers), its findings with our numbers, and the ``ccnuma`` queueing model
against the simulator (execution time, remote-read response, ranking).

``python -m calibration.studies.ccnuma [--small] [--nodes 64] [--kernels ge,...] [--csv FILE] [--findings FILE]
[--processes N | --workers N | --scheduler ADDR] [--force]``
"""
from __future__ import annotations

import sys
import time

import pandas as pd

from ..profiles.ccnuma import model_values
from ..sim.ccnuma import CCNUMAConfig, simulate_ccnuma
from ..sim.parallel import CCNUMA_KERNELS, parallel_kernel
from .cli import report_findings, run_study, runs_options, study_parser
from .executor import run_all
from .findings import Claim, judge

__all__ = ["CASES", "CLAIMS", "study", "findings", "main"]

#: (buffers, placement, proxies) in the order of the paper's Table 1.4
CASES = tuple((buf, pl, px) for buf, options in ((None, ("none", "basic")), (8, ("none", "basic", "reactive")))
              for px in options for pl in ("first-touch", "round-robin"))
SMALL = {"ge": 64, "ocean-contig": 192, "ocean-noncontig": 192, "transpose": 256}


def study(nodes: int = 64, small: bool = False, kernels=CCNUMA_KERNELS, progress=None, **runs) -> pd.DataFrame:
    """One row per kernel and case: the simulator's outputs, the model's predictions,
    and both relative to first-touch without proxies on infinite buffers.  ``runs``:
    where the runs go (:func:`calibration.studies.executor.run_all`); the rows are the
    same whichever runs them."""
    tasks = [(_run, (kernel, nodes, SMALL[kernel] if small else None, buf, placement, proxies))
             for kernel in kernels for buf, placement, proxies in CASES]
    rows = run_all(tasks, progress=progress, **runs)
    frame = pd.DataFrame(rows)
    base = frame[(frame.buffers == "infinite") & (frame.placement == "ft") & (frame.proxies == "none")]
    base = base.set_index("kernel")
    for col in ("execution_cycles", "messages", "remote_read_response"):
        frame[f"relative_{col}"] = 100 * frame[col] / frame.kernel.map(base[col]).where(lambda s: s > 0)
    frame["model_error_execution"] = frame.model_execution_cycles / frame.execution_cycles - 1
    frame["model_error_response"] = (frame.model_remote_read_response
                                     / frame.remote_read_response.where(lambda s: s > 0) - 1)
    return frame


def _run(kernel: str, nodes: int, size, buf, placement: str, proxies: str) -> dict:
    """One simulator run and the model calibrated from it, as a row (a task of the executor)."""
    from models.ccnuma import CCNUMA

    r = simulate_ccnuma(parallel_kernel(kernel, processes=nodes, size=size),
                        CCNUMAConfig(placement=placement, proxies=proxies, buffer=buf))
    m = CCNUMA(model_values(r)).solve().outputs
    d = r.to_dict()
    return {"kernel": kernel, "buffers": "infinite" if buf is None else "finite",
            "placement": "ft" if placement == "first-touch" else "rr", "proxies": proxies,
            "execution_cycles": r.execution_cycles, "messages": d["messages"],
            "remote_read_response": r.remote_read_response_cycles, "buffer_queueing": r.input_buffer_queueing_cycles,
            "bounces": d["bounces"], "proxy_reads": d["proxy_reads"], "hot_node": d["hot_node"],
            "model_execution_cycles": m["execution_cycles"], "model_remote_read_response": m["remote_read_response_cycles"],
            "model_hot_node": m["hot_node"], "references": d["references"], "seconds": r.seconds}


def _cell(frame, kernel, buffers, placement, proxies, col="execution_cycles"):
    sel = frame[(frame.kernel == kernel) & (frame.buffers == buffers) & (frame.placement == placement)
                & (frame.proxies == proxies)]
    return float(sel[col].iloc[0])


PAPER = "Talbot & Kelly, Stable performance for cc-NUMA using first touch and reactive proxies, 1999"
HALF = "the paper's value +-50% of the effect"

#: The paper's findings (§1.5, 64 nodes, its seven SPLASH-2 programs) and the bands that
#: count as the same magnitude, written before any run.  Times are execution cycles of the
#: parallel phase; "ft"/"rr" first-touch/round-robin placement.  Every relative change is
#: written one way, X(option) / X(baseline) - 1: negative is faster (or fewer), positive
#: slower (or more), so the signs of two lines can be compared.
CLAIMS = (
    Claim("ge-rr-faster", PAPER, "§1.5.1, Fig. 1.5", "Without proxies, GE runs 7.3% faster with round-robin "
          "than with first-touch placement", "time(rr) / time(ft) - 1, no proxies, infinite buffers", -0.073,
          (-0.1095, -0.0365), HALF, direction=-1),
    Claim("ge-rr-messages", PAPER, "§1.5.1, Fig. 1.6", "Round-robin raises GE's messages by nearly 10%",
          "messages(rr) / messages(ft) - 1, no proxies, infinite buffers", 0.10, (0.05, 0.15), HALF),
    Claim("ge-rr-response", PAPER, "§1.5.1, Fig. 1.7", "Round-robin improves GE's remote-read response by 19%",
          "response(rr) / response(ft) - 1, no proxies, infinite buffers", -0.19, (-0.285, -0.095), HALF, direction=-1),
    Claim("ge-proxies-gain", PAPER, "§1.5.1, Fig. 1.5", "With basic proxies both placements run GE more than 27% "
          "faster than first-touch without proxies", "max(time(ft+basic), time(rr+basic)) / time(ft) - 1, infinite "
          "buffers", -0.27, (-0.54, -0.27), "the paper gives a lower bound: from it to twice it", direction=-1),
    Claim("ocean-contig-rr-slower", PAPER, "§1.5.1, Fig. 1.5", "Round-robin makes Ocean-Contig nearly 19% slower "
          "than first-touch", "time(rr) / time(ft) - 1, no proxies, infinite buffers", 0.19, (0.095, 0.285), HALF),
    Claim("finite-favours-ft", PAPER, "§1.5.2, Fig. 1.8", "With finite buffers round-robin is slower than "
          "first-touch for six of the seven programs", "share of kernels with time(rr) > time(ft), no proxies, "
          "finite buffers", 6 / 7, (0.75, 1.0), "most programs: at least three in four", neutral=0.5),
    Claim("ge-finite-rr-gain", PAPER, "§1.5.2", "With finite buffers GE's gain from round-robin is cut to 1.2%",
          "time(rr) / time(ft) - 1, no proxies, finite buffers", -0.012, (-0.018, -0.006), HALF, direction=-1),
    Claim("ge-reactive-gain", PAPER, "§1.5.2, Fig. 1.8", "Reactive proxies with first-touch run GE 22.2% faster",
          "time(ft+reactive) / time(ft) - 1, finite buffers", -0.222, (-0.333, -0.111), HALF, direction=-1),
    Claim("ft-reactive-best", PAPER, "§1.5.2", "First-touch with reactive proxies is the fastest option for six "
          "of the seven programs", "share of kernels where ft+reactive is fastest of the finite-buffer options",
          6 / 7, (0.75, 1.0), "most programs: at least three in four", neutral=0.5),
    Claim("ft-reactive-stable", PAPER, "§1.5.2, §1.7", "First-touch with reactive proxies is always faster than "
          "either placement without proxies", "share of kernels with time(ft+reactive) < min(time(ft), time(rr)), "
          "finite buffers", 1.0, (1.0, 1.0), "'always': every kernel", neutral=0.5),
)


def findings(frame: pd.DataFrame) -> list:
    """The paper's findings with our values and verdicts (:func:`calibration.studies.findings.judge`)."""
    return judge(CLAIMS, _measure(frame))


def _measure(frame: pd.DataFrame) -> dict:
    kernels = list(dict.fromkeys(frame.kernel))
    cell = lambda k, buf, pl, px, col="execution_cycles": _cell(frame, k, buf, pl, px, col)  # noqa: E731
    out = {}
    missing = "not measured: kernel {} not in this run"
    if "ge" in kernels:
        ft, rr = cell("ge", "infinite", "ft", "none"), cell("ge", "infinite", "rr", "none")
        out["ge-rr-faster"] = rr / ft - 1
        out["ge-rr-messages"] = (cell("ge", "infinite", "rr", "none", "messages")
                                 / cell("ge", "infinite", "ft", "none", "messages") - 1)
        out["ge-rr-response"] = (cell("ge", "infinite", "rr", "none", "remote_read_response")
                                 / cell("ge", "infinite", "ft", "none", "remote_read_response") - 1)
        out["ge-proxies-gain"] = max(cell("ge", "infinite", pl, "basic") for pl in ("ft", "rr")) / ft - 1
        fin = cell("ge", "finite", "ft", "none")
        out["ge-finite-rr-gain"] = cell("ge", "finite", "rr", "none") / fin - 1
        out["ge-reactive-gain"] = cell("ge", "finite", "ft", "reactive") / fin - 1
    else:
        out.update({k: (None, missing.format("ge")) for k in ("ge-rr-faster", "ge-rr-messages", "ge-rr-response",
                                                               "ge-proxies-gain", "ge-finite-rr-gain",
                                                               "ge-reactive-gain")})
    out["ocean-contig-rr-slower"] = (cell("ocean-contig", "infinite", "rr", "none")
                                     / cell("ocean-contig", "infinite", "ft", "none") - 1
                                     if "ocean-contig" in kernels else (None, missing.format("ocean-contig")))
    note = f"our kernels: {', '.join(kernels)}, not the paper's seven programs"
    slower = [k for k in kernels if cell(k, "finite", "rr", "none") > cell(k, "finite", "ft", "none")]
    out["finite-favours-ft"] = (len(slower) / len(kernels), f"{note}; rr slower on {', '.join(slower) or 'none'}")
    best, stable = [], []
    for k in kernels:
        sub = frame[(frame.kernel == k) & (frame.buffers == "finite")]
        ftr = cell(k, "finite", "ft", "reactive")
        if ftr <= sub.execution_cycles.min():
            best.append(k)
        if ftr < min(cell(k, "finite", pl, "none") for pl in ("ft", "rr")):
            stable.append(k)
    out["ft-reactive-best"] = (len(best) / len(kernels), f"{note}; fastest on {', '.join(best) or 'none'}")
    out["ft-reactive-stable"] = (len(stable) / len(kernels),
                                 f"{note}; faster than both on {', '.join(stable) or 'none'} (where reactive proxies "
                                 "never act, the time equals ft without proxies)")
    return out


def _ranks_agree(frame):
    out = {}
    for (k, buf), sub in frame.groupby(["kernel", "buffers"], sort=False):
        out[(k, buf)] = list(sub.execution_cycles.rank(method="first")) == list(
            sub.model_execution_cycles.rank(method="first"))
    return out


def main(argv=None) -> int:
    p = study_parser("python -m calibration.studies.ccnuma", __doc__, 64, CCNUMA_KERNELS)
    return run_study(p, argv, CCNUMA_KERNELS, _report)


def _report(args, kernels):
    t0 = time.perf_counter()
    frame = study(args.nodes, args.small, kernels, **runs_options(args))
    refs = frame.references.sum()
    print(f"{args.nodes} nodes; {len(frame)} runs, {refs:,} references simulated in "
          f"{time.perf_counter() - t0:.1f} s\n")
    frame["case"] = frame.placement + "/" + frame.proxies
    for col, title in (("relative_execution_cycles", "Relative execution time, % of ft without proxies "
                                                     "(Figures 1.5, 1.8)"),
                       ("relative_messages", "Relative number of messages, % (Figures 1.6, 1.9)"),
                       ("relative_remote_read_response", "Relative remote read response, % "
                                                         "(Figures 1.7, 1.10)"),
                       ("buffer_queueing", "Mean input buffer queueing cycles (Table 1.4)")):
        wide = frame.pivot_table(index="kernel", columns=["buffers", "case"], values=col, sort=False)
        print(title)
        print(wide.round(1).to_string(), "\n")
    report_findings(findings(frame), args, "Findings against the paper",
                    "cc-NUMA page placement and proxies (Talbot & Kelly 1999): findings on our machine")
    print()
    agree = _ranks_agree(frame)
    print("The ccnuma queueing model against the simulator")
    show = frame[["kernel", "buffers", "case", "execution_cycles", "model_execution_cycles",
                  "model_error_execution", "remote_read_response", "model_remote_read_response",
                  "model_error_response", "hot_node", "model_hot_node"]]
    print(show.round(3).to_string(index=False))
    within = (frame.model_error_response.abs() <= 0.15).sum()
    wrong = [f"{k}/{b}" for (k, b), a in agree.items() if not a]
    print(f"\nranking of the options agrees in {len(agree) - len(wrong)} of {len(agree)} (kernel, buffers) groups"
          + (f"; not in {', '.join(wrong)}" if wrong else ""))
    print(f"remote-read response within 15%: {within} of {frame.model_error_response.notna().sum()} runs")
    if args.csv:
        frame.to_csv(args.csv, index=False)
        print(f"wrote {args.csv}")

if __name__ == "__main__":
    sys.exit(main())
