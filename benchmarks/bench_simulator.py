"""Speed of the trace-driven simulator, end to end (trace loading, block mapping and
simulation), in references per second on one core; and the peak memory of a run of
about 10^8 references.

    python benchmarks/bench_simulator.py [--quick]

Each speed is the median of 3 timed runs after one untimed run (which loads the compiled
kernels and warms the file cache).

Traces: a valgrind lackey trace of ``gzip`` (made here when valgrind is installed,
converted once to an uncompressed .npz; otherwise the synthetic ``gzip`` preset written
as .npz) for one processor, and the EC-server preset written as 26 .npz traces plus a
manifest for 8 and 16 processors.  Anchor (issue #5): Dinero IV simulates one 32 KiB
8-way cache at about 25 M references/s on this machine.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from calibration.sim.bus import simulate_bus  # noqa: E402
from calibration.sim.synthetic import generate  # noqa: E402
from calibration.sim.traces import read_lackey, write_npz  # noqa: E402
from calibration.sim.loading import load_workload  # noqa: E402
from calibration.sim.workload import trace_workload  # noqa: E402

WORK = Path(os.environ.get("BENCH_TRACES", Path(tempfile.gettempdir()) / "mva-bench-traces"))


def gzip_trace(quick: bool) -> Path:
    """A real uniprocessor trace: lackey of gzip on 400 kB of text (about 8e7 references)."""
    out = WORK / ("gzip-small.npz" if quick else "gzip.npz")
    if out.exists():
        return out
    WORK.mkdir(parents=True, exist_ok=True)
    if shutil.which("valgrind") and shutil.which("gzip"):
        text = WORK / "input.txt"
        corpus = b"".join(p.read_bytes() for p in sorted((HERE.parent / "mva").glob("*.py")))
        text.write_bytes((corpus * 20)[: 40_000 if quick else 400_000])
        log = WORK / "gzip.lackey"
        with open(os.devnull, "wb") as null:
            subprocess.run(["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-file={log}", "gzip", "-c",
                            str(text)], stdout=null, check=True)
        write_npz(out, read_lackey(log), compress=False)
        log.unlink()
    else:
        wl = generate("gzip", references=8_000_000 if quick else 80_000_000)
        write_npz(out, wl.processes[0].open(), compress=False)
    return out


def ec_server_manifest(references: int) -> Path:
    out = WORK / f"ec-server-{references}-raw"
    if not (out / "workload.toml").exists():
        from mva.cli import main

        main(["trace", "generate", "ec-server", "--references", str(references), "-o", str(out), "--force",
              "--no-compress"])
    return out / "workload.toml"


def measure(label, workload_factory, repeats=3, **config):
    """Median over ``repeats`` end-to-end runs (workload opened, traces read and mapped,
    simulated); the first run also warms the operating system's file cache."""
    from timing import median_time

    seconds, result = median_time(lambda: simulate_bus(workload_factory(), **config), repeats)
    return {"case": label, "references": result.references, "seconds": seconds,
            "M refs/s": result.references / seconds / 1e6, "miss rate %": 100 * result.misses / result.references}


def peak_memory(references: int) -> dict:
    """Peak resident memory of a separate process simulating ``references`` references of
    the EC-server preset on 8 processors (generated on the fly: no trace on disk).  Read
    from /proc's VmHWM: getrusage's ru_maxrss would include the forking parent's memory."""
    code = ("import time; from calibration.sim.synthetic import generate; "
            "from calibration.sim.bus import simulate_bus; t = time.perf_counter(); "
            f"r = simulate_bus(generate('ec-server', references={references}), cpus=8); "
            "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]; "
            "print(r.references, time.perf_counter() - t, int(hwm) / 1024)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=HERE.parent).stdout.split()
    return {"references": int(out[0]), "seconds": float(out[1]), "peak RSS MiB": float(out[2])}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small traces (a smoke run)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    gz = gzip_trace(args.quick)
    manifest = ec_server_manifest(2_600_000 if args.quick else 26_000_000)
    rows = [
        measure("1 CPU, 32 KiB 8-way 64 B, lackey gzip (.npz)", lambda: trace_workload(gz), cpus=1, cache="32KiB",
                block=64, assoc=8),
        measure("8 CPUs MESI, 2 MiB 2-way 128 B, EC-server (.npz x26)", lambda: load_workload(manifest), cpus=8,
                protocol="mesi"),
        measure("16 CPUs MESI, 2 MiB 2-way 128 B, EC-server (.npz x26)", lambda: load_workload(manifest), cpus=16,
                protocol="mesi"),
        measure("8 CPUs MESI, EC-server generated on the fly", lambda: generate("ec-server", references=26_000_000 if
                not args.quick else 2_600_000), cpus=8, protocol="mesi"),
        measure("8 CPUs PSCR, EC-server generated on the fly", lambda: generate("ec-server", references=26_000_000 if
                not args.quick else 2_600_000), cpus=8, protocol="pscr"),
    ]
    memory = peak_memory(10_000_000 if args.quick else 100_000_000)
    if args.json:
        print(json.dumps({"rows": rows, "memory": memory}))
        return
    print(f"{'case':<58} {'references':>12} {'seconds':>8} {'M refs/s':>9} {'miss %':>7}")
    for r in rows:
        print(f"{r['case']:<58} {r['references']:>12,} {r['seconds']:>8.2f} {r['M refs/s']:>9.2f} "
              f"{r['miss rate %']:>7.3f}")
    print(f"\n{memory['references']:,} references (EC-server, 8 CPUs): {memory['seconds']:.1f} s, "
          f"peak RSS {memory['peak RSS MiB']:.0f} MiB")


if __name__ == "__main__":
    main()
