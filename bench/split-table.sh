#!/usr/bin/env bash
# Replays every trace of bench/traces/ at 64, 256 and 1,024 threads, with 1 ms and 10 ms
# between machines, through two binaries (issue 51's before/after table).
#
#   bench/split-table.sh OLD NEW [TRACE...]
#
# Prints one markdown row per trace and latency: the efficiency of OLD → NEW at 16 × 4,
# 64 × 4 and 64 × 16 threads (`cubeswarm bench split --rate 3e7`). The replay runs in
# simulated time: its figures do not depend on the machine or its load.
#
# OLD_TRACES=DIR: OLD replays the trace of the same file name in DIR (a build older than trace
# format 2 reads only format 1: `bench/trace-v1.py DIR` writes the traces there).
set -euo pipefail
old=${1:?usage: bench/split-table.sh OLD NEW [TRACE...]}
new=${2:?usage: bench/split-table.sh OLD NEW [TRACE...]}
shift 2
traces=("$@")
if [ ${#traces[@]} -eq 0 ]; then
    traces=(bench/traces/trace-*.jsonl.gz)
fi
eff() { # binary trace workers threads latency
    "$1" bench split --trace "$2" --rate 3e7 --workers "$3" --threads "$4" --latency "$5" 2>&1 |
        awk '/^efficiency/ {print $2}'
}
echo "| trace | latency | 64 (16 × 4) | 256 (64 × 4) | 1,024 (64 × 16) |"
echo "| --- | --- | --- | --- | --- |"
for t in "${traces[@]}"; do
    name=$(basename "$t" .jsonl.gz)
    name=${name#trace-}
    old_t=$t
    if [ -n "${OLD_TRACES:-}" ]; then
        old_t=$OLD_TRACES/$(basename "$t")
    fi
    for lat in 1 10; do
        row="| $name | $lat ms"
        for layout in "16 4" "64 4" "64 16"; do
            set -- $layout
            a=$(eff "$old" "$old_t" "$1" "$2" "$lat")
            b=$(eff "$new" "$t" "$1" "$2" "$lat")
            row="$row | $a → $b"
        done
        echo "$row |"
    done
done
