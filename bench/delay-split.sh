#!/usr/bin/env bash
# One hard position solved by a real cluster whose links are delayed, beside the replay of
# the same layout (issue 51's check that `bench split` is honest).
#
#   bench/delay-split.sh BINARY TABLES_DIR TABLE "SCRAMBLE" WORKERS THREADS LATENCY_MS [ROUNDS]
#
# Records the position's search once on the embedded default (`solve --trace`, WORKERS x
# THREADS threads). Then a coordinator and WORKERS workers of THREADS threads, real
# processes on loopback, the workers connected through bench/delay-proxy.py, which holds
# everything LATENCY_MS each way (`bench split --latency`'s one-way latency); the client
# solves the position through them ROUNDS times (default 1). Prints, per round, the real
# wall time and nodes beside the replay's of the recorded trace at the same layout and
# latency, at the recording's node rate and at the run's own. Every optimal solution is asked for (`--all`), so
# the nodes do not depend on which job happens to find the first solution; FIRST=1 asks for
# the first only.
#
# Why a proxy and not `tc netem`: this machine's kernel has no netem qdisc
# (CONFIG_NET_SCH_NETEM is not set: `zcat /proc/config.gz | grep NETEM`).
set -euo pipefail

usage="usage: bench/delay-split.sh BINARY TABLES_DIR TABLE SCRAMBLE WORKERS THREADS LATENCY_MS [ROUNDS]"
BIN=$(realpath "${1:?$usage}")
TABLES=$(realpath "${2:?$usage}")
TABLE=${3:?$usage}
SCRAMBLE=${4:?$usage}
WORKERS=${5:?$usage}
THREADS=${6:?$usage}
LAT=${7:?$usage}
ROUNDS=${8:-1}
HERE=$(dirname "$(realpath "$0")")
ALL=(--all)
if [ "${FIRST:-0}" = 1 ]; then ALL=(); fi

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

export CUBESWARM_TABLES=$TABLES
TRACE=$WORK/trace.jsonl.gz
echo "delay-split: recording the search embedded ($((WORKERS * THREADS)) threads, $TABLE)"
"$BIN" solve --table "$TABLE" --threads $((WORKERS * THREADS)) --trace "$TRACE" --quiet \
  --format jsonl "${ALL[@]}" "$SCRAMBLE" >"$WORK/embedded.jsonl"
echo "embedded: $(cut -c1-300 "$WORK/embedded.jsonl")"

CPORT=$(free_port)
MPORT=$(free_port)
"$BIN" coordinator --listen "127.0.0.1:$CPORT" --metrics-listen "127.0.0.1:$MPORT" 2>"$WORK/c.log" &
PIDS+=($!)
for _ in $(seq 1 300); do grep -q "grpc listening" "$WORK/c.log" && break; sleep 0.1; done
PPORT=$(free_port)
python3 "$HERE/delay-proxy.py" "$PPORT" "$CPORT" "$LAT" >"$WORK/proxy.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do grep -q "delay-proxy" "$WORK/proxy.log" && break; sleep 0.1; done
for k in $(seq 1 "$WORKERS"); do
  "$BIN" worker --coordinator "http://127.0.0.1:$PPORT" --threads "$THREADS" --table "$TABLE" \
    2>"$WORK/w$k.log" &
  PIDS+=($!)
done
for k in $(seq 1 "$WORKERS"); do
  for _ in $(seq 1 600); do grep -q "connected to coordinator" "$WORK/w$k.log" && break; sleep 0.2; done
  grep -q "connected to coordinator" "$WORK/w$k.log" || { echo "worker $k did not connect"; cat "$WORK/w$k.log"; exit 1; }
done

replay=$("$BIN" bench split --trace "$TRACE" --workers "$WORKERS" --threads "$THREADS" --latency "$LAT" "${ALL[@]}")
rwall=$(echo "$replay" | awk '/^wall/ {print $2}')
rnodes=$(echo "$replay" | awk '/^nodes/ {print $2}')
rearly=$(echo "$replay" | awk '/^nodes/ {for (i = 1; i <= NF; i++) if ($i == "early") print $(i + 1)}' | tr -d ,)
# A counter of the coordinator's /metrics.
metric() {
  python3 -c 'import sys, urllib.request
text = urllib.request.urlopen("http://127.0.0.1:" + sys.argv[1] + "/metrics").read().decode()
print(next((l.split()[1] for l in text.splitlines() if l.startswith(sys.argv[2] + " ")), 0))' "$MPORT" "$1"
}
for r in $(seq 1 "$ROUNDS"); do
  early0=$(metric cubeswarm_nodes_started_early_total)
  splits0=$(metric cubeswarm_splits_total)
  start=$(date +%s.%N)
  "$BIN" solve --coordinator "http://127.0.0.1:$CPORT" --table "$TABLE" --quiet --format jsonl \
    "${ALL[@]}" "$SCRAMBLE" >"$WORK/real.jsonl" 2>"$WORK/client.log" || { cat "$WORK/client.log"; exit 1; }
  end=$(date +%s.%N)
  real_nodes=$(grep -o '"nodes":[0-9]*' "$WORK/real.jsonl" | cut -d: -f2)
  real_s=$(echo "$end - $start" | bc -l)
  # The replay again at this run's own rate a thread (the cores are shared with the
  # coordinator, the proxy and the client: a worker thread runs slower than embedded).
  own=$(echo "$real_nodes / ($real_s * $WORKERS * $THREADS)" | bc -l)
  owall=$("$BIN" bench split --trace "$TRACE" --workers "$WORKERS" --threads "$THREADS" \
    --latency "$LAT" --rate "$own" "${ALL[@]}" | awk '/^wall/ {print $2}')
  early=$(($(metric cubeswarm_nodes_started_early_total) - early0))
  splits=$(($(metric cubeswarm_splits_total) - splits0))
  printf 'round %d: %d x %d threads, %s ms: real %.3f s, %.4e nodes (%.3e started early, %d split); replay %s s (%s s at the run'"'"'s %.3g nodes/s a thread), %s nodes (%s started early)\n' \
    "$r" "$WORKERS" "$THREADS" "$LAT" "$real_s" "$real_nodes" "$early" "$splits" \
    "$rwall" "$owall" "$own" "$rnodes" "$rearly"
done
echo "real: $(cut -c1-300 "$WORK/real.jsonl")"
echo "replay:"
echo "$replay" | sed 's/^/  /'
