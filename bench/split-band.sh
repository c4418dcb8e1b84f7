#!/usr/bin/env bash
# Replays every trace of bench/traces/ through two binaries at one layout over a band of
# latencies, and prints each trace's geometric mean efficiency over the band, OLD → NEW.
#
#   bench/split-band.sh OLD NEW WORKERS THREADS LATENCY... [-- TRACE...]
#   e.g. bench/split-band.sh old/cubeswarm target/release/cubeswarm 16 4 6 7 8 9 10 11 12 13 14 15
#
# SPLIT_ARGS adds flags to every replay (SPLIT_ARGS=--all: every optimal solution).
# OLD_TRACES=DIR: OLD replays DIR's trace of the same file name (see bench/split-table.sh).
#
# A first solution is met where it falls in its job: one millisecond more or less between
# machines moves the job boundaries a round trip and a replay's efficiency by up to 2x
# either way (18b at 16 x 4 threads, 7 and 8 ms, 8aba810: 0.34 and 0.73). A mean over a band of
# latencies compares two schedulers on where they put the work, not on that draw.
# (`cubeswarm bench split --rate 3e7`, first solution; the replay runs in simulated time,
# so the figures do not depend on the machine or its load.)
set -euo pipefail
usage="usage: bench/split-band.sh OLD NEW WORKERS THREADS LATENCY... [-- TRACE...]"
old=${1:?$usage}
new=${2:?$usage}
workers=${3:?$usage}
threads=${4:?$usage}
shift 4
lats=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    lats+=("$1")
    shift
done
[ ${#lats[@]} -gt 0 ] || { echo "$usage" >&2; exit 2; }
[ $# -gt 0 ] && shift
traces=("$@")
if [ ${#traces[@]} -eq 0 ]; then
    traces=(bench/traces/trace-*.jsonl.gz)
fi
eff() { # binary trace latency
    "$1" bench split --trace "$2" --rate 3e7 --workers "$workers" --threads "$threads" \
        --latency "$3" ${SPLIT_ARGS:-} 2>&1 | awk '/^efficiency/ {print $2}'
}
gm() { awk '{s = 0; for (i = 1; i <= NF; i++) s += log($i); printf "%.3f", exp(s / NF)}'; }
echo "| trace | $workers × $threads ${SPLIT_ARGS:-}, latency ${lats[*]} ms: OLD | NEW | NEW / OLD |"
echo "| --- | --- | --- | --- |"
for t in "${traces[@]}"; do
    name=$(basename "$t" .jsonl.gz)
    name=${name#trace-}
    old_t=$t
    if [ -n "${OLD_TRACES:-}" ]; then
        old_t=$OLD_TRACES/$(basename "$t")
    fi
    a=""
    b=""
    for lat in "${lats[@]}"; do
        a="$a $(eff "$old" "$old_t" "$lat")"
        b="$b $(eff "$new" "$t" "$lat")"
    done
    ga=$(echo "$a" | gm)
    gb=$(echo "$b" | gm)
    echo "| $name | $ga | $gb | $(awk -v a="$ga" -v b="$gb" 'BEGIN {printf "%.3f", b / a}') |"
done
