"""The page-placement and proxies study on the cc-NUMA machine (Talbot & Kelly, "Stable
performance for cc-NUMA using first-touch page placement and reactive proxies", 1999,
§1.5): every kernel under first-touch and round-robin placement, without proxies and
with basic proxies on infinite input buffers, and without, basic and reactive proxies
on finite ones (8 messages); prints the paper's comparisons (execution time, messages,
remote-read response, input-buffer queueing, relative to first-touch without proxies
on infinite buffers), its findings with our numbers, and the ``ccnuma`` queueing model
against the simulator (execution time, remote-read response, ranking).

``python -m calibration.studies.ccnuma [--small] [--nodes 64] [--kernels ge,...] [--csv FILE [--force]]``
"""
from __future__ import annotations

import sys
import time

import pandas as pd

from ..profiles.ccnuma import model_values
from ..sim.ccnuma import CCNUMAConfig, simulate_ccnuma
from ..sim.parallel import CCNUMA_KERNELS, parallel_kernel
from .cli import run_study, study_parser

__all__ = ["CASES", "study", "findings", "main"]

#: (buffers, placement, proxies) in the order of the paper's Table 1.4
CASES = tuple((buf, pl, px) for buf, options in ((None, ("none", "basic")), (8, ("none", "basic", "reactive")))
              for px in options for pl in ("first-touch", "round-robin"))
SMALL = {"ge": 64, "ocean-contig": 192, "ocean-noncontig": 192, "transpose": 256}


def study(nodes: int = 64, small: bool = False, kernels=CCNUMA_KERNELS, progress=None) -> pd.DataFrame:
    """One row per kernel and case: the simulator's outputs, the model's predictions,
    and both relative to first-touch without proxies on infinite buffers."""
    from models.ccnuma import CCNUMA

    rows = []
    for kernel in kernels:
        wl = parallel_kernel(kernel, processes=nodes, size=SMALL[kernel] if small else None)
        for buf, placement, proxies in CASES:
            r = simulate_ccnuma(wl, CCNUMAConfig(placement=placement, proxies=proxies, buffer=buf))
            m = CCNUMA(model_values(r)).solve().outputs
            d = r.to_dict()
            rows.append({"kernel": kernel, "buffers": "infinite" if buf is None else "finite",
                         "placement": "ft" if placement == "first-touch" else "rr", "proxies": proxies,
                         "execution_cycles": r.execution_cycles, "messages": d["messages"],
                         "remote_read_response": r.remote_read_response_cycles,
                         "buffer_queueing": r.input_buffer_queueing_cycles, "bounces": d["bounces"],
                         "proxy_reads": d["proxy_reads"], "hot_node": d["hot_node"],
                         "model_execution_cycles": m["execution_cycles"],
                         "model_remote_read_response": m["remote_read_response_cycles"],
                         "model_hot_node": m["hot_node"], "references": d["references"], "seconds": r.seconds})
            if progress:
                progress(rows[-1])
    frame = pd.DataFrame(rows)
    base = frame[(frame.buffers == "infinite") & (frame.placement == "ft") & (frame.proxies == "none")]
    base = base.set_index("kernel")
    for col in ("execution_cycles", "messages", "remote_read_response"):
        frame[f"relative_{col}"] = 100 * frame[col] / frame.kernel.map(base[col]).where(lambda s: s > 0)
    frame["model_error_execution"] = frame.model_execution_cycles / frame.execution_cycles - 1
    frame["model_error_response"] = (frame.model_remote_read_response
                                     / frame.remote_read_response.where(lambda s: s > 0) - 1)
    return frame


def _cell(frame, kernel, buffers, placement, proxies, col="execution_cycles"):
    sel = frame[(frame.kernel == kernel) & (frame.buffers == buffers) & (frame.placement == placement)
                & (frame.proxies == proxies)]
    return float(sel[col].iloc[0])


def findings(frame: pd.DataFrame) -> list[str]:
    """The paper's findings, each with our numbers and whether it holds."""
    out = []
    kernels = list(dict.fromkeys(frame.kernel))

    def ok(flag):
        return "reproduced" if flag else "NOT reproduced"

    if "ge" in kernels:
        ft, rr = (_cell(frame, "ge", "infinite", pl, "none") for pl in ("ft", "rr"))
        best = min(_cell(frame, "ge", "infinite", pl, "basic") for pl in ("ft", "rr"))
        out.append(f"GE favours round-robin without proxies (paper: 7.3% faster): rr {100 * (1 - rr / ft):+.1f}% "
                   f"against ft; {ok(rr < ft)}")
        out.append(f"GE gains most from proxies (paper: > 27% over ft without): {100 * (1 - best / ft):.1f}%; "
                   f"{ok(1 - best / ft > 0.27)}")
    if "ocean-contig" in kernels:
        ft, rr = (_cell(frame, "ocean-contig", "infinite", pl, "none") for pl in ("ft", "rr"))
        out.append(f"Ocean-contiguous favours first-touch, round-robin hurts it (paper: ~19%): rr "
                   f"{100 * (rr / ft - 1):+.1f}%; {ok(rr > ft)}")
    fin = [(k, _cell(frame, k, "finite", "ft", "none"), _cell(frame, k, "finite", "rr", "none")) for k in kernels]
    better = [k for k, ft, rr in fin if ft <= rr]
    out.append(f"Finite buffers favour first-touch (paper: 6 of 7): ft at least as fast as rr on {len(better)} of "
               f"{len(fin)} ({', '.join(f'{k} rr {100 * (rr / ft - 1):+.1f}%' for k, ft, rr in fin)}); "
               f"{ok(len(better) * 2 > len(fin))}")
    lines = []
    stable = True
    for k in kernels:
        sub = frame[(frame.kernel == k) & (frame.buffers == "finite")]
        ftr = _cell(frame, k, "finite", "ft", "reactive")
        worst_plain = max(_cell(frame, k, "finite", pl, "none") for pl in ("ft", "rr"))
        best_plain = min(_cell(frame, k, "finite", pl, "none") for pl in ("ft", "rr"))
        rank = int((sub.execution_cycles < ftr).sum()) + 1
        stable &= ftr <= 1.05 * best_plain
        lines.append(f"{k} rank {rank} of {len(sub)}, {100 * (ftr / best_plain - 1):+.1f}% vs the better placement "
                     f"without proxies, {100 * (ftr / worst_plain - 1):+.1f}% vs the worse")
    out.append("First-touch with reactive proxies is best or near best and never much worse than either placement "
               f"without proxies (finite buffers): {'; '.join(lines)}; {ok(stable)}")
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
    frame = study(args.nodes, args.small, kernels)
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
    print("\n".join(findings(frame)), "\n")
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
