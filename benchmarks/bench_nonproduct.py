"""Speed of the non-product-form MVA (issue #36 targets: a 10-station, 3-class priority
network in under 10 ms; sweeps of such networks at >= 10,000 cases/s end to end).

Run: python benchmarks/bench_nonproduct.py [--repeats 20] [--cases 2000]

The network: 3 closed classes (populations 4, 6, 3, think times 2, 1, 4), a priority
CPU (levels 0, 1, 1) and a priority I/O processor (levels 1, 0, 1), an FCFS disk with
class-dependent service, five PS queues and two delays: 10 stations.  Timed: one
``solve(net, "auto")`` (decomposition: the chain of all three non-product-form stations
has 174,000 states, over auto's limit, so the chain holds the two priority stations and
the disk is left to the flow-equivalent server), one Linearizer solve (the non-product-form
MVA with the variant and Bard-Schweitzer runs that decide whether to flag the result),
one Bard-Schweitzer solve, and ``mva.sweep.run_sweep`` (what ``mva solve --sweep``
does) with ``method="linearizer"`` over ``--cases`` values of the CPU's demand for class 1
in order (a line), the same values shuffled, and a square grid of about as many cases
over that demand and the disk's for class 0; the line by Bard-Schweitzer; the line by
auto with the disk made two FCFS servers of scv 0.5 (auto runs Linearizer there, as
decomposition takes no multi-server station); and ``--auto-cases`` of the line with auto
on the network itself (decomposition, case by case).  Linearizer and Bard-Schweitzer sweeps go through
the approximate batch solver (:func:`mva.batch.batch_approximate`); then decomposition on the priority example
of ``docs/files.md`` and on this network with the whole chain (``--method
decomposition``).  Medians over ``--repeats`` runs after a warm-up.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from mva import NumericalWarning, solve  # noqa: E402
from mva.files import network_from_dict  # noqa: E402
from mva.sweep import run_sweep  # noqa: E402
from timing import median_time  # noqa: E402


def document() -> dict:
    """The benchmark's 10-station, 3-class network with two priority stations, as a file."""
    rng = np.random.default_rng(36)
    stations = [{"name": "cpu", "type": "queue", "demand": [0.05, 0.12, 0.30], "discipline": "priority",
                 "priority": [0, 1, 1]},
                {"name": "iop", "type": "queue", "demand": [0.04, 0.02, 0.08], "discipline": "priority",
                 "priority": [1, 0, 1]},
                {"name": "disk", "type": "queue", "demand": [0.20, 0.01, 0.15], "discipline": "fcfs"}]
    stations += [{"name": f"ps{k}", "type": "queue", "demand": rng.uniform(0.01, 0.1, 3).tolist()} for k in range(5)]
    stations += [{"name": f"lan{k}", "type": "delay", "demand": rng.uniform(0.01, 0.05, 3).tolist()}
                 for k in range(2)]
    return {"network": {"population": [4, 6, 3], "think_time": [2.0, 1.0, 4.0]}, "station": stations}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--auto-cases", type=int, default=40)
    args = parser.parse_args(argv)
    doc = document()
    net = network_from_dict(doc)
    warnings.simplefilter("ignore", NumericalWarning)
    auto_s, r = median_time(lambda: solve(net, "auto"), args.repeats)
    linearizer_s, lin = median_time(lambda: solve(net, "linearizer"), args.repeats)
    schweitzer_s, _ = median_time(lambda: solve(net, "schweitzer"), args.repeats)
    values = np.linspace(0.02, 0.3, args.cases)
    cases = [{"station.cpu.demand": [0.05, float(d), 0.30]} for d in values]
    shuffled = [cases[i] for i in np.random.default_rng(1).permutation(len(cases))]
    side = max(2, int(round(np.sqrt(args.cases))))
    grid = [{"station.cpu.demand": [0.05, float(a), 0.30], "station.disk.demand": [float(b), 0.01, 0.15]}
            for a in np.linspace(0.02, 0.3, side) for b in np.linspace(0.05, 0.4, side)]
    sweeps = {}
    for what, these, method in (("line", cases, "linearizer"), ("shuffled", shuffled, "linearizer"),
                                (f"{side}x{side} grid", grid, "linearizer"), ("line", cases, "schweitzer")):
        seconds, frame = median_time(lambda these=these, method=method: run_sweep(doc, these, method=method,
                                                                                    progress=False),
                                     max(1, args.repeats // 10))
        sweeps[what, method] = (len(these), seconds, int(frame["unreliable"].sum()))
    # auto batches where it runs Linearizer: the disk as two FCFS servers with scv 0.5,
    # which decomposition does not take
    servers = {**doc, "station": [dict(st, type="multi", servers=2, scv=0.5) if st["name"] == "disk" else st
                                  for st in doc["station"]]}
    seconds, frame = median_time(lambda: run_sweep(servers, cases, progress=False), max(1, args.repeats // 10))
    sweeps["line, disk of 2 servers", "auto (Linearizer)"] = (len(cases), seconds, int(frame["unreliable"].sum()))
    few = cases[::max(1, len(cases) // args.auto_cases)][:args.auto_cases]
    auto_sweep_s, _ = median_time(lambda: run_sweep(doc, few, progress=False), 1)
    print(f"network: 10 stations, 3 classes, 2 priority stations; auto ran {r.method} (chain "
          f"{', '.join(r.extras.get('chain', []))}, {r.extras.get('states', 0):,} states); its throughputs within "
          f"{100 * np.max(np.abs(lin.throughput / r.throughput - 1)):.2g}% of Linearizer's")
    print(f"{'what':<44} {'seconds':>10} {'target':>12}")
    print(f"{'solve(net, auto)':<44} {auto_s:>10.4f} {'< 0.010':>12}")
    print(f"{'solve(net, linearizer), all checks':<44} {linearizer_s:>10.4f} {'< 0.010':>12}")
    print(f"{'solve(net, schweitzer)':<44} {schweitzer_s:>10.4f}")
    for (what, method), (count, seconds, flagged) in sweeps.items():
        print(f"{f'run_sweep, {method}, {count} cases, {what}':<44} {seconds:>10.3f}   {count / seconds:,.0f} "
              f"cases/s (target 10,000; {flagged} rows unreliable)")
    print(f"{f'run_sweep, auto, {len(few)} cases':<44} {auto_sweep_s:>10.3f}   {len(few) / auto_sweep_s:,.0f} cases/s")
    # decomposition (what auto runs where the chain fits): docs/files.md's priority example,
    # and the benchmark network itself, whose chain is over auto's limit
    example = _files_md_priority_example()
    small_s, small = median_time(lambda: solve(example, "auto"), args.repeats)
    big_s, big = median_time(lambda: solve(net, "decomposition", partial=False), max(1, args.repeats // 10))
    print(f"{'docs/files.md priority example, auto':<44} {small_s:>10.4f}   {small.method}, "
          f"{small.extras['states']:,} states")
    print(f"{'this network, the whole chain':<44} {big_s:>10.3f}   {big.extras['states']:,} states; auto's "
          f"throughputs within {100 * np.max(np.abs(big.throughput / r.throughput - 1)):.2g}% of it, Linearizer's "
          f"within {100 * np.max(np.abs(big.throughput / lin.throughput - 1)):.2g}%")


def _files_md_priority_example():
    """The priority example of docs/files.md, as a Network."""
    from mva.files import load_network

    text = (Path(__file__).resolve().parents[1] / "docs" / "files.md").read_text()
    start = text.index("```toml", text.index("A priority example")) + len("```toml")
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "priority.toml"
        path.write_text(text[start:text.index("```", start)])
        return load_network(path)


if __name__ == "__main__":
    main()
