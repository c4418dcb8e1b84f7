#!/usr/bin/env bash
# The cluster across hosts: a coordinator and two workers, each in its own network
# namespace, joined by veth pairs on a bridge; the client runs in the root namespace.
# Mid-batch, worker 1's link is cut for longer than the lease and then restored; the
# batch must still end with every record exactly once, equal to the embedded solver's.
#
# Needs root (network namespaces). Run by .ci/run when it is root; otherwise it prints
# why it skips and exits 0.
#   tests/netns.sh target/debug/cubeswarm target/test-tables
set -euo pipefail

BIN=${1:?usage: tests/netns.sh CUBESWARM_BINARY TABLES_DIR}
TABLES=${2:?usage: tests/netns.sh CUBESWARM_BINARY TABLES_DIR}
BIN=$(realpath "$BIN")
mkdir -p "$TABLES"
TABLES=$(realpath "$TABLES")

if [ "$(id -u)" != 0 ]; then
  echo "netns test skipped: not root (network namespaces need CAP_SYS_ADMIN)"
  exit 0
fi
if ! command -v ip >/dev/null || ! ip netns list >/dev/null 2>&1; then
  echo "netns test skipped: iproute2 'ip netns' is not available"
  exit 0
fi
if ! ip link add cs-probe type bridge 2>/dev/null; then
  echo "netns test skipped: cannot create network devices here"
  exit 0
fi
ip link del cs-probe

if [ ! -e "$TABLES/twophase-p2.tbl" ]; then
  echo "netns: building the two-phase tables into $TABLES"
  CUBESWARM_TABLES=$TABLES "$BIN" tables build twophase
fi

TAG=cs$$
WORK=$(mktemp -d)
BR=${TAG}br
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for n in c w1 w2; do ip netns del "${TAG}$n" 2>/dev/null || true; done
  ip link del "$BR" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

ip link add "$BR" type bridge
ip addr add 10.77.0.1/24 dev "$BR"
ip link set "$BR" up
i=2
for n in c w1 w2; do
  ns=${TAG}$n
  ip netns add "$ns"
  ip link add "${TAG}v$n" type veth peer name eth0 netns "$ns"
  ip link set "${TAG}v$n" master "$BR" up
  ip -n "$ns" addr add 10.77.0.$i/24 dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  i=$((i + 1))
done

export CUBESWARM_TABLES=$TABLES
ip netns exec "${TAG}c" "$BIN" coordinator --listen 10.77.0.2:7070 --lease 2 --heartbeat 0.25 \
  --batch-size 16 2>"$WORK/c.log" &
PIDS+=($!)
for n in w1 w2; do
  ip netns exec "${TAG}$n" "$BIN" worker --coordinator http://10.77.0.2:7070 --threads 1 \
    --table twophase 2>"$WORK/$n.log" &
  PIDS+=($!)
done
for n in w1 w2; do
  for _ in $(seq 1 600); do grep -q "connected to coordinator" "$WORK/$n.log" && break; sleep 0.2; done
  grep -q "connected to coordinator" "$WORK/$n.log" || { echo "worker $n did not connect"; cat "$WORK/$n.log"; exit 1; }
done

# N scrambles: enough that the batch outlasts the cut (the same generator idea as tests/it/cluster.rs, in awk).
awk 'BEGIN { srand(7); split("U U2 U'"'"' R R2 R'"'"' F F2 F'"'"' D D2 D'"'"' L L2 L'"'"' B B2 B'"'"'", m, " ");
  for (i = 0; i < 60000; i++) { n = 8 + int(rand() * 13); s = "";
    for (k = 0; k < n; k++) s = s (k ? " " : "") m[1 + int(rand() * 18)]; print s } }' >"$WORK/in.txt"

"$BIN" solve --coordinator http://10.77.0.2:7070 --method twophase --input "$WORK/in.txt" \
  --output "$WORK/out.txt" --quiet 2>"$WORK/client.log" &
CLIENT=$!
PIDS+=($CLIENT)
for _ in $(seq 1 1500); do [ -s "$WORK/out.txt" ] && [ "$(wc -l <"$WORK/out.txt")" -ge 100 ] && break; sleep 0.05; done
echo "netns: cutting worker 1's link mid-batch ($(wc -l <"$WORK/out.txt") records so far)"
ip link set "${TAG}vw1" down
sleep 5
ip link set "${TAG}vw1" up
echo "netns: link restored ($(wc -l <"$WORK/out.txt") records so far)"
wait "$CLIENT" || { echo "client failed"; cat "$WORK/client.log"; exit 1; }
# The cut was felt: the coordinator gave up worker 1's lease, and worker 1 came back.
grep -q "lease expired" "$WORK/c.log" || { echo "netns: no lease expired in the coordinator's log"; cat "$WORK/c.log"; exit 1; }
for _ in $(seq 1 300); do
  [ "$(grep -c "connected to coordinator" "$WORK/w1.log")" -ge 2 ] && break; sleep 0.1
done
if [ "$(grep -c "connected to coordinator" "$WORK/w1.log")" -lt 2 ]; then
  echo "netns: worker 1 did not reconnect after the link came back"; cat "$WORK/w1.log"; exit 1
fi

"$BIN" solve --method twophase --threads 2 --input "$WORK/in.txt" --output "$WORK/local.txt" --quiet
if ! cmp -s "$WORK/out.txt" "$WORK/local.txt"; then
  echo "netns: the cluster's output differs from the embedded solver's"
  diff "$WORK/out.txt" "$WORK/local.txt" | head -20
  exit 1
fi
echo "netns test passed: $(wc -l <"$WORK/out.txt") records over three namespaces, link cut and restored"
