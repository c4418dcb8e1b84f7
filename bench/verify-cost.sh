#!/usr/bin/env bash
# What checking workers' claims costs on an honest loopback cluster: the same positions
# solved through OLD's and NEW's coordinator and workers, alternating, ROUNDS times each.
# Prints, per run, the search's nodes (`cubeswarm_nodes_total`), the checks' nodes
# (`cubeswarm_check_nodes_total`; 0 on a build without checks), the claims checked and the
# wall time; then NEW's (search + check) nodes over OLD's search nodes, and NEW's checks'
# share of its own nodes.
#
#   bench/verify-cost.sh OLD NEW TABLES TABLE POSITIONS WORKERS THREADS [ROUNDS] [FLAGS...]
#
# POSITIONS: a file of scrambles (one a line); FLAGS go to `solve` (e.g. --all).
# e.g. bench/verify-cost.sh /tmp/base/target/release/cubeswarm target/release/cubeswarm \
#        target/test-tables h48h0k4 /work/shared/data/positions/optimal-depth15.txt 3 1 2
set -euo pipefail
usage='usage: bench/verify-cost.sh OLD NEW TABLES TABLE POSITIONS WORKERS THREADS [ROUNDS] [FLAGS...]'
OLD=$(realpath "${1:?$usage}")
NEW=$(realpath "${2:?$usage}")
TABLES=$(realpath "${3:?$usage}")
TABLE=${4:?$usage}
POSITIONS=$(realpath "${5:?$usage}")
WORKERS=${6:?$usage}
THREADS=${7:?$usage}
ROUNDS=${8:-2}
shift $(( $# < 8 ? $# : 8 ))
FLAGS=("$@")
WORK=$(mktemp -d)
PIDS=()
stop_all() {
    for p in "${PIDS[@]:-}"; do kill -9 "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    PIDS=()
}
trap 'stop_all; rm -rf "$WORK"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
metric() { # addr name
    python3 - "$1" "$2" <<'PY'
import sys, urllib.request
text = urllib.request.urlopen(f"http://{sys.argv[1]}/metrics").read().decode()
for l in text.splitlines():
    if l.startswith(sys.argv[2] + " "):
        print(l.split()[1]); break
else:
    print(0)
PY
}
run() { # binary label
    local bin=$1 port mport url
    port=$(free_port); mport=$(free_port); url=http://127.0.0.1:$port
    "$bin" --tables-dir "$TABLES" coordinator --listen "127.0.0.1:$port" \
        --metrics-listen "127.0.0.1:$mport" > "$WORK/co.log" 2>&1 &
    PIDS+=($!)
    for i in $(seq "$WORKERS"); do
        "$bin" --tables-dir "$TABLES" worker --coordinator "$url" --threads "$THREADS" \
            --table "$TABLE" --worker-id "w$i" > "$WORK/w$i.log" 2>&1 &
        PIDS+=($!)
    done
    for _ in $(seq 600); do
        [ "$(grep -c 'worker joined' "$WORK/co.log")" -ge "$WORKERS" ] && break
        sleep 0.1
    done
    local start end
    start=$(date +%s.%N)
    "$bin" solve --coordinator "$url" --table "$TABLE" --quiet --format jsonl \
        --input "$POSITIONS" "${FLAGS[@]}" > "$WORK/out.jsonl" 2> "$WORK/client.err"
    end=$(date +%s.%N)
    local nodes checks checked
    nodes=$(metric "127.0.0.1:$mport" cubeswarm_nodes_total)
    checks=$(metric "127.0.0.1:$mport" cubeswarm_check_nodes_total)
    checked=$(metric "127.0.0.1:$mport" cubeswarm_claims_checked_total)
    stop_all
    local lengths
    lengths=$(python3 -c 'import json,sys; print(",".join(str(json.loads(l).get("length")) for l in open(sys.argv[1])))' "$WORK/out.jsonl")
    echo "$2 $nodes $checks $checked $(echo "$end - $start" | bc) $lengths"
}
echo "# build search_nodes check_nodes claims_checked wall_s lengths"
for r in $(seq "$ROUNDS"); do
    run "$OLD" old
    run "$NEW" new
done | tee "$WORK/runs.txt"
awk '$1=="old" {on+=$2; o++} $1=="new" {nn+=$2; nc+=$3; n++}
     END {printf "new (search + check) / old search nodes: %.4f; checks: %.2f%% of new nodes\n",
          (nn+nc)/n/(on/o), 100*nc/(nn+nc)}' "$WORK/runs.txt"
