#!/usr/bin/env bash
# How `solve` holds its table, side by side: the page cache in huge pages (the default
# where the system has it) against a plain map searched at once and copied into huge pages
# in the background (`CUBESWARM_PAGE_CACHE=off`, which every system has). One process per
# position, as a user runs one scramble, the two alternating which runs first per position.
#
#   bench/table-memory.sh CUBESWARM TABLE POSITIONS [ROUNDS]
#
#   CUBESWARM  a cubeswarm binary; its tables come from $CUBESWARM_TABLES (built with
#              `tables build` first if missing)
#   TABLE      an H48 table (h48h5k2, h48h7k2, ...)
#   POSITIONS  a file of positions, one per line as `moves | ...` (the format of
#              ../shared/data/positions/, `#` comments skipped)
#   ROUNDS     passes over the positions (default 1)
#
# Environment: THREADS (default 2), COUNT (only the first COUNT positions).
#
# Printed per position and mode: wall time (from the process's start to its exit), the
# solve's own millis, peak RSS; then the means, the ratio of the mean walls, and in how
# many positions the page cache won. Both modes must give solutions of the same length
# (the script exits 1 otherwise). Before the first round, one untimed solve in each mode
# leaves the file in the page cache the way each mode leaves it (the first page-cache
# run may read the file again from disk, once: see docs/tables.md, "In memory").
set -euo pipefail
CS=${1:?cubeswarm binary}
TABLE=${2:?table name, e.g. h48h5k2}
POSITIONS=${3:?positions file}
ROUNDS=${4:-1}
THREADS=${THREADS:-2}
COUNT=${COUNT:-1000000}
CS=$(realpath "$CS")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for t in cocsep eoesep "$TABLE"; do
  if [ "$("$CS" tables list | awk -v t="$t" '$1 == t { print $2 }')" != present ]; then
    "$CS" tables build "$t" >&2
  fi
done
awk -F'|' -v c="$COUNT" 'NF && !/^[[:space:]]*#/ { gsub(/^[[:space:]]+|[[:space:]]+$/, "", $1); print $1; if (++n == c) exit }' \
  "$POSITIONS" >"$WORK/scrambles.txt"
NPOS=$(wc -l <"$WORK/scrambles.txt")
[ "$NPOS" -gt 0 ] || { echo "no positions" >&2; exit 1; }
echo "$("$CS" --version) ($CS) table $TABLE; $THREADS threads; $NPOS positions of $POSITIONS; $ROUNDS rounds"

# One solve: prints "wall millis rss_kb length".
run() {
  local mode=$1 scramble=$2 out
  out=$( { CUBESWARM_PAGE_CACHE=$mode /usr/bin/time -f 'TIME %e %M' "$CS" solve --table "$TABLE" \
      --threads "$THREADS" --format jsonl "$scramble" </dev/null; } 2>&1 )
  local wall rss millis len
  read -r wall rss < <(echo "$out" | awk '/^TIME / { print $2, $3 }')
  millis=$(echo "$out" | sed -n 's/.*"millis":\([0-9.]*\).*/\1/p' | head -n 1)
  len=$(echo "$out" | sed -n 's/.*"length":\([0-9]*\).*/\1/p' | head -n 1)
  echo "$wall ${millis:-0} $rss ${len:-0}"
}

first=$(head -n 1 "$WORK/scrambles.txt")
run off "$first" >/dev/null
run on "$first" >/dev/null
FAIL=0
printf '%-5s %-4s %-9s %9s %9s %10s %9s %9s %10s\n' round pos len on_wall on_ms on_rss_kb off_wall off_ms off_rss_kb
for r in $(seq "$ROUNDS"); do
  p=0
  while read -r scramble; do
    p=$((p + 1))
    if [ $(( (p + r) % 2 )) -eq 0 ]; then
      a=$(run on "$scramble"); b=$(run off "$scramble")
    else
      b=$(run off "$scramble"); a=$(run on "$scramble")
    fi
    read -r aw am ar al <<<"$a"
    read -r bw bm br bl <<<"$b"
    if [ "$al" != "$bl" ] || [ "$al" = 0 ]; then
      echo "position $p: lengths differ or no solution ($al against $bl)" >&2
      FAIL=1
    fi
    printf '%-5s %-4s %-9s %9s %9s %10s %9s %9s %10s\n' "$r" "$p" "$al" "$aw" "$am" "$ar" "$bw" "$bm" "$br" | tee -a "$WORK/rows"
  done <"$WORK/scrambles.txt"
done
awk '{ n++; aw += $4; am += $5; ar = ($6 > ar ? $6 : ar); bw += $7; bm += $8; br = ($9 > br ? $9 : br); if ($4 < $7) won++ }
     END { printf "mean wall: page cache %.3f s, copied %.3f s: %.2fx; own millis %.0f against %.0f; peak RSS %.0f against %.0f MB; page cache faster in %d of %d\n",
           aw / n, bw / n, bw / aw, am / n, bm / n, ar / 1024, br / 1024, won, n }' "$WORK/rows"
exit $FAIL
