#!/usr/bin/env bash
# cubeswarm's optimal solver side by side with nissy-core (github sebastianotronto/nissy-core,
# the H48 reference implementation in C; not part of this repository), on the same positions,
# the same table size and the same threads, alternating which tool runs first per position.
#
#   bench/optimal-vs-nissy.sh NISSY_DIR CUBESWARM POSITIONS [TABLE] [ROUNDS]
#
#   NISSY_DIR  a nissy-core checkout whose shell is built (`./build.sh shell` there, which
#              makes `./run`); its table for TABLE is generated there (`./run gendata`,
#              into NISSY_DIR/tables/) if it is missing: minutes for h3, longer for h5/h6
#   CUBESWARM  a cubeswarm binary; its tables come from $CUBESWARM_TABLES and are built
#              (`tables build`) if missing, with cocsep and the eoesep fallback
#   POSITIONS  a file of positions, one per line as `moves | ...` (the format of
#              ../shared/data/positions/, `#` comments skipped), or `random:N:SEED` for the
#              N uniformly random states of `cubeswarm bench optimal --count N --seed SEED`
#              (the batch-throughput case: mostly 17- and 18-movers)
#   TABLE      cubeswarm's table name (default h48h3k2); nissy-core gets the same table,
#              its solver `h48hN` (its k2 is the default) — the same size, not the same file
#   ROUNDS     passes over the positions (default 2)
#
# Environment: THREADS (default 2), COUNT (only the first COUNT positions of a file),
# MAX_LENGTH (a proof instead of a solve: both tools search up to MAX_LENGTH moves only,
# `--max-length` and `-M`, and "no solution" is an answer; both must agree on it).
#
# Nodes: nissy-core prints the nodes it visited ("Nodes visited", on stderr); cubeswarm's
# come from its record (a solve) or its `--trace` header (a proof, which has no record).
# Both are printed per position and summed, with their ratio: nodes do not depend on the
# machine, so that ratio is the one figure here that another day can reproduce exactly.
#
# What is timed, per position and tool, is one process solving one position, as a user
# runs either tool: wall clock from start to exit (`/usr/bin/time`). That includes loading
# the table: nissy-core `fread`s the whole file into memory before it searches; cubeswarm
# maps it and searches at once (copying it into huge pages in the background). Each round
# also times both tools on a 1-move position (three times, the median kept), and the
# "search" figures subtract that start-up cost from each wall time. cubeswarm's own `millis` (the solve from its first job, the
# table already open) is printed too. nissy-core prints no time of its own.
#
# Checks: every cubeswarm solution is checked by cubeswarm before it is reported; every
# nissy-core solution is checked here (the position followed by the solution, given to
# `cubeswarm show`, must be the solved cube) and must have cubeswarm's length (both are
# optimal). A failure is printed and makes the script exit 1 at the end.
#
# The compute-only probe (`cubeswarm bench probe`) is printed before and after: a slow
# probe means a slow machine, not a slow solver.
#
# Huge pages: cubeswarm asks for them (madvise) for its copy of the table; nissy-core's
# table buffer gets them only when transparent huge pages are "always". The setting
# changes nissy-core's time by up to about 1.5x on h3 (see docs/performance.md), so the
# script prints it; compare under both when it matters (as root:
# `echo always > /sys/kernel/mm/transparent_hugepage/enabled`, and back to `madvise`).
set -euo pipefail
NISSY=${1:?nissy-core checkout (with ./run built by its ./build.sh shell)}
CS=${2:?cubeswarm binary}
POSITIONS=${3:?positions file, or random:N:SEED}
TABLE=${4:-h48h3k2}
ROUNDS=${5:-2}
THREADS=${THREADS:-2}
COUNT=${COUNT:-1000000}
MAX_LENGTH=${MAX_LENGTH:-}
NISSY=$(realpath "$NISSY")
CS=$(realpath "$CS")
[ -x "$NISSY/run" ] || { echo "$NISSY/run is missing: run ./build.sh shell in $NISSY" >&2; exit 2; }
[[ "$TABLE" =~ ^h48h([0-9]+)k2$ ]] || { echo "TABLE must be h48hNk2, got $TABLE" >&2; exit 2; }
SOLVER="h48h${BASH_REMATCH[1]}"
SOLVED=UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FAIL=0
load() { awk '{ printf "load %s %s %s", $1, $2, $3 }' /proc/loadavg; }

# Tables: nissy-core's through its own gendata, cubeswarm's through `tables build`.
DATAID=$(cd "$NISSY" && ./run solverinfo -solver "$SOLVER" | tail -n 1)
if [ ! -f "$NISSY/tables/$DATAID" ]; then
  echo "nissy-core: generating tables/$DATAID (once)" >&2
  mkdir -p "$NISSY/tables"
  start=$(date +%s)
  (cd "$NISSY" && ./run gendata -solver "$SOLVER" </dev/null >&2)
  echo "nissy-core: tables/$DATAID generated in $(( $(date +%s) - start )) s" >&2
