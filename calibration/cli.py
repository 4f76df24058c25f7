"""``mva trace``, ``mva simulate`` and ``mva calibrate``: the command line of the simulator
and of the calibration.

Registered through the ``mva.commands`` entry-point group (``setup.cfg``), so the ``mva``
shell never imports this package.  Bad input is one line on stderr and exit status 2.
"""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from mva.output import output_stream, refuse_overwrite
from mva.errors import ModelError

__all__ = ["register_trace", "register_simulate", "register_calibrate"]

SIM_OPTIONS = ("cpus", "cache", "block", "assoc", "protocol", "scheduler", "time_slice", "data_only", "word",
               "references", "seed", "affinity", "pages")


# --- mva trace ---------------------------------------------------------------------------
def _cmd_convert(args):
    from .sim.traces import limited, read_trace, skipped, write_npz

    out = Path(args.output)
    refuse_overwrite(out, args.force, "-o")
    if out.suffix != ".npz":
        raise ModelError("-o", "the output must be an .npz file")
    chunks = read_trace(args.input, args.format, din_size=args.din_size)
    chunks = limited(skipped(chunks, args.skip), args.limit)
    n = write_npz(out, chunks, compress=not args.no_compress)
    print(f"{args.input} -> {out}: {n} references", file=sys.stderr)
    return 0


def _cmd_stats(args):
    from .sim.stats import format_statistics, workload_statistics
    from .sim.loading import load_workload

    opts = {"references": args.references} if args.references else {}
    wl = load_workload(args.workload, **opts)
    stats = workload_statistics(wl, block=args.block, per_process=args.per_process)
    if args.format == "json":
        print(json.dumps(stats))
    else:
        print(format_statistics(stats))
    return 0


def _cmd_generate(args):
    from .sim.synthetic import generate
    from .sim.traces import write_npz

    out = Path(args.output)
    if out.exists() and any(out.iterdir()) and not args.force:
        raise ModelError("-o", f"{out} exists and is not empty; pass --force to overwrite it")
    opts = {k: v for k, v in (("references", args.references), ("seed", args.seed)) if v is not None}
    wl = generate(args.preset, **opts)
    out.mkdir(parents=True, exist_ok=True)
    lines = [f'name = "{wl.name}"', f"references = {wl.references}", f'description = "{wl.description}"', ""]
    for p in wl.processes:
        write_npz(out / f"{p.name}.npz", p.open(), compress=not args.no_compress)
        lines += ["[[process]]", f'name = "{p.name}"', f'trace = "{p.name}.npz"', ""]
    for r in wl.shared:
        members = ", ".join(f'"{n}"' for n in r.processes)
        lines += ["[[shared]]", f'name = "{r.name}"', f"start = {r.start:#x}", f"end = {r.end:#x}",
                  f"processes = [{members}]", f"kernel = {'true' if r.kernel else 'false'}", ""]
    (out / "workload.toml").write_text("\n".join(lines))
    print(f"wrote {len(wl.processes)} traces and {out / 'workload.toml'}", file=sys.stderr)
    return 0


DEFAULT_REUSE_SIZES = "4KiB,8KiB,16KiB,32KiB,64KiB,128KiB,256KiB,512KiB,1MiB,2MiB,4MiB"


def _size_label(n: int) -> str:
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else f"{n / 1024:g} KiB" if n >= 1024 else f"{n} B"


