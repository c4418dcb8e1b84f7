#!/usr/bin/env bash
# A fault run, as an operator's worst day would go: a two-phase batch through a loopback
# cluster while its processes are killed, stopped and restarted, hostile connections and a
# damaged table are thrown at it; then every record is checked with an independent cube
# model (bench/check_records.py).
#
#   bench/fault-run.sh BIN TABLES [LINES]
#
# BIN: the cubeswarm binary (target/release/cubeswarm); TABLES: a directory with the
# two-phase tables. LINES random 25-move scrambles (default 150000), one bad line in 2000.
# What happens, in order, while the client runs: a worker SIGKILLed and restarted; a worker
# SIGSTOPped past its lease and continued; the coordinator SIGKILLed and restarted on its
# port; the client SIGKILLed and restarted with --resume; the coordinator SIGSTOPped for 5 s
# and continued; 300 idle connections each to the gRPC and metrics ports, and junk bytes
# to the gRPC port; a worker started on a damaged copy of the tables (it must be refused).
set -euo pipefail
BIN=$(realpath "${1:?binary}")
TABLES=$(realpath "${2:?tables directory}")
LINES=${3:-150000}
HERE=$(dirname "$(realpath "$0")")
WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
say() { echo "[$(date +%T)] $*"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_log() { # file, text, seconds
  for _ in $(seq 1 $(($3 * 10))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "no '$2' in $1 within $3 s" >&2; tail -5 "$1" >&2; return 1
}

python3 - "$WORK/in.txt" "$LINES" <<'EOF'
import random, sys
r = random.Random(38)
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        if i % 2000 == 1999:
            f.write(f"R U X{i}\n")
            continue
        seq, last = [], None
        while len(seq) < 25:
            face = r.choice("URFDLB")
            if face != last:
                seq.append(face + r.choice(["", "2", "'"]))
                last = face
        f.write(" ".join(seq) + "\n")
EOF

GRPC=$(free_port)
METRICS=$(free_port)
URL="http://127.0.0.1:$GRPC"
COORD=()
start_coordinator() {
  "$BIN" coordinator --listen "127.0.0.1:$GRPC" --metrics-listen "127.0.0.1:$METRICS" \
    --lease 3 --heartbeat 0.5 --tables-dir "$TABLES" 2>>"$WORK/coordinator.log" &
  COORD=($!)
  PIDS+=($!)
  wait_log "$WORK/coordinator.log" "grpc listening on" 30
}
declare -A WORKER
start_worker() { # name
  "$BIN" worker --coordinator "$URL" --threads 1 --table twophase --tables-dir "$TABLES" \
    2>>"$WORK/$1.log" &
  WORKER[$1]=$!
  PIDS+=($!)
}
CLIENT=()
start_client() { # extra flags
  "$BIN" solve --coordinator "$URL" --method twophase --input "$WORK/in.txt" \
    --output "$WORK/out.txt" --quiet "$@" 2>>"$WORK/client.log" &
  CLIENT=($!)
  PIDS+=($!)
}
metric() { curl -s --max-time 5 "http://127.0.0.1:$METRICS/metrics" | awk -v m="$1" '$1==m {print $2}'; }

start_coordinator
for w in w1 w2 w3; do start_worker $w; done
for w in w1 w2 w3; do wait_log "$WORK/$w.log" "connected to coordinator" 120; done
T0=$(date +%s)
say "cluster up; client starts on $LINES lines"
start_client

sleep 3; say "worker w1 SIGKILL"; kill -9 "${WORKER[w1]}"
sleep 2; say "worker w1 restarted"; start_worker w1
sleep 3; say "worker w2 SIGSTOP for 6 s (lease 3 s)"; kill -STOP "${WORKER[w2]}"
sleep 6; kill -CONT "${WORKER[w2]}"; say "worker w2 SIGCONT"
sleep 2; say "coordinator SIGKILL"; kill -9 "${COORD[0]}"
sleep 1; start_coordinator; say "coordinator restarted on its port"
sleep 4; say "client SIGKILL"; kill -9 "${CLIENT[0]}" || { echo "the client had finished: give it more lines" >&2; exit 1; }
sleep 1; say "client restarted with --resume"; start_client --resume
sleep 3; say "coordinator SIGSTOP for 5 s"; kill -STOP "${COORD[0]}"
sleep 5; kill -CONT "${COORD[0]}"; say "coordinator SIGCONT"
say "hostile traffic: 300 idle connections to each port, junk to gRPC"
python3 - "$GRPC" "$METRICS" <<'EOF' &
import socket, sys, time
held = []
for port in map(int, sys.argv[1:]):
    for _ in range(300):
        s = socket.socket(); s.connect(("127.0.0.1", port)); held.append(s)
junk = socket.socket(); junk.connect(("127.0.0.1", int(sys.argv[1])))
junk.sendall(b"\x00\x01GET / HTTP/1.0\r\n\r\n" + bytes(range(256)) * 64)
time.sleep(30)
closed = 0
for s in held:
    s.settimeout(0.01)
    try:
        closed += s.recv(1) == b""
    except (socket.timeout, BlockingIOError):
        pass
    except OSError:
        closed += 1
print(f"idle connections closed by the servers after 30 s: {closed} of {len(held)}", flush=True)
EOF
HOSTILE=$!
PIDS+=("$HOSTILE")
say "a worker on a damaged copy of the tables"
mkdir -p "$WORK/bad"
cp "$TABLES"/twophase-*.tbl "$WORK/bad/"
python3 - "$WORK/bad/twophase-p2.tbl" <<'EOF'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(4096 + 1_000_000); b = bytearray(f.read(100_000)); f.seek(4096 + 1_000_000)
    f.write(bytes(x ^ 0xFF for x in b))
EOF
if timeout 120 "$BIN" worker --coordinator "$URL" --threads 1 --table twophase \
  --tables-dir "$WORK/bad" 2>"$WORK/bad.log"; then
  echo "FAULT: the worker on a damaged table ran" >&2; exit 1
fi
say "damaged-table worker refused: $(grep -io 'checksum[^"]*' "$WORK/bad.log" | head -1)"
say "waiting for the client"
set +e
wait "${CLIENT[0]}"
RC=$?
set -e
T1=$(date +%s)
say "client exited $RC after $((T1 - T0)) s (3: some lines were errors)"
python3 "$HERE/check_records.py" "$WORK/in.txt" "$WORK/out.txt" 20
for m in cubeswarm_jobs_requeued_total cubeswarm_lease_expiries_total cubeswarm_jobs_lost_total \
  cubeswarm_results_ignored_total cubeswarm_results_rejected_total cubeswarm_workers_distrusted_total; do
  echo "  $m (since the restart) $(metric $m)"
done
grep -c "stalled; every worker's lease is renewed" "$WORK/coordinator.log" | sed 's/^/  stall forgiven (coordinator log): /'
# The hostile connections' report (the servers run until the exit trap kills them).
wait "$HOSTILE" || true
[ "$RC" = 3 ]
