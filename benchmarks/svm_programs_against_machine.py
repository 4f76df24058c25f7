"""The layered SVM model against the timed SVM machine on the recorded Splash-3 programs,
and the stored files it rests on (``data/studies/svm-splash16/NAME.toml``, each
program's model file, and ``data/studies/svm-splash16.csv``, one row per program,
protocol and case).

    sh data/traces/record-splash-svm.sh SPLASH3 DIR          # about 35 minutes here
    python benchmarks/svm_programs_against_machine.py DIR [--write]

SC runs at the coherence unit each program's row already names (``sc_unit_bytes``, the
best at AO on the machine, :func:`calibration.studies.svm.best_granularity`); a program
without a row gets it measured.  The rows' ``model_speedup_before`` is the model
speedup the stored row had before this run (so a model change shows its effect per
case); ``side`` says whether the program is one the model was changed on (``tuning``)
or held out.  Without ``--write`` nothing is stored: the table is printed.

``--receive-without-bus`` runs both past the receiving I/O buses (the machine's option
of that name, the model's ``receive_load`` 0): the buses then carry only what their
nodes send, so the table checks the model's contention for sending alone, and beside
the stored rows shows what taking messages in costs each (it stores nothing).
"""
from __future__ import annotations

import argparse
import csv
import statistics
import time
from pathlib import Path

from calibration.profiles.svm_cluster import model_document
from calibration.studies.svm import best_granularity, machine_check, recorded_programs, study

STORE = Path(__file__).resolve().parents[1] / "data" / "studies"
#: the programs the model's physics were changed on; the rest are held out
TUNING = ("fft", "lu", "radix", "ocean-contig")
FIELDS = ("program", "side", "sc_unit_bytes", "coherence", "case", "machine_speedup", "model_speedup", "model_error",
          "model_speedup_before", "model_error_before")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("programs", metavar="DIR", help="the recordings (NAME/NAME.toml)")
    p.add_argument("--write", action="store_true", help="store the model files and the rows in data/studies")
    p.add_argument("--processes", type=int, default=None, help="local processes for the machine runs")
    p.add_argument("--receive-without-bus", action="store_true",
                   help="machine and model take messages in past the receiving I/O bus (stores nothing)")
    p.add_argument("--store", metavar="DIR", default=str(STORE), help="where the rows and model files are read and "
                                                                       "written (default data/studies)")
    args = p.parse_args(argv)
    if args.write and args.receive_without_bus:
        p.error("--write stores the machine as it is: leave --receive-without-bus out")
    store = Path(args.store)
    import tomli_w

    sources = recorded_programs(args.programs)
    table = store / "svm-splash16.csv"
    stored = list(csv.DictReader(table.open())) if table.exists() else []
    unit = {r["program"]: int(r["sc_unit_bytes"]) for r in stored}
    before = {(r["program"], r["coherence"], r["case"]): float(r["model_speedup"]) for r in stored}
    runs = {"processes": args.processes} if args.processes else {}
    t0 = time.perf_counter()
    granularity = {n: unit[n] if n in unit else best_granularity(src)[0] for n, src in sources.items()}
    values = study(16, programs=args.programs, granularity=granularity, **runs)
    t1 = time.perf_counter()
    frame = machine_check(values, 16, sources=sources, granularity=granularity,
                          receive_without_bus=args.receive_without_bus, **runs)
    t2 = time.perf_counter()
    if args.receive_without_bus:
        _print_without_receiving(frame, {(r["program"], r["coherence"], r["case"]): r for r in stored})
        print(f"simulations without costs {t1 - t0:.0f} s; machine runs and model solves {t2 - t1:.0f} s")
        return 0
    rows = []
    for r in frame.itertuples():
        old = before.get((r.kernel, r.coherence, r.case))
        rows.append({"program": r.kernel, "side": "tuning" if r.kernel in TUNING else "held-out",
                     "sc_unit_bytes": granularity[r.kernel], "coherence": r.coherence, "case": r.case,
                     "machine_speedup": round(r.machine, 3), "model_speedup": round(r.mva, 3),
                     "model_error": round(r.error, 3),
                     "model_speedup_before": "" if old is None else round(old, 3),
                     "model_error_before": "" if old is None else round(old / r.machine - 1, 3)})
        print(f"{r.kernel:<16} {rows[-1]['side']:<9} {r.coherence:<5} {r.case}  machine {r.machine:7.3f}  "
              f"model {r.mva:7.3f} ({r.error:+7.1%})" + ("" if old is None else f"  before {old / r.machine - 1:+7.1%}"))
    for side in ("tuning", "held-out", None):
        errs = [abs(r["model_error"]) for r in rows if side is None or r["side"] == side]
        if errs:
            print(f"{side or 'all'}: {sum(e <= 0.10 for e in errs)} of {len(errs)} within 10%, median "
                  f"{statistics.median(errs):.1%}, worst {max(errs):.1%}")
    print(f"simulations without costs {t1 - t0:.0f} s; machine runs and model solves {t2 - t1:.0f} s")
    if args.write:
        folder = store / "svm-splash16"
        folder.mkdir(exist_ok=True)
        for name, v in values.items():
            doc = model_document(v, f"{name} (Splash-3, 16 processes; SC at {granularity[name]} B)")
            (folder / f"{name}.toml").write_text(tomli_w.dumps(doc))
        with table.open("w", newline="") as f:
            w = csv.DictWriter(f, FIELDS)
            w.writeheader()
            w.writerows(rows)
        print(f"wrote {table} and {folder}")
    return 0


def _print_without_receiving(frame, stored: dict) -> None:
    """Machine and model past the receiving buses, and beside them (where a stored row
    has the case) what taking messages in over the bus costs each: the speedup lost to
    it, in %."""
    errs = []
    for r in frame.itertuples():
        errs.append(abs(r.error))
        row = stored.get((r.kernel, r.coherence, r.case))
        text = f"{r.kernel:<16} {r.coherence:<5} {r.case}  machine {r.machine:7.3f}  model {r.mva:7.3f} ({r.error:+7.1%})"
        if row:
            machine, model = float(row["machine_speedup"]), float(row["model_speedup"])
            text += (f"   taking messages in costs: machine {1 - machine / r.machine:6.1%}, "
                     f"model {1 - model / r.mva:6.1%}")
        print(text)
    print(f"past the receiving buses: {sum(e <= 0.10 for e in errs)} of {len(errs)} within 10%, median "
          f"{statistics.median(errs):.1%}, worst {max(errs):.1%}")


if __name__ == "__main__":
    raise SystemExit(main())
