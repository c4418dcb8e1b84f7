#!/usr/bin/env bash
# Reading input and writing records, two binaries side by side (before and after a change
# to the notation reader or a record writer), alternating which runs first in each round.
#
#   bench/input-ab.sh OLD NEW [LINES] [ROUNDS] [FORMAT]
#
# LINES (default 100000) deterministic lines, each 20 random turns of every family (faces,
# wide moves both ways, slices, rotations, amounts with primes) followed by the same turns
# inverted as a group, `S (S)'`: the position is solved, so the two-phase search costs
# nothing and the time is the reader's, the driver's and the writer's; every fourth line
# ends in a bad token, an error record. Each binary solves the file with
# `solve --method twophase --threads 2 --format FORMAT` (default csv) into a file; the
# outputs must agree on every field but `millis`. Prints each run's wall time.
# Tables come from $CUBESWARM_TABLES (the two-phase set).
set -euo pipefail
OLD=${1:?old binary}
NEW=${2:?new binary}
LINES=${3:-100000}
ROUNDS=${4:-5}
FORMAT=${5:-csv}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 - "$LINES" "$WORK/in.txt" <<'EOF'
import random, sys
random.seed(50)
fam = ["U", "R", "F", "D", "L", "B", "Rw", "Uw", "r", "f", "M", "E", "S", "x", "y", "z"]
amt = ["", "2", "'", "2'"]
with open(sys.argv[2], "w") as out:
    for i in range(int(sys.argv[1])):
        s = " ".join(random.choice(fam) + random.choice(amt) for _ in range(20))
        out.write(f"{s} ({s})'" + (" Q" if i % 4 == 3 else "") + "\n")
EOF
run() { # $1 = name, $2 = binary
  local t0 t1
  t0=$(date +%s.%N)
  "$2" solve --method twophase --threads 2 --quiet --format "$FORMAT" \
    --input "$WORK/in.txt" --output "$WORK/$1.out" || [ $? -eq 3 ]
  t1=$(date +%s.%N)
  echo "$1 $(echo "$t1 - $t0" | bc) s"
}
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then run old "$OLD"; run new "$NEW"; else run new "$NEW"; run old "$OLD"; fi
done
# Every field but the time agrees (JSONL: without "millis"; CSV and text: the 7th field /
# nothing timed).
strip() {
  case "$FORMAT" in
    csv) python3 -c 'import csv,sys
for row in csv.reader(open(sys.argv[1], newline="")):
    print(row[:6] + row[7:])' "$1" ;;
    jsonl) python3 -c 'import json,sys
for l in open(sys.argv[1]):
    v = json.loads(l); v.pop("millis", None); print(sorted(v.items()))' "$1" ;;
    *) cat "$1" ;;
  esac
}
if cmp -s <(strip "$WORK/old.out") <(strip "$WORK/new.out"); then
  echo "outputs agree"
else
  echo "outputs differ"
  exit 1
fi
