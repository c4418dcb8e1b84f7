#!/usr/bin/env bash
# Side-by-side benchmark of the cluster against the embedded default, alternating the two
# (this machine's speed drifts; only pairs taken together compare).
#
#   tests/bench-cluster.sh twophase INPUT [PAIRS]
#       INPUT through a coordinator and two single-thread workers on loopback, against
#       `solve --threads 2`; prints positions/s of each run.
#   tests/bench-cluster.sh optimal SCRAMBLE TABLE [PAIRS]
#       one scramble over two single-thread workers against `solve --threads 2`; prints
#       wall time and total nodes of each run.
#
# Uses target/release/cubeswarm (build it first: cargo build --release) and the tables of
# $CUBESWARM_TABLES.
set -euo pipefail
BIN=${BIN:-target/release/cubeswarm}
MODE=${1:?usage: see the header of this script}
WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

start_cluster() { # $1 = table
  "$BIN" coordinator --listen 127.0.0.1:0 2>"$WORK/c.log" &
  PIDS+=($!)
  for _ in $(seq 1 100); do grep -q "grpc listening on" "$WORK/c.log" && break; sleep 0.1; done
  ADDR=$(grep -o "grpc listening on [0-9.:]*" "$WORK/c.log" | awk '{print $4}')
  for w in 1 2; do
    "$BIN" worker --coordinator "http://$ADDR" --threads 1 --table "$1" 2>"$WORK/w$w.log" &
    PIDS+=($!)
  done
  for w in 1 2; do
    for _ in $(seq 1 600); do grep -q "connected to coordinator" "$WORK/w$w.log" && break; sleep 0.1; done
  done
}

now() { date +%s.%N; }

case "$MODE" in
twophase)
  INPUT=${2:?input file}
  PAIRS=${3:-3}
  N=$(grep -cv '^\s*\(#.*\)\?$' "$INPUT")
  start_cluster twophase
  for i in $(seq 1 "$PAIRS"); do
    t0=$(now)
    "$BIN" solve --method twophase --threads 2 --input "$INPUT" --output "$WORK/local.txt" --quiet
    t1=$(now)
    "$BIN" solve --coordinator "http://$ADDR" --method twophase --input "$INPUT" --output "$WORK/cluster.txt" --quiet
    t2=$(now)
    cmp -s "$WORK/local.txt" "$WORK/cluster.txt" || { echo "outputs differ"; exit 1; }
    awk -v n="$N" -v a="$t0" -v b="$t1" -v c="$t2" -v i="$i" 'BEGIN {
      l = n / (b - a); k = n / (c - b);
      printf "pair %d: local %.0f positions/s, cluster %.0f positions/s, ratio %.3f\n", i, l, k, k / l }'
  done
  ;;
optimal)
  SCRAMBLE=${2:?scramble}
  TABLE=${3:?table}
  PAIRS=${4:-2}
  start_cluster "$TABLE"
  for i in $(seq 1 "$PAIRS"); do
    t0=$(now)
    L=$("$BIN" solve --table "$TABLE" --threads 2 --format jsonl --quiet "$SCRAMBLE")
    t1=$(now)
    C=$("$BIN" solve --coordinator "http://$ADDR" --table "$TABLE" --format jsonl --quiet "$SCRAMBLE")
    t2=$(now)
    ln=$(echo "$L" | grep -o '"nodes":[0-9]*' | cut -d: -f2)
    cn=$(echo "$C" | grep -o '"nodes":[0-9]*' | cut -d: -f2)
    awk -v a="$t0" -v b="$t1" -v c="$t2" -v ln="$ln" -v cn="$cn" -v i="$i" 'BEGIN {
      printf "pair %d: local %.2f s %d nodes, cluster %.2f s %d nodes; time ratio %.3f, node ratio %.3f\n",
        i, b - a, ln, c - b, cn, (c - b) / (b - a), cn / ln }'
  done
  ;;
*) echo "unknown mode $MODE"; exit 2 ;;
esac
