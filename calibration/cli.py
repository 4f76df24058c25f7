"""``mva trace``, ``mva simulate`` and ``mva calibrate``: the command line of the simulator
and of the calibration.

Registered through the ``mva.commands`` entry-point group (``setup.cfg``), so the ``mva``
shell never imports this package.  Bad input is one line on stderr and exit status 2.
"""
from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from mva.arguments import open_fraction, positive_float, positive_int
from mva.output import output_stream, plot_path, refuse_overwrite, require_matplotlib, save_to, write_text
from mva.errors import ModelError

__all__ = ["register_trace", "register_simulate", "register_calibrate"]

# --- mva trace ---------------------------------------------------------------------------
def _cmd_convert(args):
    from .sim.traces import limited, read_trace, skipped, write_npz

    out = Path(args.output)
    if out.suffix != ".npz":
        raise ModelError("-o", "the output must be an .npz file")
    if args.skip < 0:
        raise ModelError("--skip", f"must be a count of references >= 0, got {args.skip}")
    if not 1 <= args.din_size <= 0xFFFF:
        raise ModelError("--din-size", f"must be an access size from 1 to 65535 bytes, got {args.din_size}")
    if args.limit is not None and args.limit < 1:
        raise ModelError("--limit", f"must be a positive count of references, got {args.limit}")
    refuse_overwrite(out, args.force, "-o")
    chunks = read_trace(args.input, args.format, din_size=args.din_size)
    chunks = limited(skipped(chunks, args.skip), args.limit)
    n = write_npz(out, chunks, compress=not args.no_compress)
    print(f"{args.input} -> {out}: {n} references", file=sys.stderr)
    return 0


def _cmd_splash(args):
    from .sim.splash import PROGRAMS, build, check_inputs, record

    if args.program not in PROGRAMS:
        raise ModelError("PROGRAM", f"unknown Splash-3 program {args.program!r}; choose {', '.join(PROGRAMS)}")
    if not 1 <= args.processes <= 1024:
        raise ModelError("--processes", f"must be from 1 to 1024, got {args.processes}")
    if args.size is not None and args.size < 1:
        raise ModelError("--size", f"must be positive, got {args.size}")
    if args.phases is not None and args.phases < 1:
        raise ModelError("--phases", f"must be a positive count of barrier phases, got {args.phases}")
    if not 1 <= args.arena_mb <= 1 << 20:
        raise ModelError("--arena-mb", f"must be from 1 to 1048576 MiB, got {args.arena_mb}")
    out = Path(args.output)
    manifest = out / f"{args.program}.toml"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelError("-o", f"cannot make the directory {out} ({exc.strerror})") from None
    refuse_overwrite(manifest, args.force, "-o")
    PROGRAMS[args.program].command(args.size or PROGRAMS[args.program].paper_size, args.processes)   # checks --size
    check_inputs(args.program, args.source, args.size)
    with tempfile.TemporaryDirectory(prefix="splash-build-", dir=out) as workdir:   # nothing left behind
        binary = build(args.program, args.source, workdir, args.size)
        facts = record(args.program, binary, out, args.processes, args.size, args.keep_logs, args.arena_mb,
                       args.phases)
    print(f"{args.program}: {facts['processes']} processes, {facts['size']:,} {facts['size_unit']}: traced and "
          f"converted in {facts['trace_seconds']} s ({facts['lackey_bytes'] / 1e6:,.0f} MB of lackey text, at most "
          f"{facts['lackey_disk_peak_bytes'] / 1e6:,.0f} MB of it on the disk at once), "
          f"{facts['convert_seconds']} s more to finish: {facts['references']:,} data references, {facts['instructions']:,} "
          f"instructions, {facts['barriers']:,} barriers, {facts['acquires']:,} lock acquires -> {manifest}",
          file=sys.stderr)
    return 0


def _check_ranges(checks) -> None:
    """Each ``(option, value, low, high)`` in range, or a ModelError naming the option."""
    for option, value, low, high in checks:
        if not low <= value <= high:
            raise ModelError(option, f"must be from {low} to {high}, got {value}")


