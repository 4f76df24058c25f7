#!/bin/sh
# Record TPC-C on PostgreSQL and derive the TPC-C model's inputs from it (issue #37), the
# way Du, Zhang, Dong & Zhang (JPDC 2001, section 4) took theirs from POSTGRES.
# Usage: sh data/tpcc/record-postgres.sh OUTDIR            (run from the checkout's root)
# Writes OUTDIR (the recording: block I/O per transaction type, the backends' traces),
# data/tpcc/c1-postgres.toml ... c9-postgres.toml, the package's profile
# (calibration/profiles/tpcc_postgres_*.csv) and the stored excerpts (data/traces/tpcc).
# Needs PostgreSQL's server, valgrind, strace (apt-get install postgresql valgrind strace)
# and psycopg (pip install -e '.[postgres]').  Time and sizes: data/tpcc/README.md.
set -e
out=${1:?usage: record-postgres.sh OUTDIR}
mva trace tpcc -o "$out" --buffer-pool 528kB --terminals 8 --transactions 12 --warmup 1 --io-transactions 40 --count-transactions 10 --force
python -m calibration.profiles.tpcc_postgres "$out" --data data/tpcc --packaged --excerpts data/traces/tpcc --force
