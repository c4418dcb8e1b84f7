#!/usr/bin/env bash
# cubeswarm's two-phase solver side by side with rob-twophase (github efrantar/rob-twophase,
# built from its own checkout with its makefile: it is not part of this repository), one
# thread each, on the same cubes, alternating which tool runs first in each round.
#
#   bench/twophase-vs-rob.sh ROB_BINARY ROB_DIR CUBESWARM CUBES [COUNT] [ROUNDS]
#
#   ROB_BINARY  the built `twophase` program of rob-twophase (default HT metric build)
#   ROB_DIR     its working directory: it reads (or on its first start generates, about a
#               minute, 676 MB) `twophase-ht.tbl` there
#   CUBESWARM   a cubeswarm binary; its tables come from $CUBESWARM_TABLES
#   CUBES       one cube per line: 54-character facelet strings (URFDLB, rob's `bench.cubes`
#               format) or scrambles, which are turned into facelets by `cubeswarm show`;
#               blank lines and lines starting with '#' are skipped
#   COUNT       the first COUNT cubes (default 2000); ROUNDS (default 2)
#
# Modes ($MODES, default "20 19 anytime"):
#   20, 19    first solution of at most that many moves: rob `-l L -m $ROB_CAP_MS` (a cap
#             so large it never binds, default 10 minutes), cubeswarm `--max-length L`
#   anytime   the robots' mode, the shortest found within $ANYTIME_MS (default 10) ms: rob
#             `-m $ANYTIME_MS` (no -l: it searches until the limit), cubeswarm
#             `--anytime --time-limit 0.010` (within 20 moves its deadline counts from the
#             first solution, so it always answers)
#
# Per-cube times are each tool's own figure, both wall clock around one cube's solve,
# after the tables are loaded: rob's is the "N ms" its `solve` command prints (std::chrono
# around Engine::solve, microsecond resolution; its search runs on a worker thread woken
# for the cube while the main thread waits); cubeswarm's is the "millis" of its JSON-lines
# record (Instant around one position's solve on its single worker thread, including the
# check that the solution solves the position). Table loading is in neither. rob's CPU
# time per cube is printed too (its process's CPU from the first "Ready!" to the last
# answer, over the cubes), free of the scheduling delays of its thread hand-offs. rob's own
# `bench` command is not used: it truncates each time to whole milliseconds.
#
# Checks: every cubeswarm solution is verified by cubeswarm before it is reported; every
# rob solution is checked here (unless VERIFY=0): the inverse of its moves, as a scramble
# given to `cubeswarm show`, must give the cube's facelets. Any failure is counted and
# printed; a wrong solution, or a missing one in a 20 / 19 mode, makes the script exit 1
# at the end (in the anytime mode no answer is a result: rob gives none when it found
# nothing in time).
set -euo pipefail
ROB=${1:?rob-twophase binary}
ROB_DIR=${2:?rob-twophase working directory (tables)}
CS=${3:?cubeswarm binary}
CUBES=${4:?cube file}
COUNT=${5:-2000}
ROUNDS=${6:-2}
MODES=${MODES:-20 19 anytime}
ANYTIME_MS=${ANYTIME_MS:-10}
ROB_CAP_MS=${ROB_CAP_MS:-600000}
VERIFY=${VERIFY:-1}
ROB=$(realpath "$ROB")
CS=$(realpath "$CS")
WORK=$(mktemp -d)
ROB_PID=
cleanup() { if [ -n "$ROB_PID" ]; then kill "$ROB_PID" 2>/dev/null || true; fi; rm -rf "$WORK"; }
trap cleanup EXIT

