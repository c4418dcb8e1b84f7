#!/usr/bin/env bash
# Positions with symmetries, with and without the reduction to one move prefix per class
# (`solve --no-symmetry`): nodes, wall time and the solutions found, per position.
#
#   bench/symmetric.sh CUBESWARM TABLE [MAX_LENGTH] [POSITIONS]
#
#   CUBESWARM   a cubeswarm binary; tables from $CUBESWARM_TABLES
#   TABLE       an H48 table (e.g. h48h3k2)
#   MAX_LENGTH  a proof instead of a solve: search up to MAX_LENGTH moves only ("no
#               solution" is an answer); empty or 0 for a full solve
#   POSITIONS   a file of lines `NAME | MOVES` (`#` comments skipped); default: the list
#               below, with 2 to 48 symmetries (the superflip and its compositions with
#               short symmetric moves, and patterns from the cubing literature)
#
# Environment: THREADS (default 2), ALL=1 (every optimal solution, `--all`), ONLY=reduced
# (skip the unreduced run: for the proofs it would take hours).
#
# Nodes come from each run's `--trace` header (every job, the shallow one included); the
# two runs must find the same length (with ALL=1, the same set of solutions). The symmetry
# count is `cubeswarm show`'s.
set -euo pipefail
bin=$1 table=$2 max=${3:-0} list=${4:-}
threads=${THREADS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -z $list ]]; then
    list=$work/positions.txt
    sf="U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2"
    cat >"$list" <<EOF
superflip | $sf
superflip U2 F2 | $sf U2 F2
superflip U | $sf U
superflip U2 | $sf U2
superflip U2 D2 | $sf U2 D2
superflip and checkerboard | $sf R2 L2 U2 D2 F2 B2
anaconda | L U B' U' R L' B R' F B' D R D' F'
python | F2 R' B' U R' L F' L F' B D' R B L2
cube in a cube | F L F U' R U F2 L2 U' L' B D' B' L2 U
EOF
fi
args=(solve --table "$table" --threads "$threads" --quiet --format jsonl)
[[ $max != 0 ]] && args+=(--max-length "$max")
[[ ${ALL:-0} == 1 ]] && args+=(--all)
printf '%-28s %5s %8s %16s %10s %16s %10s %6s\n' position syms result nodes secs \
    "nodes (none)" "secs" ratio
grep -v '^#' "$list" | while IFS='|' read -r name moves; do
    name=$(sed 's/^ *//; s/ *$//' <<<"$name") moves=$(sed 's/^ *//; s/ *$//' <<<"$moves")
    syms=$("$bin" show --no-color "$moves" | sed -n "s/^symmetries: \([0-9]*\) .*/\1/p")
    run() { # $1: tag, then extra flags
        local tag=$1; shift
        local t0 t1
        t0=$(date +%s.%N)
        "$bin" "${args[@]}" "$@" --trace "$work/$tag.jsonl" "$moves" >"$work/$tag.out" || true
        t1=$(date +%s.%N)
        nodes=$(head -1 "$work/$tag.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["nodes"])')
        secs=$(echo "$t1 - $t0" | bc)
        sols=$(python3 -c 'import json,sys
s=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(min((r.get("length",99) for r in s), default="none") if s and "solution" in s[0] else "none")' "$work/$tag.out")
        sort "$work/$tag.out" | python3 -c 'import json,sys
for l in sys.stdin:
    r=json.loads(l); print(r.get("solution",""))' | sort >"$work/$tag.sols"
    }
    run reduced
    rn=$nodes rs=$secs result=$sols
    if [[ ${ONLY:-} == reduced ]]; then
        printf '%-28s %5s %8s %16s %10.2f\n' "$name" "${syms:-?}" "$result" "$rn" "$rs"
        continue
    fi
    run whole --no-symmetry
    # Every solution (ALL=1): the same set; one: the same length.
    if [[ ${ALL:-0} == 1 ]] && ! cmp -s "$work/reduced.sols" "$work/whole.sols"; then
        echo "$name: the two runs' solutions differ" >&2
        exit 1
    fi
    if [[ $sols != "$result" ]]; then
        echo "$name: $result moves reduced, $sols not" >&2
        exit 1
    fi
    printf '%-28s %5s %8s %16s %10.2f %16s %10.2f %6.1f\n' "$name" "${syms:-?}" "$result" \
        "$rn" "$rs" "$nodes" "$secs" "$(echo "$nodes / $rn" | bc -l)"
done
