#!/usr/bin/env bash
# Real runs of a trace's position against its replay (issue 23, item 4).
#
#   bench/real-vs-replay.sh TRACE [TABLE]
#
# Solves the position of TRACE (a `cubeswarm solve --trace` file) for real: embedded on 1
# and 2 threads, then on a loopback cluster of 2 and 4 single-thread workers; then
# replays the trace in the same configurations (`bench split`, 0.1 ms latency), at the
# per-thread node rate of the real one-thread run and at each run's own rate. Prints one
# line per run: wall seconds (the solver's own time) and nodes.
#
# Environment: CUBESWARM (binary, default target/release/cubeswarm), CUBESWARM_TABLES
# (tables directory holding TABLE, default h48h5k2), PORT (first port, default 7460).
set -euo pipefail
trace=${1:?usage: bench/real-vs-replay.sh TRACE [TABLE]}
table=${2:-h48h5k2}
bin=${CUBESWARM:-target/release/cubeswarm}
port=${PORT:-7460}
tables=${CUBESWARM_TABLES:?set CUBESWARM_TABLES to the directory holding $table}
pos=$(python3 -c 'import gzip,json,sys
f = gzip.open(sys.argv[1], "rt") if sys.argv[1].endswith(".gz") else open(sys.argv[1])
print(json.loads(f.readline())["position"])' "$trace")
logs=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$logs"
}
trap cleanup EXIT

# "millis nodes" of one solve's JSON line.
fields() { python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["millis"]/1000, r["nodes"])'; }

real() { # label, solve args...
    local label=$1
    shift
    local out
    out=$("$bin" solve "$@" --table "$table" --format jsonl "$pos" 2>/dev/null | fields)
    echo "real   $label: $out"
    echo "$label $out" >>"$logs/real"
}

real "1x1" --threads 1
real "1x2" --threads 2
for n in 2 4; do
    p=$((port + n))
    "$bin" coordinator --listen "127.0.0.1:$p" --tables-dir "$tables" >"$logs/coord$n" 2>&1 &
    pids+=($!)
    sleep 1
    for i in $(seq "$n"); do
        "$bin" worker --coordinator "http://127.0.0.1:$p" --threads 1 --table "$table" \
            --tables-dir "$tables" >"$logs/w$n-$i" 2>&1 &
        pids+=($!)
    done
    real "${n}x1" --coordinator "http://127.0.0.1:$p" --wait-for-workers 60
    for q in "${pids[@]}"; do kill "$q" 2>/dev/null || true; done
    wait 2>/dev/null || true
    pids=()
done

# The per-thread rate of the one-thread run, and of each run.
read -r s1 n1 < <(awk '$1 == "1x1" {print $2, $3}' "$logs/real")
rate1=$(python3 -c "print($n1 / $s1)")
replay() { # label workers threads queue-ahead rate
    local out
    out=$("$bin" bench split --trace "$trace" --workers "$2" --threads "$3" \
        --queue-ahead "$4" --rate "$5" --latency 0.1)
    echo "replay $1 at $(printf '%.4g' "$5") nodes/s per thread: $(echo "$out" | awk '/^wall/ {print $2} /^nodes/ {print $2}' | tr '\n' ' ')"
}
while read -r label s n; do
    case $label in
    1x1) w=1 t=1 q=0 ;;
    1x2) w=1 t=2 q=0 ;;
    2x1) w=2 t=1 q=1 ;;
    4x1) w=4 t=1 q=1 ;;
    esac
    # More threads than cores: each gets its share of a core.
    replay "$label" "$w" "$t" "$q" "$(python3 -c "print($rate1 / max(1, $w * $t / $(nproc)))")"
    replay "$label" "$w" "$t" "$q" "$(python3 -c "print($n / ($s * $w * $t))")"
done <"$logs/real"