# The cubes, as facelet strings (both tools get the same lines).
awk -v c="$COUNT" 'NF && !/^[[:space:]]*#/ { print; if (++n == c) exit }' "$CUBES" | while IFS= read -r line; do
  line=$(echo "$line" | tr -d '\r' | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
  if [[ "$line" =~ ^[URFDLB]{54}$ ]]; then
    echo "$line"
  else
    "$CS" show --no-color "$line" | tail -n 1
  fi
done >"$WORK/cubes.txt"
N=$(wc -l <"$WORK/cubes.txt")
[ "$N" -gt 0 ] || { echo "no cubes in $CUBES" >&2; exit 1; }
sed 's/^/solve /' "$WORK/cubes.txt" >"$WORK/rob-in.txt"

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
load() { awk '{ printf "load %s %s %s", $1, $2, $3 }' /proc/loadavg; }

# rob-twophase: one process per run (its tables load before the first cube). It does not
# exit at the end of its input (its exit path waits on a thread that waits for a cube),
# so it is stopped once every cube has been answered. Output: "ms len moves" per cube.
run_rob() { # $1 = mode, $2 = output file
  local args
  case "$1" in
  anytime) args=(-t 1 -m "$ANYTIME_MS") ;;
  *) args=(-t 1 -l "$1" -m "$ROB_CAP_MS") ;;
  esac
  : >"$WORK/rob-raw.txt"
  env -C "$ROB_DIR" "$ROB" "${args[@]}" <"$WORK/rob-in.txt" >"$WORK/rob-raw.txt" 2>&1 &
  ROB_PID=$!
  # Its CPU time (user + system, in clock ticks) once the tables are loaded (the first
  # "Ready!") and after the last cube: rob's CPU per cube, free of the scheduling delays
  # its wall figure includes (its search thread is woken for each cube and wakes the
  # main thread at the end; on a loaded machine each hand-off waits for a core).
  local cpu0 cpu1
  until [ "$(awk '/^Ready!$/ { k++ } END { print k + 0 }' "$WORK/rob-raw.txt")" -ge 1 ]; do
    kill -0 "$ROB_PID" 2>/dev/null || { echo "rob-twophase did not start:" >&2; tail "$WORK/rob-raw.txt" >&2; exit 1; }
    sleep 0.01
  done
  cpu0=$(cpu_ticks "$ROB_PID")
  # Each cube's answer is followed by the next "Ready!" (one more precedes the first).
  while [ "$(awk '/^Ready!$/ { k++ } END { print k + 0 }' "$WORK/rob-raw.txt")" -le "$N" ]; do
    kill -0 "$ROB_PID" 2>/dev/null || { echo "rob-twophase stopped early:" >&2; tail "$WORK/rob-raw.txt" >&2; exit 1; }
    sleep 0.2
  done
  cpu1=$(cpu_ticks "$ROB_PID")
  ROB_CPU_MS=$(awk -v a="$cpu0" -v b="$cpu1" -v n="$N" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", (b - a) * 1000 / hz / n }')
  kill "$ROB_PID" 2>/dev/null || true
  wait "$ROB_PID" 2>/dev/null || true
  ROB_PID=
  # A cube's record: its time line, then its solution line (none if nothing was found).
  awk -v n="$N" '
    /^Ready!$/ { if (started && k++ < n) { print t, len, moves }; started = 1; t = "-"; len = "-"; moves = "-"; next }
    /^[0-9.e+-]+ms$/ { t = substr($0, 1, length($0) - 2); next }
    /\([0-9]+\)$/ { len = $NF; gsub(/[()]/, "", len); moves = $0; sub(/ *\([0-9]+\)$/, "", moves); gsub(/ +/, "_", moves); next }
  ' "$WORK/rob-raw.txt" >"$2"
}

# cubeswarm: one `solve` of the whole file on one thread. Output: "ms len moves" per cube,
# in input order.
run_cs() { # $1 = mode, $2 = output file
  local args
  case "$1" in
  anytime) args=(--anytime --time-limit "$(awk -v m="$ANYTIME_MS" 'BEGIN { printf "%.3f", m / 1000 }')") ;;
  *) args=(--max-length "$1") ;;
  esac
  "$CS" solve --method twophase --threads 1 --format jsonl --quiet "${args[@]}" \
    --input "$WORK/cubes.txt" >"$WORK/cs-raw.txt" || true
  awk '{
    id = $0; sub(/.*"id":/, "", id); sub(/[,}].*/, "", id)
    if ($0 !~ /"solution":/) { print id, "-", "-", "-"; next }
    t = $0; sub(/.*"millis":/, "", t); sub(/[,}].*/, "", t)
    len = $0; sub(/.*"length":/, "", len); sub(/[,}].*/, "", len)
    m = $0; sub(/.*"solution":"/, "", m); sub(/".*/, "", m); gsub(/ +/, "_", m)
    print id, t, len, m
  }' "$WORK/cs-raw.txt" | sort -n -k1,1 | cut -d' ' -f2- >"$2"
}

# rob's solutions checked: the inverse of the moves, as a scramble, must give the cube.
verify_rob() { # $1 = rob output file; prints the number of wrong solutions
  local bad=0 i=0 cube moves inv
  while IFS=' ' read -r _ _ moves <&3 && IFS= read -r cube <&4; do
    i=$((i + 1))
    [ "$moves" = "-" ] && continue
    inv=$(echo "$moves" | tr '_' '\n' | tac | sed "s/'\$/+/; s/^\([URFDLB]\)\$/\1'/; s/+\$//" | tr '\n' ' ')
    if [ "$("$CS" show --no-color "$inv" | tail -n 1)" != "$cube" ]; then
      echo "  rob solution $i does not solve its cube: ${moves//_/ }" >&2
      bad=$((bad + 1))
    fi
  done 3<"$1" 4<"$WORK/cubes.txt"
  echo "$bad"
}

