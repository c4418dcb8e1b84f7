#!/usr/bin/env bash
# The coordinator's live page in a real headless browser (tests/browser/page.mjs): a
# coordinator with two workers on loopback, a batch fed while the page is open.
#   tests/browser/run.sh BINARY TABLES_DIR [SCREENSHOT.png]
# Needs node (18+) and Chromium: installs Debian's chromium (apt, as root in CI) and
# playwright-core (npm ci, pinned by package-lock.json, into target/browser-tools) when
# missing; skips with the reason otherwise. Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=$(realpath "$1")
TABLES=$(realpath "$2")
SHOT=${3:-}
skip() { echo "browser test: SKIPPED: $*"; exit 0; }

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && { [ "${CI:-}" = true ] || [ "${BROWSER_INSTALL:-}" = 1 ]; }; then
    echo "browser test: installing chromium (apt)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1; } ||
      true
  fi
  [ -x "$CHROMIUM" ] || skip "no Chromium at $CHROMIUM (apt-get install chromium as root, or set CHROMIUM)"
fi
command -v node >/dev/null || skip "node is not installed"
TOOLS=target/browser-tools
STAMP=$(sha256sum tests/browser/package-lock.json | cut -d' ' -f1)
if [ "$(cat "$TOOLS/.installed" 2>/dev/null)" != "$STAMP" ]; then
  echo "browser test: installing playwright-core (npm ci) into $TOOLS"
  rm -rf "$TOOLS" && mkdir -p "$TOOLS"
  cp tests/browser/package.json tests/browser/package-lock.json "$TOOLS/"
  (cd "$TOOLS" && npm ci --no-audit --no-fund --silent) || skip "npm ci failed (no registry?)"
  echo "$STAMP" >"$TOOLS/.installed"
fi
cp tests/browser/page.mjs "$TOOLS/page.mjs"

WORK=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
export CUBESWARM_TABLES=$TABLES
unset CUBESWARM_TOKEN
"$BIN" coordinator --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 2>"$WORK/coordinator.log" &
pids+=($!)
line() { # waits for $2 in log $1, prints the word after it
  for _ in $(seq 300); do
    w=$(grep -o "$2[^ ]*" "$1" 2>/dev/null | head -1 | sed "s/^$2//") && [ -n "$w" ] && { echo "$w"; return; }
    sleep 0.1
  done
  echo "browser test: no '$2' in $1:" >&2; cat "$1" >&2; exit 1
}
GRPC=$(line "$WORK/coordinator.log" "grpc listening on ")
METRICS=$(line "$WORK/coordinator.log" "metrics listening on ")
for w in alpha beta; do
  "$BIN" worker --coordinator "http://$GRPC" --threads 1 --table twophase --worker-id "$w" 2>"$WORK/$w.log" &
  pids+=($!)
done
for w in alpha beta; do
  for _ in $(seq 600); do grep -q "connected to coordinator" "$WORK/$w.log" && break; sleep 0.1; done
done
args=("http://$METRICS/" "http://$GRPC" "$BIN" alpha beta)
[ -n "$SHOT" ] && args+=(--screenshot "$(realpath -m "$SHOT")")
t0=$(date +%s)
node "$TOOLS/page.mjs" "${args[@]}"
echo "browser test: passed in $(( $(date +%s) - t0 )) s"
