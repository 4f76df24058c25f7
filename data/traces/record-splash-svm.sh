#!/bin/sh
# Record the SVM study's programs (Bilas, Jiang, Zhou & Singh, HPCA 1999, Table 1: the
# SPLASH-2 applications, from their race-free Splash-3 edition) at 16 processes, one per
# node: fork-based PARMACS, valgrind lackey, one trace per process.
# Usage: sh data/traces/record-splash-svm.sh SPLASH3 OUTDIR            (the nine, scaled down)
#        sh data/traces/record-splash-svm.sh SPLASH3 OUTDIR --paper    (Table 2's sizes: FFT, LU, Radix)
#        python -m calibration.studies.svm --programs OUTDIR
# SPLASH3 is a Splash-3 tree (nothing in it is written to).  Needs gcc, make, m4 and
# valgrind.  Sizes are scaled down from the paper's so that each program records in
# about 1-8 minutes on a 2-core machine (the paper's in brackets): FFT 64K points (1M),
# LU 256 (512), Ocean 130 (514), Radix 256K keys (1M), Barnes 1K particles (8K),
# Water-Nsquared and Water-Spatial 216 molecules (512), Volrend the CT head scaled down
# by four (the full head), Raytrace the teapot scene at 128 x 128 (car: car.geo is
# not in every copy of the tree; with it, `record raytrace 128` records the paper's).
# Each run also records the restructured versions of our own beside their originals,
# Radix-Local and Ocean-rowwise, at the same sizes.  --paper records the programs whose
# recording at the paper's size takes under 2 hours here (FFT 1M points, LU 512, Radix
# and Radix-Local 1M keys: 4-12 minutes each on 2 cores).  Not yet at the paper's size:
# Ocean at 514 (from 130's 80 s, estimated at half an hour a version, not tried), Barnes
# at 8K, the Waters at 512, Volrend's full head and Raytrace's car (inputs this tree lacks).
set -e
src=${1:?usage: record-splash-svm.sh SPLASH3 OUTDIR [--paper]}
out=${2:?usage: record-splash-svm.sh SPLASH3 OUTDIR [--paper]}
mkdir -p "$out"
record() {   # record PROGRAM SIZE: OUTDIR/PROGRAM/PROGRAM.toml, as the study reads them
    mva trace splash "$1" --source "$src" -o "$out/$1" --processes 16 --size "$2" --force
    rm -f "$out/$1"/*.out
}
if [ "${3:-}" = "--paper" ]; then
    record fft 1048576
    record lu 512
    record radix 1048576
    record radix-local 1048576
    exit 0
fi
record fft 65536
record lu 256
record ocean-contig 130
record ocean-rowwise 130
record radix 262144
record radix-local 262144
record barnes 1024
record water-nsq 216
record water-spatial 216
record volrend 64
record raytrace-teapot 128
