#!/usr/bin/env bash
# Table fetch over loopback, two binaries side by side (docs/performance.md, "Fetch").
#
#   bench/fetch-throughput.sh OLD_BIN NEW_BIN TABLES_DIR FILE ROUNDS SCRATCH
#
# Each binary runs its own coordinator serving TABLES_DIR on 127.0.0.1 and fetches FILE
# (an H48 table file) from it into SCRATCH/dst, which holds cocsep and h48h0k4 as hard
# links (so only FILE travels; SCRATCH must be on the same file system as TABLES_DIR). The
# two alternate, old then new, ROUNDS times, each fetch into an empty place; then `cp` of
# the file plus `sync`, the disk's own speed. Prints per fetch: the MB/s the fetcher logs
# (whole fetch: transfer, sync, check, rename), its wall time, CPU and peak RSS, the
# coordinator's CPU during it, and whether the bytes equal the source. Then one fetch each
# way across the two versions (new fetcher from the old coordinator and the reverse).
set -euo pipefail
[ $# -eq 6 ] || { sed -n 4p "$0"; exit 2; }
old=$(realpath "$1"); new=$(realpath "$2"); src=$(realpath "$3"); file=$4; rounds=$5
scratch=$6
mkdir -p "$scratch/dst"
scratch=$(realpath "$scratch")
dst="$scratch/dst"
for f in cocsep h48h0k4; do ln -f "$src/$f.tbl" "$dst/$f.tbl"; done
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

# start_coordinator BIN LOG: starts it, prints its pid and port.
start_coordinator() {
    "$1" coordinator --listen 127.0.0.1:0 --tables-dir "$src" >"$2" 2>&1 &
    local pid=$!
    for _ in $(seq 100); do
        grep -q "grpc listening on" "$2" && break
        sleep 0.1
    done
    echo "$pid $(grep -o 'grpc listening on [0-9.]*:[0-9]*' "$2" | sed 's/.*://')"
}
read -r old_pid old_port < <(start_coordinator "$old" "$scratch/coordinator-old.log")
pids+=("$old_pid")
read -r new_pid new_port < <(start_coordinator "$new" "$scratch/coordinator-new.log")
pids+=("$new_pid")

cpu_ms() { awk '{print ($14 + $15) * 10}' "/proc/$1/stat"; }

# fetch LABEL BIN COORDINATOR_PID PORT
fetch() {
    rm -f "$dst/$file.tbl" "$dst/$file.tbl.fetch"
    sync
    local c0 c1 log="$scratch/fetch.log"
    c0=$(cpu_ms "$3")
    /usr/bin/time -f "%e s wall, %U+%S s CPU, peak RSS %M kB" "$2" tables fetch "$file" \
        --coordinator "http://127.0.0.1:$4" --tables-dir "$dst" >"$log" 2>&1 || true
    c1=$(cpu_ms "$3")
    local same=differ
    cmp -s "$src/$file.tbl" "$dst/$file.tbl" && same=equal
    printf '%-22s %10s  %s  coordinator CPU %s ms  bytes %s\n' "$1" \
        "$(grep -o '[0-9.]* MB/s' "$log" | head -1 | sed 's/ MB\/s//')" \
        "$(tail -1 "$log")" "$((c1 - c0))" "$same"
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# file: $file, $(stat -c %s "$src/$file.tbl") bytes"
echo "# label                    MB/s  fetcher"
for r in $(seq "$rounds"); do
    fetch "old (round $r)" "$old" "$old_pid" "$old_port"
    fetch "new (round $r)" "$new" "$new_pid" "$new_port"
    rm -f "$dst/$file.tbl"
    sync
    /usr/bin/time -f "cp+sync (round $r)     %e s wall" sh -c \
        "cp '$src/$file.tbl' '$dst/$file.tbl' && sync" 2>&1
done
fetch "new from old coord." "$new" "$old_pid" "$old_port"
fetch "old from new coord." "$old" "$new_pid" "$new_port"
rm -f "$dst/$file.tbl"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
