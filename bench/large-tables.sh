#!/usr/bin/env bash
# The large H48 tables on one machine: build time and peak memory per table and base, the
# build's scaling over threads, the optimal search of each table on the positions of known
# optimal length, the search's scaling over threads, and a loopback fetch of a table.
# Written for a machine with many cores and the memory of h48h9k2 or larger; it runs
# anywhere with small tables (see the example below).
#
#   bench/large-tables.sh CUBESWARM DIR POSITIONS_DIR
#
#   CUBESWARM      a cubeswarm binary (release build)
#   DIR            a scratch directory on a disk that holds the tables (it is created;
#                  cocsep and h48h0k4 are built there first if missing)
#   POSITIONS_DIR  the directory of optimal-depthL.txt (../shared/data/positions)
#
# Environment (defaults in brackets):
#   BUILDS   tables to build, each NAME or NAME:BASE [h48h7k2 h48h9k2:9]; NAME:BASE goes to
#            DIR/NAME-bBASE/ (hard links to cocsep and h48h0k4 beside it), NAME to DIR/;
#            one already there is kept, not timed again
#   BUILD_THREADS  thread counts to time each build at, the first kept [nproc]; a build at
#            another count is written to a scratch directory, compared byte for byte with
#            the kept one, and removed
#   SEARCH   tables to search, NAME or NAME:BASE as in BUILDS [the tables of BUILDS]
#   LENGTHS  optimal lengths and how many positions of each, LEN:COUNT [15:6 16:6 17:6 18:6 19:4]
#   THREADS  search threads [nproc]
#   SCALE    "NAME[:BASE] LEN COUNT T1 T2 ...": one table's search over thread counts [none]
#   FETCH    NAME[:BASE] of a table to fetch over loopback from a coordinator serving it [none]
#
# Each search runs `cubeswarm bench optimal` once per table and length, the tables taking
# turns at running first from one length to the next. Wall time and peak RSS (VmHWM, read
# every 0.5 s; n/a for a command that ends before the first reading) are printed for every
# command as "TIMED ...".
#
# Example on 2 cores, small tables (a few minutes):
#   BUILDS="h48h2k2 h48h2k2:7" LENGTHS="15:2 16:2" SCALE="h48h2k2 16 2 1 2" FETCH=h48h2k2 \
#     bench/large-tables.sh target/release/cubeswarm /tmp/lt ../shared/data/positions
set -u
if [ $# -ne 3 ]; then sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
CS=$(realpath "$1"); DIR=$2; POS=$(realpath "$3")
mkdir -p "$DIR" && DIR=$(realpath "$DIR")
NPROC=$(nproc)
BUILDS=${BUILDS:-h48h7k2 h48h9k2:9}
BUILD_THREADS=${BUILD_THREADS:-$NPROC}
SEARCH=${SEARCH:-$BUILDS}
LENGTHS=${LENGTHS:-15:6 16:6 17:6 18:6 19:4}
THREADS=${THREADS:-$NPROC}
SCALE=${SCALE:-}
FETCH=${FETCH:-}

# timed CMD...: runs CMD, its output to stdout, then one TIMED line.
timed() {
    local t0 pid hwm=0 h rc
    t0=$(date +%s.%N)
    "$@" &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        h=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null)
        [ -n "$h" ] && hwm=$h
        sleep 0.5
    done
    wait "$pid"; rc=$?
    echo "TIMED rc=$rc wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s" \
        "peak_rss=$(awk -v k="$hwm" 'BEGIN {if (k > 0) printf "%.2f GB", k / 1048576; else printf "n/a"}') RAYON_NUM_THREADS=${RAYON_NUM_THREADS:-unset} ::" \
        "${1##*/} ${*:2}"
    return $rc
}

# dir_of SPEC: the directory of NAME or NAME:BASE (made, with the fallback linked in).
dir_of() {
    case $1 in
        *:*) local d="$DIR/${1%%:*}-b${1##*:}"
             mkdir -p "$d"
             for f in cocsep.tbl h48h0k4.tbl; do [ -e "$d/$f" ] || ln "$DIR/$f" "$d/$f"; done
             echo "$d" ;;
        *) echo "$DIR" ;;
    esac
}

