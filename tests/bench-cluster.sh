#!/usr/bin/env bash
# Side-by-side benchmark of the cluster against the embedded default, alternating the two
# (this machine's speed drifts; only pairs taken together compare).
#
#   tests/bench-cluster.sh twophase INPUT [PAIRS]
#       INPUT through a coordinator and two single-thread workers on loopback, against
#       `solve --threads 2`; prints positions/s of each run.
#   tests/bench-cluster.sh memory SCRAMBLE TABLE [ROUNDS]
#       the worker's --memory modes side by side: two single-thread workers and one
#       two-thread worker, each with mapped tables and with huge-page copies; prints the
#       time to ready, the scramble's wall time and the workers' resident memory (private
#       and file-backed, summed over the workers: the file pages are one shared copy).
#   tests/bench-cluster.sh optimal SCRAMBLE TABLE [PAIRS]
#       one scramble over two single-thread workers against `solve --threads 2`; prints
#       wall time and total nodes of each run.
#
# Uses target/release/cubeswarm (build it first: cargo build --release) and the tables of
# $CUBESWARM_TABLES.
set -euo pipefail
BIN=${BIN:-target/release/cubeswarm}
WORKER_MEMORY=${WORKER_MEMORY:-huge-pages} # the workers' --memory in the twophase and optimal modes
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
    "$BIN" worker --coordinator "http://$ADDR" --threads 1 --table "$1" --memory "$WORKER_MEMORY" \
      2>"$WORK/w$w.log" &
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
    # Odd pairs run the local solver first, even pairs the cluster first.
    for side in $( [ $((i % 2)) = 1 ] && echo "local cluster" || echo "cluster local"); do
      t0=$(now)
      if [ "$side" = local ]; then
        "$BIN" solve --method twophase --threads 2 --input "$INPUT" --output "$WORK/local.txt" --quiet
      else
        "$BIN" solve --coordinator "http://$ADDR" --method twophase --input "$INPUT" --output "$WORK/cluster.txt" --quiet
      fi
      t1=$(now)
      eval "T_$side=\$(awk -v a=\"$t0\" -v b=\"$t1\" 'BEGIN { print b - a }')"
    done
    cmp -s "$WORK/local.txt" "$WORK/cluster.txt" || { echo "outputs differ"; exit 1; }
    awk -v n="$N" -v l="$T_local" -v c="$T_cluster" -v i="$i" 'BEGIN {
      printf "pair %d: local %.0f positions/s, cluster %.0f positions/s, ratio %.3f\n", i, n / l, n / c, l / c }'
  done
  ;;
optimal)
  SCRAMBLE=${2:?scramble}
  TABLE=${3:?table}
  PAIRS=${4:-2}
  start_cluster "$TABLE"
  for i in $(seq 1 "$PAIRS"); do
    # Odd pairs run the local solver first, even pairs the cluster first.
    for side in $( [ $((i % 2)) = 1 ] && echo "local cluster" || echo "cluster local"); do
      t0=$(now)
      if [ "$side" = local ]; then
        L=$("$BIN" solve --table "$TABLE" --threads 2 --format jsonl --quiet "$SCRAMBLE")
      else
        C=$("$BIN" solve --coordinator "http://$ADDR" --table "$TABLE" --format jsonl --quiet "$SCRAMBLE")
      fi
      t1=$(now)
      eval "T_$side=\$(awk -v a=\"$t0\" -v b=\"$t1\" 'BEGIN { print b - a }')"
    done
    ln=$(echo "$L" | grep -o '"nodes":[0-9]*' | cut -d: -f2)
    cn=$(echo "$C" | grep -o '"nodes":[0-9]*' | cut -d: -f2)
    [ "$(echo "$L" | grep -o '"length":[0-9]*')" = "$(echo "$C" | grep -o '"length":[0-9]*')" ] ||
      { echo "solution lengths differ: $L / $C"; exit 1; }
    awk -v l="$T_local" -v c="$T_cluster" -v ln="$ln" -v cn="$cn" -v i="$i" 'BEGIN {
      printf "pair %d: local %.2f s %.0f nodes, cluster %.2f s %.0f nodes; time ratio %.3f, node ratio %.3f\n",
        i, l, ln, c, cn, c / l, cn / ln }'
  done
  ;;
memory)
  SCRAMBLE=${2:?scramble}
  TABLE=${3:?table}
  ROUNDS=${4:-1}
  "$BIN" coordinator --listen 127.0.0.1:0 2>"$WORK/c.log" &
  PIDS+=($!)
  for _ in $(seq 1 100); do grep -q "grpc listening on" "$WORK/c.log" && break; sleep 0.1; done
  ADDR=$(grep -o "grpc listening on [0-9.:]*" "$WORK/c.log" | awk '{print $4}')
  kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$2/status"; }
  for r in $(seq 1 "$ROUNDS"); do
    modes=$( [ $((r % 2)) = 1 ] && echo "mapped huge-pages" || echo "huge-pages mapped")
    for layout in 2x1 1x2; do
      for mem in $modes; do
        n=${layout%x*}; t=${layout#*x}; WP=()
        t0=$(now)
        for w in $(seq 1 "$n"); do
          "$BIN" worker --coordinator "http://$ADDR" --threads "$t" --table "$TABLE" --memory "$mem" \
            2>"$WORK/m$w.log" &
          WP+=($!)
        done
        for w in $(seq 1 "$n"); do
          for _ in $(seq 1 3000); do grep -q "connected to coordinator" "$WORK/m$w.log" && break; sleep 0.05; done
        done
        t1=$(now)
        "$BIN" solve --coordinator "http://$ADDR" --table "$TABLE" --quiet "$SCRAMBLE" >/dev/null
        t2=$(now)
        anon=0; file=0
        for p in "${WP[@]}"; do
          anon=$((anon + $(kb RssAnon "$p"))); file=$((file + $(kb RssFile "$p")))
        done
        for p in "${WP[@]}"; do kill -TERM "$p"; done
        for p in "${WP[@]}"; do wait "$p" || true; done
        awk -v l="$layout" -v m="$mem" -v a="$t0" -v b="$t1" -v c="$t2" -v an="$anon" -v fi="$file" 'BEGIN {
          printf "%s workers x threads, %-10s: ready %.2f s, solve %.2f s, RSS private %.0f MiB, file-backed %.0f MiB\n",
            l, m, b - a, c - b, an / 1024, fi / 1024 }'
      done
    done
  done
  ;;
*) echo "unknown mode $MODE"; exit 2 ;;
esac