# The p-th percentile (nearest rank) of the numbers in column $2 of file $1 ("-" skipped).
pct() { # $1 = file, $2 = column, $3 = percent
  awk -v c="$2" '$c != "-" { print $c }' "$1" | sort -g | awk -v p="$3" '
    { t[++k] = $1 } END { r = int(p / 100 * k + 0.999999); if (r < 1) r = 1; print (k ? t[r] : "nan") }'
}

# "tool mode round: n, missing, mean / p50 / p99 / max ms, mean length, histogram".
stats() { # $1 = label, $2 = output file
  awk -v label="$1" -v p50="$(pct "$2" 1 50)" -v p99="$(pct "$2" 1 99)" -v max="$(pct "$2" 1 100)" '
    { n++; if ($2 == "-") miss++; else { lsum += $2; h[$2]++; ln++ }
      if ($1 != "-") { k++; sum += $1 } }
    END {
      printf "%-24s n %d, no solution %d; ms mean %.3f p50 %.3f p99 %.3f max %.3f; mean length %.3f; lengths",
        label, n, miss + 0, sum / k, p50, p99, max, lsum / ln
      for (l = 0; l <= 30; l++) if (l in h) printf " %d:%d", l, h[l]
      printf "\n"
    }' "$2"
}

summary() { # $1 = rob file, $2 = cubeswarm file: the ratios rob / cubeswarm
  awk -v rp="$(pct "$1" 1 99)" -v cp="$(pct "$2" 1 99)" -v rm="$(pct "$1" 1 100)" \
    -v cm="$(pct "$2" 1 100)" -v rf="$1" '
    FILENAME == rf { if ($1 != "-") { rs += $1; a++ }; if ($2 != "-") { rl += $2; rn++ }; next }
    { if ($1 != "-") { cs += $1; b++ }; if ($2 != "-") { cl += $2; cn++ } }
    END {
      printf "  rob/cubeswarm: mean time %.2fx, p99 %.2fx, max %.2fx; mean length rob %.3f, cubeswarm %.3f (cubeswarm %+.3f)\n",
        (rs / a) / (cs / b), rp / cp, rm / cm, rl / rn, cl / cn, cl / cn - rl / rn
    }' "$1" "$2"
}

echo "cubes: first $N of $CUBES; rounds $ROUNDS; modes: $MODES; 1 thread each; $(nproc) cores, $(load)"
echo "rob-twophase: $ROB (in $ROB_DIR); cubeswarm: $CS ($("$CS" --version))"
failed=0
for r in $(seq 1 "$ROUNDS"); do
  for mode in $MODES; do
    if [ $((r % 2)) = 1 ]; then order="rob cs"; else order="cs rob"; fi
    for tool in $order; do
      before=$(load)
      if [ "$tool" = rob ]; then run_rob "$mode" "$WORK/rob.txt"; else run_cs "$mode" "$WORK/cs.txt"; fi
      echo "  ($tool $mode round $r: $before before, $(load) after)" >&2
    done
    stats "rob       $mode round $r" "$WORK/rob.txt"
    stats "cubeswarm $mode round $r" "$WORK/cs.txt"
    summary "$WORK/rob.txt" "$WORK/cs.txt"
    echo "  rob CPU per cube (process CPU after its tables loaded / cubes): $ROB_CPU_MS ms"
    # Within a time budget no answer is a result (rob gives none when it found nothing in
    # time), not a failure of this script.
    missing=0
    [ "$mode" = anytime ] || missing=$(awk '$2 == "-"' "$WORK/rob.txt" "$WORK/cs.txt" | wc -l)
    for f in rob cs; do
      if [ "$(wc -l <"$WORK/$f.txt")" != "$N" ]; then
        echo "  $f: $(wc -l <"$WORK/$f.txt") records for $N cubes" >&2
        missing=$((missing + 1))
      fi
    done
    failed=$((failed + missing))
    if [ "$VERIFY" = 1 ]; then
      bad=$(verify_rob "$WORK/rob.txt")
      echo "  rob solutions checked by cubeswarm: $bad wrong"
      failed=$((failed + bad))
    fi
  done
done
echo "done; $(load)"
[ "$failed" = 0 ] || { echo "$failed missing or wrong solutions" >&2; exit 1; }
