#!/bin/sh
# Record the cc-NUMA study's SPLASH-2 programs (their race-free Splash-3 edition) as
# multi-process workloads: fork-based PARMACS, valgrind lackey, one trace per process.
# Usage: sh data/traces/record-splash.sh SPLASH3 OUTDIR [PROCESSES]        (the full study)
#        sh data/traces/record-splash.sh SPLASH3 OUTDIR --excerpts         (data/traces/splash)
# SPLASH3 is a Splash-3 tree (its codes/ directory is used; nothing in it is written to).
# Needs gcc, make, m4 and valgrind.  Sizes: Talbot & Kelly's Table 1.3 for every program
# (the recorder converts each log as it is written, so the disk holds the .npz files,
# not the lackey text; see data/traces/README.md for the times and sizes measured).
set -e
src=${1:?usage: record-splash.sh SPLASH3 OUTDIR [PROCESSES | --excerpts]}
out=${2:?usage: record-splash.sh SPLASH3 OUTDIR [PROCESSES | --excerpts]}
mode=${3:-64}
mkdir -p "$out"
record() {   # record PROGRAM SIZE [PHASES]
    phases=""
    [ -n "$3" ] && phases="--phases $3"
    mva trace splash "$1" --source "$src" -o "$out" --processes "$procs" --size "$2" $phases --force
}
if [ "$mode" = "--excerpts" ]; then
    # 16 processes, small problems, the first barrier phases: a few MB in all
    procs=16
    record fft 4096
    record ocean-contig 34 60
    record ocean-noncontig 34 60
    record water-nsq 64 5
    record barnes 256 5
    record fmm 1024 3
else
    procs=$mode
    record fft 65536
    record ocean-contig 258
    record ocean-noncontig 258
    record water-nsq 512
    record barnes 16384
    record fmm 8192
fi
rm -f "$out"/*.out
