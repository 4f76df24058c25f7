#!/bin/sh
# Record the TPC-W workloads of Foglia, Giorgi & Prete (2004) on this machine:
# Apache (prefork, mod_php) + PostgreSQL + UNIX utilities under valgrind lackey.
#   sh data/traces/record-tpcw.sh DIR [EXCERPTS]
# DIR gets one .npz per process and ec-server.toml, db.toml, web-server.toml;
# EXCERPTS (e.g. data/traces/tpcw) the first 40,000 references of each process.
set -eu
dir=${1:?usage: record-tpcw.sh DIR [EXCERPTS]}
if [ "$(id -u)" = 0 ]; then
    apt-get install -y -qq apache2 libapache2-mod-php php-pgsql postgresql valgrind >/dev/null
fi
pip install --quiet -e ".[postgres]"
if [ $# -ge 2 ]; then
    mva trace tpcw -o "$dir" --excerpts "$2" --force
else
    mva trace tpcw -o "$dir" --force
fi