# build SPEC DEST: builds NAME (at BASE) into DEST, quietly but for its last lines.
build() {
    local name=${1%%:*} base=()
    [[ $1 == *:* ]] && base=(--base "${1##*:}")
    timed "$CS" tables build "$name" "${base[@]}" --tables-dir "$2" 2>&1 | tr '\r' '\n' |
        grep -E 'TIMED|^built|resum|rror|refus' | tail -3
}

echo "== machine: $NPROC cores; $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo);" \
    "$(lscpu | sed -n 's/^Model name: *//p' | head -1);" \
    "L3 $(lscpu | sed -n 's/^L3 cache: *//p');" \
    "huge pages $(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
echo "== $("$CS" --version); $(date -u '+%F %T') UTC; load $(cut -d' ' -f1-3 /proc/loadavg)"
timed "$CS" tables build h48h0k4 --tables-dir "$DIR" 2>&1 | grep -E 'TIMED|rror' | tail -2

echo "== builds (threads: $BUILD_THREADS)"
for spec in $BUILDS; do
    dest=$(dir_of "$spec"); name=${spec%%:*}; kept=""
    for th in $BUILD_THREADS; do
        if [ -z "$kept" ]; then
            kept=$dest/$name.tbl
            if [ -e "$kept" ]; then echo "$spec: present in $dest, not rebuilt"; continue; fi
            RAYON_NUM_THREADS=$th build "$spec" "$dest"
        else
            scratch=$DIR/scratch-$th; rm -rf "$scratch"; mkdir -p "$scratch"
            ln "$DIR/cocsep.tbl" "$DIR/h48h0k4.tbl" "$scratch/"
            RAYON_NUM_THREADS=$th build "$spec" "$scratch"
            cmp -s "$scratch/$name.tbl" "$kept" && echo "$spec at $th threads: the same bytes" ||
                echo "$spec at $th threads: DIFFERENT BYTES"
            rm -rf "$scratch"
        fi
    done
    "$CS" tables verify "$name" --tables-dir "$dest" 2>&1 | tail -1
done

search() { # search SPEC LEN COUNT THREADS
    echo "-- ${1} ${2} moves, $3 positions, $4 threads"
    timed "$CS" bench optimal --table "${1%%:*}" --tables-dir "$(dir_of "$1")" --threads "$4" \
        --positions "$POS/optimal-depth$2.txt" --count "$3" 2>&1 | grep -E '^(#|mean|TIMED|error)'
}

echo "== search ($THREADS threads)"
turn=0
for lc in $LENGTHS; do
    specs=($SEARCH)
    if [ $((turn % 2)) = 1 ]; then
        rev=(); for ((i = ${#specs[@]} - 1; i >= 0; i--)); do rev+=("${specs[i]}"); done; specs=("${rev[@]}")
    fi
    for spec in "${specs[@]}"; do search "$spec" "${lc%%:*}" "${lc##*:}" "$THREADS"; done
    turn=$((turn + 1))
done

if [ -n "$SCALE" ]; then
    set -- $SCALE
    spec=$1 len=$2 count=$3; shift 3
    echo "== search over threads: $spec, $count positions of $len moves"
    for th in "$@"; do search "$spec" "$len" "$count" "$th"; done
fi

if [ -n "$FETCH" ]; then
    echo "== fetch $FETCH over loopback"
    src=$(dir_of "$FETCH"); dst=$DIR/fetched; rm -rf "$dst"; mkdir -p "$dst"
    ln "$DIR/cocsep.tbl" "$DIR/h48h0k4.tbl" "$dst/"
    log=$DIR/coordinator.log
    "$CS" coordinator --listen 127.0.0.1:0 --tables-dir "$src" >"$log" 2>&1 &
    cpid=$!
    addr=""
    for _ in $(seq 100); do
        addr=$(sed -n 's/.*grpc listening on \([0-9.:]*\).*/\1/p' "$log" | head -1)
        [ -n "$addr" ] && break; sleep 0.1
    done
    timed "$CS" tables fetch "${FETCH%%:*}" --coordinator "http://$addr" --tables-dir "$dst" 2>&1 |
        grep -E 'TIMED|fetched|checked|rror'
    kill "$cpid"; wait "$cpid" 2>/dev/null
    rm -rf "$dst"
fi
echo "== done $(date -u '+%T') UTC"