fi
for t in cocsep eoesep "$TABLE"; do
  if [ "$("$CS" tables list | awk -v t="$t" '$1 == t { print $2 }')" != present ]; then
    "$CS" tables build "$t" >&2
  fi
done

# The positions, as scrambles (nissy-core's shell takes moves).
if [[ "$POSITIONS" =~ ^random:([0-9]+):([0-9]+)$ ]]; then
  N=${BASH_REMATCH[1]}; SEED=${BASH_REMATCH[2]}
  # The states of `bench optimal --count N --seed SEED`; each is turned into a scramble by
  # inverting a two-phase solution of it (checked below like every position).
  "$CS" bench optimal --count "$N" --seed "$SEED" --list >"$WORK/facelets.txt"
  "$CS" solve -i "$WORK/facelets.txt" --method twophase --format jsonl 2>/dev/null \
    | sed -n 's/.*"solution":"\([^"]*\)".*/\1/p' \
    | awk '{ s = ""; for (i = NF; i >= 1; i--) { m = $i;
             if (m ~ /2$/) inv = m; else if (m ~ /'"'"'$/) inv = substr(m, 1, 1); else inv = m "'"'"'";
             s = s (s == "" ? "" : " ") inv } print s }' >"$WORK/scrambles.txt"
  paste -d'\t' "$WORK/scrambles.txt" "$WORK/facelets.txt" | while IFS=$'\t' read -r mv f; do
    got=$("$CS" show --no-color "$mv" | tail -n 1)
    [ "$got" = "$f" ] || { echo "scramble $mv does not give $f" >&2; exit 1; }
  done
  [ "$(wc -l <"$WORK/scrambles.txt")" -eq "$N" ] || { echo "could not make $N scrambles" >&2; exit 1; }
  echo "positions: the $N random states of bench optimal --count $N --seed $SEED"
else
  awk -F'|' -v c="$COUNT" 'NF && !/^[[:space:]]*#/ { gsub(/^[[:space:]]+|[[:space:]]+$/, "", $1); print $1; if (++n == c) exit }' \
    "$POSITIONS" >"$WORK/scrambles.txt"
  echo "positions: $(wc -l <"$WORK/scrambles.txt") of $POSITIONS"
fi
NPOS=$(wc -l <"$WORK/scrambles.txt")
[ "$NPOS" -gt 0 ] || { echo "no positions" >&2; exit 1; }

echo "nissy-core $(git -C "$NISSY" rev-parse --short HEAD 2>/dev/null || echo '?') solver $SOLVER; $("$CS" --version) ($CS) table $TABLE; $THREADS threads; $ROUNDS rounds; $(load)"
THP=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || true)
echo "transparent huge pages: ${THP:-unknown}"
echo "before: $("$CS" bench probe --threads "$THREADS")"

# One run: prints "wall length nodes millis solution" (millis "-" for nissy-core; length
# "none" for a proof that found no solution, 0 for a failure).
run_cs() {
  local limit=() rc=0
  [ -z "$MAX_LENGTH" ] || limit=(--max-length "$MAX_LENGTH" --trace "$WORK/trace")
  /usr/bin/time -f "%e" -o "$WORK/t" "$CS" solve "$1" --table "$TABLE" --threads "$THREADS" \
    "${limit[@]}" --format jsonl >"$WORK/out" 2>"$WORK/err" || rc=$?
  if [ -n "$MAX_LENGTH" ] && grep -q "no solution of at most $MAX_LENGTH moves" "$WORK/err"; then
    local nodes; nodes=$(head -n 1 "$WORK/trace" | sed -n 's/.*"nodes":\([0-9]*\).*/\1/p')
    echo "$(tail -n 1 "$WORK/t") none ${nodes:--} - -"
    return
  fi
  [ "$rc" = 0 ] || { cat "$WORK/err" >&2; echo "- 0 - - -"; return; }
  local line; line=$(head -n 1 "$WORK/out")
  local len nodes millis sol
  len=$(sed -n 's/.*"length":\([0-9]*\).*/\1/p' <<<"$line")
  nodes=$(sed -n 's/.*"nodes":\([0-9]*\).*/\1/p' <<<"$line")
  millis=$(sed -n 's/.*"millis":\([0-9.]*\).*/\1/p' <<<"$line")
  sol=$(sed -n 's/.*"solution":"\([^"]*\)".*/\1/p' <<<"$line")
  echo "$(tail -n 1 "$WORK/t") ${len:-0} ${nodes:--} ${millis:--} ${sol:-}"
}
run_nissy() {
  local limit=()
  [ -z "$MAX_LENGTH" ] || limit=(-M "$MAX_LENGTH")
  (cd "$NISSY" && /usr/bin/time -f "%e" -o "$WORK/t" ./run solve_scramble -solver "$SOLVER" \
    -moves "$1" -t "$THREADS" "${limit[@]}" >"$WORK/out" 2>"$WORK/err") \
    || { cat "$WORK/err" >&2; echo "- 0 - - -"; return; }
  local nodes; nodes=$(sed -n 's/.*Nodes visited: \([0-9]*\).*/\1/p' "$WORK/err" | tail -n 1)
  local sol; sol=$(grep -m 1 -E '^[URFDLB]' "$WORK/out" || true)
  local len; len=$(wc -w <<<"$sol")
  if [ -z "$sol" ]; then
    len=0
    [ -z "$MAX_LENGTH" ] || ! grep -q "No solutions found" "$WORK/err" || len=none
  fi
  echo "$(tail -n 1 "$WORK/t") $len ${nodes:--} - ${sol:--}"
}
solves() { [ "$("$CS" show --no-color "$1 $2" | tail -n 1)" = "$SOLVED" ]; }