def _cmd_tpcc(args):
    from .sim.tpcc_recorder import record

    _check_ranges((("--terminals", args.terminals, 1, 20), ("--transactions", args.transactions, 1, 10_000),
                   ("--warmup", args.warmup, 0, 100), ("--io-transactions", args.io_transactions, 1, 100_000),
                   ("--warehouses", args.warehouses, 1, 100), ("--count-transactions", args.count_transactions, 0,
                                                                10_000), ("--seed", args.seed, 0, 2**32 - 1)))
    pool = None
    if args.buffer_pool is not None:
        import re
        found = re.fullmatch(r"(\d+)(kB|MB)", args.buffer_pool.strip())
        kib = int(found.group(1)) * (1024 if found.group(2) == "MB" else 1) if found else 0
        if not found or kib < 128 or kib % 8 or kib > 1024 * 1024:
            raise ModelError("--buffer-pool", "must be a whole number of 8 kB buffers from 128kB to 1024MB, as in "
                                              f"528kB or 2MB, got {args.buffer_pool!r}")
        pool = f"{kib}kB"
    out = Path(args.output)
    if not out.parent.is_dir():
        raise ModelError("-o", f"cannot write {out}: no directory {out.parent}")
    if out.is_dir():                                 # the recorder creates DIR itself
        refuse_overwrite(out / "tpcc.toml", args.force, "-o")
    facts = record(out, args.terminals, args.transactions, args.warmup, args.io_transactions,
                   args.count_transactions, args.seed, args.warehouses, keep_logs=args.keep_logs, force=True,
                   buffer_pool=pool)
    print(f"tpcc: {facts['terminals']} terminals x {facts['transactions_per_terminal']} transactions traced in "
          f"{facts['trace_seconds']} s ({facts['lackey_bytes'] / 1e6:,.0f} MB of lackey text), converted in "
          f"{facts['convert_seconds']} s: {facts['references']:,} data references, {facts['instructions']:,} "
          f"instructions; block I/O of each type in {facts['io_seconds']} s -> {out / 'tpcc.toml'}", file=sys.stderr)
    return 0


def _cmd_tpcw(args):
    from .sim.kernel_model import KernelModel
    from .sim.tpcw_db import MIXES, Scale
    from .sim.tpcw_recorder import excerpt, record

    _check_ranges((("--ebs", args.ebs, 1, 60), ("--interactions", args.interactions, 1, 100_000),
                   ("--items", args.items, 20, 10_000_000), ("--scale-factor", args.scale_factor, 1, 10_000),
                   ("--seed", args.seed, 0, 2**32 - 1)))
    if args.mix not in MIXES:
        raise ModelError("--mix", f"unknown mix {args.mix!r}; choose {', '.join(MIXES)}")
    try:
        KernelModel(0, scale=args.kernel_scale)
    except ModelError:
        raise ModelError("--kernel-scale", f"must be a number from 0 to 100, got {args.kernel_scale}") from None
    scale = Scale(ebs=20, items=args.items, factor=args.scale_factor)
    out = Path(args.output)
    if not out.parent.is_dir():
        raise ModelError("-o", f"cannot write {out}: no directory {out.parent}")
    if out.is_dir():
        refuse_overwrite(out / "ec-server.toml", args.force, "-o")
    if args.excerpts is not None:
        exc_dir = Path(args.excerpts)
        if exc_dir.is_dir():
            refuse_overwrite(exc_dir / "ec-server.toml", args.force, "--excerpts")
    facts = record(out, args.ebs, args.interactions, args.mix, scale, args.seed, args.kernel_scale,
                   keep_logs=args.keep_logs)
    made = ", ".join(f"{w} ({v['processes']} processes, {v['references']:,} references"
                     + (f"; short: {'; '.join(v['short'])}" if v["short"] else "") + ")"
                     for w, v in facts["workloads"].items())
    print(f"tpcw: {sum(facts['interactions'].values())} web interactions by {facts['ebs']} browsers traced in "
          f"{facts['serve_seconds']} s ({facts['lackey_bytes'] / 1e9:,.1f} GB of lackey text), converted in "
          f"{facts['convert_seconds']} s -> {out}: {made}", file=sys.stderr)
    if args.excerpts is not None:
        written = excerpt(out, args.excerpts)
        print(f"tpcw: {len(written)} excerpts -> {args.excerpts}", file=sys.stderr)
    return 0


