#!/usr/bin/env bash
# Two cubeswarm binaries side by side (before and after a change), alternating which runs
# first in each round: this machine's speed drifts, so only figures taken together compare.
#
#   tests/bench-ab.sh OLD NEW twophase INPUT [ROUNDS]
#       INPUT through each binary's own coordinator and two single-thread workers on
#       loopback; positions/s of each (outputs must be equal).
#   tests/bench-ab.sh OLD NEW optimal SCRAMBLE TABLE [ROUNDS]
#       one scramble over each binary's two single-thread workers; wall time and nodes.
#   tests/bench-ab.sh OLD NEW coordinator [LINES] [ROUNDS]
#       `bench coordinator --workers 1000 --lines LINES` of each (simulated executors).
#
# Tables come from $CUBESWARM_TABLES. Worker memory: $WORKER_MEMORY (default huge-pages).
set -euo pipefail
OLD=${1:?old binary}
NEW=${2:?new binary}
MODE=${3:?mode}
WORKER_MEMORY=${WORKER_MEMORY:-huge-pages}
WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
now() { date +%s.%N; }

cluster() { # $1 = name (old|new), $2 = binary, $3 = table; sets ADDR_<name>
  "$2" coordinator --listen 127.0.0.1:0 2>"$WORK/$1-c.log" &
  PIDS+=($!)
  for _ in $(seq 1 100); do grep -q "grpc listening on" "$WORK/$1-c.log" && break; sleep 0.1; done
  local addr
  addr=$(grep -o "grpc listening on [0-9.:]*" "$WORK/$1-c.log" | awk '{print $4}')
  for w in 1 2; do
    "$2" worker --coordinator "http://$addr" --threads 1 --table "$3" --memory "$WORKER_MEMORY" \
      2>"$WORK/$1-w$w.log" &
    PIDS+=($!)
  done
  for w in 1 2; do
    for _ in $(seq 1 600); do grep -q "connected to coordinator" "$WORK/$1-w$w.log" && break; sleep 0.1; done
  done
  eval "ADDR_$1=$addr"
}

order() { [ $(($1 % 2)) = 1 ] && echo "old new" || echo "new old"; }
bin_of() { [ "$1" = old ] && echo "$OLD" || echo "$NEW"; }

case "$MODE" in
twophase)
  INPUT=${4:?input file}
  ROUNDS=${5:-3}
  N=$(grep -cv '^\s*\(#.*\)\?$' "$INPUT")
  cluster old "$OLD" twophase
  cluster new "$NEW" twophase
  for i in $(seq 1 "$ROUNDS"); do
    for side in $(order "$i"); do
      eval "addr=\$ADDR_$side"
      t0=$(now)
      "$(bin_of "$side")" solve --coordinator "http://$addr" --method twophase --input "$INPUT" \
        --output "$WORK/$side.txt" --quiet || true
      t1=$(now)
      eval "T_$side=\$(awk -v a=\"$t0\" -v b=\"$t1\" 'BEGIN { print b - a }')"
    done
    cmp -s "$WORK/old.txt" "$WORK/new.txt" || { echo "outputs differ"; exit 1; }
    awk -v n="$N" -v o="$T_old" -v w="$T_new" -v i="$i" 'BEGIN {
      printf "round %d: old %.0f positions/s, new %.0f positions/s, new/old %.3f\n", i, n / o, n / w, o / w }'
  done
  ;;
optimal)
  SCRAMBLE=${4:?scramble}
  TABLE=${5:?table}
  ROUNDS=${6:-2}
  cluster old "$OLD" "$TABLE"
  cluster new "$NEW" "$TABLE"
  for i in $(seq 1 "$ROUNDS"); do
    for side in $(order "$i"); do
      eval "addr=\$ADDR_$side"
      t0=$(now)
      out=$("$(bin_of "$side")" solve --coordinator "http://$addr" --table "$TABLE" --format jsonl --quiet "$SCRAMBLE")
      t1=$(now)
      eval "T_$side=\$(awk -v a=\"$t0\" -v b=\"$t1\" 'BEGIN { print b - a }')"
      eval "N_$side=$(echo "$out" | grep -o '"nodes":[0-9]*' | cut -d: -f2)"
    done
    awk -v o="$T_old" -v w="$T_new" -v on="$N_old" -v wn="$N_new" -v i="$i" 'BEGIN {
      printf "round %d: old %.2f s %.0f nodes, new %.2f s %.0f nodes; time new/old %.3f, nodes new/old %.3f\n",
        i, o, on, w, wn, w / o, wn / on }'
  done
  ;;
coordinator)
  LINES=${4:-1000000}
  ROUNDS=${5:-3}
  for i in $(seq 1 "$ROUNDS"); do
    for side in $(order "$i"); do
      r=$("$(bin_of "$side")" bench coordinator --workers 1000 --lines "$LINES" 2>&1 |
        awk '/throughput/ { t = $2 } /driver thread/ { c = $6 } /peak RSS/ { m = $3 }
             END { printf "%s positions/s, %s per driver CPU-second, peak RSS %s MiB", t, substr(c, 2), m }')
      echo "round $i: $side $r"
    done
  done
  ;;
*) echo "unknown mode $MODE"; exit 2 ;;
esac