printf '%-5s %-4s %-4s %10s %10s %10s %8s %14s %14s %8s\n' round pos len cs_wall cs_millis \
  nissy_wall ratio cs_nodes nissy_nodes n_ratio
: >"$WORK/rows"
for r in $(seq 1 "$ROUNDS"); do
  # Start-up cost of each tool this round: a 1-move position, three times alternating,
  # the median kept (it is taken off every position of the round: one slow start, as
  # nissy-core's 1.4-3.8 s under THP `always`, would skew them all).
  cs_t=(); ni_t=()
  for _ in 1 2 3; do
    read -r t _ <<<"$(run_cs "U")"; cs_t+=("$t")
    read -r t _ <<<"$(run_nissy "U")"; ni_t+=("$t")
  done
  cs0=$(printf '%s\n' "${cs_t[@]}" | sort -g | sed -n 2p)
  ni0=$(printf '%s\n' "${ni_t[@]}" | sort -g | sed -n 2p)
  echo "round $r start-up (1-move position, median of ${cs_t[*]} / ${ni_t[*]}): cubeswarm $cs0 s, nissy-core $ni0 s"
  i=0
  while IFS= read -r mv; do
    i=$((i + 1))
    if [ $(( (r + i) % 2 )) -eq 0 ]; then
      c=$(run_cs "$mv"); n=$(run_nissy "$mv")
    else
      n=$(run_nissy "$mv"); c=$(run_cs "$mv")
    fi
    read -r cw cl cn cm csol <<<"$c"
    read -r nw nl nn _ nsol <<<"$n"
    if [ "$cl" = 0 ] || { [ "$cl" != none ] && ! solves "$mv" "$csol"; }; then
      echo "round $r position $i: cubeswarm gave no valid solution" >&2; FAIL=1
    fi
    if [ "$nl" = 0 ] || { [ "$nl" != none ] && ! solves "$mv" "$nsol"; }; then
      echo "round $r position $i: nissy-core's solution '$nsol' does not solve it" >&2; FAIL=1
    elif [ "$nl" != "$cl" ]; then
      echo "round $r position $i: lengths differ (cubeswarm $cl, nissy-core $nl)" >&2; FAIL=1
    fi
    printf '%-5s %-4s %-4s %10s %10s %10s %8.2f %14s %14s %8s\n' "$r" "$i" "$cl" "$cw" "$cm" "$nw" \
      "$(awk -v a="$nw" -v b="$cw" 'BEGIN { print (b > 0 ? a / b : 0) }')" "$cn" "$nn" \
      "$(awk -v a="$cn" -v b="$nn" 'BEGIN { if (a ~ /^[0-9]+$/ && b > 0) printf "%.2f", a / b; else print "-" }')"
    echo "$r $i $cl $cw ${cm/-/0} $nw $cs0 $ni0 ${cn/-/0} ${nn/-/0}" >>"$WORK/rows"
  done <"$WORK/scrambles.txt"
done

echo "after:  $("$CS" bench probe --threads "$THREADS")"
awk -v t="$THREADS" '
  { n++; cw += $4; cm += $5 / 1000; nw += $6; cs += $4 - $7; ns += $6 - $8; nodes += $9; nn += $10
    r[n] = ($4 > 0 ? $6 / $4 : 0) }
  END {
    if (n == 0) exit
    for (i = 2; i <= n; i++) { v = r[i]; for (j = i - 1; j >= 1 && r[j] > v; j--) r[j + 1] = r[j]; r[j + 1] = v }
    med = (n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2)
    printf "solves: %d (positions x rounds)\n", n
    printf "wall, mean per position:   cubeswarm %.3f s, nissy-core %.3f s: %.2fx (per-position ratios: median %.2f, range %.2f-%.2f)\n", cw / n, nw / n, nw / cw, med, r[1], r[n]
    printf "search (wall - start-up):  cubeswarm %.3f s, nissy-core %.3f s: %.2fx\n", cs / n, ns / n, ns / cs
    if (cm > 0) printf "cubeswarm own millis:      %.3f s mean; %.3g nodes per position, %.1f M nodes/s\n", cm / n, nodes / n, nodes / cm / 1e6
    printf "nodes, mean per position:  cubeswarm %.4g, nissy-core %.4g: cubeswarm visits %.2fx nissy-core'"'"'s\n", nodes / n, nn / n, (nn > 0 ? nodes / nn : 0)
    printf "throughput (search time):  cubeswarm %.4f, nissy-core %.4f positions per second per thread\n", n / cs / t, n / ns / t
  }' "$WORK/rows"
exit $FAIL