def _check_block(block: int) -> None:
    """``--block`` of ``mva trace``: a power of two from 1 byte to 1 MiB."""
    if not (1 <= block <= 1 << 20 and block & (block - 1) == 0):
        raise ModelError("--block", f"must be a power of two from 1 to 1 MiB, got {block}")


def _cmd_stats(args):
    from .sim.stats import format_statistics, workload_statistics
    from .sim.loading import load_workload

    _check_block(args.block)
    if args.references is not None and args.references < 1:
        raise ModelError("--references", f"must be a positive count, got {args.references}")
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
    write_text(out / "workload.toml", "\n".join(lines), "-o")
    print(f"wrote {len(wl.processes)} traces and {out / 'workload.toml'}", file=sys.stderr)
    return 0


DEFAULT_REUSE_SIZES = "4KiB,8KiB,16KiB,32KiB,64KiB,128KiB,256KiB,512KiB,1MiB,2MiB,4MiB"


def _cmd_reuse(args):
    from .missratio import lru_miss_ratio
    from .sim.options import parse_size, size_label
    from .sim.reuse import reuse_profile

    _check_block(args.block)
    if args.sample is not None and not 0 < args.sample <= 1:
        raise ModelError("--sample", f"must be a rate in (0, 1], got {args.sample:g}")
    try:
        sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    except (ValueError, OverflowError):
        raise ModelError("--sizes", f"expected sizes like 8KiB,32KiB, got {args.sizes!r}") from None
    if not sizes or min(sizes) < args.block:
        raise ModelError("--sizes", f"every size must hold at least one {args.block}-byte block")
    if args.plot:
        args.plot = plot_path(args.plot, args.force)
    profile = reuse_profile(args.trace, block=args.block, data_only=args.data_only, sample=args.sample,
                            seed=args.seed, fmt=args.trace_format, name=Path(args.trace).name)
    rows = []
    for size in sizes:
        try:
            ratio = lru_miss_ratio(profile, size)
        except ModelError as exc:
            raise ModelError("--sample" if exc.field == "sample" else exc.field, exc.problem) from None
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
            print(f"  {size_label(r['cache']):>12} {r['misses']:>14,.0f} {r['miss_ratio']:>11.5f}")
    if args.plot:
        _plot_reuse(profile, rows, args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def _plot_reuse(profile, rows, path):
    plt = require_matplotlib("--plot")

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
    try:
        save_to(path, "--plot", lambda name: fig.savefig(name, dpi=120))
    finally:
        plt.close(fig)


def register_trace(sub):
    """Add ``mva trace convert|stats|generate|reuse|splash|tpcc|tpcw``."""
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
    sp = tsub.add_parser("splash", help="build a Splash-3 program on fork-based PARMACS, trace it with valgrind "
                                        "lackey (one trace per process) and write a workload manifest",
                         description="Builds PROGRAM from the Splash-3 tree --source with the project's fork-based "
                                     "PARMACS macros, runs it as --processes processes under valgrind's lackey and "
                                     "converts the logs: one .npz per process (region of interest, synchronisation "
                                     "as trace markers), the arena and globals as shared ranges, G_MALLOC blocks "
                                     "as named [[structure]] tables. Needs gcc, make, m4 and valgrind.")
    sp.add_argument("program", metavar="PROGRAM", help="fft, lu, lu-noncontig, radix, ocean-contig, "
                                                       "ocean-noncontig, barnes, fmm, water-nsq, water-spatial, "
                                                       "raytrace, raytrace-teapot, volrend, cholesky, radiosity; "
                                                       "radix-local and ocean-rowwise: Radix and Ocean-Contig "
                                                       "restructured for shared virtual memory as Jiang, Shan & "
                                                       "Singh describe (PPoPP 1997)")
    sp.add_argument("--source", required=True, metavar="DIR", help="a Splash-3 tree (its codes/ directory)")
    sp.add_argument("-o", "--output", required=True, metavar="DIR", help="where the traces and PROGRAM.toml go")
    sp.add_argument("--processes", type=int, default=4, metavar="N", help="processes (default 4)")
    sp.add_argument("--size", type=int, metavar="N", help="problem size: points (fft), matrix order (lu), keys "
                                                          "(radix), grid side (ocean), particles (barnes, fmm), "
                                                          "molecules (water), image side (raytrace), head width "
                                                          "(volrend), tk matrix number (cholesky: 14-18), scene "
                                                          "(radiosity: 1 test, 2 room, 3 large room); default Talbot & "
                                                          "Kelly's Table 1.3 or SPLASH-2's base")
    sp.add_argument("--arena-mb", type=int, default=4096, metavar="MIB", help="virtual size of the G_MALLOC arena "
                                                                               "(default 4096, reserved lazily)")
    sp.add_argument("--phases", type=int, metavar="K", help="an excerpt: each trace ends at its K-th barrier (the "
                                                            "processes still meet at every barrier)")
    sp.add_argument("--keep-logs", action="store_true", help="keep the lackey text (DIR/lackey)")
    sp.add_argument("--force", action="store_true", help="overwrite DIR/PROGRAM.toml and its traces")
    sp.set_defaults(handler=_cmd_splash)
    tp = tsub.add_parser("tpcc", help="run TPC-C on a throw-away PostgreSQL and record it: block I/O per "
                                      "transaction type and table (strace), the backends' traces (valgrind lackey)",
                         description="Creates a PostgreSQL cluster in DIR, loads a TPC-C database scaled down 100 "
                                     "times (Du et al., JPDC 2001, section 4.1), measures each transaction type's "
                                     "block reads and writes per table, then traces --terminals backends running "
                                     "the mix under valgrind's lackey: one .npz per backend cut into one segment "
                                     "per transaction, the server's shared memory as shared ranges (tpcc.toml). "
                                     "Needs PostgreSQL's server, valgrind, strace and psycopg.")
    tp.add_argument("-o", "--output", required=True, metavar="DIR", help="where the recording goes")
    tp.add_argument("--terminals", type=int, default=8, metavar="N", help="traced terminals (default 8)")
    tp.add_argument("--transactions", type=int, default=12, metavar="N",
                    help="traced transactions per terminal, drawn with the paper's mix (default 12)")
    tp.add_argument("--warmup", type=int, default=1, metavar="N",
                    help="rounds of every type each terminal runs before its traced ones (default 1)")
    tp.add_argument("--io-transactions", type=int, default=40, metavar="N",
                    help="transactions of each type in the block I/O measurement (default 40)")
    tp.add_argument("--count-transactions", type=int, default=10, metavar="N",
                    help="then one terminal alone traces N of each type, for the per-type counts (default 10)")
    tp.add_argument("--warehouses", type=int, default=1, metavar="W", help="warehouses (default 1)")
    tp.add_argument("--buffer-pool", metavar="SIZE", help="PostgreSQL's shared_buffers, in kB or MB (e.g. 528kB; "
                                                          "default 256kB)")
    tp.add_argument("--seed", type=int, default=1)
    tp.add_argument("--keep-logs", action="store_true", help="keep the work directory and the lackey text")
    tp.add_argument("--force", action="store_true", help="replace a recording in DIR")
    tp.set_defaults(handler=_cmd_tpcc)
    tw = tsub.add_parser("tpcw", help="run TPC-W on Apache, PHP and a throw-away PostgreSQL and record it with the "
                                      "UNIX utilities (valgrind lackey): the EC-server, DB and Web-server workloads",
                         description="Creates a PostgreSQL cluster with a TPC-W database, serves the fourteen web "
                                     "interactions from Apache (prefork, mod_php) to --ebs emulated browsers, runs "
                                     "ls, awk, cp, gzip and rm, every process under valgrind's lackey with its "
                                     "system calls; writes one .npz per process with kernel references modelled "
                                     "at each system call, and the three workloads of Foglia, Giorgi & Prete "
                                     "(2004) as manifests (ec-server.toml, db.toml, web-server.toml). Needs "
                                     "apache2, libapache2-mod-php, php-pgsql, PostgreSQL's server, valgrind and "
                                     "psycopg.")
    tw.add_argument("-o", "--output", required=True, metavar="DIR", help="where the recording goes")
    tw.add_argument("--ebs", type=int, default=34, metavar="N", help="emulated browsers (default 34: enough busy "
                                                                     "Apache children for the Web-server workload)")
    tw.add_argument("--interactions", type=int, default=3, metavar="N",
                    help="web interactions per browser (default 3: about the paper's 100 in all)")
    tw.add_argument("--mix", default="shopping", help="TPC-W mix: browsing, shopping (default) or ordering")
    tw.add_argument("--items", type=int, default=10_000, metavar="N", help="items in the database (default 10000)")
    tw.add_argument("--scale-factor", type=int, default=10, metavar="F",
                    help="customers, addresses and orders of 20 browsers divided by F (default 10)")
    tw.add_argument("--kernel-scale", type=float, default=1.0, metavar="X",
                    help="multiplies the modelled system calls' handler lengths (default 1; 0: entry and exit only)")
    tw.add_argument("--excerpts", metavar="DIR", help="also write the first 40,000 references of every process "
                                                      "with the three manifests to DIR (data/traces/tpcw)")
    tw.add_argument("--seed", type=int, default=1)
    tw.add_argument("--keep-logs", action="store_true", help="keep the work directory and the lackey text")
    tw.add_argument("--force", action="store_true", help="replace a recording in DIR")
    tw.set_defaults(handler=_cmd_tpcw)
    p.set_defaults(handler=lambda args: (p.print_help(sys.stderr), 2)[1])


# --- mva simulate ------------------------------------------------------------------------
# Everything machine-specific comes from calibration.sim.MACHINES: a configuration field
# with an Option is a command-line option of every machine that has it.
def _machine_options() -> dict:
    """``{field: {machine: Option}}`` over every registered machine, in registry order."""
    from .sim.registry import MACHINES

    table: dict = {}
    for machine in MACHINES.values():
        for name, opt in machine.options().items():
            table.setdefault(name, {})[machine.name] = opt
    return table


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _workload(args, machine):
    from .sim.loading import load_workload

    opts = {"nodes": args.nodes, "default_nodes": machine.default_nodes}
    if args.references is not None:       # a preset's generated length too
        opts["references"] = machine.options()["references"].parse("--references", args.references)
    if args.workload_seed is not None:
        if not 0 <= args.workload_seed < 2 ** 32:
            raise ModelError("--workload-seed", f"must be an integer in [0, 2^32), got {args.workload_seed}")
        opts["seed"] = args.workload_seed
    return load_workload(args.workload, **opts)


def _refuse_foreign(args, machine) -> None:
    """One line naming the first option given that ``machine`` does not have, and the
    machines that do."""
    from .sim.registry import MACHINES

    for name, owners in _machine_options().items():
        if getattr(args, name) is not None and machine.name not in owners:
            raise ModelError(_flag(name), f"applies to --machine {', '.join(owners)} only")
    if args.nodes is not None and not machine.parallel:
        raise ModelError("--nodes", "applies to --machine " + ", ".join(m.name for m in MACHINES.values() if m.parallel)
                         + " only")
    if not machine.scaling:
        given = [f for f, v in (("--scalability", args.scalability), ("--threshold", args.threshold),
                                ("--max-cpus", args.max_cpus)) if v not in (None, False)]
        if given:
            raise ModelError(given[0], "applies to --machine " + ", ".join(m.name for m in MACHINES.values()
                                                                          if m.scaling) + " only")


def _configs(args, machine) -> list:
    """``[(case, config)]``: the configuration of each sweep case, every input error raised
    before any run, naming the option or the ``--sweep`` entry it came from."""
    from mva.grid import cartesian, parse_sweeps, zipped

    own = machine.options()
    table = _machine_options()
    for name, opt in own.items():           # a choice of another machine: say which
        value = str(getattr(args, name)).lower()
        owners = [m for m, o in table[name].items() if value in o.choices]
        if opt.choices and getattr(args, name) is not None and value not in opt.choices and owners:
            raise ModelError(_flag(name), f"{value} applies to --machine {', '.join(owners)} only; --machine "
                                          f"{machine.name} takes {', '.join(opt.choices)}")
    given = {name: own[name].parse(_flag(name), getattr(args, name)) for name in own
             if getattr(args, name) is not None}
    sweeps = parse_sweeps(args.sweep) if args.sweep else {}
    for name in sweeps:
        if name not in own:
            raise ModelError(f"--sweep {name}", f"not an option of --machine {machine.name}; sweepable: "
                                                + ", ".join(own))
    cases = (zipped(sweeps) if args.zip else cartesian(sweeps)) if sweeps else [{}]
    out = []
    for case in cases:
        values = {**given, **{k: own[k].parse(f"--sweep {k}", v) for k, v in case.items()}}
        try:
            out.append((case, machine.config(**values)))
        except ModelError as exc:
            raise _as_written(exc, case, own) from None
    return out


def _as_written(exc: ModelError, case: dict, own: dict) -> ModelError:
    """``exc`` naming the option or ``--sweep`` entry the user wrote, not the field."""
    where = f"--sweep {exc.field}" if exc.field in case else _flag(exc.field) if exc.field in own else exc.field
    return ModelError(where, exc.problem)


def _cmd_simulate(args):
    from .sim.registry import MACHINES

    machine = MACHINES[args.machine]
    _refuse_foreign(args, machine)
    configs = _configs(args, machine)
    wl = _workload(args, machine)
    progress = sys.stderr.isatty() and not args.quiet
    with output_stream(args.output, args.force) as out:
        if args.scalability:
            return _scalability(args, machine, wl, configs, out, progress)
        rows = []
        for case, cfg in configs:
            try:
                d = machine.simulate(wl, machine.prepared(wl, cfg), progress=progress).to_dict()
            except ModelError as exc:
                raise _as_written(exc, case, machine.options()) from None
            d["config"] = cfg.to_dict()      # as asked: a perf/fair schedule by name, not its groups
            if args.format == "json":
                out.write(json.dumps({**({"case": case} if args.sweep else {}), **d}) + "\n")
            elif args.sweep:
                rows.append((case, machine.summary_row(d)))
            else:
                out.write(machine.format_result(d) + "\n")
        if rows:
            names, columns = list(rows[0][0]), list(rows[0][1])
            width = {c: max(12, len(c)) for c in names + columns}
            out.write("  ".join(f"{c:>{width[c]}}" for c in names + columns) + "\n")
            for case, r in rows:
                out.write("  ".join([*(f"{case[n]!s:>{width[n]}}" for n in names),
                                     *(f"{r[c]:>{width[c]}.6g}" for c in columns)]) + "\n")
    return 0


def _scalability(args, machine, wl, configs, out, progress) -> int:
    from .sim.machine import scalability

    field, measure = machine.scaling
    threshold = 0.5 if args.threshold is None else args.threshold
    limit = 32 if args.max_cpus is None else args.max_cpus
    for case, cfg in configs:
        n, curve = scalability(lambda k, cfg=cfg: getattr(
            machine.simulate(wl, replace(cfg, **{field: k}), progress=progress), measure), start=1, limit=limit, threshold=threshold)
        if args.format == "json":
            out.write(json.dumps({"workload": wl.name, "case": case, "config": cfg.to_dict(), "scalable_to": n,
                                  measure: {str(k): v for k, v in curve.items()}}) + "\n")
            continue
        label = ", ".join(f"{k}={v}" for k, v in case.items()) or machine.name
        out.write(f"{wl.name} {label}: {measure.upper()} by {field}\n")
        for k, v in curve.items():
            out.write(f"  {k:>3}  {v:7.3f}\n")
        out.write(f"  scalable up to {n} {field} ({measure.upper()}({n}+1) - {measure.upper()}({n}) < {threshold})\n"
                  if n else f"  still scaling at {limit} {field}\n")
    return 0


def register_simulate(sub):
    """Add ``mva simulate``, its options derived from :data:`calibration.sim.MACHINES`."""
    from .sim.registry import MACHINES

    p = sub.add_parser("simulate", help="trace-driven simulation of a multiprocessor: "
                                        + ", ".join(MACHINES) + " machines",
                       description="Simulate WORKLOAD (a manifest .toml, an .npz/lackey/din trace, a preset: "
                                   "ec-server, db, web-server, awk, cp, gzip, rm, ls, or a parallel kernel: fft, "
                                   "barnes, water, ge, ocean-contig, ocean-noncontig, transpose) on one machine "
                                   "and print its counts, or one row per case of --sweep.")
    p.add_argument("workload", metavar="WORKLOAD")
    p.add_argument("--machine", choices=tuple(MACHINES), default="bus",
                   help="; ".join(f"{m.name}: {m.title}" for m in MACHINES.values()) + " (default bus)")
    p.add_argument("--workload-seed", dest="workload_seed", type=int, help="seed of a generated preset")
    p.add_argument("--nodes", type=int, help="processes of a parallel kernel (a manifest or trace fixes its own) on --machine "
                   + ", ".join(f"{m.name} (default {m.default_nodes})" for m in MACHINES.values() if m.parallel))
    p.add_argument("--sweep", action="append", default=[], metavar="NAME=SPEC",
                   help="sweep an option of the machine: a,b,c or start:stop:step, e.g. cpus=4,8,16 or "
                        "protocol=mesi,amsd,pscr (repeatable: a cartesian grid)")
    p.add_argument("--zip", action="store_true", help="pair the sweeps value by value instead of a grid")
    scaling = [m.name for m in MACHINES.values() if m.scaling]
    p.add_argument("--scalability", action="store_true",
                   help=f"(--machine {', '.join(scaling)}) find the processor count where GSP stops growing by "
                        "--threshold per added processor")
    p.add_argument("--threshold", type=positive_float, help="GSP increment of the scalability test (default 0.5)")
    p.add_argument("--max-cpus", dest="max_cpus", type=positive_int, help="upper end of the scalability search (default 32)")
    _add_machine_options(p, MACHINES)
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument("--force", action="store_true", help="overwrite the -o file if it exists")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=_cmd_simulate)


