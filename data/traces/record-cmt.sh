#!/bin/sh
# Record the chip-multithreading study's program corpus with valgrind's lackey tool: every
# program at two phases of one run (windows of its reference stream).
# Usage: sh data/traces/record-cmt.sh OUTDIR [FIRST SECOND KEEP [PROGRAM ...]]
#   phase a keeps KEEP lackey lines after the first FIRST (default 40000000),
#   phase b keeps KEEP lines after the first SECOND (default 100000000); KEEP default 4000000.
#   PROGRAM ...: record only these (default: the whole corpus below).
# Needs valgrind and the programs (Debian 12: apt-get install valgrind xz-utils bzip2 gzip
# zstd perl python3 lua5.4 tcl mawk gawk sqlite3 stockfish gnuchess gcc bc jq).
# One run per program; its lackey log goes through a pipe to sed, which writes the two
# windows and quits after the second, and valgrind is then stopped, so neither time nor
# disk grows with the program's length. Writes OUTDIR/NAME-a.npz and NAME-b.npz.
# zstd, stockfish and gnuchess spend their first 10^8 references or more starting up
# (zstd and gnuchess clearing tables: one stream, one miss per block at any cache size;
# stockfish building its tables and network), so their windows are later: at=FIRST,SECOND
# below, whatever the arguments say. gnuchess's phase a is still in its start-up (the
# search begins between 320 and 420 million lines; the run ends before 450 million).
set -e
out=${1:?usage: record-cmt.sh OUTDIR [FIRST SECOND KEEP [PROGRAM ...]]}
first=${2:-40000000}
second=${3:-100000000}
keep=${4:-4000000}
[ $# -ge 4 ] && shift 4 || shift $#
only="$*"
mkdir -p "$out"
cd "$out"
export LC_ALL=C
# inputs, all seeded: a 3,133,653-byte text (60,000 lines of 8 words from 20,000 random
# words), a C file of 400 functions, a JSON list of 60,000 records, Tcl, Lua and bc scripts
/usr/bin/python3 - <<'PY'
import json, random
random.seed(1)
words = [''.join(random.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(random.randint(2, 9))) for _ in range(20000)]
with open('in.txt', 'w') as f:
    for i in range(60000):
        f.write(' '.join(random.choice(words) for _ in range(8)) + '\n')
with open('in.c', 'w') as f:
    for k in range(400):
        f.write(f"int f{k}(int *a, int n) {{ int s = {k}; for (int i = 0; i < n; i++) {{ s += a[i] * {k % 7 + 1}; "
                f"if (s > {1000 + k}) s -= a[(i * {k % 13 + 3}) % n]; }} return s; }}\n")
random.seed(2)
with open('in.json', 'w') as f:
    json.dump([{"id": i, "word": random.choice(words), "value": random.randint(0, 999)} for i in range(60000)], f)
PY
cat > in.tcl <<'TCL'
set d [dict create]
set f [open in.txt]
while {[gets $f line] >= 0} { foreach w $line { dict incr d $w } }
close $f
puts [llength [lsort -stride 2 -index 1 -integer $d]]
TCL
cat > in.lua <<'LUA'
local t, n = {}, 0
for line in io.lines("in.txt") do for w in line:gmatch("%a+") do t[w] = (t[w] or 0) + 1; n = n + 1 end end
local keys = {}
for k in pairs(t) do keys[#keys + 1] = k end
table.sort(keys, function(a, b) return t[a] > t[b] or (t[a] == t[b] and a < b) end)
print(n, #keys)
LUA
cc1=$(gcc -print-prog-name=cc1)
record() {   # [input=FILE] [at=FIRST,SECOND] record NAME COMMAND...  (standard input: FILE, default /dev/null)
    name=$1; shift
    a=${at%,*}; a=${a:-$first}; b=${at#*,}; b=${b:-$second}
    if [ -n "$only" ] && ! echo " $only " | grep -q " $name "; then return 0; fi
    rm -f "$name.pipe" && mkfifo "$name.pipe"
    valgrind --tool=lackey --trace-mem=yes --log-file="$name.pipe" "$@" <"${input:-/dev/null}" >/dev/null 2>&1 &
    sed -n -e "$((a + 1)),$((a + keep))w $name-a.lackey" \
           -e "$((b + 1)),$((b + keep))w $name-b.lackey" -e "$((b + keep))q" "$name.pipe"
    kill -KILL $! 2>/dev/null || true   # valgrind goes on after its reader is gone otherwise
    wait $! 2>/dev/null || true
    rm -f "$name.pipe"
    for phase in a b; do
        lines=$(wc -l < "$name-$phase.lackey")
        if [ "$lines" -lt "$keep" ]; then
            echo "record-cmt.sh: $name ended before phase $phase was complete ($lines of $keep lines)" >&2
            exit 1
        fi
        mva trace convert "$name-$phase.lackey" -o "$name-$phase.npz" --force
        rm -f "$name-$phase.lackey"
    done
    at=; input=          # a shell that keeps a call's assignments must not pass them on
}
record xz xz -6 -c in.txt
record bzip2 bzip2 -9 -c in.txt
record gzip gzip -9 -c in.txt
at=300000000,500000000 record zstd zstd -19 -T1 -c in.txt
record perl perl -e 'my %h; for my $i (1 .. 3000000) { $h{($i * 7919) % 400000} .= "x" }'
record python /usr/bin/python3 -c 'import collections; c = collections.Counter(w for _ in range(3) for w in open("in.txt").read().split()); print(len(sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))))'
record lua lua5.4 in.lua
record tcl tclsh in.tcl
record mawk mawk '{ for (i = 1; i <= NF; i++) c[$i]++ } END { print length(c) }' in.txt in.txt
record gawk gawk '{ for (i = 1; i <= NF; i++) c[$i] = c[$i] substr($i, 1, 1) } END { n = asorti(c, k); print n }' in.txt
record sqlite sqlite3 :memory: "create table t(a, b); with recursive c(x) as (select 1 union all select x + 1 from c limit 300000) insert into t select x, x * 7919 % 300007 from c; create index i on t(b); select count(*) from t p join t q on p.b = q.a;"
record sort sort -k 3 in.txt in.txt
printf 'scale=2500; 4 * a(1)\nquit\n' > pi.bc
record bc bc -l pi.bc
record jq jq 'group_by(.word) | map({word: .[0].word, total: (map(.value) | add)}) | sort_by(.total) | length' in.json
record cc1 "$cc1" -quiet -O2 in.c -o /dev/null
at=800000000,950000000 record stockfish /usr/games/stockfish bench 16 1 12 default depth   # 16 MB hash, 1 thread, depth 12
# a middle-game position out of the opening book, a depth-8 search whatever the clock says (valgrind is slow)
printf 'book off\nst 100000\nsetboard r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 9\ndepth 8\ngo\nquit\n' > chess.in
input=chess.in at=320000000,420000000 record gnuchess /usr/games/gnuchess -q -M 1     # 1 MB hash
