#!/usr/bin/env bash
# One optimal position split over a loopback cluster while a worker dies: a coordinator
# and two single-thread workers; worker a is SIGKILLed KILL_AT seconds into the solve and a
# new worker joins 3 s later. The record must equal the embedded run's (same length, same
# optimal flag, same solution), and the coordinator must have put the dead worker's jobs
# back on the queue.
#
#   bench/kill-split.sh BIN TABLES TABLE "SCRAMBLE" [KILL_AT]
#
# e.g. bench/kill-split.sh target/release/cubeswarm /tmp/t h48h2k2 \
#        "B2 L' D F' L U' R' D' L F2 U2 D' L2 B2 U' F2 D2 B2 D2" 8
set -euo pipefail
usage='usage: bench/kill-split.sh BIN TABLES TABLE "SCRAMBLE" [KILL_AT]'
BIN=$(realpath "${1:?$usage}")
TABLES=$(realpath "${2:?$usage}")
TABLE=${3:?$usage}
POS=${4:?$usage}
KILL_AT=${5:-8}
WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port
field() { python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); print(r.get(sys.argv[2]))' "$1" "$2"; }

"$BIN" --tables-dir "$TABLES" solve --table "$TABLE" --all --threads 2 --format jsonl "$POS" \
    > "$WORK/embedded.jsonl" 2> /dev/null
"$BIN" --tables-dir "$TABLES" coordinator --listen "127.0.0.1:$port" > "$WORK/co.log" 2>&1 &
PIDS+=($!)
worker() { # id
    "$BIN" --tables-dir "$TABLES" worker --coordinator "$url" --threads 1 --worker-id "$1" \
        > "$WORK/$1.log" 2>&1 &
    PIDS+=($!)
}
worker a
A=$!
worker b
for _ in $(seq 100); do [ "$(grep -c 'worker joined' "$WORK/co.log")" -ge 2 ] && break; sleep 0.1; done
start=$(date +%s.%N)
"$BIN" solve --coordinator "$url" --table "$TABLE" --all --format jsonl "$POS" \
    > "$WORK/cluster.jsonl" 2> "$WORK/client.err" &
CL=$!
sleep "$KILL_AT"
kill -9 "$A"
sleep 3
worker a2
wait "$CL"
wall=$(printf %.2f "$(echo "$(date +%s.%N) - $start" | bc)")
grep -qE 'worker left; its jobs go back to the queue executor=[0-9]+ worker=a$' "$WORK/co.log" ||
    { echo "FAIL: the coordinator did not see worker a leave" >&2; grep -v checking "$WORK/co.log" >&2; exit 1; }
for f in length optimal solution; do
    e=$(field "$WORK/embedded.jsonl" "$f")
    c=$(field "$WORK/cluster.jsonl" "$f")
    [ "$e" = "$c" ] || { echo "FAIL: $f: embedded $e, cluster $c" >&2; exit 1; }
done
echo "ok: $(field "$WORK/cluster.jsonl" length) moves, optimal $(field "$WORK/cluster.jsonl" optimal), the embedded run's solution; cluster ${wall} s, $(field "$WORK/cluster.jsonl" nodes) nodes (embedded $(field "$WORK/embedded.jsonl" millis) ms, $(field "$WORK/embedded.jsonl" nodes) nodes); worker a killed at ${KILL_AT} s, a2 joined 3 s later"