def _add_machine_options(parser, machines) -> None:
    """One option per configuration field, in the group of the first machine that has it;
    a field several machines share says each machine's meaning."""
    groups = {}
    for name, by_machine in _machine_options().items():
        owners = list(by_machine)
        first = owners[0]
        if first not in groups:
            groups[first] = parser.add_argument_group(f"--machine {first}: {machines[first].title}")
        kinds = {o.kind for o in by_machine.values()}
        if len(kinds) > 1 and "flag" in kinds:
            raise TypeError(f"option {name} is a flag on one machine and takes a value on another")
        helps = {o.help + (f" [{o.unit}]" if o.unit else "") for o in by_machine.values()}
        text = (helps.pop() + (f" (--machine {', '.join(owners)})" if len(owners) > 1 else "")) if len(helps) == 1 \
            else "; ".join(f"{m}: {o.help}" + (f" [{o.unit}]" if o.unit else "") for m, o in by_machine.items())
        choices = list(dict.fromkeys(c for o in by_machine.values() for c in o.choices))
        if kinds == {"flag"}:
            groups[first].add_argument(_flag(name), dest=name, action="store_const", const=True, help=text)
        else:
            kind = kinds.pop()
            metavar = "{" + ",".join(choices) + "}" if choices else {"size": "SIZE", "float": "X",
                                                                     "names": "NAMES"}.get(kind, "N")
            groups[first].add_argument(_flag(name), dest=name, metavar=metavar, help=text)


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
            pct = f"{100 * result.level:g}"
            intervals = f"{pct}% intervals" if result.dof > 0 else "no intervals: as many parameters as values"
            out.write(f"Fitted parameters ({intervals}, {result.dof} degrees of freedom; "
                      f"{'converged' if result.converged else 'NOT CONVERGED: ' + result.message}):\n")
            out.write(result.estimates.to_string(float_format=lambda v: f"{v:.6g}", na_rep="n/a") + "\n\n")
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
            write_text(args.write, f"# calibrated by: mva calibrate {' '.join(args.files)} "
                                   f"{' '.join('--fit ' + f for f in args.fit)}\n" + text, "--write")
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
    p.add_argument("--level", type=open_fraction, default=0.95, help="confidence level of the intervals (0.95)")
    p.add_argument("--loss", choices=("linear", "soft_l1", "huber", "cauchy", "arctan"), default="linear",
                   help="least squares (linear) or a robust loss that down-weights rows the model cannot meet")
    p.add_argument("--loss-scale", type=positive_float, default=0.1, metavar="R",
                   help="relative residual where a robust loss starts to down-weight (0.1)")
    p.add_argument("--demands", action="store_true", help="operational-law and regression demands only")
    p.add_argument("--background", action="store_true", help="regression with a background utilisation term")
    p.add_argument("--write", metavar="FILE", help="save the model file with the fitted values")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--force", action="store_true", help="overwrite existing -o / --write files")
    p.set_defaults(handler=_cmd_calibrate)


def _multiclass(path):
    from .fit import read_observations, throughput_columns

    return len(throughput_columns(read_observations(path))) > 1