def _cmd_reuse(args):
    from .missratio import lru_miss_ratio
    from .sim.machine import parse_size
    from .sim.reuse import reuse_profile

    try:
        sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        raise ModelError("--sizes", f"expected sizes like 8KiB,32KiB, got {args.sizes!r}") from None
    if not sizes or min(sizes) < args.block:
        raise ModelError("--sizes", f"every size must hold at least one {args.block}-byte block")
    if args.plot:
        refuse_overwrite(args.plot, args.force, "--plot")
    profile = reuse_profile(args.trace, block=args.block, data_only=args.data_only, sample=args.sample,
                            seed=args.seed, fmt=args.trace_format, name=Path(args.trace).name)
    rows = []
    for size in sizes:
        ratio = lru_miss_ratio(profile, size)
        rows.append({"cache": size, "misses": profile.lru_misses(size) if profile.exact
                     else ratio * profile.references, "miss_ratio": ratio})
    d = {"trace": args.trace, "references": profile.references, "cold": profile.to_dict()["cold"],
         "histogram": profile.histogram(), "sizes": rows, **{k: v for k, v in profile.to_dict().items()
                                                              if k in ("instructions", "block", "exact", "distinct",
                                                                       "sample_rate", "samples", "dangling")}}
    if args.format == "json":
        print(json.dumps(d))
    else:
        how = "exact" if profile.exact else f"sampled at {args.sample:g} ({profile.samples:,} samples; StatStack)"
        print(f"{args.trace}: {profile.references:,} references to {args.block}-byte blocks"
              f"{' (data only)' if args.data_only else ''}, {how}")
        print(f"  cold {d['cold']:,.0f}" + (f", distinct blocks {profile.distinct:,}" if profile.exact else ""))
        h = d["histogram"]
        print(f"  {h['distance']}:")
        edges = h["edges"]
        for k, c in enumerate(h["counts"]):
            if c:
                hi = f"{edges[k + 1] - 1:,}" if k + 1 < len(edges) else "inf"
                print(f"    {edges[k]:>10,} - {hi:<10} {c:>14,.0f}")
        print(f"  {'LRU cache':>12} {'misses':>14} {'miss ratio':>11}")
        for r in rows:
            print(f"  {_size_label(r['cache']):>12} {r['misses']:>14,.0f} {r['miss_ratio']:>11.5f}")
    if args.plot:
        _plot_reuse(profile, rows, args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def _plot_reuse(profile, rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    h = profile.histogram()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    left.bar(range(len(h["counts"])), h["counts"], color="tab:blue")
    left.set_xticks(range(len(h["edges"])), [f"{e:g}" for e in h["edges"]], rotation=90, fontsize=7)
    left.set_xlabel(h["distance"] + ", bucket lower edge")
    left.set_ylabel("references")
    right.plot([r["cache"] / 1024 for r in rows], [r["miss_ratio"] for r in rows], "o-")
    right.set_xscale("log", base=2)
    right.set_xlabel("fully-associative LRU cache (KiB)")
    right.set_ylabel("misses per reference")
    fig.suptitle(profile.name)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def register_trace(sub):
    """Add ``mva trace convert|stats|generate``."""
    p = sub.add_parser("trace", help="convert traces, print their statistics or reuse distances, write synthetic workloads",
                       description="Trace utilities of the coherence simulator.")
    tsub = p.add_subparsers(dest="trace_command", metavar="ACTION", parser_class=sub._parser_class)
    c = tsub.add_parser("convert", help="lackey or din text to .npz")
    c.add_argument("input", metavar="TRACE")
    c.add_argument("-o", "--output", required=True, metavar="FILE.npz")
    c.add_argument("--format", choices=("lackey", "din", "npz"), help="input format (default: detected)")
    c.add_argument("--din-size", type=int, default=4, metavar="BYTES", help="access size of din records (default 4)")
    c.add_argument("--skip", type=int, default=0, metavar="N", help="leave out the first N references (e.g. the "
                                                                    "dynamic loader's start-up)")
    c.add_argument("--limit", type=int, metavar="N", help="keep the first N references (after --skip)")
    c.add_argument("--no-compress", action="store_true", help="store the arrays uncompressed (faster to read)")
    c.add_argument("--force", action="store_true", help="overwrite the output if it exists")
    c.set_defaults(handler=_cmd_convert)
    s = tsub.add_parser("stats", help="Foglia, Giorgi & Prete (2004) Table 1-3 statistics of a trace, manifest or preset")
    s.add_argument("workload", metavar="WORKLOAD", help="a manifest (.toml), a trace file or a preset name")
    s.add_argument("--block", type=int, default=32, help="block size in bytes (default 32, as the paper)")
    s.add_argument("--references", type=int, metavar="N", help="length of a generated preset")
    s.add_argument("--per-process", action="store_true", help="one row per process too")
    s.add_argument("--format", choices=("table", "json"), default="table")
    s.set_defaults(handler=_cmd_stats)
    g = tsub.add_parser("generate", help="write a synthetic preset as .npz traces plus a manifest")
    g.add_argument("preset")
    g.add_argument("-o", "--output", required=True, metavar="DIR")
    g.add_argument("--references", type=int, metavar="N")
    g.add_argument("--seed", type=int)
    g.add_argument("--no-compress", action="store_true", help="store the arrays uncompressed (faster to read)")
    g.add_argument("--force", action="store_true")
    g.set_defaults(handler=_cmd_generate)
    r = tsub.add_parser("reuse", help="reuse and LRU stack distances; miss ratios of every cache size",
                        description="One pass over TRACE: the histogram of LRU stack distances (exact) or of "
                                    "sampled reuse distances (--sample, StatCache), and the misses of a "
                                    "fully-associative LRU cache of each --sizes entry.")
    r.add_argument("trace", metavar="TRACE", help="a lackey, din or npz trace")
    r.add_argument("--block", type=int, default=64, help="block size in bytes (default 64)")
    r.add_argument("--data-only", dest="data_only", action="store_true", help="leave instruction fetches out")
    r.add_argument("--sizes", default=DEFAULT_REUSE_SIZES, metavar="S1,S2,...",
                   help="cache sizes, e.g. 8KiB,32KiB (default 4KiB to 4MiB by doubling)")
    r.add_argument("--sample", type=float, metavar="RATE", help="sample references at RATE in (0, 1] (StatCache); "
                                                                 "miss ratios are then StatStack estimates")
    r.add_argument("--seed", type=int, default=1, help="seed of the sampling (default 1)")
    r.add_argument("--trace-format", dest="trace_format", choices=("lackey", "din", "npz"),
                   help="input format (default: detected)")
    r.add_argument("--format", choices=("table", "json"), default="table")
    r.add_argument("--plot", metavar="FILE", help="draw the histogram and the miss-ratio curve to FILE (png, pdf)")
    r.add_argument("--force", action="store_true", help="overwrite the --plot file if it exists")
    r.set_defaults(handler=_cmd_reuse)
    p.set_defaults(handler=lambda args: (p.print_help(sys.stderr), 2)[1])


# --- mva simulate ------------------------------------------------------------------------
def _config_from(args, overrides=None):
    from .sim.bus import SimulatorConfig

    opts = {k: getattr(args, k) for k in SIM_OPTIONS if getattr(args, k, None) is not None}
    opts.update(overrides or {})
    unknown = set(opts) - set(SIM_OPTIONS) - {"check"}
    if unknown:
        raise ModelError("--sweep", f"unknown option(s) {', '.join(sorted(unknown))}; sweepable: "
                                    f"{', '.join(SIM_OPTIONS)}")
    if args.check:
        opts["check"] = True
    try:
        return SimulatorConfig(**opts)
    except TypeError as exc:   # a value of the wrong kind from a sweep
        raise ModelError("--sweep", str(exc)) from None


def _workload(args, default_nodes: int = 16):
    from .sim.loading import load_workload

    opts = {"nodes": getattr(args, "nodes", None), "default_nodes": default_nodes}
    if args.references is not None:
        opts["references"] = args.references
    if args.workload_seed is not None:
        opts["seed"] = args.workload_seed
    return load_workload(args.workload, **opts)


def _format_result(d: dict) -> str:
    cfg = d["config"]
    refs = max(d["references"], 1)
    mk = d["misses_by_kind"]
    om = d["other_misses"]
    coh = d["coherence_transactions_per_100_refs"]
    pu = d["processor_utilization"]
    cache = cfg["cache"]
    size = f"{cache / (1 << 20):g} MiB" if cache >= 1 << 20 else f"{cache / 1024:g} KiB"
    lines = [
        f"{d['workload']}: {cfg['protocol'].upper()}, {cfg['cpus']} processors, {size} {cfg['assoc']}-way "
        f"{cfg['block']}-byte blocks, {cfg['scheduler']} scheduling",
        f"  references                 {d['references']:>14,}",
        f"  misses                     {d['misses']:>14,}   miss rate {100 * d['miss_rate']:.3f}%",
        f"    other                    {mk['other']:>14,}   (cold {om['cold']:,}, context switch "
        f"{om['context_switch']:,}, replacement {om['replacement']:,}, selective reload {om['selective_reload']:,})",
        f"    true sharing             {mk['true_sharing']:>14,}",
        f"    false sharing            {mk['false_sharing']:>14,}",
        f"    passive sharing          {mk['passive_sharing']:>14,}",
        f"  coherence transactions per 100 references: {coh['total']:.4f}",
        "    by type   " + ", ".join(f"{k} {v:.4f}" for k, v in coh["by_type"].items()),
        "    by class  " + ", ".join(f"{k} {v:.4f}" for k, v in coh["by_class"].items()),
        "    by mode   " + ", ".join(f"{k} {v:.4f}" for k, v in coh["by_mode"].items()),
        f"  bus utilisation            {100 * d['bus_utilization']:>13.1f}%",
        f"  processor utilisation      {sum(pu) / len(pu):>14.3f} mean  ({min(pu):.3f} - {max(pu):.3f})",
        f"  GSP                        {d['gsp']:>14.3f}",
        f"  migrations {d['migrations']:,} in {d['dispatches']:,} dispatches; {d['blocks']:,} blocks; "
        f"{d['seconds']:.2f} s ({refs / max(d['seconds'], 1e-9) / 1e6:.1f} M references/s)",
    ]
    return "\n".join(lines)


ROW_COLUMNS = ("miss_rate", "other", "true_sharing", "false_sharing", "passive_sharing", "coherence_per_100",
               "passive_coherence_per_100", "bus_utilization", "gsp")


def _row(d):
    mk = d["misses_by_kind"]
    refs = max(d["references"], 1)
    coh = d["coherence_transactions_per_100_refs"]
    return {"miss_rate": d["miss_rate"], "other": mk["other"] / refs, "true_sharing": mk["true_sharing"] / refs,
            "false_sharing": mk["false_sharing"] / refs, "passive_sharing": mk["passive_sharing"] / refs,
            "coherence_per_100": coh["total"], "passive_coherence_per_100": coh["by_class"]["passive_sharing"],
            "bus_utilization": d["bus_utilization"], "gsp": d["gsp"]}


CMT_OPTIONS = ("cores", "contexts", "l1", "l1_assoc", "l2", "l2_assoc", "block", "l1_latency", "l2_latency",
               "memory_latency", "bandwidth", "time_slice", "cycles", "warmup", "seed")
# options of one machine only (the rest, --block, --time-slice, --seed, --references, serve both)
BUS_ONLY = tuple(k for k in SIM_OPTIONS if k not in CMT_OPTIONS and k != "references")
CMT_ONLY = tuple(k for k in CMT_OPTIONS if k not in SIM_OPTIONS) + ("schedule",)


def _write_result(args, d: dict, table) -> None:
    """A run's result ``d`` to ``-o`` or stdout: one JSON line with ``--format json``,
    else ``table(out)`` writes the table."""
    with output_stream(args.output, args.force) as out:
        if args.format == "json":
            out.write(json.dumps(d) + "\n")
        else:
            table(out)


def _refuse_options(args, options, problem):
    """One line naming the first of ``options`` (argparse names) given on the command
    line, with ``problem``: the options another machine owns."""
    given = [f"--{k.replace('_', '-')}" for k in options
             if (v := getattr(args, k, None)) is not None and v is not False and v != []]     # 0 is given
    if given:
        raise ModelError(given[0], problem)


def _cmd_simulate_cmt(args):
    from .sim.cmt import CMTConfig, load_threads, simulate_cmt

    _refuse_options(args, (*BUS_ONLY, "sweep", "scalability", "check"), "applies to the bus machine, not --machine cmt")
    cfg = CMTConfig(**{k: getattr(args, k) for k in CMT_OPTIONS if getattr(args, k, None) is not None})
    schedule = args.schedule or "all"
    wl = _workload(args)
    traces = load_threads(wl, cfg.block, references=args.references, seed=cfg.seed)
    if schedule in ("perf", "fair"):
        from .profiles.cmt_core import predict_groups, thread_profiles
        from .scheduling import balance_set_schedule

        profiles = thread_profiles(wl, cfg.block)
        schedule_groups, _ = balance_set_schedule(predict_groups(profiles, cfg), len(profiles), schedule)
    else:
        schedule_groups = schedule
    cfg = replace(cfg, schedule=schedule_groups)
    d = simulate_cmt(wl, cfg, traces=traces).to_dict()
    d["config"]["schedule"] = schedule

    def table(out):
        c = d["config"]
        out.write(f"{d['workload']}: {c['cores']} core(s) x {c['contexts']} contexts, L1 {_size_label(c['l1'])} "
                  f"{c['l1_assoc']}-way, L2 {_size_label(c['l2'])} {c['l2_assoc']}-way, {c['block']}-byte blocks, "
                  f"{schedule} schedule\n")
        out.write(f"  cycles {d['cycles']:,} (after {c['warmup']:,} of warm-up), instructions "
                  f"{d['instructions']:,}\n")
        out.write(f"  IPC {d['ipc']:.4f}" + (f"  (cores: {', '.join(f'{v:.3f}' for v in d['core_ipc'])})"
                                             if len(d['core_ipc']) > 1 else "") + "\n")
        out.write(f"  L1 miss ratio {d['l1_miss_ratio']:.4f} per data reference; L2 miss ratio "
                  f"{d['l2_miss_ratio']:.4f} per L2 access ({d['l2_misses_per_reference']:.5f} per reference)\n")
        out.write(f"  memory channel utilisation {d['memory_utilization']:.3f}; CPU share std "
                  f"{d['share_std']:.4f}\n")
        out.write(f"  {'thread':<16} {'instructions':>13} {'share':>7} {'IPC':>7} {'L1 miss':>8} {'L2 miss':>8}\n")
        scheduled = max(sum(t["scheduled_cycles"] for t in d["threads"]), 1)
        for t in d["threads"]:
            refs = max(t["references"], 1)
            out.write(f"  {t['name']:<16} {t['instructions']:>13,} {t['scheduled_cycles'] / scheduled:>7.3f} "
                      f"{t['instructions'] / max(t['scheduled_cycles'], 1):>7.4f} {t['l1_misses'] / refs:>8.4f} "
                      f"{t['l2_misses'] / max(t['l1_misses'], 1):>8.4f}\n")

    _write_result(args, d, table)
    return 0


PARALLEL_OPTIONS = ("cycles_per_reference", "nodes")      # the machines that run parallel kernels
SVM_ONLY = ("granularity", "home")


def _cmd_simulate_svm(args):
    from .sim.machine import parse_size
    from .sim.svm import PAGE, SVMConfig, simulate_svm

    _refuse_options(args, [k for k in (*BUS_ONLY, *CMT_ONLY, *CCNUMA_ONLY, "sweep", "scalability", "check")
                           if k not in ("protocol", "references", "seed")], "does not apply to --machine svm")
    protocol = args.protocol or "hlrc"
    if protocol not in ("hlrc", "sc"):
        raise ModelError("--protocol", f"--machine svm runs hlrc or sc, not {protocol}")
    try:
        granularity = parse_size(args.granularity) if args.granularity else (PAGE if protocol == "hlrc" else 64)
    except ValueError:
        raise ModelError("--granularity", f"not a size: {args.granularity!r} (e.g. 64B, 1KiB, 4KiB)") from None
    cfg = SVMConfig(protocol, granularity, args.home or "first-touch", args.cycles_per_reference, args.references)
    wl = _workload(args)
    d = simulate_svm(wl, cfg).to_dict()

    def table(out):
        t = d["totals"]
        unit = "page" if protocol == "hlrc" else f"{granularity}-byte block"
        out.write(f"{d['workload']}: {protocol.upper()} at {_size_label(granularity)}, {d['nodes']} nodes, "
                  f"homes {cfg.home}\n")
        out.write(f"  work {d['sequential_cycles']:,} cycles; PRAM time {d['pram_cycles']:,} cycles "
                  f"(speedup {d['pram_speedup']:.2f})\n")
        out.write(f"  shared {unit}s {d['units']:,}; locks {d['locks']:,} (concentration "
                  f"{d['lock_concentration']:.3f})\n")
        out.write(f"  {'node':<10}" + "".join(f"{c:>15}" for c in SVM_COLUMNS) + "\n")
        for p in d["processes"] + [{"name": "total", **t}]:
            out.write(f"  {p['name']:<10}" + "".join(f"{p[c]:>15,}" for c in SVM_COLUMNS) + "\n")

    _write_result(args, d, table)
    return 0


CCNUMA_ONLY = ("placement", "proxies", "buffer", "slc", "flc", "initialisation")


def _cmd_simulate_ccnuma(args):
    from .sim.ccnuma import CCNUMAConfig, simulate_ccnuma

    _refuse_options(args, [k for k in (*BUS_ONLY, *CMT_ONLY, *SVM_ONLY, "sweep", "scalability", "protocol")
                           if k not in ("references", "seed", "check")], "does not apply to --machine ccnuma")
    cfg = CCNUMAConfig.from_options(placement=args.placement, proxies=args.proxies, buffer=args.buffer,
                                    slc=args.slc, flc=args.flc, initialisation=args.initialisation,
                                    check=bool(args.check), cycles_per_reference=args.cycles_per_reference,
                                    references=args.references)
    wl = _workload(args, default_nodes=64)            # the study's machine
    d = simulate_ccnuma(wl, cfg).to_dict()

    def table(out):
        t = d["totals"]
        buf = "infinite" if cfg.buffer is None else f"{cfg.buffer} messages"
        out.write(f"{d['workload']}: cc-NUMA, {d['nodes']} nodes, {cfg.placement} pages, proxies {cfg.proxies}, "
                  f"input buffers {buf}\n")
        out.write(f"  execution {d['execution_cycles']:,} cycles (parallel phase); references "
                  f"{d['references']:,}; messages {d['messages']:,}\n")
        out.write(f"  remote reads {d['remote_reads']:,}, mean response {d['remote_read_response_cycles']:.1f} "
                  f"cycles; input buffer queueing {d['input_buffer_queueing_cycles']:.1f} cycles per message\n")
        out.write(f"  bounces {d['bounces']:,}; proxy reads {d['proxy_reads']:,} (combined {t['combined']:,}, "
                  f"served from a proxy's cache {t['proxy_hits']:,}); hot node {d['hot_node']}\n")
        out.write(f"  {'node':<14}" + "".join(f"{c:>14}" for c in CCNUMA_COLUMNS) + f"{'NC util':>9}\n")
        for p, u in zip(d["processes"], d["nc_utilization"]):
            out.write(f"  {p['name']:<14}" + "".join(f"{p[c]:>14,}" for c in CCNUMA_COLUMNS) + f"{u:>9.3f}\n")
        out.write(f"  {'total':<14}" + "".join(f"{t[c]:>14,}" for c in CCNUMA_COLUMNS) + "\n")

    _write_result(args, d, table)
    return 0


CCNUMA_COLUMNS = ("references", "read_misses", "remote_reads", "requests", "messages", "bounces", "proxy_reads")


SVM_COLUMNS = ("busy", "read_faults", "write_faults", "requests", "twins", "diff_words", "notices",
               "invalidations", "acquires", "barriers", "messages")


def _cmd_simulate(args):
    from mva.grid import cartesian, parse_sweeps, zipped

    from .sim.bus import simulate
    from .sim.machine import scalability

    if args.machine == "svm":
        return _cmd_simulate_svm(args)
    if args.machine == "ccnuma":
        return _cmd_simulate_ccnuma(args)
    _refuse_options(args, CCNUMA_ONLY, "applies to --machine ccnuma only")
    _refuse_options(args, SVM_ONLY, "applies to --machine svm only")
    _refuse_options(args, PARALLEL_OPTIONS, "applies to --machine svm or ccnuma only")
    if args.protocol in ("hlrc", "sc"):
        raise ModelError("--protocol", f"{args.protocol} applies to --machine svm only")
    if args.machine == "cmt":
        return _cmd_simulate_cmt(args)
    _refuse_options(args, CMT_ONLY, "applies to --machine cmt only")
    wl = _workload(args)
    sweeps = parse_sweeps(args.sweep) if args.sweep else {}
    cases = (zipped(sweeps) if args.zip else cartesian(sweeps)) if sweeps else [{}]
    configs = [(case, _config_from(args, case)) for case in cases]   # all input errors before any run
    progress = sys.stderr.isatty() and not args.quiet
    with output_stream(args.output, args.force) as out:
        if args.scalability:
            for case, cfg in configs:
                n, gsp = scalability(lambda k: simulate(wl, cfg, progress=progress, cpus=k).gsp,
                                     start=1, limit=args.max_cpus, threshold=args.threshold)
                if args.format == "json":
                    out.write(json.dumps({"workload": wl.name, "case": case, "config": cfg.to_dict(),
                                          "scalable_to": n, "gsp": {str(k): v for k, v in gsp.items()}}) + "\n")
                else:
                    label = ", ".join(f"{k}={v}" for k, v in case.items()) or cfg.protocol
                    out.write(f"{wl.name} {label}: GSP by processors\n")
                    for k, v in gsp.items():
                        out.write(f"  {k:>3}  {v:7.3f}\n")
                    out.write(f"  scalable up to {n} processors (GSP({n}+1) - GSP({n}) < {args.threshold})\n"
                              if n else f"  still scaling at {args.max_cpus} processors\n")
            return 0
        rows = []
        for case, cfg in configs:
            d = simulate(wl, cfg, progress=progress).to_dict()
            if args.format == "json":
                out.write(json.dumps({**({"case": case} if sweeps else {}), **d}) + "\n")
            elif sweeps:
                rows.append((case, _row(d)))
            else:
                out.write(_format_result(d) + "\n")
        if rows:
            names = list(sweeps)
            out.write("  ".join(f"{n:>12}" for n in names) + "  " + "  ".join(f"{c:>14}" for c in ROW_COLUMNS)
                      + "\n")
            for case, r in rows:
                out.write("  ".join(f"{case[n]!s:>12}" for n in names) + "  "
                          + "  ".join(f"{r[c]:>14.6g}" for c in ROW_COLUMNS) + "\n")
    return 0


def register_simulate(sub):
    """Add ``mva simulate``."""
    p = sub.add_parser("simulate", help="trace-driven simulation of a shared-bus multiprocessor or a CMT chip",
                       description="Simulate WORKLOAD (a manifest .toml, an .npz/lackey/din trace, or a preset: "
                                   "ec-server, db, web-server, awk, cp, gzip, rm, ls) on P processors with "
                                   "private caches kept coherent over a shared bus (prints miss rate and breakdown, "
                                   "coherence transactions per 100 references, bus and processor utilisation, "
                                   "GSP), or with --machine cmt on fine-grained multithreaded cores sharing an L2 "
                                   "(prints IPC, L1 and L2 miss ratios, per-thread shares).")
    p.add_argument("workload", metavar="WORKLOAD")
    p.add_argument("--machine", choices=("bus", "cmt", "svm", "ccnuma"), default="bus",
                   help="bus: the shared-bus SMP (default); cmt: chip multithreading with a shared L2; svm: "
                        "software shared memory on a cluster; ccnuma: directory-based cc-NUMA with proxies")
    p.add_argument("--protocol", choices=("mesi", "amsd", "pscr", "hlrc", "sc"),
                   help="coherence protocol (bus: mesi, amsd, pscr, default mesi; svm: hlrc, sc, default hlrc)")
    p.add_argument("--cpus", type=int, help="processors (default 8)")
    p.add_argument("--cache", help="cache size per processor, e.g. 2MiB or 262144 (default 2MiB)")
    p.add_argument("--block", type=int, help="block size in bytes (default 128)")
    p.add_argument("--assoc", type=int, help="associativity (default 2)")
    p.add_argument("--scheduler", choices=("random", "affinity"), help="process scheduling (default random)")
    p.add_argument("--time-slice", dest="time_slice", type=int, metavar="N",
                   help="time slice: references on the bus (default 200000), cycles on cmt (default 1000000)")
    p.add_argument("--data-only", dest="data_only", action="store_const", const=True,
                   help="simulate data references only (the cache is unified by default)")
    p.add_argument("--references", type=int, metavar="N", help="run length in references (presets: generated "
                                                               "length too)")
    p.add_argument("--seed", type=int, help="seed of scheduling and page placement (default 1)")
    p.add_argument("--workload-seed", dest="workload_seed", type=int, help="seed of a generated preset")
    p.add_argument("--affinity", type=float, help="affinity scheduler's preference, in time slices (default 1)")
    p.add_argument("--pages", choices=("random", "identity"), help="virtual-to-physical page mapping")
    p.add_argument("--check", action="store_true", help="check coherence (versions per word; slow)")
    p.add_argument("--sweep", action="append", default=[], metavar="NAME=SPEC",
                   help="sweep an option: a,b,c or start:stop:step, e.g. cpus=4,8,16 or protocol=mesi,amsd,pscr "
                        "(repeatable: a cartesian grid)")
    p.add_argument("--zip", action="store_true", help="pair the sweeps value by value instead of a grid")
    p.add_argument("--scalability", action="store_true",
                   help="find the processor count where GSP stops growing by --threshold per added processor")
    p.add_argument("--threshold", type=float, default=0.5, help="GSP increment of the scalability test (0.5)")
    p.add_argument("--max-cpus", dest="max_cpus", type=int, default=32, help="upper end of the scalability search")
    cmt = p.add_argument_group("--machine cmt (Fedorova et al. 2004 defaults)")
    cmt.add_argument("--cores", type=int, help="cores (default 1)")
    cmt.add_argument("--contexts", type=int, help="hardware contexts per core (default 4)")
    cmt.add_argument("--l1", help="L1 data cache per core (default 8KiB)")
    cmt.add_argument("--l1-assoc", dest="l1_assoc", type=int, help="L1 associativity (default 4)")
    cmt.add_argument("--l2", help="shared L2 (default 384KiB)")
    cmt.add_argument("--l2-assoc", dest="l2_assoc", type=int, help="L2 associativity (default 12)")
    cmt.add_argument("--l1-latency", dest="l1_latency", type=int, help="L1 hit, cycles (default 2)")
    cmt.add_argument("--l2-latency", dest="l2_latency", type=int, help="L1 to L2, cycles (default 22)")
    cmt.add_argument("--memory-latency", dest="memory_latency", type=int, help="L2 to memory, cycles (default 120)")
    cmt.add_argument("--bandwidth", type=float, help="L2-memory bytes per cycle (default 8)")
    cmt.add_argument("--cycles", type=int, help="measured cycles (default 10,000,000)")
    cmt.add_argument("--warmup", type=int, help="cycles before measuring (default 1,000,000)")
    cmt.add_argument("--schedule", choices=("all", "round-robin", "perf", "fair"),
                     help="all threads at once (default), round-robin windows, or balance-set PERF/FAIR groups "
                          "predicted from each thread's reuse profile")
    svm = p.add_argument_group("--machine svm (Bilas et al. 1999: HLRC pages or SC blocks, one node per process)")
    svm.add_argument("--granularity", help="coherence unit: 4KiB for hlrc, 64B to 4KiB for sc (default 64B)")
    svm.add_argument("--home", choices=("first-touch", "round-robin"), help="home of each page or block")
    svm.add_argument("--nodes", type=int, help="processes of a parallel kernel (fft, barnes, water, ge, ocean-contig, "
                                               "ocean-noncontig, transpose; default 16, 64 on ccnuma)")
    svm.add_argument("--cycles-per-reference", dest="cycles_per_reference", type=int,
                     help="work per data reference of a trace without instruction fetches (default: the "
                          "kernel's, else 1)")
    numa = p.add_argument_group("--machine ccnuma (Talbot & Kelly 1999: 64 nodes, 4 MiB SLC, 8 KiB pages; "
                                "--nodes, --check and --cycles-per-reference apply too)")
    numa.add_argument("--placement", choices=("first-touch", "round-robin"),
                      help="home of each page (default first-touch, after the phase before the first barrier)")
    numa.add_argument("--proxies", choices=("none", "basic", "reactive"),
                      help="route reads via proxy nodes: basic for marked ranges, reactive for bounced reads")
    numa.add_argument("--buffer", type=int, metavar="N",
                      help="input buffer: reads bounce when more than N messages wait (default infinite)")
    numa.add_argument("--slc", help="second-level cache per node (default 4MiB, direct mapped)")
    numa.add_argument("--flc", help="first-level cache per node (default 8KiB, write-through)")
    numa.add_argument("--initialisation", choices=("first-barrier", "none"),
                      help="phase before the first barrier: unmeasured, pages placed afresh after it (default)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument("--force", action="store_true", help="overwrite the -o file if it exists")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=_cmd_simulate)


# --- mva calibrate -----------------------------------------------------------------------
def _cmd_calibrate(args):
    from mva.files import read_document

    from .fit import calibrated_document, fit, operational_demands, regression_demands

    with output_stream(args.output, args.force) as out:
        if args.demands:
            if len(args.files) != 1:
                raise ModelError("--demands", "takes one observation table: mva calibrate OBS.csv --demands")
            laws = None if _multiclass(args.files[0]) else operational_demands(args.files[0])
            reg = regression_demands(args.files[0], background=args.background)
            if args.format == "json":
                out.write(json.dumps({"operational": None if laws is None else laws.reset_index().to_dict("records"),
                                      "regression": reg.reset_index().to_dict("records")}) + "\n")
            else:
                if laws is not None:
                    out.write("Utilisation law D = U / X per row (mean, min, max):\n")
                    out.write(laws.to_string(float_format=lambda v: f"{v:.6g}") + "\n\n")
                out.write("Regression U = D X" + (" + U0" if args.background else "") + " (non-negative least squares):\n")
                out.write(reg.to_string(float_format=lambda v: f"{v:.6g}") + "\n")
            return 0
        if len(args.files) not in (1, 2):
            raise ModelError("calibrate", "expected MODEL OBSERVATIONS.csv, OBSERVATIONS.csv with a file column, "
                                          "or OBSERVATIONS.csv --demands")
        if not args.fit:
            raise ModelError("--fit", "name at least one parameter to fit, e.g. --fit cpu.cache_hit_rate=0.5:1")
        if args.write:
            refuse_overwrite(args.write, args.force, "--write")
        doc = read_document(args.files[0]) if len(args.files) == 2 else None
        if doc is None and args.write:
            raise ModelError("--write", "needs one model file (MODEL OBSERVATIONS.csv)")
        try:
            holdout = [int(x) for x in args.holdout_rows.split(",")] if args.holdout_rows else []
        except ValueError:
            raise ModelError("--holdout-rows", f"expected row numbers like 3,4, got {args.holdout_rows!r}") from None
        result = fit(doc, args.files[-1], args.fit, holdout_rows=holdout, level=args.level, loss=args.loss,
                     loss_scale=args.loss_scale)
        if args.format == "json":
            out.write(json.dumps({"file": args.files[0], **result.to_dict(),
                                  "rows": json.loads(result.rows.to_json(orient="records"))}) + "\n")
        else:
            pct = int(round(100 * result.level))
            out.write(f"Fitted parameters ({pct}% intervals, {result.dof} degrees of freedom; "
                      f"{'converged' if result.converged else 'NOT CONVERGED: ' + result.message}):\n")
            out.write(result.estimates.to_string(float_format=lambda v: f"{v:.6g}") + "\n\n")
            shown = [c for c in result.rows.columns if not c.startswith("error.")]
            out.write(result.rows[shown].to_string(float_format=lambda v: f"{v:.6g}") + "\n\n")
            for label in ("train", "holdout"):
                e = result.errors[label]
                if e["values"]:
                    out.write(f"{label:<8} relative error: mean {100 * e['mean']:.3f}%, max {100 * e['max']:.3f}% "
                              f"over {e['values']} values\n")
        if args.write:
            import tomli_w

            text = tomli_w.dumps(calibrated_document(doc, result.values))
            Path(args.write).write_text(f"# calibrated by: mva calibrate {' '.join(args.files)} "
                                        f"{' '.join('--fit ' + f for f in args.fit)}\n" + text)
            print(f"wrote {args.write}", file=sys.stderr)
        return 0 if result.converged else 3


def register_calibrate(sub):
    """Add ``mva calibrate``."""
    p = sub.add_parser("calibrate", help="fit model parameters to observations; operational-law demands",
                       description="Fit parameters of a network or model file to an observation table (CSV: "
                                   "operating-point parameters and observed outputs per row), or estimate "
                                   "service demands from utilisations and throughputs (--demands).")
    p.add_argument("files", nargs="+", metavar="FILE", help="MODEL OBSERVATIONS.csv, or OBSERVATIONS.csv with --demands")
    p.add_argument("--fit", action="append", default=[], metavar="NAME[=LOW:HIGH]",
                   help="a parameter to fit, with optional bounds (repeatable); NAME[k] fits one list element")
    p.add_argument("--holdout-rows", metavar="I,J", help="rows (0-based) to predict but not fit")
    p.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals (0.95)")
    p.add_argument("--loss", choices=("linear", "soft_l1", "huber", "cauchy", "arctan"), default="linear",
                   help="least squares (linear) or a robust loss that down-weights rows the model cannot meet")
    p.add_argument("--loss-scale", type=float, default=0.1, metavar="R",
                   help="relative residual where a robust loss starts to down-weight (0.1)")
    p.add_argument("--demands", action="store_true", help="operational-law and regression demands only")
    p.add_argument("--background", action="store_true", help="regression with a background utilisation term")
    p.add_argument("--write", metavar="FILE", help="save the model file with the fitted values")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--force", action="store_true", help="overwrite existing -o / --write files")
    p.set_defaults(handler=_cmd_calibrate)


def _multiclass(path):
    from .fit import _throughput_columns, read_observations

    return len(_throughput_columns(read_observations(path))) > 1
