#!/bin/sh
# Record the chip-multithreading study's program traces with valgrind's lackey tool.
# Usage: sh data/traces/record-cmt.sh OUTDIR [SKIP] [KEEP]
#   SKIP references of start-up are left out (default 1000000), KEEP are kept (default 3000000).
# Each program's lackey log goes through a pipe to `head`, which keeps SKIP + KEEP lines;
# then valgrind is stopped, so neither the time nor the disk grows with the program's length.
set -e
out=${1:?usage: record-cmt.sh OUTDIR [SKIP] [KEEP]}
skip=${2:-1000000}
keep=${3:-3000000}
lines=$((skip + keep + 1000))
mkdir -p "$out"
cd "$out"
# the input text: 60,000 lines of 8 words drawn from 20,000 random words (seeded; 3,133,653 bytes)
python3 -c "
import random
random.seed(1)
words = [''.join(random.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(random.randint(2, 9))) for _ in range(20000)]
with open('in.txt', 'w') as f:
    for i in range(60000):
        f.write(' '.join(random.choice(words) for _ in range(8)) + '\n')
"
record() {   # record NAME COMMAND...
    name=$1; shift
    rm -f pipe && mkfifo pipe
    valgrind --tool=lackey --trace-mem=yes --log-file=pipe "$@" >/dev/null 2>&1 &
    head -n "$lines" pipe > "$name.lackey"
    kill -KILL $! 2>/dev/null || true   # valgrind goes on after its reader is gone otherwise
    wait $! 2>/dev/null || true
    rm -f pipe
    mva trace convert "$name.lackey" -o "$name.npz" --skip "$skip" --limit "$keep" --force
    rm -f "$name.lackey"
}
record xz xz -6 -c in.txt
record bzip2 bzip2 -c in.txt
record perl perl -e 'my %h; for my $i (1 .. 3000000) { $h{($i * 7919) % 400000} .= "x" }'
record sqlite sqlite3 :memory: "create table t(a, b); with recursive c(x) as (select 1 union all select x + 1 from c limit 300000) insert into t select x, x * 7919 % 300007 from c; create index i on t(b); select count(*) from t p join t q on p.b = q.a;"
record mawk mawk '{ for (i = 1; i <= NF; i++) c[$i]++ } END { print length(c) }' in.txt
record md5sum md5sum in.txt
